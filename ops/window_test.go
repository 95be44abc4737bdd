package ops

import (
	"slices"
	"strings"
	"testing"
)

// TestResolveWindow: defaults, expansion of one value to every dim, Same
// padding, and the options refused by each op.
func TestResolveWindow(t *testing.T) {
	w, err := resolveWindow("Conv", 2, nil)
	if err != nil || !slices.Equal(w.Stride, []int{1, 1}) || !slices.Equal(w.Dilation, []int{1, 1}) ||
		!slices.Equal(w.PadLo, []int{0, 0}) || !slices.Equal(w.PadHi, []int{0, 0}) || w.Groups != 1 {
		t.Fatalf("defaults: %+v, %v", w, err)
	}
	w, err = resolveWindow("Conv", 3, []WindowOption{Stride(2), Padding(1, 2, 3), Dilation(1, 1, 2), Groups(4)})
	if err != nil || !slices.Equal(w.Stride, []int{2, 2, 2}) || !slices.Equal(w.PadHi, []int{1, 2, 3}) || !slices.Equal(w.Dilation, []int{1, 1, 2}) || w.Groups != 4 {
		t.Fatalf("expansion: %+v, %v", w, err)
	}
	// Same: dilation·(k-1) = 2·3 = 6 -> 3/3, and 1·(4-1) = 3 -> 1/2 (the odd
	// one after, as PyTorch).
	w, err = resolveWindow("Conv", 2, []WindowOption{Padding(5), Same, Dilation(2, 1)})
	if err != nil || w.PadLo != nil {
		t.Fatalf("Same: %+v, %v", w, err)
	}
	w.SamePads([]int{4, 4})
	if !slices.Equal(w.PadLo, []int{3, 1}) || !slices.Equal(w.PadHi, []int{3, 2}) {
		t.Fatalf("Same pads %v/%v, want [3 1]/[3 2]", w.PadLo, w.PadHi)
	}
	w, err = resolveWindow("AvgPool", 1, []WindowOption{CeilMode, ExcludePad, PaddingLoHi([]int{0}, []int{1})})
	if err != nil || !w.Ceil || !w.ExcludePad || !slices.Equal(w.PadHi, []int{1}) || w.Has("Stride") || !w.Has("CeilMode") {
		t.Fatalf("pool options: %+v, %v", w, err)
	}
	for _, c := range []struct {
		op   string
		opts []WindowOption
		msg  string
	}{
		{"MaxPool", []WindowOption{Groups(2)}, "MaxPool does not take the option Groups"},
		{"AvgPool", []WindowOption{Dilation(2)}, "AvgPool does not take the option Dilation"},
		{"Conv", []WindowOption{ExcludePad}, "Conv does not take the option ExcludePad"},
		{"Conv", []WindowOption{Groups(0)}, "Groups(0)"},
		{"Conv", []WindowOption{Padding(-1)}, ">= 0"},
		{"Conv", []WindowOption{Stride()}, "at least one value"},
		{"Conv", []WindowOption{PaddingLoHi([]int{1}, []int{1, 2})}, "same number"},
		{"Conv", []WindowOption{Padding(1, 2)}, "2 values for 3 spatial dims"},
		{"Conv", []WindowOption{Same, Stride(1, 2, 1)}, "stride 1"},
	} {
		if _, err := resolveWindow(c.op, 3, c.opts); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got %v, want an error saying %q", c.op, err, c.msg)
		}
	}
}

package ops

import (
	"fmt"
	"strings"
)

// Window holds the resolved settings of a sliding-window op (a
// convolution or a pooling) over its spatial dims, from its
// WindowOptions: every slice has one entry per spatial dim. The zero
// settings are PyTorch's defaults: stride 1, dilation 1, no padding, one
// group, no output padding, floor mode, and average pools counting the
// padded positions.
type Window struct {
	Stride, Dilation []int
	// PadLo and PadHi are the zeros added before and after each spatial
	// dim. With Same set they are nil until SamePads fills them, since
	// "same" padding depends on the kernel.
	PadLo, PadHi []int
	// Same is PyTorch's padding="same": the result has the input's size
	// (stride 1 only); the total padding dilation·(k-1) is split with the
	// odd one on the high side.
	Same bool
	// Groups is the number of channel groups of a convolution.
	Groups int
	// OutputPadding is added to the high side of a transposed
	// convolution's result (PyTorch's output_padding).
	OutputPadding []int
	// Ceil is PyTorch's ceil_mode of the pools; ExcludePad is
	// count_include_pad=False of the average pool.
	Ceil, ExcludePad bool

	set []string // the options given, by name, in order
	err error    // the first bad option
}

// WindowOption sets one setting of a convolution or pooling: Stride,
// Dilation, Padding, PaddingLoHi, Same, Valid, Groups, OutputPadding,
// CeilMode, ExcludePad. An option that does not apply to the op (Groups
// on a pool, CeilMode on a convolution) is a build error naming both.
type WindowOption func(*Window)

// perDim is an option taking one value for every spatial dim, or one per
// dim; values below min are an error.
func perDim(name string, vals []int, min int, set func(w *Window, v []int)) WindowOption {
	vals = append([]int(nil), vals...)
	return func(w *Window) {
		w.set = append(w.set, name)
		if w.err != nil {
			return
		}
		if len(vals) == 0 {
			w.err = fmt.Errorf("%s needs at least one value", name)
			return
		}
		for _, v := range vals {
			if v < min {
				w.err = fmt.Errorf("%s(%s): every value must be >= %d", name, argList(vals), min)
				return
			}
		}
		set(w, vals)
	}
}

// Stride is the step between windows: one value for every spatial dim,
// or one per dim (default 1; pools default to their kernel).
func Stride(s ...int) WindowOption {
	return perDim("Stride", s, 1, func(w *Window, v []int) { w.Stride = v })
}

// Dilation is the spacing between a window's taps: one value for every
// spatial dim, or one per dim (default 1).
func Dilation(d ...int) WindowOption {
	return perDim("Dilation", d, 1, func(w *Window, v []int) { w.Dilation = v })
}

// Padding adds p zeros before and after each spatial dim: one value for
// every dim, or one per dim (default 0).
func Padding(p ...int) WindowOption {
	return perDim("Padding", p, 0, func(w *Window, v []int) { w.PadLo, w.PadHi, w.Same = v, v, false })
}

// PaddingLoHi adds lo[i] zeros before and hi[i] after spatial dim i (one
// entry per dim in each, or one value for every dim).
func PaddingLoHi(lo, hi []int) WindowOption {
	lo, hi = append([]int(nil), lo...), append([]int(nil), hi...)
	return func(w *Window) {
		w.set = append(w.set, "PaddingLoHi")
		if w.err != nil {
			return
		}
		if len(lo) == 0 || len(lo) != len(hi) {
			w.err = fmt.Errorf("PaddingLoHi(%s, %s): lo and hi need the same number of values, at least one", intList(lo), intList(hi))
			return
		}
		for i := range lo {
			if lo[i] < 0 || hi[i] < 0 {
				w.err = fmt.Errorf("PaddingLoHi(%s, %s): padding must be >= 0", intList(lo), intList(hi))
				return
			}
		}
		w.PadLo, w.PadHi, w.Same = lo, hi, false
	}
}

// Same pads so that the result has the input's spatial size (PyTorch's
// padding="same"; stride 1 only): dilation·(k-1) zeros per dim, half
// before, the odd one after.
var Same WindowOption = func(w *Window) {
	w.set = append(w.set, "Same")
	w.Same, w.PadLo, w.PadHi = true, nil, nil
}

// Valid is no padding (PyTorch's padding="valid"), the default.
var Valid WindowOption = func(w *Window) {
	w.set = append(w.set, "Valid")
	w.Same, w.PadLo, w.PadHi = false, nil, nil
}

// Groups splits a convolution's channels into g groups, each convolved
// with its own filters (PyTorch's groups; g = C = O is depthwise).
func Groups(g int) WindowOption {
	return func(w *Window) {
		w.set = append(w.set, "Groups")
		if w.err == nil && g < 1 {
			w.err = fmt.Errorf("Groups(%d): must be >= 1", g)
		}
		w.Groups = g
	}
}

// OutputPadding adds p to the high side of a transposed convolution's
// result (PyTorch's output_padding; each below max(stride, dilation)).
func OutputPadding(p ...int) WindowOption {
	return perDim("OutputPadding", p, 0, func(w *Window, v []int) { w.OutputPadding = v })
}

// CeilMode rounds a pool's result size up (PyTorch's ceil_mode=True); no
// window starts in the trailing padding.
var CeilMode WindowOption = func(w *Window) {
	w.set = append(w.set, "CeilMode")
	w.Ceil = true
}

// ExcludePad makes an average pool divide by the number of input
// positions in each window, not counting padding (PyTorch's
// count_include_pad=False; the default counts them, as PyTorch does).
var ExcludePad WindowOption = func(w *Window) {
	w.set = append(w.set, "ExcludePad")
	w.ExcludePad = true
}

// windowOptionsOf names the options each windowed op accepts (an op not
// listed accepts every option).
var windowOptionsOf = map[string][]string{
	"Conv":          {"Stride", "Dilation", "Padding", "PaddingLoHi", "Same", "Valid", "Groups"},
	"ConvBias":      {"Stride", "Dilation", "Padding", "PaddingLoHi", "Same", "Valid", "Groups"},
	"ConvTranspose": {"Stride", "Dilation", "Padding", "PaddingLoHi", "Valid", "Groups", "OutputPadding"},
	"MaxPool":       {"Stride", "Dilation", "Padding", "PaddingLoHi", "Valid", "CeilMode"},
	"AvgPool":       {"Stride", "Padding", "PaddingLoHi", "Valid", "CeilMode", "ExcludePad"},
}

// resolveWindow applies opts for the op named op over spatial spatial
// dims: it refuses an option the op does not take, expands one-value
// options to every dim, checks counts and ranges, and fills the defaults
// (stride and dilation 1, no padding unless Same, one group; Has tells
// which options were given). With Same, PadLo and PadHi stay nil (see
// SamePads). A nil option is an error.
func resolveWindow(op string, spatial int, opts []WindowOption) (Window, error) {
	var w Window
	for i, o := range opts {
		if o == nil {
			return Window{}, fmt.Errorf("option %d is nil", i)
		}
		o(&w)
	}
	if allowed, ok := windowOptionsOf[op]; ok {
		for _, name := range w.set {
			if !contains(allowed, name) {
				return Window{}, fmt.Errorf("%s does not take the option %s (it takes %s)", op, name, strings.Join(allowed, ", "))
			}
		}
	}
	if w.err != nil {
		return Window{}, w.err
	}
	expand := func(name string, v []int, def int) ([]int, error) {
		switch len(v) {
		case 0:
			v = []int{def}
			fallthrough
		case 1:
			out := make([]int, spatial)
			for i := range out {
				out[i] = v[0]
			}
			return out, nil
		case spatial:
			return v, nil
		}
		return nil, fmt.Errorf("%s has %d values for %d spatial dims (give one, or one per dim)", name, len(v), spatial)
	}
	var err error
	if w.Stride, err = expand("Stride", w.Stride, 1); err != nil {
		return Window{}, err
	}
	if w.Dilation, err = expand("Dilation", w.Dilation, 1); err != nil {
		return Window{}, err
	}
	if w.OutputPadding, err = expand("OutputPadding", w.OutputPadding, 0); err != nil {
		return Window{}, err
	}
	if w.Same {
		for _, s := range w.Stride {
			if s != 1 {
				return Window{}, fmt.Errorf("Same padding needs stride 1, got stride %s (as PyTorch)", intList(w.Stride))
			}
		}
	} else {
		if w.PadLo, err = expand("Padding", w.PadLo, 0); err != nil {
			return Window{}, err
		}
		if w.PadHi, err = expand("Padding", w.PadHi, 0); err != nil {
			return Window{}, err
		}
	}
	if w.Groups == 0 {
		w.Groups = 1
	}
	w.err = nil
	return w, nil
}

// Has reports whether the option named name ("Stride", "Padding", ...)
// was given: the pools default their stride to the kernel when "Stride"
// was not.
func (w Window) Has(name string) bool { return contains(w.set, name) }

// SamePads fills PadLo and PadHi of a Same window for the given kernel
// sizes (dilation·(k-1) per dim, the odd zero after); other windows are
// unchanged.
func (w *Window) SamePads(kernel []int) {
	if !w.Same {
		return
	}
	w.PadLo, w.PadHi = make([]int, len(kernel)), make([]int, len(kernel))
	for i, k := range kernel {
		d := 1
		if i < len(w.Dilation) {
			d = w.Dilation[i]
		}
		total := d * (k - 1)
		if total < 0 {
			total = 0
		}
		w.PadLo[i], w.PadHi[i] = total/2, total-total/2
	}
}

// argList writes values as an option's arguments: "1, 2".
func argList(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

package ops

import (
	"fmt"

	"github.com/loomgraph/loom/internal/opdef"
)

// TEMPORARY: a private stand-in for ops/window.go (helper "conv"), removed
// when that file is merged.

type Window struct {
	Stride, Dilation, PadLo, PadHi []int
	Ceil, ExcludePad               bool
	err                            error
}

type WindowOption func(*Window)

func Stride(s ...int) WindowOption   { return func(w *Window) { w.Stride = s } }
func Dilation(d ...int) WindowOption { return func(w *Window) { w.Dilation = d } }
func Padding(p ...int) WindowOption  { return func(w *Window) { w.PadLo, w.PadHi = p, p } }
func PaddingLoHi(lo, hi []int) WindowOption {
	return func(w *Window) { w.PadLo, w.PadHi = lo, hi }
}

var (
	CeilMode   WindowOption = func(w *Window) { w.Ceil = true }
	ExcludePad WindowOption = func(w *Window) { w.ExcludePad = true }
)

func poolSettings(op string, d int, kernel []int, isMax bool, opts []WindowOption) (opdef.PoolAttr, error) {
	var w Window
	for _, o := range opts {
		if o != nil {
			o(&w)
		}
	}
	per := func(v []int, def int) []int {
		switch len(v) {
		case 0:
			v = []int{def}
			fallthrough
		case 1:
			s := make([]int, d)
			for i := range s {
				s[i] = v[0]
			}
			return s
		}
		return append([]int(nil), v...)
	}
	a := opdef.PoolAttr{Kernel: append([]int(nil), kernel...), Dilation: per(w.Dilation, 1), PadLo: per(w.PadLo, 0), PadHi: per(w.PadHi, 0), Ceil: w.Ceil}
	if w.Stride == nil {
		a.Stride = append([]int(nil), kernel...)
	} else {
		a.Stride = per(w.Stride, 1)
	}
	if !isMax {
		if w.Dilation != nil {
			return a, fmt.Errorf("the option Dilation does not apply to %s", op)
		}
		a.CountIncludePad = !w.ExcludePad
	} else if w.ExcludePad {
		return a, fmt.Errorf("the option ExcludePad does not apply to %s", op)
	}
	return a, nil
}

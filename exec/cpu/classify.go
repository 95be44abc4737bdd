package cpu

import (
	"math"
	"unsafe"

	"github.com/loomgraph/loom/tensor"
)

// floatClass is a test of the float classification ops (IsNaN, IsInf,
// IsFinite): a bool result from an operand of any numeric dtype.
type floatClass uint8

const (
	isNaN floatClass = iota
	isInf
	isFinite
)

// classify is the entry of a classification: floats tested element by
// element, integers (never NaN nor infinite) a constant result, for the
// integer dtypes that have kernels (elemTypes).
func classify(c floatClass) entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		if out != tensor.Bool || len(st) != 1 {
			return nil, errNoKernel
		}
		switch {
		case in[0] == tensor.Float32:
			return classMicro[float32](c), nil
		case in[0] == tensor.Float64:
			return classMicro[float64](c), nil
		case in[0].IsInt() && elemTypes[in[0]] != nil:
			v := u8(c == isFinite)
			return func(m int, d, _, _, _ unsafe.Pointer) {
				out := view[uint8](d, m)
				for i := range out {
					out[i] = v
				}
			}, nil
		}
		return nil, errNoKernel
	})
}

// classMicro tests m floats: x != x is NaN; x - x is 0 for every finite
// x and NaN for ±Inf and NaN.
func classMicro[T float](c floatClass) microFn {
	var f func(d []uint8, a []T)
	switch c {
	case isNaN:
		f = func(d []uint8, a []T) {
			a = a[:len(d)]
			for i, x := range a {
				d[i] = u8(x != x)
			}
		}
	case isInf:
		inf := T(math.Inf(1))
		f = func(d []uint8, a []T) {
			a = a[:len(d)]
			for i, x := range a {
				d[i] = u8(x == inf || x == -inf)
			}
		}
	default:
		f = func(d []uint8, a []T) {
			a = a[:len(d)]
			for i, x := range a {
				d[i] = u8(x-x == 0)
			}
		}
	}
	return func(m int, d, x, _, _ unsafe.Pointer) { f(view[uint8](d, m), view[T](x, m)) }
}

package cpu

// Micro-ops: one small typed loop per operation over a run of elements.
// Operands are vectors (V, a slice of the run's length) or scalars (S,
// broadcast along the run). The elementwise kernels, and later the fused
// chunk evaluator, are built from these; they are the unit a SIMD
// implementation replaces.

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

type float interface{ float32 | float64 }
type integer interface{ int32 | int64 }
type num interface{ float | integer }

// ordered is what comparisons accept; uint8 stands for bool (0 or 1).
type ordered interface{ num | uint8 }

// ---- arithmetic shared by every numeric type ----
//
// The loops are unrolled by four on re-sliced windows (so the compiler
// drops the bounds checks): about 1.7x faster than the plain loop on this
// machine's Zen 4 cores (330 vs 570 ns per 2048 float32). SIMD versions
// replace them later.

func addVV[T num](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] + b4[0]
		d4[1] = a4[1] + b4[1]
		d4[2] = a4[2] + b4[2]
		d4[3] = a4[3] + b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] + b[i]
	}
}

func addVS[T num](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] + s
		d4[1] = a4[1] + s
		d4[2] = a4[2] + s
		d4[3] = a4[3] + s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] + s
	}
}

func subVV[T num](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] - b4[0]
		d4[1] = a4[1] - b4[1]
		d4[2] = a4[2] - b4[2]
		d4[3] = a4[3] - b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] - b[i]
	}
}

func subVS[T num](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] - s
		d4[1] = a4[1] - s
		d4[2] = a4[2] - s
		d4[3] = a4[3] - s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] - s
	}
}

func subSV[T num](d []T, s T, b []T) {
	b = b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, b4 := d[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = s - b4[0]
		d4[1] = s - b4[1]
		d4[2] = s - b4[2]
		d4[3] = s - b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = s - b[i]
	}
}

func mulVV[T num](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] * b4[0]
		d4[1] = a4[1] * b4[1]
		d4[2] = a4[2] * b4[2]
		d4[3] = a4[3] * b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] * b[i]
	}
}

func mulVS[T num](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] * s
		d4[1] = a4[1] * s
		d4[2] = a4[2] * s
		d4[3] = a4[3] * s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] * s
	}
}

// ---- float-only semantics ----

func divVV[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] / b4[0]
		d4[1] = a4[1] / b4[1]
		d4[2] = a4[2] / b4[2]
		d4[3] = a4[3] / b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] / b[i]
	}
}

func divVS[T float](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] / s
		d4[1] = a4[1] / s
		d4[2] = a4[2] / s
		d4[3] = a4[3] / s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] / s
	}
}

func divSV[T float](d []T, s T, b []T) {
	b = b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, b4 := d[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = s / b4[0]
		d4[1] = s / b4[1]
		d4[2] = s / b4[2]
		d4[3] = s / b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = s / b[i]
	}
}

func fpow[T float](x, y T) T { return T(math.Pow(float64(x), float64(y))) }

// ---- integer-only semantics ----

// idiv is floor division (Python's //); division by zero gives 0.
func idiv[T integer](x, y T) T {
	if y == 0 {
		return 0
	}
	if y == -1 {
		return -x // avoids the trap on MinInt / -1 (wraps, as NumPy does)
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	return q
}

// ipow is integer power by squaring; a negative exponent gives the
// truncated reciprocal (0 unless x is 1 or -1).
func ipow[T integer](x, y T) T {
	if y < 0 {
		switch x {
		case 1:
			return 1
		case -1:
			if y%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := T(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

// ---- generic binary through a scalar function (Pow, Maximum, ...) ----

func mapVV[T any](d, a, b []T, f func(T, T) T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = f(a[i], b[i])
	}
}

func mapVS[T any](d, a []T, s T, f func(T, T) T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = f(a[i], s)
	}
}

func mapSV[T any](d []T, s T, b []T, f func(T, T) T) {
	b = b[:len(d)]
	for i := range d {
		d[i] = f(s, b[i])
	}
}

// binaryOps returns the VV, VS and SV micro-ops of an arithmetic op for
// element type T; ok is false if the op is not arithmetic.
func binaryOps[T num](op graph.Op) (vv func(d, a, b []T), vs func(d, a []T, s T), sv func(d []T, s T, b []T), ok bool) {
	if vv, vs, sv, ok := vectorBinary[T](op); ok {
		return vv, vs, sv, true
	}
	var f func(T, T) T
	switch op {
	case ops.OpAdd:
		return addVV[T], addVS[T], func(d []T, s T, b []T) { addVS(d, b, s) }, true
	case ops.OpSub:
		return subVV[T], subVS[T], subSV[T], true
	case ops.OpMul:
		return mulVV[T], mulVS[T], func(d []T, s T, b []T) { mulVS(d, b, s) }, true
	case ops.OpDiv:
		f = divOf[T]()
	case ops.OpPow:
		f = powOf[T]()
	case ops.OpMaximum:
		return maxVV[T], maxVS[T], func(d []T, s T, b []T) { maxVS(d, b, s) }, true
	case ops.OpMinimum:
		return minVV[T], minVS[T], func(d []T, s T, b []T) { minVS(d, b, s) }, true
	default:
		return nil, nil, nil, false
	}
	if op == ops.OpDiv {
		if dv, ok := any(divVV[float32]).(func(d, a, b []T)); ok {
			return dv, any(divVS[float32]).(func(d, a []T, s T)), any(divSV[float32]).(func(d []T, s T, b []T)), true
		}
		if dv, ok := any(divVV[float64]).(func(d, a, b []T)); ok {
			return dv, any(divVS[float64]).(func(d, a []T, s T)), any(divSV[float64]).(func(d []T, s T, b []T)), true
		}
	}
	return func(d, a, b []T) { mapVV(d, a, b, f) },
		func(d, a []T, s T) { mapVS(d, a, s, f) },
		func(d []T, s T, b []T) { mapSV(d, s, b, f) }, true
}

func divOf[T num]() func(T, T) T {
	var z T
	switch any(z).(type) {
	case int32:
		return any(idiv[int32]).(func(T, T) T)
	case int64:
		return any(idiv[int64]).(func(T, T) T)
	case float32:
		return any(func(x, y float32) float32 { return x / y }).(func(T, T) T)
	default:
		return any(func(x, y float64) float64 { return x / y }).(func(T, T) T)
	}
}

func powOf[T num]() func(T, T) T {
	var z T
	switch any(z).(type) {
	case int32:
		return any(ipow[int32]).(func(T, T) T)
	case int64:
		return any(ipow[int64]).(func(T, T) T)
	case float32:
		return any(fpow[float32]).(func(T, T) T)
	default:
		return any(fpow[float64]).(func(T, T) T)
	}
}

// ---- unary ----

func unaryFloat[T float](op graph.Op) func(d, a []T) {
	if f := vectorUnary[T](op); f != nil {
		return f
	}
	apply := func(f func(float64) float64) func(d, a []T) {
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(f(float64(a[i])))
			}
		}
	}
	switch op {
	case ops.OpNeg:
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = -a[i]
			}
		}
	case ops.OpAbs:
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Abs(float64(a[i])))
			}
		}
	case ops.OpSign:
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				switch x := a[i]; {
				case x > 0:
					d[i] = 1
				case x < 0:
					d[i] = -1
				default:
					d[i] = x // 0, -0 or NaN
				}
			}
		}
	case ops.OpRelu:
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				// The builtin max is branch-free here and propagates NaN,
				// as NumPy's maximum(x, 0) does; max(-0, 0) is +0.
				d[i] = max(a[i], 0)
			}
		}
	case ops.OpSqrt:
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = T(math.Sqrt(float64(a[i])))
			}
		}
	case ops.OpExp:
		return apply(math.Exp)
	case ops.OpLog:
		return apply(math.Log)
	case ops.OpTanh:
		return apply(math.Tanh)
	case ops.OpSin:
		return apply(math.Sin)
	case ops.OpCos:
		return apply(math.Cos)
	case ops.OpSigmoid:
		return apply(sigmoid)
	}
	return nil
}

// sigmoid is 1/(1+e^-x) without overflow: for x < 0 it uses e^x/(1+e^x).
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func unaryInt[T integer](op graph.Op) func(d, a []T) {
	f := func(g func(T) T) func(d, a []T) {
		return func(d, a []T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = g(a[i])
			}
		}
	}
	switch op {
	case ops.OpNeg:
		return f(func(x T) T { return -x })
	case ops.OpAbs:
		return f(func(x T) T {
			if x < 0 {
				return -x
			}
			return x
		})
	case ops.OpSign:
		return f(func(x T) T {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return 0
		})
	case ops.OpRelu:
		return f(func(x T) T { return max(x, 0) })
	}
	return nil
}

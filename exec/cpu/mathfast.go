package cpu

import (
	"math"

	"github.com/loomgraph/loom/internal/scalar"
	"github.com/loomgraph/loom/internal/simd"
)

// Fast kernels of the hot ops of the Array API's math (ops/math.go) for
// float32 and float64, where internal/simd has no kernel of the op
// itself: rounding by typed loops (the compiler makes math.Floor and its
// kin one ROUNDSD, where a loop over the entry's function pays an
// indirect call per element), and the activations composed of simd's
// vector kernels over blocks of a stack buffer (the result may alias the
// operand). TestFastKernelsMatchScalarFunctions checks them against the
// entries' scalar functions.

// fastFloat is an entry's kernels for the float types.
type fastFloat struct {
	f32 func(d, a []float32)
	f64 func(d, a []float64)
}

// fastOf is f's kernel for T, or nil.
func fastOf[T elem](f *fastFloat) func(d, a []T) {
	if f == nil {
		return nil
	}
	var z T
	switch any(z).(type) {
	case float32:
		if f.f32 != nil {
			return any(f.f32).(func(d, a []T))
		}
	case float64:
		if f.f64 != nil {
			return any(f.f64).(func(d, a []T))
		}
	}
	return nil
}

// unaryFast is the entry of a one-operand op with fast float kernels
// (and f and i as unary's, for the other dtypes and the tests).
func unaryFast(f func(float64) float64, i func(int64) int64, fast *fastFloat) entry {
	en := unary(f, i)
	en.math.fast = fast
	return en
}

// both is the kernels f (float32) and g (float64).
func both(f func(d, a []float32), g func(d, a []float64)) *fastFloat {
	return &fastFloat{f32: f, f64: g}
}

// The rounding loops: exact, as the scalar functions.

func floorK[T float](d, a []T) {
	a = a[:len(d)]
	for i, x := range a {
		d[i] = T(math.Floor(float64(x)))
	}
}

func ceilK[T float](d, a []T) {
	a = a[:len(d)]
	for i, x := range a {
		d[i] = T(math.Ceil(float64(x)))
	}
}

func roundK[T float](d, a []T) {
	a = a[:len(d)]
	for i, x := range a {
		d[i] = T(math.RoundToEven(float64(x)))
	}
}

func truncK[T float](d, a []T) {
	a = a[:len(d)]
	for i, x := range a {
		d[i] = T(math.Trunc(float64(x)))
	}
}

// block is the length of the stack buffers of the composed kernels (2 KiB
// of float64: in L1 with the operand and result blocks).
const block = 256

// siluK is x·sigmoid(x): simd's sigmoid into a buffer, times x.
func siluK[T float](d, a []T) {
	sig := simd.Unary[T](simd.Sigmoid)
	mul, _, _ := simd.Binary[T](simd.Mul)
	var t [block]T
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		b := t[:hi-lo]
		sig(b, a[lo:hi])
		mul(d[lo:hi], a[lo:hi], b)
	}
}

// geluTanhK is x·sigmoid(u), u = x·(c2 + c2k·x²), as scalar.GeluTanh
// computes it (scalar.GeluC2 and GeluC2K); float32 goes through float64
// (geluTanh32).
func geluTanhK[T float](d, a []T) {
	sig := simd.Unary[T](simd.Sigmoid)
	mul, muls, _ := simd.Binary[T](simd.Mul)
	_, adds, _ := simd.Binary[T](simd.Add)
	c2, c2k := T(scalar.GeluC2), T(scalar.GeluC2K)
	var t [block]T
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		x, b := a[lo:hi], t[:hi-lo]
		mul(b, x, x)
		muls(b, b, c2k)
		adds(b, b, c2)
		mul(b, b, x)
		sig(b, b)
		mul(d[lo:hi], x, b)
	}
}

// softplusK is max(x, 0) + log1p(e^-|x|), with log1p(t) for t = e^-|x|
// in (0, 1] computed from simd's log as log(u) + (t - (u-1))/u, u = 1+t
// (u-1 is exact; the second term corrects the rounding of u to first
// order, and is t itself where u rounds to 1).
func softplusK[T float](d, a []T) {
	abs, neg := simd.Unary[T](simd.Abs), simd.Unary[T](simd.Neg)
	exp, log, relu := simd.Unary[T](simd.Exp), simd.Unary[T](simd.Log), simd.Unary[T](simd.Relu)
	add, adds, _ := simd.Binary[T](simd.Add)
	sub, _, _ := simd.Binary[T](simd.Sub)
	div, _, _ := simd.Binary[T](simd.Div)
	var bt, bu, bl, br [block]T
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		n := hi - lo
		x, t, u, l, r := a[lo:hi], bt[:n], bu[:n], bl[:n], br[:n]
		abs(t, x)
		neg(t, t)
		exp(t, t)
		adds(u, t, 1)
		log(l, u)
		adds(r, u, -1)
		sub(r, t, r)
		div(r, r, u)
		add(l, l, r)
		relu(d[lo:hi], x)
		add(d[lo:hi], d[lo:hi], l)
	}
}

// geluTanh32 is geluTanhK for float32 computed in float64 (converted by
// blocks): sigmoid(u) is |u| times as sensitive to u's rounding as to
// its own, and |u| reaches 90 before the result underflows, so u
// rounded to float32 would cost over a hundred ulps in the tail.
func geluTanh32(d, a []float32) {
	var w [block]float64
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		b := w[:hi-lo]
		for i, x := range a[lo:hi] {
			b[i] = float64(x)
		}
		geluTanhK(b, b)
		for i, x := range b {
			d[lo+i] = float32(x)
		}
	}
}

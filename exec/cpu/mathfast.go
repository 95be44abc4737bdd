package cpu

import (
	"math"
	"sync"

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

// block is the length of the scratch buffers of the composed kernels
// (2 KiB of float64 each: in L1 with the operand and result blocks).
const block = 256

// scratch is a composed kernel's four buffers of block elements. They
// come from a pool (the kernels run on several threads at once, and
// buffers on the stack would escape, through simd's function values, to
// an allocation per call): a Run allocates nothing once the pool holds
// one per thread.
type scratch[T float] [4][block]T

var pool32 = sync.Pool{New: func() any { return new(scratch[float32]) }}
var pool64 = sync.Pool{New: func() any { return new(scratch[float64]) }}

func getScratch[T float]() *scratch[T] {
	var z T
	if _, ok := any(z).(float32); ok {
		return pool32.Get().(*scratch[T])
	}
	return pool64.Get().(*scratch[T])
}

func putScratch[T float](s *scratch[T]) {
	var z T
	if _, ok := any(z).(float32); ok {
		pool32.Put(s)
		return
	}
	pool64.Put(s)
}

// vk is the simd kernels the composed kernels call, looked up once
// (simd.Binary builds a closure per call).
type vk[T float] struct {
	sig, exp, log, abs, neg, relu func(d, a []T)
	add, sub, mul, div            func(d, a, b []T)
	adds, muls                    func(d, a []T, s T)
}

func newVK[T float]() *vk[T] {
	k := &vk[T]{sig: simd.Unary[T](simd.Sigmoid), exp: simd.Unary[T](simd.Exp), log: simd.Unary[T](simd.Log),
		abs: simd.Unary[T](simd.Abs), neg: simd.Unary[T](simd.Neg), relu: simd.Unary[T](simd.Relu)}
	k.add, k.adds, _ = simd.Binary[T](simd.Add)
	k.sub, _, _ = simd.Binary[T](simd.Sub)
	k.mul, k.muls, _ = simd.Binary[T](simd.Mul)
	k.div, _, _ = simd.Binary[T](simd.Div)
	return k
}

var vk32, vk64 = newVK[float32](), newVK[float64]()

func vkOf[T float]() *vk[T] {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(vk32).(*vk[T])
	}
	return any(vk64).(*vk[T])
}

// siluK is x·sigmoid(x): simd's sigmoid into a buffer, times x.
func siluK[T float](d, a []T) {
	k := vkOf[T]()
	s := getScratch[T]()
	defer putScratch(s)
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		b := s[0][:hi-lo]
		k.sig(b, a[lo:hi])
		k.mul(d[lo:hi], a[lo:hi], b)
	}
}

// geluTanhK is x·sigmoid(u), u = x·(c2 + c2k·x²), as scalar.GeluTanh
// computes it (scalar.GeluC2 and GeluC2K); float32 goes through float64
// (geluTanh32).
func geluTanhK(d, a []float64) {
	s := getScratch[float64]()
	defer putScratch(s)
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		geluTanhBlock(d[lo:hi], a[lo:hi], s[0][:hi-lo])
	}
}

// geluTanhBlock computes at most block elements with the buffer t.
func geluTanhBlock(d, x, t []float64) {
	k := vk64
	k.mul(t, x, x)
	k.muls(t, t, scalar.GeluC2K)
	k.adds(t, t, scalar.GeluC2)
	k.mul(t, t, x)
	k.sig(t, t)
	k.mul(d, x, t)
}

// geluTanh32 is geluTanhK for float32 computed in float64 (converted by
// blocks): sigmoid(u) is |u| times as sensitive to u's rounding as to
// its own, and |u| reaches 90 before the result underflows, so u
// rounded to float32 would cost over a hundred ulps in the tail.
func geluTanh32(d, a []float32) {
	s := getScratch[float64]()
	defer putScratch(s)
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		w := s[1][:hi-lo]
		for i, x := range a[lo:hi] {
			w[i] = float64(x)
		}
		geluTanhBlock(w, w, s[0][:hi-lo])
		for i, x := range w {
			d[lo+i] = float32(x)
		}
	}
}

// softplusK is max(x, 0) + log1p(e^-|x|), with log1p(t) for t = e^-|x|
// in (0, 1] computed from simd's log as log(u) + (t - (u-1))/u, u = 1+t
// (u-1 is exact; the second term corrects the rounding of u to first
// order, and is t itself where u rounds to 1).
func softplusK[T float](d, a []T) {
	k := vkOf[T]()
	s := getScratch[T]()
	defer putScratch(s)
	a = a[:len(d)]
	for lo := 0; lo < len(d); lo += block {
		hi := min(lo+block, len(d))
		n := hi - lo
		x, t, u, l, r := a[lo:hi], s[0][:n], s[1][:n], s[2][:n], s[3][:n]
		k.abs(t, x)
		k.neg(t, t)
		k.exp(t, t)
		k.adds(u, t, 1)
		k.log(l, u)
		k.adds(r, u, -1)
		k.sub(r, t, r)
		k.div(r, r, u)
		k.add(l, l, r)
		k.relu(d[lo:hi], x)
		k.add(d[lo:hi], d[lo:hi], l)
	}
}

package cpu

// The reductions and Softmax call internal/simd's float kernels directly
// (the elementwise ops get theirs through the table, table.go).

import "github.com/loomgraph/loom/internal/simd"

// vecSet is internal/simd's kernels for one float type that the
// reductions and Softmax use: one table per type, so that they are written
// once for both.
type vecSet[T elem] struct {
	subs, muls func(d, a []T, s T)
	exp        func(d, a []T)
	sum        func(a []T) float64
	rmax, rmin func(a []T) T
}

var (
	vec32 = &vecSet[float32]{simd.SubSF32, simd.MulSF32, simd.ExpF32, simd.ReduceSumF32, simd.ReduceMaxF32, simd.ReduceMinF32}
	vec64 = &vecSet[float64]{simd.SubSF64, simd.MulSF64, simd.ExpF64, simd.ReduceSumF64, simd.ReduceMaxF64, simd.ReduceMinF64}
)

// vecOf returns the kernel table of T, or nil when T is not a float type.
func vecOf[T elem]() *vecSet[T] {
	switch any(*new(T)).(type) {
	case float32:
		return any(vec32).(*vecSet[T])
	case float64:
		return any(vec64).(*vecSet[T])
	}
	return nil
}

// vectorSum returns the sum of a contiguous float32 or float64 run in
// float64 (SIMD, several accumulators in a fixed order); ok is false for
// other types.
func vectorSum[T elem](x []T) (float64, bool) {
	if v := vecOf[T](); v != nil {
		return v.sum(x), true
	}
	return 0, false
}

// vectorExtreme returns the maximum (or minimum) of a non-empty contiguous
// float run, NaN if any element is NaN; ok is false for other types.
func vectorExtreme[T elem](x []T, isMax bool) (T, bool) {
	v := vecOf[T]()
	switch {
	case v == nil:
		return *new(T), false
	case isMax:
		return v.rmax(x), true
	}
	return v.rmin(x), true
}

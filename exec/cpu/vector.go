package cpu

// The float32 and float64 micro-ops run on internal/simd: AVX-512 or
// AVX2+FMA assembly chosen at start-up (LOOM_SIMD=go or the build tag
// noasm selects its pure-Go loops). Integer types keep the generic loops
// of micro.go.

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/simd"
	"github.com/loomgraph/loom/ops"
)

// vecSet is internal/simd's kernels for one float type: one table per
// type, so that the micro-ops below are written once for both.
type vecSet[T num] struct {
	add, sub, mul, div, max, min       func(d, a, b []T)
	adds, subs, rsubs, muls, divs      func(d, a []T, s T)
	rdivs, maxs, mins                  func(d, a []T, s T)
	neg, abs, sqrt, exp, log, tanh, sg func(d, a []T)
	cmp                                func(op simd.CmpOp, d []uint8, a, b []T)
	cmps                               func(op simd.CmpOp, d []uint8, a []T, s T)
	sum                                func(a []T) float64
	rmax, rmin                         func(a []T) T
}

var (
	vec32 = &vecSet[float32]{
		simd.AddF32, simd.SubF32, simd.MulF32, simd.DivF32, simd.MaxF32, simd.MinF32,
		simd.AddSF32, simd.SubSF32, simd.RSubSF32, simd.MulSF32, simd.DivSF32,
		simd.RDivSF32, simd.MaxSF32, simd.MinSF32,
		simd.NegF32, simd.AbsF32, simd.SqrtF32, simd.ExpF32, simd.LogF32, simd.TanhF32, simd.SigmoidF32,
		simd.CmpF32, simd.CmpSF32, simd.ReduceSumF32, simd.ReduceMaxF32, simd.ReduceMinF32,
	}
	vec64 = &vecSet[float64]{
		simd.AddF64, simd.SubF64, simd.MulF64, simd.DivF64, simd.MaxF64, simd.MinF64,
		simd.AddSF64, simd.SubSF64, simd.RSubSF64, simd.MulSF64, simd.DivSF64,
		simd.RDivSF64, simd.MaxSF64, simd.MinSF64,
		simd.NegF64, simd.AbsF64, simd.SqrtF64, simd.ExpF64, simd.LogF64, simd.TanhF64, simd.SigmoidF64,
		simd.CmpF64, simd.CmpSF64, simd.ReduceSumF64, simd.ReduceMaxF64, simd.ReduceMinF64,
	}
)

// vecOf returns the kernel table of T, or nil when T is not a float type.
func vecOf[T num]() *vecSet[T] {
	var z T
	switch any(z).(type) {
	case float32:
		return any(vec32).(*vecSet[T])
	case float64:
		return any(vec64).(*vecSet[T])
	}
	return nil
}

// vectorBinary returns the SIMD VV, VS and SV micro-ops of an arithmetic
// op for float32 or float64 T; ok is false for other types and ops.
func vectorBinary[T num](op graph.Op) (vv func(d, a, b []T), vs func(d, a []T, s T), sv func(d []T, s T, b []T), ok bool) {
	if simd.Level() == "go" {
		// Without assembly, micro.go's loops (unrolled by four) are faster
		// than simd's plain reference loops.
		return nil, nil, nil, false
	}
	switch any(*new(T)).(type) {
	case float32:
		vv32, vs32, sv32, ok := vec32.binary(op)
		return any(vv32).(func(d, a, b []T)), any(vs32).(func(d, a []T, s T)), any(sv32).(func(d []T, s T, b []T)), ok
	case float64:
		vv64, vs64, sv64, ok := vec64.binary(op)
		return any(vv64).(func(d, a, b []T)), any(vs64).(func(d, a []T, s T)), any(sv64).(func(d []T, s T, b []T)), ok
	}
	return nil, nil, nil, false
}

// binary returns the table's kernels of an arithmetic op; a scalar on the
// left uses the reversed kernel (s - b is RSubS of b).
func (v *vecSet[T]) binary(op graph.Op) (func(d, a, b []T), func(d, a []T, s T), func(d []T, s T, b []T), bool) {
	swap := func(f func(d, a []T, s T)) func(d []T, s T, b []T) {
		return func(d []T, s T, b []T) { f(d, b, s) }
	}
	switch op {
	case ops.OpAdd:
		return v.add, v.adds, swap(v.adds), true
	case ops.OpSub:
		return v.sub, v.subs, swap(v.rsubs), true
	case ops.OpMul:
		return v.mul, v.muls, swap(v.muls), true
	case ops.OpDiv:
		return v.div, v.divs, swap(v.rdivs), true
	case ops.OpMaximum:
		return v.max, v.maxs, swap(v.maxs), true
	case ops.OpMinimum:
		return v.min, v.mins, swap(v.mins), true
	}
	return nil, nil, nil, false
}

// vectorUnary returns the SIMD micro-op of a unary op for float32 or
// float64 T, or nil.
func vectorUnary[T float](op graph.Op) func(d, a []T) {
	v := vecOf[T]()
	switch op {
	case ops.OpNeg:
		return v.neg
	case ops.OpAbs:
		return v.abs
	case ops.OpSqrt:
		return v.sqrt
	case ops.OpExp:
		return v.exp
	case ops.OpLog:
		return v.log
	case ops.OpTanh:
		return v.tanh
	case ops.OpSigmoid:
		return v.sg
	case ops.OpRelu:
		// max(x, 0) with NaN propagating and max(-0, 0) = +0, as the
		// builtin max.
		return func(d, a []T) { v.maxs(d, a, 0) }
	}
	return nil
}

// simdCmp maps a comparison op to simd's, and to the op with its operands
// swapped (for a scalar on the left: s < b[i] is b[i] > s).
func simdCmp(op graph.Op) (direct, swapped simd.CmpOp, ok bool) {
	switch op {
	case ops.OpEqual:
		return simd.Eq, simd.Eq, true
	case ops.OpNotEqual:
		return simd.Ne, simd.Ne, true
	case ops.OpLess:
		return simd.Lt, simd.Gt, true
	case ops.OpLessEqual:
		return simd.Le, simd.Ge, true
	case ops.OpGreater:
		return simd.Gt, simd.Lt, true
	case ops.OpGreaterEqual:
		return simd.Ge, simd.Le, true
	}
	return 0, 0, false
}

// vectorCompare returns the SIMD comparison run of op for float32 or
// float64 T, or nil; as and bs are the operand strides (0 or 1).
func vectorCompare[T ordered](op graph.Op) func(d []uint8, a []T, as int, b []T, bs int) {
	c, sw, ok := simdCmp(op)
	if !ok {
		return nil
	}
	switch any(*new(T)).(type) {
	case float32:
		return any(compareWith(vec32, c, sw)).(func(d []uint8, a []T, as int, b []T, bs int))
	case float64:
		return any(compareWith(vec64, c, sw)).(func(d []uint8, a []T, as int, b []T, bs int))
	}
	return nil
}

func compareWith[T num](v *vecSet[T], c, sw simd.CmpOp) func(d []uint8, a []T, as int, b []T, bs int) {
	return func(d []uint8, a []T, as int, b []T, bs int) {
		switch {
		case as == 1 && bs == 1:
			v.cmp(c, d, a, b)
		case as == 1:
			v.cmps(c, d, a, b[0])
		case bs == 1:
			v.cmps(sw, d, b, a[0])
		default:
			cmpScalar(d, c, float64(a[0]), float64(b[0]))
		}
	}
}

// cmpScalar fills d with the comparison of two scalars.
func cmpScalar(d []uint8, c simd.CmpOp, x, y float64) {
	var v bool
	switch c {
	case simd.Eq:
		v = x == y
	case simd.Ne:
		v = x != y
	case simd.Lt:
		v = x < y
	case simd.Le:
		v = x <= y
	case simd.Gt:
		v = x > y
	case simd.Ge:
		v = x >= y
	}
	b := u8(v)
	for i := range d {
		d[i] = b
	}
}

// vectorSelect runs Where on 4- and 8-byte elements with SIMD when the
// condition and x are vectors; it reports false when it did not.
func vectorSelect[T uint8 | uint16 | uint32 | uint64](d []T, c []uint8, cs int, x []T, xs int, y []T, ys int) bool {
	if cs != 1 || xs != 1 {
		return false
	}
	c, x = c[:len(d)], x[:len(d)]
	switch dd := any(d).(type) {
	case []uint32:
		xx, yy := any(x).([]uint32), any(y).([]uint32)
		if ys == 1 {
			simd.SelectU32(dd, c, xx, yy)
		} else {
			simd.SelectSU32(dd, c, xx, yy[0])
		}
		return true
	case []uint64:
		xx, yy := any(x).([]uint64), any(y).([]uint64)
		if ys == 1 {
			simd.SelectU64(dd, c, xx, yy)
		} else {
			simd.SelectSU64(dd, c, xx, yy[0])
		}
		return true
	}
	return false
}

// vectorSum returns the sum of a contiguous float32 or float64 run in
// float64 (SIMD, several accumulators in a fixed order); ok is false for
// other types.
func vectorSum[T num](x []T) (float64, bool) {
	if v := vecOf[T](); v != nil {
		return v.sum(x), true
	}
	return 0, false
}

// vectorExtreme returns the maximum (or minimum) of a non-empty contiguous
// float run, NaN if any element is NaN; ok is false for other types.
func vectorExtreme[T num](x []T, isMax bool) (T, bool) {
	v := vecOf[T]()
	switch {
	case v == nil:
		return *new(T), false
	case isMax:
		return v.rmax(x), true
	}
	return v.rmin(x), true
}

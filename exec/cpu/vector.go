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

// vectorBinary returns the SIMD VV, VS and SV micro-ops of an arithmetic
// op for float32 or float64 T; ok is false for other types and ops.
func vectorBinary[T num](op graph.Op) (vv func(d, a, b []T), vs func(d, a []T, s T), sv func(d []T, s T, b []T), ok bool) {
	if simd.Level() == "go" {
		// Without assembly, micro.go's loops (unrolled by four) are faster
		// than simd's plain reference loops.
		return nil, nil, nil, false
	}
	var z T
	switch any(z).(type) {
	case float32:
		f, ok := vector32(op)
		if !ok {
			return nil, nil, nil, false
		}
		return any(f.vv).(func(d, a, b []T)), any(f.vs).(func(d, a []T, s T)), any(f.sv).(func(d []T, s T, b []T)), true
	case float64:
		f, ok := vector64(op)
		if !ok {
			return nil, nil, nil, false
		}
		return any(f.vv).(func(d, a, b []T)), any(f.vs).(func(d, a []T, s T)), any(f.sv).(func(d []T, s T, b []T)), true
	}
	return nil, nil, nil, false
}

type binary32 struct {
	vv func(d, a, b []float32)
	vs func(d, a []float32, s float32)
	sv func(d []float32, s float32, b []float32)
}

type binary64 struct {
	vv func(d, a, b []float64)
	vs func(d, a []float64, s float64)
	sv func(d []float64, s float64, b []float64)
}

func vector32(op graph.Op) (binary32, bool) {
	swap := func(f func(d, a []float32, s float32)) func(d []float32, s float32, b []float32) {
		return func(d []float32, s float32, b []float32) { f(d, b, s) }
	}
	switch op {
	case ops.OpAdd:
		return binary32{simd.AddF32, simd.AddSF32, swap(simd.AddSF32)}, true
	case ops.OpSub:
		return binary32{simd.SubF32, simd.SubSF32, swap(simd.RSubSF32)}, true
	case ops.OpMul:
		return binary32{simd.MulF32, simd.MulSF32, swap(simd.MulSF32)}, true
	case ops.OpDiv:
		return binary32{simd.DivF32, simd.DivSF32, swap(simd.RDivSF32)}, true
	case ops.OpMaximum:
		return binary32{simd.MaxF32, simd.MaxSF32, swap(simd.MaxSF32)}, true
	case ops.OpMinimum:
		return binary32{simd.MinF32, simd.MinSF32, swap(simd.MinSF32)}, true
	}
	return binary32{}, false
}

func vector64(op graph.Op) (binary64, bool) {
	swap := func(f func(d, a []float64, s float64)) func(d []float64, s float64, b []float64) {
		return func(d []float64, s float64, b []float64) { f(d, b, s) }
	}
	switch op {
	case ops.OpAdd:
		return binary64{simd.AddF64, simd.AddSF64, swap(simd.AddSF64)}, true
	case ops.OpSub:
		return binary64{simd.SubF64, simd.SubSF64, swap(simd.RSubSF64)}, true
	case ops.OpMul:
		return binary64{simd.MulF64, simd.MulSF64, swap(simd.MulSF64)}, true
	case ops.OpDiv:
		return binary64{simd.DivF64, simd.DivSF64, swap(simd.RDivSF64)}, true
	case ops.OpMaximum:
		return binary64{simd.MaxF64, simd.MaxSF64, swap(simd.MaxSF64)}, true
	case ops.OpMinimum:
		return binary64{simd.MinF64, simd.MinSF64, swap(simd.MinSF64)}, true
	}
	return binary64{}, false
}

// vectorUnary returns the SIMD micro-op of a unary op for float32 or
// float64 T, or nil.
func vectorUnary[T float](op graph.Op) func(d, a []T) {
	var z T
	switch any(z).(type) {
	case float32:
		if f := unary32(op); f != nil {
			return any(f).(func(d, a []T))
		}
	case float64:
		if f := unary64(op); f != nil {
			return any(f).(func(d, a []T))
		}
	}
	return nil
}

func unary32(op graph.Op) func(d, a []float32) {
	switch op {
	case ops.OpNeg:
		return simd.NegF32
	case ops.OpAbs:
		return simd.AbsF32
	case ops.OpSqrt:
		return simd.SqrtF32
	case ops.OpExp:
		return simd.ExpF32
	case ops.OpLog:
		return simd.LogF32
	case ops.OpTanh:
		return simd.TanhF32
	case ops.OpSigmoid:
		return simd.SigmoidF32
	case ops.OpRelu:
		// max(x, 0) with NaN propagating and max(-0, 0) = +0, as the
		// builtin max.
		return func(d, a []float32) { simd.MaxSF32(d, a, 0) }
	}
	return nil
}

func unary64(op graph.Op) func(d, a []float64) {
	switch op {
	case ops.OpNeg:
		return simd.NegF64
	case ops.OpAbs:
		return simd.AbsF64
	case ops.OpSqrt:
		return simd.SqrtF64
	case ops.OpExp:
		return simd.ExpF64
	case ops.OpLog:
		return simd.LogF64
	case ops.OpTanh:
		return simd.TanhF64
	case ops.OpSigmoid:
		return simd.SigmoidF64
	case ops.OpRelu:
		return func(d, a []float64) { simd.MaxSF64(d, a, 0) }
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
	var z T
	switch any(z).(type) {
	case float32:
		f := func(d []uint8, a []float32, as int, b []float32, bs int) {
			switch {
			case as == 1 && bs == 1:
				simd.CmpF32(c, d, a, b)
			case as == 1:
				simd.CmpSF32(c, d, a, b[0])
			case bs == 1:
				simd.CmpSF32(sw, d, b, a[0])
			default:
				cmpScalar(d, c, float64(a[0]), float64(b[0]))
			}
		}
		return any(f).(func(d []uint8, a []T, as int, b []T, bs int))
	case float64:
		f := func(d []uint8, a []float64, as int, b []float64, bs int) {
			switch {
			case as == 1 && bs == 1:
				simd.CmpF64(c, d, a, b)
			case as == 1:
				simd.CmpSF64(c, d, a, b[0])
			case bs == 1:
				simd.CmpSF64(sw, d, b, a[0])
			default:
				cmpScalar(d, c, a[0], b[0])
			}
		}
		return any(f).(func(d []uint8, a []T, as int, b []T, bs int))
	}
	return nil
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
	switch v := any(x).(type) {
	case []float32:
		return simd.ReduceSumF32(v), true
	case []float64:
		return simd.ReduceSumF64(v), true
	}
	return 0, false
}

// vectorExtreme returns the maximum (or minimum) of a non-empty contiguous
// float run, NaN if any element is NaN; ok is false for other types.
func vectorExtreme[T num](x []T, isMax bool) (T, bool) {
	var r any
	switch v := any(x).(type) {
	case []float32:
		if isMax {
			r = simd.ReduceMaxF32(v)
		} else {
			r = simd.ReduceMinF32(v)
		}
	case []float64:
		if isMax {
			r = simd.ReduceMaxF64(v)
		} else {
			r = simd.ReduceMinF64(v)
		}
	default:
		var z T
		return z, false
	}
	return r.(T), true
}

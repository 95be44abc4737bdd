package cpu

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/simd"
	"github.com/loomgraph/loom/ops"
)

// table is the CPU's op-to-kernel table, the one place an op meets the
// CPU: every op has one entry, and nothing outside this file names an
// elementwise op.
//
// An elementwise op's entry gives its element computation (elementwise.go)
// and yields both its standalone kernel (NumPy broadcasting) and its
// micro-op in fused groups, for every dtype of its declaration:
//
//   - unary(f, i, fast) and binary(f, i, fast): f computes in float64
//     for float32 and float64, i in int64 for int32, int64 and bool (the
//     result converted back: integers wrap); nil where the op admits no
//     such dtype. fast, optional, names internal/simd's kernels for the
//     hot ops: assembly for float32 and float64, unrolled Go loops for the
//     other types where simd has them. A new op with only a float function
//     is one line: ops.OpLog1p: unary(math.Log1p, nil).
//   - compare(op): a comparison with a bool result, in any element type.
//   - where(), cast(), identity(): select by element size, conversion
//     between any two dtypes, copy of the bytes.
//
// Every other op's entry is the function that prepares its kernel.
var table map[graph.Op]entry

func init() {
	// Built at init, after package ops has handed out the op codes (and
	// because prepareFused reads the table).
	table = map[graph.Op]entry{
		ops.OpAdd:     binary(add[float64], add[int64], simd.Add),
		ops.OpSub:     binary(sub[float64], sub[int64], simd.Sub),
		ops.OpMul:     binary(mul[float64], mul[int64], simd.Mul),
		ops.OpDiv:     binary(div, floorDiv, simd.Div),
		ops.OpPow:     binary(math.Pow, intPow),
		ops.OpMaximum: binary(maxOf[float64], maxOf[int64], simd.Max),
		ops.OpMinimum: binary(minOf[float64], minOf[int64], simd.Min),

		ops.OpEqual:        compare(simd.Eq),
		ops.OpNotEqual:     compare(simd.Ne),
		ops.OpLess:         compare(simd.Lt),
		ops.OpLessEqual:    compare(simd.Le),
		ops.OpGreater:      compare(simd.Gt),
		ops.OpGreaterEqual: compare(simd.Ge),

		ops.OpAnd: binary(nil, and, simd.And),
		ops.OpOr:  binary(nil, or, simd.Or),
		ops.OpNot: unary(nil, not),

		ops.OpNeg:     unary(neg[float64], neg[int64], simd.Neg),
		ops.OpAbs:     unary(math.Abs, absInt, simd.Abs),
		ops.OpSign:    unary(sign[float64], sign[int64], simd.Sign),
		ops.OpRelu:    unary(relu[float64], relu[int64], simd.Relu),
		ops.OpExp:     unary(math.Exp, nil, simd.Exp),
		ops.OpLog:     unary(math.Log, nil, simd.Log),
		ops.OpSqrt:    unary(math.Sqrt, nil, simd.Sqrt),
		ops.OpTanh:    unary(math.Tanh, nil, simd.Tanh),
		ops.OpSigmoid: unary(sigmoid, nil, simd.Sigmoid),
		ops.OpSin:     unary(math.Sin, nil),
		ops.OpCos:     unary(math.Cos, nil),

		ops.OpWhere:        where(),
		ops.OpCast:         cast(),
		ops.OpStopGradient: identity(),

		ops.OpSum:    kernelOf(prepareReduce),
		ops.OpMax:    kernelOf(prepareReduce),
		ops.OpMin:    kernelOf(prepareReduce),
		ops.OpArgMax: kernelOf(prepareReduce),
		ops.OpArgMin: kernelOf(prepareReduce),
		ops.OpProd:   kernelOf(prepareReduce),
		ops.OpAny:    kernelOf(prepareReduce),
		ops.OpAll:    kernelOf(prepareReduce),

		ops.OpCumsum:       kernelOf(prepareScan),
		ops.OpCumprod:      kernelOf(prepareScan),
		ops.OpCummax:       kernelOf(prepareScan),
		ops.OpLogCumSumExp: kernelOf(prepareScan),
		ops.OpCumprodGrad:  kernelOf(prepareScanGrad),
		ops.OpCummaxGrad:   kernelOf(prepareScanGrad),

		ops.OpReshape:     kernelOf(prepareCopy),
		ops.OpTranspose:   kernelOf(prepareTranspose),
		ops.OpBroadcastTo: kernelOf(prepareBroadcastTo),
		ops.OpSlice:       kernelOf(prepareSlice),
		ops.OpConcat:      kernelOf(prepareConcat),
		ops.OpPad:         kernelOf(preparePad),
		ops.OpCustomGrad:  kernelOf(prepareCopy),

		ops.OpMatMul:     kernelOf(prepareMatMul),
		ops.OpSoftmax:    kernelOf(prepareSoftmax),
		ops.OpLogSoftmax: kernelOf(prepareSoftmax),
		opdef.OpFused:    kernelOf(prepareFused),
	}
}

// ---- the scalar functions of the entries ----

func add[W wide](x, y W) W     { return x + y }
func sub[W wide](x, y W) W     { return x - y }
func mul[W wide](x, y W) W     { return x * y }
func div(x, y float64) float64 { return x / y }

// The builtin max and min propagate NaN and order -0 below +0, as
// Maximum, Minimum and Relu promise.
func maxOf[W wide](x, y W) W { return max(x, y) }
func minOf[W wide](x, y W) W { return min(x, y) }
func relu[W wide](x W) W     { return max(x, 0) }

func neg[W wide](x W) W { return -x }

// sign is 1 or -1 by the sign of x, and x itself for 0, -0 and NaN.
func sign[W wide](x W) W {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

func absInt(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// floorDiv is integer division rounding toward minus infinity (Python's
// //); x/0 is 0 (integer division by zero has no value; loom does not
// trap), and MinInt/-1 wraps to MinInt as in NumPy.
func floorDiv(x, y int64) int64 {
	switch y {
	case 0:
		return 0
	case -1:
		return -x
	}
	q := x / y
	if x%y != 0 && (x < 0) != (y < 0) {
		q--
	}
	return q
}

// intPow is integer power by squaring; a negative exponent gives the
// truncated reciprocal (0 unless x is 1 or -1).
func intPow(x, y int64) int64 {
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
	r := int64(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

// sigmoid is 1/(1+e^-x) without overflow: for x < 0 it uses e^x/(1+e^x).
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// The logical ops on bools (0 and 1).
func and(x, y int64) int64 { return x & y }
func or(x, y int64) int64  { return x | y }
func not(x int64) int64    { return x ^ 1 }

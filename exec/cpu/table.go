package cpu

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/scalar"
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
//     for float32 and float64, i in int64 for the integer dtypes and bool
//     (the operands sign- or zero-extended, the result converted back:
//     integers wrap); nil where the op admits no such dtype. fast, optional, names internal/simd's kernels for the
//     hot ops: assembly for float32 and float64, unrolled Go loops for the
//     other types where simd has them. A new op with only a float function
//     is one line: ops.OpLog1p: unary(math.Log1p, nil).
//   - byBool(b, i): b's kernels for bools, i's for the other dtypes
//     (Not: logical on bools, bitwise on integers).
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
		ops.OpAdd:     withComplex(binary(add[float64], add[int64], simd.Add), cAdd),
		ops.OpSub:     withComplex(binary(sub[float64], sub[int64], simd.Sub), cSub),
		ops.OpMul:     withComplex(binary(mul[float64], mul[int64], simd.Mul), cMul),
		ops.OpDiv:     withComplex(binary(div, scalar.FloorDivInt, simd.Div), cDiv),
		ops.OpPow:     withComplex(binary(math.Pow, scalar.PowInt), cPow),
		ops.OpMaximum: binary(maxOf[float64], maxOf[int64], simd.Max),
		ops.OpMinimum: binary(minOf[float64], minOf[int64], simd.Min),

		ops.OpEqual:        withComplex(compare(simd.Eq), cEq),
		ops.OpNotEqual:     withComplex(compare(simd.Ne), cNe),
		ops.OpLess:         compare(simd.Lt),
		ops.OpLessEqual:    compare(simd.Le),
		ops.OpGreater:      compare(simd.Gt),
		ops.OpGreaterEqual: compare(simd.Ge),

		// Logical on bools (0 and 1), bitwise on integers: one function
		// serves both but for Not.
		ops.OpAnd:        binary(nil, and, simd.And),
		ops.OpOr:         binary(nil, or, simd.Or),
		ops.OpXor:        binary(nil, xor),
		ops.OpNot:        byBool(unary(nil, not), unary(nil, invert)),
		ops.OpLeftShift:  binary(nil, shiftLeft),
		ops.OpRightShift: binary(nil, shiftRight),

		ops.OpNeg:     withComplex(unary(neg[float64], neg[int64], simd.Neg), cNeg),
		ops.OpAbs:     withComplex(unary(math.Abs, scalar.AbsInt, simd.Abs), cAbs),
		ops.OpSign:    unary(scalar.Sign[float64], scalar.Sign[int64], simd.Sign),
		ops.OpRelu:    unary(relu[float64], relu[int64], simd.Relu),
		ops.OpExp:     withComplex(unary(math.Exp, nil, simd.Exp), cExp),
		ops.OpLog:     withComplex(unary(math.Log, nil, simd.Log), cLog),
		ops.OpSqrt:    withComplex(unary(math.Sqrt, nil, simd.Sqrt), cSqrt),
		ops.OpTanh:    unary(math.Tanh, nil, simd.Tanh),
		ops.OpSigmoid: unary(scalar.Sigmoid, nil, simd.Sigmoid),
		ops.OpSin:     unary(math.Sin, nil),
		ops.OpCos:     unary(math.Cos, nil),

		// The Array API's math (ops/math.go).
		ops.OpFloor:      unaryFast(math.Floor, same, both(floorK[float32], floorK[float64])),
		ops.OpCeil:       unaryFast(math.Ceil, same, both(ceilK[float32], ceilK[float64])),
		ops.OpRound:      unaryFast(math.RoundToEven, same, both(roundK[float32], roundK[float64])),
		ops.OpTrunc:      unaryFast(math.Trunc, same, both(truncK[float32], truncK[float64])),
		ops.OpRemainder:  binary(scalar.Remainder, scalar.RemainderInt),
		ops.OpFmod:       binary(math.Mod, scalar.FmodInt),
		ops.OpFloorDiv:   binary(scalar.FloorDiv, scalar.FloorDivInt),
		ops.OpAtan2:      binary(math.Atan2, nil),
		ops.OpLog1p:      unary(math.Log1p, nil),
		ops.OpExpm1:      unary(math.Expm1, nil),
		ops.OpLog2:       unary(math.Log2, nil),
		ops.OpLog10:      unary(math.Log10, nil),
		ops.OpExp2:       unary(math.Exp2, nil),
		ops.OpRsqrt:      unary(rsqrt, nil),
		ops.OpReciprocal: withComplex(unary(reciprocal, nil), cRecip),
		ops.OpTan:        unary(math.Tan, nil),
		ops.OpAsin:       unary(math.Asin, nil),
		ops.OpAcos:       unary(math.Acos, nil),
		ops.OpAtan:       unary(math.Atan, nil),
		ops.OpSinh:       unary(math.Sinh, nil),
		ops.OpCosh:       unary(math.Cosh, nil),
		ops.OpAsinh:      unary(math.Asinh, nil),
		ops.OpAcosh:      unary(math.Acosh, nil),
		ops.OpAtanh:      unary(math.Atanh, nil),
		ops.OpErf:        unary(math.Erf, nil),
		ops.OpErfc:       unary(math.Erfc, nil),
		ops.OpLgamma:     unary(scalar.Lgamma, nil),
		ops.OpDigamma:    unary(scalar.Digamma, nil),
		ops.OpTrigamma:   unary(scalar.Trigamma, nil),
		ops.OpSoftplus:   unaryFast(scalar.Softplus, nil, both(softplusK[float32], softplusK[float64])),
		ops.OpGelu:       unary(scalar.Gelu, nil),
		ops.OpGeluTanh:   unaryFast(scalar.GeluTanh, nil, both(geluTanh32, geluTanhK)),
		ops.OpSilu:       unaryFast(scalar.Silu, nil, both(siluK[float32], siluK[float64])),
		ops.OpIsNaN:      classify(isNaN),
		ops.OpIsInf:      classify(isInf),
		ops.OpIsFinite:   classify(isFinite),

		ops.OpWhere:        where(),
		ops.OpCast:         cast(),
		ops.OpStopGradient: identity(),

		// The complex numbers' own ops (ops/complex.go; kernels in
		// complex.go).
		ops.OpComplex: complexOnly(cMake2),
		ops.OpReal:    complexOnly(cReal),
		ops.OpImag:    complexOnly(cImag),
		ops.OpConj:    complexOnly(cConj),
		ops.OpAngle:   complexOnly(cAngle),

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
		ops.OpRepeat:      kernelOf(prepareRepeat),
		ops.OpSumRuns:     kernelOf(prepareSumRuns),
		ops.OpIota:        kernelOf(prepareIota),
		ops.OpCustomGrad:  kernelOf(prepareCopy),

		// sorting (issue 14)
		ops.OpAllReduce: kernelOf(prepareCollective), ops.OpAllGather: kernelOf(prepareCollective), ops.OpReduceScatter: kernelOf(prepareCollective),
		ops.OpBroadcast: kernelOf(prepareCollective), ops.OpReduce: kernelOf(prepareCollective),
		ops.OpSort: kernelOf(prepareSort), ops.OpArgSort: kernelOf(prepareSort), ops.OpTopK: kernelOf(prepareSort),
		ops.OpSearchSorted: kernelOf(prepareSearchSorted),
		// Fourier transforms (issue 16; exec/cpu/fft.go)
		ops.OpFFT: kernelOf(prepareFFT), ops.OpRFFT: kernelOf(prepareFFT), ops.OpIRFFT: kernelOf(prepareFFT),

		ops.OpMatMul:     kernelOf(prepareMatMul),
		ops.OpSoftmax:    kernelOf(prepareSoftmax),
		ops.OpLogSoftmax: kernelOf(prepareSoftmax),
		opdef.OpFused:    kernelOf(prepareFused),

		// control flow (issue 22): control.go; Lower prepares Cond, While
		// and Scan from the plan's compiled bodies
		ops.OpCond: kernelOf(prepareNeedsBodies), ops.OpWhile: kernelOf(prepareNeedsBodies),
		ops.OpScan: kernelOf(prepareNeedsBodies), ops.OpTupleGet: kernelOf(prepareTupleGet),

		// random (issue 14)
		ops.OpRandomBits: kernelOf(prepareRandom), ops.OpRandomUniform: kernelOf(prepareRandom),
		ops.OpRandomNormal: kernelOf(prepareRandom), ops.OpRandomBernoulli: kernelOf(prepareRandom),
		// indexing (issue 14)
		ops.OpGather:        kernelOf(prepareGather),
		ops.OpTakeAlongAxis: kernelOf(prepareTakeAlongAxis),
		ops.OpScatter:       kernelOf(prepareScatter),
		ops.OpScatterAdd:    kernelOf(prepareScatterAdd),
		ops.OpIndexAdd:      kernelOf(prepareIndexAdd),

		// convolutions (issue 15; conv.go)
		ops.OpConv: kernelOf(prepareConv), ops.OpConvTranspose: kernelOf(prepareConv),
		ops.OpConvFilterGrad: kernelOf(prepareConv),
		// pooling (issue 15): pooling.go
		ops.OpMaxPool: kernelOf(preparePool), ops.OpMaxPoolGrad: kernelOf(preparePool), ops.OpMaxPoolSelect: kernelOf(preparePool),
		ops.OpAvgPool: kernelOf(preparePool), ops.OpAvgPoolGrad: kernelOf(preparePool),
		// linear algebra (issue 16): linalg.go
		ops.OpCholesky: kernelOf(prepareLinalg), ops.OpTriangularSolve: kernelOf(prepareLinalg),
		ops.OpSolve: kernelOf(prepareLinalg), ops.OpInv: kernelOf(prepareLinalg),
		ops.OpDet: kernelOf(prepareLinalg), ops.OpSLogDet: kernelOf(prepareLinalg),
		ops.OpQR: kernelOf(prepareLinalg), ops.OpEigh: kernelOf(prepareLinalg),
		ops.OpSVD: kernelOf(prepareLinalg), ops.OpLstSq: kernelOf(prepareLinalg),
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

// same is the rounding ops on integers: x itself.
func same(x int64) int64 { return x }

func rsqrt(x float64) float64      { return 1 / math.Sqrt(x) }
func reciprocal(x float64) float64 { return 1 / x }

// The logical ops on bools (0 and 1) and bitwise ops on integers: and,
// or and xor are both; not is the logical not of a bool, invert the
// bitwise not of an integer (the result wraps to the element type:
// ^x of a uint8 200 is -201, stored as 55).
func and(x, y int64) int64 { return x & y }
func or(x, y int64) int64  { return x | y }
func xor(x, y int64) int64 { return x ^ y }
func not(x int64) int64    { return x ^ 1 }
func invert(x int64) int64 { return ^x }

// shiftLeft and shiftRight are NumPy's left_shift and right_shift
// computed in int64 (see ops.LeftShift): the element is sign- or
// zero-extended, so the arithmetic shift is logical for uint8, and a
// count of the element's width or more already gives 0 (left) or 0 and
// -1 by sign (right) once the result is converted back; a negative count,
// made unsigned, is a count of 64 or more, with the same results.
func shiftLeft(x, c int64) int64  { return x << uint64(c) }
func shiftRight(x, c int64) int64 { return x >> uint64(c) }

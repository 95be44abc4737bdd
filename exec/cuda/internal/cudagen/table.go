package cudagen

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The op-to-code table: how the CUDA backend computes every op of the
// declarations (internal/opdef), one row per op. An elementwise op has
// one C-expression template (expr), which serves it standalone, inside
// fused groups and before a fused reduction, in every dtype its variants
// cover; every other op has its generator. TestTable checks that every
// declared op has a row, and exec/cuda's TestElementwiseTable runs every
// elementwise row in every dtype its declaration admits.
//
// Adding an elementwise float op that the C math library has is one line,
// {ops.OpLog1p, mathFn("log1p")}; one that needs more gets a helper in
// Prelude (loom_NAME_f32 and loom_NAME_f64) and floatHelper("loom_NAME").

// rows is the table's source; init indexes it by op code (the codes are
// handed out when package ops initialises, so they are not constants).
func rows() []row {
	// where selects the value of operand 1 or 2 by the bool operand 0.
	const where = "($0 != 0 ? $1 : $2)"
	return []row{
		// Arithmetic: floats in C; integers wrap (two's complement) in
		// the prelude's helpers, and divide by flooring with x/0 = 0.
		// Complex numbers: the prelude's operators and helpers
		// (complex.go), Go's semantics.
		{ops.OpAdd, ew(expr{floats: "$0 + $1", ints: "loom_add_$s($0, $1)", complexes: "$0 + $1"})},
		{ops.OpSub, ew(expr{floats: "$0 - $1", ints: "loom_sub_$s($0, $1)", complexes: "$0 - $1"})},
		{ops.OpMul, ew(expr{floats: "$0 * $1", ints: "loom_mul_$s($0, $1)", complexes: "$0 * $1"})},
		{ops.OpDiv, ew(expr{floats: "$0 / $1", ints: "loom_div_$s($0, $1)", complexes: "loom_div_$s($0, $1)"})},
		// Float powers in double, rounded once (as math.Pow); integer
		// powers by squaring.
		{ops.OpPow, ew(expr{floats: "loom_pow_$s($*)", ints: "loom_pow_$s($*)", complexes: "loom_pow_$s($*)"})},
		// Float Maximum and Minimum propagate NaN and order -0 < +0.
		{ops.OpMaximum, ew(expr{floats: "loom_max_$s($0, $1)", ints: "($0 > $1 ? $0 : $1)"})},
		{ops.OpMinimum, ew(expr{floats: "loom_min_$s($0, $1)", ints: "($0 < $1 ? $0 : $1)"})},
		{ops.OpNeg, ew(expr{floats: "-$0", ints: "loom_neg_$s($0)", complexes: "-$0"})},
		{ops.OpAbs, ew(expr{floats: "fabs$f($0)", ints: "loom_abs_$s($0)", complexes: "loom_abs_$s($0)"})}, // complex: |z| (hypot), real
		// Float Sign and Relu keep NaN (and Sign keeps -0).
		// (Integers compare with 0 once each way: NVRTC warns about x < 0
		// of an unsigned x.)
		{ops.OpSign, ew(expr{floats: "loom_sign_$s($0)", ints: "($T)($0 > 0 ? 1 : ($0 == 0 ? 0 : -1))"})},
		{ops.OpRelu, ew(expr{floats: "loom_relu_$s($0)", ints: "($0 > 0 ? $0 : $z)"})},

		// Float functions.
		{ops.OpExp, mathOrComplex("exp")},
		{ops.OpLog, mathOrComplex("log")},
		{ops.OpSqrt, mathOrComplex("sqrt")},
		{ops.OpTanh, mathFn("tanh")},
		{ops.OpSin, mathFn("sin")},
		{ops.OpCos, mathFn("cos")},
		{ops.OpSigmoid, floatHelper("loom_sigmoid")}, // without overflow

		// The Array API's math (ops/math.go). Rounding keeps integers;
		// Round is rint (ties to even).
		{ops.OpFloor, ew(expr{floats: "floor$f($0)", ints: "$0"})},
		{ops.OpCeil, ew(expr{floats: "ceil$f($0)", ints: "$0"})},
		{ops.OpRound, ew(expr{floats: "rint$f($0)", ints: "$0"})},
		{ops.OpTrunc, ew(expr{floats: "trunc$f($0)", ints: "$0"})},
		// Remainders and floor division: NumPy's divmod for floats, the
		// CPU's x%0 = 0 and wrapping for integers.
		{ops.OpRemainder, helper("loom_remainder")},
		{ops.OpFmod, ew(expr{floats: "fmod$f($0, $1)", ints: "loom_fmod_$s($0, $1)"})},
		{ops.OpFloorDiv, ew(expr{floats: "loom_floordiv_$s($0, $1)", ints: "loom_div_$s($0, $1)"})},
		{ops.OpAtan2, mathFn("atan2")},
		{ops.OpLog1p, mathFn("log1p")},
		{ops.OpExpm1, mathFn("expm1")},
		{ops.OpLog2, mathFn("log2")},
		{ops.OpLog10, mathFn("log10")},
		{ops.OpExp2, mathFn("exp2")},
		{ops.OpRsqrt, ew(expr{floats: "($T)1 / sqrt$f($0)"})}, // not rsqrt: the CPU divides, rounded twice
		{ops.OpReciprocal, ew(expr{floats: "($T)1 / $0", complexes: "loom_reciprocal_$s($0)"})},
		{ops.OpTan, mathFn("tan")},
		{ops.OpAsin, mathFn("asin")},
		{ops.OpAcos, mathFn("acos")},
		{ops.OpAtan, mathFn("atan")},
		{ops.OpSinh, mathFn("sinh")},
		{ops.OpCosh, mathFn("cosh")},
		{ops.OpAsinh, mathFn("asinh")},
		{ops.OpAcosh, mathFn("acosh")},
		{ops.OpAtanh, mathFn("atanh")},
		{ops.OpErf, mathFn("erf")},
		{ops.OpErfc, mathFn("erfc")},
		{ops.OpLgamma, mathFn("lgamma")},
		{ops.OpDigamma, floatHelper("loom_digamma")},
		{ops.OpTrigamma, floatHelper("loom_trigamma")},
		{ops.OpSoftplus, floatHelper("loom_softplus")},
		{ops.OpGelu, floatHelper("loom_gelu")},
		{ops.OpGeluTanh, floatHelper("loom_gelu_tanh")},
		{ops.OpSilu, floatHelper("loom_silu")},
		// Classification: a bool byte; integers are never NaN nor
		// infinite (x != x is false, x == x true: constants that use the
		// operand, which NVRTC wants).
		{ops.OpIsNaN, ew(expr{floats: "(unsigned char)($0 != $0)", ints: "(unsigned char)($0 != $0)"})},
		{ops.OpIsInf, ew(expr{floats: "(unsigned char)(fabs$f($0) == loom_inf_$s())", ints: "(unsigned char)($0 != $0)"})},
		{ops.OpIsFinite, ew(expr{floats: "(unsigned char)(fabs$f($0) < loom_inf_$s())", ints: "(unsigned char)($0 == $0)"})},

		// Comparisons give a bool byte.
		{ops.OpEqual, compare("==")},
		{ops.OpNotEqual, compare("!=")},
		{ops.OpLess, compare("<")},
		{ops.OpLessEqual, compare("<=")},
		{ops.OpGreater, compare(">")},
		{ops.OpGreaterEqual, compare(">=")},
		// Logic on bool bytes, bitwise on integers (C's operators, the
		// result converted back from int); the shifts give NumPy's
		// results for counts outside [0, width) in the prelude's helpers
		// (C leaves them undefined).
		{ops.OpAnd, ew(expr{bools: "(unsigned char)($0 & $1)", ints: "($T)($0 & $1)"})},
		{ops.OpOr, ew(expr{bools: "(unsigned char)($0 | $1)", ints: "($T)($0 | $1)"})},
		{ops.OpXor, ew(expr{bools: "(unsigned char)($0 ^ $1)", ints: "($T)($0 ^ $1)"})},
		{ops.OpNot, ew(expr{bools: "(unsigned char)($0 ^ 1)", ints: "($T)(~$0)"})},
		{ops.OpLeftShift, ew(expr{ints: "loom_shl_$s($0, $1)"})},
		{ops.OpRightShift, ew(expr{ints: "loom_shr_$s($0, $1)"})},

		// Selection and conversion.
		{ops.OpWhere, ew(expr{key: 1, bools: where, ints: where, floats: where, complexes: where})},
		{ops.OpStopGradient, ew(expr{bools: "$0", ints: "$0", floats: "$0", storage: "$0", complexes: "$0"})},
		{ops.OpCast, ew(expr{cast: true})}, // castExpr (types.go), for every pair of dtypes

		// The complex numbers' own ops (ops/complex.go): the parts of
		// the prelude's structs, its helpers (complex.go).
		{ops.OpComplex, ew(expr{floats: "loom_complex_$s($0, $1)"})},
		{ops.OpReal, ew(expr{complexes: "$0.re"})},
		{ops.OpImag, ew(expr{complexes: "$0.im"})},
		{ops.OpConj, ew(expr{complexes: "loom_conj_$s($0)"})},
		{ops.OpAngle, ew(expr{complexes: "loom_angle_$s($0)"})},

		// Reductions, alone (reduce.go) and ending a fused group.
		{ops.OpSum, reduce(reduction{sum: true})},
		{ops.OpMax, reduce(reduction{max: true})},
		{ops.OpMin, reduce(reduction{})},
		{ops.OpArgMax, reduce(reduction{max: true, arg: true})},
		{ops.OpArgMin, reduce(reduction{arg: true})},
		{ops.OpProd, reduce(reduction{prod: true})},
		{ops.OpAny, reduce(reduction{any: true})},
		{ops.OpAll, reduce(reduction{all: true})},

		// Scans along an axis and their gradient helpers (scan.go).
		{ops.OpCumsum, scanRow(scanSum)},
		{ops.OpCumprod, scanRow(scanProd)},
		{ops.OpCummax, scanRow(scanMax)},
		{ops.OpLogCumSumExp, scanRow(scanLogSumExp)},
		{ops.OpCumprodGrad, scanRow(scanCumprodGrad)},
		{ops.OpCummaxGrad, scanRow(scanCummaxGrad)},

		// Movement (movement.go): element bits, whatever the dtype.
		{ops.OpReshape, move(copyKernel)},
		{ops.OpCustomGrad, move(copyKernel)},
		{ops.OpTranspose, move((*gen).transpose)},
		{ops.OpBroadcastTo, move((*gen).broadcastTo)},
		{ops.OpSlice, move((*gen).slice)},
		{ops.OpConcat, move((*gen).concat)},
		{ops.OpPad, move((*gen).pad)},
		{ops.OpRepeat, move((*gen).repeat)},
		{ops.OpIota, move((*gen).iota)},
		{ops.OpSumRuns, entry{check: checkSumRuns, gen: func(g *gen, n *graph.Node) error {
			if n.Shape().Size() > 0 {
				g.sumRuns(n)
			}
			return nil
		}}},

		// sorting (issue 14; sort.go)
		{ops.OpSort, sortRow()}, {ops.OpArgSort, sortRow()}, {ops.OpTopK, sortRow()}, {ops.OpSearchSorted, searchSortedRow()},

		// Softmax along an axis (softmax.go).
		{ops.OpSoftmax, normalise(false)},
		{ops.OpLogSoftmax, normalise(true)},

		// The matrix product runs on cuBLAS (exec/cuda's matmul.go).
		{ops.OpMatMul, library(GEMM, "cuBLAS runs float32, float64, complex64 and complex128", tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128)},

		// Linear algebra on cuSOLVER and cuBLAS, with generated kernels
		// around the calls (exec/cuda's linalg.go).
		{ops.OpCholesky, solverRow}, {ops.OpTriangularSolve, solverRow}, {ops.OpSolve, solverRow},
		{ops.OpInv, solverRow}, {ops.OpDet, solverRow}, {ops.OpSLogDet, solverRow},
		{ops.OpQR, solverRow}, {ops.OpEigh, solverRow}, {ops.OpSVD, solverRow}, {ops.OpLstSq, solverRow},

		// The Fourier transforms on cuFFT, with generated transposes and
		// scaling around the plans (exec/cuda's fft.go).
		{ops.OpFFT, fftRow}, {ops.OpRFFT, fftRow}, {ops.OpIRFFT, fftRow},

		// The compiler's fused groups: their ops' templates in one loop,
		// or in a reduction's loop.
		{opdef.OpFused, entry{check: checkFused, gen: genProgram}},

		// random (issue 14)
		{ops.OpRandomBits, randomRow}, {ops.OpRandomUniform, randomRow}, {ops.OpRandomNormal, randomRow}, {ops.OpRandomBernoulli, randomRow},
		// indexing (issue 14): index.go
		{ops.OpGather, indexing()},
		{ops.OpTakeAlongAxis, indexing()},
		{ops.OpScatter, indexing()},
		{ops.OpScatterAdd, indexing()},
		{ops.OpIndexAdd, indexing()},
		// pooling (issue 15): pool.go
		{ops.OpMaxPool, poolRow()}, {ops.OpMaxPoolGrad, poolRow()}, {ops.OpMaxPoolSelect, poolRow()},
		{ops.OpAvgPool, poolRow()}, {ops.OpAvgPoolGrad, poolRow()},
		// convolutions (issue 15): conv.go
		{ops.OpConv, convRow()},
		{ops.OpConvTranspose, convRow()},
		{ops.OpConvFilterGrad, convRow()},
		// control flow (issue 22): the backend runs the bodies (exec/cuda's
		// control.go); a TupleGet that is not a view is a device copy.
		{ops.OpCond, controlRow}, {ops.OpWhile, controlRow}, {ops.OpScan, controlRow}, {ops.OpTupleGet, controlRow},
		// collectives (issue 18): the backend calls the communicator on
		// staging copies in host memory.
		{ops.OpAllReduce, collectiveRow}, {ops.OpAllGather, collectiveRow}, {ops.OpReduceScatter, collectiveRow},
		{ops.OpBroadcast, collectiveRow}, {ops.OpReduce, collectiveRow},
	}
}

// collectiveRow is the row of the collective ops: every dtype their rules
// admit, run by the communicator on the host.
var collectiveRow = entry{
	lib:   Collective,
	check: func(*graph.Node) error { return nil },
	gen: func(g *gen, n *graph.Node) error {
		return fmt.Errorf("%v runs on %v, not on a generated kernel", n.Op(), Collective)
	},
}

// controlRow is the row of Cond, While, Scan and TupleGet: the backend
// runs them (their bodies are programs of their own), in every dtype.
var controlRow = entry{
	lib:   Control,
	check: func(*graph.Node) error { return nil },
	gen: func(g *gen, n *graph.Node) error {
		return fmt.Errorf("%v runs on %v, not on a generated kernel", n.Op(), Control)
	},
}

// solverRow is the row of the linear-algebra ops: cuSOLVER and cuBLAS in
// float and double.
var solverRow = library(Solver, "cuSOLVER runs float32 and float64", tensor.Float32, tensor.Float64)

// fftRow is the row of the Fourier transforms: cuFFT's single and double
// precision (the result is complex, or real for IRFFT).
var fftRow = library(FFT, "cuFFT runs complex64 and complex128", tensor.Complex64, tensor.Complex128, tensor.Float32, tensor.Float64)

// randomRow is the row of the random ops (random.go).
var randomRow = entry{check: checkRandom, gen: func(g *gen, n *graph.Node) error {
	if n.Shape().Size() > 0 {
		g.random(n)
	}
	return nil
}}

// row is one line of the table.
type row struct {
	op graph.Op
	e  entry
}

// entry is how one op is computed.
type entry struct {
	expr *expr      // elementwise ops: the C expression
	red  *reduction // reductions: the arithmetic (also of a fused group's trailing reduction)
	lib  Library    // ops the backend runs as a library call (not Generated)
	// check says whether the kernel handles node n (beyond the op's own
	// rules, which n passed); gen generates it. Generate calls check
	// first.
	check func(n *graph.Node) error
	gen   func(g *gen, n *graph.Node) error
}

// table is rows by op code.
var table map[graph.Op]*entry

func init() {
	table = map[graph.Op]*entry{}
	for _, r := range rows() {
		if table[r.op] != nil {
			panic(fmt.Sprintf("cudagen: %v has two rows", r.op))
		}
		e := r.e
		table[r.op] = &e
	}
}

// lookup returns op's row, or an error naming the op.
func lookup(op graph.Op) (*entry, error) {
	if e := table[op]; e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("no CUDA kernel for %v (no row in cudagen's table)", op)
}

// Library says how the backend runs a node.
type Library uint8

const (
	// Generated: a kernel of Generate.
	Generated Library = iota
	// GEMM: cuBLAS's matrix product (MatMul; see exec/cuda's matmul.go).
	GEMM
	// Solver: the linear-algebra ops on cuSOLVER and cuBLAS (exec/cuda's
	// linalg.go).
	Solver
	// FFT: the Fourier transforms on cuFFT (exec/cuda's fft.go).
	FFT
	// Control: Cond, While and Scan, whose bodies the backend runs as
	// nested programs, and TupleGet, a copy out of their tuple (exec/cuda's
	// control.go).
	Control
	// Collective: AllReduce, AllGather, ReduceScatter, Broadcast and
	// Reduce, which the backend runs on the host with the program's
	// communicator (exec/cuda's collective.go).
	Collective
)

func (l Library) String() string {
	switch l {
	case Generated:
		return "generated"
	case GEMM:
		return "cuBLAS GEMM"
	case Solver:
		return "cuSOLVER"
	case FFT:
		return "cuFFT"
	case Control:
		return "the backend's control flow"
	case Collective:
		return "the program's communicator"
	}
	return fmt.Sprintf("library(%d)", uint8(l))
}

// LibraryOf returns how the backend runs n: Generated (call Generate) or
// the library call that computes it. n must pass Supports.
func LibraryOf(n *graph.Node) Library {
	if e := table[n.Op()]; e != nil {
		return e.lib
	}
	return Generated
}

// expr is the C-expression template of an elementwise op: a variant per
// class of the key operand's dtype ("" where the op has none), with
// placeholders filled by render. Variants differ only where semantics do
// (integer wrapping and floor division, NaN rules); the dtypes within a
// class differ only through the C type mapping (cInfos, types.go).
//
//	$0 $1 $2  the operands (variable names, so no parentheses are needed)
//	$*        every operand, separated by ", "
//	$s        the key dtype's helper suffix: loom_max_$s is loom_max_f32
//	$f        the key dtype's math-library suffix: exp$f is expf, exp
//	$T        the result's C type
//	$z        the result's zero literal
type expr struct {
	bools, ints, floats, storage, complexes string
	// key is the operand whose dtype picks the variant (Where's is 1,
	// its first value; the others' 0).
	key int
	// cast: the expression converts operand 0 to the result's dtype
	// (castExpr), for every pair of dtypes with a C type.
	cast bool
}

// ew is the row of an elementwise op with template x.
func ew(x expr) entry { return entry{expr: &x, check: checkProgram, gen: genProgram} }

// mathFn is a float function of the C math library by its double name:
// mathFn("tanh") renders tanhf(x) for float32 and tanh(x) for float64
// (and atan2f(y, x) for a two-operand op).
func mathFn(name string) entry { return ew(expr{floats: name + "$f($*)"}) }

// mathOrComplex is mathFn with the prelude's complex function of the
// same name: mathOrComplex("exp") renders loom_exp_c64(z) for complex64.
func mathOrComplex(name string) entry {
	return ew(expr{floats: name + "$f($*)", complexes: "loom_" + name + "_$s($*)"})
}

// floatHelper is a float function of the prelude: loom_sigmoid renders
// loom_sigmoid_f32(x) and loom_sigmoid_f64(x).
func floatHelper(name string) entry { return ew(expr{floats: name + "_$s($*)"}) }

// helper is a function of the prelude for floats and integers: loom_pow
// renders loom_pow_f32 ... loom_pow_i64.
func helper(name string) entry { return ew(expr{floats: name + "_$s($*)", ints: name + "_$s($*)"}) }

// compare is a C comparison of two operands of one dtype, as a bool byte
// (complex numbers have == and != only: the prelude's operators).
func compare(sym string) entry {
	c := "(unsigned char)($0 " + sym + " $1)"
	x := expr{bools: c, ints: c, floats: c}
	if sym == "==" || sym == "!=" {
		x.complexes = c
	}
	return ew(x)
}

// variant is the template for a key dtype of class c.
func (x *expr) variant(c class) string {
	switch c {
	case boolClass:
		return x.bools
	case intClass:
		return x.ints
	case floatClass:
		return x.floats
	case storageClass:
		return x.storage
	case complexClass:
		return x.complexes
	}
	return ""
}

// render returns the expression of the template applied to the operand
// expressions args of dtypes dts, with a result of dtype out.
func (x *expr) render(dts []tensor.DType, out tensor.DType, args []string) (string, error) {
	if cType(out) == "" {
		return "", fmt.Errorf("no C type for the result dtype %v", out)
	}
	for _, dt := range dts {
		if cType(dt) == "" {
			return "", fmt.Errorf("no C type for the operand dtype %v", dt)
		}
	}
	if x.cast {
		if len(args) != 1 {
			return "", fmt.Errorf("a conversion of %d operands", len(args))
		}
		return castExpr(dts[0], out, args[0]), nil
	}
	if x.key >= len(dts) {
		return "", fmt.Errorf("no operand %d to pick the variant by", x.key)
	}
	key := cInfos[dts[x.key]]
	t := x.variant(key.class)
	if t == "" {
		return "", fmt.Errorf("no variant for %v", dts[x.key])
	}
	subst := []string{"$*", strings.Join(args, ", "), "$s", key.sfx, "$f", key.math, "$T", cType(out), "$z", zeroOf(cType(out))}
	for k, a := range args {
		subst = append(subst, fmt.Sprintf("$%d", k), a)
	}
	s := strings.NewReplacer(subst...).Replace(t)
	if strings.Contains(s, "$") {
		return "", fmt.Errorf("template %q leaves a placeholder for %d operands", t, len(args))
	}
	return s, nil
}

// opExpr returns the C expression of one elementwise op (of a fused
// group, or a node's own) applied to the operand expressions args of
// dtypes dts, or an error naming the op and the dtypes when its row has
// none.
func opExpr(o opdef.FusedOp, dts []tensor.DType, args []string) (string, error) {
	e, err := lookup(o.Op)
	if err != nil {
		return "", err
	}
	if e.expr == nil {
		return "", fmt.Errorf("%v is not elementwise", o.Op)
	}
	if d := opdef.Lookup(o.Op); d == nil || (d.Arity >= 0 && d.Arity != len(args)) || len(dts) != len(args) {
		return "", fmt.Errorf("%v of %d operands", o.Op, len(args))
	}
	s, err := e.expr.render(dts, o.DType, args)
	if err != nil {
		return "", fmt.Errorf("no expression for %v of %v: %v", o.Op, dts, err)
	}
	return s, nil
}

// checkProgram and genProgram are the rows of elementwise ops: a
// program of one op.
func checkProgram(n *graph.Node) error {
	_, err := programOf(n)
	return err
}

func genProgram(g *gen, n *graph.Node) error {
	p, err := programOf(n)
	if err != nil {
		return err
	}
	return g.program(p, n)
}

// checkFused checks a Fused node's program and its trailing reduction.
func checkFused(n *graph.Node) error {
	p, err := programOf(n)
	if err != nil {
		return err
	}
	if p.reduce == nil {
		return nil
	}
	r, err := reductionOf(p.reduce.Op)
	if err != nil {
		return err
	}
	return reduceSupportedBy(r, p.outDType())
}

// reduce is the row of a reduction op.
func reduce(r reduction) entry {
	return entry{
		red:   &r,
		check: func(n *graph.Node) error { return reduceSupportedBy(r, n.Input(0).DType()) },
		gen:   (*gen).reduction,
	}
}

// reductionOf returns the arithmetic of reduction op.
func reductionOf(op graph.Op) (reduction, error) {
	e, err := lookup(op)
	if err != nil {
		return reduction{}, err
	}
	if e.red == nil {
		return reduction{}, fmt.Errorf("%v is not a reduction", op)
	}
	return *e.red, nil
}

// move is the row of a movement op: f generates its non-empty result.
func move(f func(g *gen, n *graph.Node)) entry {
	return entry{
		check: func(n *graph.Node) error {
			for _, in := range append(n.Inputs(), n) {
				if bitsType(in.DType()) == "" {
					return fmt.Errorf("no storage type for %v", in.DType())
				}
			}
			return nil
		},
		gen: func(g *gen, n *graph.Node) error {
			if n.Shape().Size() > 0 {
				f(g, n)
			}
			return nil
		},
	}
}

// normalise is the row of Softmax (log false) or LogSoftmax (log true).
func normalise(log bool) entry {
	return entry{
		check: func(n *graph.Node) error {
			if cInfos[n.DType()].class != floatClass {
				return fmt.Errorf("needs float32 or float64")
			}
			return nil
		},
		gen: func(g *gen, n *graph.Node) error { return g.softmax(n, log) },
	}
}

// library is the row of an op that the backend runs as library call lib,
// in the result dtypes dts (why names the limit in errors).
func library(lib Library, why string, dts ...tensor.DType) entry {
	return entry{
		lib: lib,
		check: func(n *graph.Node) error {
			for _, dt := range dts {
				if n.DType() == dt {
					return nil
				}
			}
			return fmt.Errorf("%s", why)
		},
		gen: func(g *gen, n *graph.Node) error {
			return fmt.Errorf("%v runs on %v, not on a generated kernel", n.Op(), lib)
		},
	}
}

package cudagen

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Cases of this package on top of the conformance suite: special values
// (compared bit for bit with the CPU when the name starts with "exact/"),
// shapes that select each reduction strategy, every dtype of the
// movement kernels, and fused groups.

var (
	nan  = math.NaN()
	inf  = math.Inf(1)
	negZ = math.Copysign(0, -1)
)

func oneCase(name string, ts []*tensor.Tensor, f func(ns []*graph.Node) []*graph.Node) exectest.Case {
	return exectest.Case{Name: name, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		ns, feeds := exectest.Inputs(g, ts...)
		return f(ns), feeds
	}}
}

// specials are float values that exercise casts and NaN rules.
var specials = []float64{nan, inf, -inf, 0, negZ, 0.5, -0.5, 1.5, 2.5, -2.5, 3e9, -3e9, 1e19, -1e19,
	65504, 65520, 1e-8, 6e-8, 3e-8, 1e-40, 2147483647.5, -2147483648.7, 123456.789, 3.4e38, 1, -1, 7, -7}

// randParts is exectest.Rand, with random imaginary parts too for a
// complex dtype.
func randParts(dt tensor.DType, shape tensor.Shape, lo, hi float64, seed uint64) *tensor.Tensor {
	if !dt.IsComplex() {
		return exectest.Rand(dt, shape, lo, hi, seed)
	}
	re := exectest.Rand(tensor.Float64, shape, lo, hi, seed)
	im := exectest.Rand(tensor.Float64, shape, lo, hi, seed+1000)
	z := make([]complex128, shape.Size())
	for i := range z {
		z[i] = complex(re.Float64(i), im.Float64(i))
	}
	t, err := tensor.FromComplex128s(dt, z, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// castAdmits reports whether Cast's declaration converts from to to.
func castAdmits(from, to tensor.DType) bool {
	_, err := opdef.Lookup(ops.OpCast).DType([]tensor.DType{from}, opdef.CastAttr{To: to})
	return err == nil
}

func extraCases() []exectest.Case {
	var cs []exectest.Case
	all := tensor.DTypes()
	floats := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Float16, tensor.BFloat16}
	// Casts of special values between every pair.
	for _, from := range floats {
		for _, to := range all {
			if from == to || !castAdmits(from, to) {
				continue
			}
			cs = append(cs, oneCase(fmt.Sprintf("exact/Cast/%s-%s", from.Short(), to.Short()),
				[]*tensor.Tensor{exectest.Tensor(from, specials)},
				func(ns []*graph.Node) []*graph.Node { return []*graph.Node{ops.Cast(ns[0], to)} }))
		}
	}
	ints := []float64{0, 1, -1, 2147483647, -2147483648, 1 << 40, -(1 << 40) - 3, 1<<53 + 1, 16777217, 65519, 65520, 70000, -70000, 3, 255}
	for _, to := range all {
		if to != tensor.Int64 && castAdmits(tensor.Int64, to) {
			cs = append(cs, oneCase("exact/Cast/i64-"+to.Short(), []*tensor.Tensor{exectest.Tensor(tensor.Int64, ints)},
				func(ns []*graph.Node) []*graph.Node { return []*graph.Node{ops.Cast(ns[0], to)} }))
		}
	}
	// Complex special values (zeros of both signs, infinities, NaN, huge
	// and tiny parts) through the prelude's arithmetic, against the CPU
	// (Go's complex arithmetic) bit for bit: products, Smith's division
	// with Annex G's recovery, parts, comparisons and every cast; and the
	// functions (the C library against Go's math) to the tolerance.
	cparts := []float64{0, negZ, 1, -2.5, 1e-310, 3e300, -7e307, inf, -inf, nan}
	var zs []complex128
	for _, re := range cparts {
		for _, im := range cparts {
			zs = append(zs, complex(re, im))
		}
	}
	ws := make([]complex128, len(zs)) // zs against different partners
	for i := range zs {
		ws[i] = zs[(i*37+11)%len(zs)]
	}
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		z, w := exectest.ComplexTensor(dt, zs, len(zs)), exectest.ComplexTensor(dt, ws, len(ws))
		cs = append(cs, oneCase("exact/complex/arith/"+dt.Short(), []*tensor.Tensor{z, w}, func(ns []*graph.Node) []*graph.Node {
			a, b := ns[0], ns[1]
			return []*graph.Node{ops.Mul(a, b), ops.Div(a, b), ops.Div(b, a), ops.Add(a, b), ops.Sub(a, b), ops.Neg(a),
				ops.Conj(a), ops.Real(a), ops.Imag(a), ops.Equal(a, b), ops.NotEqual(a, a), ops.Complex(ops.Imag(a), ops.Real(b))}
		}))
		for _, to := range all {
			if to != dt && castAdmits(dt, to) {
				cs = append(cs, oneCase(fmt.Sprintf("exact/Cast/%s-%s", dt.Short(), to.Short()), []*tensor.Tensor{z},
					func(ns []*graph.Node) []*graph.Node { return []*graph.Node{ops.Cast(ns[0], to)} }))
			}
		}
		// (Without the subnormal part: Go's math.Log (amd64) and
		// cmplx.Sqrt lose precision there, where the device is right; the
		// prelude's test checks those against Python.)
		var normal []complex128
		for _, v := range zs {
			if math.Abs(real(v)) != 1e-310 && math.Abs(imag(v)) != 1e-310 {
				normal = append(normal, v)
			}
		}
		zn := exectest.ComplexTensor(dt, normal, len(normal))
		cs = append(cs, oneCase("complex/funcs/"+dt.Short(), []*tensor.Tensor{zn}, func(ns []*graph.Node) []*graph.Node {
			a := ns[0]
			return []*graph.Node{ops.Exp(a), ops.Log(a), ops.Sqrt(a), ops.Abs(a), ops.Angle(a)}
		}))
	}
	// Shifts and bitwise ops of every integer dtype, with counts in and
	// outside [0, width) (negative ones included), against the CPU exactly.
	for _, dt := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8} {
		x := exectest.Tensor(dt, []float64{1, -1, -128, 127, 100, -5, 7, 3, 64, -32768, 255, 200, 2147483647, -2147483648, 0, 5, -3, 1})
		c := exectest.Tensor(dt, []float64{3, 4, 1, 7, 8, -1, 9, 15, 16, 31, 32, 33, 63, 64, 65, 100, -100, 0})
		cs = append(cs, oneCase("exact/Bitwise/"+dt.Short(), []*tensor.Tensor{x, c}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.LeftShift(ns[0], ns[1]), ops.RightShift(ns[0], ns[1]), ops.And(ns[0], ns[1]),
				ops.Or(ns[0], ns[1]), ops.Xor(ns[0], ns[1]), ops.Not(ns[0])}
		}))
	}
	// Integer division and power.
	for _, dt := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8} {
		x := exectest.Tensor(dt, []float64{-7, 7, -7, 7, 0, -2147483648, 5, -1, 3, -3, 9, -9, 2, -2, 1, -1, 0, 3})
		y := exectest.Tensor(dt, []float64{2, -2, -2, 2, 0, -1, 0, -3, -1, 5, 3, 3, -1, -3, -5, -4, -2, 0})
		lo, _ := dt.IntRange()
		cs = append(cs, oneCase("exact/Div-Pow/"+dt.Short(), []*tensor.Tensor{x, y}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Div(ns[0], ns[1]), ops.Pow(ops.Maximum(ops.Minimum(ns[0], ops.Scalar(ns[0], 3)), ops.Scalar(ns[0], float64(max(-3, lo)))), ns[1]),
				ops.Neg(ns[0]), ops.Abs(ns[0]), ops.Sign(ns[0]), ops.Relu(ns[0]), ops.Sub(ns[0], ns[1]), ops.Mul(ns[0], ns[1])}
		}))
	}
	// Float NaN, infinity and signed-zero rules.
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		a := exectest.Tensor(dt, []float64{nan, 1, nan, 0, negZ, negZ, 0, -inf, inf, 3, -100, 100, 1000, -1000, 0.25})
		b := exectest.Tensor(dt, []float64{1, nan, nan, negZ, 0, negZ, 0, inf, -inf, 3, 2, -2, 0.5, 3, -0.5})
		cs = append(cs, oneCase("exact/NaN/"+dt.Short(), []*tensor.Tensor{a, b}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Maximum(ns[0], ns[1]), ops.Minimum(ns[0], ns[1]), ops.Relu(ns[0]), ops.Sign(ns[0]), ops.Neg(ns[0]),
				ops.Abs(ns[0]), ops.Less(ns[0], ns[1]), ops.Equal(ns[0], ns[1]), ops.NotEqual(ns[0], ns[1]), ops.GreaterEqual(ns[0], ns[1]),
				ops.Add(ns[0], ns[1]), ops.Div(ns[0], ns[1])}
		}))
		cs = append(cs, oneCase("NaN-transcendental/"+dt.Short(), []*tensor.Tensor{a, b}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sigmoid(ns[0]), ops.Tanh(ns[0]), ops.Exp(ns[0]), ops.Log(ns[0]), ops.Sqrt(ns[0]), ops.Pow(ns[0], ns[1]), ops.Sin(ns[1]), ops.Cos(ns[1])}
		}))
	}
	// The Array API's math (ops/math.go) on special values: rounding,
	// remainders and classification bit for bit (signed zeros included),
	// the functions within the tolerance.
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		a := exectest.Tensor(dt, []float64{nan, 1, nan, 0, negZ, negZ, 0, -inf, inf, 3, -100, 100, 1000, -1000, 0.25, -2.5, 2.5, -0.5, 7.5, -7.5, 6, -6, 1, -1})
		b := exectest.Tensor(dt, []float64{1, nan, nan, negZ, 0, negZ, 0, inf, -inf, 3, 2, -2, 0.5, 3, -0.5, 2, -2, 3, -2, 2, -3, 3, -inf, inf})
		cs = append(cs, oneCase("exact/Math-special/"+dt.Short(), []*tensor.Tensor{a, b}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Floor(ns[0]), ops.Ceil(ns[0]), ops.Round(ns[0]), ops.Trunc(ns[0]),
				ops.Remainder(ns[0], ns[1]), ops.Fmod(ns[0], ns[1]), ops.FloorDiv(ns[0], ns[1]), ops.Reciprocal(ns[1]),
				ops.IsNaN(ns[0]), ops.IsInf(ns[0]), ops.IsFinite(ns[0])}
		}))
		cs = append(cs, oneCase("Math-transcendental/"+dt.Short(), []*tensor.Tensor{a, b}, func(ns []*graph.Node) []*graph.Node {
			var out []*graph.Node
			for _, f := range []func(*graph.Node) *graph.Node{ops.Log1p, ops.Expm1, ops.Log2, ops.Log10, ops.Rsqrt, ops.Tan, ops.Asin, ops.Acos, ops.Atan,
				ops.Sinh, ops.Cosh, ops.Asinh, ops.Acosh, ops.Atanh, ops.Erf, ops.Erfc, ops.Lgamma, ops.Digamma, ops.Trigamma,
				ops.Softplus, ops.Gelu, ops.GeluTanh, ops.Silu} {
				out = append(out, f(ns[0]))
			}
			return append(out, ops.Atan2(ns[0], ns[1]))
		}))
	}
	for _, dt := range []tensor.DType{tensor.Int32, tensor.Int64} {
		x := exectest.Tensor(dt, []float64{-7, 7, -7, 7, 0, -2147483648, 5, -1, 3, -3, 9, -9, 2, -2, 1, -1, 0, 3})
		y := exectest.Tensor(dt, []float64{2, -2, -2, 2, 0, -1, 0, -3, -1, 5, 3, 3, -1, -3, -5, -4, -2, 0})
		cs = append(cs, oneCase("exact/Math-int/"+dt.Short(), []*tensor.Tensor{x, y}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Remainder(ns[0], ns[1]), ops.Fmod(ns[0], ns[1]), ops.FloorDiv(ns[0], ns[1]),
				ops.Floor(ns[0]), ops.Round(ns[1]), ops.IsNaN(ns[0]), ops.IsInf(ns[0]), ops.IsFinite(ns[0])}
		}))
	}
	// Reductions: special values, ties, every strategy.
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		x := exectest.Tensor(dt, []float64{1, nan, 3, 3, -inf, -inf, -inf, -inf, 2, 5, 5, nan, nan, 0, negZ, 7, 7, 7, 1, 2, 3, 4, 5, 6}, 6, 4)
		cs = append(cs, oneCase("exact/Reduce-special/"+dt.Short(), []*tensor.Tensor{x}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Max(ns[0], 1), ops.Min(ns[0], 1), ops.ArgMax(ns[0], 1), ops.ArgMin(ns[0], 1),
				ops.Max(ns[0], 0), ops.ArgMax(ns[0], 0), ops.ArgMin(ns[0]), ops.ArgMax(ns[0]), ops.Max(ns[0])}
		}))
	}
	shapes := []struct {
		shape tensor.Shape
		axes  []int
	}{
		{tensor.Shape{50, 10}, []int{1}},           // short rows: thread per output
		{tensor.Shape{6, 1000}, []int{1}},          // rows: a block per row
		{tensor.Shape{3, 70001}, []int{1}},         // long rows: two passes
		{tensor.Shape{1003, 7}, []int{0}},          // columns: two passes
		{tensor.Shape{40, 600}, []int{0}},          // columns: thread per output
		{tensor.Shape{300, 70}, nil},               // everything
		{tensor.Shape{4, 5, 6, 7}, []int{0, 2}},    // outer axes
		{tensor.Shape{4, 5, 6, 7}, []int{1, 3}},    // alternating
		{tensor.Shape{3, 40, 2, 50}, []int{1, 3}},  // alternating, longer
		{tensor.Shape{5, 1, 3}, []int{1}},          // a size-1 axis
		{tensor.Shape{2, 3000, 5}, []int{1}},       // middle axis, long
		{tensor.Shape{17, 33, 65}, []int{0, 1, 2}}, // odd sizes
	}
	for si, s := range shapes {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64} {
			if s.shape.Size() > 20000 && (dt == tensor.Float64 || dt == tensor.Int32) {
				continue // the long ones in two dtypes
			}
			lo, hi := -1.0, 1.0
			if dt.IsInt() {
				lo, hi = -3, 4
			}
			x := exectest.Rand(dt, s.shape, lo, hi, uint64(100+si))
			cs = append(cs, oneCase(fmt.Sprintf("Reduce/%v%v/%s", s.shape, s.axes, dt.Short()), []*tensor.Tensor{x}, func(ns []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sum(ns[0], s.axes...), ops.MaxKeepDims(ns[0], s.axes...), ops.Min(ns[0], s.axes...),
					ops.ArgMax(ns[0], s.axes...), ops.ArgMin(ns[0], s.axes...)}
			}))
		}
	}
	// Complex sums and products (accumulated in complex128) in each
	// strategy: complex64 in the short, two-pass and alternating shapes,
	// complex128 in the others; products over short extents (values near
	// the unit circle, so that they neither vanish nor overflow).
	for si, s := range shapes {
		dt := tensor.Complex128
		if si%2 == 0 {
			dt = tensor.Complex64
		}
		x := exectest.RandComplex(dt, s.shape, -1, 1, uint64(300+si))
		cs = append(cs, oneCase(fmt.Sprintf("Reduce/%v%v/%s", s.shape, s.axes, dt.Short()), []*tensor.Tensor{x}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sum(ns[0], s.axes...), ops.Mean(ns[0], s.axes...)}
		}))
	}
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		z := exectest.RandComplex(dt, tensor.Shape{40, 12}, -1, 1, 400)
		cs = append(cs, oneCase("Reduce-prod/"+dt.Short(), []*tensor.Tensor{z}, func(ns []*graph.Node) []*graph.Node {
			unit := ops.Div(ns[0], ops.Cast(ops.Abs(ns[0]), dt))
			return []*graph.Node{ops.Prod(unit, 1), ops.Prod(unit, 0), ops.Prod(ops.Slice(ns[0], ops.R(0, 4)), 1)}
		}))
	}
	// Integer sums wrap.
	big := exectest.Rand(tensor.Int32, tensor.Shape{3, 50}, 1e9, 2e9, 7)
	cs = append(cs, oneCase("exact/Sum-wrap/i32", []*tensor.Tensor{big}, func(ns []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sum(ns[0], 1), ops.Sum(ns[0])}
	}))
	// Sums over nothing.
	cs = append(cs, oneCase("Sum-empty", []*tensor.Tensor{exectest.Rand(tensor.Float32, tensor.Shape{0, 4}, 0, 1, 1), exectest.Rand(tensor.Int64, tensor.Shape{4, 0}, 0, 1, 1)},
		func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sum(ns[0], 0), ops.SumKeepDims(ns[1], 1), ops.Sum(ns[0], 1)}
		}))
	// Movement in every dtype.
	for _, dt := range all {
		x := randParts(dt, tensor.Shape{3, 70, 50}, -50, 50, 9)
		y := randParts(dt, tensor.Shape{5, 40, 36}, -50, 50, 10)
		z := randParts(dt, tensor.Shape{40, 50, 3}, -50, 50, 11)
		w := randParts(dt, tensor.Shape{3, 1, 4}, -50, 50, 12)
		cs = append(cs, oneCase("exact/Movement/"+dt.Short(), []*tensor.Tensor{x, y, z, w}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{
				ops.Transpose(ns[0], 2, 1, 0), ops.Transpose(ns[0], 1, 0, 2), ops.Transpose(ns[1], 0, 2, 1), ops.Transpose(ns[2], 1, 0, 2),
				ops.Transpose(ns[0], 1, 2, 0), ops.BroadcastTo(ns[3], 2, 3, 5, 4),
				ops.Slice(ns[0], ops.RS(0, 3, 2), ops.RS(5, 60, 7), ops.R(-10, ops.End)),
				ops.Concat(1, ns[0], ops.Slice(ns[0], ops.All, ops.R(0, 0)), ops.Slice(ns[0], ops.All, ops.R(3, 9))),
				ops.Concat(0, ns[3], ns[3], ns[3]),
				ops.Pad(ns[3], ops.PadWidth{Low: 2, High: 1, Interior: 3}, ops.PadWidth{Low: 1}, ops.PadWidth{Interior: 2, High: 2}),
				ops.Pad(ops.Slice(ns[3], ops.R(0, 0)), ops.PadWidth{Low: 1}),
				ops.Reshape(ns[0], 70, 150),
			}
		}))
	}
	// Softmax with special values and each layout.
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		sp := exectest.Tensor(dt, []float64{1, 2, nan, 4, -inf, -inf, -inf, -inf, 1, inf, 3, 4, -inf, 0, 1, 2, 5, 5, 5, 5}, 5, 4)
		cs = append(cs, oneCase("Softmax-special/"+dt.Short(), []*tensor.Tensor{sp}, func(ns []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Softmax(ns[0], 1), ops.LogSoftmax(ns[0], 1)}
		}))
		for si, s := range []struct {
			shape tensor.Shape
			axis  int
		}{{tensor.Shape{3, 5000}, 1}, {tensor.Shape{3000, 4}, 0}, {tensor.Shape{20, 30, 40}, 1}, {tensor.Shape{600, 3}, 1}, {tensor.Shape{4, 1}, 1}, {tensor.Shape{300, 700}, 0}} {
			x := exectest.Rand(dt, s.shape, -8, 8, uint64(200+si))
			cs = append(cs, oneCase(fmt.Sprintf("Softmax/%v/%d/%s", s.shape, s.axis, dt.Short()), []*tensor.Tensor{x}, func(ns []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Softmax(ns[0], s.axis), ops.LogSoftmax(ns[0], s.axis)}
			}))
		}
	}
	// Fused groups (the opt mode fuses them).
	x := exectest.Rand(tensor.Float32, tensor.Shape{64, 300}, -2, 2, 13)
	w := exectest.Rand(tensor.Float32, tensor.Shape{300}, -2, 2, 14)
	col := exectest.Rand(tensor.Float32, tensor.Shape{64, 1}, -2, 2, 15)
	h := exectest.Rand(tensor.Float16, tensor.Shape{64, 300}, -2, 2, 16)
	cs = append(cs, oneCase("Fused/chains", []*tensor.Tensor{x, w, col, h}, func(ns []*graph.Node) []*graph.Node {
		a := ops.Exp(ops.Mul(ops.Add(ns[0], ns[1]), ns[2]))
		leaky := ops.Where(ops.Greater(ns[0], ops.Scalar(ns[0], 0)), ns[0], ops.Mul(ns[0], ops.Scalar(ns[0], 0.1)))
		half := ops.Cast(ops.Tanh(ops.Mul(ops.Cast(ns[3], tensor.Float32), ns[1])), tensor.Float16)
		return []*graph.Node{
			ops.Sum(ops.Mul(a, ns[2]), 1),
			ops.Sum(ops.Sub(ns[0], ns[1]), 0),
			ops.Max(ops.Sigmoid(ops.Neg(ns[0]))),
			ops.MinKeepDims(ops.Sqrt(ops.Abs(ns[0])), 1),
			ops.Add(leaky, ns[1]),
			half,
			ops.Sum(ops.Cast(ops.Greater(ns[0], ns[1]), tensor.Int32), 1),
		}
	}))
	long := exectest.Rand(tensor.Float64, tensor.Shape{2, 40000}, -1, 1, 17)
	cs = append(cs, oneCase("Fused/long", []*tensor.Tensor{long}, func(ns []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sum(ops.Mul(ns[0], ns[0]), 1), ops.Sum(ops.Exp(ns[0])), ops.Max(ops.Abs(ns[0]), 0)}
	}))
	return cs
}

// fuseGraph builds the Fused node of the elementwise subgraph under root
// (and root's reduction, when root is a Sum, Max or Min): its leaves
// become the operands, as the compiler's fusion pass would make them.
func fuseGraph(root *graph.Node) *graph.Node {
	attr := &opdef.FusedAttr{}
	top := root
	switch root.Op() {
	case ops.OpSum, ops.OpMax, ops.OpMin:
		a := root.Attr().(opdef.AxesAttr)
		attr.Reduce = &opdef.FusedReduce{Op: root.Op(), Axes: a.Axes, KeepDims: a.KeepDims}
		top = root.Input(0)
	}
	attr.Domain = top.Shape()
	var operands []*graph.Node
	index := map[*graph.Node]int{}
	var visit func(n *graph.Node) int
	visit = func(n *graph.Node) int {
		if i, ok := index[n]; ok {
			return i
		}
		if n.Op().IsLeaf() {
			operands = append(operands, n)
			index[n] = -len(operands)
			return index[n]
		}
		args := make([]int, len(n.Inputs()))
		for k, in := range n.Inputs() {
			args[k] = visit(in)
		}
		attr.Ops = append(attr.Ops, opdef.FusedOp{Op: n.Op(), Attr: n.Attr(), Args: args, DType: n.DType()})
		index[n] = len(attr.Ops) - 1
		return index[n]
	}
	visit(top)
	return opdef.Fused(attr, operands...)
}

// fusedCases are fused groups the CPU does not run (reductions over any
// axes, storage types): the reference is the unfused graph.
func fusedCases() []exectest.Case {
	var cs []exectest.Case
	x := exectest.Rand(tensor.Float32, tensor.Shape{4, 5, 6}, -2, 2, 21)
	y := exectest.Rand(tensor.Float32, tensor.Shape{5, 1}, -2, 2, 22)
	m := exectest.Rand(tensor.Float64, tensor.Shape{3, 4000, 5}, -1, 1, 23)
	h := exectest.Rand(tensor.Float16, tensor.Shape{7, 9}, -4, 4, 24)
	b := exectest.Rand(tensor.BFloat16, tensor.Shape{9}, -4, 4, 25)
	i := exectest.Rand(tensor.Int32, tensor.Shape{30, 40}, -100, 100, 26)
	e := exectest.Rand(tensor.Float32, tensor.Shape{0, 5}, -1, 1, 27)
	cs = append(cs, oneCase("direct/Fused", []*tensor.Tensor{x, y, m, h, b, i, e}, func(ns []*graph.Node) []*graph.Node {
		xy := ops.Mul(ops.Exp(ns[0]), ns[1])
		hb := ops.Add(ops.Cast(ns[3], tensor.Float32), ops.Cast(ns[4], tensor.Float32))
		return []*graph.Node{
			ops.Sum(xy, 0, 2), ops.MaxKeepDims(xy, 0, 2), ops.Min(xy, 1), ops.Sum(xy),
			ops.Sum(ops.Tanh(ns[2]), 1), ops.MaxKeepDims(ops.Mul(ns[2], ops.Scalar(ns[2], -3)), 0, 2),
			ops.Cast(ops.Sigmoid(hb), tensor.BFloat16),
			ops.Cast(ops.Mul(hb, ops.Scalar(hb, 0.5)), tensor.Float16),
			ops.Where(ops.Less(hb, ops.Scalar(hb, 0)), ops.Cast(ns[3], tensor.Float32), hb),
			ops.Sum(ops.Cast(ops.Div(ns[5], ops.Scalar(ns[5], 7)), tensor.Int64), 0),
			ops.Max(ops.Mul(ns[5], ns[5]), 1),
			ops.Sum(ops.Exp(ns[6]), 0), ops.Sum(ops.Exp(ns[6]), 1),
			ops.Not(ops.Equal(ops.Relu(ns[5]), ops.Scalar(ns[5], 0))),
		}
	}))
	return cs
}

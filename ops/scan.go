package ops

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The reductions with an identity beyond Sum (Prod, Any, All), the
// statistics built on Sum (Var, Std), and the scans along one axis
// (Cumsum, Cumprod, Cummax, LogCumSumExp) with the two helper primitives
// their gradients need (CumprodGrad, CummaxGrad).

// Op codes of the product and logical reductions.
var OpProd, OpAny, OpAll graph.Op

// Op codes of the scans and of their gradient helpers.
var OpCumsum, OpCumprod, OpCummax, OpLogCumSumExp, OpCumprodGrad, OpCummaxGrad graph.Op

func init() {
	inputSize := func(n *graph.Node) float64 { return float64(n.Input(0).Shape().Size()) }
	// Prod may end a fused group (FuseReduce) as Sum does; Any and All may
	// not: their Bool result is not the group's dtype.
	red := func(name, doc string, dt opdef.DTypeRule, fuse bool, grad opdef.GradRule) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Reduction, DType: dt, Shape: shReduce, Grad: grad,
			Cost: inputSize, Ref: refFold, FuseReduce: fuse})
	}
	OpProd = red("Prod", "product of the elements over axes (1 over none); integers wrap", sameDType(opdef.NumericOrComplex), true, func(n, g *graph.Node, need []bool) []*graph.Node {
		if n.DType().IsComplex() {
			return each(need, func() *graph.Node { return prodGradComplex(n, g) })
		}
		return each(need, func() *graph.Node { return prodGrad(n, g) })
	})
	OpAny = red("Any", "whether any element over axes is nonzero (false over none); NaN is nonzero", toBool(compute), false, nil)
	OpAll = red("All", "whether every element over axes is nonzero (true over none); NaN is nonzero", toBool(compute), false, nil)

	scan := func(name, doc string, s opdef.DTypeSet, flops float64, grad opdef.GradRule) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Normalisation, DType: sameDType(s), Shape: shScan,
			FLOPs: flops, Ref: refScan, Grad: grad})
	}
	OpCumsum = scan("Cumsum", "running sum along an axis (ScanAttr: reverse, exclusive); integers wrap", numeric, 1, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			a := n.Attr().(opdef.ScanAttr)
			a.Reverse = !a.Reverse
			return Apply(OpCumsum, a, g)
		})
	})
	OpCumprod = scan("Cumprod", "running product along an axis (ScanAttr); integers wrap", numeric, 1, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return Apply(OpCumprodGrad, n.Attr(), n.Input(0), g) })
	})
	OpCummax = scan("Cummax", "running maximum along an axis (ScanAttr; exclusive starts at -Inf or the dtype's minimum); NaN propagates", numeric, 1, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return Apply(OpCummaxGrad, n.Attr(), n.Input(0), g) })
	})
	OpLogCumSumExp = scan("LogCumSumExp", "log of the running sum of exp along an axis (ScanAttr; exclusive starts at -Inf), stable", floats, 10, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return logCumSumExpGrad(n, g) })
	})

	helper := func(name, doc string, flops float64) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 2, Kind: opdef.Normalisation, DType: sameDType(floats), Shape: shScan,
			FLOPs: flops, Ref: refScanGrad})
	}
	OpCumprodGrad = helper("CumprodGrad", "the gradient of Cumprod(x) for the cotangent g (exact with zeros in x; no division)", 4)
	OpCummaxGrad = helper("CummaxGrad", "the gradient of Cummax(x) for the cotangent g: each g routed to the index that gave the running maximum (the last of ties)", 1)
}

// shScan is the scans' shape rule (ScanAttr): every operand has the first
// one's shape, and so has the result.
func shScan(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.ScanAttr)
	if !ok {
		return nil, argErr("needs a ScanAttr attribute, got %T", attr)
	}
	if a.Axis < 0 || a.Axis >= len(in[0]) {
		return nil, shapeErr("axis %d is out of range for rank %d", a.Axis, len(in[0]))
	}
	for i, s := range in[1:] {
		if !s.Equal(in[0]) {
			return nil, shapeErr("operand %d has shape %v, operand 0 has %v", i+1, s, in[0])
		}
	}
	return in[0].Clone(), nil
}

// ---- builders ----

// Prod multiplies the elements of x over the given axes (all axes if none;
// negative axes count from the end); the product over no elements is 1.
// Integers wrap; a small integer dtype (Int8, Int16, Uint8) is cast to
// Int64 first, as Sum does (numpy.prod upcasts integers smaller than the
// platform integer; torch.prod gives int64). Its gradient is, for each
// element, the product of the others (exact when elements are zero).
func Prod(x *graph.Node, axes ...int) *graph.Node { return reduce(OpProd, widenSum(x), axes, false) }

// ProdKeepDims is Prod keeping the reduced axes with length 1.
func ProdKeepDims(x *graph.Node, axes ...int) *graph.Node {
	return reduce(OpProd, widenSum(x), axes, true)
}

// AnyOf is the op Any: whether, as Bool, any element of x over the given
// axes is nonzero (true, for Bool; NaN counts as nonzero); false over no
// elements. Every compute dtype is admitted. It is not differentiable.
// (ops.All is Slice's whole-axis range, hence the names AnyOf and AllOf.)
func AnyOf(x *graph.Node, axes ...int) *graph.Node { return reduce(OpAny, x, axes, false) }

// AnyOfKeepDims is AnyOf keeping the reduced axes with length 1.
func AnyOfKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(OpAny, x, axes, true) }

// AllOf is the op All: whether, as Bool, every element of x over the given
// axes is nonzero; true over no elements. It is not differentiable.
func AllOf(x *graph.Node, axes ...int) *graph.Node { return reduce(OpAll, x, axes, false) }

// AllOfKeepDims is AllOf keeping the reduced axes with length 1.
func AllOfKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(OpAll, x, axes, true) }

// Var is the variance of x over the given axes (all if none; float dtypes
// only): the sum of squared deviations from the mean divided by N -
// correction, where N is the number of elements reduced (NumPy's ddof, the
// Array API's correction: 0 for the population variance, 1 for the
// unbiased sample variance). When N - correction <= 0 the divisor is 0 and
// the result Inf or NaN, as NumPy's. correction must be >= 0.
//
// It is a composite, Sum((x - Mean(x))²) / (N - correction): two passes
// over x (the mean, then the deviations), which is stable for data far
// from zero; the compiler fuses the second pass (the subtraction, the
// square and the sum) into one kernel, and the gradient comes from the
// primitives' rules.
func Var(x *graph.Node, correction float64, axes ...int) *graph.Node {
	return variance("Var", x, correction, axes, false)
}

// VarKeepDims is Var keeping the reduced axes with length 1.
func VarKeepDims(x *graph.Node, correction float64, axes ...int) *graph.Node {
	return variance("Var", x, correction, axes, true)
}

// Std is the standard deviation, the square root of Var.
func Std(x *graph.Node, correction float64, axes ...int) *graph.Node {
	return Sqrt(variance("Std", x, correction, axes, false))
}

// StdKeepDims is Std keeping the reduced axes with length 1.
func StdKeepDims(x *graph.Node, correction float64, axes ...int) *graph.Node {
	return Sqrt(variance("Std", x, correction, axes, true))
}

func variance(name string, x *graph.Node, correction float64, axes []int, keep bool) *graph.Node {
	if _, bad := graph.Operands(name, x); bad != nil {
		return bad
	}
	if err := floats.Check([]tensor.DType{x.DType()}); err != nil {
		return fail(graph.ErrDType, name, []*graph.Node{x}, "%v", err)
	}
	if !(correction >= 0) || math.IsInf(correction, 0) {
		return fail(graph.ErrInvalid, name, []*graph.Node{x}, "correction %v must be finite and >= 0", correction)
	}
	d := Sub(x, MeanKeepDims(x, axes...))
	s := reduce(OpSum, Mul(d, d), axes, keep)
	if !s.Valid() {
		return s
	}
	count := x.Shape().Size() / max(1, s.Shape().Size())
	if s.Shape().Size() == 0 {
		count = 0
	}
	return Div(s, Scalar(s, math.Max(float64(count)-correction, 0)))
}

// ScanOption modifies a scan: Reverse, Exclusive.
type ScanOption uint8

const (
	// Reverse scans from the end of the axis: element i combines
	// elements i..n-1.
	Reverse ScanOption = 1 << iota
	// Exclusive leaves each element's own value out: element i combines
	// the elements before it (after it, with Reverse), starting from the
	// op's identity (0, 1, -Inf or the integer dtype's minimum, -Inf).
	Exclusive
)

func scanOp(op graph.Op, x *graph.Node, axis int, opts []ScanOption) *graph.Node {
	d := opdef.Lookup(op)
	ax, bad := axisOf(d.Name, x, axis)
	if bad != nil {
		return bad
	}
	a := opdef.ScanAttr{Axis: ax}
	for _, o := range opts {
		if o&^(Reverse|Exclusive) != 0 {
			return fail(graph.ErrInvalid, d.Name, []*graph.Node{x}, "unknown scan option %d", o)
		}
		a.Reverse = a.Reverse || o&Reverse != 0
		a.Exclusive = a.Exclusive || o&Exclusive != 0
	}
	return Apply(op, a, x)
}

// Cumsum is the running sum of x along axis (numpy.cumsum): element i is
// x[0] + ... + x[i]. Integers wrap; a small integer dtype (Int8, Int16,
// Uint8) is cast to Int64 first, as numpy.cumsum and torch.cumsum do.
// Options: Reverse, Exclusive.
func Cumsum(x *graph.Node, axis int, opts ...ScanOption) *graph.Node {
	return scanOp(OpCumsum, widenSum(x), axis, opts)
}

// Cumprod is the running product of x along axis (numpy.cumprod).
// Integers wrap; a small integer dtype (Int8, Int16, Uint8) is cast to
// Int64 first, as numpy.cumprod and torch.cumprod do. Its gradient is
// exact when x has zeros. Options: Reverse, Exclusive.
func Cumprod(x *graph.Node, axis int, opts ...ScanOption) *graph.Node {
	return scanOp(OpCumprod, widenSum(x), axis, opts)
}

// Cummax is the running maximum of x along axis (the values of
// torch.cummax): once a NaN is seen, the rest is NaN. Its gradient goes to
// the element that gave each running maximum, the last one among equal
// values (torch.cummax's index). Options: Reverse, Exclusive (the first
// element is then -Inf, or the integer dtype's minimum; exec.CheckNumerics
// reports a float -Inf there, as it reports Log(0)'s).
func Cummax(x *graph.Node, axis int, opts ...ScanOption) *graph.Node {
	return scanOp(OpCummax, x, axis, opts)
}

// LogCumSumExp is log(cumsum(exp(x))) along axis (torch.logcumsumexp),
// computed stably with a running maximum; float dtypes only. Options:
// Reverse, Exclusive (the first element is then -Inf, which
// exec.CheckNumerics reports as it reports Log(0)'s).
func LogCumSumExp(x *graph.Node, axis int, opts ...ScanOption) *graph.Node {
	return scanOp(OpLogCumSumExp, x, axis, opts)
}

// ---- gradients ----

// prodGrad is g times the product of the other elements, without
// division: the reduced axes are moved last and flattened into one of
// length R, where the product of the others is the exclusive running
// product from the left times the exclusive running product from the
// right (O(R) per output, exact with zeros).
// prodGradComplex is Prod's gradient for complex x: g*conj(prod/x)
// broadcast back, the product of the other elements (a zero element gives
// NaN there, unlike prodGrad's exclusive products for real x).
func prodGradComplex(n, g *graph.Node) *graph.Node {
	x := n.Input(0)
	keep := keepShape(x, n.Attr().(opdef.AxesAttr))
	p := BroadcastTo(Reshape(n, keep...), x.Shape()...)
	gb := BroadcastTo(Reshape(g, keep...), x.Shape()...)
	return Mul(gb, Conj(Div(p, x)))
}

func prodGrad(n, g *graph.Node) *graph.Node {
	x := n.Input(0)
	a := n.Attr().(opdef.AxesAttr)
	red := make([]bool, x.Rank())
	for _, ax := range a.Axes {
		red[ax] = true
	}
	var perm, shape []int
	R := 1
	for i, d := range x.Shape() {
		if !red[i] {
			perm = append(perm, i)
			shape = append(shape, d)
		}
	}
	for i, d := range x.Shape() {
		if red[i] {
			perm = append(perm, i)
			R *= d
		}
	}
	identity := true
	for i, p := range perm {
		identity = identity && i == p
	}
	xt := x
	if !identity {
		xt = Transpose(x, perm...)
	}
	flat := Reshape(xt, append(shape, R)...)
	last := len(shape)
	others := Mul(Cumprod(flat, last, Exclusive), Cumprod(flat, last, Exclusive, Reverse))
	others = Reshape(others, xt.Shape()...)
	if !identity {
		inv := make([]int, len(perm))
		for i, p := range perm {
			inv[p] = i
		}
		others = Transpose(others, inv...)
	}
	return Mul(others, BroadcastTo(Reshape(g, keepShape(x, a)...), x.Shape()...))
}

// logCumSumExpGrad: with y = LogCumSumExp(x), dx_i = Σ_j g_j e^(x_i - y_j)
// over the j whose scan includes i, which is e^x_i times the scan in the
// other direction of g_j e^-y_j. It is computed in the log domain, split
// by the sign of g so that no exponential overflows: dx = e^(x + P) -
// e^(x + N) with P (N) the opposite LogCumSumExp of log(g⁺) - y (log(g⁻)
// - y), where log 0 = -Inf adds nothing.
func logCumSumExpGrad(n, g *graph.Node) *graph.Node {
	x := n.Input(0)
	a := n.Attr().(opdef.ScanAttr)
	a.Reverse = !a.Reverse
	pos := Apply(OpLogCumSumExp, a, Sub(Log(Relu(g)), n))
	neg := Apply(OpLogCumSumExp, a, Sub(Log(Relu(Neg(g))), n))
	return Sub(Exp(Add(x, pos)), Exp(Add(x, neg)))
}

// ---- reference evaluators ----

// refFold is the reference of Prod, Any and All: every element visited in
// row-major order and folded into its output's accumulator (float64 or
// exact int64 for Prod; integers wrap when rounded).
func refFold(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x := in[0]
	a := n.Attr().(opdef.AxesAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	op := n.Op()
	for o := 0; o < out.Len(); o++ {
		switch {
		case op == OpAll:
			out.F[o] = 1
		case op == OpProd && out.DType.IsInt():
			out.I[o] = 1
		case op == OpProd && out.DType.IsComplex():
			out.C[o] = 1
		case op == OpProd:
			out.F[o] = 1
		}
	}
	eachReduced(x.Shape, out.Shape, a, func(p, o int, _ int64) {
		switch {
		case op == OpProd && x.DType.IsInt():
			out.I[o] *= x.I[p]
		case op == OpProd && x.DType.IsComplex():
			out.C[o] *= x.C[p]
		case op == OpProd:
			out.F[o] *= x.F[p]
		case op == OpAny:
			if x.Float(p) != 0 || math.IsNaN(x.Float(p)) {
				out.F[o] = 1
			}
		default: // All
			if x.Float(p) == 0 {
				out.F[o] = 0
			}
		}
	})
	return out, nil
}

// scanLines calls f with the flat positions of every line of shape along
// the scan's axis, in scan order (from the end with Reverse).
func scanLines(shape tensor.Shape, a opdef.ScanAttr, f func(line []int)) {
	A := shape[a.Axis]
	idx := make([]int, len(shape))
	line := make([]int, A)
	for p := 0; p < shape.Size(); p++ {
		opdef.Index(shape, p, idx)
		if idx[a.Axis] != 0 {
			continue
		}
		for i := range line {
			idx[a.Axis] = i
			if a.Reverse {
				idx[a.Axis] = A - 1 - i
			}
			line[i] = opdef.Flat(shape, idx)
		}
		f(line)
	}
}

// logAddExp is log(e^a + e^b) with the larger exponent factored out; NaN
// propagates, -Inf is the identity and +Inf absorbs.
func logAddExp(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	m, l := math.Max(a, b), math.Min(a, b)
	if math.IsInf(m, 0) {
		return m
	}
	return m + math.Log1p(math.Exp(l-m))
}

// refScan is the scans' reference: each line in scan order, a running
// combination in float64 (int64 for integers, wrapping when rounded),
// written before (Exclusive) or after folding each element in.
func refScan(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x := in[0]
	a := n.Attr().(opdef.ScanAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	op := n.Op()
	if x.DType.IsInt() {
		lo, _ := x.DType.IntRange()
		ident := map[graph.Op]int64{OpCumsum: 0, OpCumprod: 1, OpCummax: lo}[op]
		scanRef(x.Shape, a, x.I, out.I, ident, func(acc, v int64) int64 {
			switch op {
			case OpCumsum:
				return acc + v
			case OpCumprod:
				return acc * v
			}
			return max(acc, v)
		})
		return out, nil
	}
	ident := map[graph.Op]float64{OpCumsum: 0, OpCumprod: 1, OpCummax: math.Inf(-1), OpLogCumSumExp: math.Inf(-1)}[op]
	scanRef(x.Shape, a, x.F, out.F, ident, func(acc, v float64) float64 {
		switch op {
		case OpCumsum:
			return acc + v
		case OpCumprod:
			return acc * v
		case OpCummax:
			// torch.cummax: a NaN stays; a later equal value replaces
			// the maximum (so +0 after -0 gives +0, and -0 after +0 -0)
			if !math.IsNaN(acc) && (v >= acc || math.IsNaN(v)) {
				return v
			}
			return acc
		}
		return logAddExp(acc, v)
	})
	return out, nil
}

// scanRef folds each line of x into out with step from ident, writing the
// running value before (Exclusive) or after each element.
func scanRef[T int64 | float64](shape tensor.Shape, a opdef.ScanAttr, x, out []T, ident T, step func(acc, v T) T) {
	scanLines(shape, a, func(line []int) {
		acc := ident
		for _, q := range line {
			if a.Exclusive {
				out[q] = acc
			}
			acc = step(acc, x[q])
			if !a.Exclusive {
				out[q] = acc
			}
		}
	})
}

// refScanGrad is the reference of the gradient helpers, line by line in
// scan order (positions 0..n-1 below), in float64.
//
// CumprodGrad: with P_i = x_0···x_(i-1) (the exclusive running product),
// an inclusive scan's dx_i = Σ_(j≥i) g_j·P_i·x_(i+1)···x_j = P_i·s_i with
// s_(n-1) = g_(n-1), s_i = g_i + x_(i+1)·s_(i+1); an exclusive scan's
// dx_i = P_i·t_i with t_(n-1) = 0, t_(n-2) = g_(n-1), t_i = g_(i+1) +
// x_(i+1)·t_(i+1). No division, so zeros in x are exact.
//
// CummaxGrad: g_j goes to the index of the running maximum that gave y_j
// (the last of equal values; a NaN replaces the maximum and every later
// NaN replaces it again, as torch.cummax's index); with Exclusive, g_j
// goes to the maximum before j, and the first g is dropped.
func refScanGrad(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x, g := in[0], in[1]
	a := n.Attr().(opdef.ScanAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	scanLines(x.Shape, a, func(line []int) {
		L := len(line)
		if L == 0 {
			return
		}
		if n.Op() == OpCumprodGrad {
			s := make([]float64, L)
			if a.Exclusive {
				if L >= 2 {
					s[L-2] = g.F[line[L-1]]
				}
				for i := L - 3; i >= 0; i-- {
					s[i] = g.F[line[i+1]] + x.F[line[i+1]]*s[i+1]
				}
			} else {
				s[L-1] = g.F[line[L-1]]
				for i := L - 2; i >= 0; i-- {
					s[i] = g.F[line[i]] + x.F[line[i+1]]*s[i+1]
				}
			}
			p := 1.0
			for i, q := range line {
				out.F[q] = p * s[i]
				p *= x.F[q]
			}
			return
		}
		best, at := 0.0, -1
		for j, q := range line {
			v := x.F[q]
			if a.Exclusive && at >= 0 {
				out.F[line[at]] += g.F[q]
			}
			if at < 0 || math.IsNaN(v) || (!math.IsNaN(best) && v >= best) {
				best, at = v, j
			}
			if !a.Exclusive {
				out.F[line[at]] += g.F[q]
			}
		}
	})
	return out, nil
}

package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The reverse-mode rules, one per differentiable primitive, written with
// the builders so that gradients are ordinary nodes (optimised, run on any
// backend, differentiable again). Conventions, as in JAX and PyTorch where
// they agree:
//   - a broadcast operand's cotangent is summed back to its shape (SumTo);
//   - Relu'(0) = 0 and Abs'(0) = Sign(0) = 0;
//   - Maximum and Minimum give a tie to the first operand; Max and Min
//     give it to the first extremal element in row-major order over the
//     reduced axes (the element ArgMax picks);
//   - Pow's derivative in the exponent uses log(a) with log(0) taken as 0
//     (so 0^b has a finite exponent gradient), and in the base b*a^(b-1)
//     with 0 where b == 0.

// each builds the cotangents of the needed operands only.
func each(need []bool, fs ...func() *graph.Node) []*graph.Node {
	out := make([]*graph.Node, len(fs))
	for i, f := range fs {
		if need[i] && f != nil {
			out[i] = f()
		}
	}
	return out
}

func zero(like *graph.Node) *graph.Node { return Scalar(like, 0) }

// keepShape is x's shape with the reduced axes of a set to 1.
func keepShape(x *graph.Node, a opdef.AxesAttr) []int {
	s := append([]int{}, x.Shape()...)
	for _, ax := range a.Axes {
		s[ax] = 1
	}
	return s
}

// reducedIota is an Int64 value of x's shape with the kept axes set to 1,
// holding each position's row-major index over the reduced axes: the
// numbering ArgMax uses. It is the broadcast sum of one Iota per reduced
// axis times that axis's stride, so building it allocates nothing in
// proportion to x (the compiler folds it when it is small, up to 64
// elements per Iota).
func reducedIota(x *graph.Node, a opdef.AxesAttr) *graph.Node {
	g := x.Graph()
	var idx *graph.Node
	stride := 1
	for k := len(a.Axes) - 1; k >= 0; k-- {
		ax := a.Axes[k]
		d := x.Shape()[ax]
		shape := make([]int, x.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[ax] = d
		term := Iota(g, tensor.Int64, 0, d)
		if stride != 1 {
			term = Mul(term, intConst(g, tensor.Int64, stride))
		}
		term = Reshape(term, shape...)
		if idx == nil {
			idx = term
		} else {
			idx = Add(term, idx)
		}
		stride *= d
	}
	if idx == nil { // no reduced axes: every position is index 0
		return intConst(g, tensor.Int64, 0)
	}
	return idx
}

// selectGrad routes dy to the element ArgMax (or ArgMin) picks.
func selectGrad(n, g *graph.Node, arg graph.Op) *graph.Node {
	x := n.Input(0)
	a := n.Attr().(opdef.AxesAttr)
	idx := Reshape(Apply(arg, opdef.AxesAttr{Axes: a.Axes}, x), keepShape(x, a)...)
	mask := Equal(reducedIota(x, a), idx)
	return Where(mask, Reshape(g, keepShape(x, a)...), zero(g))
}

// guardGrad wraps a rule so that a call with arguments it cannot use (a
// node of another op or breaking its op's rules, an invalid cotangent or
// one of another type, need of the wrong length) returns invalid
// cotangents carrying the error, recorded on n's graph, instead of
// panicking: the rules themselves assume well-formed nodes.
func guardGrad(d *opdef.Def, r opdef.GradRule) opdef.GradRule {
	return func(n, dy *graph.Node, need []bool) []*graph.Node {
		bad := func(format string, args ...any) []*graph.Node {
			e := fail(graph.ErrInvalid, d.Name+" gradient", []*graph.Node{n, dy}, format, args...)
			out := make([]*graph.Node, len(n.Inputs()))
			for i := range out {
				out[i] = e
			}
			return out
		}
		switch {
		case !n.Valid() || n.Op() != d.Op:
			return bad("the node is not a valid %s node", d.Name)
		case !dy.Valid() || dy.Graph() != n.Graph() || dy.DType() != n.DType() || !dy.Shape().Equal(n.Shape()):
			return bad("the cotangent %s does not match the node's type %s", graph.TypeOf(dy), n.Type())
		case len(need) != len(n.Inputs()):
			return bad("need has %d entries for %d operands", len(need), len(n.Inputs()))
		}
		if dt, s, err := d.Infer(n.Inputs(), n.Attr()); err != nil || dt != n.DType() || !s.Equal(n.Shape()) {
			return bad("the node does not obey the op's rules")
		}
		return r(n, dy, need)
	}
}

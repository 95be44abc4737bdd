package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of Slice's negative steps and of the
// creation and movement composites (their gradients come from the
// primitives they are built of; these check that the composition is
// right, reflections and wrap-arounds included).
func init() {
	u := uniform(-1, 1)
	gradCases["Slice"] = append(gradCases["Slice"],
		gradCase{"negative-steps", op1(tensor.Shape{7, 5}, u), func(x []*graph.Node) *graph.Node {
			return ops.Slice(x[0], ops.RS(6, 0, -2), ops.RS(-1, ops.End, -1))
		}},
		gradCase{"negative-step-3", op1(tensor.Shape{8}, u), func(x []*graph.Node) *graph.Node {
			return ops.Slice(x[0], ops.RS(-2, ops.End, -3))
		}},
	)
	gradCases["Repeat"] = []gradCase{
		{"counts", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.Repeat(x[0], []int{2, 0, 1, 3}, 1) }},
		{"axis0", op1(tensor.Shape{3, 2, 2}, u), func(x []*graph.Node) *graph.Node { return ops.Repeat(x[0], []int{1, 4, 2}, 0) }},
	}
	gradCases["SumRuns"] = []gradCase{
		{"runs", op1(tensor.Shape{2, 6}, u), func(x []*graph.Node) *graph.Node { return ops.SumRuns(x[0], []int{3, 0, 1, 2}, 1) }},
		{"second-order", op1(tensor.Shape{5}, u), func(x []*graph.Node) *graph.Node {
			// x * Repeat(SumRuns(x)): the gradient runs both rules.
			return ops.Mul(x[0], ops.Repeat(ops.SumRuns(x[0], []int{2, 3}, 0), []int{2, 3}, 0))
		}},
	}
	pw := func(lo, hi int) ops.PadWidth { return ops.PadWidth{Low: lo, High: hi} }
	gradCases["composites/movement"] = []gradCase{
		{"Flip", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.Flip(x[0], 0) }},
		{"Roll", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.Roll(x[0], 5) }},
		{"RollAxes", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.RollAxes(x[0], []int{-1, 2}, []int{0, 1}) }},
		{"Tile", op1(tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return ops.Tile(x[0], 2, 1, 3) }},
		{"Repeat/one", op1(tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return ops.Repeat(x[0], []int{3}, 0) }},
		{"Repeat/runs", op1(tensor.Shape{2, 4}, u), func(x []*graph.Node) *graph.Node { return ops.Repeat(x[0], []int{2, 0, 1, 3}, 1) }},
		{"Stack", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}}, func(x []*graph.Node) *graph.Node { return ops.Stack(1, x[0], x[1], x[0]) }},
		{"ArraySplit", op1(tensor.Shape{5, 2}, u), func(x []*graph.Node) *graph.Node {
			p := ops.ArraySplit(x[0], 2, 0)
			return ops.Mul(ops.Sum(p[0]), ops.Sum(p[1]))
		}},
		{"Unstack", op1(tensor.Shape{3, 2}, u), func(x []*graph.Node) *graph.Node {
			p := ops.Unstack(x[0], 0)
			return ops.Mul(p[0], p[2])
		}},
		{"MoveAxis", op1(tensor.Shape{2, 3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.MoveAxis(x[0], 0, -1) }},
		{"Diagonal", op1(tensor.Shape{2, 3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.Diagonal(x[0], 1, 2, 1) }},
		{"Trace", op1(tensor.Shape{4, 3}, u), func(x []*graph.Node) *graph.Node { return ops.Trace(x[0], -1, 0, 1) }},
		{"Tril", op1(tensor.Shape{2, 3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.Tril(x[0], 1) }},
		{"Triu", op1(tensor.Shape{4, 3}, u), func(x []*graph.Node) *graph.Node { return ops.Triu(x[0], -1) }},
		{"PadConstant", op1(tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return ops.PadConstant(x[0], 2, pw(1, 0), pw(2, 1)) }},
		{"PadReflect", op1(tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return ops.PadReflect(x[0], pw(1, 2), pw(5, 4)) }},
		{"PadReflect/narrow", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.PadReflect(x[0], pw(2, 1), pw(0, 3)) }},
		{"PadWrap/narrow", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node { return ops.PadWrap(x[0], pw(3, 1), pw(4, 2)) }},
		{"PadEdge", op1(tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return ops.PadEdge(x[0], pw(2, 1), pw(0, 3)) }},
		{"PadWrap", op1(tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return ops.PadWrap(x[0], pw(3, 0), pw(4, 7)) }},
	}
}

package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the sorting ops (ops/sort.go). Sort and
// TopK's values are differentiable where no two elements of a line are
// equal (distinct keeps them apart): each output is one input element.
// GatherAlong and ScatterAlong are checked with constant indices that
// repeat, so the scatter's sums and the gather's duplicates both count.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	idx := func(x *graph.Node, shape tensor.Shape, vals ...float64) *graph.Node {
		t, err := tensor.FromFloat64s(tensor.Int64, vals, shape...)
		if err != nil {
			panic(err)
		}
		return x.Graph().Const(t)
	}
	add("Sort",
		gradCase{"last", op1(s(3, 5), distinct), func(x []*graph.Node) *graph.Node { return ops.Sort(x[0], -1, false) }},
		gradCase{"axis0-descending", op1(s(4, 3), distinct), func(x []*graph.Node) *graph.Node { return ops.Sort(x[0], 0, true) }},
	)
	add("GatherAlong",
		gradCase{"topk", op1(s(3, 6), distinct), func(x []*graph.Node) *graph.Node { v, _ := ops.TopK(x[0], 2, 1, true); return v }},
		gradCase{"topk-axis0-smallest", op1(s(5, 2), distinct), func(x []*graph.Node) *graph.Node { v, _ := ops.TopK(x[0], 3, 0, false); return v }},
		gradCase{"repeated", op1(s(2, 3), uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpGatherAlong, opdef.AlongAttr{Axis: 1}, x[0], idx(x[0], s(2, 4), 0, 0, 2, -1, 1, 1, 1, 0))
		}},
	)
	add("ScatterAlong",
		gradCase{"repeated", op1(s(2, 4), uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpScatterAlong, opdef.AlongAttr{Axis: 1, Len: 3}, idx(x[0], s(2, 4), 0, 0, 2, 1, 1, 1, 1, 0), x[0])
		}},
		gradCase{"axis0", op1(s(3, 2), uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpScatterAlong, opdef.AlongAttr{Axis: 0, Len: 2}, idx(x[0], s(3, 2), 1, 0, 1, 1, 0, 0), x[0])
		}},
	)
}

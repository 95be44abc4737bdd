package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the normalisations of ops/norm.go:
// composites, so these check their gradients end to end (through the
// mean and the variance) with respect to x and every parameter.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	x := operand{s(2, 3, 4), uniform(-2, 2)}
	p := func(dims ...int) operand { return operand{s(dims...), uniform(0.5, 1.5)} }
	add("LayerNorm",
		gradCase{"last-affine", []operand{x, p(4), p(4)}, func(x []*graph.Node) *graph.Node { return ops.LayerNorm(x[0], x[1], x[2], 1e-5) }},
		gradCase{"two-axes-gamma", []operand{x, p(3, 4)}, func(x []*graph.Node) *graph.Node { return ops.LayerNorm(x[0], x[1], nil, 1e-3, 1, 2) }},
		gradCase{"outer-axes", []operand{x}, func(x []*graph.Node) *graph.Node { return ops.LayerNorm(x[0], nil, nil, 1e-5, 0, 2) }},
	)
	add("GroupNorm",
		gradCase{"affine", []operand{{s(2, 4, 3), uniform(-2, 2)}, p(4), p(4)}, func(x []*graph.Node) *graph.Node { return ops.GroupNorm(x[0], x[1], x[2], 2, 1e-5) }},
		gradCase{"one-group-2d", []operand{{s(2, 3, 2, 2), uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node { return ops.GroupNorm(x[0], nil, nil, 1, 1e-5) }},
	)
	add("BatchNorm",
		// inference form: every operand, the variance kept positive
		gradCase{"given-stats", []operand{{s(2, 3, 2), uniform(-2, 2)}, p(3), p(3), {s(3), uniform(-1, 1)}, p(3)}, func(x []*graph.Node) *graph.Node {
			return ops.BatchNorm(x[0], x[1], x[2], x[3], x[4], 1e-5)
		}},
		// training form: the batch's statistics, so x's gradient goes
		// through them as in torch's training-mode batch_norm
		gradCase{"batch-stats", []operand{{s(3, 2, 2, 2), uniform(-2, 2)}, p(2), p(2)}, func(x []*graph.Node) *graph.Node {
			m, v := ops.BatchStats(x[0])
			return ops.BatchNorm(x[0], x[1], x[2], m, v, 1e-5)
		}},
	)
	add("BatchStats",
		gradCase{"mean-and-var", []operand{{s(3, 2, 4), uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node {
			m, v := ops.BatchStats(x[0])
			return ops.Concat(0, m, v)
		}},
	)
}

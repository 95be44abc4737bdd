package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the sorting ops (ops/sort.go). Sort and
// TopK's values are differentiable where no two elements of a line are
// equal (distinct keeps them apart): each output is one input element.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	add("Sort",
		gradCase{"last", op1(s(3, 5), distinct), func(x []*graph.Node) *graph.Node { return ops.Sort(x[0], -1, false) }},
		gradCase{"axis0-descending", op1(s(4, 3), distinct), func(x []*graph.Node) *graph.Node { return ops.Sort(x[0], 0, true) }},
	)
	// TopK's values are a TakeAlongAxis at its indices.
	add("TakeAlongAxis",
		gradCase{"topk", op1(s(3, 6), distinct), func(x []*graph.Node) *graph.Node { v, _ := ops.TopK(x[0], 2, 1, true); return v }},
		gradCase{"topk-axis0-smallest", op1(s(5, 2), distinct), func(x []*graph.Node) *graph.Node { v, _ := ops.TopK(x[0], 3, 0, false); return v }},
	)
}

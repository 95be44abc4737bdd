package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the reductions and scans of ops/scan.go.
// Prod and Cumprod are polynomials of degree one in each element, so
// central differences are exact up to rounding at zeros too: the cases
// with zeros check the division-free rules where prod/x would be NaN.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	add("Prod",
		gradCase{"all", op1(s(2, 3), uniform(0.5, 1.5)), func(x []*graph.Node) *graph.Node { return ops.Prod(x[0]) }},
		gradCase{"axes-keep", op1(s(2, 3, 4), uniform(-1.5, 1.5)), func(x []*graph.Node) *graph.Node { return ops.ProdKeepDims(x[0], 0, 2) }},
		gradCase{"one-zero", []operand{fixed(s(2, 3), 1.5, 0, -2, 0.5, 0.7, 3)}, func(x []*graph.Node) *graph.Node { return ops.Prod(x[0], 1) }},
		gradCase{"two-zeros", []operand{fixed(s(4), 0, 1.5, 0, 2)}, func(x []*graph.Node) *graph.Node { return ops.Prod(x[0]) }},
		gradCase{"scalar", op1(s(), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Prod(x[0]) }},
	)
	add("Cumsum",
		gradCase{"last", op1(s(3, 4), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Cumsum(x[0], -1) }},
		gradCase{"first-reverse", op1(s(4, 3), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Cumsum(x[0], 0, ops.Reverse) }},
		gradCase{"middle-exclusive", op1(s(2, 3, 2), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Cumsum(x[0], 1, ops.Exclusive) }},
		gradCase{"reverse-exclusive", op1(s(5), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Cumsum(x[0], 0, ops.Reverse, ops.Exclusive) }},
	)
	add("Cumprod",
		gradCase{"last", op1(s(3, 4), uniform(-1.5, 1.5)), func(x []*graph.Node) *graph.Node { return ops.Cumprod(x[0], -1) }},
		gradCase{"zeros", []operand{fixed(s(2, 4), 1.5, 0, -2, 0.5, 0, 0.7, 0, 3)}, func(x []*graph.Node) *graph.Node { return ops.Cumprod(x[0], 1) }},
		gradCase{"first-reverse", []operand{fixed(s(4, 2), 2, 1, 0, -1, 3, 0.5, -0.5, 0)}, func(x []*graph.Node) *graph.Node { return ops.Cumprod(x[0], 0, ops.Reverse) }},
		gradCase{"exclusive", []operand{fixed(s(2, 3), 0, 2, 3, 1.5, 0, 0.5)}, func(x []*graph.Node) *graph.Node { return ops.Cumprod(x[0], 1, ops.Exclusive) }},
		gradCase{"reverse-exclusive", op1(s(2, 5), uniform(-1.5, 1.5)), func(x []*graph.Node) *graph.Node {
			return ops.Cumprod(x[0], 1, ops.Reverse, ops.Exclusive)
		}},
	)
	// Cummax is differentiable where no two elements of a line are equal
	// (distinct keeps them 0.1 apart).
	add("Cummax",
		gradCase{"last", op1(s(3, 6), distinct), func(x []*graph.Node) *graph.Node { return ops.Cummax(x[0], -1) }},
		gradCase{"first-reverse", op1(s(5, 2), distinct), func(x []*graph.Node) *graph.Node { return ops.Cummax(x[0], 0, ops.Reverse) }},
		gradCase{"exclusive", op1(s(2, 6), distinct), func(x []*graph.Node) *graph.Node { return ops.Cummax(x[0], 1, ops.Exclusive) }},
	)
	add("LogCumSumExp",
		gradCase{"last", op1(s(3, 4), uniform(-3, 3)), func(x []*graph.Node) *graph.Node { return ops.LogCumSumExp(x[0], -1) }},
		gradCase{"first-reverse", op1(s(4, 3), uniform(-3, 3)), func(x []*graph.Node) *graph.Node { return ops.LogCumSumExp(x[0], 0, ops.Reverse) }},
		// y_0 = -Inf is not differentiable: the check reads y_1.. only.
		gradCase{"exclusive", op1(s(2, 5), uniform(-3, 3)), func(x []*graph.Node) *graph.Node {
			return ops.Slice(ops.LogCumSumExp(x[0], 1, ops.Exclusive), ops.All, ops.R(1, ops.End))
		}},
		gradCase{"large", op1(s(6), uniform(995, 1005)), func(x []*graph.Node) *graph.Node { return ops.LogCumSumExp(x[0], 0) }},
	)
	// The composites built on Sum: their rules are the primitives', checked
	// here end to end.
	add("Var",
		gradCase{"axis", op1(s(3, 4), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Var(x[0], 1, 1) }},
		gradCase{"all-population", op1(s(2, 3), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Var(x[0], 0) }},
	)
	add("Std",
		gradCase{"axis-keep", op1(s(3, 4), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.StdKeepDims(x[0], 1, 0) }},
	)
}

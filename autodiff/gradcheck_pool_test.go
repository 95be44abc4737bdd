package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the pooling ops (ops/pool.go). MaxPool
// and its helpers are differentiable where no window holds two equal
// maxima: their x operands are drawn by distinct (no two values within
// the finite-difference step). The helpers are built with the attribute
// of a MaxPool or AvgPool node, so the options go through the builders.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	u := uniform(-2, 2)
	// attrOf is the attribute the builder f gives a pooling of x.
	attrOf := func(x *graph.Node, f func(x *graph.Node) *graph.Node) opdef.PoolAttr {
		return f(x).Attr().(opdef.PoolAttr)
	}
	max1d := func(x *graph.Node) *graph.Node {
		return ops.MaxPool(x, []int{3}, ops.Stride(2), ops.Padding(1), ops.Dilation(2), ops.CeilMode)
	}
	max2d := func(x *graph.Node) *graph.Node { return ops.MaxPool(x, []int{2, 2}) }
	max2dOverlap := func(x *graph.Node) *graph.Node {
		return ops.MaxPool(x, []int{3, 3}, ops.Stride(2), ops.Padding(1), ops.CeilMode)
	}
	max3d := func(x *graph.Node) *graph.Node {
		return ops.MaxPool(x, []int{2, 2, 2}, ops.Stride(1, 2, 1), ops.Padding(1, 0, 1), ops.CeilMode)
	}
	add("MaxPool",
		gradCase{"1d-dilation-ceil", op1(s(2, 1, 9), distinct), func(x []*graph.Node) *graph.Node { return max1d(x[0]) }},
		gradCase{"2d-cnn", op1(s(2, 2, 4, 6), distinct), func(x []*graph.Node) *graph.Node { return max2d(x[0]) }},
		gradCase{"2d-overlap-pad-ceil", op1(s(1, 2, 5, 6), distinct), func(x []*graph.Node) *graph.Node { return max2dOverlap(x[0]) }},
		gradCase{"3d", op1(s(1, 1, 3, 4, 3), distinct), func(x []*graph.Node) *graph.Node { return max3d(x[0]) }},
	)
	// MaxPoolGrad(x, g) is linear in g (its transpose is MaxPoolSelect)
	// and piecewise constant in x.
	add("MaxPoolGrad",
		gradCase{"2d-overlap", []operand{{s(1, 2, 5, 6), distinct}, {s(1, 2, 3, 4), u}}, func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpMaxPoolGrad, attrOf(x[0], max2dOverlap), x[0], x[1])
		}},
		gradCase{"1d-squared", []operand{{s(2, 1, 9), distinct}, {s(2, 1, 4), u}}, func(x []*graph.Node) *graph.Node {
			// squared, so the check's weights meet MaxPoolSelect's rule
			// (MaxPoolGrad of MaxPoolGrad) through a product
			d := ops.Apply(ops.OpMaxPoolGrad, attrOf(x[0], max1d), x[0], x[1])
			return ops.Mul(d, d)
		}},
	)
	add("MaxPoolSelect",
		gradCase{"3d", []operand{{s(1, 1, 3, 4, 3), distinct}, {s(1, 1, 3, 4, 3), u}}, func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpMaxPoolSelect, attrOf(x[0], max3d), x[0], x[1])
		}},
		gradCase{"2d-squared", []operand{{s(2, 2, 4, 6), distinct}, {s(2, 2, 4, 6), u}}, func(x []*graph.Node) *graph.Node {
			d := ops.Apply(ops.OpMaxPoolSelect, attrOf(x[0], max2d), x[0], x[1])
			return ops.Mul(d, d)
		}},
	)
	avg2d := func(x *graph.Node) *graph.Node {
		return ops.AvgPool(x, []int{3, 3}, ops.Stride(2), ops.Padding(1), ops.CeilMode)
	}
	avg3dExcl := func(x *graph.Node) *graph.Node {
		return ops.AvgPool(x, []int{2, 3, 2}, ops.Stride(1, 2, 2), ops.Padding(1, 1, 0), ops.ExcludePad)
	}
	add("AvgPool",
		gradCase{"1d-overhang", op1(s(1, 2, 5), u), func(x []*graph.Node) *graph.Node { return ops.AvgPool(x[0], []int{2}, ops.CeilMode) }},
		gradCase{"2d-pad-ceil", op1(s(1, 2, 5, 6), u), func(x []*graph.Node) *graph.Node { return avg2d(x[0]) }},
		gradCase{"2d-exclude-pad", op1(s(1, 1, 5, 6), u), func(x []*graph.Node) *graph.Node {
			return ops.AvgPool(x[0], []int{3, 3}, ops.Stride(2), ops.Padding(1), ops.CeilMode, ops.ExcludePad)
		}},
		gradCase{"3d-exclude-pad", op1(s(1, 1, 3, 3, 4), u), func(x []*graph.Node) *graph.Node { return avg3dExcl(x[0]) }},
	)
	add("AvgPoolGrad",
		gradCase{"2d-pad-ceil", op1(s(1, 2, 3, 4), u), func(x []*graph.Node) *graph.Node {
			a := attrOf(x[0].Graph().Input("shape", tensor.Float64, 1, 2, 5, 6), avg2d)
			a.Size = []int{5, 6}
			return ops.Apply(ops.OpAvgPoolGrad, a, x[0])
		}},
		gradCase{"3d-exclude-pad-squared", op1(s(1, 1, 4, 2, 2), u), func(x []*graph.Node) *graph.Node {
			a := attrOf(x[0].Graph().Input("shape", tensor.Float64, 1, 1, 3, 3, 4), avg3dExcl)
			a.Size = []int{3, 3, 4}
			d := ops.Apply(ops.OpAvgPoolGrad, a, x[0])
			return ops.Mul(d, d)
		}},
	)
	// The composites: their gradients are their primitives'.
	add("composites/pooling",
		gradCase{"AdaptiveAvgPool-uneven", op1(s(1, 2, 5, 7), u), func(x []*graph.Node) *graph.Node { return ops.AdaptiveAvgPool(x[0], 3, 4) }},
		gradCase{"AdaptiveAvgPool-even", op1(s(1, 2, 4, 6), u), func(x []*graph.Node) *graph.Node { return ops.AdaptiveAvgPool(x[0], 2, 3) }},
		gradCase{"AdaptiveMaxPool-uneven", op1(s(1, 2, 5, 7), distinct), func(x []*graph.Node) *graph.Node { return ops.AdaptiveMaxPool(x[0], 3, 4) }},
		gradCase{"AdaptiveMaxPool-3d", op1(s(1, 1, 3, 5, 4), distinct), func(x []*graph.Node) *graph.Node { return ops.AdaptiveMaxPool(x[0], 2, 2, 3) }},
		gradCase{"GlobalAvgPool", op1(s(2, 3, 2, 3), u), func(x []*graph.Node) *graph.Node { return ops.GlobalAvgPool(x[0]) }},
		gradCase{"GlobalMaxPool", op1(s(2, 3, 4), distinct), func(x []*graph.Node) *graph.Node { return ops.GlobalMaxPool(x[0]) }},
	)
}

package onnx

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The Reduce* operators: axes from the attribute (ReduceSum from opset 13
// and the others from opset 18 take them as an input), keepdims,
// noop_with_empty_axes.

func reduceOp(sumAxesInput bool, f func(x *graph.Node, axes []int) *graph.Node) opDef {
	return opDef{attrs: []string{"axes", "keepdims", "noop_with_empty_axes"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		var axes []int
		given := false
		if sumAxesInput && n.opset() >= 13 {
			if n.has(1) {
				if axes, err = n.ints(1); err != nil {
					return nil, err
				}
				given = len(axes) > 0
			}
		} else {
			axes, given = n.attrInts("axes")
			given = given && len(axes) > 0
		}
		if !given {
			if n.attrInt("noop_with_empty_axes", 0) != 0 {
				return one(x)
			}
			axes = make([]int, x.Rank())
			for i := range axes {
				axes[i] = i
			}
		}
		if axes, err = n.axes(axes, x.Rank()); err != nil {
			return nil, err
		}
		y := f(x, axes)
		if n.attrInt("keepdims", 1) != 0 {
			shape := append([]int(nil), x.Shape()...)
			for _, a := range axes {
				shape[a] = 1
			}
			y = ops.Reshape(y, shape...)
		}
		return one(y)
	}}
}

func init() {
	sum := func(x *graph.Node, axes []int) *graph.Node {
		if len(axes) == 0 {
			return x
		}
		return ops.Sum(x, axes...)
	}
	reg("ReduceSum", reduceOp(true, sum))
	reg("ReduceMean", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node {
		if len(axes) == 0 {
			return x
		}
		return ops.Mean(x, axes...)
	}))
	reg("ReduceMax", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node {
		if len(axes) == 0 {
			return x
		}
		return ops.Max(x, axes...)
	}))
	reg("ReduceMin", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node {
		if len(axes) == 0 {
			return x
		}
		return ops.Min(x, axes...)
	}))
	reg("ReduceProd", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node {
		if len(axes) == 0 {
			return x
		}
		return ops.Prod(x, axes...)
	}))
	reg("ReduceL1", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node { return sum(ops.Abs(x), axes) }))
	reg("ReduceL2", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node {
		if x.DType().IsInt() {
			// The spec computes in the input type: sqrt of the integer sum, truncated.
			return ops.Cast(ops.Sqrt(ops.Cast(sum(ops.Mul(x, x), axes), tensor.Float64)), x.DType())
		}
		return ops.Sqrt(sum(ops.Mul(x, x), axes))
	}))
	reg("ReduceSumSquare", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node { return sum(ops.Mul(x, x), axes) }))
	reg("ReduceLogSum", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node { return ops.Log(sum(x, axes)) }))
	reg("ReduceLogSumExp", reduceOp(false, func(x *graph.Node, axes []int) *graph.Node {
		if len(axes) == 0 {
			return x
		}
		return ops.LogSumExp(x, axes...)
	}))
}

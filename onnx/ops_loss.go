package onnx

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Softmax, LogSoftmax and Hardmax, and the losses built on them:
// SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss.

func init() {
	reg := func(name string, d opDef) {
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	reg("Softmax", softmaxLike(ops.Softmax))
	reg("LogSoftmax", softmaxLike(ops.LogSoftmax))
	reg("Hardmax", softmaxLike(hardmax))
	reg("NegativeLogLikelihoodLoss", opDef{attrs: []string{"ignore_index", "reduction"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, t := n.in(0), n.in(1)
		if x == nil || t == nil {
			return nil, fmt.Errorf("inputs input and target are required")
		}
		loss, err := nllLoss(n, x, t, n.in(2))
		if err != nil {
			return nil, err
		}
		return []*graph.Node{loss}, nil
	}})
	reg("SoftmaxCrossEntropyLoss", opDef{attrs: []string{"ignore_index", "reduction"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, t := n.in(0), n.in(1)
		if x == nil || t == nil {
			return nil, fmt.Errorf("inputs scores and labels are required")
		}
		if x.Rank() < 2 {
			return nil, fmt.Errorf("scores %v must be [N, C, D...]", x.Shape())
		}
		lp := ops.LogSoftmax(x, 1)
		loss, err := nllLoss(n, lp, t, n.in(2))
		if err != nil {
			return nil, err
		}
		return []*graph.Node{loss, lp}, nil
	}})
}

// softmaxLike imports Softmax, LogSoftmax or Hardmax (f along one axis).
// Before opset 13 the input is coerced to a matrix [prod(d[:axis]),
// prod(d[axis:])] (axis default 1) and f runs along its rows; from opset
// 13 f runs along axis (default -1).
func softmaxLike(f func(x *graph.Node, axis int) *graph.Node) opDef {
	return opDef{attrs: []string{"axis"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		if !x.DType().IsFloat() {
			return nil, fmt.Errorf("the input is %s; want a float type", x.DType())
		}
		r := x.Rank()
		if n.opset() >= 13 {
			ax, err := n.axis(n.attrInt("axis", -1), r)
			if err != nil {
				return nil, err
			}
			return []*graph.Node{f(x, ax)}, nil
		}
		a := n.attrInt("axis", 1)
		if a < 0 {
			a += r
		}
		if a < 0 || a > r || (a == r && r > 0) {
			return nil, fmt.Errorf("axis %d is out of range for rank %d", n.attrInt("axis", 1), r)
		}
		rows, cols := 1, 1
		for i, d := range x.Shape() {
			if i < a {
				rows *= d
			} else {
				cols *= d
			}
		}
		y := f(ops.Reshape(x, rows, cols), 1)
		return []*graph.Node{ops.Reshape(y, x.Shape()...)}, nil
	}}
}

// hardmax is 1 at the first maximum along axis, 0 elsewhere.
func hardmax(x *graph.Node, axis int) *graph.Node {
	r := x.Rank()
	if axis < 0 {
		axis += r
	}
	oh := ops.OneHot(ops.ArgMax(x, axis), x.Shape()[axis], x.DType())
	if axis == r-1 {
		return oh
	}
	// OneHot's classes are its last axis: move them to axis.
	perm := make([]int, 0, r)
	for i := 0; i < r-1; i++ {
		if i == axis {
			perm = append(perm, r-1)
		}
		perm = append(perm, i)
	}
	return ops.Transpose(oh, perm...)
}

// nllLoss is NegativeLogLikelihoodLoss of the log-probabilities x [N, C,
// D...] at the classes target [N, D...]: loss = -x[n, target, d] ·
// weight[target] (weight 1 when not given), 0 where target is
// ignore_index; reduced by reduction: none, sum, or mean (the sum over
// the sum of the weights of the targets not ignored).
func nllLoss(n *onode, x, target, weight *graph.Node) (*graph.Node, error) {
	if x.Rank() < 2 {
		return nil, fmt.Errorf("the input %v must be [N, C, D...]", x.Shape())
	}
	if !target.DType().IsInt() {
		return nil, fmt.Errorf("the target is %s; want integers", target.DType())
	}
	want := append(tensor.Shape{x.Shape()[0]}, x.Shape()[2:]...)
	if !target.Shape().Equal(want) {
		return nil, fmt.Errorf("the target %v must have shape %v (the input %v without its class axis)", target.Shape(), want, x.Shape())
	}
	if weight != nil && (weight.Rank() != 1 || weight.Shape()[0] != x.Shape()[1]) {
		return nil, fmt.Errorf("the weight %v must be [%d], one per class", weight.Shape(), x.Shape()[1])
	}
	if target.DType() != tensor.Int32 && target.DType() != tensor.Int64 {
		target = ops.Cast(target, tensor.Int64)
	}
	red := n.attrString("reduction", "mean")
	if red != "none" && red != "sum" && red != "mean" {
		return nil, fmt.Errorf("reduction %q: want none, sum or mean", red)
	}
	t := target
	var valid *graph.Node
	if n.hasAttr("ignore_index") {
		valid = ops.Not(ops.Equal(target, ops.Scalar(target, float64(n.attrInt("ignore_index", 0)))))
		// An ignored target may be any value: read class 0 there.
		t = ops.Where(valid, target, ops.Scalar(target, 0))
	}
	loss := ops.Neg(ops.Squeeze(ops.TakeAlongAxis(x, ops.ExpandDims(t, 1), 1), 1))
	var w *graph.Node
	if weight != nil {
		w = ops.Gather(weight, t, 0)
	}
	if valid != nil {
		v := ops.Cast(valid, x.DType())
		if w == nil {
			w = v
		} else {
			w = ops.Mul(w, v)
		}
	}
	if w != nil {
		loss = ops.Mul(loss, w)
	}
	switch red {
	case "sum":
		return ops.Sum(loss), nil
	case "mean":
		if w != nil {
			return ops.Div(ops.Sum(loss), ops.Sum(w)), nil
		}
		return ops.Mean(loss), nil
	}
	return loss, nil
}

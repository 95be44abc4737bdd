package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func defineNormalisations() {
	// Softmax and LogSoftmax are primitives, not composites of Max, Exp and
	// Sum, so that a backend evaluates them in one stable pass per row.
	perElem := perElement(10)
	define(&Def{Op: OpSoftmax, Name: "Softmax", Arity: 1, Kind: Normalisation, DType: sameDType(floats), Shape: shAxis, Differentiable: true, FLOPs: perElem})
	define(&Def{Op: OpLogSoftmax, Name: "LogSoftmax", Arity: 1, Kind: Normalisation, DType: sameDType(floats), Shape: shAxis, Differentiable: true, FLOPs: perElem})
}

func normalise(op graph.Op, x *graph.Node, axis int) *graph.Node {
	d := table[op]
	if _, bad := graph.Operands(d.Name, x); bad != nil {
		return bad
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, d.Name, []*graph.Node{x}, "%v", err)
	}
	return Apply(op, AxisAttr{Axis: ax}, x)
}

// Softmax returns exp(x) / sum(exp(x)) along axis (negative counts from
// the end), computed as exp(x - max) / sum(exp(x - max)) so inputs of any
// magnitude are stable.
func Softmax(x *graph.Node, axis int) *graph.Node { return normalise(OpSoftmax, x, axis) }

// LogSoftmax returns x - log(sum(exp(x))) along axis, computed stably as
// (x - max) - log(sum(exp(x - max))).
func LogSoftmax(x *graph.Node, axis int) *graph.Node { return normalise(OpLogSoftmax, x, axis) }

// LogSumExp returns log(sum(exp(x))) over the given axes, stably
// (max + log(sum(exp(x - max)))).
func LogSumExp(x *graph.Node, axes ...int) *graph.Node {
	if _, bad := graph.Operands("LogSumExp", x); bad != nil {
		return bad
	}
	m := StopGradient(MaxKeepDims(x, axes...))
	s := Log(SumKeepDims(Exp(Sub(x, m)), axes...))
	out := Add(s, m)
	if !out.Valid() {
		return out
	}
	ax, _ := normAxes(axes, x.Rank())
	keep := out.Shape()
	var shape []int
	j := 0
	for i := range keep {
		if j < len(ax) && ax[j] == i {
			j++
			continue
		}
		shape = append(shape, keep[i])
	}
	return Reshape(out, shape...)
}

// SoftmaxCrossEntropy returns the cross-entropy between the softmax of
// logits along axis and the target distribution labels (same shape; each
// row should sum to 1, as a one-hot encoding does): -sum(labels *
// LogSoftmax(logits)) along axis, one value per row. It is computed
// through LogSoftmax, so it is stable for logits of any magnitude, and its
// gradient with respect to the logits is softmax(logits) - labels.
func SoftmaxCrossEntropy(logits, labels *graph.Node, axis int) *graph.Node {
	if _, bad := graph.Operands("SoftmaxCrossEntropy", logits, labels); bad != nil {
		return bad
	}
	if !logits.Shape().Equal(labels.Shape()) {
		return fail(graph.ErrShape, "SoftmaxCrossEntropy", []*graph.Node{logits, labels}, "labels must have the logits' shape")
	}
	return Neg(Sum(Mul(labels, LogSoftmax(logits, axis)), axis))
}

// OneHot returns a tensor of dtype dt with a new last axis of length
// classes: element [..., k] is 1 where indices[...] == k, else 0. indices
// must be integers; values outside [0, classes) give all-zero rows.
func OneHot(indices *graph.Node, classes int, dt tensor.DType) *graph.Node {
	g, bad := graph.Operands("OneHot", indices)
	if bad != nil {
		return bad
	}
	if !indices.DType().IsInt() {
		return fail(graph.ErrDType, "OneHot", []*graph.Node{indices}, "indices must be integers, got %v", indices.DType())
	}
	if classes < 1 {
		return fail(graph.ErrShape, "OneHot", []*graph.Node{indices}, "classes must be positive, got %d", classes)
	}
	iota := make([]float64, classes)
	for i := range iota {
		iota[i] = float64(i)
	}
	t, _ := tensor.FromFloat64s(indices.DType(), iota, classes)
	return Cast(Equal(ExpandDims(indices, -1), g.ConstShared(t, "")), dt)
}

// SparseSoftmaxCrossEntropy is SoftmaxCrossEntropy over the last axis with
// the target given as integer class indices (one per row of logits).
func SparseSoftmaxCrossEntropy(logits, classes *graph.Node) *graph.Node {
	if _, bad := graph.Operands("SparseSoftmaxCrossEntropy", logits, classes); bad != nil {
		return bad
	}
	if logits.Rank() == 0 || !classes.Shape().Equal(logits.Shape()[:logits.Rank()-1]) {
		return fail(graph.ErrShape, "SparseSoftmaxCrossEntropy", []*graph.Node{logits, classes}, "classes must have the logits' shape without the last axis")
	}
	return SoftmaxCrossEntropy(logits, OneHot(classes, logits.Shape()[logits.Rank()-1], logits.DType()), -1)
}

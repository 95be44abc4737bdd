package ops

import (
	"errors"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Op codes of the normalisations.
var OpSoftmax, OpLogSoftmax graph.Op

func init() {
	// Softmax and LogSoftmax are primitives, not composites of Max, Exp and
	// Sum, so that a backend evaluates them in one stable pass per row.
	norm := func(name, doc string, grad opdef.GradRule) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Normalisation, DType: sameDType(floats), Shape: shAxis, FLOPs: 10, Ref: refSoftmax, Grad: grad})
	}
	OpSoftmax = norm("Softmax", "exp(x - max) / sum(exp(x - max)) along an axis", func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			axis := n.Attr().(opdef.AxisAttr).Axis
			return Mul(n, Sub(g, SumKeepDims(Mul(g, n), axis)))
		})
	})
	OpLogSoftmax = norm("LogSoftmax", "(x - max) - log(sum(exp(x - max))) along an axis", func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			axis := n.Attr().(opdef.AxisAttr).Axis
			return Sub(g, Mul(Exp(n), SumKeepDims(g, axis)))
		})
	})
}

// refSoftmax computes each line along the axis in float64: the maximum,
// the sum of exp(x - max), then each element.
func refSoftmax(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	axis := n.Attr().(opdef.AxisAttr).Axis
	A := x.Shape[axis]
	idx := make([]int, len(x.Shape))
	line := make([]int, A)
	for p := range x.F {
		opdef.Index(x.Shape, p, idx)
		if idx[axis] != 0 {
			continue
		}
		m := math.Inf(-1)
		for i := range line {
			idx[axis] = i
			line[i] = opdef.Flat(x.Shape, idx)
			m = math.Max(m, x.F[line[i]])
		}
		var s float64
		for _, q := range line {
			s += math.Exp(x.F[q] - m)
		}
		for _, q := range line {
			if n.Op() == OpSoftmax {
				out.F[q] = math.Exp(x.F[q]-m) / s
			} else {
				out.F[q] = x.F[q] - m - math.Log(s)
			}
		}
	}
	return out, nil
}

func normalise(op graph.Op, x *graph.Node, axis int) *graph.Node {
	ax, bad := axisOf(opdef.Lookup(op).Name, x, axis)
	if bad != nil {
		return bad
	}
	return Apply(op, opdef.AxisAttr{Axis: ax}, x)
}

// Softmax returns exp(x) / sum(exp(x)) along axis (negative counts from
// the end), computed as exp(x - max) / sum(exp(x - max)) so inputs of any
// magnitude are stable.
func Softmax(x *graph.Node, axis int) *graph.Node { return normalise(OpSoftmax, x, axis) }

// LogSoftmax returns x - log(sum(exp(x))) along axis, computed stably as
// (x - max) - log(sum(exp(x - max))).
func LogSoftmax(x *graph.Node, axis int) *graph.Node { return normalise(OpLogSoftmax, x, axis) }

// LogSumExp returns log(sum(exp(x))) over the given axes, stably
// (max + log(sum(exp(x - max)))). A row of all -Inf gives -Inf and a row
// with a +Inf gives +Inf (a non-finite max is replaced by 0 before it is
// subtracted, as JAX does). The gradient is the softmax of the row; it is
// NaN only where the value is not finite (at a +Inf entry, and for a row
// of all -Inf, as in PyTorch and JAX).
func LogSumExp(x *graph.Node, axes ...int) *graph.Node {
	if _, bad := graph.Operands("LogSumExp", x); bad != nil {
		return bad
	}
	m := StopGradient(MaxKeepDims(x, axes...))
	// Where the max is ±Inf (or NaN), x - max would be NaN; shift by 0
	// instead: exp then gives 0 for -Inf entries and +Inf for +Inf ones.
	finite := Less(Abs(m), Scalar(m, math.Inf(1)))
	m = Where(finite, m, Scalar(m, 0))
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
//
// A class whose label is 0 adds nothing, even where its log-probability
// is -Inf (a logit masked with -Inf): 0·log 0 is taken as 0, so masked
// logits give the finite loss of the other classes, as PyTorch's
// cross_entropy does (and the gradient with respect to such a label is
// 0). A label other than 0 on a masked logit gives +Inf.
func SoftmaxCrossEntropy(logits, labels *graph.Node, axis int) *graph.Node {
	if _, bad := graph.Operands("SoftmaxCrossEntropy", logits, labels); bad != nil {
		return bad
	}
	if !logits.Shape().Equal(labels.Shape()) {
		return fail(graph.ErrShape, "SoftmaxCrossEntropy", []*graph.Node{logits, labels}, "labels must have the logits' shape")
	}
	ls := LogSoftmax(logits, axis)
	// labels·ls, but 0 where a label of 0 meets a log-probability of -Inf.
	// The -Inf is replaced before the product (rather than the product
	// after), so the gradient with respect to the labels, -ls, stays
	// finite there too, and stays -ls wherever ls is finite.
	masked := And(Equal(labels, Scalar(labels, 0)), Equal(ls, Scalar(ls, math.Inf(-1))))
	safe := Where(masked, Scalar(ls, 0), ls)
	return Neg(Sum(Mul(labels, safe), axis))
}

// OneHot returns a tensor of dtype dt with a new last axis of length
// classes: element [..., k] is 1 where indices[...] == k, else 0. indices
// must be integers; values outside [0, classes) give all-zero rows.
//
// The class numbers 0..classes-1 are built from O(log classes) small
// nodes, which the compiler folds into one constant when it is small and
// computes at run time when it is not: building never allocates in
// proportion to classes.
func OneHot(indices *graph.Node, classes int, dt tensor.DType) *graph.Node {
	g, bad := graph.Operands("OneHot", indices)
	if bad != nil {
		return bad
	}
	operands := []*graph.Node{indices}
	if !indices.DType().IsInt() {
		return fail(graph.ErrDType, "OneHot", operands, "indices must be integers, got %v", indices.DType())
	}
	if classes < 1 {
		return fail(graph.ErrShape, "OneHot", operands, "classes must be positive, got %d", classes)
	}
	idt := indices.DType()
	if idt == tensor.Int32 && classes-1 > math.MaxInt32 {
		idt = tensor.Int64
	}
	out := append(append(tensor.Shape{}, indices.Shape()...), classes)
	for _, c := range []struct {
		dt    tensor.DType
		shape tensor.Shape
	}{{dt, out}, {tensor.Bool, out}, {idt, tensor.Shape{classes}}} {
		if err := graph.CheckType(c.dt, c.shape); err != nil {
			return fail(errors.Unwrap(err), "OneHot", operands, "%d classes: %v", classes, err)
		}
	}
	return Cast(Equal(ExpandDims(indices, -1), Iota(g, idt, 0, classes)), dt)
}

// intConst is a constant of integer dtype dt (Int32 or Int64) holding v:
// a scalar, or a one-element vector when shape is given.
func intConst(g *graph.Graph, dt tensor.DType, v int, shape ...int) *graph.Node {
	var t *tensor.Tensor
	switch {
	case dt == tensor.Int32 && len(shape) == 0:
		t = tensor.Scalar(int32(v))
	case dt == tensor.Int32:
		t, _ = tensor.New([]int32{int32(v)}, shape...)
	case len(shape) == 0:
		t = tensor.Scalar(int64(v))
	default:
		t, _ = tensor.New([]int64{int64(v)}, shape...)
	}
	return g.ConstShared(t, "")
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

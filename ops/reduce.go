package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func defineReductions() {
	inputSize := func(n *graph.Node) float64 { return float64(n.Input(0).Shape().Size()) }
	define(&Def{Op: OpSum, Name: "Sum", Arity: 1, Kind: Reduction, DType: sameDType(numeric), Shape: shReduce, Differentiable: true, FLOPs: inputSize})
	define(&Def{Op: OpMax, Name: "Max", Arity: 1, Kind: Reduction, DType: sameDType(numeric), Shape: shReduceNonEmpty, Differentiable: true, FLOPs: inputSize})
	define(&Def{Op: OpMin, Name: "Min", Arity: 1, Kind: Reduction, DType: sameDType(numeric), Shape: shReduceNonEmpty, Differentiable: true, FLOPs: inputSize})
	define(&Def{Op: OpArgMax, Name: "ArgMax", Arity: 1, Kind: Reduction, DType: toInt64(numeric), Shape: shReduceNonEmpty, FLOPs: inputSize})
	define(&Def{Op: OpArgMin, Name: "ArgMin", Arity: 1, Kind: Reduction, DType: toInt64(numeric), Shape: shReduceNonEmpty, FLOPs: inputSize})
}

// reduce builds a reduction after normalising its axes (negative axes
// count from the end; none means all).
func reduce(op graph.Op, x *graph.Node, axes []int, keep bool) *graph.Node {
	d := table[op]
	if _, bad := graph.Operands(d.Name, x); bad != nil {
		return bad
	}
	ax, err := normAxes(axes, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, d.Name, []*graph.Node{x}, "%v", err)
	}
	if op != OpSum {
		for _, a := range ax {
			if x.Shape()[a] == 0 {
				return fail(graph.ErrShape, d.Name, []*graph.Node{x}, "axis %d has length 0 and %s has no identity", a, d.Name)
			}
		}
	}
	return Apply(op, AxesAttr{Axes: ax, KeepDims: keep}, x)
}

// Sum adds the elements of x over the given axes (all axes if none;
// negative axes count from the end). The reduced axes are removed.
func Sum(x *graph.Node, axes ...int) *graph.Node { return reduce(OpSum, x, axes, false) }

// SumKeepDims is Sum keeping each reduced axis as a dimension of length 1.
func SumKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(OpSum, x, axes, true) }

// Max returns the largest element over the given axes; NaN propagates.
func Max(x *graph.Node, axes ...int) *graph.Node { return reduce(OpMax, x, axes, false) }

// MaxKeepDims is Max keeping the reduced axes with length 1.
func MaxKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(OpMax, x, axes, true) }

// Min returns the smallest element over the given axes; NaN propagates.
func Min(x *graph.Node, axes ...int) *graph.Node { return reduce(OpMin, x, axes, false) }

// MinKeepDims is Min keeping the reduced axes with length 1.
func MinKeepDims(x *graph.Node, axes ...int) *graph.Node { return reduce(OpMin, x, axes, true) }

// ArgMax returns the Int64 index of the largest element over the given
// axes: with one axis, the index along it; with several (or none, meaning
// all), the row-major index into the block the reduced axes span, as
// NumPy's argmax of the flattened array. Ties go to the first index; a NaN
// counts as the largest.
func ArgMax(x *graph.Node, axes ...int) *graph.Node { return reduce(OpArgMax, x, axes, false) }

// ArgMin is ArgMax for the smallest element.
func ArgMin(x *graph.Node, axes ...int) *graph.Node { return reduce(OpArgMin, x, axes, false) }

// Mean returns the arithmetic mean over the given axes (float dtypes only).
func Mean(x *graph.Node, axes ...int) *graph.Node { return mean(x, axes, false) }

// MeanKeepDims is Mean keeping the reduced axes with length 1.
func MeanKeepDims(x *graph.Node, axes ...int) *graph.Node { return mean(x, axes, true) }

func mean(x *graph.Node, axes []int, keep bool) *graph.Node {
	if _, bad := graph.Operands("Mean", x); bad != nil {
		return bad
	}
	if err := floats.check("", []tensor.DType{x.DType()}); err != nil {
		return fail(graph.ErrDType, "Mean", []*graph.Node{x}, "%v", err)
	}
	s := reduce(OpSum, x, axes, keep)
	if !s.Valid() {
		return s
	}
	count := x.Shape().Size() / max(1, s.Shape().Size())
	if s.Shape().Size() == 0 {
		count = 0
	}
	return Div(s, Scalar(x, float64(count)))
}

// SumTo sums x down to shape, undoing a NumPy broadcast from shape to x's
// shape: leading axes are summed away and axes where shape has 1 are
// summed with keepdims. Reverse-mode rules use it for broadcast operands.
func SumTo(x *graph.Node, shape tensor.Shape) *graph.Node {
	if _, bad := graph.Operands("SumTo", x); bad != nil {
		return bad
	}
	xs := x.Shape()
	if xs.Equal(shape) {
		return x
	}
	lead := len(xs) - len(shape)
	if lead < 0 {
		return fail(graph.ErrShape, "SumTo", []*graph.Node{x}, "target %v has higher rank", shape)
	}
	var axes []int
	for i := 0; i < lead; i++ {
		axes = append(axes, i)
	}
	for i, d := range shape {
		if d == 1 && xs[lead+i] != 1 {
			axes = append(axes, lead+i)
		} else if d != xs[lead+i] {
			return fail(graph.ErrShape, "SumTo", []*graph.Node{x}, "%v does not broadcast to %v", shape, xs)
		}
	}
	s := x
	if len(axes) > 0 {
		s = SumKeepDims(x, axes...)
	}
	return Reshape(s, shape...)
}

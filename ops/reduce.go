package ops

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Op codes of the reductions.
var OpSum, OpMax, OpMin, OpArgMax, OpArgMin graph.Op

func init() {
	inputSize := func(n *graph.Node) float64 { return float64(n.Input(0).Shape().Size()) }
	red := func(name, doc string, dt opdef.DTypeRule, sh opdef.ShapeRule, fuse bool, grad opdef.GradRule) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Reduction, DType: dt, Shape: sh, Grad: grad,
			Cost: inputSize, Ref: refReduce, FuseReduce: fuse})
	}
	OpSum = red("Sum", "sum over axes (integers wrap); ops.Sum casts int8, int16 and uint8 to int64 first (NumPy, PyTorch)", sameDType(opdef.NumericOrComplex), shReduce, true, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			x := n.Input(0)
			return BroadcastTo(Reshape(g, keepShape(x, n.Attr().(opdef.AxesAttr))...), x.Shape()...)
		})
	})
	OpMax = red("Max", "largest element over axes; NaN propagates", sameDType(numeric), shReduceNonEmpty, true, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return selectGrad(n, g, OpArgMax) })
	})
	OpMin = red("Min", "smallest element over axes; NaN propagates", sameDType(numeric), shReduceNonEmpty, true, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return selectGrad(n, g, OpArgMin) })
	})
	OpArgMax = red("ArgMax", "row-major index of the largest element over axes (first of ties; NaN is largest)", toInt64(numeric), shReduceNonEmpty, false, nil)
	OpArgMin = red("ArgMin", "row-major index of the smallest element over axes (first of ties; NaN is smallest)", toInt64(numeric), shReduceNonEmpty, false, nil)
}

// refReduce is the reductions' reference: every element visited in
// row-major order; integers summed exactly; a NaN is the extremum (the
// first one wins); ArgMax numbers positions row-major over the reduced
// axes.
func refReduce(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x := in[0]
	a := n.Attr().(opdef.AxesAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	op := n.Op()
	seen := make([]bool, out.Len())
	bestF := make([]float64, out.Len())
	bestI := make([]int64, out.Len())
	eachReduced(x.Shape, out.Shape, a, func(p, o int, r int64) {
		if op == OpSum {
			switch {
			case x.DType.IsInt():
				out.I[o] += x.I[p]
			case x.DType.IsComplex():
				out.C[o] += x.C[p]
			default:
				out.F[o] += x.F[p]
			}
			return
		}
		isMax := op == OpMax || op == OpArgMax
		better := false
		if x.DType.IsInt() {
			v := x.I[p]
			better = !seen[o] || (isMax && v > bestI[o]) || (!isMax && v < bestI[o])
			if better {
				bestI[o] = v
			}
		} else {
			v := x.F[p]
			better = !seen[o] || (isMax && v > bestF[o]) || (!isMax && v < bestF[o]) || (math.IsNaN(v) && !math.IsNaN(bestF[o]))
			if better {
				bestF[o] = v
			}
		}
		if better {
			switch {
			case op == OpArgMax || op == OpArgMin:
				out.I[o] = r
			case x.DType.IsInt():
				out.I[o] = x.I[p]
			default:
				out.F[o] = x.F[p]
			}
		}
		seen[o] = true
	})
	return out, nil
}

// eachReduced calls f for every position p of a value of shape s, in
// row-major order, with o its position in the reduction's output (of
// shape outShape) and r its row-major index over the reduced axes of a.
func eachReduced(s, outShape tensor.Shape, a opdef.AxesAttr, f func(p, o int, r int64)) {
	red := make([]bool, len(s))
	for _, ax := range a.Axes {
		red[ax] = true
	}
	var redShape tensor.Shape
	for i, d := range s {
		if red[i] {
			redShape = append(redShape, d)
		}
	}
	idx := make([]int, len(s))
	var oidx, ridx []int
	for p := 0; p < s.Size(); p++ {
		opdef.Index(s, p, idx)
		oidx, ridx = oidx[:0], ridx[:0]
		for i, k := range idx {
			switch {
			case !red[i]:
				oidx = append(oidx, k)
			case a.KeepDims:
				oidx = append(oidx, 0)
			}
			if red[i] {
				ridx = append(ridx, k)
			}
		}
		f(p, opdef.Flat(outShape, oidx), int64(opdef.Flat(redShape, ridx)))
	}
}

// reduce builds a reduction after normalising its axes (negative axes
// count from the end; none means all).
func reduce(op graph.Op, x *graph.Node, axes []int, keep bool) *graph.Node {
	d := opdef.Lookup(op)
	if _, bad := graph.Operands(d.Name, x); bad != nil {
		return bad
	}
	ax, err := normAxes(axes, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, d.Name, []*graph.Node{x}, "%v", err)
	}
	if op != OpSum && op != OpProd && op != OpAny && op != OpAll { // the reductions without an identity
		for _, a := range ax {
			if x.Shape()[a] == 0 {
				return fail(graph.ErrShape, d.Name, []*graph.Node{x}, "axis %d has length 0 and %s has no identity", a, d.Name)
			}
		}
	}
	return Apply(op, opdef.AxesAttr{Axes: ax, KeepDims: keep}, x)
}

// Sum adds the elements of x over the given axes (all axes if none;
// negative axes count from the end). The reduced axes are removed.
//
// The sum of a small integer dtype (Int8, Int16, Uint8) is Int64: x is
// cast to Int64 first, so that a sum of many small values does not wrap,
// as NumPy (numpy.sum: "integers smaller than the default platform
// integer are upcast") and PyTorch (torch.sum of any integer dtype gives
// int64) do; the Array API's sum asks the same of signed integers (an
// unsigned one would get an unsigned dtype of the default width, which
// loom does not have: Int64 holds every sum of Uint8 values anyway).
// Int32 and Int64 keep their dtype and wrap on overflow, as before. The
// op OpSum itself keeps its operand's dtype (wrapping), for ops.Apply.
func Sum(x *graph.Node, axes ...int) *graph.Node { return reduce(OpSum, widenSum(x), axes, false) }

// SumKeepDims is Sum keeping each reduced axis as a dimension of length 1
// (small integers sum to Int64, as Sum).
func SumKeepDims(x *graph.Node, axes ...int) *graph.Node {
	return reduce(OpSum, widenSum(x), axes, true)
}

// widenSum casts an Int8, Int16 or Uint8 operand of Sum, Prod, Cumsum
// or Cumprod to Int64 (see Sum); other operands, invalid ones included,
// are returned as they are.
func widenSum(x *graph.Node) *graph.Node {
	if x != nil && x.Valid() && x.DType().IsInt() && x.DType().Size() < 4 {
		return Cast(x, tensor.Int64)
	}
	return x
}

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
	if err := opdef.FloatsOrComplex.Check([]tensor.DType{x.DType()}); err != nil {
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
// The result has x's dtype (small integers wrap, unlike Sum's).
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
		s = reduce(OpSum, x, axes, true) // keeps x's dtype, small integers too
	}
	return Reshape(s, shape...)
}

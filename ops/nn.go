package ops

import (
	"github.com/loomgraph/loom/graph"
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

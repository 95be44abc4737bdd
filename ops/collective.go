package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Collective ops: values combined over the ranks of a communicator
// (package dist; a Program gets one at Compile with exec.WithCommunicator).
// Every rank builds and compiles the same graph and runs it; a collective
// op's value on each rank depends on every rank's operand. The graph is
// built for a number of ranks, size, which Compile checks against the
// communicator. With one rank every collective is the identity.
//
// The gradients treat the ranks' losses as one sum, as data-parallel
// training does (each rank's loss is its part of the whole): the gradient
// of a sum-AllReduce is a sum-AllReduce of the cotangents, of AllGather a
// sum-ReduceScatter, of ReduceScatter an AllGather, of Broadcast a
// sum-Reduce to the root, of Reduce a Broadcast from the root; max and
// min send the summed cotangent to the ranks holding the extreme, split
// evenly among ties.

// ReduceOp is how a collective op combines the ranks' values.
type ReduceOp = opdef.ReduceOp

// The reductions of AllReduce, ReduceScatter and Reduce. Mean is the sum
// divided by the number of ranks (float and complex dtypes only).
const (
	ReduceSum  = opdef.ReduceSum
	ReduceMean = opdef.ReduceMean
	ReduceMax  = opdef.ReduceMax
	ReduceMin  = opdef.ReduceMin
)

// Op codes of the collective ops.
var OpAllReduce, OpAllGather, OpReduceScatter, OpBroadcast, OpReduce graph.Op

func init() {
	commBytes := func(n *graph.Node) float64 { return float64(n.Shape().Size()) } // 1 "FLOP" per element moved
	OpAllReduce = define(&opdef.Def{Name: "AllReduce", Doc: "the elementwise sum, mean, max or min of x over the ranks (CollectiveAttr), on every rank",
		Arity: 1, Kind: opdef.Collective, DType: dtCollective, Shape: shCollective, Cost: commBytes, Ref: refCollective,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.CollectiveAttr)
				switch a.Reduce {
				case ReduceSum, ReduceMean:
					return AllReduce(g, a.Reduce, a.Size)
				}
				return toExtremes(n.Input(0), n, AllReduce(g, ReduceSum, a.Size), func(at *graph.Node) *graph.Node {
					return AllReduce(at, ReduceSum, a.Size)
				})
			})
		}})
	OpAllGather = define(&opdef.Def{Name: "AllGather", Doc: "the ranks' x concatenated in rank order along an axis (CollectiveAttr), on every rank",
		Arity: 1, Kind: opdef.Collective, DType: dtCollective, Shape: shAllGather, Cost: commBytes, Ref: refCollective,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.CollectiveAttr)
				return ReduceScatter(g, ReduceSum, a.Axis, a.Size)
			})
		}})
	OpReduceScatter = define(&opdef.Def{Name: "ReduceScatter", Doc: "block r (of size equal blocks along an axis) of the ranks' elementwise sum, mean, max or min, on rank r (CollectiveAttr)",
		Arity: 1, Kind: opdef.Collective, DType: dtCollective, Shape: shReduceScatter, Cost: commBytes, Ref: refCollective,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.CollectiveAttr)
				switch a.Reduce {
				case ReduceSum:
					return AllGather(g, a.Axis, a.Size)
				case ReduceMean:
					return Div(AllGather(g, a.Axis, a.Size), Scalar(g, float64(a.Size)))
				}
				// Max, min: to the ranks holding the extreme of each element,
				// split among ties (the counts are gathered like the values).
				return toExtremes(n.Input(0), AllGather(n, a.Axis, a.Size), AllGather(g, a.Axis, a.Size), func(at *graph.Node) *graph.Node {
					return AllGather(ReduceScatter(at, ReduceSum, a.Axis, a.Size), a.Axis, a.Size)
				})
			})
		}})
	OpBroadcast = define(&opdef.Def{Name: "Broadcast", Doc: "the root rank's x, on every rank (CollectiveAttr)",
		Arity: 1, Kind: opdef.Collective, DType: dtCollective, Shape: shCollective, Cost: commBytes, Ref: refCollective,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.CollectiveAttr)
				return Reduce(g, ReduceSum, a.Root, a.Size)
			})
		}})
	OpReduce = define(&opdef.Def{Name: "Reduce", Doc: "the elementwise sum, mean, max or min of x over the ranks on the root rank, zeros on the others (CollectiveAttr)",
		Arity: 1, Kind: opdef.Collective, DType: dtCollective, Shape: shCollective, Cost: commBytes, Ref: refCollective,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.CollectiveAttr)
				gb := Broadcast(g, a.Root, a.Size)
				switch a.Reduce {
				case ReduceSum:
					return gb
				case ReduceMean:
					return Div(gb, Scalar(g, float64(a.Size)))
				}
				return toExtremes(n.Input(0), Broadcast(n, a.Root, a.Size), gb, func(at *graph.Node) *graph.Node {
					return AllReduce(at, ReduceSum, a.Size)
				})
			})
		}})
}

// toExtremes is the gradient of a max or min over the ranks: the summed
// cotangent g goes to the elements of x equal to the extreme y, divided
// by count(at), the number of ranks holding it (at: 1 where x is y).
func toExtremes(x, y, g *graph.Node, count func(at *graph.Node) *graph.Node) *graph.Node {
	at := Cast(Equal(x, y), x.DType())
	return Div(Mul(g, at), count(at))
}

// AllReduce returns the elementwise reduction (ReduceSum, ReduceMean,
// ReduceMax, ReduceMin) of x over the size ranks of the communicator, the
// same on every rank (MPI_Allreduce, torch.distributed.all_reduce,
// jax.lax.psum/pmean/pmax/pmin).
func AllReduce(x *graph.Node, op ReduceOp, size int) *graph.Node {
	return Apply(OpAllReduce, opdef.CollectiveAttr{Size: size, Reduce: op}, x)
}

// AllGather returns the size ranks' x concatenated in rank order along
// axis (negative counts from the end): its length there is size times
// x's (MPI_Allgather, jax.lax.all_gather with tiled=True).
func AllGather(x *graph.Node, axis, size int) *graph.Node {
	ax, bad := axisOf("AllGather", x, axis)
	if bad != nil {
		return bad
	}
	return Apply(OpAllGather, opdef.CollectiveAttr{Size: size, Axis: ax}, x)
}

// ReduceScatter reduces x elementwise over the size ranks and returns, on
// rank r, block r of the result cut into size equal blocks along axis,
// whose length must divide by size (MPI_Reduce_scatter_block,
// jax.lax.psum_scatter with tiled=True).
func ReduceScatter(x *graph.Node, op ReduceOp, axis, size int) *graph.Node {
	ax, bad := axisOf("ReduceScatter", x, axis)
	if bad != nil {
		return bad
	}
	return Apply(OpReduceScatter, opdef.CollectiveAttr{Size: size, Reduce: op, Axis: ax}, x)
}

// Broadcast returns rank root's x on every one of the size ranks
// (MPI_Bcast, torch.distributed.broadcast). Not to be confused with
// BroadcastTo, which repeats an array along new axes.
func Broadcast(x *graph.Node, root, size int) *graph.Node {
	return Apply(OpBroadcast, opdef.CollectiveAttr{Size: size, Root: root}, x)
}

// Reduce returns the elementwise reduction of x over the size ranks on
// rank root, and zeros of x's type on the other ranks (MPI_Reduce; the
// zeros make it a value on every rank, as the graph needs).
func Reduce(x *graph.Node, op ReduceOp, root, size int) *graph.Node {
	return Apply(OpReduce, opdef.CollectiveAttr{Size: size, Reduce: op, Root: root}, x)
}

// ---- rules ----

func dtCollective(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, ok := attr.(opdef.CollectiveAttr)
	if !ok {
		return 0, argErr("needs a CollectiveAttr attribute, got %T", attr)
	}
	if a.Reduce < ReduceSum || a.Reduce > ReduceMin {
		return 0, argErr("unknown reduction %v (ReduceSum, ReduceMean, ReduceMax or ReduceMin)", a.Reduce)
	}
	switch {
	case a.Reduce == ReduceMean:
		if err := opdef.FloatsOrComplex.Check(in); err != nil {
			return 0, err
		}
	case a.Reduce == ReduceMax || a.Reduce == ReduceMin:
		if err := numeric.Check(in); err != nil {
			return 0, err
		}
	default:
		if err := opdef.NumericOrComplex.Check(in); err != nil {
			return 0, err
		}
	}
	return in[0], nil
}

// shCollective is the shape rule of the collective ops without an axis
// (AllReduce, Broadcast, Reduce): the operand's shape.
func shCollective(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, err := collectiveAttr(attr)
	if err != nil {
		return nil, err
	}
	if a.Axis != 0 {
		return nil, argErr("axis %d: this collective takes no axis", a.Axis)
	}
	return in[0].Clone(), nil
}

func collectiveAttr(attr graph.Attr) (opdef.CollectiveAttr, error) {
	a, ok := attr.(opdef.CollectiveAttr)
	if !ok {
		return a, argErr("needs a CollectiveAttr attribute, got %T", attr)
	}
	if a.Size < 1 {
		return a, argErr("the number of ranks is %d: it must be at least 1", a.Size)
	}
	if a.Root < 0 || a.Root >= a.Size {
		return a, argErr("root rank %d is out of range for %d ranks (valid: 0..%d)", a.Root, a.Size, a.Size-1)
	}
	return a, nil
}

// shAxisCollective checks the axis of AllGather and ReduceScatter.
func shAxisCollective(in []tensor.Shape, attr graph.Attr) (tensor.Shape, opdef.CollectiveAttr, error) {
	a, err := collectiveAttr(attr)
	if err != nil {
		return nil, a, err
	}
	s := in[0].Clone()
	if len(s) == 0 {
		return nil, a, shapeErr("needs an operand of rank at least 1 (an axis to concatenate or cut along), got a scalar: ops.Reshape it to [1]")
	}
	if a.Axis < 0 || a.Axis >= len(s) {
		return nil, a, shapeErr("axis %d is out of range for rank %d", a.Axis, len(s))
	}
	return s, a, nil
}

// shAllGather: the axis times the ranks.
func shAllGather(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	s, a, err := shAxisCollective(in, attr)
	if err != nil {
		return nil, err
	}
	s[a.Axis] *= a.Size
	return s, nil
}

// shReduceScatter: the axis divided by the ranks.
func shReduceScatter(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	s, a, err := shAxisCollective(in, attr)
	if err != nil {
		return nil, err
	}
	if s[a.Axis]%a.Size != 0 {
		return nil, shapeErr("axis %d has length %d, which does not divide into %d equal blocks (one per rank)", a.Axis, s[a.Axis], a.Size)
	}
	s[a.Axis] /= a.Size
	return s, nil
}

// refCollective evaluates a collective op for one rank (rank 0 of a
// group of Size 1): every collective is then the identity. The reference
// evaluator cannot run several ranks.
func refCollective(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.CollectiveAttr)
	if a.Size != 1 {
		return nil, argErr("%s over %d ranks: the reference evaluator runs one rank (compile and run it with a communicator)", n.Op(), a.Size)
	}
	v := opdef.NewValue(in[0].DType, in[0].Shape)
	copy(v.F, in[0].F)
	copy(v.I, in[0].I)
	copy(v.C, in[0].C)
	return v, nil
}

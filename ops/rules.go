package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
)

// Shorthands for the rule helpers of internal/opdef that the declarations
// use.
var (
	sameDType        = opdef.SameDType
	toBool           = opdef.ToBool
	toInt64          = opdef.ToInt64
	shBroadcast      = opdef.ShapeBroadcast
	shSame           = opdef.ShapeSame
	shReduce         = opdef.ShapeReduce
	shReduceNonEmpty = opdef.ShapeReduceNonEmpty
	shAxis           = opdef.ShapeAxis
	noAttr           = opdef.NoAttr
	addDims          = opdef.AddDims
	mulDims          = opdef.MulDims
	promote          = opdef.Promote
	mixedErr         = opdef.MixedErr
	validShape       = opdef.ValidShape
	broadcastsTo     = opdef.BroadcastsTo
	intList          = opdef.IntList
)

// axisOf checks the one operand x of the op named name and normalises
// axis against its rank; on failure it returns the error node to return.
func axisOf(name string, x *graph.Node, axis int) (int, *graph.Node) {
	if _, bad := graph.Operands(name, x); bad != nil {
		return 0, bad
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return 0, fail(graph.ErrShape, name, []*graph.Node{x}, "%v", err)
	}
	return ax, nil
}

// normAxis maps a possibly negative axis to 0..rank-1.
func normAxis(axis, rank int) (int, error) {
	a := axis
	if a < 0 {
		a += rank
	}
	if a < 0 || a >= rank {
		if rank == 0 {
			return 0, shapeErr("axis %d is out of range for a scalar (rank 0)", axis)
		}
		return 0, shapeErr("axis %d is out of range for rank %d (valid: %d..%d)", axis, rank, -rank, rank-1)
	}
	return a, nil
}

// normAxes normalises, checks and sorts reduction axes. No axes means all.
func normAxes(axes []int, rank int) ([]int, error) {
	if len(axes) == 0 {
		all := make([]int, rank)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	seen := make([]bool, rank)
	out := make([]int, 0, len(axes))
	for _, ax := range axes {
		a, err := normAxis(ax, rank)
		if err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, shapeErr("axis %d is repeated in %s", ax, intList(axes))
		}
		seen[a] = true
	}
	for a, s := range seen {
		if s {
			out = append(out, a)
		}
	}
	return out, nil
}

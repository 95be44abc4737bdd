package ops

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// dtypeSet is a set of admitted dtypes, with the phrase used in messages.
type dtypeSet struct {
	ok   func(tensor.DType) bool
	what string
}

var (
	numeric = dtypeSet{func(d tensor.DType) bool { return d.IsInt() || d == tensor.Float32 || d == tensor.Float64 }, "a numeric (integer or float) dtype"}
	floats  = dtypeSet{func(d tensor.DType) bool { return d == tensor.Float32 || d == tensor.Float64 }, "a float dtype (float32 or float64)"}
	bools   = dtypeSet{func(d tensor.DType) bool { return d == tensor.Bool }, "bool"}
	compute = dtypeSet{func(d tensor.DType) bool { return d.Valid() && !d.IsStorage() }, "a compute dtype (bool, integer, float32 or float64)"}
	anyType = dtypeSet{func(d tensor.DType) bool { return d.Valid() }, "any dtype"}
)

func (s dtypeSet) check(op string, in []tensor.DType) error {
	for i, d := range in {
		if !s.ok(d) {
			hint := ""
			switch {
			case d.IsStorage():
				hint = "; " + d.String() + " is a storage type: ops.Cast it to float32 first"
			case s.ok(tensor.Float32) && !d.IsFloat():
				hint = "; use ops.Cast"
			}
			if len(in) == 1 {
				return dtypeErr("requires %s, got %v%s", s.what, d, hint)
			}
			return dtypeErr("operand %d: requires %s, got %v%s", i, s.what, d, hint)
		}
	}
	return nil
}

// sameDType: every operand has the same dtype, from set; the result has it.
func sameDType(s dtypeSet) DTypeRule {
	return func(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
		if err := allEqual(in); err != nil {
			return 0, err
		}
		if err := s.check("", in); err != nil {
			return 0, err
		}
		return in[0], nil
	}
}

// toBool: every operand has the same dtype, from set; the result is Bool.
func toBool(s dtypeSet) DTypeRule {
	return func(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
		if err := allEqual(in); err != nil {
			return 0, err
		}
		if err := s.check("", in); err != nil {
			return 0, err
		}
		return tensor.Bool, nil
	}
}

// toInt64: one operand from set; the result is Int64 (ArgMax).
func toInt64(s dtypeSet) DTypeRule {
	return func(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
		if err := s.check("", in); err != nil {
			return 0, err
		}
		return tensor.Int64, nil
	}
}

func allEqual(in []tensor.DType) error {
	for _, d := range in[1:] {
		if d != in[0] {
			return mixedErr(in[0], d)
		}
	}
	return nil
}

func mixedErr(a, b tensor.DType) error {
	if a.Kind() != b.Kind() {
		return dtypeErr("mixed dtypes %v and %v: loom does not mix %s and %s implicitly; use ops.Cast", a, b, a.Kind(), b.Kind())
	}
	return dtypeErr("mixed dtypes %v and %v; use ops.Cast", a, b)
}

func dtWhere(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
	if in[0] != tensor.Bool {
		return 0, dtypeErr("condition must be bool, got %v; compare with ops.NotEqual(x, ops.Scalar(x, 0))", in[0])
	}
	if in[1] != in[2] {
		return 0, mixedErr(in[1], in[2])
	}
	if err := compute.check("", in[1:]); err != nil {
		return 0, err
	}
	return in[1], nil
}

func dtCast(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, ok := attr.(CastAttr)
	if !ok {
		return 0, argErr("needs a CastAttr attribute, got %T", attr)
	}
	if !a.To.Valid() {
		return 0, dtypeErr("invalid target dtype %v", a.To)
	}
	return a.To, nil
}

func shCast(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if _, ok := attr.(CastAttr); !ok {
		return nil, argErr("needs a CastAttr attribute, got %T", attr)
	}
	return in[0].Clone(), nil
}

// promote returns the common dtype of two operands under the Array API
// rules loom follows: within a kind the wider type wins (int32+int64 is
// int64, float32+float64 is float64); kinds never mix.
func promote(a, b tensor.DType) (tensor.DType, error) {
	if a == b {
		return a, nil
	}
	if a.Kind() != b.Kind() || a.IsStorage() || b.IsStorage() {
		return 0, mixedErr(a, b)
	}
	if a.Size() >= b.Size() {
		return a, nil
	}
	return b, nil
}

// BroadcastShapes returns the NumPy broadcast of the given shapes: align
// trailing dimensions; each pair must be equal or contain a 1.
func BroadcastShapes(shapes ...tensor.Shape) (tensor.Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(tensor.Shape, rank)
	for i := range out {
		out[i] = 1
	}
	for si, s := range shapes {
		off := rank - len(s)
		for i, d := range s {
			o := out[off+i]
			switch {
			case d == o || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				if len(shapes) == 2 {
					return nil, shapeErr("shapes %v and %v do not broadcast: dimension %d is %d against %d (from the right: %d)", shapes[0], shapes[1], off+i, o, d, rank-off-i)
				}
				return nil, shapeErr("shape %v (operand %d) does not broadcast with the others: dimension %d is %d against %d", s, si, off+i, d, o)
			}
		}
	}
	return out, nil
}

func shBroadcast(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if err := noAttr(attr); err != nil {
		return nil, err
	}
	return BroadcastShapes(in...)
}

func shSame(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if err := noAttr(attr); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

// noAttr is the attribute check of the ops that take none.
func noAttr(attr graph.Attr) error {
	if attr != nil {
		return argErr("takes no attribute, got %T", attr)
	}
	return nil
}

// addDims returns a+b for non-negative dimensions, and false if the sum
// overflows an int.
func addDims(a, b int) (int, bool) {
	if a < 0 || b < 0 || a > math.MaxInt-b {
		return 0, false
	}
	return a + b, true
}

// mulDims returns a*b for non-negative dimensions, and false if the
// product overflows an int.
func mulDims(a, b int) (int, bool) {
	if a < 0 || b < 0 || (a != 0 && b > math.MaxInt/a) {
		return 0, false
	}
	return a * b, true
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

func shReduce(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(AxesAttr)
	if !ok {
		return nil, argErr("needs an AxesAttr attribute, got %T", attr)
	}
	s := in[0]
	reduced := make([]bool, len(s))
	prev := -1
	for _, ax := range a.Axes {
		if ax <= prev || ax >= len(s) {
			return nil, shapeErr("axes %v are not sorted, distinct and within rank %d", a.Axes, len(s))
		}
		prev = ax
		reduced[ax] = true
	}
	out := tensor.Shape{}
	for i, d := range s {
		switch {
		case !reduced[i]:
			out = append(out, d)
		case a.KeepDims:
			out = append(out, 1)
		}
	}
	return out, nil
}

// shReduceNonEmpty is shReduce for the reductions without an identity
// (Max, Min, ArgMax, ArgMin): no reduced axis may have length 0.
func shReduceNonEmpty(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	out, err := shReduce(in, attr)
	if err != nil {
		return nil, err
	}
	for _, ax := range attr.(AxesAttr).Axes {
		if in[0][ax] == 0 {
			return nil, shapeErr("axis %d has length 0 and the reduction has no identity", ax)
		}
	}
	return out, nil
}

func shAxis(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(AxisAttr)
	if !ok {
		return nil, argErr("needs an AxisAttr attribute, got %T", attr)
	}
	if a.Axis < 0 || a.Axis >= len(in[0]) {
		return nil, shapeErr("axis %d is out of range for rank %d", a.Axis, len(in[0]))
	}
	return in[0].Clone(), nil
}

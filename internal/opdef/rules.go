package opdef

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// DTypeSet is a set of admitted dtypes, with the phrase used in messages.
type DTypeSet struct {
	OK   func(tensor.DType) bool
	What string
}

// The dtype sets the rules use.
var (
	Numeric = DTypeSet{func(d tensor.DType) bool { return d.IsInt() || d == tensor.Float32 || d == tensor.Float64 }, "a numeric (integer or float) dtype"}
	Floats  = DTypeSet{func(d tensor.DType) bool { return d == tensor.Float32 || d == tensor.Float64 }, "a float dtype (float32 or float64)"}
	Ints    = DTypeSet{func(d tensor.DType) bool { return d.IsInt() }, "an integer dtype"}
	Bools   = DTypeSet{func(d tensor.DType) bool { return d == tensor.Bool }, "bool"}
	Compute = DTypeSet{func(d tensor.DType) bool { return d.Valid() && !d.IsStorage() && !d.IsComplex() }, "a compute dtype (bool, integer, float32 or float64)"}
	Any     = DTypeSet{func(d tensor.DType) bool { return d.Valid() }, "any dtype"}

	// The sets with the complex types. An op admits complex only where
	// both backends implement it, so Numeric and Compute leave them out.
	Complexes        = DTypeSet{func(d tensor.DType) bool { return d.IsComplex() }, "a complex dtype (complex64 or complex128)"}
	FloatsOrComplex  = DTypeSet{func(d tensor.DType) bool { return Floats.OK(d) || d.IsComplex() }, "a float or complex dtype (float32, float64, complex64 or complex128)"}
	NumericOrComplex = DTypeSet{func(d tensor.DType) bool { return Numeric.OK(d) || d.IsComplex() }, "a numeric dtype (integer, float or complex)"}
	ComputeOrComplex = DTypeSet{func(d tensor.DType) bool { return Compute.OK(d) || d.IsComplex() }, "a compute or complex dtype (bool, integer, float32, float64, complex64 or complex128)"}
)

// Check returns a DTypeErr naming the first operand dtype not in s.
func (s DTypeSet) Check(in []tensor.DType) error {
	for i, d := range in {
		if !s.OK(d) {
			hint := ""
			switch {
			case d.IsComplex():
				hint = "; the op does not take complex numbers (ops.Real, ops.Imag and ops.Abs give real ones)"
			case d.IsStorage():
				hint = "; " + d.String() + " is a storage type: ops.Cast it to float32 first"
			case s.OK(tensor.Float32) && !d.IsFloat():
				hint = "; use ops.Cast"
			}
			if len(in) == 1 {
				return DTypeErr("requires %s, got %v%s", s.What, d, hint)
			}
			return DTypeErr("operand %d: requires %s, got %v%s", i, s.What, d, hint)
		}
	}
	return nil
}

// SameDType is the rule "every operand has the same dtype, from s, and the
// result has it" (the shape rule checks the attribute).
func SameDType(s DTypeSet) DTypeRule {
	return func(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
		if err := AllEqual(in); err != nil {
			return 0, err
		}
		if err := s.Check(in); err != nil {
			return 0, err
		}
		return in[0], nil
	}
}

// ToBool is the rule "every operand has the same dtype, from s; the
// result is Bool".
func ToBool(s DTypeSet) DTypeRule {
	return func(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
		if err := AllEqual(in); err != nil {
			return 0, err
		}
		if err := s.Check(in); err != nil {
			return 0, err
		}
		return tensor.Bool, nil
	}
}

// ToInt64 is the rule "one operand from s; the result is Int64" (ArgMax).
func ToInt64(s DTypeSet) DTypeRule {
	return func(in []tensor.DType, _ graph.Attr) (tensor.DType, error) {
		if err := s.Check(in); err != nil {
			return 0, err
		}
		return tensor.Int64, nil
	}
}

// AllEqual returns an error if the dtypes differ.
func AllEqual(in []tensor.DType) error {
	for _, d := range in[1:] {
		if d != in[0] {
			return MixedErr(in[0], d)
		}
	}
	return nil
}

// MixedErr is the error for operands of two dtypes.
func MixedErr(a, b tensor.DType) error {
	if a.Kind() != b.Kind() {
		return DTypeErr("mixed dtypes %v and %v: loom does not mix %s and %s implicitly; use ops.Cast", a, b, a.Kind(), b.Kind())
	}
	return DTypeErr("mixed dtypes %v and %v; use ops.Cast", a, b)
}

// Promote returns the common dtype of two operands under the Array API's
// promotion rules, which loom follows: within a kind the wider type wins
// (int32+int64 is int64, float32+float64 is float64); an unsigned integer
// with a signed one gives the narrowest signed type that holds both
// (uint8+int8 is int16, uint8+int32 is int32); a float with a complex
// type gives the complex type whose parts hold both (float32+complex64 is
// complex64, float64+complex64 and float32+complex128 are complex128);
// bool, integer and float (or complex) never mix, nor does a storage
// float with anything.
func Promote(a, b tensor.DType) (tensor.DType, error) {
	if a == b {
		return a, nil
	}
	if a.IsComplex() || b.IsComplex() {
		ok := func(d tensor.DType) bool { return d.IsComplex() || d == tensor.Float32 || d == tensor.Float64 }
		if st := a; st.IsStorage() || b.IsStorage() {
			if !st.IsStorage() {
				st = b
			}
			return 0, DTypeErr("mixed dtypes %v and %v: %v is a storage type; ops.Cast it to float32 first", a, b, st)
		}
		if !ok(a) || !ok(b) {
			return 0, MixedErr(a, b)
		}
		if a.RealDType().Size() >= b.RealDType().Size() {
			return a.RealDType().ComplexDType(), nil
		}
		return b.RealDType().ComplexDType(), nil
	}
	if a.Kind() != b.Kind() || a.IsStorage() || b.IsStorage() {
		return 0, MixedErr(a, b)
	}
	if a.IsUnsigned() != b.IsUnsigned() {
		if a.IsUnsigned() {
			a, b = b, a // a signed, b unsigned
		}
		if a.Size() > b.Size() {
			return a, nil
		}
		switch b.Size() { // the signed type twice b's width
		case 1:
			return tensor.Int16, nil
		case 2:
			return tensor.Int32, nil
		default:
			return tensor.Int64, nil
		}
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
					return nil, ShapeErr("shapes %v and %v do not broadcast: dimension %d is %d against %d (from the right: %d)", shapes[0], shapes[1], off+i, o, d, rank-off-i)
				}
				return nil, ShapeErr("shape %v (operand %d) does not broadcast with the others: dimension %d is %d against %d", s, si, off+i, d, o)
			}
		}
	}
	return out, nil
}

// ValidShape checks a shape the rules compute or receive: no negative
// dimension and a product of the non-zero dimensions that fits an int.
func ValidShape(s tensor.Shape) error {
	n := 1
	for i, d := range s {
		if d < 0 {
			return ShapeErr("dimension %d of shape %v is negative", i, s)
		}
		if d == 0 {
			continue
		}
		var ok bool
		if n, ok = MulDims(n, d); !ok {
			return ShapeErr("shape %v has too many elements", s)
		}
	}
	return nil
}

// BroadcastsTo checks that from broadcasts to the valid shape to.
func BroadcastsTo(from, to tensor.Shape) error {
	if err := ValidShape(to); err != nil {
		return err
	}
	off := len(to) - len(from)
	if off < 0 {
		return ShapeErr("cannot broadcast %v to %v: the target has lower rank", from, to)
	}
	for i, d := range from {
		if d != 1 && d != to[off+i] {
			return ShapeErr("cannot broadcast %v to %v: dimension %d is %d, not 1 or %d", from, to, i, d, to[off+i])
		}
	}
	return nil
}

// ShapeBroadcast is the elementwise ops' shape rule: the broadcast of the
// operands; no attribute.
func ShapeBroadcast(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if err := NoAttr(attr); err != nil {
		return nil, err
	}
	return BroadcastShapes(in...)
}

// ShapeSame is the rule "the result has the first operand's shape"; no
// attribute.
func ShapeSame(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if err := NoAttr(attr); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

// NoAttr is the attribute check of the ops that take none.
func NoAttr(attr graph.Attr) error {
	if attr != nil {
		return ArgErr("takes no attribute, got %T", attr)
	}
	return nil
}

// AddDims returns a+b for non-negative dimensions, and false if the sum
// overflows an int.
func AddDims(a, b int) (int, bool) {
	if a < 0 || b < 0 || a > math.MaxInt-b {
		return 0, false
	}
	return a + b, true
}

// MulDims returns a*b for non-negative dimensions, and false if the
// product overflows an int.
func MulDims(a, b int) (int, bool) {
	if a < 0 || b < 0 || (a != 0 && b > math.MaxInt/a) {
		return 0, false
	}
	return a * b, true
}

// ShapeReduce is the reductions' shape rule (AxesAttr).
func ShapeReduce(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(AxesAttr)
	if !ok {
		return nil, ArgErr("needs an AxesAttr attribute, got %T", attr)
	}
	s := in[0]
	reduced := make([]bool, len(s))
	prev := -1
	for _, ax := range a.Axes {
		if ax <= prev || ax >= len(s) {
			return nil, ShapeErr("axes %v are not sorted, distinct and within rank %d", a.Axes, len(s))
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

// ShapeReduceNonEmpty is ShapeReduce for the reductions without an
// identity (Max, Min, ArgMax, ArgMin): no reduced axis may have length 0.
func ShapeReduceNonEmpty(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	out, err := ShapeReduce(in, attr)
	if err != nil {
		return nil, err
	}
	for _, ax := range attr.(AxesAttr).Axes {
		if in[0][ax] == 0 {
			return nil, ShapeErr("axis %d has length 0 and the reduction has no identity", ax)
		}
	}
	return out, nil
}

// ShapeAxis is the rule of the ops along one axis (AxisAttr): the result
// has the operand's shape.
func ShapeAxis(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(AxisAttr)
	if !ok {
		return nil, ArgErr("needs an AxisAttr attribute, got %T", attr)
	}
	if a.Axis < 0 || a.Axis >= len(in[0]) {
		return nil, ShapeErr("axis %d is out of range for rank %d", a.Axis, len(in[0]))
	}
	return in[0].Clone(), nil
}

package opdef

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Value is a value of the reference evaluator: a dense row-major array
// held exactly for its dtype. Integers are held as int64 (exact at any
// magnitude), complex numbers as complex128 (complex64 parts rounded to
// float32 after every op), everything else as float64 (bools as 0 and 1;
// float32, float16 and bfloat16 values rounded to their type after every
// op).
type Value struct {
	DType tensor.DType
	Shape tensor.Shape
	F     []float64    // bool and the real floats
	I     []int64      // integer dtypes
	C     []complex128 // complex dtypes
	// Tuple holds the results of a control-flow op (whose node is a
	// uint8 tuple: see ControlAttr); the fields above are then empty.
	Tuple []*Value
}

// NewValue returns a zero value of dtype dt and the given shape.
func NewValue(dt tensor.DType, shape tensor.Shape) *Value {
	v := &Value{DType: dt, Shape: shape.Clone()}
	if v.Shape == nil {
		v.Shape = tensor.Shape{}
	}
	n := max(shape.Size(), 0)
	switch {
	case dt.IsInt():
		v.I = make([]int64, n)
	case dt.IsComplex():
		v.C = make([]complex128, n)
	default:
		v.F = make([]float64, n)
	}
	return v
}

// FromTensor converts a tensor (exactly).
func FromTensor(t *tensor.Tensor) *Value {
	v := NewValue(t.DType(), t.Shape())
	switch t.DType() {
	case tensor.Int64:
		xs, _ := tensor.Values[int64](t)
		copy(v.I, xs)
	default:
		if v.DType.IsInt() { // the narrower integers are exact in float64
			for i := range v.I {
				v.I[i] = int64(t.Float64(i))
			}
			break
		}
		if v.DType.IsComplex() {
			for i := range v.C {
				v.C[i] = t.Complex128(i)
			}
			break
		}
		for i := range v.F {
			v.F[i] = t.Float64(i)
		}
	}
	return v
}

// Tensor converts the value into a new tensor of its dtype (exactly: the
// value is already representable, see Round).
func (v *Value) Tensor() (*tensor.Tensor, error) {
	switch {
	case v.DType == tensor.Int64:
		return tensor.New(append([]int64(nil), v.I...), v.Shape...)
	case v.DType.IsInt(): // the narrower integers are exact in float64
		f := make([]float64, len(v.I))
		for i, x := range v.I {
			f[i] = float64(x)
		}
		return tensor.FromFloat64s(v.DType, f, v.Shape...)
	case v.DType.IsComplex():
		return tensor.FromComplex128s(v.DType, v.C, v.Shape...)
	}
	return tensor.FromFloat64s(v.DType, v.F, v.Shape...)
}

// Len is the number of elements.
func (v *Value) Len() int {
	switch {
	case v.DType.IsInt():
		return len(v.I)
	case v.DType.IsComplex():
		return len(v.C)
	}
	return len(v.F)
}

// Float returns element p as a float64 (integers converted, the real part
// of a complex number).
func (v *Value) Float(p int) float64 {
	switch {
	case v.DType.IsInt():
		return float64(v.I[p])
	case v.DType.IsComplex():
		return real(v.C[p])
	}
	return v.F[p]
}

// Complex returns element p as a complex128 (a real element with a zero
// imaginary part).
func (v *Value) Complex(p int) complex128 {
	if v.DType.IsComplex() {
		return v.C[p]
	}
	return complex(v.Float(p), 0)
}

// Int returns element p as an int64 (floats converted as Cast converts:
// truncated toward zero, saturating at int64's range, NaN to 0; a complex
// number's real part).
func (v *Value) Int(p int) int64 {
	if v.DType.IsInt() {
		return v.I[p]
	}
	return tensor.FloatToInt(v.Float(p), 64)
}

// SetFloat sets element p from a float64 (converted as Cast converts for
// an integer dtype; x + 0i for a complex dtype).
func (v *Value) SetFloat(p int, x float64) {
	switch {
	case v.DType.IsInt():
		v.I[p] = tensor.FloatToInt(x, 64)
	case v.DType.IsComplex():
		v.C[p] = complex(x, 0)
	default:
		v.F[p] = x
	}
}

// SetComplex sets element p from a complex128 (a real dtype keeps the
// real part, as Cast from complex does).
func (v *Value) SetComplex(p int, x complex128) {
	if v.DType.IsComplex() {
		v.C[p] = x
		return
	}
	v.SetFloat(p, real(x))
}

// SetInt sets element p from an int64.
func (v *Value) SetInt(p int, x int64) {
	switch {
	case v.DType.IsInt():
		v.I[p] = x
	case v.DType.IsComplex():
		v.C[p] = complex(float64(x), 0)
	default:
		v.F[p] = float64(x)
	}
}

// Copy sets element p to element q of src, which has v's dtype.
func (v *Value) Copy(p int, src *Value, q int) {
	switch {
	case v.DType.IsInt():
		v.I[p] = src.I[q]
	case v.DType.IsComplex():
		v.C[p] = src.C[q]
	default:
		v.F[p] = src.F[q]
	}
}

// Round makes every element representable in the value's dtype: float32
// (and the 16-bit types, and complex64's parts) round to nearest even, the integers narrower
// than int64 wrap as two's complement (uint8 modulo 256), bools become 0
// or 1.
func (v *Value) Round() {
	switch {
	case v.DType.IsInt():
		for i, x := range v.I {
			v.I[i] = v.DType.Wrap(x)
		}
	case v.DType == tensor.Float32:
		for i, x := range v.F {
			v.F[i] = float64(float32(x))
		}
	case v.DType == tensor.Complex64:
		for i, x := range v.C {
			v.C[i] = complex128(complex64(x))
		}
	case v.DType == tensor.Float16:
		for i, x := range v.F {
			v.F[i] = float64(tensor.F16FromFloat32(float32(x)).Float32())
		}
	case v.DType == tensor.BFloat16:
		for i, x := range v.F {
			v.F[i] = float64(tensor.BF16FromFloat32(float32(x)).Float32())
		}
	case v.DType == tensor.Bool:
		for i, x := range v.F {
			if x != 0 {
				v.F[i] = 1
			}
		}
	}
}

// Evaluate computes node n from the values of its operands with the op's
// reference evaluator, rounded to n's dtype.
func Evaluate(n *graph.Node, in []*Value) (*Value, error) {
	d := Lookup(n.Op())
	if d == nil {
		return nil, fmt.Errorf("no declaration for %v", n.Op())
	}
	var out *Value
	var err error
	switch {
	case d.Ref != nil:
		out, err = d.Ref(n, in)
	case d.Kind == Elementwise && (d.F64 != nil || d.I64 != nil || d.C128 != nil):
		out, err = evalElementwise(d, n, in)
	default:
		return nil, fmt.Errorf("%s has no reference evaluator", d.Name)
	}
	if err != nil {
		return nil, err
	}
	out.Round()
	return out, nil
}

// HasRef reports whether the op has a reference evaluator.
func (d *Def) HasRef() bool {
	return d.Ref != nil || (d.Kind == Elementwise && (d.F64 != nil || d.I64 != nil || d.C128 != nil))
}

// evalElementwise applies the element function over the broadcast of the
// operands: I64 when the last operand is an integer, C128 when it is
// complex, else F64.
func evalElementwise(d *Def, n *graph.Node, in []*Value) (*Value, error) {
	out := NewValue(n.DType(), n.Shape())
	if len(in) > 0 && in[len(in)-1].DType.IsComplex() {
		return evalComplex(d, out, in)
	}
	useInt := len(in) > 0 && in[len(in)-1].DType.IsInt()
	if useInt && d.I64 == nil {
		return nil, fmt.Errorf("%s has no integer reference", d.Name)
	}
	if !useInt && d.F64 == nil {
		return nil, fmt.Errorf("%s has no float reference", d.Name)
	}
	it := NewBroadcast(out.Shape, in)
	fs := make([]float64, len(in))
	is := make([]int64, len(in))
	for p := 0; p < out.Len(); p++ {
		offs := it.Next()
		if useInt {
			for k, x := range in {
				is[k] = x.Int(offs[k])
			}
			out.SetInt(p, d.I64(is))
		} else {
			for k, x := range in {
				fs[k] = x.Float(offs[k])
			}
			out.SetFloat(p, d.F64(fs))
		}
	}
	return out, nil
}

// evalComplex applies d's complex element function over the broadcast of
// the operands (real operands, a Where's condition, enter as x + 0i); the
// result keeps the real part for a real dtype (Abs, Equal).
func evalComplex(d *Def, out *Value, in []*Value) (*Value, error) {
	if d.C128 == nil {
		return nil, fmt.Errorf("%s has no complex reference", d.Name)
	}
	it := NewBroadcast(out.Shape, in)
	cs := make([]complex128, len(in))
	for p := 0; p < out.Len(); p++ {
		offs := it.Next()
		for k, x := range in {
			cs[k] = x.Complex(offs[k])
		}
		out.SetComplex(p, d.C128(cs))
	}
	return out, nil
}

// Broadcast walks the positions of an output shape in row-major order and
// gives each operand's flat position under NumPy broadcasting.
type Broadcast struct {
	shape   tensor.Shape
	strides [][]int // per operand, per output dim (0 where it broadcasts)
	idx     []int
	offs    []int
	started bool
}

// NewBroadcast prepares the walk over out for operands ins.
func NewBroadcast(out tensor.Shape, ins []*Value) *Broadcast {
	b := &Broadcast{shape: out, idx: make([]int, len(out)), offs: make([]int, len(ins))}
	for _, x := range ins {
		st := make([]int, len(out))
		off := len(out) - len(x.Shape)
		acc := 1
		for d := len(x.Shape) - 1; d >= 0; d-- {
			if x.Shape[d] != 1 {
				st[off+d] = acc
			}
			acc *= x.Shape[d]
		}
		b.strides = append(b.strides, st)
	}
	return b
}

// Next advances to the next output position (the first on the first
// call) and returns the operands' flat positions there; the slice is
// reused.
func (b *Broadcast) Next() []int {
	if !b.started {
		b.started = true
		return b.offs
	}
	for d := len(b.shape) - 1; d >= 0; d-- {
		b.idx[d]++
		for k := range b.offs {
			b.offs[k] += b.strides[k][d]
		}
		if b.idx[d] < b.shape[d] {
			break
		}
		for k := range b.offs {
			b.offs[k] -= b.strides[k][d] * b.shape[d]
		}
		b.idx[d] = 0
	}
	return b.offs
}

// Index converts a row-major flat position into a multi-index, written
// into idx (which has the shape's rank).
func Index(shape tensor.Shape, p int, idx []int) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = p % shape[d]
			p /= shape[d]
		}
	}
}

// Flat converts a multi-index into a row-major position.
func Flat(shape tensor.Shape, idx []int) int {
	p := 0
	for d, i := range idx {
		p = p*shape[d] + i
	}
	return p
}

// Gather fills out from x: element p of out is element src(idx) of x,
// where idx is p's multi-index in out, or zero where src returns -1.
func Gather(out, x *Value, src func(idx []int) int) *Value {
	idx := make([]int, len(out.Shape))
	for p := 0; p < out.Len(); p++ {
		Index(out.Shape, p, idx)
		if q := src(idx); q >= 0 {
			out.Copy(p, x, q)
		}
	}
	return out
}

// Bool converts a Go bool to the reference's 0 or 1.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// NaNOr returns NaN if any of xs is NaN, else f's value (the propagation
// rule of Maximum, Minimum and the reductions).
func NaNOr(f func() float64, xs ...float64) float64 {
	for _, x := range xs {
		if math.IsNaN(x) {
			return math.NaN()
		}
	}
	return f()
}

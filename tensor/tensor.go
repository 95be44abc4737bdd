package tensor

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Elem is the set of Go element types a Tensor can hold. F16 and BF16 are
// the bit patterns of the two 16-bit float storage types.
type Elem interface {
	bool | int8 | int16 | int32 | int64 | uint8 | float32 | float64 | F16 | BF16 | complex64 | complex128
}

// Number is the subset of Elem that arithmetic kernels compute with.
type Number interface {
	int8 | int16 | int32 | int64 | uint8 | float32 | float64
}

// DTypeOf returns the DType that holds elements of type T.
func DTypeOf[T Elem]() DType {
	var z T
	switch any(z).(type) {
	case bool:
		return Bool
	case int8:
		return Int8
	case int16:
		return Int16
	case uint8:
		return Uint8
	case int32:
		return Int32
	case int64:
		return Int64
	case float32:
		return Float32
	case float64:
		return Float64
	case F16:
		return Float16
	case BF16:
		return BFloat16
	case complex64:
		return Complex64
	case complex128:
		return Complex128
	}
	return Invalid
}

// Tensor is a dense, row-major n-d array in host memory.
//
// A Tensor's data may be shared: New wraps the caller's slice and Values
// returns a view. The dtype and shape of a Tensor never change.
type Tensor struct {
	dtype DType
	shape Shape
	data  []byte // len == shape.Size() * dtype.Size(), aligned to the element size
}

// alloc returns n zeroed bytes aligned to 8 (so any element type can be
// viewed over them).
func alloc(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)
}

func checkShape(shape []int) (Shape, error) {
	s := Shape(shape)
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("tensor: %w", err)
	}
	return s.Clone(), nil
}

// New returns a tensor of the given shape that wraps data (no copy: later
// writes to data are visible through the tensor). With no shape, the tensor
// is 1-D of len(data); use Scalar for a rank-0 tensor. It is an error if the
// shape has a negative dimension or its element count differs from len(data).
func New[T Elem](data []T, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(data)}
	}
	s, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if s.Size() != len(data) {
		return nil, fmt.Errorf("tensor: New: %d elements do not fill shape %v (%d elements)", len(data), s, s.Size())
	}
	dt := DTypeOf[T]()
	var b []byte
	if len(data) > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(data))), len(data)*dt.Size())
	} else {
		b = []byte{}
	}
	return &Tensor{dtype: dt, shape: s, data: b}, nil
}

// Scalar returns a rank-0 tensor holding v.
func Scalar[T Elem](v T) *Tensor {
	t, _ := New([]T{v})
	t.shape = Shape{}
	return t
}

// Zeros returns a zero-filled tensor. It returns nil where Make returns an
// error: dt is not a valid DType, a dimension is negative, or the tensor
// would exceed MemoryLimit.
func Zeros(dt DType, shape ...int) *Tensor {
	t, err := Make(dt, shape...)
	if err != nil {
		return nil
	}
	return t
}

// Make is Zeros with an error instead of a nil result. Its size is checked
// by arithmetic before anything is allocated: a tensor larger than
// MemoryLimit is an error wrapping ErrTooLarge.
func Make(dt DType, shape ...int) (*Tensor, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("tensor: invalid dtype %v", dt)
	}
	s, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = Shape{}
	}
	b, err := checkAlloc(dt, s)
	if err != nil {
		return nil, fmt.Errorf("tensor: Make: %w", err)
	}
	return &Tensor{dtype: dt, shape: s, data: alloc(b)}, nil
}

// Full returns a tensor of dtype dt and the given shape with every element
// set to v (converted as Cast converts).
func Full(dt DType, v float64, shape ...int) (*Tensor, error) {
	t, err := Make(dt, shape...)
	if err != nil {
		return nil, err
	}
	n := t.Size()
	for i := 0; i < n; i++ {
		t.SetFloat64(i, v)
	}
	return t, nil
}

// FromFloat64s returns a new tensor of dtype dt holding vals converted as
// Cast converts (truncation toward zero for integers, != 0 for Bool).
func FromFloat64s(dt DType, vals []float64, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(vals)}
	}
	t, err := Make(dt, shape...)
	if err != nil {
		return nil, err
	}
	if t.Size() != len(vals) {
		return nil, fmt.Errorf("tensor: FromFloat64s: %d values do not fill shape %v (%d elements)", len(vals), t.shape, t.Size())
	}
	for i, v := range vals {
		t.SetFloat64(i, v)
	}
	return t, nil
}

// FromBytes wraps raw little-endian element data (no copy). The slice must
// hold exactly shape.Size()*dt.Size() bytes and be aligned to the element
// size.
func FromBytes(dt DType, data []byte, shape ...int) (*Tensor, error) {
	if !dt.Valid() {
		return nil, fmt.Errorf("tensor: invalid dtype %v", dt)
	}
	s, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if s == nil {
		s = Shape{}
	}
	want, err := ByteSize(dt, s)
	if err != nil {
		return nil, fmt.Errorf("tensor: FromBytes: %w", err)
	}
	if len(data) != want {
		return nil, fmt.Errorf("tensor: FromBytes: %d bytes do not hold %s (%d bytes)", len(data), TypeString(dt, s), want)
	}
	if len(data) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(data)))%uintptr(dt.Size()) != 0 {
		return nil, fmt.Errorf("tensor: FromBytes: data is not aligned to %d bytes", dt.Size())
	}
	if data == nil {
		data = []byte{}
	}
	return &Tensor{dtype: dt, shape: s, data: data}, nil
}

// ErrDType is returned by Values when the element type does not match.
var ErrDType = errors.New("tensor: dtype mismatch")

// Values returns the tensor's elements as a typed slice that shares the
// tensor's memory. It is an error if T does not match the tensor's dtype.
func Values[T Elem](t *Tensor) ([]T, error) {
	if t == nil {
		return nil, errors.New("tensor: Values of a nil tensor")
	}
	if want := DTypeOf[T](); want != t.dtype {
		return nil, fmt.Errorf("%w: Values[%v] of a tensor of dtype %v", ErrDType, want, t.dtype)
	}
	return View[T](t.data), nil
}

// View reinterprets raw element bytes as a typed slice (no copy, no check
// beyond length). It is the zero-cost accessor kernels use; most callers
// want Values.
func View[T Elem](b []byte) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(b) < sz {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/sz)
}

// DType returns the element type (Invalid for a nil tensor).
func (t *Tensor) DType() DType {
	if t == nil {
		return Invalid
	}
	return t.dtype
}

// Shape returns the dimensions. The caller must not modify the result.
func (t *Tensor) Shape() Shape {
	if t == nil {
		return nil
	}
	return t.shape
}

// Rank is the number of dimensions.
func (t *Tensor) Rank() int { return len(t.Shape()) }

// Size is the number of elements.
func (t *Tensor) Size() int {
	if t == nil {
		return 0
	}
	return t.shape.Size()
}

// Bytes returns the raw little-endian element data, shared with the tensor.
func (t *Tensor) Bytes() []byte {
	if t == nil {
		return nil
	}
	return t.data
}

// Type returns the dtype-and-shape string, e.g. "f32[2,3]".
func (t *Tensor) Type() string {
	if t == nil {
		return "nil"
	}
	return TypeString(t.dtype, t.shape)
}

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	if t == nil {
		return nil
	}
	c := &Tensor{dtype: t.dtype, shape: t.shape.Clone(), data: alloc(len(t.data))}
	if c.shape == nil {
		c.shape = Shape{}
	}
	copy(c.data, t.data)
	return c
}

// Float64 returns element i (in row-major order) converted to float64
// (the real part of a complex element). It panics if i is out of range,
// like a slice index.
func (t *Tensor) Float64(i int) float64 {
	switch t.dtype {
	case Bool:
		if t.data[i] != 0 {
			return 1
		}
		return 0
	case Int8:
		return float64(View[int8](t.data)[i])
	case Int16:
		return float64(View[int16](t.data)[i])
	case Int32:
		return float64(View[int32](t.data)[i])
	case Int64:
		return float64(View[int64](t.data)[i])
	case Uint8:
		return float64(t.data[i])
	case Float32:
		return float64(View[float32](t.data)[i])
	case Float64:
		return View[float64](t.data)[i]
	case Float16:
		return float64(View[F16](t.data)[i].Float32())
	case BFloat16:
		return float64(View[BF16](t.data)[i].Float32())
	case Complex64:
		return float64(real(View[complex64](t.data)[i]))
	case Complex128:
		return real(View[complex128](t.data)[i])
	}
	return math.NaN()
}

// SetFloat64 sets element i (row-major) to v, converted as Cast converts
// (a complex element becomes v + 0i).
func (t *Tensor) SetFloat64(i int, v float64) {
	switch t.dtype {
	case Bool:
		if v != 0 {
			t.data[i] = 1
		} else {
			t.data[i] = 0
		}
	case Int8:
		View[int8](t.data)[i] = int8(FloatToIntType(v, Int8))
	case Int16:
		View[int16](t.data)[i] = int16(FloatToIntType(v, Int16))
	case Int32:
		View[int32](t.data)[i] = int32(FloatToInt(v, 32))
	case Int64:
		View[int64](t.data)[i] = FloatToInt(v, 64)
	case Uint8:
		t.data[i] = uint8(FloatToIntType(v, Uint8))
	case Float32:
		View[float32](t.data)[i] = float32(v)
	case Float64:
		View[float64](t.data)[i] = v
	case Float16:
		View[F16](t.data)[i] = F16FromFloat32(float32(v))
	case BFloat16:
		View[BF16](t.data)[i] = BF16FromFloat32(float32(v))
	case Complex64:
		View[complex64](t.data)[i] = complex(float32(v), 0)
	case Complex128:
		View[complex128](t.data)[i] = complex(v, 0)
	}
}

// Complex128 returns element i (row-major) as a complex128: a complex
// element exactly (complex64 widened), any other dtype as Float64 gives
// it with a zero imaginary part.
func (t *Tensor) Complex128(i int) complex128 {
	switch t.dtype {
	case Complex64:
		return complex128(View[complex64](t.data)[i])
	case Complex128:
		return View[complex128](t.data)[i]
	}
	return complex(t.Float64(i), 0)
}

// SetComplex128 sets element i (row-major) to v: a complex element to v
// (rounded to complex64's parts for Complex64), any other dtype to v's
// real part as SetFloat64 converts it (the imaginary part is dropped, as
// Cast from complex does).
func (t *Tensor) SetComplex128(i int, v complex128) {
	switch t.dtype {
	case Complex64:
		View[complex64](t.data)[i] = complex64(v)
	case Complex128:
		View[complex128](t.data)[i] = v
	default:
		t.SetFloat64(i, real(v))
	}
}

// Complex128s returns all elements as complex128 (a copy).
func (t *Tensor) Complex128s() []complex128 {
	out := make([]complex128, t.Size())
	for i := range out {
		out[i] = t.Complex128(i)
	}
	return out
}

// FromComplex128s returns a new tensor of dtype dt holding vals converted
// as SetComplex128 converts (a real dtype keeps the real parts).
func FromComplex128s(dt DType, vals []complex128, shape ...int) (*Tensor, error) {
	if shape == nil {
		shape = []int{len(vals)}
	}
	t, err := Make(dt, shape...)
	if err != nil {
		return nil, err
	}
	if t.Size() != len(vals) {
		return nil, fmt.Errorf("tensor: FromComplex128s: %d values do not fill shape %v (%d elements)", len(vals), t.shape, t.Size())
	}
	for i, v := range vals {
		t.SetComplex128(i, v)
	}
	return t, nil
}

// Float64s returns all elements converted to float64 (a copy).
func (t *Tensor) Float64s() []float64 {
	n := t.Size()
	out := make([]float64, n)
	for i := range out {
		out[i] = t.Float64(i)
	}
	return out
}

// FloatToInt converts v to a signed integer of the given bit width (8, 16,
// 32 or 64) the way loom's Cast does: truncation toward zero, saturating at
// the type's range, NaN to 0. (Go's own conversion is
// implementation-defined out of range.)
func FloatToInt(v float64, bits int) int64 {
	dt := Int64
	switch bits {
	case 8:
		dt = Int8
	case 16:
		dt = Int16
	case 32:
		dt = Int32
	}
	return FloatToIntType(v, dt)
}

// FloatToIntType converts v to the integer dtype dt as loom's Cast does:
// truncation toward zero, saturating at dt's range (Uint8: [0, 255]), NaN
// to 0.
func FloatToIntType(v float64, dt DType) int64 {
	if v != v {
		return 0
	}
	lo, hi := dt.IntRange()
	if lo == 0 && hi == 0 {
		lo, hi = math.MinInt64, math.MaxInt64
	}
	if v <= float64(lo) {
		return lo
	}
	if v >= float64(hi) { // float64(MaxInt64) rounds up to 2^63: saturate there too
		return hi
	}
	return int64(v)
}

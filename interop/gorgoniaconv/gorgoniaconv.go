// Package gorgoniaconv converts between loom's host tensors
// (github.com/loomgraph/loom/tensor) and Gorgonia's *tensor.Dense
// (gorgonia.org/tensor v0.9.23), so that a program moving from Gorgonia to
// loom can carry its weights and data across (docs/MIGRATING_FROM_GORGONIA.md
// at the repository root is the migration guide).
//
// It is a module of its own (github.com/loomgraph/loom/interop/gorgoniaconv)
// so that loom's module never depends on Gorgonia: only a program that
// imports this package pulls in gorgonia.org/tensor and its dependencies.
//
// # Memory
//
// A loom Tensor is always dense and row-major, so the two functions share
// memory wherever Gorgonia's layout is the same:
//
//   - ToDense always shares: the Dense's backing array is the Tensor's
//     memory, and a write on one side is seen on the other.
//   - FromDense shares when the Dense is row-major and contiguous: a plain
//     Dense, or a view (Slice) whose elements are contiguous, such as a
//     run of whole rows. It copies, into row-major order, a Dense that is
//     not: a view with gaps between its elements (d.Slice(nil, S(1, 3)) of
//     a matrix), a transpose that Gorgonia has not yet carried out (d.T()
//     only records the permutation: IsMaterializable reports it) and a
//     column-major Dense (tensor.AsFortran). The copy never changes d.
//
// FromDense also copies where the Dense's memory is not aligned to the
// element size, as loom requires (complex128 elements on 16 bytes; Go
// only promises 8). To always get a private copy, Clone the result.
//
// # Element types
//
// Both sides have Float64, Float32, Int64, Int32, Int16, Int8, Uint8, Bool,
// Complex64 and Complex128, which map to each other. Gorgonia's Int (Go's
// int) becomes loom's Int64 (shared where int is 64 bits wide, copied
// otherwise); ToDense makes Int64, never Int. Gorgonia's unsigned types
// other than Uint8, and its String and UnsafePointer, have no loom dtype,
// and loom's Float16 and BFloat16 have no Gorgonia one: converting them is
// an error.
//
// # Shapes
//
// Shapes are kept as they are. Gorgonia's scalar is a Dense of Shape{}
// (tensor.New(tensor.FromScalar(v))), which becomes a rank-0 Tensor, and a
// rank-0 Tensor becomes one; a Dense of shape (1) is a vector of one
// element on both sides. Gorgonia tells a vector (n) from a column (n, 1)
// and a row (1, n) only by the shape, and so does loom: the three stay
// three different shapes (reshape on either side to change one into the
// other). Gorgonia cannot make a Dense with no elements (a zero dimension
// panics inside tensor.New), so ToDense of an empty Tensor is an error;
// FromDense of a Dense with a zero dimension (should one exist) gives an empty Tensor.
//
// # Errors
//
// Bad input (a nil or masked Dense, memory that Go cannot read such as a
// CUDA engine's, an unsupported element type) is an error naming the
// function and the types. A panic inside Gorgonia while reading a Dense is
// recovered and returned as an error too: no panic crosses this API.
package gorgoniaconv

import (
	"fmt"
	"strconv"
	"unsafe"

	lt "github.com/loomgraph/loom/tensor"
	"gorgonia.org/tensor"
)

// fromGorgonia maps Gorgonia's element types to loom's (Int separately).
var fromGorgonia = map[tensor.Dtype]lt.DType{
	tensor.Float64:    lt.Float64,
	tensor.Float32:    lt.Float32,
	tensor.Int64:      lt.Int64,
	tensor.Int32:      lt.Int32,
	tensor.Int16:      lt.Int16,
	tensor.Int8:       lt.Int8,
	tensor.Uint8:      lt.Uint8,
	tensor.Bool:       lt.Bool,
	tensor.Complex64:  lt.Complex64,
	tensor.Complex128: lt.Complex128,
}

// FromDense returns d as a loom Tensor of the same shape: sharing d's
// memory where d is row-major and contiguous, a row-major copy otherwise
// (see the package documentation). It is an error if d is nil or masked,
// if Go cannot read its memory, or if its element type has no loom dtype.
func FromDense(d *tensor.Dense) (t *lt.Tensor, err error) {
	if d == nil {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: nil *tensor.Dense")
	}
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("gorgoniaconv.FromDense: reading the %v Dense panicked in Gorgonia: %v", d.Dtype(), r)
		}
	}()
	gdt := d.Dtype()
	if gdt.Type == nil {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: the Dense has no element type (a zero tensor.Dense{}: make it with tensor.New)")
	}
	dt, ok := fromGorgonia[gdt]
	if gdt == tensor.Int {
		dt, ok = lt.Int64, true
	}
	if !ok {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: Gorgonia's %v has no loom dtype (supported: float64, float32, int, int64, int32, int16, int8, uint8, bool, complex64, complex128)", gdt)
	}
	if !d.IsNativelyAccessible() {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: the %v%v Dense's memory is not accessible from Go (a device engine's): copy it to the host first", gdt, d.Shape())
	}
	shape := append([]int{}, d.Shape()...)
	size := 1
	for _, n := range shape {
		if n < 0 {
			return nil, fmt.Errorf("gorgoniaconv.FromDense: the Dense has shape %v, with a negative dimension", d.Shape())
		}
		size *= n
	}
	if size == 0 {
		return lt.Make(dt, shape...)
	}
	if len(d.Mask()) > 0 && d.IsMasked() {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: the %v%v Dense is masked, and loom has no masked tensors: fill the masked elements (e.g. d.Filled) first", gdt, d.Shape())
	}
	src := d
	if !shareable(d, size) {
		switch {
		case d.IsMaterializable():
			// A view with gaps or a recorded transpose: Gorgonia copies its
			// elements into a new row-major Dense in logical order.
			m, ok := d.Materialize().(*tensor.Dense)
			if !ok || !shareable(m, size) {
				return nil, fmt.Errorf("gorgoniaconv.FromDense: Gorgonia's copy of the %v%v view (data order %v) is not row-major", gdt, d.Shape(), d.DataOrder())
			}
			src = m
		case d.DataOrder().IsColMajor() && d.DataOrder().IsContiguous():
			return fromColMajor(d, dt, shape, size)
		default:
			return nil, fmt.Errorf("gorgoniaconv.FromDense: the %v%v Dense's layout (data order %v, strides %v) is not one loom can read", gdt, d.Shape(), d.DataOrder(), d.Strides())
		}
	}
	raw := rawBytes(src, size)
	if gdt == tensor.Int && strconv.IntSize != 64 {
		return intsToInt64(raw, shape, size)
	}
	if uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%uintptr(dt.Size()) != 0 {
		// loom wants each element aligned to its size (16 bytes for
		// complex128), which Go does not promise: copy into loom's memory.
		t, err = lt.Make(dt, shape...)
		if err != nil {
			return nil, fmt.Errorf("gorgoniaconv.FromDense: %w", err)
		}
		copy(t.Bytes(), raw)
		return t, nil
	}
	t, err = lt.FromBytes(dt, raw, shape...)
	if err != nil {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: %v%v: %w", gdt, d.Shape(), err)
	}
	return t, nil
}

// shareable reports whether d's elements lie row-major and contiguous in
// its backing array, from its first byte: then the first size elements of
// the array are the tensor.
func shareable(d *tensor.Dense, size int) bool {
	o := d.DataOrder()
	if o.IsColMajor() || o.IsNotContiguous() || o.IsTransposed() {
		return false
	}
	if d.IsMaterializable() && !d.IsView() {
		return false // a transpose recorded but not carried out
	}
	// Check the strides too, not only the flags: a dimension of length 1
	// may have any stride, every other must be the row-major one.
	shape, strides := d.Shape(), d.Strides()
	if len(shape) > 0 && size > 1 {
		if len(strides) != len(shape) {
			return false
		}
		acc := 1
		for i := len(shape) - 1; i >= 0; i-- {
			if shape[i] != 1 && strides[i] != acc {
				return false
			}
			acc *= shape[i]
		}
	}
	return len(d.Header.Raw) >= size*int(d.Dtype().Size())
}

// rawBytes returns the bytes of d's first size elements (d's memory).
func rawBytes(d *tensor.Dense, size int) []byte {
	return d.Header.Raw[:size*int(d.Dtype().Size())]
}

// intsToInt64 copies Go ints (narrower than 64 bits here) into an Int64
// tensor.
func intsToInt64(raw []byte, shape []int, size int) (*lt.Tensor, error) {
	ints := unsafe.Slice((*int)(unsafe.Pointer(unsafe.SliceData(raw))), size)
	out := make([]int64, size)
	for i, v := range ints {
		out[i] = int64(v)
	}
	return lt.New(out, shape...)
}

// fromColMajor copies a contiguous column-major Dense into a new row-major
// Tensor. Its strides are computed from the shape (Gorgonia stores a single
// stride for a column-major vector-like shape such as (3, 1)).
func fromColMajor(d *tensor.Dense, dt lt.DType, shape []int, size int) (*lt.Tensor, error) {
	es := int(d.Dtype().Size())
	if len(d.Header.Raw) < size*es {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: the %v%v column-major Dense holds %d bytes, fewer than its %d elements", d.Dtype(), d.Shape(), len(d.Header.Raw), size)
	}
	src := d.Header.Raw
	if d.Dtype() == tensor.Int && strconv.IntSize != 64 {
		wide := make([]byte, size*8)
		ints := unsafe.Slice((*int)(unsafe.Pointer(unsafe.SliceData(src))), size)
		w := unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(wide))), size)
		for i, v := range ints {
			w[i] = int64(v)
		}
		src, es = wide, 8
	}
	out, err := lt.Make(dt, shape...)
	if err != nil {
		return nil, fmt.Errorf("gorgoniaconv.FromDense: %w", err)
	}
	dst := out.Bytes()
	rank := len(shape)
	colStride := make([]int, rank) // in elements
	acc := 1
	for i := 0; i < rank; i++ {
		colStride[i] = acc
		acc *= shape[i]
	}
	idx := make([]int, rank) // row-major counter over the logical index
	for i := 0; i < size; i++ {
		j := 0
		for k, c := range idx {
			j += c * colStride[k]
		}
		copy(dst[i*es:(i+1)*es], src[j*es:(j+1)*es])
		for k := rank - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < shape[k] {
				break
			}
			idx[k] = 0
		}
	}
	return out, nil
}

// ToDense returns t as a row-major Gorgonia Dense of the same shape and
// element type, backed by t's memory (no copy: a write on one side is seen
// on the other). A rank-0 Tensor becomes a scalar Dense (Shape{}); loom's
// Int64 becomes Gorgonia's Int64. It is an error if t is nil, if its dtype
// (Float16, BFloat16) has no Gorgonia type, or if it has no elements
// (Gorgonia cannot hold an empty Dense).
func ToDense(t *lt.Tensor) (d *tensor.Dense, err error) {
	if t == nil {
		return nil, fmt.Errorf("gorgoniaconv.ToDense: nil *tensor.Tensor")
	}
	if t.Size() == 0 {
		return nil, fmt.Errorf("gorgoniaconv.ToDense: %s has no elements, and Gorgonia cannot make an empty Dense", t.Type())
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("gorgoniaconv.ToDense: making the Dense of %s panicked in Gorgonia: %v", t.Type(), r)
		}
	}()
	var backing any
	switch t.DType() {
	case lt.Float64:
		backing = values[float64](t)
	case lt.Float32:
		backing = values[float32](t)
	case lt.Int64:
		backing = values[int64](t)
	case lt.Int32:
		backing = values[int32](t)
	case lt.Int16:
		backing = values[int16](t)
	case lt.Int8:
		backing = values[int8](t)
	case lt.Uint8:
		backing = values[uint8](t)
	case lt.Bool:
		backing = values[bool](t)
	case lt.Complex64:
		backing = values[complex64](t)
	case lt.Complex128:
		backing = values[complex128](t)
	default:
		return nil, fmt.Errorf("gorgoniaconv.ToDense: loom's %v (%s) has no Gorgonia element type: convert it to float32 first (ops.Cast in a graph, or FromFloat64s(Float32, t.Float64s(), ...))", t.DType(), t.Type())
	}
	shape := append([]int{}, t.Shape()...)
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing)), nil
}

// values is tensor.Values for a dtype already checked.
func values[T lt.Elem](t *lt.Tensor) []T {
	v, err := lt.Values[T](t)
	if err != nil {
		panic(err) // a bug here: the caller switched on t's dtype
	}
	return v
}

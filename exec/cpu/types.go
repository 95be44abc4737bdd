package cpu

import (
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/simd"
	"github.com/loomgraph/loom/tensor"
)

// The element types, listed once. Kernels are generic in the element type
// T; a node's dtype picks T in elemTypes (and Cast's target type in
// castTo). Adding a dtype is adding its Go type to elem, an entry to
// elemTypes and a case to castTo: every op of the table then has its
// kernels in it, from its scalar functions (float64 or int64) and
// internal/simd's generic accessors.

// float is the float element types (Softmax and MatMul take only these).
type float interface{ float32 | float64 }

// elem is every element type a kernel computes in: uint8 is both Uint8
// and Bool (0 or 1), the node's dtype telling them apart where they
// differ (Not, Cast).
type elem interface {
	float | int8 | int16 | int32 | int64 | uint8
}

// elemTypes is the dtype -> element type dispatch. The storage types
// (float16, bfloat16) have none: only Cast and the data movement ops take
// them, by their bytes.
var elemTypes = map[tensor.DType]etype{
	tensor.Bool:    et[uint8]{},
	tensor.Int8:    et[int8]{},
	tensor.Int16:   et[int16]{},
	tensor.Uint8:   et[uint8]{},
	tensor.Int32:   et[int32]{},
	tensor.Int64:   et[int64]{},
	tensor.Float32: et[float32]{},
	tensor.Float64: et[float64]{},
}

// etype is the code generic in the element type that a node's dtype
// selects at compile time: one method per kind of kernel, not per op.
type etype interface {
	// math builds the micro-op of a mathEntry; class is the dtype, for
	// its kind (float or integer).
	math(e *mathEntry, class tensor.DType, strides []int) (microFn, error)
	// compare builds a comparison's micro-op (the operands are of this
	// type, the result bool).
	compare(op simd.CmpOp, strides []int) microFn
	// castTo converts elements of this type (dtype from) to dtype to;
	// fromHalf and toHalf from and to a storage type, through float32.
	castTo(from, to tensor.DType) func(d, s []byte)
	fromHalf(dec func(uint16) float32, to tensor.DType) func(d, s []byte)
	toHalf(enc func(float32) uint16) func(d, s []byte)
	// reduce and fusedReduce build the reductions of this type.
	reduce(op graph.Op, p *redPlan, isFloat bool) (*kernel, error)
	fusedReduce(p *fusedPlan, isFloat bool) *kernel
}

// et[T] implements etype for T.
type et[T elem] struct{}

func (et[T]) math(e *mathEntry, class tensor.DType, st []int) (microFn, error) {
	isFloat := class.IsFloat()
	if e.arity == 1 {
		var k func(d, a []T)
		if e.un != 0 {
			k = simd.Unary[T](e.un)
		}
		if k == nil {
			k = fastOf[T](e.fast)
		}
		switch {
		case k != nil:
		case isFloat && e.f1 != nil:
			k = loop1[T](e.f1)
		case !isFloat && e.i1 != nil:
			k = loop1[T](e.i1)
		default:
			return nil, errNoKernel
		}
		return func(m int, d, x, _, _ unsafe.Pointer) { k(view[T](d, m), view[T](x, m)) }, nil
	}
	var vv func(d, a, b []T)
	var vs func(d, a []T, s T)
	var sv func(d []T, s T, b []T)
	if e.bin != 0 {
		vv, vs, sv = simd.Binary[T](e.bin)
	}
	if unsafe.Sizeof(*new(T)) == 1 && (e.bin == simd.And || e.bin == simd.Or) {
		vv, vs, sv = bytewise[T](e.bin == simd.And)
	}
	switch {
	case vv != nil:
	case isFloat && e.f2 != nil:
		vv, vs, sv = loops2[T](e.f2)
	case !isFloat && e.i2 != nil:
		vv, vs, sv = loops2[T](e.i2)
	default:
		return nil, errNoKernel
	}
	switch {
	case st[0] == 1 && st[1] == 1:
		return func(m int, d, x, y, _ unsafe.Pointer) { vv(view[T](d, m), view[T](x, m), view[T](y, m)) }, nil
	case st[0] == 1:
		return func(m int, d, x, y, _ unsafe.Pointer) { vs(view[T](d, m), view[T](x, m), *(*T)(y)) }, nil
	}
	return func(m int, d, x, y, _ unsafe.Pointer) { sv(view[T](d, m), *(*T)(x), view[T](y, m)) }, nil
}

func (et[T]) compare(op simd.CmpOp, st []int) microFn {
	vv, vs, sv := simd.Compare[T](op)
	switch {
	case st[0] == 1 && st[1] == 1:
		return func(m int, d, x, y, _ unsafe.Pointer) { vv(view[uint8](d, m), view[T](x, m), view[T](y, m)) }
	case st[0] == 1:
		return func(m int, d, x, y, _ unsafe.Pointer) { vs(view[uint8](d, m), view[T](x, m), *(*T)(y)) }
	}
	return func(m int, d, x, y, _ unsafe.Pointer) { sv(view[uint8](d, m), *(*T)(x), view[T](y, m)) }
}

func (et[S]) castTo(from, to tensor.DType) func(d, s []byte) {
	switch to {
	case tensor.Bool:
		return func(d, s []byte) { toBool(d, as[S](s)) }
	case tensor.Int8:
		return castLoop[S, int8](from, to)
	case tensor.Int16:
		return castLoop[S, int16](from, to)
	case tensor.Uint8:
		return castLoop[S, uint8](from, to)
	case tensor.Int32:
		return castLoop[S, int32](from, to)
	case tensor.Int64:
		return castLoop[S, int64](from, to)
	case tensor.Float32:
		return castLoop[S, float32](from, to)
	case tensor.Float64:
		return castLoop[S, float64](from, to)
	}
	return nil
}

func (et[T]) fromHalf(dec func(uint16) float32, to tensor.DType) func(d, s []byte) {
	switch {
	case to == tensor.Bool:
		return func(d, s []byte) {
			x, y := as[uint16](s), as[T](d)
			for i := range min(len(x), len(y)) {
				y[i] = T(u8(dec(x[i]) != 0))
			}
		}
	case to.IsInt():
		r := rangeOf[T](to)
		return func(d, s []byte) {
			x, y := as[uint16](s), as[T](d)
			for i := range min(len(x), len(y)) {
				y[i] = toInt(float64(dec(x[i])), r)
			}
		}
	}
	return func(d, s []byte) {
		x, y := as[uint16](s), as[T](d)
		for i := range min(len(x), len(y)) {
			y[i] = T(dec(x[i]))
		}
	}
}

func (et[T]) toHalf(enc func(float32) uint16) func(d, s []byte) {
	return func(d, s []byte) {
		x, y := as[T](s), as[uint16](d)
		for i := range min(len(x), len(y)) {
			y[i] = enc(float32(x[i]))
		}
	}
}

func (et[T]) reduce(op graph.Op, p *redPlan, isFloat bool) (*kernel, error) {
	return reduceKernel[T](op, p, isFloat)
}

func (et[T]) fusedReduce(p *fusedPlan, isFloat bool) *kernel {
	if isFloat {
		return fusedReduceT[T, float64](p)
	}
	return fusedReduceT[T, int64](p)
}

// castLoop is the conversion of S elements to D elements: truncating and
// saturating from a float to an integer type, Go's conversion otherwise.
func castLoop[S, D elem](from, to tensor.DType) func(d, s []byte) {
	if from.IsFloat() && to.IsInt() {
		r := rangeOf[D](to)
		return func(d, s []byte) { floatToInt(as[D](d), as[S](s), r) }
	}
	return func(d, s []byte) { convert(as[D](d), as[S](s)) }
}

// bitsOf is the width of an element type in bits.
func bitsOf[T any]() int {
	var z T
	return 8 * int(unsafe.Sizeof(z))
}

// bytewise is And's or Or's loops on one-byte elements (bool, int8,
// uint8): eight elements at a time as one uint64, as the operations are
// bitwise (simd's generic loop, one byte at a time, took 0.3 ns per
// element of a mask).
func bytewise[T elem](isAnd bool) (vv func(d, a, b []T), vs func(d, a []T, s T), sv func(d []T, s T, b []T)) {
	vv = func(d, a, b []T) { bitwiseBytes(bytesOf(d), bytesOf(a), bytesOf(b), 0, isAnd) }
	vs = func(d, a []T, s T) {
		bitwiseBytes(bytesOf(d), bytesOf(a), nil, *(*uint8)(unsafe.Pointer(&s)), isAnd)
	}
	sv = func(d []T, s T, b []T) { vs(d, b, s) } // both commute
	return vv, vs, sv
}

// bitwiseBytes sets d = a & b (or a | b) bytewise, with b the scalar s
// when nil: over whole uint64 words (plain loops: simd has no vector
// And/Or, and its generic ones are slower), then the tail.
func bitwiseBytes(d, a, b []byte, s uint8, isAnd bool) {
	n := len(d)
	a = a[:n]
	if w := n / 8; w > 0 {
		dw, aw := words(d, w), words(a, w)
		sw := uint64(s) * 0x0101010101010101
		switch {
		case b != nil && isAnd:
			bw := words(b[:n], w)
			for i := range dw {
				dw[i] = aw[i] & bw[i]
			}
		case b != nil:
			bw := words(b[:n], w)
			for i := range dw {
				dw[i] = aw[i] | bw[i]
			}
		case isAnd:
			for i := range dw {
				dw[i] = aw[i] & sw
			}
		default:
			for i := range dw {
				dw[i] = aw[i] | sw
			}
		}
	}
	for i := n &^ 7; i < n; i++ {
		y := s
		if b != nil {
			y = b[i]
		}
		if isAnd {
			d[i] = a[i] & y
		} else {
			d[i] = a[i] | y
		}
	}
}

// words views the first 8w bytes of b as w uint64s.
func words(b []byte, w int) []uint64 {
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), w)
}

// bytesOf views a slice of one-byte elements as bytes.
func bytesOf[T any](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x))
}

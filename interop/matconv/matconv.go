package matconv

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/mat"
)

// FromDense returns m as a float64 tensor of shape [r,c].
//
// When m's stride equals its column count (every Dense made by
// mat.NewDense, and a Slice that keeps all columns), the tensor shares m's
// memory: no element is copied, and writes through m are visible through
// the tensor and the other way round. Otherwise (a Slice narrower than its
// parent) the elements are copied into a new tensor. Use Shares to tell
// which happened. An empty m (the zero Dense) gives a f64[0,0] tensor.
func FromDense(m *mat.Dense) (*tensor.Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("matconv: FromDense: nil *mat.Dense")
	}
	if m.IsEmpty() {
		return tensor.Make(tensor.Float64, 0, 0)
	}
	raw := m.RawMatrix()
	return general("FromDense", raw.Rows, raw.Cols, raw.Stride, raw.Data, true)
}

// general wraps (when share is set and the stride allows) or copies a
// row-major float64 matrix with the given stride.
func general(fn string, r, c, stride int, data []float64, share bool) (*tensor.Tensor, error) {
	if share && stride == c {
		t, err := tensor.New(data[:r*c:r*c], r, c)
		if err != nil {
			return nil, fmt.Errorf("matconv: %s: %w", fn, err)
		}
		return t, nil
	}
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		copy(out[i*c:(i+1)*c], data[i*stride:i*stride+c])
	}
	t, err := tensor.New(out, r, c)
	if err != nil {
		return nil, fmt.Errorf("matconv: %s: %w", fn, err)
	}
	return t, nil
}

// ToDense returns the rank-2 tensor t as an r×c *mat.Dense.
//
// A float64 tensor is shared: the Dense wraps the tensor's memory (no
// copy), and writes through either are visible through the other; that
// includes exec's Program.RunInto writing its outputs into t. The other
// real dtypes are converted into a new Dense (a copy): float32, float16
// and bfloat16 exactly, the integers exactly up to 2^53 in magnitude
// (int64 beyond that rounds to the nearest float64), bool as 0 and 1.
//
// It is an error if t is nil, not of rank 2 (a vector goes through
// ToVecDense), complex (use ToCDense, or ops.Real in the graph), or has a
// zero dimension (gonum has no empty r×0 or 0×c matrices).
func ToDense(t *tensor.Tensor) (*mat.Dense, error) {
	r, c, err := matrixShape("ToDense", t, "use ToVecDense for a vector")
	if err != nil {
		return nil, err
	}
	if t.DType().IsComplex() {
		return nil, fmt.Errorf("matconv: ToDense: tensor %s is complex: use ToCDense, or take ops.Real or ops.Imag in the graph first", t.Type())
	}
	return mat.NewDense(r, c, float64s(t)), nil
}

// matrixShape checks that t is a rank-2 tensor gonum can hold and returns
// its dimensions.
func matrixShape(fn string, t *tensor.Tensor, vectorHint string) (r, c int, err error) {
	if t == nil {
		return 0, 0, fmt.Errorf("matconv: %s: nil tensor", fn)
	}
	if t.Rank() != 2 {
		hint := ""
		if t.Rank() == 1 && vectorHint != "" {
			hint = " (" + vectorHint + ")"
		}
		return 0, 0, fmt.Errorf("matconv: %s: tensor %s has rank %d, need a rank-2 matrix%s", fn, t.Type(), t.Rank(), hint)
	}
	s := t.Shape()
	if s[0] == 0 || s[1] == 0 {
		return 0, 0, fmt.Errorf("matconv: %s: tensor %s has a zero dimension, and gonum has no empty matrices", fn, t.Type())
	}
	return s[0], s[1], nil
}

// float64s returns t's elements as float64: t's own memory for a float64
// tensor, else a new slice. t is a valid real tensor.
func float64s(t *tensor.Tensor) []float64 {
	b := t.Bytes()
	switch t.DType() {
	case tensor.Float64:
		return tensor.View[float64](b)[:t.Size()]
	case tensor.Float32:
		return widen(tensor.View[float32](b))
	case tensor.Int8:
		return widen(tensor.View[int8](b))
	case tensor.Int16:
		return widen(tensor.View[int16](b))
	case tensor.Int32:
		return widen(tensor.View[int32](b))
	case tensor.Int64:
		return widen(tensor.View[int64](b))
	case tensor.Uint8:
		return widen(b)
	}
	return t.Float64s() // bool, float16, bfloat16
}

func widen[T int8 | int16 | int32 | int64 | uint8 | float32](src []T) []float64 {
	out := make([]float64, len(src))
	for i, v := range src {
		out[i] = float64(v)
	}
	return out
}

// FromVecDense returns v as a float64 tensor of shape [n].
//
// When v's increment is 1 (every VecDense made by mat.NewVecDense, a
// SliceVec of one, a column view of a one-column Dense), the tensor
// shares v's memory: writes through either are visible through the other.
// Otherwise (a column view of a wider Dense, say) the elements are copied.
// An empty v (the zero VecDense) gives a f64[0] tensor.
func FromVecDense(v *mat.VecDense) (*tensor.Tensor, error) {
	if v == nil {
		return nil, fmt.Errorf("matconv: FromVecDense: nil *mat.VecDense")
	}
	if v.IsEmpty() {
		return tensor.Make(tensor.Float64, 0)
	}
	raw := v.RawVector()
	n := raw.N
	var data []float64
	if raw.Inc == 1 {
		data = raw.Data[:n:n]
	} else {
		data = make([]float64, n)
		for i := range data {
			data[i] = raw.Data[i*raw.Inc]
		}
	}
	t, err := tensor.New(data, n)
	if err != nil {
		return nil, fmt.Errorf("matconv: FromVecDense: %w", err)
	}
	return t, nil
}

// ToVecDense returns the rank-1 tensor t as a *mat.VecDense.
//
// A float64 tensor is shared (no copy; writes through either are visible
// through the other); the other real dtypes are converted into a new
// VecDense as ToDense converts them. It is an error if t is nil, not of
// rank 1 (an [n,1] or [1,n] matrix goes through ToDense, whose ColView or
// RowView is a VecDense), complex, or empty.
func ToVecDense(t *tensor.Tensor) (*mat.VecDense, error) {
	if t == nil {
		return nil, fmt.Errorf("matconv: ToVecDense: nil tensor")
	}
	if t.Rank() != 1 {
		hint := ""
		if t.Rank() == 2 {
			hint = " (use ToDense for a matrix; its ColView or RowView is a VecDense)"
		}
		return nil, fmt.Errorf("matconv: ToVecDense: tensor %s has rank %d, need a rank-1 vector%s", t.Type(), t.Rank(), hint)
	}
	if t.DType().IsComplex() {
		return nil, fmt.Errorf("matconv: ToVecDense: tensor %s is complex, and gonum's VecDense is real: take ops.Real or ops.Imag in the graph first", t.Type())
	}
	if t.Size() == 0 {
		return nil, fmt.Errorf("matconv: ToVecDense: tensor %s is empty, and gonum has no empty vectors", t.Type())
	}
	return mat.NewVecDense(t.Size(), float64s(t)), nil
}

// FromSymDense returns s as a full float64 tensor of shape [n,n], both
// triangles filled. It always copies: a SymDense's memory holds the
// matrix only in its upper triangle (what lies below the diagonal is not
// part of the matrix), so no view of it is a dense tensor. An empty s
// gives a f64[0,0] tensor.
func FromSymDense(s *mat.SymDense) (*tensor.Tensor, error) {
	if s == nil {
		return nil, fmt.Errorf("matconv: FromSymDense: nil *mat.SymDense")
	}
	if s.IsEmpty() {
		return tensor.Make(tensor.Float64, 0, 0)
	}
	raw := s.RawSymmetric() // gonum keeps a SymDense in its upper triangle
	n := raw.N
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+n]
		for j := i; j < n; j++ {
			out[i*n+j] = row[j]
			out[j*n+i] = row[j]
		}
	}
	t, err := tensor.New(out, n, n)
	if err != nil {
		return nil, fmt.Errorf("matconv: FromSymDense: %w", err)
	}
	return t, nil
}

// ToSymDense returns the square tensor t as a *mat.SymDense. t must be
// exactly symmetric: t[i,j] and t[j,i] equal for every i and j (NaNs with
// the same bits count as equal); otherwise the error names the first pair
// that differs. Results of a computation that are symmetric only up to
// rounding can be made exact in the graph first, as
// ops.Mul(ops.Add(a, ops.Transpose(a)), half) with half 0.5 (floating-point
// addition commutes, so the sum is exactly symmetric), or converted with
// ToSymDenseUpper, which reads only the upper triangle.
//
// A float64 tensor is shared as ToDense shares it, with one difference:
// gonum reads and writes only the upper triangle, so a write through the
// SymDense (SetSym, or a SymDense method storing into it) updates the
// tensor's upper triangle only, and the tensor is no longer symmetric.
// Writes to the tensor's upper triangle are visible through the SymDense;
// writes below the diagonal are not. The other real dtypes are copied as
// ToDense copies them. It is an error if t is nil, not a square rank-2
// tensor, complex, or empty.
func ToSymDense(t *tensor.Tensor) (*mat.SymDense, error) {
	return toSym("ToSymDense", t, true)
}

// ToSymDenseUpper is ToSymDense without the symmetry check: the SymDense
// is t's upper triangle (diagonal included) mirrored, and what t holds
// below the diagonal is ignored, as LAPACK's routines with uplo 'U' ignore
// it. It is the conversion for a result that is symmetric in exact
// arithmetic but may differ in the last bits between t[i,j] and t[j,i]
// (AᵀA, say: a backend is free to sum the two in different orders; loom's
// CPU MatMul happens to give an exactly symmetric AᵀA, which the tests do
// not rely on).
func ToSymDenseUpper(t *tensor.Tensor) (*mat.SymDense, error) {
	return toSym("ToSymDenseUpper", t, false)
}

func toSym(fn string, t *tensor.Tensor, check bool) (*mat.SymDense, error) {
	r, c, err := matrixShape(fn, t, "")
	if err != nil {
		return nil, err
	}
	if t.DType().IsComplex() {
		return nil, fmt.Errorf("matconv: %s: tensor %s is complex, and gonum's SymDense is real", fn, t.Type())
	}
	if r != c {
		return nil, fmt.Errorf("matconv: %s: tensor %s is not square", fn, t.Type())
	}
	data := float64s(t)
	if check {
		for i := 0; i < r; i++ {
			for j := i + 1; j < r; j++ {
				a, b := data[i*r+j], data[j*r+i]
				if a != b && math.Float64bits(a) != math.Float64bits(b) {
					return nil, fmt.Errorf("matconv: %s: tensor %s is not symmetric: [%d,%d] is %v but [%d,%d] is %v (ToSymDenseUpper reads only the upper triangle)", fn, t.Type(), i, j, a, j, i, b)
				}
			}
		}
	}
	return mat.NewSymDense(r, data), nil
}

// FromCDense returns m as a complex128 tensor of shape [r,c], sharing m's
// memory when m's stride equals its column count (writes through either
// are then visible through the other) and copying otherwise, as FromDense
// does. An empty m gives a c128[0,0] tensor.
func FromCDense(m *mat.CDense) (*tensor.Tensor, error) {
	if m == nil {
		return nil, fmt.Errorf("matconv: FromCDense: nil *mat.CDense")
	}
	if m.IsEmpty() {
		return tensor.Make(tensor.Complex128, 0, 0)
	}
	raw := m.RawCMatrix()
	r, c := raw.Rows, raw.Cols
	var data []complex128
	if raw.Stride == c {
		data = raw.Data[: r*c : r*c]
	} else {
		data = make([]complex128, r*c)
		for i := 0; i < r; i++ {
			copy(data[i*c:(i+1)*c], raw.Data[i*raw.Stride:i*raw.Stride+c])
		}
	}
	t, err := tensor.New(data, r, c)
	if err != nil {
		return nil, fmt.Errorf("matconv: FromCDense: %w", err)
	}
	return t, nil
}

// ToCDense returns the rank-2 tensor t as an r×c *mat.CDense.
//
// A complex128 tensor is shared (no copy; writes through either are
// visible through the other). A complex64 tensor is widened into a new
// CDense, and a real tensor (any dtype ToDense takes) becomes a new
// CDense with zero imaginary parts. It is an error if t is nil, not of
// rank 2, or has a zero dimension.
func ToCDense(t *tensor.Tensor) (*mat.CDense, error) {
	r, c, err := matrixShape("ToCDense", t, "gonum has no complex vector type: reshape it to [1,n] or [n,1]")
	if err != nil {
		return nil, err
	}
	var data []complex128
	switch t.DType() {
	case tensor.Complex128:
		data = tensor.View[complex128](t.Bytes())[:t.Size()]
	case tensor.Complex64:
		src := tensor.View[complex64](t.Bytes())[:t.Size()]
		data = make([]complex128, len(src))
		for i, v := range src {
			data[i] = complex128(v)
		}
	default:
		re := float64s(t) // read only: for float64 it is t's own memory
		data = make([]complex128, len(re))
		for i, v := range re {
			data[i] = complex(v, 0)
		}
	}
	return mat.NewCDense(r, c, data), nil
}

// FromMatrix returns any gonum matrix as a new float64 tensor of shape
// [r,c]: triangular, banded, diagonal and symmetric types, a Transpose
// view, a VecDense (an n×1 matrix, so [n,1]), or a caller's own type.
//
// FromMatrix always copies, even a *mat.Dense that FromDense would share:
// a caller holding an interface value cannot tell statically which
// concrete type it has, so FromMatrix gives the same ownership for all of
// them. A *mat.Dense, a *mat.VecDense, a *mat.SymDense and a mat.Transpose
// of a *mat.Dense are copied from their memory directly; every other type
// element by element through At. A panic inside m's methods (a typed nil
// pointer, a caller's At with a bug) is returned as an error.
func FromMatrix(m mat.Matrix) (t *tensor.Tensor, err error) {
	if m == nil {
		return nil, fmt.Errorf("matconv: FromMatrix: nil mat.Matrix")
	}
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("matconv: FromMatrix: the %T panicked: %v", m, p)
		}
	}()
	switch x := m.(type) {
	case *mat.Dense:
		if x == nil {
			return nil, fmt.Errorf("matconv: FromMatrix: nil *mat.Dense")
		}
		if x.IsEmpty() {
			return tensor.Make(tensor.Float64, 0, 0)
		}
		raw := x.RawMatrix()
		return general("FromMatrix", raw.Rows, raw.Cols, raw.Stride, raw.Data, false)
	case *mat.VecDense:
		if x == nil {
			return nil, fmt.Errorf("matconv: FromMatrix: nil *mat.VecDense")
		}
		raw := x.RawVector() // the zero VecDense has N 0: a [0,1] tensor, as its Dims say
		out := make([]float64, raw.N)
		for i := range out {
			out[i] = raw.Data[i*raw.Inc]
		}
		return tensor.New(out, raw.N, 1)
	case *mat.SymDense:
		if x == nil {
			return nil, fmt.Errorf("matconv: FromMatrix: nil *mat.SymDense")
		}
		return FromSymDense(x)
	case mat.Transpose:
		if d, ok := x.Matrix.(*mat.Dense); ok && d != nil && !d.IsEmpty() {
			raw := d.RawMatrix()
			r, c := raw.Cols, raw.Rows // of the transpose
			out := make([]float64, r*c)
			for i := 0; i < raw.Rows; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+raw.Cols]
				for j, v := range row {
					out[j*c+i] = v
				}
			}
			return tensor.New(out, r, c)
		}
	}
	r, c := m.Dims()
	if r < 0 || c < 0 {
		return nil, fmt.Errorf("matconv: FromMatrix: the %T has dimensions %d×%d", m, r, c)
	}
	out, err := tensor.Make(tensor.Float64, r, c)
	if err != nil {
		return nil, fmt.Errorf("matconv: FromMatrix: %w", err)
	}
	data := tensor.View[float64](out.Bytes())
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			data[i*c+j] = m.At(i, j)
		}
	}
	return out, nil
}

// Shares reports whether the tensor t and the gonum value m (a
// *mat.Dense, *mat.VecDense, *mat.SymDense or *mat.CDense) overlap in
// memory, as they do after a conversion that did not copy: a write through
// one may then change the other. It is false for any other m, and for a
// nil or empty t or m.
func Shares(t *tensor.Tensor, m any) bool {
	b := t.Bytes()
	if len(b) == 0 {
		return false
	}
	var lo, n uintptr // m's memory
	switch x := m.(type) {
	case *mat.Dense:
		if x == nil || x.IsEmpty() {
			return false
		}
		lo, n = span(x.RawMatrix().Data)
	case *mat.VecDense:
		if x == nil || x.IsEmpty() {
			return false
		}
		lo, n = span(x.RawVector().Data)
	case *mat.SymDense:
		if x == nil || x.IsEmpty() {
			return false
		}
		lo, n = span(x.RawSymmetric().Data)
	case *mat.CDense:
		if x == nil || x.IsEmpty() {
			return false
		}
		lo, n = span(x.RawCMatrix().Data)
	default:
		return false
	}
	tlo, tn := span(b)
	return n > 0 && tlo < lo+n && lo < tlo+tn
}

// span returns the address and byte length of s's elements.
func span[T any](s []T) (uintptr, uintptr) {
	if len(s) == 0 {
		return 0, 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s)) * unsafe.Sizeof(s[0])
}

package matconv_test

import (
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/interop/matconv"
	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/mat"
)

// f64 returns a float64 tensor's elements as a slice over its memory.
func f64(t *testing.T, x *tensor.Tensor) []float64 {
	t.Helper()
	v, err := tensor.Values[float64](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// denseValues returns m's elements in row-major order, read through At.
func denseValues(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}

func TestFromDenseShares(t *testing.T) {
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	x, err := matconv.FromDense(m)
	if err != nil {
		t.Fatal(err)
	}
	if x.Type() != "f64[2,3]" {
		t.Fatalf("type %s, want f64[2,3]", x.Type())
	}
	v := f64(t, x)
	if !equal(v, []float64{1, 2, 3, 4, 5, 6}) {
		t.Fatalf("values %v", v)
	}
	if &v[0] != &m.RawMatrix().Data[0] || !matconv.Shares(x, m) {
		t.Fatal("FromDense copied a Dense whose stride equals its width")
	}
	m.Set(1, 2, 60) // element 1*3+2 = 5
	if v[5] != 60 {
		t.Errorf("a write through the Dense is not in the tensor: %v", v)
	}
	v[0] = -1
	if m.At(0, 0) != -1 {
		t.Errorf("a write through the tensor is not in the Dense: %v", m.At(0, 0))
	}
}

func TestFromDenseSlice(t *testing.T) {
	parent := mat.NewDense(3, 4, []float64{
		0, 1, 2, 3,
		4, 5, 6, 7,
		8, 9, 10, 11,
	})
	// Rows 1-2, columns 1-2: stride 4 over 2 columns, so a copy.
	narrow := parent.Slice(1, 3, 1, 3).(*mat.Dense)
	x, err := matconv.FromDense(narrow)
	if err != nil {
		t.Fatal(err)
	}
	if x.Type() != "f64[2,2]" || !equal(f64(t, x), []float64{5, 6, 9, 10}) {
		t.Fatalf("%s %v, want f64[2,2] [5 6 9 10]", x.Type(), f64(t, x))
	}
	if matconv.Shares(x, narrow) || matconv.Shares(x, parent) {
		t.Fatal("the copy of a narrow slice shares memory")
	}
	parent.Set(1, 1, 50)
	if f64(t, x)[0] != 5 {
		t.Error("a write to the parent changed the copy")
	}

	// Rows 1-2, every column: stride 4 over 4 columns, shared with the parent.
	wide := parent.Slice(1, 3, 0, 4).(*mat.Dense)
	y, err := matconv.FromDense(wide)
	if err != nil {
		t.Fatal(err)
	}
	v := f64(t, y)
	if y.Type() != "f64[2,4]" || !equal(v, []float64{4, 50, 6, 7, 8, 9, 10, 11}) {
		t.Fatalf("%s %v", y.Type(), v)
	}
	if &v[0] != &parent.RawMatrix().Data[4] || !matconv.Shares(y, parent) {
		t.Fatal("a full-width slice was copied")
	}
	v[7] = -11
	if parent.At(2, 3) != -11 {
		t.Error("a write through the tensor is not in the parent Dense")
	}
}

func TestFromEmpty(t *testing.T) {
	var d mat.Dense
	var v mat.VecDense
	var s mat.SymDense
	var c mat.CDense
	for _, tc := range []struct {
		name string
		conv func() (*tensor.Tensor, error)
		want string
	}{
		{"Dense", func() (*tensor.Tensor, error) { return matconv.FromDense(&d) }, "f64[0,0]"},
		{"VecDense", func() (*tensor.Tensor, error) { return matconv.FromVecDense(&v) }, "f64[0]"},
		{"SymDense", func() (*tensor.Tensor, error) { return matconv.FromSymDense(&s) }, "f64[0,0]"},
		{"CDense", func() (*tensor.Tensor, error) { return matconv.FromCDense(&c) }, "c128[0,0]"},
		{"Matrix(Dense)", func() (*tensor.Tensor, error) { return matconv.FromMatrix(&d) }, "f64[0,0]"},
		{"Matrix(VecDense)", func() (*tensor.Tensor, error) { return matconv.FromMatrix(&v) }, "f64[0,1]"},
		{"Matrix(SymDense)", func() (*tensor.Tensor, error) { return matconv.FromMatrix(&s) }, "f64[0,0]"},
		{"Matrix(Transpose)", func() (*tensor.Tensor, error) { return matconv.FromMatrix(d.T()) }, "f64[0,0]"},
	} {
		x, err := tc.conv()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if x.Type() != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, x.Type(), tc.want)
		}
	}
}

func TestToDenseShares(t *testing.T) {
	data := []float64{1, 2, 3, 4, 5, 6}
	x, err := tensor.New(data, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	m, err := matconv.ToDense(x)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := m.Dims(); r != 3 || c != 2 {
		t.Fatalf("dims %d×%d, want 3×2", r, c)
	}
	if got := denseValues(m); !equal(got, data) {
		t.Fatalf("values %v, want %v", got, data)
	}
	if &m.RawMatrix().Data[0] != &data[0] || !matconv.Shares(x, m) {
		t.Fatal("ToDense copied a float64 tensor")
	}
	m.Set(2, 0, 50) // element 2*2+0 = 4
	if data[4] != 50 {
		t.Errorf("a write through the Dense is not in the tensor: %v", data)
	}
	data[1] = 20
	if m.At(0, 1) != 20 {
		t.Errorf("a write through the tensor is not in the Dense: %v", m.At(0, 1))
	}
}

func TestToDenseConverts(t *testing.T) {
	// Every value is exact in every float dtype; the integer and bool rows
	// are the values as loom's Cast converts them (truncation toward zero,
	// uint8 saturating at 0, bool != 0), worked by hand.
	in := []float64{1, -2, 3.5, 0}
	for _, tc := range []struct {
		dt   tensor.DType
		want []float64
	}{
		{tensor.Float32, []float64{1, -2, 3.5, 0}},
		{tensor.Float16, []float64{1, -2, 3.5, 0}},
		{tensor.BFloat16, []float64{1, -2, 3.5, 0}},
		{tensor.Int8, []float64{1, -2, 3, 0}},
		{tensor.Int16, []float64{1, -2, 3, 0}},
		{tensor.Int32, []float64{1, -2, 3, 0}},
		{tensor.Int64, []float64{1, -2, 3, 0}},
		{tensor.Uint8, []float64{1, 0, 3, 0}},
		{tensor.Bool, []float64{1, 1, 1, 0}},
	} {
		x, err := tensor.FromFloat64s(tc.dt, in, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		before := append([]byte(nil), x.Bytes()...)
		m, err := matconv.ToDense(x)
		if err != nil {
			t.Errorf("%v: %v", tc.dt, err)
			continue
		}
		if got := denseValues(m); !equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.dt, got, tc.want)
		}
		if matconv.Shares(x, m) {
			t.Errorf("%v: the converted Dense shares the tensor's memory", tc.dt)
		}
		m.Set(0, 0, 9)
		if string(x.Bytes()) != string(before) {
			t.Errorf("%v: a write to the converted Dense changed the tensor", tc.dt)
		}
	}

	// int64 beyond 2^53 rounds to the nearest float64: 2^53+1 lies halfway
	// between 2^53 and 2^53+2 and rounds to even, 2^53 (hand calculation).
	big, _ := tensor.New([]int64{1<<53 + 1, -(1<<53 + 3)}, 1, 2)
	m, err := matconv.ToDense(big)
	if err != nil {
		t.Fatal(err)
	}
	// -(2^53+3) is halfway between -(2^53+2) and -(2^53+4); even is 2^53+4.
	if got := denseValues(m); !equal(got, []float64{1 << 53, -(1<<53 + 4)}) {
		t.Errorf("int64 %v", got)
	}
}

func TestVecDense(t *testing.T) {
	v := mat.NewVecDense(3, []float64{1, 2, 3})
	x, err := matconv.FromVecDense(v)
	if err != nil {
		t.Fatal(err)
	}
	xv := f64(t, x)
	if x.Type() != "f64[3]" || !equal(xv, []float64{1, 2, 3}) {
		t.Fatalf("%s %v", x.Type(), xv)
	}
	if &xv[0] != &v.RawVector().Data[0] || !matconv.Shares(x, v) {
		t.Fatal("FromVecDense copied a VecDense of increment 1")
	}
	v.SetVec(2, 30)
	if xv[2] != 30 {
		t.Error("a write through the VecDense is not in the tensor")
	}
	xv[0] = 10
	if v.AtVec(0) != 10 {
		t.Error("a write through the tensor is not in the VecDense")
	}

	// A column of a 2×3 Dense has increment 3: a copy.
	m := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	col := m.ColView(1).(*mat.VecDense)
	y, err := matconv.FromVecDense(col)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(f64(t, y), []float64{2, 5}) || matconv.Shares(y, col) {
		t.Fatalf("column %v (shared %v), want a copy [2 5]", f64(t, y), matconv.Shares(y, col))
	}

	data := []float64{4, 5}
	z, _ := tensor.New(data)
	w, err := matconv.ToVecDense(z)
	if err != nil {
		t.Fatal(err)
	}
	if w.Len() != 2 || w.AtVec(0) != 4 || w.AtVec(1) != 5 || !matconv.Shares(z, w) {
		t.Fatalf("ToVecDense: len %d, %v, shared %v", w.Len(), denseValues(w), matconv.Shares(z, w))
	}
	w.SetVec(1, 50)
	if data[1] != 50 {
		t.Error("a write through the VecDense is not in the tensor")
	}

	i32, _ := tensor.New([]int32{-7, 8, 9})
	u, err := matconv.ToVecDense(i32)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(denseValues(u), []float64{-7, 8, 9}) || matconv.Shares(i32, u) {
		t.Errorf("int32 vector %v (shared %v)", denseValues(u), matconv.Shares(i32, u))
	}
}

func TestSymDense(t *testing.T) {
	// gonum keeps the upper triangle; the 99s below the diagonal are not
	// part of the matrix.
	s := mat.NewSymDense(3, []float64{
		1, 2, 3,
		99, 4, 5,
		99, 99, 6,
	})
	x, err := matconv.FromSymDense(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 2, 3, 2, 4, 5, 3, 5, 6}
	if x.Type() != "f64[3,3]" || !equal(f64(t, x), want) {
		t.Fatalf("%s %v, want %v", x.Type(), f64(t, x), want)
	}
	if matconv.Shares(x, s) {
		t.Fatal("FromSymDense shares memory; it must copy")
	}

	data := append([]float64(nil), want...)
	y, _ := tensor.New(data, 3, 3)
	sy, err := matconv.ToSymDense(y)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(denseValues(sy), want) || !matconv.Shares(y, sy) {
		t.Fatalf("ToSymDense %v (shared %v)", denseValues(sy), matconv.Shares(y, sy))
	}
	// A write through the SymDense lands in the upper triangle only.
	sy.SetSym(2, 0, 30)
	if data[0*3+2] != 30 || data[2*3+0] != 3 {
		t.Errorf("after SetSym(2,0): [0,2] %v (want 30), [2,0] %v (want 3, stale)", data[2], data[6])
	}
	data[1*3+2] = 50
	if sy.At(2, 1) != 50 || sy.At(1, 2) != 50 {
		t.Errorf("a write to the tensor's upper triangle is not in the SymDense: %v", denseValues(sy))
	}

	// Symmetric NaNs are symmetric.
	nan, _ := tensor.New([]float64{1, math.NaN(), math.NaN(), 2}, 2, 2)
	if _, err := matconv.ToSymDense(nan); err != nil {
		t.Errorf("NaN pair: %v", err)
	}

	// Not symmetric: ToSymDense refuses, ToSymDenseUpper mirrors the upper
	// triangle.
	asym, _ := tensor.New([]float64{1, 2, 2.0000000001, 3}, 2, 2)
	if _, err := matconv.ToSymDense(asym); err == nil || !strings.Contains(err.Error(), "[0,1] is 2 but [1,0] is 2.0000000001") {
		t.Errorf("asymmetric: %v", err)
	}
	up, err := matconv.ToSymDenseUpper(asym)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(denseValues(up), []float64{1, 2, 2, 3}) {
		t.Errorf("ToSymDenseUpper %v, want [1 2 2 3]", denseValues(up))
	}

	f32, _ := tensor.New([]float32{1, 0.5, 0.5, 1}, 2, 2)
	s32, err := matconv.ToSymDense(f32)
	if err != nil {
		t.Fatal(err)
	}
	if !equal(denseValues(s32), []float64{1, 0.5, 0.5, 1}) || matconv.Shares(f32, s32) {
		t.Errorf("float32 %v (shared %v)", denseValues(s32), matconv.Shares(f32, s32))
	}
}

func TestCDense(t *testing.T) {
	m := mat.NewCDense(2, 2, []complex128{1 + 2i, 3, -4i, 5 - 6i})
	x, err := matconv.FromCDense(m)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := tensor.Values[complex128](x)
	if x.Type() != "c128[2,2]" || v[0] != 1+2i || v[3] != 5-6i {
		t.Fatalf("%s %v", x.Type(), v)
	}
	if &v[0] != &m.RawCMatrix().Data[0] || !matconv.Shares(x, m) {
		t.Fatal("FromCDense copied")
	}
	m.Set(1, 0, 7i)
	if v[2] != 7i {
		t.Error("a write through the CDense is not in the tensor")
	}

	big := mat.NewCDense(2, 3, []complex128{1, 2, 3, 4, 5, 6i})
	sub := big.Slice(0, 2, 1, 3).(*mat.CDense) // stride 3 over 2 columns
	y, err := matconv.FromCDense(sub)
	if err != nil {
		t.Fatal(err)
	}
	yv, _ := tensor.Values[complex128](y)
	if len(yv) != 4 || yv[0] != 2 || yv[1] != 3 || yv[2] != 5 || yv[3] != 6i || matconv.Shares(y, big) {
		t.Fatalf("slice %v (shared %v), want a copy [2 3 5 6i]", yv, matconv.Shares(y, big))
	}

	data := []complex128{1i, 2, 3, 4i}
	z, _ := tensor.New(data, 1, 4)
	c, err := matconv.ToCDense(z)
	if err != nil {
		t.Fatal(err)
	}
	if !matconv.Shares(z, c) || c.At(0, 3) != 4i {
		t.Fatal("ToCDense copied a complex128 tensor")
	}
	c.Set(0, 1, -2i)
	if data[1] != -2i {
		t.Error("a write through the CDense is not in the tensor")
	}

	c64, _ := tensor.New([]complex64{1.5 - 2i, 3i}, 2, 1)
	c2, err := matconv.ToCDense(c64)
	if err != nil {
		t.Fatal(err)
	}
	if c2.At(0, 0) != 1.5-2i || c2.At(1, 0) != 3i || matconv.Shares(c64, c2) {
		t.Errorf("complex64: %v %v (shared %v)", c2.At(0, 0), c2.At(1, 0), matconv.Shares(c64, c2))
	}
	re, _ := tensor.New([]float64{1, -2}, 1, 2)
	c3, err := matconv.ToCDense(re)
	if err != nil {
		t.Fatal(err)
	}
	if c3.At(0, 0) != 1 || c3.At(0, 1) != -2 || matconv.Shares(re, c3) {
		t.Errorf("float64: %v %v (shared %v)", c3.At(0, 0), c3.At(0, 1), matconv.Shares(re, c3))
	}
}

// matrix is a caller's own mat.Matrix: element (i,j) is 10i+j.
type matrix struct{ r, c int }

func (m matrix) Dims() (int, int)    { return m.r, m.c }
func (m matrix) At(i, j int) float64 { return float64(10*i + j) }
func (m matrix) T() mat.Matrix       { return mat.Transpose{Matrix: m} }

// panicky is a mat.Matrix whose At panics.
type panicky struct{}

func (panicky) Dims() (int, int)    { return 2, 2 }
func (panicky) At(i, j int) float64 { panic("bad At") }
func (p panicky) T() mat.Matrix     { return mat.Transpose{Matrix: p} }

func TestFromMatrix(t *testing.T) {
	d := mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})
	tri := mat.NewTriDense(3, mat.Upper, []float64{
		1, 2, 3,
		99, 4, 5,
		99, 99, 6,
	})
	band := mat.NewBandDense(3, 3, 1, 0, []float64{ // kl 1, ku 0: diagonal and one below
		0, 1,
		2, 3,
		4, 5,
	})
	for _, tc := range []struct {
		name string
		m    mat.Matrix
		typ  string
		want []float64 // hand-written from the constructors' layouts
	}{
		{"Dense", d, "f64[2,3]", []float64{1, 2, 3, 4, 5, 6}},
		{"Dense.T", d.T(), "f64[3,2]", []float64{1, 4, 2, 5, 3, 6}},
		{"narrow Slice.T", d.Slice(0, 2, 1, 3).T(), "f64[2,2]", []float64{2, 5, 3, 6}},
		{"VecDense", mat.NewVecDense(3, []float64{7, 8, 9}), "f64[3,1]", []float64{7, 8, 9}},
		{"VecDense column", d.ColView(2), "f64[2,1]", []float64{3, 6}},
		{"SymDense", mat.NewSymDense(2, []float64{1, 2, 99, 3}), "f64[2,2]", []float64{1, 2, 2, 3}},
		{"TriDense", tri, "f64[3,3]", []float64{1, 2, 3, 0, 4, 5, 0, 0, 6}},
		{"TriDense.T", tri.T(), "f64[3,3]", []float64{1, 0, 0, 2, 4, 0, 3, 5, 6}},
		{"BandDense", band, "f64[3,3]", []float64{1, 0, 0, 2, 3, 0, 0, 4, 5}},
		{"DiagDense", mat.NewDiagDense(2, []float64{-1, 2}), "f64[2,2]", []float64{-1, 0, 0, 2}},
		{"own type", matrix{2, 3}, "f64[2,3]", []float64{0, 1, 2, 10, 11, 12}},
		{"own type.T", matrix{2, 3}.T(), "f64[3,2]", []float64{0, 10, 1, 11, 2, 12}},
		{"zero-size own type", matrix{0, 3}, "f64[0,3]", []float64{}},
	} {
		x, err := matconv.FromMatrix(tc.m)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if x.Type() != tc.typ || !equal(f64(t, x), tc.want) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, x.Type(), f64(t, x), tc.typ, tc.want)
		}
	}
	// FromMatrix copies even a Dense.
	x, _ := matconv.FromMatrix(d)
	if matconv.Shares(x, d) {
		t.Error("FromMatrix shares a Dense's memory")
	}
	d.Set(0, 0, 100)
	if f64(t, x)[0] != 1 {
		t.Error("a write to the Dense changed FromMatrix's copy")
	}
}

func TestShares(t *testing.T) {
	d := mat.NewDense(1, 2, []float64{1, 2})
	x, _ := matconv.FromDense(d)
	other, _ := tensor.New([]float64{1, 2}, 1, 2)
	empty, _ := tensor.New([]float64{}, 0, 2)
	for _, tc := range []struct {
		name string
		t    *tensor.Tensor
		m    any
		want bool
	}{
		{"same", x, d, true},
		{"other memory", other, d, false},
		{"nil tensor", nil, d, false},
		{"empty tensor", empty, d, false},
		{"nil Dense", x, (*mat.Dense)(nil), false},
		{"empty Dense", x, &mat.Dense{}, false},
		{"nil VecDense", x, (*mat.VecDense)(nil), false},
		{"nil SymDense", x, (*mat.SymDense)(nil), false},
		{"nil CDense", x, (*mat.CDense)(nil), false},
		{"not a gonum type", x, []float64{1, 2}, false},
		{"nil", x, nil, false},
		{"transpose view", x, d.T(), false}, // only the concrete types are looked into
	} {
		if got := matconv.Shares(tc.t, tc.m); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// A slice starting inside the tensor overlaps it.
	big := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	y, _ := matconv.FromDense(big)
	if !matconv.Shares(y, big.Slice(1, 2, 1, 2).(*mat.Dense)) {
		t.Error("a slice of the shared Dense does not overlap the tensor")
	}
}

// negative is a mat.Matrix with a negative dimension.
type negative struct{}

func (negative) Dims() (int, int)    { return -1, 2 }
func (negative) At(i, j int) float64 { return 0 }
func (n negative) T() mat.Matrix     { return mat.Transpose{Matrix: n} }

// huge is a mat.Matrix too large for memory.
type huge struct{}

func (huge) Dims() (int, int)    { return 1 << 40, 1 << 40 }
func (huge) At(i, j int) float64 { return 0 }
func (h huge) T() mat.Matrix     { return mat.Transpose{Matrix: h} }

// TestErrors calls every function with every kind of bad input: each must
// return an error (no panic) naming the function, the tensor's type and
// what was needed.
func TestErrors(t *testing.T) {
	mk := func(dt tensor.DType, shape ...int) *tensor.Tensor {
		x, err := tensor.Make(dt, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	asym, _ := tensor.New([]float64{1, 2, 3, 4}, 2, 2)
	toDense := func(x *tensor.Tensor) func() error {
		return func() error { _, err := matconv.ToDense(x); return err }
	}
	toVec := func(x *tensor.Tensor) func() error {
		return func() error { _, err := matconv.ToVecDense(x); return err }
	}
	toSym := func(x *tensor.Tensor) func() error {
		return func() error { _, err := matconv.ToSymDense(x); return err }
	}
	toSymUpper := func(x *tensor.Tensor) func() error {
		return func() error { _, err := matconv.ToSymDenseUpper(x); return err }
	}
	toC := func(x *tensor.Tensor) func() error {
		return func() error { _, err := matconv.ToCDense(x); return err }
	}
	fromMatrix := func(m mat.Matrix) func() error {
		return func() error { _, err := matconv.FromMatrix(m); return err }
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string
	}{
		{"FromDense nil", func() error { _, err := matconv.FromDense(nil); return err }, "matconv: FromDense: nil *mat.Dense"},
		{"FromVecDense nil", func() error { _, err := matconv.FromVecDense(nil); return err }, "matconv: FromVecDense: nil *mat.VecDense"},
		{"FromSymDense nil", func() error { _, err := matconv.FromSymDense(nil); return err }, "matconv: FromSymDense: nil *mat.SymDense"},
		{"FromCDense nil", func() error { _, err := matconv.FromCDense(nil); return err }, "matconv: FromCDense: nil *mat.CDense"},
		{"FromMatrix nil", fromMatrix(nil), "matconv: FromMatrix: nil mat.Matrix"},
		{"FromMatrix nil Dense", fromMatrix((*mat.Dense)(nil)), "matconv: FromMatrix: nil *mat.Dense"},
		{"FromMatrix nil VecDense", fromMatrix((*mat.VecDense)(nil)), "matconv: FromMatrix: nil *mat.VecDense"},
		{"FromMatrix nil SymDense", fromMatrix((*mat.SymDense)(nil)), "matconv: FromMatrix: nil *mat.SymDense"},
		{"FromMatrix nil TriDense", fromMatrix((*mat.TriDense)(nil)), "matconv: FromMatrix: the *mat.TriDense panicked: runtime error: invalid memory address"},
		{"FromMatrix Transpose of nil Dense", fromMatrix(mat.Transpose{Matrix: (*mat.Dense)(nil)}), "matconv: FromMatrix: the mat.Transpose panicked"},
		{"FromMatrix panicking At", fromMatrix(panicky{}), "matconv: FromMatrix: the matconv_test.panicky panicked: bad At"},
		{"FromMatrix negative", fromMatrix(negative{}), "matconv: FromMatrix: the matconv_test.negative has dimensions -1×2"},
		{"FromMatrix huge", fromMatrix(huge{}), "matconv: FromMatrix: tensor: shape [1099511627776,1099511627776]: too large"},

		{"ToDense nil", toDense(nil), "matconv: ToDense: nil tensor"},
		{"ToDense rank 0", toDense(tensor.Scalar(1.0)), "matconv: ToDense: tensor f64[] has rank 0, need a rank-2 matrix"},
		{"ToDense rank 1", toDense(mk(tensor.Float64, 3)), "matconv: ToDense: tensor f64[3] has rank 1, need a rank-2 matrix (use ToVecDense for a vector)"},
		{"ToDense rank 3", toDense(mk(tensor.Float32, 1, 2, 3)), "matconv: ToDense: tensor f32[1,2,3] has rank 3, need a rank-2 matrix"},
		{"ToDense zero value", toDense(&tensor.Tensor{}), "matconv: ToDense: tensor invalid[] has rank 0"},
		{"ToDense complex64", toDense(mk(tensor.Complex64, 2, 2)), "matconv: ToDense: tensor c64[2,2] is complex: use ToCDense"},
		{"ToDense complex128", toDense(mk(tensor.Complex128, 1, 1)), "matconv: ToDense: tensor c128[1,1] is complex"},
		{"ToDense 0 rows", toDense(mk(tensor.Float64, 0, 3)), "matconv: ToDense: tensor f64[0,3] has a zero dimension, and gonum has no empty matrices"},
		{"ToDense 0 columns", toDense(mk(tensor.Int32, 2, 0)), "matconv: ToDense: tensor i32[2,0] has a zero dimension"},

		{"ToVecDense nil", toVec(nil), "matconv: ToVecDense: nil tensor"},
		{"ToVecDense rank 0", toVec(tensor.Scalar(int8(1))), "matconv: ToVecDense: tensor i8[] has rank 0, need a rank-1 vector"},
		{"ToVecDense rank 2", toVec(mk(tensor.Float64, 3, 1)), "matconv: ToVecDense: tensor f64[3,1] has rank 2, need a rank-1 vector (use ToDense for a matrix; its ColView or RowView is a VecDense)"},
		{"ToVecDense complex", toVec(mk(tensor.Complex128, 2)), "matconv: ToVecDense: tensor c128[2] is complex"},
		{"ToVecDense empty", toVec(mk(tensor.Float64, 0)), "matconv: ToVecDense: tensor f64[0] is empty, and gonum has no empty vectors"},

		{"ToSymDense nil", toSym(nil), "matconv: ToSymDense: nil tensor"},
		{"ToSymDense rank 1", toSym(mk(tensor.Float64, 4)), "matconv: ToSymDense: tensor f64[4] has rank 1, need a rank-2 matrix"},
		{"ToSymDense not square", toSym(mk(tensor.Float64, 2, 3)), "matconv: ToSymDense: tensor f64[2,3] is not square"},
		{"ToSymDense complex", toSym(mk(tensor.Complex128, 2, 2)), "matconv: ToSymDense: tensor c128[2,2] is complex, and gonum's SymDense is real"},
		{"ToSymDense empty", toSym(mk(tensor.Float64, 0, 0)), "matconv: ToSymDense: tensor f64[0,0] has a zero dimension"},
		{"ToSymDense asymmetric", toSym(asym), "matconv: ToSymDense: tensor f64[2,2] is not symmetric: [0,1] is 2 but [1,0] is 3 (ToSymDenseUpper reads only the upper triangle)"},
		{"ToSymDenseUpper not square", toSymUpper(mk(tensor.Float64, 3, 2)), "matconv: ToSymDenseUpper: tensor f64[3,2] is not square"},
		{"ToSymDenseUpper complex", toSymUpper(mk(tensor.Complex64, 1, 1)), "matconv: ToSymDenseUpper: tensor c64[1,1] is complex"},

		{"ToCDense nil", toC(nil), "matconv: ToCDense: nil tensor"},
		{"ToCDense rank 1", toC(mk(tensor.Complex128, 2)), "matconv: ToCDense: tensor c128[2] has rank 1, need a rank-2 matrix (gonum has no complex vector type: reshape it to [1,n] or [n,1])"},
		{"ToCDense zero dimension", toC(mk(tensor.Complex64, 0, 1)), "matconv: ToCDense: tensor c64[0,1] has a zero dimension"},
	} {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panicked: %v", tc.name, p)
				}
			}()
			err = tc.call()
		}()
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, err, tc.want)
		}
	}
}

package gorgoniaconv

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	lt "github.com/loomgraph/loom/tensor"
	"gorgonia.org/tensor"
)

func dense(backing any, shape ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(backing))
}

func mustFrom(t *testing.T, d *tensor.Dense) *lt.Tensor {
	t.Helper()
	out, err := FromDense(d)
	if err != nil {
		t.Fatalf("FromDense: %v", err)
	}
	return out
}

func mustTo(t *testing.T, x *lt.Tensor) *tensor.Dense {
	t.Helper()
	d, err := ToDense(x)
	if err != nil {
		t.Fatalf("ToDense: %v", err)
	}
	return d
}

func shapeIs(t *testing.T, x *lt.Tensor, want ...int) {
	t.Helper()
	if got := []int(x.Shape()); len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
		t.Fatalf("shape %v, want %v", x.Shape(), want)
	}
}

func f64s(t *testing.T, x *lt.Tensor) []float64 {
	t.Helper()
	v, err := lt.Values[float64](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestFromDenseDTypes: every element type both sides have keeps its values
// (written here by hand) and its shape, and maps to the loom dtype of the
// package doc; Gorgonia's Int becomes Int64.
func TestFromDenseDTypes(t *testing.T) {
	cases := []struct {
		d    *tensor.Dense
		dt   lt.DType
		want []float64 // Float64 of each element (real part for complex)
	}{
		{dense([]float64{1.5, -2, 3, 4}, 2, 2), lt.Float64, []float64{1.5, -2, 3, 4}},
		{dense([]float32{0.25, -1, 8}, 3), lt.Float32, []float64{0.25, -1, 8}},
		{dense([]int{-7, 1 << 40}, 2), lt.Int64, []float64{-7, 1 << 40}},
		{dense([]int64{-7, 1 << 40}, 2, 1), lt.Int64, []float64{-7, 1 << 40}},
		{dense([]int32{-3, 5}, 1, 2), lt.Int32, []float64{-3, 5}},
		{dense([]int16{-300, 300}, 2), lt.Int16, []float64{-300, 300}},
		{dense([]int8{-128, 127}, 2), lt.Int8, []float64{-128, 127}},
		{dense([]uint8{0, 255}, 2), lt.Uint8, []float64{0, 255}},
		{dense([]bool{true, false, true}, 3), lt.Bool, []float64{1, 0, 1}},
		{dense([]complex64{1 + 2i, -3}, 2), lt.Complex64, []float64{1, -3}},
		{dense([]complex128{1 + 2i, -3 - 4i}, 2), lt.Complex128, []float64{1, -3}},
	}
	for _, c := range cases {
		x := mustFrom(t, c.d)
		if x.DType() != c.dt {
			t.Errorf("%v: dtype %v, want %v", c.d.Dtype(), x.DType(), c.dt)
			continue
		}
		shapeIs(t, x, c.d.Shape()...)
		for i, w := range c.want {
			if got := x.Float64(i); got != w {
				t.Errorf("%v: element %d = %v, want %v", c.d.Dtype(), i, got, w)
			}
		}
	}
	// The imaginary parts too.
	x := mustFrom(t, dense([]complex128{1 + 2i, -3 - 4i}, 2))
	if got := x.Complex128s(); got[0] != 1+2i || got[1] != -3-4i {
		t.Errorf("complex128 values %v, want [(1+2i) (-3-4i)]", got)
	}
}

// TestFromDenseShares: a plain Dense and a contiguous view (whole rows)
// share their memory with the Tensor: a write on either side is read on
// the other.
func TestFromDenseShares(t *testing.T) {
	d := dense([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	x := mustFrom(t, d)
	v := f64s(t, x)
	v[4] = 50 // loom -> Gorgonia
	if got, _ := d.At(1, 1); got != 50.0 {
		t.Errorf("after writing 50 into the Tensor's element 4, Dense (1,1) = %v", got)
	}
	if err := d.SetAt(-9.0, 0, 2); err != nil { // Gorgonia -> loom
		t.Fatal(err)
	}
	if v[2] != -9 {
		t.Errorf("after SetAt(-9, 0, 2) on the Dense, the Tensor's element 2 = %v", v[2])
	}

	// Go's int and loom's Int64 share too (int is 64 bits wide here).
	ints := []int{10, 20, 30}
	xi := mustFrom(t, dense(ints, 3))
	iv, err := lt.Values[int64](xi)
	if err != nil {
		t.Fatal(err)
	}
	iv[1] = 21
	if ints[1] != 21 {
		t.Errorf("int backing %v after writing 21 into the Int64 Tensor", ints)
	}

	// Row 1 of a (3, 2) matrix: a view, but contiguous, so shared.
	m := dense([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	rv, err := m.Slice(tensor.S(1))
	if err != nil {
		t.Fatal(err)
	}
	row := rv.(*tensor.Dense)
	if !row.IsView() {
		t.Fatal("Slice(S(1)) is not a view: the test no longer tests a view")
	}
	xr := mustFrom(t, row)
	shapeIs(t, xr, 2)
	rvals, _ := lt.Values[float32](xr)
	if rvals[0] != 3 || rvals[1] != 4 {
		t.Fatalf("row 1 of [[1 2] [3 4] [5 6]] = %v, want [3 4]", rvals)
	}
	rvals[1] = 40
	if got, _ := m.At(1, 1); got != float32(40) {
		t.Errorf("after writing 40 into the row's Tensor, the matrix's (1,1) = %v", got)
	}
}

// TestFromDenseCopies: the layouts loom cannot share are copied into
// row-major order (values by hand), and the copy is independent of d.
func TestFromDenseCopies(t *testing.T) {
	t.Run("strided view", func(t *testing.T) {
		d := dense([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
		v, err := d.Slice(nil, tensor.S(1, 3)) // columns 1 and 2: [[2 3] [5 6]]
		if err != nil {
			t.Fatal(err)
		}
		x := mustFrom(t, v.(*tensor.Dense))
		shapeIs(t, x, 2, 2)
		got := f64s(t, x)
		if !reflect.DeepEqual(got, []float64{2, 3, 5, 6}) {
			t.Fatalf("columns 1:3 of [[1 2 3] [4 5 6]] = %v, want [2 3 5 6]", got)
		}
		got[0] = 100
		if a, _ := d.At(0, 1); a != 2.0 {
			t.Errorf("writing the copy changed the Dense: (0,1) = %v", a)
		}
	})
	t.Run("recorded transpose", func(t *testing.T) {
		d := dense([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
		if err := d.T(); err != nil {
			t.Fatal(err)
		}
		if !d.IsMaterializable() {
			t.Fatal("d.T() did not leave a materialisable Dense: the test no longer tests a thunked transpose")
		}
		x := mustFrom(t, d)
		shapeIs(t, x, 3, 2)
		// The transpose of [[1 2 3] [4 5 6]] is [[1 4] [2 5] [3 6]].
		if got := f64s(t, x); !reflect.DeepEqual(got, []float64{1, 4, 2, 5, 3, 6}) {
			t.Fatalf("transpose = %v, want [1 4 2 5 3 6]", got)
		}
		f64s(t, x)[0] = 100
		if d.Data().([]float64)[0] != 1 || !d.IsMaterializable() {
			t.Errorf("FromDense changed the Dense: data %v, still transposed %v", d.Data(), d.IsMaterializable())
		}
	})
	t.Run("column-major", func(t *testing.T) {
		// Column-major storage of [[1 2 3] [4 5 6]] is 1 4 2 5 3 6.
		backing := []float64{1, 4, 2, 5, 3, 6}
		// (AsFortran(nil) marks the backing as column-major storage;
		// AsFortran(backing) would take a row-major backing and transpose it.)
		d := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking(backing), tensor.AsFortran(nil))
		x := mustFrom(t, d)
		shapeIs(t, x, 2, 3)
		got := f64s(t, x)
		if !reflect.DeepEqual(got, []float64{1, 2, 3, 4, 5, 6}) {
			t.Fatalf("column-major [[1 2 3] [4 5 6]] read as %v", got)
		}
		got[0] = 100
		if backing[0] != 1 {
			t.Errorf("writing the copy changed the column-major backing: %v", backing)
		}
		// A column (3, 1): Gorgonia stores one stride for it.
		c := tensor.New(tensor.WithShape(3, 1), tensor.WithBacking([]int32{7, 8, 9}), tensor.AsFortran(nil))
		xc := mustFrom(t, c)
		shapeIs(t, xc, 3, 1)
		if cv, _ := lt.Values[int32](xc); !reflect.DeepEqual(cv, []int32{7, 8, 9}) {
			t.Errorf("column-major (3,1) column read as %v, want [7 8 9]", cv)
		}
		// A (2, 2, 2) column-major: element (i,j,k) is at i + 2j + 4k, so
		// storage 0..7 reads, row-major, 0 4 2 6 1 5 3 7.
		c3 := tensor.New(tensor.WithShape(2, 2, 2), tensor.WithBacking([]float64{0, 1, 2, 3, 4, 5, 6, 7}), tensor.AsFortran(nil))
		if got := f64s(t, mustFrom(t, c3)); !reflect.DeepEqual(got, []float64{0, 4, 2, 6, 1, 5, 3, 7}) {
			t.Errorf("column-major (2,2,2) read as %v, want [0 4 2 6 1 5 3 7]", got)
		}
	})
}

// TestFromDenseCopiesMore: a view of a column-major Dense, and complex128
// memory that is 8- but not 16-byte aligned.
func TestFromDenseCopiesMore(t *testing.T) {
	// Column-major storage of [[1 2 3] [4 5 6]]; columns 1:3 are
	// [[2 3] [5 6]].
	d := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 4, 2, 5, 3, 6}), tensor.AsFortran(nil))
	v, err := d.Slice(nil, tensor.S(1, 3))
	if err != nil {
		t.Fatal(err)
	}
	x := mustFrom(t, v.(*tensor.Dense))
	shapeIs(t, x, 2, 2)
	if got := f64s(t, x); !reflect.DeepEqual(got, []float64{2, 3, 5, 6}) {
		t.Errorf("columns 1:3 of the column-major [[1 2 3] [4 5 6]] = %v, want [2 3 5 6]", got)
	}

	// Two complex128 values placed 8 bytes off a 16-byte boundary.
	words := make([]float64, 6)
	off := 0
	if uintptr(unsafe.Pointer(&words[0]))%16 == 0 {
		off = 1
	}
	c := unsafe.Slice((*complex128)(unsafe.Pointer(&words[off])), 2)
	c[0], c[1] = 1+2i, 3-4i
	if uintptr(unsafe.Pointer(&c[0]))%16 == 0 {
		t.Fatal("the complex128 slice is 16-byte aligned: the test no longer tests misaligned memory")
	}
	xc := mustFrom(t, dense(c, 2))
	if got := xc.Complex128s(); got[0] != 1+2i || got[1] != 3-4i {
		t.Fatalf("misaligned complex128 [1+2i 3-4i] read as %v", got)
	}
	xc.SetComplex128(0, 9)
	if c[0] != 1+2i {
		t.Errorf("the misaligned Dense was shared, not copied: %v", c[0])
	}
}

// TestShapes: Gorgonia's scalar (Shape{}) is loom's rank 0 both ways, and
// shared; (1), (3), (3,1) and (1,3) stay what they are.
func TestShapes(t *testing.T) {
	s := tensor.New(tensor.FromScalar(3.5))
	x := mustFrom(t, s)
	shapeIs(t, x)
	if x.Rank() != 0 || x.Float64(0) != 3.5 {
		t.Fatalf("scalar Dense 3.5 became %s holding %v", x.Type(), x.Float64(0))
	}
	x.SetFloat64(0, 4.25)
	if s.Data() != 4.25 {
		t.Errorf("scalar Dense reads %v after the Tensor was set to 4.25", s.Data())
	}

	ls := lt.Scalar(float32(2.5))
	d := mustTo(t, ls)
	if !d.IsScalar() || len(d.Shape()) != 0 || d.Data() != float32(2.5) {
		t.Errorf("rank-0 Tensor 2.5 became a Dense of shape %v holding %v (scalar: %v)", d.Shape(), d.Data(), d.IsScalar())
	}
	ls.SetFloat64(0, -1.5) // shared: the scalar Dense reads it
	if d.Data() != float32(-1.5) {
		t.Errorf("scalar Dense reads %v after its Tensor was set to -1.5", d.Data())
	}

	for _, shape := range [][]int{{1}, {3}, {3, 1}, {1, 3}} {
		n := 1
		for _, k := range shape {
			n *= k
		}
		back := make([]float64, n)
		x := mustFrom(t, dense(back, shape...))
		shapeIs(t, x, shape...)
		d := mustTo(t, x)
		if !reflect.DeepEqual([]int(d.Shape()), shape) {
			t.Errorf("shape %v came back from loom as %v", shape, d.Shape())
		}
	}
	// Gorgonia's Shape{1} is a vector, not its scalar.
	if x := mustFrom(t, dense([]float64{9}, 1)); x.Rank() != 1 {
		t.Errorf("a Dense of shape (1) became rank %d", x.Rank())
	}
}

// TestToDense: every loom dtype with a Gorgonia type, shared both ways.
func TestToDense(t *testing.T) {
	cases := []struct {
		x    *lt.Tensor
		gdt  tensor.Dtype
		want any // the Dense's Data()
	}{
		{must(lt.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3)), tensor.Float64, []float64{1, 2, 3, 4, 5, 6}},
		{must(lt.New([]float32{1, -2}, 2)), tensor.Float32, []float32{1, -2}},
		{must(lt.New([]int64{1 << 40, -1}, 2)), tensor.Int64, []int64{1 << 40, -1}},
		{must(lt.New([]int32{3}, 1)), tensor.Int32, []int32{3}},
		{must(lt.New([]int16{-4, 4}, 2)), tensor.Int16, []int16{-4, 4}},
		{must(lt.New([]int8{-5, 5}, 2)), tensor.Int8, []int8{-5, 5}},
		{must(lt.New([]uint8{6, 250}, 2)), tensor.Uint8, []uint8{6, 250}},
		{must(lt.New([]bool{false, true}, 2)), tensor.Bool, []bool{false, true}},
		{must(lt.New([]complex64{1i, 2}, 2)), tensor.Complex64, []complex64{1i, 2}},
		{must(lt.New([]complex128{1 - 1i}, 1, 1)), tensor.Complex128, []complex128{1 - 1i}},
	}
	for _, c := range cases {
		d := mustTo(t, c.x)
		if d.Dtype() != c.gdt {
			t.Errorf("%s: Dense dtype %v, want %v", c.x.Type(), d.Dtype(), c.gdt)
			continue
		}
		if !reflect.DeepEqual([]int(d.Shape()), []int(c.x.Shape())) || !reflect.DeepEqual(d.Data(), c.want) {
			t.Errorf("%s: Dense %v %v, want %v", c.x.Type(), d.Shape(), d.Data(), c.want)
		}
	}

	// Aliasing: a write on one side is read on the other.
	x := must(lt.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3))
	d := mustTo(t, x)
	if err := d.SetAt(60.0, 1, 2); err != nil {
		t.Fatal(err)
	}
	if x.Float64(5) != 60 {
		t.Errorf("Tensor element 5 = %v after SetAt(60, 1, 2) on its Dense", x.Float64(5))
	}
	x.SetFloat64(0, -1)
	if a, _ := d.At(0, 0); a != -1.0 {
		t.Errorf("Dense (0,0) = %v after the Tensor's element 0 was set to -1", a)
	}
	// A Gorgonia op on the Dense computes with loom's values: the matrix
	// product of [[-1 2 3] [4 5 60]] and its transpose's first column
	// [-1 2 3] is [1+4+9, -4+10+180] = [14 186].
	col := dense([]float64{-1, 2, 3}, 3)
	p, err := tensor.MatVecMul(d, col)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.Data(), []float64{14, 186}) {
		t.Errorf("MatVecMul through the shared Dense = %v, want [14 186]", p.Data())
	}

	// Round trip: back to loom shares the same memory again.
	y := mustFrom(t, d)
	f64s(t, y)[1] = 22
	if x.Float64(1) != 22 {
		t.Errorf("loom -> Gorgonia -> loom does not share: element 1 = %v, want 22", x.Float64(1))
	}
}

func must(x *lt.Tensor, err error) *lt.Tensor {
	if err != nil {
		panic(err)
	}
	return x
}

// TestErrors: bad input is an error naming the function and the types,
// never a panic.
func TestErrors(t *testing.T) {
	masked := dense([]float64{1, 2}, 2)
	masked.SetMask([]bool{false, true})
	half, err := lt.Make(lt.Float16, 2)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		run  func() error
		want []string
	}{
		{"nil Dense", func() error { _, err := FromDense(nil); return err }, []string{"FromDense", "nil"}},
		{"uint16", func() error { _, err := FromDense(dense([]uint16{1}, 1)); return err }, []string{"FromDense", "uint16", "no loom dtype"}},
		{"uint64", func() error { _, err := FromDense(dense([]uint64{1}, 1)); return err }, []string{"FromDense", "uint64"}},
		{"string", func() error { _, err := FromDense(dense([]string{"a"}, 1)); return err }, []string{"FromDense", "string"}},
		{"masked", func() error { _, err := FromDense(masked); return err }, []string{"FromDense", "masked", "float64(2)"}},
		{"zero Dense", func() error { _, err := FromDense(&tensor.Dense{}); return err }, []string{"FromDense", "no element type"}},
		{"nil Tensor", func() error { _, err := ToDense(nil); return err }, []string{"ToDense", "nil"}},
		{"float16", func() error { _, err := ToDense(half); return err }, []string{"ToDense", "f16[2]", "no Gorgonia element type"}},
		{"empty", func() error { _, err := ToDense(lt.Zeros(lt.Float32, 0, 3)); return err }, []string{"ToDense", "f32[0,3]", "no elements"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked: %v", r)
					}
				}()
				err = c.run()
			}()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

package tensor

import (
	"math"
	"strings"
	"testing"
)

func TestParseDType(t *testing.T) {
	cases := []struct {
		in   string
		want DType
	}{
		{"float32", Float32}, {"f32", Float32}, {"F32", Float32}, {" float64 ", Float64},
		{"f64", Float64}, {"int32", Int32}, {"i32", Int32}, {"int64", Int64}, {"i64", Int64},
		{"bool", Bool}, {"b8", Bool}, {"float16", Float16}, {"f16", Float16},
		{"bfloat16", BFloat16}, {"bf16", BFloat16},
		{"int8", Int8}, {"i8", Int8}, {"INT8", Int8}, {"int16", Int16}, {"i16", Int16}, {"uint8", Uint8}, {"u8", Uint8},
		// NumPy's names (array-interface type strings, C names)
		{"i1", Int8}, {"i2", Int16}, {"u1", Uint8}, {"short", Int16}, {"ubyte", Uint8}, {"U1", Uint8},
	}
	for _, c := range cases {
		got, err := ParseDType(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseDType(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "float", "f8", "double", "invalid", "byte", "uint16", "u16", "i4"} {
		_, err := ParseDType(bad)
		if err == nil {
			t.Errorf("ParseDType(%q) succeeded", bad)
			continue
		}
		for _, name := range []string{"float32/f32", "int64/i64", "bool/b8"} {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("ParseDType(%q) error %q does not list %s", bad, err, name)
			}
		}
	}
	for _, d := range DTypes() {
		if got, _ := ParseDType(d.String()); got != d {
			t.Errorf("round trip of %v gave %v", d, got)
		}
	}
}

func TestShape(t *testing.T) {
	if s := (Shape{2, 3}).String(); s != "[2,3]" {
		t.Errorf("Shape string %q", s)
	}
	if s := (Shape{}).String(); s != "[]" {
		t.Errorf("scalar shape string %q", s)
	}
	if n := (Shape{2, 3, 4}).Size(); n != 24 {
		t.Errorf("Size = %d, want 24 (2*3*4)", n)
	}
	if n := (Shape{}).Size(); n != 1 {
		t.Errorf("scalar Size = %d, want 1", n)
	}
	if n := (Shape{2, -1}).Size(); n != -1 {
		t.Errorf("negative Size = %d", n)
	}
	if n := (Shape{math.MaxInt / 2, 4}).Size(); n != -1 {
		t.Errorf("overflowing Size = %d", n)
	}
	if st := (Shape{2, 3, 4}).Strides(); st[0] != 12 || st[1] != 4 || st[2] != 1 {
		t.Errorf("Strides = %v, want [12 4 1]", st)
	}
	if got := TypeString(Float32, Shape{2, 3}); got != "f32[2,3]" {
		t.Errorf("TypeString = %q", got)
	}
}

func TestNewValues(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	x, err := New(data, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if x.DType() != Float32 || !x.Shape().Equal(Shape{2, 3}) || x.Size() != 6 {
		t.Fatalf("got %v", x.Type())
	}
	v, err := Values[float32](x)
	if err != nil {
		t.Fatal(err)
	}
	data[4] = 50 // New wraps, so the view sees the write
	if v[4] != 50 {
		t.Errorf("Values does not share memory")
	}
	if _, err := Values[float64](x); err == nil {
		t.Errorf("Values[float64] of a float32 tensor succeeded")
	}
	if _, err := New(data, 4, 2); err == nil {
		t.Errorf("New with a mismatched shape succeeded")
	}
	if _, err := New(data, -2, -3); err == nil {
		t.Errorf("New with negative dims succeeded")
	}
	v1, _ := New([]int64{7, 8})
	if !v1.Shape().Equal(Shape{2}) {
		t.Errorf("New without shape gave %v, want [2]", v1.Shape())
	}
	s := Scalar(float64(2.5))
	if s.Rank() != 0 || s.Float64(0) != 2.5 {
		t.Errorf("Scalar = %v", s)
	}
	if Zeros(Invalid, 2) != nil || Zeros(Float32, -1) != nil {
		t.Errorf("Zeros with bad arguments did not return nil")
	}
	z := Zeros(Int32, 3, 0)
	if z.Size() != 0 || len(z.Bytes()) != 0 {
		t.Errorf("empty Zeros = %v", z.Type())
	}
	var nilT *Tensor
	if nilT.Size() != 0 || nilT.DType() != Invalid || nilT.Shape() != nil || nilT.String() != "<nil tensor>" {
		t.Errorf("nil tensor methods misbehave")
	}
}

func TestFromFloat64sAndCastRules(t *testing.T) {
	x, err := FromFloat64s(Int32, []float64{1.9, -1.9, math.NaN(), 1e20, -1e20})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := Values[int32](x)
	// truncation toward zero, NaN -> 0, saturation at the int32 range
	want := []int32{1, -1, 0, math.MaxInt32, math.MinInt32}
	for i := range want {
		if v[i] != want[i] {
			t.Errorf("element %d = %d, want %d", i, v[i], want[i])
		}
	}
	b, _ := FromFloat64s(Bool, []float64{0, 2, -0.5})
	if got := b.Float64s(); got[0] != 0 || got[1] != 1 || got[2] != 1 {
		t.Errorf("bool conversion %v", got)
	}
}

func TestHalf(t *testing.T) {
	cases := []struct {
		f    float32
		bits uint16
	}{
		// bit patterns from the IEEE 754 binary16 definition
		{0, 0x0000}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {0.5, 0x3800},
		{float32(math.Inf(1)), 0x7c00}, {1e6, 0x7c00}, // overflow -> +Inf
		{5.960464477539063e-08, 0x0001}, // smallest subnormal 2^-24
		{6.103515625e-05, 0x0400},       // smallest normal 2^-14
		{1.0009765625, 0x3c01},          // 1 + 2^-10
		{1.00048828125, 0x3c00},         // 1 + 2^-11: tie, rounds to even (down)
		{1.00146484375, 0x3c02},         // 1 + 3*2^-11: tie, rounds to even (up)
	}
	for _, c := range cases {
		if got := F16FromFloat32(c.f); uint16(got) != c.bits {
			t.Errorf("F16(%g) = %#04x, want %#04x", c.f, uint16(got), c.bits)
		}
	}
	// Every finite half converts to float32 and back exactly.
	for b := 0; b < 0x10000; b++ {
		h := F16(b)
		f := h.Float32()
		if f != f {
			continue
		}
		if back := F16FromFloat32(f); back != h {
			t.Fatalf("half %#04x -> %g -> %#04x", b, f, uint16(back))
		}
	}
	if f := F16FromFloat32(float32(math.NaN())).Float32(); f == f {
		t.Errorf("NaN did not stay NaN")
	}
	if got := BF16FromFloat32(1).Float32(); got != 1 {
		t.Errorf("bf16(1) = %g", got)
	}
	// 1 + 2^-8 lies halfway between bf16 1 and 1+2^-7: ties to even gives 1.
	if got := BF16FromFloat32(1 + 1.0/256).Float32(); got != 1 {
		t.Errorf("bf16 tie = %g, want 1", got)
	}
	if f := BF16FromFloat32(float32(math.NaN())).Float32(); f == f {
		t.Errorf("bf16 NaN did not stay NaN")
	}
}

func TestString(t *testing.T) {
	x, _ := New([]float32{1, 2.5, 3, 4, 5, 6}, 2, 3)
	want := "f32[2,3]\n[[  1 2.5   3]\n [  4   5   6]]"
	if got := x.String(); got != want {
		t.Errorf("String =\n%s\nwant\n%s", got, want)
	}
	if got := Scalar(int64(7)).String(); got != "i64[] 7" {
		t.Errorf("scalar String = %q", got)
	}
	b, _ := New([]bool{true, false})
	if got := b.String(); got != "b8[2] [ true false]" {
		t.Errorf("bool String = %q", got)
	}
	big := Zeros(Float64, 100, 100)
	s := big.String()
	if !strings.Contains(s, "...") || len(s) > 400 {
		t.Errorf("large tensor not truncated (%d chars):\n%s", len(s), s)
	}
	if lines := strings.Count(s, "\n"); lines != 7 { // after the header and after each of 3 rows, "...", and 2 more rows
		t.Errorf("truncated matrix has %d newlines:\n%s", lines, s)
	}
}

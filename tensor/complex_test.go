package tensor

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestComplexDTypes(t *testing.T) {
	for _, c := range []struct {
		d           DType
		long, short string
		size        int
		re          DType
	}{
		{Complex64, "complex64", "c64", 8, Float32},
		{Complex128, "complex128", "c128", 16, Float64},
	} {
		if c.d.String() != c.long || c.d.Short() != c.short || c.d.Size() != c.size {
			t.Errorf("%v: names %q/%q size %d, want %q/%q %d", c.d, c.d.String(), c.d.Short(), c.d.Size(), c.long, c.short, c.size)
		}
		if !c.d.IsComplex() || c.d.IsFloat() || c.d.IsInt() || c.d.IsStorage() || c.d.Kind() != "complex" {
			t.Errorf("%v: IsComplex %v IsFloat %v Kind %q", c.d, c.d.IsComplex(), c.d.IsFloat(), c.d.Kind())
		}
		if c.d.RealDType() != c.re || c.re.ComplexDType() != c.d || c.d.ComplexDType() != c.d {
			t.Errorf("%v: RealDType %v, %v.ComplexDType %v", c.d, c.d.RealDType(), c.re, c.re.ComplexDType())
		}
		for _, name := range []string{c.long, c.short, strings.ToUpper(c.short)} {
			if got, err := ParseDType(name); got != c.d || err != nil {
				t.Errorf("ParseDType(%q) = %v, %v", name, got, err)
			}
		}
	}
	for d, want := range map[DType]DType{Float16: Complex64, BFloat16: Complex64, Int32: Invalid, Bool: Invalid} {
		if got := d.ComplexDType(); got != want {
			t.Errorf("%v.ComplexDType() = %v, want %v", d, got, want)
		}
	}
	if Float32.RealDType() != Float32 || Float32.IsComplex() {
		t.Error("Float32 is its own real dtype and not complex")
	}
	want := []DType{Bool, Int8, Int16, Int32, Int64, Uint8, Float32, Float64, Complex64, Complex128, Float16, BFloat16}
	got := DTypes()
	if len(got) != len(want) {
		t.Fatalf("DTypes() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("DTypes() = %v, want %v", got, want)
		}
	}
}

func TestComplexElements(t *testing.T) {
	x, err := New([]complex64{1 + 2i, -3.5, complex(0, -1), 4}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if x.DType() != Complex64 || x.Type() != "c64[2,2]" {
		t.Fatalf("type %s", x.Type())
	}
	if v := x.Complex128(0); v != 1+2i {
		t.Errorf("Complex128(0) = %v, want (1+2i)", v)
	}
	if v := x.Float64(2); v != 0 { // the real part of -1i
		t.Errorf("Float64(2) = %v, want the real part 0", v)
	}
	x.SetComplex128(3, 0.1+0.2i)
	if v := x.Complex128(3); v != complex(float64(float32(0.1)), float64(float32(0.2))) { // rounded to float32 parts
		t.Errorf("SetComplex128 then Complex128 = %v", v)
	}
	x.SetFloat64(1, 7)
	if v := x.Complex128(1); v != 7 {
		t.Errorf("SetFloat64(7) gave %v, want 7+0i", v)
	}
	vs, err := Values[complex64](x)
	if err != nil || len(vs) != 4 || vs[0] != 1+2i {
		t.Errorf("Values[complex64] = %v, %v", vs, err)
	}
	if _, err := Values[complex128](x); err == nil {
		t.Error("Values[complex128] of a complex64 tensor succeeded")
	}
	// Real dtypes take the real part and give a zero imaginary part.
	r, err := FromComplex128s(Float64, []complex128{1 + 5i, -2 - 1i})
	if err != nil {
		t.Fatal(err)
	}
	if r.Float64(0) != 1 || r.Float64(1) != -2 || r.Complex128(1) != -2 {
		t.Errorf("FromComplex128s(float64) = %v", r.Float64s())
	}
	c, err := FromComplex128s(Complex128, []complex128{1 + 5i, -2 - 1i, 3i}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Complex128s(); got[0] != 1+5i || got[1] != -2-1i || got[2] != 3i {
		t.Errorf("FromComplex128s(complex128) = %v", got)
	}
	if _, err := FromComplex128s(Complex64, []complex128{1, 2}, 3); err == nil {
		t.Error("FromComplex128s with too few values succeeded")
	}
}

func TestComplexString(t *testing.T) {
	// The layouts NumPy prints (np.array([[1+2j, -0.5-1j], [3j, 4]],
	// dtype=np.complex128)): real part, signed imaginary part, j.
	x := must(New([]complex128{1 + 2i, -0.5 - 1i, 3i, 4}, 2, 2))
	want := "c128[2,2]\n[[   1+2j -0.5-1j]\n [   0+3j    4+0j]]"
	if got := x.String(); got != want {
		t.Errorf("String:\n%s\nwant\n%s", got, want)
	}
	for _, c := range []struct {
		v    complex128
		want string
	}{
		{complex(math.NaN(), math.Inf(1)), "nan+infj"},
		{complex(math.Inf(-1), math.Inf(-1)), "-inf-infj"},
		{complex(0.1, -0), "0.1+0j"},
		{complex(0, math.Copysign(0, -1)), "0-0j"},
	} {
		if got := FormatComplex(c.v, 64); got != c.want {
			t.Errorf("FormatComplex(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	// complex64 parts print in float32's shortest form.
	y := Scalar(complex64(complex(0.1, 0.2)))
	if got := y.String(); got != "c64[] 0.1+0.2j" {
		t.Errorf("complex64 scalar: %q", got)
	}
}

func TestComplexSafetensors(t *testing.T) {
	in := map[string]*Tensor{
		"a": must(New([]complex64{1 + 2i, -3 - 4.5i, complex(float32(math.Inf(1)), 0)}, 3)),
		"b": must(New([]complex128{0.1 + 0.7i, -1e300i}, 1, 2)),
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, in, nil); err != nil {
		t.Fatal(err)
	}
	file := buf.Bytes()
	for _, frag := range []string{`"dtype":"C64","shape":[3]`, `"dtype":"C128","shape":[1,2]`} {
		if !bytes.Contains(file, []byte(frag)) {
			t.Errorf("header lacks %s: %s", frag, file[8:8+le64Value(file)])
		}
	}
	readAll(t, file, in, nil)

	// A C64 tensor as the format lays it out: float32 pairs, real part
	// first, little-endian (1+2j: 0x3f800000, 0x40000000).
	raw := stFile(`{"z":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}}`, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40)
	got, _, err := ReadSafetensors(bytes.NewReader(raw), SafetensorsLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if z := got["z"]; z.DType() != Complex64 || z.Complex128(0) != 1+2i {
		t.Errorf("C64 file read as %s %v", z.Type(), z.Complex128s())
	}
}

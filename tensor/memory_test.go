package tensor

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestHugeTensorsAreErrors is issue 12's defect 2: Make, Zeros and Full with
// 1<<50 or 1<<59 elements panicked ("makeslice: len out of range") and 1<<40
// ended the process with the runtime's fatal out-of-memory error. Each size
// is far above the memory of any machine this runs on (1<<40 float32 are
// 4 TiB), so each must be an error wrapping ErrTooLarge, found before any
// allocation.
func TestHugeTensorsAreErrors(t *testing.T) {
	for _, n := range []int{1 << 40, 1 << 50, 1 << 59, 1 << 62} {
		if _, err := Make(Float32, n); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Make(f32, %d): err = %v, want ErrTooLarge", n, err)
		}
		if z := Zeros(Float64, n); z != nil {
			t.Errorf("Zeros(f64, %d) = %v, want nil", n, z.Type())
		}
		if _, err := Full(Int32, 1, 2, n); !errors.Is(err, ErrTooLarge) {
			t.Errorf("Full(i32, [2,%d]): err = %v, want ErrTooLarge", n, err)
		}
		if _, err := FromFloat64s(Float32, nil, n); !errors.Is(err, ErrTooLarge) {
			t.Errorf("FromFloat64s(f32, [%d]): err = %v, want ErrTooLarge", n, err)
		}
	}
	// f64[1<<61] has a valid shape but 2^64 bytes; so has the empty
	// f64[0,1<<61], whose first byte stride is 2^64.
	if _, err := ByteSize(Float64, Shape{1 << 61}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ByteSize(f64[1<<61]): err = %v, want ErrTooLarge", err)
	}
	if _, err := ByteSize(Float64, Shape{0, 1 << 61}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ByteSize(f64[0,1<<61]): err = %v, want ErrTooLarge", err)
	}
	if _, err := FromBytes(Float64, nil, 1<<61); !errors.Is(err, ErrTooLarge) {
		t.Errorf("FromBytes(f64[1<<61]): err = %v, want ErrTooLarge", err)
	}
}

// TestSetMemoryLimit lowers the limit to 1 KiB: 256 float32 (1024 bytes)
// fit, 257 do not; restoring the default makes them fit again.
func TestSetMemoryLimit(t *testing.T) {
	old := SetMemoryLimit(1024)
	defer SetMemoryLimit(0)
	if old <= 1024 {
		t.Fatalf("default limit %d is implausibly small", old)
	}
	if got := MemoryLimit(); got != 1024 {
		t.Fatalf("MemoryLimit() = %d after SetMemoryLimit(1024)", got)
	}
	if _, err := Make(Float32, 256); err != nil {
		t.Errorf("Make(f32, 256) under a 1024-byte limit: %v", err)
	}
	_, err := Make(Float32, 257)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Make(f32, 257) under a 1024-byte limit: err = %v, want ErrTooLarge", err)
	}
	const want = "tensor: Make: f32[257]: too large: 1028 bytes exceed the memory limit of 1024 bytes (tensor.SetMemoryLimit)"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	SetMemoryLimit(0)
	if MemoryLimit() != old {
		t.Errorf("SetMemoryLimit(0) restored %d, want the default %d", MemoryLimit(), old)
	}
	if _, err := Make(Float32, 257); err != nil {
		t.Errorf("Make(f32, 257) with the default limit: %v", err)
	}
}

// TestShapeRuleOrderIndependent is issue 12's defect 16: [0, 1<<62, 1<<62]
// was valid and [1<<62, 1<<62, 0] was not. The rule is now NumPy's: the
// product of the non-zero dimensions must fit in an int, whatever the order.
func TestShapeRuleOrderIndependent(t *testing.T) {
	const big = 1 << 62
	cases := []struct {
		s    Shape
		size int // -1: invalid
	}{
		{Shape{0, big, big}, -1},
		{Shape{big, big, 0}, -1},
		{Shape{big, 0, big}, -1},
		{Shape{0, big}, 0}, // 2^62 fits
		{Shape{big, 0}, 0}, // the same in the other order
		{Shape{1 << 31, 1 << 31}, 1 << 62},
		{Shape{2, 3, 0}, 0},
		{Shape{}, 1},       // a scalar
		{Shape{3, -1}, -1}, // negative
		{Shape{0, -1}, -1}, // negative, even next to a zero
	}
	for _, c := range cases {
		if got := c.s.Size(); got != c.size {
			t.Errorf("%v.Size() = %d, want %d", c.s, got, c.size)
		}
		err := c.s.Validate()
		if (err == nil) != (c.size >= 0) {
			t.Errorf("%v.Validate() = %v, want valid=%v", c.s, err, c.size >= 0)
		}
		_, mkErr := Make(Float32, c.s...)
		if c.size < 0 && mkErr == nil {
			t.Errorf("Make(f32, %v) succeeded for an invalid shape", c.s)
		}
	}
}

// TestNilReaderWriter: issue 12, defect 13 (nil arguments). The safetensors
// functions return errors for a nil io.Reader or io.Writer; the methods of a
// nil *Tensor return zero values.
func TestNilReaderWriter(t *testing.T) {
	if err := WriteSafetensors(nil, nil, nil); err == nil {
		t.Errorf("WriteSafetensors(nil) succeeded")
	}
	if _, _, err := ReadSafetensors(nil, SafetensorsLimits{}); err == nil {
		t.Errorf("ReadSafetensors(nil) succeeded")
	}
	var n *Tensor
	if n.DType() != Invalid || n.Shape() != nil || n.Size() != 0 || n.Rank() != 0 || n.Bytes() != nil || n.Type() != "nil" || n.Clone() != nil || len(n.Float64s()) != 0 {
		t.Errorf("a nil *Tensor's accessors are not zero")
	}
	if _, err := Values[float32](n); err == nil {
		t.Errorf("Values of a nil tensor succeeded")
	}
}

// TestWriteSafetensorsFileAtomic: issue 12, defect 14. A failed write
// leaves the existing file as it was and no temporary file behind.
func TestWriteSafetensorsFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	one := map[string]*Tensor{"w": Scalar(float32(1))}
	if err := WriteSafetensorsFile(path, one, nil); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := WriteSafetensorsFile(path, map[string]*Tensor{"w": nil}, nil); err == nil {
		t.Fatal("writing a nil tensor succeeded")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("the failed write changed the file")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d directory entries after a failed write, want 1", len(entries))
	}
	got, _, err := ReadSafetensorsFile(path, SafetensorsLimits{})
	if err != nil || got["w"].Float64(0) != 1 {
		t.Errorf("ReadSafetensorsFile = %v, %v", got, err)
	}
	if err := WriteSafetensorsFile(filepath.Join(dir, "no", "such", "dir", "x"), one, nil); err == nil {
		t.Errorf("writing into a missing directory succeeded")
	}
}

// TestSmallIntegerDTypes: int8, int16 and uint8 exist with their NumPy
// names, sizes and ranges; values convert as Cast does (truncation toward
// zero, saturating: 1e6 -> 127 in int8, -5.9 -> 0 in uint8, 100.7 -> 100)
// and wrap as two's complement; they round-trip through safetensors (I8,
// I16, U8).
func TestSmallIntegerDTypes(t *testing.T) {
	for _, c := range []struct {
		dt          DType
		long, short string
		size        int
		lo, hi      int64
	}{
		{Int8, "int8", "i8", 1, -128, 127},
		{Int16, "int16", "i16", 2, -32768, 32767},
		{Uint8, "uint8", "u8", 1, 0, 255},
	} {
		if d, err := ParseDType(c.long); err != nil || d != c.dt {
			t.Errorf("ParseDType(%q) = %v, %v", c.long, d, err)
		}
		if d, err := ParseDType(c.short); err != nil || d != c.dt {
			t.Errorf("ParseDType(%q) = %v, %v", c.short, d, err)
		}
		if c.dt.Size() != c.size || !c.dt.IsInt() || c.dt.IsFloat() {
			t.Errorf("%v: size %d, IsInt %v", c.dt, c.dt.Size(), c.dt.IsInt())
		}
		if lo, hi := c.dt.IntRange(); lo != c.lo || hi != c.hi {
			t.Errorf("%v range [%d, %d], want [%d, %d]", c.dt, lo, hi, c.lo, c.hi)
		}
		x, err := FromFloat64s(c.dt, []float64{1e6, -1e6, -5.9, 100.7, math.NaN()})
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{float64(c.hi), float64(c.lo), float64(max(-5, c.lo)), 100, 0}
		for i, w := range want {
			if got := x.Float64(i); got != w {
				t.Errorf("%v element %d = %v, want %v", c.dt, i, got, w)
			}
		}
		// 2^bits + 3 wraps to 3; hi + 1 wraps to lo.
		if c.dt.Wrap(int64(1)<<(8*c.size)+3) != 3 || c.dt.Wrap(c.hi+1) != c.lo {
			t.Errorf("%v: Wrap", c.dt)
		}
		var buf bytes.Buffer
		if err := WriteSafetensors(&buf, map[string]*Tensor{"x": x}, nil); err != nil {
			t.Fatal(err)
		}
		got, _, err := ReadSafetensors(&buf, SafetensorsLimits{})
		if err != nil || got["x"].DType() != c.dt || !bytes.Equal(got["x"].Bytes(), x.Bytes()) {
			t.Errorf("%v: safetensors round trip: %v", c.dt, err)
		}
	}
	if !Uint8.IsUnsigned() || Int8.IsUnsigned() {
		t.Errorf("IsUnsigned")
	}
	v, err := New([]uint8{0, 200, 255}, 3)
	if err != nil || v.DType() != Uint8 || v.String() != "u8[3] [  0 200 255]" {
		t.Errorf("New[uint8]: %v %q", err, v.String())
	}
}

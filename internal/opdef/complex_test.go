package opdef_test

import (
	"errors"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// TestPromoteComplex: the Array API's table for complex (a float with a
// complex type gives the complex type whose parts hold both); bool,
// integers and the storage floats do not mix with complex.
func TestPromoteComplex(t *testing.T) {
	c64, c128, f32, f64 := tensor.Complex64, tensor.Complex128, tensor.Float32, tensor.Float64
	for _, c := range []struct{ a, b, want tensor.DType }{
		{f32, c64, c64}, {c64, f32, c64}, {f64, c64, c128}, {c64, f64, c128},
		{f32, c128, c128}, {c128, f64, c128}, {c64, c128, c128}, {c128, c64, c128}, {c64, c64, c64},
	} {
		if got, err := opdef.Promote(c.a, c.b); got != c.want || err != nil {
			t.Errorf("Promote(%v, %v) = %v, %v; want %v", c.a, c.b, got, err, c.want)
		}
	}
	for _, c := range []struct {
		a, b tensor.DType
		msg  string
	}{
		{tensor.Int32, c64, "integer and complex"}, {c128, tensor.Bool, "complex and bool"},
		{tensor.Float16, c64, "float16 is a storage type"}, {c128, tensor.BFloat16, "bfloat16 is a storage type"},
	} {
		_, err := opdef.Promote(c.a, c.b)
		if err == nil || !errors.Is(err, graph.ErrDType) || !contains(err.Error(), c.msg) {
			t.Errorf("Promote(%v, %v) error %v, want one saying %q", c.a, c.b, err, c.msg)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestComplexSets: Compute and Numeric leave complex out (no op admits it
// by accident); the new sets take it.
func TestComplexSets(t *testing.T) {
	for _, c := range []struct {
		s        opdef.DTypeSet
		c64, f32 bool
		b8       bool
	}{
		{opdef.Compute, false, true, true}, {opdef.Numeric, false, true, false}, {opdef.Floats, false, true, false},
		{opdef.Complexes, true, false, false}, {opdef.FloatsOrComplex, true, true, false},
		{opdef.NumericOrComplex, true, true, false}, {opdef.ComputeOrComplex, true, true, true},
	} {
		if c.s.OK(tensor.Complex64) != c.c64 || c.s.OK(tensor.Complex128) != c.c64 || c.s.OK(tensor.Float32) != c.f32 || c.s.OK(tensor.Bool) != c.b8 {
			t.Errorf("%q: complex %v float32 %v bool %v", c.s.What, c.s.OK(tensor.Complex64), c.s.OK(tensor.Float32), c.s.OK(tensor.Bool))
		}
	}
	err := opdef.Floats.Check([]tensor.DType{tensor.Complex64})
	if err == nil || !contains(err.Error(), "ops.Real") {
		t.Errorf("Floats.Check(complex64) = %v, want a hint at ops.Real", err)
	}
}

// TestComplexValue: a complex Value holds its elements exactly through
// FromTensor and Tensor, and Round rounds complex64's parts to float32.
func TestComplexValue(t *testing.T) {
	x, _ := tensor.New([]complex128{1 + 2i, -0.1 + 1e-50i}, 2)
	v := opdef.FromTensor(x)
	if v.Len() != 2 || v.C[0] != 1+2i || v.Float(0) != 1 || v.Complex(1) != -0.1+1e-50i {
		t.Fatalf("FromTensor: %+v", v)
	}
	back, err := v.Tensor()
	if err != nil || back.Complex128(1) != -0.1+1e-50i {
		t.Fatalf("Tensor: %v %v", back, err)
	}
	v.DType = tensor.Complex64
	v.Round()
	if want := complex(float64(float32(-0.1)), 0); v.C[1] != want { // 1e-50 is below half float32's smallest subnormal (1.4e-45): 0
		t.Errorf("Round to complex64: %v, want %v", v.C[1], want)
	}
	r := opdef.NewValue(tensor.Float64, tensor.Shape{1})
	r.SetComplex(0, 3-4i)
	if r.F[0] != 3 || r.Complex(0) != 3 {
		t.Errorf("SetComplex on a float64 value kept %v", r.F[0])
	}
}

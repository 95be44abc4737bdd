package matconv

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/tensor"
)

// TestFloat64s checks the typed fast paths of float64s against the
// tensor's own element conversion (Tensor.Float64, the reference) on each
// dtype's extremes, and that only a float64 tensor is shared.
func TestFloat64s(t *testing.T) {
	vals := []float64{0, 1, -1, 0.5, -128, 127, 255, 32767, -32768, 1e9, -1e9, 1 << 40, math.MaxFloat32, math.SmallestNonzeroFloat32, math.Inf(-1), math.NaN()}
	for _, dt := range tensor.DTypes() {
		if dt.IsComplex() {
			continue
		}
		x, err := tensor.FromFloat64s(dt, vals)
		if err != nil {
			t.Fatal(err)
		}
		got := float64s(x)
		if len(got) != len(vals) {
			t.Fatalf("%v: %d values, want %d", dt, len(got), len(vals))
		}
		for i, g := range got {
			if w := x.Float64(i); g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
				t.Errorf("%v: element %d (%v) is %v, Tensor.Float64 says %v", dt, i, vals[i], g, w)
			}
		}
		if shared := &got[0] == &tensor.View[float64](x.Bytes())[0]; shared != (dt == tensor.Float64) {
			t.Errorf("%v: shared %v", dt, shared)
		}
	}
}

// TestSpan checks the address ranges Shares compares.
func TestSpan(t *testing.T) {
	s := make([]complex128, 4)
	lo, n := span(s[1:3])
	base, _ := span(s)
	if lo != base+16 || n != 32 {
		t.Errorf("span of s[1:3]: offset %d, %d bytes; want 16, 32", lo-base, n)
	}
	if lo, n := span([]float64{}); lo != 0 || n != 0 {
		t.Errorf("span of an empty slice: %d, %d", lo, n)
	}
}

package cpu

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/internal/scalar"
)

// ulpsOff is |got - want| in units of want's last place in T's precision
// (0 when both are NaN or equal; +Inf when only one is NaN or infinite).
func ulpsOff[T float](got T, want float64) float64 {
	g := float64(got)
	w := float64(T(want)) // want rounded to T, as the scalar entry stores it
	switch {
	case g == w || (g != g && w != w):
		return 0
	case g != g || w != w || math.IsInf(g, 0) || math.IsInf(w, 0):
		return math.Inf(1)
	}
	var ulp float64
	if _, ok := any(got).(float32); ok {
		a := float32(math.Abs(w))
		ulp = float64(math.Nextafter32(a, float32(math.Inf(1))) - a)
	} else {
		ulp = math.Nextafter(math.Abs(w), math.Inf(1)) - math.Abs(w)
	}
	return math.Abs(g-w) / ulp
}

// fastInputs are 40001 values evenly over [-40, 40], ±2^k for k in
// [-60, 60], the tails where sigmoid and exp underflow, and the specials.
func fastInputs() []float64 {
	var xs []float64
	for i := -20000; i <= 20000; i++ {
		xs = append(xs, float64(i)/500)
	}
	for k := -60; k <= 60; k++ {
		xs = append(xs, math.Ldexp(1, k), -math.Ldexp(1, k), math.Ldexp(1.37, k), -math.Ldexp(1.37, k))
	}
	return append(xs, 0, math.Copysign(0, -1), 88, -88, 700, -700, 745, -745, 1e30, -1e30, math.NaN(), math.Inf(1), math.Inf(-1))
}

// checkFast runs kernel k over the inputs (in place too: the result may
// alias the operand) and reports the largest distance from f in ulps.
func checkFast[T float](t *testing.T, name string, k func(d, a []T), f func(float64) float64, bound float64) {
	xs := fastInputs()
	a := make([]T, len(xs))
	for i, x := range xs {
		a[i] = T(x)
	}
	d := make([]T, len(a))
	k(d, a)
	in := append([]T(nil), a...)
	k(in, in)
	worst, at := 0.0, 0.0
	for i, x := range a {
		want := f(float64(x))
		if u := ulpsOff(d[i], want); u > worst {
			worst, at = u, float64(x)
		}
		if math.Float64bits(float64(in[i])) != math.Float64bits(float64(d[i])) && !(in[i] != in[i] && d[i] != d[i]) {
			t.Errorf("%s(%v) in place = %v, %v out of place", name, x, in[i], d[i])
		}
	}
	t.Logf("%s: at most %.2f ulps from the scalar function (at x = %v)", name, worst, at)
	if worst > bound {
		t.Errorf("%s: %.2f ulps from the scalar function at x = %v, want <= %v", name, worst, at, bound)
	}
}

// TestFastKernelsAcross: the composed kernels of mathfast.go agree with
// the scalar functions across the range, the tails and the specials
// included; the rounding loops exactly. The bounds are the measured
// maxima rounded up: simd's sigmoid, exp and log are within 2.4 ulps
// (internal/simd), and each product or sum after them adds a rounding.
func TestFastKernelsAcross(t *testing.T) {
	checkFast(t, "floor/f32", floorK[float32], math.Floor, 0)
	checkFast(t, "ceil/f64", ceilK[float64], math.Ceil, 0)
	checkFast(t, "round/f32", roundK[float32], math.RoundToEven, 0)
	checkFast(t, "trunc/f64", truncK[float64], math.Trunc, 0)
	checkFast(t, "silu/f32", siluK[float32], scalar.Silu, 4)
	checkFast(t, "silu/f64", siluK[float64], scalar.Silu, 4)
	checkFast(t, "geluTanh/f32", geluTanh32, scalar.GeluTanh, 1)
	checkFast(t, "geluTanh/f64", geluTanhK, scalar.GeluTanh, 4)
	checkFast(t, "softplus/f32", softplusK[float32], scalar.Softplus, 4)
	checkFast(t, "softplus/f64", softplusK[float64], scalar.Softplus, 4)
}

// TestFastKernelsAllocateNothing: the composed kernels take their
// buffers from the pool, so a Run allocates nothing of its own (buffers
// on the stack would escape through simd's function values).
func TestFastKernelsAllocateNothing(t *testing.T) {
	a32, d32 := make([]float32, 1000), make([]float32, 1000)
	a64, d64 := make([]float64, 1000), make([]float64, 1000)
	for name, f := range map[string]func(){
		"silu/f32":     func() { siluK(d32, a32) },
		"silu/f64":     func() { siluK(d64, a64) },
		"geluTanh/f32": func() { geluTanh32(d32, a32) },
		"geluTanh/f64": func() { geluTanhK(d64, a64) },
		"softplus/f32": func() { softplusK(d32, a32) },
		"softplus/f64": func() { softplusK(d64, a64) },
	} {
		if n := testing.AllocsPerRun(50, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

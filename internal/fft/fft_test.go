package fft

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// naive is the O(n²) DFT in float64, with twiddles reduced modulo n.
func naive(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := direction(inverse)
	y := make([]complex128, n)
	w := make([]complex128, n)
	for i := range w {
		w[i] = cmplx.Rect(1, sign*2*math.Pi*float64(i)/float64(n))
	}
	for k := range n {
		var s complex128
		for j := range n {
			s += x[j] * w[(j*k)%n]
		}
		y[k] = s
	}
	return y
}

func randVec(rng *rand.Rand, n int) []complex128 {
	x := make([]complex128, n)
	for i := range x {
		x[i] = complex(rng.Float64()*2-1, rng.Float64()*2-1)
	}
	return x
}

// relErr is max|got-want| / max|want| (max over elements).
func relErr(got, want []complex128) float64 {
	var e, m float64
	for i := range want {
		e = max(e, cmplx.Abs(got[i]-want[i]))
		m = max(m, cmplx.Abs(want[i]))
	}
	if m == 0 {
		return e
	}
	return e / m
}

func to64(x []complex128) []complex64 {
	y := make([]complex64, len(x))
	for i, v := range x {
		y[i] = complex64(v)
	}
	return y
}

func from64(x []complex64) []complex128 {
	y := make([]complex128, len(x))
	for i, v := range x {
		y[i] = complex128(v)
	}
	return y
}

// lengths are every length 1..200 plus large primes (Bluestein), powers
// and mixed products.
func lengths() []int {
	var ns []int
	for n := 1; n <= 200; n++ {
		ns = append(ns, n)
	}
	return append(ns, 1009, 2039, 4096, 2187, 3125, 7*11*13, 2*2*3*5*7*61, 1<<12*3)
}

func TestAgainstNaiveDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range lengths() {
		x := randVec(rng, n)
		for _, inverse := range []bool{false, true} {
			want := naive(x, inverse)
			p := NewPlan128(n, inverse)
			got := make([]complex128, n)
			p.Transform(got, x, make([]complex128, p.WorkLen()))
			// float64: the naive sum itself errs by ~n·ε; the bound is
			// loose against it and tight against any wrong twiddle.
			if e := relErr(got, want); e > 1e-12*math.Sqrt(float64(n))+1e-14 {
				t.Errorf("complex128 n=%d inverse=%v: relative error %.3g", n, inverse, e)
			}
			q := NewPlan64(n, inverse)
			got64 := make([]complex64, n)
			q.Transform(got64, to64(x), make([]complex64, q.WorkLen()))
			if e := relErr(from64(got64), want); e > 2e-6*math.Log2(float64(n)+1)+1e-6 {
				t.Errorf("complex64 n=%d inverse=%v: relative error %.3g", n, inverse, e)
			}
		}
	}
}

func TestInPlaceAndRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range lengths() {
		x := randVec(rng, n)
		f, b := NewPlan128(n, false), NewPlan128(n, true)
		y := append([]complex128(nil), x...)
		w := make([]complex128, max(f.WorkLen(), b.WorkLen()))
		f.Transform(y, y, w)
		if e := relErr(y, naive(x, false)); e > 1e-12*math.Sqrt(float64(n))+1e-14 {
			t.Errorf("in place n=%d: relative error %.3g", n, e)
		}
		b.Transform(y, y, w)
		for i := range y {
			y[i] /= complex(float64(n), 0)
		}
		if e := relErr(y, x); e > 1e-13*math.Log2(float64(n)+1)+1e-15 {
			t.Errorf("round trip n=%d: relative error %.3g", n, e)
		}
	}
}

func TestParseval(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 17, 100, 1000, 1 << 16, 65537} {
		x := randVec(rng, n)
		p := NewPlan128(n, false)
		y := make([]complex128, n)
		p.Transform(y, x, make([]complex128, p.WorkLen()))
		var ex, ey float64
		for i := range x {
			ex += real(x[i])*real(x[i]) + imag(x[i])*imag(x[i])
			ey += real(y[i])*real(y[i]) + imag(y[i])*imag(y[i])
		}
		// Σ|X|² = n·Σ|x|²
		if d := math.Abs(ey/float64(n)-ex) / ex; d > 1e-12 {
			t.Errorf("n=%d: Parseval off by %.3g", n, d)
		}
	}
}

func TestReal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range lengths() {
		x := make([]float64, n)
		xc := make([]complex128, n)
		for i := range x {
			x[i] = rng.Float64()*2 - 1
			xc[i] = complex(x[i], 0)
		}
		want := naive(xc, false)[:n/2+1]
		rp := NewRealPlan128(n)
		work := make([]complex128, rp.WorkLen())
		got := make([]complex128, n/2+1)
		rp.Forward(got, x, work)
		if e := relErr(got, want); e > 1e-12*math.Sqrt(float64(n))+1e-14 {
			t.Errorf("r2c float64 n=%d: relative error %.3g", n, e)
		}
		// c2r of the spectrum with junk imaginary parts at 0 and n/2,
		// which NumPy's irfft ignores.
		spec := append([]complex128(nil), want...)
		spec[0] += 5i
		if n%2 == 0 {
			spec[n/2] -= 3i
		}
		back := make([]float64, n)
		rp.Inverse(back, spec, work)
		var e float64
		for i := range x {
			e = max(e, math.Abs(back[i]/float64(n)-x[i]))
		}
		if e > 1e-13*math.Log2(float64(n)+1)+1e-15 {
			t.Errorf("c2r float64 n=%d: error %.3g", n, e)
		}
		if spec[0] != want[0]+5i {
			t.Errorf("c2r n=%d modified its input", n)
		}

		rp32 := NewRealPlan64(n)
		x32 := make([]float32, n)
		for i := range x {
			x32[i] = float32(x[i])
		}
		w32 := make([]complex64, rp32.WorkLen())
		got32 := make([]complex64, n/2+1)
		rp32.Forward(got32, x32, w32)
		if e := relErr(from64(got32), want); e > 2e-6*math.Log2(float64(n)+1)+1e-6 {
			t.Errorf("r2c float32 n=%d: relative error %.3g", n, e)
		}
		back32 := make([]float32, n)
		rp32.Inverse(back32, got32, w32)
		e = 0
		for i := range x {
			e = max(e, math.Abs(float64(back32[i])/float64(n)-x[i]))
		}
		if e > 3e-6*math.Log2(float64(n)+1) {
			t.Errorf("c2r float32 n=%d: error %.3g", n, e)
		}
	}
}

func TestAxis(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sh := range [][3]int{{1, 5, 1}, {3, 7, 1}, {2, 6, 3}, {4, 16, 9}, {1, 13, 20}, {2, 97, 17}} {
		outer, n, inner := sh[0], sh[1], sh[2]
		x := randVec(rng, outer*n*inner)
		p := NewPlan128(n, false)
		got := make([]complex128, len(x))
		p.Axis(got, x, outer, inner, make([]complex128, p.AxisWorkLen(inner)))
		for o := range outer {
			for c := range inner {
				col := make([]complex128, n)
				for i := range n {
					col[i] = x[(o*n+i)*inner+c]
				}
				want := naive(col, false)
				for i := range n {
					if d := cmplx.Abs(got[(o*n+i)*inner+c] - want[i]); d > 1e-12*float64(n) {
						t.Fatalf("shape %v outer %d column %d element %d: off by %.3g", sh, o, c, i, d)
					}
				}
			}
		}
		// In place.
		y := append([]complex128(nil), x...)
		p.Axis(y, y, outer, inner, make([]complex128, p.AxisWorkLen(inner)))
		if e := relErr(y, got); e != 0 {
			t.Errorf("shape %v: in place differs by %.3g", sh, e)
		}
	}
}

func TestPlansAreCached(t *testing.T) {
	if NewPlan64(360, false) != NewPlan64(360, false) || NewPlan64(360, false) == NewPlan64(360, true) {
		t.Error("plans not cached by (length, direction)")
	}
	if any(NewRealPlan128(64)) == any(NewRealPlan64(64)) {
		t.Error("real plans of two precisions share a cache entry")
	}
}

func TestTransformAllocatesNothing(t *testing.T) {
	for _, n := range []int{1024, 1000, 1009} {
		p := NewPlan64(n, false)
		x := make([]complex64, n)
		w := make([]complex64, p.WorkLen())
		if a := testing.AllocsPerRun(10, func() { p.Transform(x, x, w) }); a != 0 {
			t.Errorf("n=%d: %v allocations per transform", n, a)
		}
	}
}

func TestTwiddle(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 100, 1 << 20, 999983} {
		for _, k := range []int{0, 1, n / 8, n / 4, n/4 + 1, n / 3, n / 2, 5 * n / 8, 3 * n / 4, 7 * n / 8, n - 1} {
			want := cmplx.Rect(1, -2*math.Pi*float64(k)/float64(n))
			if d := cmplx.Abs(twiddle(k, n, -1) - want); d > 4e-16*float64(max(1, k)) && d > 1e-15 {
				t.Errorf("twiddle(%d, %d): off by %.3g", k, n, d)
			}
		}
	}
}

func TestRealAxis(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, sh := range [][3]int{{3, 8, 1}, {2, 9, 1}, {2, 10, 3}, {1, 7, 17}, {2, 101, 9}} {
		outer, n, inner := sh[0], sh[1], sh[2]
		m := n/2 + 1
		x := make([]float64, outer*n*inner)
		for i := range x {
			x[i] = rng.Float64()*2 - 1
		}
		rp := NewRealPlan128(n)
		got := make([]complex128, outer*m*inner)
		w := make([]complex128, rp.AxisWorkLen(inner))
		items := AxisItems(outer, inner)
		// In two ranges, as two threads would.
		rp.AxisForward(got, x, outer, inner, 0, items/2, w)
		rp.AxisForward(got, x, outer, inner, items/2, items, w)
		for o := range outer {
			for c := range inner {
				col := make([]complex128, n)
				for i := range n {
					col[i] = complex(x[(o*n+i)*inner+c], 0)
				}
				want := naive(col, false)
				for k := range m {
					if d := cmplx.Abs(got[(o*m+k)*inner+c] - want[k]); d > 1e-12*float64(n) {
						t.Fatalf("shape %v outer %d column %d frequency %d: off by %.3g", sh, o, c, k, d)
					}
				}
			}
		}
		back := make([]float64, len(x))
		rp.AxisInverse(back, got, outer, inner, 0, items, w)
		for i := range x {
			if d := math.Abs(back[i]/float64(n) - x[i]); d > 1e-13*float64(n) {
				t.Fatalf("shape %v: round trip element %d off by %.3g", sh, i, d)
			}
		}
	}
}

package scalar

import (
	"math"
	"testing"
)

// near reports whether got is want within rel relative (and absolute
// below 1), NaN matching NaN, infinities and zero signs exactly.
func near(got, want, rel float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0) || want == 0:
		return math.Float64bits(got) == math.Float64bits(want)
	}
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

// harmonic is H(n) = 1 + 1/2 + ... + 1/n.
func harmonic(n int) float64 {
	h := 0.0
	for k := n; k >= 1; k-- {
		h += 1 / float64(k)
	}
	return h
}

func TestFunctions(t *testing.T) {
	const euler = 0.57721566490153286 // the Euler–Mascheroni constant γ
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name   string
		f      func(float64) float64
		x      float64
		want   float64
		source string
	}{
		{"Digamma", Digamma, 1, -euler, "ψ(1) = -γ"},
		{"Digamma", Digamma, 0.5, -euler - 2*math.Ln2, "ψ(1/2) = -γ - 2 ln 2"},
		{"Digamma", Digamma, 4, 1 + 0.5 + 1.0/3 - euler, "ψ(n) = H(n-1) - γ"},
		{"Digamma", Digamma, 30, harmonic(29) - euler, "ψ(n) = H(n-1) - γ, beyond the recurrence (the series)"},
		{"Digamma", Digamma, -0.5, 2 - euler - 2*math.Ln2, "ψ(-1/2) = ψ(1/2) + 2 (the recurrence)"},
		{"Digamma", Digamma, 0, nan, "a pole: loom gives NaN"},
		{"Digamma", Digamma, -3, nan, "a pole"},
		{"Digamma", Digamma, inf, inf, "ψ grows as ln x"},
		{"Digamma", Digamma, -inf, nan, "no limit at -Inf"},
		{"Trigamma", Trigamma, 1, math.Pi * math.Pi / 6, "ψ'(1) = π²/6"},
		{"Trigamma", Trigamma, 0.5, math.Pi * math.Pi / 2, "ψ'(1/2) = π²/2"},
		{"Trigamma", Trigamma, -0.5, math.Pi*math.Pi/2 + 4, "ψ'(-1/2) = ψ'(1/2) + 1/(1/2)² (the recurrence)"},
		{"Trigamma", Trigamma, 3, math.Pi*math.Pi/6 - 1 - 0.25, "ψ'(n) = π²/6 - Σ 1/k² for k < n"},
		{"Trigamma", Trigamma, -2, nan, "a pole"},
		{"Trigamma", Trigamma, inf, 0, "ψ' decays as 1/x"},
		{"Lgamma", Lgamma, 0.5, math.Log(math.Sqrt(math.Pi)), "Γ(1/2) = √π"},
		{"Lgamma", Lgamma, -2.5, -0.05624371649767457, "Python's math.lgamma(-2.5)"},
		{"Lgamma", Lgamma, 5, math.Log(24), "Γ(5) = 4!"},
		{"Lgamma", Lgamma, 0, inf, "a pole: +Inf"},
		{"Lgamma", Lgamma, -inf, inf, "Python's math.lgamma(-inf) = inf (Go's math.Lgamma gives -Inf)"},
		{"Softplus", Softplus, 0, math.Ln2, "log(1 + 1)"},
		{"Softplus", Softplus, 1000, 1000, "no overflow: max(x,0) + log1p(e^-1000)"},
		{"Softplus", Softplus, -40, 4.248354255291589e-18, "Python's math.log1p(math.exp(-40))"},
		{"Softplus", Softplus, -inf, 0, "e^-Inf = 0"},
		{"Softplus", Softplus, inf, inf, "max(Inf, 0)"},
		{"Softplus", Softplus, nan, nan, "NaN propagates"},
		{"Sigmoid", Sigmoid, -800, 0, "e^-800 underflows: 0, not NaN"},
		{"Silu", Silu, 2, 1.7615941559557646, "Python: 2/(1+math.exp(-2))"},
		{"Silu", Silu, math.Copysign(0, -1), math.Copysign(0, -1), "-0·sigmoid(-0) = -0"},
		{"Gelu", Gelu, 1, 0.8413447460685429, "Φ(1): Python 0.5*(1+math.erf(1/math.sqrt(2)))"},
		{"Gelu", Gelu, -1, -1 + 0.8413447460685429, "-1·Φ(-1) = -(1 - Φ(1))"},
		{"GeluTanh", GeluTanh, 1, 0.8411919906082768, "Python: 0.5*(1+math.tanh(math.sqrt(2/math.pi)*(1+0.044715)))"},
		{"GeluTanh", GeluTanh, 0, 0, "0"},
		{"Remainder", func(x float64) float64 { return Remainder(x, 2) }, -7.5, 0.5, "Python divmod(-7.5, 2.0) = (-4.0, 0.5)"},
		{"Remainder", func(x float64) float64 { return Remainder(x, -2) }, 7.5, -0.5, "Python divmod(7.5, -2.0) = (-4.0, -0.5)"},
		{"Remainder", func(x float64) float64 { return Remainder(x, -3) }, 6, math.Copysign(0, -1), "a zero remainder takes the divisor's sign (NumPy: -0.0)"},
		{"Remainder", func(x float64) float64 { return Remainder(x, 0) }, 1, nan, "x mod 0 is NaN"},
		{"Remainder", func(x float64) float64 { return Remainder(x, inf) }, -1, inf, "NumPy: remainder(-1, inf) = inf (fmod gives -1, plus the divisor)"},
		{"FloorDiv", func(x float64) float64 { return FloorDiv(x, 2) }, -7.5, -4, "Python divmod(-7.5, 2.0)"},
		{"FloorDiv", func(x float64) float64 { return FloorDiv(x, 3) }, math.Copysign(0, -1), math.Copysign(0, -1), "Python divmod(-0.0, 3.0) = (-0.0, 0.0)"},
		{"FloorDiv", func(x float64) float64 { return FloorDiv(x, 0) }, -1, -inf, "a/0 (NumPy: -inf)"},
		{"FloorDiv", func(x float64) float64 { return FloorDiv(x, 0.1) }, 1, 9, "Python 1.0 // 0.1 = 9.0 (0.1 is above 1/10)"},
	}
	for _, c := range cases {
		if got := c.f(c.x); !near(got, c.want, 1e-14) {
			t.Errorf("%s(%v) = %v, want %v (%s)", c.name, c.x, got, c.want, c.source)
		}
	}
}

// TestDigammaDerivatives: Digamma is Lgamma's derivative and Trigamma
// Digamma's, by central differences (step 1e-5: error O(h²) ≈ 1e-10, a
// few 1e-11 from rounding), across the domain and on the negative side.
func TestDigammaDerivatives(t *testing.T) {
	const h = 1e-5
	for _, x := range []float64{0.1, 0.7, 1.3, 2.5, 9.9, 10.1, 47, -0.3, -1.7, -4.2} {
		d := (Lgamma(x+h) - Lgamma(x-h)) / (2 * h)
		if !near(Digamma(x), d, 1e-7) {
			t.Errorf("Digamma(%v) = %v, differences of Lgamma %v", x, Digamma(x), d)
		}
		d = (Digamma(x+h) - Digamma(x-h)) / (2 * h)
		if !near(Trigamma(x), d, 1e-6) {
			t.Errorf("Trigamma(%v) = %v, differences of Digamma %v", x, Trigamma(x), d)
		}
	}
}

func TestIntegerDivision(t *testing.T) {
	cases := []struct{ x, y, div, rem, fmod int64 }{
		// Python: divmod(7, 2) = (3, 1), divmod(-7, 2) = (-4, 1),
		// divmod(7, -2) = (-4, -1), divmod(-7, -2) = (3, -1); C's %
		// keeps the dividend's sign: 7%-2 = 1, -7%2 = -1.
		{7, 2, 3, 1, 1},
		{-7, 2, -4, 1, -1},
		{7, -2, -4, -1, 1},
		{-7, -2, 3, -1, -1},
		{6, -3, -2, 0, 0},
		// loom: x // 0 = x % 0 = 0 (NumPy warns and gives 0).
		{5, 0, 0, 0, 0},
		// MinInt // -1 wraps to MinInt; the remainders are 0.
		{math.MinInt64, -1, math.MinInt64, 0, 0},
		{math.MinInt64, 3, -3074457345618258603, 1, -2}, // -2^63 = 3·(-3074457345618258603) + 1
	}
	for _, c := range cases {
		if got := FloorDivInt(c.x, c.y); got != c.div {
			t.Errorf("FloorDivInt(%d, %d) = %d, want %d", c.x, c.y, got, c.div)
		}
		if got := RemainderInt(c.x, c.y); got != c.rem {
			t.Errorf("RemainderInt(%d, %d) = %d, want %d", c.x, c.y, got, c.rem)
		}
		if got := FmodInt(c.x, c.y); got != c.fmod {
			t.Errorf("FmodInt(%d, %d) = %d, want %d", c.x, c.y, got, c.fmod)
		}
	}
}

// TestPowInt checks integer powers by hand: 3^4 = 81, (-2)^3 = -8,
// x^0 = 1 (0^0 too, as NumPy), negative exponents truncate (2^-1 = 0,
// (-1)^-3 = -1, 1^-5 = 1), and 2^64 wraps to 0 and 3^41 to
// pow(3, 41, 2**64) - 2**64 = -420491770248316829 (Python), as int64
// arithmetic wraps.
func TestPowInt(t *testing.T) {
	for _, c := range []struct{ x, y, want int64 }{
		{3, 4, 81}, {-2, 3, -8}, {5, 0, 1}, {0, 0, 1}, {2, -1, 0}, {-1, -3, -1}, {-1, -2, 1}, {1, -5, 1},
		{2, 64, 0}, {3, 41, -420491770248316829},
	} {
		if got := PowInt(c.x, c.y); got != c.want {
			t.Errorf("PowInt(%d, %d) = %d, want %d", c.x, c.y, got, c.want)
		}
	}
}

// TestSignAbs checks by hand: Sign of 3, -2, 0 is 1, -1, 0; of -0 is -0
// and of NaN is NaN (NumPy's sign); AbsInt(-7) = 7 and AbsInt(MinInt64)
// wraps to MinInt64 (two's complement, as numpy.abs of int64).
func TestSignAbs(t *testing.T) {
	if Sign(3.0) != 1 || Sign(-2.0) != -1 || Sign(0.0) != 0 || Sign(int64(-9)) != -1 || Sign(int64(0)) != 0 {
		t.Error("Sign of 3, -2, 0, -9, 0 is not 1, -1, 0, -1, 0")
	}
	if z := Sign(math.Copysign(0, -1)); z != 0 || !math.Signbit(z) {
		t.Errorf("Sign(-0) = %v, want -0", z)
	}
	if !math.IsNaN(Sign(math.NaN())) {
		t.Error("Sign(NaN) is not NaN")
	}
	if AbsInt(-7) != 7 || AbsInt(math.MinInt64) != math.MinInt64 {
		t.Error("AbsInt(-7), AbsInt(MinInt64) are not 7, MinInt64")
	}
}

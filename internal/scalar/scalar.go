// Package scalar holds the element functions of loom's math ops that
// neither Go's math package nor the C math library has, written once:
// package ops's reference evaluators and exec/cpu's kernels both call
// them (exec/cuda's prelude has their C versions, checked against the
// reference by the conformance suite). Semantics follow NumPy and SciPy,
// special values (-0, ±Inf, NaN) included; each function's comment says
// where loom differs.
package scalar

import "math"

// GeluC is √(2/π), the constant of GELU's tanh approximation.
var GeluC = math.Sqrt(2 / math.Pi)

// DivMod is NumPy's divmod for floats: the floored quotient and the
// remainder with the divisor's sign, computed from fmod so that
// q*b + m == a holds as closely as float arithmetic allows; a zero
// remainder takes the divisor's sign, a zero quotient the sign of a/b,
// and b == 0 gives a/b (±Inf or NaN) and NaN.
func DivMod(a, b float64) (q, m float64) {
	m = math.Mod(a, b)
	if b == 0 {
		return a / b, m
	}
	div := (a - m) / b
	if m != 0 {
		if (b < 0) != (m < 0) {
			m += b
			div--
		}
	} else {
		m = math.Copysign(0, b)
	}
	if div != 0 {
		q = math.Floor(div)
		if div-q > 0.5 {
			q++
		}
	} else {
		q = math.Copysign(0, a/b)
	}
	return q, m
}

// Remainder is numpy.remainder of floats (the second result of DivMod).
func Remainder(a, b float64) float64 { _, m := DivMod(a, b); return m }

// FloorDiv is numpy.floor_divide of floats (the first result of DivMod).
func FloorDiv(a, b float64) float64 { q, _ := DivMod(a, b); return q }

// FloorDivInt is integer division rounding toward minus infinity
// (Python's //); x // 0 is 0 (integer division by zero has no value;
// loom does not trap), and MinInt // -1 wraps to MinInt as in NumPy.
func FloorDivInt(x, y int64) int64 {
	switch y {
	case 0:
		return 0
	case -1:
		return -x
	}
	q := x / y
	if x%y != 0 && (x < 0) != (y < 0) {
		q--
	}
	return q
}

// AbsInt is |x|; the absolute value of the most negative integer wraps to
// itself, as NumPy's.
func AbsInt(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// Sign is 1 or -1 by the sign of x, and x itself for 0, -0 and NaN.
func Sign[W int64 | float64](x W) W {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

// PowInt is integer power by squaring, wrapping as int64 arithmetic does;
// a negative exponent gives the truncated reciprocal (0 unless x is 1 or
// -1).
func PowInt(x, y int64) int64 {
	if y < 0 {
		switch x {
		case 1:
			return 1
		case -1:
			if y%2 == 0 {
				return 1
			}
			return -1
		}
		return 0
	}
	r := int64(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

// RemainderInt is x - FloorDivInt(x, y)*y, with the divisor's sign
// (Python's %); x % 0 is 0 (NumPy warns and gives 0).
func RemainderInt(x, y int64) int64 {
	if y == 0 {
		return 0
	}
	return x - FloorDivInt(x, y)*y
}

// FmodInt is C's % (the dividend's sign); x % 0 is 0, and x % -1 is 0
// (MinInt % -1 would trap in Go's and C's division).
func FmodInt(x, y int64) int64 {
	if y == 0 || y == -1 {
		return 0
	}
	return x % y
}

// Lgamma is log|Γ(x)|: math.Lgamma without the sign, but +Inf at -Inf
// as C's lgamma, Python's math.lgamma and SciPy's gammaln (Go's gives
// -Inf).
func Lgamma(x float64) float64 {
	if math.IsInf(x, -1) {
		return math.Inf(1)
	}
	v, _ := math.Lgamma(x)
	return v
}

// Digamma is ψ(x) = d/dx log Γ(x): for x < 0 by the reflection
// ψ(1-x) - ψ(x) = π cot(πx) (NaN at the poles 0, -1, -2, ...; SciPy
// gives ±Inf at 0), then the recurrence ψ(x) = ψ(x+1) - 1/x up to
// x >= 10 and the asymptotic series ln x - 1/(2x) - Σ B2k/(2k x^2k) to
// k = 6 (the first term left out is below 1e-15 there).
func Digamma(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return math.NaN()
	case math.IsInf(x, 1):
		return x
	case x <= 0 && x == math.Floor(x):
		return math.NaN()
	case x < 0:
		return Digamma(1-x) - math.Pi/math.Tan(math.Pi*x)
	}
	var acc float64
	for x < 10 {
		acc -= 1 / x
		x++
	}
	f := 1 / (x * x)
	series := f * (1.0/12 - f*(1.0/120-f*(1.0/252-f*(1.0/240-f*(1.0/132-f*(691.0/32760))))))
	return acc + math.Log(x) - 0.5/x - series
}

// Trigamma is ψ'(x): for x < 0 by the reflection ψ'(1-x) + ψ'(x) =
// π²/sin²(πx) (NaN at the poles), then ψ'(x) = ψ'(x+1) + 1/x² up to
// x >= 10 and the asymptotic series 1/x + 1/(2x²) + Σ B2k/x^(2k+1) to
// k = 7.
func Trigamma(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return math.NaN()
	case math.IsInf(x, 1):
		return 0
	case x <= 0 && x == math.Floor(x):
		return math.NaN()
	case x < 0:
		s := math.Sin(math.Pi * x)
		return -Trigamma(1-x) + math.Pi*math.Pi/(s*s)
	}
	var acc float64
	for x < 10 {
		acc += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	series := (1 + f*(1.0/6-f*(1.0/30-f*(1.0/42-f*(1.0/30-f*(5.0/66-f*(691.0/2730))))))) / x
	return acc + series + 0.5*f
}

// Sigmoid is 1/(1+e^-x) without overflow: for x < 0 it uses e^x/(1+e^x).
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Softplus is log(1 + e^x) as max(x, 0) + log1p(e^-|x|): no overflow
// for large x, no loss of precision for very negative x.
func Softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

// Silu is x·sigmoid(x).
func Silu(x float64) float64 { return x * Sigmoid(x) }

// Gelu is the exact GELU x·Φ(x) = x/2·(1 + erf(x/√2)).
func Gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// GeluTanh is GELU's tanh approximation x/2·(1 + tanh(√(2/π)·(x +
// 0.044715·x³))), computed as x·sigmoid(u) with u = 2√(2/π)·(x +
// 0.044715·x³) = x·(GeluC2 + GeluC2K·x²) (1 + tanh(u/2) = 2 sigmoid(u)):
// where tanh is close to -1 the sum 1 + tanh cancels, and sigmoid keeps
// its relative accuracy. exec/cpu's vector kernel and the CUDA prelude
// compute u in the same order.
func GeluTanh(x float64) float64 {
	return x * Sigmoid(x*(GeluC2+GeluC2K*(x*x)))
}

// GeluC2 and GeluC2K are 2√(2/π) and 2√(2/π)·0.044715, GeluTanh's
// constants.
var (
	GeluC2  = 2 * GeluC
	GeluC2K = 2 * GeluC * 0.044715
)

// IsFinite is neither NaN nor ±Inf.
func IsFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// IsInf is +Inf or -Inf.
func IsInf(x float64) bool { return math.IsInf(x, 0) }

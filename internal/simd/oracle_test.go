package simd

// Oracles: each kernel's result computed from its mathematical definition,
// independently of purego.go (which is what level "go" runs), so that
// TestKernels judges every level, the pure-Go one included.
//
//   - float32 arithmetic: float64 arithmetic rounded once to float32. For
//     +, -, ×, ÷ and √ this is the correctly rounded float32 result: double
//     rounding through a format of p' >= 2p+2 bits is innocuous (Figueroa,
//     "When is double rounding innocuous?", 1995; 53 >= 2·24+2).
//   - float64 arithmetic and every FMA: math/big, exactly (or to >= 2p+2
//     bits for ÷ and √), rounded once by big.Float.Float64/Float32, which
//     round to nearest even, denormals and overflow included.
//   - max, min, neg, abs, comparisons, selects: from the bits (a total
//     order on the encodings), not from Go's operators.
//   - exp, log, tanh, sigmoid: float64 math for float32 (its error, under
//     2^-28 ulp of float32, is negligible), the big.Float references of
//     ulp_test.go for float64.
//   - reductions: the exact sum (math/big) with the summation error bound;
//     max and min from the bits.
//
// The special cases (NaN, infinities, zeros) follow IEEE 754 and are
// written out: they involve no rounding.

import (
	"fmt"
	"math"
	"math/big"
)

func is32[T float]() bool {
	var z T
	_, ok := any(z).(float32)
	return ok
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// signBit and magnitude of x's encoding.
func signMag[T float](x T) (neg bool, mag uint64) {
	b := bitsOf(x)
	if is32[T]() {
		return b>>31 != 0, b &^ (1 << 31)
	}
	return b>>63 != 0, b &^ (1 << 63)
}

// total orders the non-NaN values by their encoding: -Inf < ... < -0 < +0
// < ... < +Inf (Go's max and min order -0 below +0).
func total[T float](x T) int64 {
	neg, mag := signMag(x)
	if neg {
		return -int64(mag) - 1
	}
	return int64(mag)
}

// numeric orders the non-NaN values numerically (-0 == +0).
func numeric[T float](x T) int64 {
	neg, mag := signMag(x)
	if neg {
		return -int64(mag)
	}
	return int64(mag)
}

func nanOf[T float]() T { return T(math.NaN()) }

// ---- float32 arithmetic: float64, rounded once ----

func add32(a, b float32) float32 { return float32(float64(a) + float64(b)) }
func sub32(a, b float32) float32 { return float32(float64(a) - float64(b)) }
func mul32(a, b float32) float32 { return float32(float64(a) * float64(b)) }
func div32(a, b float32) float32 { return float32(float64(a) / float64(b)) }
func sqrt32(a float32) float32   { return float32(math.Sqrt(float64(a))) }

// ---- float64 arithmetic: math/big, rounded once ----

func bigF(x float64, prec uint) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(x) }

func round64(r *big.Float) float64 { v, _ := r.Float64(); return v }

func roundT[T float](r *big.Float) T {
	if is32[T]() {
		v, _ := r.Float32()
		return T(v)
	}
	v, _ := r.Float64()
	return T(v)
}

func add64(a, b float64) float64 {
	switch {
	case !finite(a) || !finite(b):
		return a + b // NaN, ∞ + x, ∞ - ∞: IEEE special cases, no rounding
	case a == -b:
		// an exact zero: -0 only for (-0) + (-0) (IEEE 754 §6.3)
		if math.Signbit(a) && math.Signbit(b) {
			return math.Copysign(0, -1)
		}
		return 0
	}
	// exact: two float64 values span fewer than 2,100 bits
	return round64(new(big.Float).SetPrec(2200).Add(bigF(a, 53), bigF(b, 53)))
}

func sub64(a, b float64) float64 { return add64(a, -b) }

func mul64(a, b float64) float64 {
	if !finite(a) || !finite(b) || a == 0 || b == 0 {
		return a * b // NaN, ∞·0, ∞·x, ±0: special cases, exact
	}
	return round64(new(big.Float).SetPrec(106).Mul(bigF(a, 53), bigF(b, 53))) // exact product
}

func div64(a, b float64) float64 {
	if !finite(a) || !finite(b) || a == 0 || b == 0 {
		return a / b // x/0, 0/x, ∞/x, x/∞, NaN: special cases, exact
	}
	return round64(new(big.Float).SetPrec(120).Quo(bigF(a, 53), bigF(b, 53))) // 120 >= 2·53+2
}

func sqrt64(a float64) float64 {
	if !finite(a) || a <= 0 {
		return math.Sqrt(a) // NaN, +∞, ±0, negative: special cases, exact
	}
	return round64(new(big.Float).SetPrec(120).Sqrt(bigF(a, 53)))
}

// fmaOracle is a·b + c exactly, rounded once to T.
func fmaOracle[T float](a, b, c T) T {
	x, y, z := float64(a), float64(b), float64(c)
	switch {
	case math.IsNaN(x) || math.IsNaN(y) || math.IsNaN(z):
		return nanOf[T]()
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		if x == 0 || y == 0 {
			return nanOf[T]() // ∞·0
		}
		p := math.Inf(1)
		if math.Signbit(x) != math.Signbit(y) {
			p = math.Inf(-1)
		}
		if math.IsInf(z, 0) && z != p {
			return nanOf[T]() // ∞ - ∞
		}
		return T(p)
	case math.IsInf(z, 0):
		return c // finite product + ∞ (the product never overflows)
	}
	// exact: the product's bits and c's span fewer than 4,300 bits
	r := new(big.Float).SetPrec(4400).Mul(bigF(x, 53), bigF(y, 53))
	r.Add(r, bigF(z, 53))
	if r.Sign() == 0 {
		// an exact zero: -0 only when the product is a -0 and c is -0
		if (x == 0 || y == 0) && z == 0 && math.Signbit(x) != math.Signbit(y) && math.Signbit(z) {
			return T(math.Copysign(0, -1))
		}
		return 0
	}
	return roundT[T](r)
}

// ---- bit-level operations ----

func negOracle[T float](x T) T {
	if is32[T]() {
		return T(math.Float32frombits(uint32(bitsOf(x)) ^ 1<<31))
	}
	return T(math.Float64frombits(bitsOf(x) ^ 1<<63))
}

func absOracle[T float](x T) T {
	if is32[T]() {
		return T(math.Float32frombits(uint32(bitsOf(x)) &^ (1 << 31)))
	}
	return T(math.Float64frombits(bitsOf(x) &^ (1 << 63)))
}

// maxOracle and minOracle: NaN if either is NaN, else the larger (smaller)
// in the total order, where -0 < +0.
func maxOracle[T float](a, b T) T {
	switch {
	case isNaN(a) || isNaN(b):
		return nanOf[T]()
	case total(a) >= total(b):
		return a
	}
	return b
}

func minOracle[T float](a, b T) T {
	switch {
	case isNaN(a) || isNaN(b):
		return nanOf[T]()
	case total(a) <= total(b):
		return a
	}
	return b
}

// cmpOracle: false when either is NaN, except for Ne.
func cmpOracle[T float](op CmpOp, a, b T) uint8 {
	if isNaN(a) || isNaN(b) {
		return u8(op == Ne)
	}
	x, y := numeric(a), numeric(b)
	var r bool
	switch op {
	case Eq:
		r = x == y
	case Ne:
		r = x != y
	case Lt:
		r = x < y
	case Le:
		r = x <= y
	case Gt:
		r = x > y
	case Ge:
		r = x >= y
	}
	return u8(r)
}

// ---- approximations ----

// approx32 checks a float32 approximation of f against float64 math, in
// ulp of the exact value: |got - f(x)| <= bound ulp. Level go rounds a
// float64 result once, so its bound is half an ulp (plus the float64
// functions' error, < 2^-28 ulp); the assembly's bound (asm) is the
// maximum error from the exact value that the function's doc comment
// states, measured on all 2^32 inputs (rounded up by 0.01, the doc's
// precision). Special results (NaN, infinities, zeros, overflow) must be
// exact.
func approx32(f func(float64) float64, asm float64) func(got, x float32) string {
	return func(got, x float32) string {
		bound := asm
		if level == levelGo {
			bound = 0.5 + 0x1p-20
		}
		r := f(float64(x))
		cr := float32(r)
		g := float64(got)
		if math.IsNaN(r) || math.IsInf(float64(cr), 0) || r == 0 || !finite(g) {
			if !same(got, cr) {
				return fmt.Sprintf("got %v, want %v", got, cr)
			}
			return ""
		}
		_, e := math.Frexp(r)
		u := math.Ldexp(1, max(e-1, -126)-23) // ulp of r as a float32 (denormals: 2^-149)
		if err := math.Abs(g-r) / u; err > bound {
			return fmt.Sprintf("got %v (%#x), exact %v: %.3f ulp > %.3f", got, bitsOf(got), r, err, bound)
		}
		return ""
	}
}

func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) } // ∞ → 0 for x < -709: exact enough for float32

type ref64 struct {
	r       *big.Float
	special float64
}

// refs64 caches the big.Float references (the same inputs come back at
// every level).
var refs64 = map[string]map[uint64]ref64{}

// approx64 checks a float64 approximation against the big.Float reference
// of ulp_test.go: at most bound ulp from the correctly rounded result.
// Bounds (asm, at the assembly levels; goB, at level go) are the ones the
// function's doc comment states, or for level go those of Go's math
// package (see kernelTests).
func approx64(f string, asm, goB uint64) func(got, x float64) string {
	return func(got, x float64) string {
		m := refs64[f]
		if m == nil {
			m = map[uint64]ref64{}
			refs64[f] = m
		}
		ref, ok := m[math.Float64bits(x)]
		if !ok {
			r, s, _ := exact64(f, x)
			ref = ref64{r, s}
			m[math.Float64bits(x)] = ref
		}
		if ref.r == nil {
			if !same(got, ref.special) {
				return fmt.Sprintf("got %v, want %v", got, ref.special)
			}
			return ""
		}
		bound := asm
		if level == levelGo {
			bound = goB
		}
		frac, d := ulpErr64(got, ref.r)
		if d > bound {
			cr, _ := ref.r.Float64()
			return fmt.Sprintf("got %v (%#x), correctly rounded %v: %d ulp (%.3f from exact) > %d", got, bitsOf(got), cr, d, frac, bound)
		}
		return ""
	}
}

// ---- reductions ----

// sumOracle checks a sum of a against the exact sum. The kernels add
// element i into lane i mod 32 of 32 float64 accumulators, then add the
// lanes in a 5-level tree (ReduceSumF32's doc comment): no element goes
// through more than h = ceil(n/32) + 5 float64 additions, and such a sum
// is within γ_h·Σ|a_i| of the exact one, γ_h = h·u/(1-h·u), u = 2^-53
// (Higham, Accuracy and Stability of Numerical Algorithms, §4.2).
func sumOracle[T float](got float64, a []T) string {
	var nan, pinf, ninf bool
	// exact: float64 values span fewer than 2,100 bits, plus carries
	s, abs := new(big.Float).SetPrec(2200), new(big.Float).SetPrec(2200)
	for _, v := range a {
		x := float64(v)
		switch {
		case math.IsNaN(x):
			nan = true
		case math.IsInf(x, 1):
			pinf = true
		case math.IsInf(x, -1):
			ninf = true
		default:
			s.Add(s, bigF(x, 53))
			abs.Add(abs, bigF(math.Abs(x), 53))
		}
	}
	sumAbs := round64(abs)
	if !finite(got) && sumAbs >= math.MaxFloat64 {
		return "" // a partial sum of the finite elements may overflow (float64 operands only)
	}
	if nan || pinf || ninf {
		want := math.NaN()
		if !nan && pinf != ninf {
			want = math.Inf(1)
			if ninf {
				want = math.Inf(-1)
			}
		}
		if !same(got, want) {
			return fmt.Sprintf("got %v, want %v", got, want)
		}
		return ""
	}
	if !finite(got) {
		return fmt.Sprintf("got %v, exact %v", got, round64(s))
	}
	h := float64((len(a)+31)/32 + 5)
	u := 0x1p-53
	tol := new(big.Float).SetPrec(2200).Mul(abs, bigF(h*u/(1-h*u), 53))
	diff := new(big.Float).SetPrec(2200).Sub(bigF(got, 53), s)
	if diff.Abs(diff).Cmp(tol) > 0 {
		return fmt.Sprintf("got %v, exact %v: error %v > bound %v", got, round64(s), round64(diff), round64(tol))
	}
	return ""
}

// redOracle is the maximum (or minimum) in the total order, NaN if any is
// NaN; -Inf (+Inf) for an empty slice.
func redOracle[T float](a []T, isMax bool) T {
	m := T(math.Inf(1))
	if isMax {
		m = T(math.Inf(-1))
	}
	for _, x := range a {
		if isNaN(x) {
			return nanOf[T]()
		}
		if isMax && total(x) > total(m) || !isMax && total(x) < total(m) {
			m = x
		}
	}
	return m
}

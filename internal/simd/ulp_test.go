package simd

// Accuracy of the approximations, in ulp of the correctly rounded result.
// float32: a sweep of every exponent of both signs with many mantissas,
// against float64 math (whose error is ~2^-29 of a float32 ulp);
// LOOM_SIMD_EXHAUSTIVE=1 tests all 2^32 inputs instead. float64: a sweep
// against big.Float references (Go's amd64 math.Exp and math.Log are not
// accurate enough to judge: math.Log is wrong on denormals and math.Exp
// overflows early).

import (
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"os"
	"runtime"
	"sync"
	"testing"
)

// Bounds asserted by the sweeps (max distance in ulp from the correctly
// rounded result); the measured values are in the doc comments.
var ulpBound = map[string]uint64{
	"ExpF32": 1, "LogF32": 1, "TanhF32": 2, "SigmoidF32": 2,
	"ExpF64": 1, "LogF64": 1, "TanhF64": 2, "SigmoidF64": 2,
}

// goULPBound: the same at level go. float32: a float64 result (error
// under 2^-28 ulp of float32) rounded once is at most 1 ulp from the
// correctly rounded result (1 only within 2^-28 ulp of a midpoint).
// float64: math.Exp up to 2 ulp on amd64 (ExpF64's doc), math.Log under 1
// ulp (fdlibm's analysis, math/log.go), math.Tanh 2 (Cephes' peak relative
// error 2.5e-16, math/tanh.go), the sigmoid formula with math.Exp 2
// (SigmoidF64's doc).
var goULPBound = map[string]uint64{
	"ExpF32": 1, "LogF32": 1, "TanhF32": 1, "SigmoidF32": 1,
	"ExpF64": 2, "LogF64": 1, "TanhF64": 2, "SigmoidF64": 2,
}

// bound is the ulp bound of function f (e.g. "ExpF32") at the level in use.
func bound(f string) uint64 {
	if level == levelGo {
		return goULPBound[f]
	}
	return ulpBound[f]
}

// ---- big.Float references ----

const bigPrec = 160

var bigLn2 = func() *big.Float {
	// ln 2 = 2 atanh(1/3) = 2 sum (1/3)^(2k+1)/(2k+1)
	p := uint(bigPrec + 64)
	one := new(big.Float).SetPrec(p).SetInt64(1)
	x := new(big.Float).SetPrec(p).Quo(one, new(big.Float).SetPrec(p).SetInt64(3))
	x2 := new(big.Float).SetPrec(p).Mul(x, x)
	sum := new(big.Float).SetPrec(p)
	t := new(big.Float).SetPrec(p).Set(x)
	for k := 0; k < 200; k++ {
		sum.Add(sum, new(big.Float).SetPrec(p).Quo(t, new(big.Float).SetPrec(p).SetInt64(int64(2*k+1))))
		t.Mul(t, x2)
	}
	return sum.Mul(sum, new(big.Float).SetPrec(p).SetInt64(2))
}()

func newBig() *big.Float { return new(big.Float).SetPrec(bigPrec) }

// bigExp is e^x, for |x| < 1e7.
func bigExp(x *big.Float) *big.Float {
	xf, _ := x.Float64()
	k := math.Round(xf / math.Ln2)
	r := newBig().Mul(newBig().SetFloat64(k), bigLn2)
	r.Sub(x, r)
	const sq = 10
	r.SetMantExp(r, -sq)
	sum := newBig().SetInt64(1)
	term := newBig().SetInt64(1)
	for j := int64(1); j < 40; j++ {
		term.Mul(term, r)
		term.Quo(term, newBig().SetInt64(j))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil) < -bigPrec-8 {
			break
		}
	}
	for i := 0; i < sq; i++ {
		sum.Mul(sum, sum)
	}
	return sum.SetMantExp(sum, int(k))
}

// bigLog is ln x for finite x > 0: Newton's iteration on e^y = x from a
// float64 guess.
func bigLog(x float64) *big.Float {
	m, e := math.Frexp(x)
	y := newBig().SetFloat64(math.Log(m) + float64(e)*math.Ln2)
	bx := newBig().SetFloat64(x)
	for i := 0; i < 2; i++ {
		ey := bigExp(newBig().Neg(y))
		ey.Mul(ey, bx)
		ey.Sub(ey, newBig().SetInt64(1)) // x e^-y - 1
		y.Add(y, ey)
	}
	return y
}

func bigTanh(x float64) *big.Float {
	switch {
	case math.Abs(x) > 40:
		return newBig().SetFloat64(math.Copysign(1, x))
	case math.Abs(x) < 0x1p-30:
		// x - x^3/3 + 2x^5/15
		b := newBig().SetFloat64(x)
		x3 := newBig().Mul(b, b)
		x3.Mul(x3, b)
		x5 := newBig().Mul(x3, b)
		x5.Mul(x5, b)
		r := newBig().Sub(b, newBig().Quo(x3, newBig().SetInt64(3)))
		return r.Add(r, newBig().Quo(newBig().Mul(x5, newBig().SetInt64(2)), newBig().SetInt64(15)))
	}
	t := bigExp(newBig().SetFloat64(2 * x))
	n := newBig().Sub(t, newBig().SetInt64(1))
	return n.Quo(n, t.Add(t, newBig().SetInt64(1)))
}

func bigSigmoid(x float64) *big.Float {
	switch {
	case x > 1e6:
		return newBig().SetInt64(1)
	case x < -1e6:
		return newBig()
	}
	e := bigExp(newBig().SetFloat64(-x))
	e.Add(e, newBig().SetInt64(1))
	return e.Quo(newBig().SetInt64(1), e)
}

// exact64 returns the big reference of f at x, or ok=false where the
// result is a special value (NaN, an infinity or an exact zero/one) that
// float64 math gets right.
func exact64(f string, x float64) (r *big.Float, special float64, ok bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, map[string]func(float64) float64{"Exp": math.Exp, "Log": math.Log, "Tanh": math.Tanh, "Sigmoid": sigmoid}[f](x), false
	}
	switch f {
	case "Exp":
		switch {
		case x > 710:
			return nil, math.Inf(1), false
		case x < -746:
			return nil, 0, false
		case x == 0:
			return nil, 1, false
		}
		return bigExp(newBig().SetFloat64(x)), 0, true
	case "Log":
		switch {
		case x < 0:
			return nil, math.NaN(), false
		case x == 0:
			return nil, math.Inf(-1), false
		case x == 1:
			return nil, 0, false
		}
		return bigLog(x), 0, true
	case "Tanh":
		if x == 0 {
			return nil, x, false
		}
		return bigTanh(x), 0, true
	case "Sigmoid":
		return bigSigmoid(x), 0, true
	}
	panic(f)
}

// ulpErr64 is |y - r| in ulp of r's binade (fractional), and the distance
// in ulp from r correctly rounded.
func ulpErr64(y float64, r *big.Float) (frac float64, dist uint64) {
	cr, _ := r.Float64()
	if math.IsInf(y, 0) || math.IsInf(cr, 0) || math.IsNaN(y) {
		if y == cr {
			return 0, 0
		}
		return math.Inf(1), math.MaxUint64
	}
	e := r.MantExp(nil)
	if r.Sign() == 0 {
		e = -2000
	}
	u := max(e, -1021) - 53
	d := newBig().Sub(newBig().SetFloat64(y), r)
	d.SetMantExp(d, -u)
	frac, _ = d.Float64()
	return math.Abs(frac), ulpDist(y, cr)
}

// ---- float32 ----

func ref32(f string) func(float64) float64 {
	return map[string]func(float64) float64{"Exp": math.Exp, "Log": math.Log, "Tanh": math.Tanh, "Sigmoid": sigmoid}[f]
}

func api32(f string) func(d, a []float32) {
	return map[string]func(d, a []float32){"Exp": ExpF32, "Log": LogF32, "Tanh": TanhF32, "Sigmoid": SigmoidF32}[f]
}

func api64(f string) func(d, a []float64) {
	return map[string]func(d, a []float64){"Exp": ExpF64, "Log": LogF64, "Tanh": TanhF64, "Sigmoid": SigmoidF64}[f]
}

type errStat struct {
	dist      uint64  // max distance from the correctly rounded result
	frac      float64 // max |y - exact| / ulp
	worst     float64 // input of the max dist
	worstFrac float64
	count     int
}

func (s *errStat) merge(o errStat) {
	if o.dist > s.dist {
		s.dist, s.worst = o.dist, o.worst
	}
	if o.frac > s.frac {
		s.frac, s.worstFrac = o.frac, o.worstFrac
	}
	s.count += o.count
}

// check32 evaluates f on xs and accumulates the errors; special results
// (NaN, infinities) must be exact.
func check32(t *testing.T, f string, xs []float32, ys []float32, st *errStat) {
	api32(f)(ys, xs)
	ref := ref32(f)
	for i, x := range xs {
		y := ys[i]
		r := ref(float64(x))
		cr := float32(r)
		if math.IsNaN(r) || math.IsInf(float64(cr), 0) || math.IsNaN(float64(y)) || math.IsInf(float64(y), 0) {
			if !same(y, cr) && !(math.IsInf(float64(y), 0) && ulpDist(y, cr) <= 1) {
				t.Errorf("%sF32(%v) = %v, want %v", f, x, y, cr)
			}
			if !same(y, cr) {
				st.merge(errStat{dist: 1, worst: float64(x)})
			}
			continue
		}
		d := ulpDist(y, cr)
		_, e := math.Frexp(r)
		u := math.Ldexp(1, max(e-1, -126)-23)
		frac := math.Abs(float64(y)-r) / u
		if r == 0 {
			frac = math.Abs(float64(y)) / 0x1p-149
		}
		if d > st.dist {
			st.dist, st.worst = d, float64(x)
		}
		if frac > st.frac {
			st.frac, st.worstFrac = frac, float64(x)
		}
	}
	st.count += len(xs)
}

// sweep32 is every exponent of both signs with M evenly spaced mantissas
// (and their neighbours) plus random ones.
func sweep32(M int) []float32 {
	rng := rand.New(rand.NewSource(2))
	var xs []float32
	for s := uint32(0); s < 2; s++ {
		for e := uint32(0); e < 256; e++ {
			for j := 0; j < M; j++ {
				m := uint32(j) * (1 << 23 / uint32(M))
				xs = append(xs, math.Float32frombits(s<<31|e<<23|m), math.Float32frombits(s<<31|e<<23|(m+1)&(1<<23-1)))
				xs = append(xs, math.Float32frombits(s<<31|e<<23|rng.Uint32()&(1<<23-1)))
			}
		}
	}
	return xs
}

var functions = []string{"Exp", "Log", "Tanh", "Sigmoid"}

func TestULP32(t *testing.T) {
	M := 4096
	if testing.Short() {
		M = 512
	}
	xs := append(sweep32(M), specials32...)
	ys := make([]float32, len(xs))
	forLevels(t, func(t *testing.T) {
		for _, f := range functions {
			var st errStat
			for i := 0; i < len(xs); i += 4096 {
				j := min(i+4096, len(xs))
				check32(t, f, xs[i:j], ys[i:j], &st)
			}
			t.Logf("%sF32 %-6s: max %d ulp from the correctly rounded result (at %v), max error %.3f ulp (at %v), %d inputs",
				f, Level(), st.dist, float32(st.worst), st.frac, float32(st.worstFrac), st.count)
			if st.dist > bound(f+"F32") {
				t.Errorf("%sF32 %s: %d ulp > %d", f, Level(), st.dist, bound(f+"F32"))
			}
		}
	})
}

// TestULP32Exhaustive tests every float32 input (LOOM_SIMD_EXHAUSTIVE=1,
// or =Exp etc. for one function) at the level in use.
func TestULP32Exhaustive(t *testing.T) {
	which := os.Getenv("LOOM_SIMD_EXHAUSTIVE")
	if which == "" {
		t.Skip("set LOOM_SIMD_EXHAUSTIVE=1 (or a function name) to test all 2^32 inputs")
	}
	for _, f := range functions {
		if which != "1" && which != f {
			continue
		}
		workers := runtime.GOMAXPROCS(0)
		stats := make([]errStat, workers)
		var wg sync.WaitGroup
		const chunk = 1 << 16
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				xs, ys := make([]float32, chunk), make([]float32, chunk)
				for c := uint64(w); c < 1<<32/chunk; c += uint64(workers) {
					for i := range xs {
						xs[i] = math.Float32frombits(uint32(c*chunk) + uint32(i))
					}
					check32(t, f, xs, ys, &stats[w])
				}
			}(w)
		}
		wg.Wait()
		var st errStat
		for _, s := range stats {
			st.merge(s)
		}
		t.Logf("%sF32 %s, all 2^32 inputs: max %d ulp (at %v), max error %.3f ulp (at %v)", f, Level(), st.dist, float32(st.worst), st.frac, float32(st.worstFrac))
		if st.dist > bound(f+"F32") {
			t.Errorf("%sF32 %s: %d ulp > %d", f, Level(), st.dist, bound(f+"F32"))
		}
	}
}

// ---- float64 ----

// sweep64 has every exponent in [elo, ehi] of both signs with k mantissas,
// random values in [lo, hi], and extra values.
func sweep64(elo, ehi, k, nrand int, lo, hi float64, extra ...float64) []float64 {
	rng := rand.New(rand.NewSource(3))
	var xs []float64
	for e := elo; e <= ehi; e++ {
		for j := 0; j < k; j++ {
			m := 1 + rng.Float64()
			if j == 0 {
				m = 1
			}
			x := math.Ldexp(m, e)
			xs = append(xs, x, -x)
		}
	}
	for i := 0; i < nrand; i++ {
		xs = append(xs, lo+(hi-lo)*rng.Float64())
	}
	return append(xs, extra...)
}

func inputs64(f string, scale int) []float64 {
	switch f {
	case "Exp":
		return sweep64(-1074, 9, 16/scale, 40000/scale, -746, 710, 709.782712893384, 709.7827128933840, -745.1332191019411, -745.1332191019412, -708.3964185322641, -708.39641853226)
	case "Log":
		var xs []float64
		for k := 1; k <= 2000/scale; k++ {
			xs = append(xs, math.Float64frombits(math.Float64bits(1)+uint64(k)), math.Float64frombits(math.Float64bits(1)-uint64(k)))
		}
		xs = append(xs, sweep64(-1074, 1023, 16/scale, 20000/scale, 0, 4, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Sqrt2, math.Sqrt2/2)...)
		return append(xs, sweep64(-1074, 1023, 1, 0, 0, 0)...)
	case "Tanh":
		return sweep64(-1074, 6, 16/scale, 40000/scale, -25, 25, 0.625, -0.625, 0.6249999999999999, 19.06, 20)
	default:
		return sweep64(-1074, 10, 16/scale, 40000/scale, -750, 40)
	}
}

func TestULP64(t *testing.T) {
	scale := 1
	if testing.Short() {
		scale = 8
	}
	saved := level
	defer setLevel(saved)
	for _, f := range functions {
		xs := inputs64(f, scale)
		// the references, once (in parallel)
		refs := make([]*big.Float, len(xs))
		specials := make([]float64, len(xs))
		var wg sync.WaitGroup
		workers := runtime.GOMAXPROCS(0)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < len(xs); i += workers {
					r, s, ok := exact64(f, xs[i])
					if ok {
						refs[i] = r
					} else {
						specials[i] = s
					}
				}
			}(w)
		}
		wg.Wait()
		ys := make([]float64, len(xs))
		for _, l := range levels() {
			setLevel(l)
			api64(f)(ys, xs)
			var st errStat
			for i, x := range xs {
				if refs[i] == nil {
					if !same(ys[i], specials[i]) {
						t.Errorf("%sF64(%v) = %v at %s, want %v", f, x, ys[i], Level(), specials[i])
					}
					continue
				}
				frac, d := ulpErr64(ys[i], refs[i])
				st.merge(errStat{dist: d, worst: x, frac: frac, worstFrac: x})
			}
			st.count = len(xs)
			msg := fmt.Sprintf("%sF64 %-6s: max %d ulp from the correctly rounded result (at %v), max error %.3f ulp (at %v), %d inputs",
				f, Level(), st.dist, st.worst, st.frac, st.worstFrac, st.count)
			t.Log(msg)
			if st.dist > bound(f+"F64") {
				t.Errorf("%s: bound %d", msg, bound(f+"F64"))
			}
		}
	}
}

package simd

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
	"unsafe"
)

// levels returns the levels this CPU runs, lowest first.
func levels() []int {
	var ls []int
	for l := levelGo; l <= maxLevel; l++ {
		ls = append(ls, l)
	}
	return ls
}

// forLevels runs f at every level, restoring the level afterwards.
func forLevels(t *testing.T, f func(t *testing.T)) {
	saved := level
	defer setLevel(saved)
	for _, l := range levels() {
		if setLevel(l) != l {
			t.Fatalf("setLevel(%d) failed", l)
		}
		t.Run(levelNames[l], f)
	}
}

func TestLevel(t *testing.T) {
	t.Logf("level %s, CPU supports up to %s", Level(), levelNames[maxLevel])
	switch Level() {
	case "go", "avx2", "avx512":
	default:
		t.Fatalf("Level() = %q", Level())
	}
	saved := level
	defer setLevel(saved)
	setLevel(levelGo)
	if Level() != "go" || kern.addF32 != nil {
		t.Fatal("setLevel(go) left kernels installed")
	}
}

// ---- guarded operands ----

// arena hands out slices that end at an inaccessible page, one region per
// operand position.
type arena struct{ r [6][]byte }

const arenaBytes = 64 << 10

func newArena() *arena {
	a := &arena{}
	for i := range a.r {
		a.r[i] = guarded(arenaBytes)
	}
	return a
}

var theArena = newArena()

func slot[T any](i, n int) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	r := theArena.r[i]
	if n*sz > len(r) {
		panic("arena too small")
	}
	if n == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&r[len(r)-sz])), 1)[:0]
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&r[len(r)-n*sz])), n)
}

// ---- values ----

var specials64 = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, math.Inf(1), math.Inf(-1), math.NaN(),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-1030, math.MaxFloat64, -math.MaxFloat64,
	709.782712893384, 709.79, -745.1332191019411, -745.2, -708.4, 0.625, -0.625, 0.6249999, 20, -20, 1e-300, 1e300,
	math.Float64frombits(0x7ff8000000000001), math.Float64frombits(0xfff0000000000001),
}

var specials32 = []float32{
	0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()),
	math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-126, 0x1p-130, math.MaxFloat32, -math.MaxFloat32,
	88.72283, 88.72284, 88.7, -103.97208, -103.9721, -87.33655, -104, 0.625, -0.625, 0.62499994, 9.5, -9.01, 1e-30, 1e30,
	math.Float32frombits(0x7fc00001), math.Float32frombits(0xff800001),
}

func randF64(rng *rand.Rand) float64 {
	switch rng.Intn(10) {
	case 0, 1, 2, 3:
		return (rng.Float64()*2 - 1) * 10
	case 4, 5:
		return math.Float64frombits(rng.Uint64())
	case 6, 7:
		return math.Ldexp(rng.Float64()+0.5, rng.Intn(2200)-1100) * float64(1-2*rng.Intn(2))
	default:
		return specials64[rng.Intn(len(specials64))]
	}
}

func randF32(rng *rand.Rand) float32 {
	switch rng.Intn(10) {
	case 0, 1, 2, 3:
		return float32((rng.Float64()*2 - 1) * 10)
	case 4, 5:
		return math.Float32frombits(rng.Uint32())
	case 6, 7:
		return float32(math.Ldexp(rng.Float64()+0.5, rng.Intn(300)-150)) * float32(1-2*rng.Intn(2))
	default:
		return specials32[rng.Intn(len(specials32))]
	}
}

func randT[T float](rng *rand.Rand) T {
	var z T
	if _, ok := any(z).(float32); ok {
		return T(randF32(rng))
	}
	return T(randF64(rng))
}

func fill[T float](rng *rand.Rand, s []T) []T {
	for i := range s {
		s[i] = randT[T](rng)
	}
	return s
}

func isNaN[T float](x T) bool { return x != x }

func bitsOf[T float](x T) uint64 {
	if v, ok := any(x).(float32); ok {
		return uint64(math.Float32bits(v))
	}
	return math.Float64bits(float64(x))
}

// ulpDist is the distance in units in the last place between x and y
// (0 for -0 and +0; Inf is one past the largest finite value).
func ulpDist[T float](x, y T) uint64 {
	ord := func(x T) int64 {
		if v, ok := any(x).(float32); ok {
			b := int64(math.Float32bits(v))
			if b&(1<<31) != 0 {
				return -(b &^ (1 << 31))
			}
			return b
		}
		b := math.Float64bits(float64(x))
		if b>>63 != 0 {
			return -int64(b &^ (1 << 63))
		}
		return int64(b)
	}
	d := ord(x) - ord(y)
	if d < 0 {
		d = -d
	}
	return uint64(d)
}

// same is bitwise equality, any NaN equal to any NaN.
func same[T float](x, y T) bool {
	if isNaN(x) || isNaN(y) {
		return isNaN(x) && isNaN(y)
	}
	return bitsOf(x) == bitsOf(y)
}

// check judges one result given the inputs: "" if it is right, else why.
type check[T float] func(got T, in ...T) string

// checkElems checks every element of got against chk, with the inputs
// from ins.
func checkElems[T float](t *testing.T, what string, got []T, chk check[T], ins ...[]T) {
	t.Helper()
	in := make([]T, len(ins))
	for i := range got {
		for j := range ins {
			in[j] = ins[j][i]
		}
		if msg := chk(got[i], in...); msg != "" {
			t.Fatalf("%s n=%d [%d], inputs %v: %s", what, len(got), i, in, msg)
		}
	}
}

// exact: got must be want(inputs) bit for bit (any NaN for a NaN).
func exact[T float](want func(in ...T) T) check[T] {
	return func(got T, in ...T) string {
		if w := want(in...); !same(got, w) {
			return fmt.Sprintf("got %v (%#x), want %v (%#x)", got, bitsOf(got), w, bitsOf(w))
		}
		return ""
	}
}

func exact1[T float](f func(T) T) check[T] {
	return exact(func(in ...T) T { return f(in[0]) })
}

func exact2[T float](f func(a, b T) T) check[T] {
	return exact(func(in ...T) T { return f(in[0], in[1]) })
}

// lengths covers every tail of both vector widths and the unrolled loops.
func lengths() []int {
	var ns []int
	for n := 0; n <= 67; n++ {
		ns = append(ns, n)
	}
	for n := 1000; n <= 1030; n++ {
		ns = append(ns, n)
	}
	return ns
}

// ---- harnesses ----

type kernelTest struct {
	name string
	run  func(t *testing.T, n int, rng *rand.Rand)
}

// vv: d[i] = f(a[i], b[i]).
func vv[T float](api func(d, a, b []T), f func(a, b T) T) func(*testing.T, int, *rand.Rand) {
	chk := exact2(f)
	return func(t *testing.T, n int, rng *rand.Rand) {
		a, b, d := fill(rng, slot[T](0, n)), fill(rng, slot[T](1, n)), slot[T](3, n)
		api(d, a, b)
		checkElems(t, "d", d, chk, a, b)
		// aliasing: d == a, then d == b
		a2 := append([]T(nil), a...)
		api(a2, a2, b)
		checkElems(t, "d==a", a2, chk, a, b)
		b2 := append([]T(nil), b...)
		api(b2, a, b2)
		checkElems(t, "d==b", b2, chk, a, b)
	}
}

// vs: d[i] = f(a[i], s).
func vs[T float](api func(d, a []T, s T), f func(a, s T) T) func(*testing.T, int, *rand.Rand) {
	chk := exact2(f)
	return func(t *testing.T, n int, rng *rand.Rand) {
		for k := 0; k < 3; k++ {
			a, d := fill(rng, slot[T](0, n)), slot[T](3, n)
			s := randT[T](rng)
			sv := make([]T, n)
			for i := range sv {
				sv[i] = s
			}
			api(d, a, s)
			checkElems(t, fmt.Sprintf("s=%v", s), d, chk, a, sv)
			a2 := append([]T(nil), a...)
			api(a2, a2, s)
			checkElems(t, "d==a", a2, chk, a, sv)
		}
	}
}

// vvv: d[i] = a[i]·b[i] + c[i], rounded once.
func vvv[T float](api func(d, a, b, c []T)) func(*testing.T, int, *rand.Rand) {
	chk := exact(func(in ...T) T { return fmaOracle(in[0], in[1], in[2]) })
	return func(t *testing.T, n int, rng *rand.Rand) {
		a, b, c, d := fill(rng, slot[T](0, n)), fill(rng, slot[T](1, n)), fill(rng, slot[T](2, n)), slot[T](3, n)
		// some exact cancellations: c = -round(a*b)
		for i := 0; i < n; i += 3 {
			c[i] = -(a[i] * b[i])
		}
		api(d, a, b, c)
		checkElems(t, "d", d, chk, a, b, c)
		c2 := append([]T(nil), c...)
		api(c2, a, b, c2)
		checkElems(t, "d==c", c2, chk, a, b, c)
	}
}

// un: d[i] judged by f(d[i], a[i]).
func un[T float](api func(d, a []T), f func(got, x T) string) func(*testing.T, int, *rand.Rand) {
	chk := check[T](func(got T, in ...T) string { return f(got, in[0]) })
	return func(t *testing.T, n int, rng *rand.Rand) {
		a, d := fill(rng, slot[T](0, n)), slot[T](3, n)
		api(d, a)
		checkElems(t, "d", d, chk, a)
		a2 := append([]T(nil), a...)
		api(a2, a2)
		checkElems(t, "d==a", a2, chk, a)
	}
}

// un1: d[i] = f(a[i]) exactly.
func un1[T float](api func(d, a []T), f func(T) T) func(*testing.T, int, *rand.Rand) {
	chk := exact1(f)
	return un(api, func(got, x T) string { return chk(got, x) })
}

func cmpTest[T float](api func(CmpOp, []uint8, []T, []T), apiS func(CmpOp, []uint8, []T, T)) func(*testing.T, int, *rand.Rand) {
	return func(t *testing.T, n int, rng *rand.Rand) {
		a, b, d := fill(rng, slot[T](0, n)), fill(rng, slot[T](1, n)), slot[uint8](4, n)
		for i := 0; i < n; i += 2 {
			b[i] = a[i] // equal pairs
		}
		for op := Eq; op <= Ge; op++ {
			for i := range d {
				d[i] = 7
			}
			api(op, d, a, b)
			for i := range d {
				if want := cmpOracle(op, a[i], b[i]); d[i] != want {
					t.Fatalf("op %d n=%d [%d]: %v vs %v got %d want %d", op, n, i, a[i], b[i], d[i], want)
				}
			}
			for k := 0; k < 2; k++ {
				s := randT[T](rng)
				if n > 0 && k == 1 {
					s = a[rng.Intn(n)]
				}
				apiS(op, d, a, s)
				for i := range d {
					if want := cmpOracle(op, a[i], s); d[i] != want {
						t.Fatalf("op %d scalar n=%d [%d]: %v vs %v got %d want %d", op, n, i, a[i], s, d[i], want)
					}
				}
			}
		}
	}
}

func selTest[T uint32 | uint64](api func(d []T, c []uint8, x, y []T), apiS func(d []T, c []uint8, x []T, s T)) func(*testing.T, int, *rand.Rand) {
	return func(t *testing.T, n int, rng *rand.Rand) {
		c, x, y, d := slot[uint8](4, n), slot[T](0, n), slot[T](1, n), slot[T](3, n)
		for i := range c {
			c[i] = []uint8{0, 1, 0, 255, 2, 0, 128}[rng.Intn(7)]
			x[i], y[i] = T(rng.Uint64()), T(rng.Uint64())
		}
		pick := func(c uint8, x, y T) T {
			if c != 0 {
				return x
			}
			return y
		}
		api(d, c, x, y)
		for i := range d {
			if want := pick(c[i], x[i], y[i]); d[i] != want {
				t.Fatalf("n=%d [%d]: c=%d got %#x want %#x", n, i, c[i], d[i], want)
			}
		}
		x2 := append([]T(nil), x...)
		api(x2, c, x2, y)
		for i := range d {
			if want := pick(c[i], x[i], y[i]); x2[i] != want {
				t.Fatalf("d==x n=%d [%d]: got %#x want %#x", n, i, x2[i], want)
			}
		}
		s := T(rng.Uint64())
		apiS(d, c, x, s)
		for i := range d {
			if want := pick(c[i], x[i], s); d[i] != want {
				t.Fatalf("scalar n=%d [%d]: c=%d got %#x want %#x", n, i, c[i], d[i], want)
			}
		}
	}
}

func redTest[T float](sum func([]T) float64, mx, mn func([]T) T) func(*testing.T, int, *rand.Rand) {
	return func(t *testing.T, n int, rng *rand.Rand) {
		for k := 0; k < 4; k++ {
			a := slot[T](0, n)
			for i := range a {
				switch k {
				case 0: // finite values only
					a[i] = T((rng.Float64()*2 - 1) * math.Ldexp(1, rng.Intn(40)-20))
				case 1: // zeros of both signs and negatives: the sign of a zero max
					a[i] = T(math.Copysign(0, float64(rng.Intn(2))-0.5))
					if rng.Intn(4) == 0 {
						a[i] = -1
					}
				default:
					a[i] = randT[T](rng)
				}
			}
			got := sum(a)
			if msg := sumOracle(got, a); msg != "" {
				t.Fatalf("sum n=%d case %d: %s", n, k, msg)
			}
			// The summation order is fixed: every level gives the bits of
			// the pure-Go one (purego.go, what level go runs).
			if level != levelGo && !same(got, sumGo(a)) {
				t.Fatalf("sum n=%d case %d: got %v, level go gives %v", n, k, got, sumGo(a))
			}
			if got, want := mx(a), redOracle(a, true); !same(got, want) {
				t.Fatalf("max n=%d case %d: got %v (%#x) want %v (%#x)", n, k, got, bitsOf(got), want, bitsOf(want))
			}
			if got, want := mn(a), redOracle(a, false); !same(got, want) {
				t.Fatalf("min n=%d case %d: got %v (%#x) want %v (%#x)", n, k, got, bitsOf(got), want, bitsOf(want))
			}
		}
	}
}

// rev swaps the operands: the oracle of s - a[i] and s / a[i].
func rev[T float](f func(a, b T) T) func(a, s T) T { return func(a, s T) T { return f(s, a) } }

// kernelTests: every kernel with its oracle (oracle_test.go). Bounds: the
// arithmetic, FMA, max/min, neg/abs, comparisons and selects are exact
// (IEEE 754 correctly rounded, or bit operations); the approximations'
// bounds are the doc comments' (kernels.go): float32 in ulp of the exact
// value (level go: half an ulp, a float64 result rounded once), float64 in
// ulp from the correctly rounded result.
func kernelTests() []kernelTest {
	return []kernelTest{
		{"AddF32", vv(AddF32, add32)},
		{"SubF32", vv(SubF32, sub32)},
		{"MulF32", vv(MulF32, mul32)},
		{"DivF32", vv(DivF32, div32)},
		{"MaxF32", vv(MaxF32, maxOracle[float32])},
		{"MinF32", vv(MinF32, minOracle[float32])},
		{"AddSF32", vs(AddSF32, add32)},
		{"SubSF32", vs(SubSF32, sub32)},
		{"RSubSF32", vs(RSubSF32, rev(sub32))},
		{"MulSF32", vs(MulSF32, mul32)},
		{"DivSF32", vs(DivSF32, div32)},
		{"RDivSF32", vs(RDivSF32, rev(div32))},
		{"MaxSF32", vs(MaxSF32, maxOracle[float32])},
		{"MinSF32", vs(MinSF32, minOracle[float32])},
		{"FMAF32", vvv(FMAF32)},
		{"NegF32", un1(NegF32, negOracle[float32])},
		{"AbsF32", un1(AbsF32, absOracle[float32])},
		{"SqrtF32", un1(SqrtF32, sqrt32)},
		// ExpF32 doc: 1.01 ulp from the exact value; LogF32 0.83; TanhF32
		// 1.33; SigmoidF32 2.40 (all 2^32 inputs; +0.01 for the rounding).
		{"ExpF32", un(ExpF32, approx32(math.Exp, 1.02))},
		{"LogF32", un(LogF32, approx32(math.Log, 0.84))},
		{"TanhF32", un(TanhF32, approx32(math.Tanh, 1.34))},
		{"SigmoidF32", un(SigmoidF32, approx32(sigmoid64, 2.41))},
		{"CmpF32", cmpTest(CmpF32, CmpSF32)},
		{"ReduceF32", redTest(ReduceSumF32, ReduceMaxF32, ReduceMinF32)},

		{"AddF64", vv(AddF64, add64)},
		{"SubF64", vv(SubF64, sub64)},
		{"MulF64", vv(MulF64, mul64)},
		{"DivF64", vv(DivF64, div64)},
		{"MaxF64", vv(MaxF64, maxOracle[float64])},
		{"MinF64", vv(MinF64, minOracle[float64])},
		{"AddSF64", vs(AddSF64, add64)},
		{"SubSF64", vs(SubSF64, sub64)},
		{"RSubSF64", vs(RSubSF64, rev(sub64))},
		{"MulSF64", vs(MulSF64, mul64)},
		{"DivSF64", vs(DivSF64, div64)},
		{"RDivSF64", vs(RDivSF64, rev(div64))},
		{"MaxSF64", vs(MaxSF64, maxOracle[float64])},
		{"MinSF64", vs(MinSF64, minOracle[float64])},
		{"FMAF64", vvv(FMAF64)},
		{"NegF64", un1(NegF64, negOracle[float64])},
		{"AbsF64", un1(AbsF64, absOracle[float64])},
		{"SqrtF64", un1(SqrtF64, sqrt64)},
		// Assembly (doc comments): at most 1 ulp from the correctly rounded
		// result for Exp, Log and Tanh, 2 for Sigmoid. Level go: math.Exp
		// up to 2 ulp on amd64 (ExpF64's doc); math.Log under 1 ulp
		// (fdlibm's analysis, math/log.go); math.Tanh 2 (Cephes: peak
		// relative error 2.5e-16, 1.13 ulp, math/tanh.go); the sigmoid
		// formula with math.Exp up to 2 ulp (SigmoidF64's doc).
		{"ExpF64", un(ExpF64, approx64("Exp", 1, 2))},
		{"LogF64", un(LogF64, approx64("Log", 1, 1))},
		{"TanhF64", un(TanhF64, approx64("Tanh", 1, 2))},
		{"SigmoidF64", un(SigmoidF64, approx64("Sigmoid", 2, 2))},
		{"CmpF64", cmpTest(CmpF64, CmpSF64)},
		{"ReduceF64", redTest(ReduceSumF64, ReduceMaxF64, ReduceMinF64)},

		{"SelectU32", selTest(SelectU32, SelectSU32)},
		{"SelectU64", selTest(SelectU64, SelectSU64)},
	}
}

// TestKernels checks every kernel at every level this machine runs (the
// pure-Go one included) against its oracle, on every length of 0..67 and
// 1000..1030, with special values mixed in, operands ending at an
// inaccessible page, and d aliasing an operand.
func TestKernels(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		for _, k := range kernelTests() {
			t.Run(k.name, func(t *testing.T) {
				rng := rand.New(rand.NewSource(1))
				for _, n := range lengths() {
					k.run(t, n, rng)
				}
			})
		}
	})
}

// TestShortOperand: an operand shorter than d panics instead of reading
// past it.
func TestShortOperand(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	AddF32(make([]float32, 8), make([]float32, 8), make([]float32, 7))
}

func TestFMA32Ref(t *testing.T) {
	// fma32 against big-free exact cases: a*b + c where the float64 sum
	// would double-round.
	x, y := float32(1+0x1p-12), float32(1+0x1p-12) // x*y = 1 + 2^-11 + 2^-24
	if got := fma32(x, y, 0); got != float32(1+0x1p-11) {
		// 1 + 2^-11 + 2^-24 is a tie in float32 only without the 2^-24
		// term; the exact product rounds to 1+2^-11 (the 2^-24 term is
		// below half an ulp of 2^-23).
		t.Fatalf("fma32 = %v", got)
	}
	// a tie in float64 broken by an addend below float64's precision:
	// the exact sum is above the float32 tie, a float64 sum rounds onto it
	if got := fma32(x, y, 0x1p-60); got != float32(1+0x1p-11+0x1p-23) {
		t.Fatalf("fma32 double-rounded: %v", got)
	}
	if got := fma32(x, y, -0x1p-60); got != float32(1+0x1p-11) {
		t.Fatalf("fma32 double-rounded down: %v", got)
	}
}

// TestSpecialValues: the special cases of the approximations are exactly
// Go's math package's.
func TestSpecialValues(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	negz := math.Copysign(0, -1)
	cases := []struct {
		f    string
		x, y float64
	}{
		{"exp", math.Inf(-1), 0}, {"exp", inf, inf}, {"exp", nan, nan}, {"exp", 0, 1}, {"exp", negz, 1},
		{"exp", 1e-45, 1}, {"exp", -1e-45, 1}, {"exp", 1000, inf}, {"exp", -1000, 0},
		{"log", 0, math.Inf(-1)}, {"log", negz, math.Inf(-1)}, {"log", -1, nan}, {"log", math.Inf(-1), nan},
		{"log", inf, inf}, {"log", nan, nan}, {"log", 1, 0},
		{"tanh", inf, 1}, {"tanh", math.Inf(-1), -1}, {"tanh", 0, 0}, {"tanh", negz, negz}, {"tanh", nan, nan},
		{"tanh", 30, 1}, {"tanh", -30, -1}, {"tanh", 1e-40, 1e-40},
		{"sigmoid", math.Inf(-1), 0}, {"sigmoid", inf, 1}, {"sigmoid", 0, 0.5}, {"sigmoid", negz, 0.5},
		{"sigmoid", nan, nan}, {"sigmoid", 200, 1}, {"sigmoid", -1000, 0},
	}
	forLevels(t, func(t *testing.T) {
		for _, c := range cases {
			f32 := map[string]func(d, a []float32){"exp": ExpF32, "log": LogF32, "tanh": TanhF32, "sigmoid": SigmoidF32}[c.f]
			f64 := map[string]func(d, a []float64){"exp": ExpF64, "log": LogF64, "tanh": TanhF64, "sigmoid": SigmoidF64}[c.f]
			// in every position of a vector and of the tail
			for n := 1; n <= 19; n++ {
				a32, d32 := make([]float32, n), make([]float32, n)
				a64, d64 := make([]float64, n), make([]float64, n)
				for i := range a32 {
					a32[i], a64[i] = float32(c.x), c.x
				}
				f32(d32, a32)
				f64(d64, a64)
				for i := range d32 {
					if c.x == 1e-40 { // tanh of a float32 denormal
						if !same(d32[i], float32(c.x)) || !same(d64[i], c.x) {
							t.Fatalf("%s(%v) = %v, %v", c.f, c.x, d32[i], d64[i])
						}
						continue
					}
					if !same(d32[i], float32(c.y)) {
						t.Fatalf("%sF32(%v) = %v, want %v", c.f, c.x, d32[i], c.y)
					}
					if !same(d64[i], c.y) {
						t.Fatalf("%sF64(%v) = %v, want %v", c.f, c.x, d64[i], c.y)
					}
				}
			}
		}
	})
}

func TestEnvLevel(t *testing.T) {
	for _, c := range []struct {
		s        string
		max, out int
	}{
		{"", levelAVX512, levelAVX512}, {"go", levelAVX512, levelGo}, {"GO", levelAVX2, levelGo},
		{"avx2", levelAVX512, levelAVX2}, {"avx2", levelGo, levelGo}, {"avx512", levelAVX2, levelAVX2},
	} {
		if got := envLevel(c.s, c.max); got != c.out {
			t.Errorf("envLevel(%q, %d) = %d, want %d", c.s, c.max, got, c.out)
		}
	}
}

// TestLevelsAgree: AVX2 and AVX-512 run the same algorithms and give the
// same bits (the exhaustive float32 results hold for both).
func TestLevelsAgree(t *testing.T) {
	if maxLevel < levelAVX512 {
		t.Skip("needs AVX-512")
	}
	saved := level
	defer setLevel(saved)
	xs := append(sweep32(256), specials32...)
	var x64 []float64
	for _, f := range functions {
		x64 = append(x64, inputs64(f, 8)...)
	}
	y2, y5 := make([]float32, len(xs)), make([]float32, len(xs))
	z2, z5 := make([]float64, len(x64)), make([]float64, len(x64))
	for _, f := range functions {
		setLevel(levelAVX2)
		api32(f)(y2, xs)
		api64(f)(z2, x64)
		setLevel(levelAVX512)
		api32(f)(y5, xs)
		api64(f)(z5, x64)
		for i := range xs {
			if !same(y2[i], y5[i]) {
				t.Fatalf("%sF32(%v): avx2 %v, avx512 %v", f, xs[i], y2[i], y5[i])
			}
		}
		for i := range x64 {
			if !same(z2[i], z5[i]) {
				t.Fatalf("%sF64(%v): avx2 %v, avx512 %v", f, x64[i], z2[i], z5[i])
			}
		}
	}
}

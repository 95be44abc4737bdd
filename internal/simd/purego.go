package simd

// The pure-Go loops: what the exported kernels run at level "go" (other
// architectures, the build tag noasm, a CPU without AVX2+FMA, or
// LOOM_SIMD=go), and what the generic accessors (generic.go) give the
// types without assembly (the integers, and bool as uint8). They are
// loom's only pure-Go version of these micro-ops: exec/cpu calls the
// kernels at every level. The tests judge them, at level go, against the
// oracles of oracle_test.go like the assembly.
//
// The arithmetic loops are unrolled by four on re-sliced windows, so that
// the compiler drops the bounds checks: about 1.7x faster than the plain
// loop (330 vs 570 ns per 2048 float32 on a Zen 4 core). Loops generic in
// Number serve every element type; the float-only ones (division, the
// functions of package math) take float.

import "math"

type float interface{ float32 | float64 }

func addGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] + b4[0]
		d4[1] = a4[1] + b4[1]
		d4[2] = a4[2] + b4[2]
		d4[3] = a4[3] + b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] + b[i]
	}
}

func subGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] - b4[0]
		d4[1] = a4[1] - b4[1]
		d4[2] = a4[2] - b4[2]
		d4[3] = a4[3] - b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] - b[i]
	}
}

func mulGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] * b4[0]
		d4[1] = a4[1] * b4[1]
		d4[2] = a4[2] * b4[2]
		d4[3] = a4[3] * b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] * b[i]
	}
}

func divGo[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4, b4 := d[i:i+4:i+4], a[i:i+4:i+4], b[i:i+4:i+4]
		d4[0] = a4[0] / b4[0]
		d4[1] = a4[1] / b4[1]
		d4[2] = a4[2] / b4[2]
		d4[3] = a4[3] / b4[3]
	}
	for ; i < len(d); i++ {
		d[i] = a[i] / b[i]
	}
}

// The builtin max and min are branch-free for floats, propagate NaN and
// order -0 below +0.

func maxGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = max(a[i], b[i])
	}
}

func minGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = min(a[i], b[i])
	}
}

func addSGo[T Number](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] + s
		d4[1] = a4[1] + s
		d4[2] = a4[2] + s
		d4[3] = a4[3] + s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] + s
	}
}

func subSGo[T Number](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] - s
		d4[1] = a4[1] - s
		d4[2] = a4[2] - s
		d4[3] = a4[3] - s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] - s
	}
}

func rsubSGo[T Number](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = s - a4[0]
		d4[1] = s - a4[1]
		d4[2] = s - a4[2]
		d4[3] = s - a4[3]
	}
	for ; i < len(d); i++ {
		d[i] = s - a[i]
	}
}

func mulSGo[T Number](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] * s
		d4[1] = a4[1] * s
		d4[2] = a4[2] * s
		d4[3] = a4[3] * s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] * s
	}
}

func divSGo[T float](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = a4[0] / s
		d4[1] = a4[1] / s
		d4[2] = a4[2] / s
		d4[3] = a4[3] / s
	}
	for ; i < len(d); i++ {
		d[i] = a[i] / s
	}
}

func rdivSGo[T float](d, a []T, s T) {
	a = a[:len(d)]
	i := 0
	for ; i+4 <= len(d); i += 4 {
		d4, a4 := d[i:i+4:i+4], a[i:i+4:i+4]
		d4[0] = s / a4[0]
		d4[1] = s / a4[1]
		d4[2] = s / a4[2]
		d4[3] = s / a4[3]
	}
	for ; i < len(d); i++ {
		d[i] = s / a[i]
	}
}

func maxSGo[T Number](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = max(a[i], s)
	}
}

func minSGo[T Number](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = min(a[i], s)
	}
}

// andGo and orGo are bitwise, for the integer types (bool as uint8 0 and
// 1 included). The round trip through uint64 is exact for every integer
// type (sign extension, then truncation) and lets the loops take Number;
// they are never given float types.

func andGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = T(uint64(a[i]) & uint64(b[i]))
	}
}

func andSGo[T Number](d, a []T, s T) {
	a, u := a[:len(d)], uint64(s)
	for i := range d {
		d[i] = T(uint64(a[i]) & u)
	}
}

func orGo[T Number](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = T(uint64(a[i]) | uint64(b[i]))
	}
}

func orSGo[T Number](d, a []T, s T) {
	a, u := a[:len(d)], uint64(s)
	for i := range d {
		d[i] = T(uint64(a[i]) | u)
	}
}

func fmaGo64(d, a, b, c []float64) {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = math.FMA(a[i], b[i], c[i])
	}
}

func fmaGo32(d, a, b, c []float32) {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = fma32(a[i], b[i], c[i])
	}
}

// fma32 is x*y + z rounded once to float32. The product is exact in
// float64; the sum is rounded to odd in float64 (53 >= 24+2 bits), which
// makes the final rounding to float32 correct.
func fma32(x, y, z float32) float32 {
	p := float64(float64(x) * float64(y)) // exact
	zz := float64(z)
	s := p + zz
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// the error of the sum (TwoSum)
	bb := s - p
	err := (p - (s - bb)) + (zz - bb)
	if bits := math.Float64bits(s); err != 0 && bits&1 == 0 {
		if (err > 0) == (s > 0) {
			bits++
		} else {
			bits--
		}
		s = math.Float64frombits(bits)
	}
	return float32(s)
}

// negGo flips the sign bit of a float; integers wrap (the most negative
// stays).
func negGo[T Number](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = -a[i]
	}
}

// absGo clears the sign bit (-0 and negative NaNs included).
func absGo[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(math.Abs(float64(a[i])))
	}
}

// absIntGo is |x| for the integer types (the most negative stays, as it
// does in two's complement and NumPy); absGo is the float version.
func absIntGo[T Number](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		if x := a[i]; x < 0 {
			d[i] = -x
		} else {
			d[i] = x
		}
	}
}

// signGo is 1 for positive, -1 for negative, and the element itself
// otherwise: 0, -0 and NaN (as NumPy's sign).
func signGo[T Number](d, a []T) {
	a = a[:len(d)]
	one := T(1)
	for i := range d {
		switch x := a[i]; {
		case x > 0:
			d[i] = one
		case x < 0:
			d[i] = -one
		default:
			d[i] = x
		}
	}
}

func sqrtGo[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(math.Sqrt(float64(a[i])))
	}
}

func expGo[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(exp(float64(a[i])))
	}
}

func logGo[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(log(float64(a[i])))
	}
}

// exp is math.Exp, but finite up to ln(MaxFloat64): Go's amd64 assembly
// overflows from x = 709.75 on.
func exp(x float64) float64 {
	if x > 709 && x < 709.79 {
		const e709 = 8.218407461554972e307 // e^709
		return math.Exp(x-709) * e709
	}
	return math.Exp(x)
}

// log is math.Log, but accurate on denormals, where Go's amd64 assembly
// is far off (it gives -709.09 for ln 5e-324 = -744.44).
func log(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

func tanhGo[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(math.Tanh(float64(a[i])))
	}
}

func sigmoidGo[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(sigmoid(float64(a[i])))
	}
}

// sigmoid is 1/(1+e^-x) without overflow: for x < 0 it uses e^x/(1+e^x).
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// cmpGo and cmpSGo choose the loop once per call, so that the comparison
// is inlined in it.
func cmpGo[T Number](op CmpOp, d []uint8, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	switch op {
	case Eq:
		for i := range d {
			d[i] = u8(a[i] == b[i])
		}
	case Ne:
		for i := range d {
			d[i] = u8(a[i] != b[i])
		}
	case Lt:
		for i := range d {
			d[i] = u8(a[i] < b[i])
		}
	case Le:
		for i := range d {
			d[i] = u8(a[i] <= b[i])
		}
	case Gt:
		for i := range d {
			d[i] = u8(a[i] > b[i])
		}
	case Ge:
		for i := range d {
			d[i] = u8(a[i] >= b[i])
		}
	default:
		panic("simd: bad CmpOp")
	}
}

func cmpSGo[T Number](op CmpOp, d []uint8, a []T, s T) {
	a = a[:len(d)]
	switch op {
	case Eq:
		for i := range d {
			d[i] = u8(a[i] == s)
		}
	case Ne:
		for i := range d {
			d[i] = u8(a[i] != s)
		}
	case Lt:
		for i := range d {
			d[i] = u8(a[i] < s)
		}
	case Le:
		for i := range d {
			d[i] = u8(a[i] <= s)
		}
	case Gt:
		for i := range d {
			d[i] = u8(a[i] > s)
		}
	case Ge:
		for i := range d {
			d[i] = u8(a[i] >= s)
		}
	default:
		panic("simd: bad CmpOp")
	}
}

// selGo is branch-free: m is all ones where the condition holds.
func selGo[T Bits](d []T, c []uint8, x, y []T) {
	c, x, y = c[:len(d)], x[:len(d)], y[:len(d)]
	for i := range d {
		m := -T(u8(c[i] != 0))
		d[i] = x[i]&m | y[i]&^m
	}
}

func selSGo[T Bits](d []T, c []uint8, x []T, s T) {
	c, x = c[:len(d)], x[:len(d)]
	for i := range d {
		m := -T(u8(c[i] != 0))
		d[i] = x[i]&m | s&^m
	}
}

// sumGo adds element i to lane i mod 32 of float64 accumulators and the
// lanes in a fixed tree, as the assembly does.
func sumGo[T float](a []T) float64 {
	var acc [32]float64
	i := 0
	for ; i+32 <= len(a); i += 32 {
		w := a[i : i+32 : i+32]
		for j := range acc {
			acc[j] += float64(w[j])
		}
	}
	for j := 0; i+j < len(a); j++ {
		acc[j] += float64(a[i+j])
	}
	return sumLanes(&acc)
}

func sumLanes(acc *[32]float64) float64 {
	for w := 16; w >= 1; w /= 2 {
		for j := 0; j < w; j++ {
			acc[j] += acc[j+w]
		}
	}
	return acc[0]
}

func redMaxGo[T float](a []T) T {
	m := T(math.Inf(-1))
	for _, x := range a {
		m = max(m, x)
	}
	return m
}

func redMinGo[T float](a []T) T {
	m := T(math.Inf(1))
	for _, x := range a {
		m = min(m, x)
	}
	return m
}

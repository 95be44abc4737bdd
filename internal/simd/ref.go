package simd

// The pure-Go references: what level "go" runs, and what the tests compare
// the assembly with.

import "math"

type float interface{ float32 | float64 }

func addRef[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] + b[i]
	}
}

func subRef[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] - b[i]
	}
}

func mulRef[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] * b[i]
	}
}

func divRef[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] / b[i]
	}
}

// The builtin max and min propagate NaN and order -0 below +0.

func maxRef[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = max(a[i], b[i])
	}
}

func minRef[T float](d, a, b []T) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = min(a[i], b[i])
	}
}

func addSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = a[i] + s
	}
}

func subSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = a[i] - s
	}
}

func rsubSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = s - a[i]
	}
}

func mulSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = a[i] * s
	}
}

func divSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = a[i] / s
	}
}

func rdivSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = s / a[i]
	}
}

func maxSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = max(a[i], s)
	}
}

func minSRef[T float](d, a []T, s T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = min(a[i], s)
	}
}

func fmaRef64(d, a, b, c []float64) {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = math.FMA(a[i], b[i], c[i])
	}
}

func fmaRef32(d, a, b, c []float32) {
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

func negRef[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = -a[i]
	}
}

func absRef[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(math.Abs(float64(a[i])))
	}
}

func sqrtRef[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(math.Sqrt(float64(a[i])))
	}
}

func expRef[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(exp(float64(a[i])))
	}
}

func logRef[T float](d, a []T) {
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

func tanhRef[T float](d, a []T) {
	a = a[:len(d)]
	for i := range d {
		d[i] = T(math.Tanh(float64(a[i])))
	}
}

func sigmoidRef[T float](d, a []T) {
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

func cmpRef[T float](op CmpOp, d []uint8, a, b []T) {
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

func cmpSRef[T float](op CmpOp, d []uint8, a []T, s T) {
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

// selRef is branch-free: m is all ones where the condition holds.
func selRef[T uint32 | uint64](d []T, c []uint8, x, y []T) {
	c, x, y = c[:len(d)], x[:len(d)], y[:len(d)]
	for i := range d {
		m := -T(u8(c[i] != 0))
		d[i] = x[i]&m | y[i]&^m
	}
}

func selSRef[T uint32 | uint64](d []T, c []uint8, x []T, s T) {
	c, x = c[:len(d)], x[:len(d)]
	for i := range d {
		m := -T(u8(c[i] != 0))
		d[i] = x[i]&m | s&^m
	}
}

// sumRef adds element i to lane i mod 32 of float64 accumulators and the
// lanes in a fixed tree, as the assembly does.
func sumRef[T float](a []T) float64 {
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

func redMaxRef[T float](a []T) T {
	m := T(math.Inf(-1))
	for _, x := range a {
		m = max(m, x)
	}
	return m
}

func redMinRef[T float](a []T) T {
	m := T(math.Inf(1))
	for _, x := range a {
		m = min(m, x)
	}
	return m
}

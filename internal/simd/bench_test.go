package simd

import (
	"math/rand"
	"testing"
)

// BenchmarkKernels runs every kernel on 2048-element slices (in cache) at
// every level: go test -bench Kernels -benchtime 0.2s. ns/op / 2048 is
// the time per element.
func BenchmarkKernels(b *testing.B) {
	const n = 2048
	rng := rand.New(rand.NewSource(1))
	a32, b32, c32, d32 := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	a64, b64, c64, d64 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range a32 {
		// moderate values: the activations' interesting range
		a32[i], b32[i], c32[i] = float32(rng.NormFloat64()*3), float32(rng.NormFloat64()*3)+10, float32(rng.NormFloat64())
		a64[i], b64[i], c64[i] = float64(a32[i]), float64(b32[i]), float64(c32[i])
	}
	pos32, pos64 := make([]float32, n), make([]float64, n)
	for i := range pos32 {
		pos32[i], pos64[i] = b32[i]*b32[i]+1e-3, b64[i]*b64[i]+1e-3
	}
	u8 := make([]uint8, n)
	for i := range u8 {
		u8[i] = uint8(rng.Intn(2))
	}
	x32, y32, z32 := make([]uint32, n), make([]uint32, n), make([]uint32, n)
	x64, y64, z64 := make([]uint64, n), make([]uint64, n), make([]uint64, n)
	var sink float64
	var sink32 float32
	cases := []struct {
		name string
		size int
		f    func()
	}{
		{"AddF32", 4, func() { AddF32(d32, a32, b32) }},
		{"AddSF32", 4, func() { AddSF32(d32, a32, 2) }},
		{"SubF32", 4, func() { SubF32(d32, a32, b32) }},
		{"MulF32", 4, func() { MulF32(d32, a32, b32) }},
		{"DivF32", 4, func() { DivF32(d32, a32, b32) }},
		{"RDivSF32", 4, func() { RDivSF32(d32, b32, 1) }},
		{"MaxF32", 4, func() { MaxF32(d32, a32, b32) }},
		{"MaxSF32", 4, func() { MaxSF32(d32, a32, 0) }},
		{"FMAF32", 4, func() { FMAF32(d32, a32, b32, c32) }},
		{"NegF32", 4, func() { NegF32(d32, a32) }},
		{"AbsF32", 4, func() { AbsF32(d32, a32) }},
		{"SqrtF32", 4, func() { SqrtF32(d32, pos32) }},
		{"ExpF32", 4, func() { ExpF32(d32, a32) }},
		{"LogF32", 4, func() { LogF32(d32, pos32) }},
		{"TanhF32", 4, func() { TanhF32(d32, a32) }},
		{"SigmoidF32", 4, func() { SigmoidF32(d32, a32) }},
		{"CmpLtF32", 4, func() { CmpF32(Lt, u8, a32, c32) }},
		{"CmpSGtF32", 4, func() { CmpSF32(Gt, u8, a32, 0) }},
		{"ReduceSumF32", 4, func() { sink += ReduceSumF32(a32) }},
		{"ReduceMaxF32", 4, func() { sink32 += ReduceMaxF32(a32) }},
		{"AddF64", 8, func() { AddF64(d64, a64, b64) }},
		{"MulSF64", 8, func() { MulSF64(d64, a64, 3) }},
		{"DivF64", 8, func() { DivF64(d64, a64, b64) }},
		{"MaxF64", 8, func() { MaxF64(d64, a64, b64) }},
		{"FMAF64", 8, func() { FMAF64(d64, a64, b64, c64) }},
		{"SqrtF64", 8, func() { SqrtF64(d64, pos64) }},
		{"ExpF64", 8, func() { ExpF64(d64, a64) }},
		{"LogF64", 8, func() { LogF64(d64, pos64) }},
		{"TanhF64", 8, func() { TanhF64(d64, a64) }},
		{"SigmoidF64", 8, func() { SigmoidF64(d64, a64) }},
		{"CmpLtF64", 8, func() { CmpF64(Lt, u8, a64, c64) }},
		{"ReduceSumF64", 8, func() { sink += ReduceSumF64(a64) }},
		{"ReduceMinF64", 8, func() { sink += ReduceMinF64(a64) }},
		{"SelectU32", 4, func() { SelectU32(z32, u8, x32, y32) }},
		{"SelectSU32", 4, func() { SelectSU32(z32, u8, x32, 7) }},
		{"SelectU64", 8, func() { SelectU64(z64, u8, x64, y64) }},
	}
	saved := level
	defer setLevel(saved)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for _, l := range levels() {
				setLevel(l)
				b.Run(levelNames[l], func(b *testing.B) {
					b.SetBytes(int64(n * c.size))
					for i := 0; i < b.N; i++ {
						c.f()
					}
				})
			}
		})
	}
	_, _ = sink, sink32
}

// BenchmarkShort: the per-call overhead on short runs.
func BenchmarkShort(b *testing.B) {
	for _, n := range []int{1, 16, 100} {
		a, d := make([]float32, n), make([]float32, n)
		b.Run(levelNames[level]+"/AddF32/"+itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				AddF32(d, a, a)
			}
		})
		b.Run(levelNames[level]+"/TanhF32/"+itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				TanhF32(d, a)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

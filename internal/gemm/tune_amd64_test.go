//go:build amd64 && !noasm

package gemm

// Tuning: the benchmarks that chose the kernels and blockings in use
// (kernels_amd64.go), kept to redo the choice on another machine; how to
// run and compare them is under Tuning in the package documentation.
// TestTuneBlockings checks that every blocking compared here computes the
// right product, so that a fast but wrong candidate is never chosen.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"
)

func alignedF32(n int) []float32 {
	s := make([]float32, n+16)
	off := (64 - int(uintptr(unsafe.Pointer(&s[0]))&63)) / 4 % 16
	return s[off : off+n]
}
func alignedF64(n int) []float64 {
	s := make([]float64, n+8)
	off := (64 - int(uintptr(unsafe.Pointer(&s[0]))&63)) / 8 % 8
	return s[off : off+n]
}

// microKernel is one assembly micro-kernel, timed alone in L1.
type microKernel[T float] struct {
	name   string
	avx512 bool // needs AVX-512 (otherwise AVX2+FMA)
	mr, nr int
	fn     func(k int, a, b, c *T, ldc int, alpha, beta T)
}

func tuneMicro32() []microKernel[float32] {
	return []microKernel[float32]{
		{"S6x16AVX2", false, 6, 16, kernS6x16AVX2},
		{"S6x32AVX512", true, 6, 32, kernS6x32AVX512},
		{"S8x32AVX512", true, 8, 32, kernS8x32AVX512},
		{"S12x32AVX512", true, 12, 32, kernS12x32AVX512},
		{"S14x32AVX512", true, 14, 32, kernS14x32AVX512},
		{"S8x48AVX512", true, 8, 48, kernS8x48AVX512},
	}
}

func tuneMicro64() []microKernel[float64] {
	return []microKernel[float64]{
		{"D6x8AVX2", false, 6, 8, kernD6x8AVX2},
		{"D6x16AVX512", true, 6, 16, kernD6x16AVX512},
		{"D8x16AVX512", true, 8, 16, kernD8x16AVX512},
		{"D12x16AVX512", true, 12, 16, kernD12x16AVX512},
		{"D14x16AVX512", true, 14, 16, kernD14x16AVX512},
		{"D8x24AVX512", true, 8, 24, kernD8x24AVX512},
	}
}

// tuneBlockings32/64: the kernels in use and candidate blockings (micro-
// kernel, kc, mc, nc), for whole products. Only those this machine runs.
func tuneBlockings32() []*kernel[float32] {
	avx2, avx512 := cpuFeatures()
	var ks []*kernel[float32]
	if avx2 {
		ks = append(ks, avx2Kern32)
	}
	if avx512 {
		k := func(name string, mr, nr int, fn func(k int, a, b, c *float32, ldc int, alpha, beta float32), kc, mc, nc int) *kernel[float32] {
			return &kernel[float32]{name: name, mr: mr, nr: nr, fn: fn, kcMax: kc, mc: mc, nc: nc, narrow: avx512Narrow32}
		}
		ks = append(ks, avx512Kern32,
			k("8x32-192-128-2048", 8, 32, kernS8x32AVX512, 192, 128, 2048),
			k("8x32-320-128-2048", 8, 32, kernS8x32AVX512, 320, 128, 2048),
			k("8x32-256-64-2048", 8, 32, kernS8x32AVX512, 256, 64, 2048),
			k("8x32-256-256-2048", 8, 32, kernS8x32AVX512, 256, 256, 2048),
			k("8x32-256-128-512", 8, 32, kernS8x32AVX512, 256, 128, 512),
		)
	}
	return ks
}

func tuneBlockings64() []*kernel[float64] {
	avx2, avx512 := cpuFeatures()
	var ks []*kernel[float64]
	if avx2 {
		ks = append(ks, avx2Kern64)
	}
	if avx512 {
		k := func(name string, mr, nr int, fn func(k int, a, b, c *float64, ldc int, alpha, beta float64), kc, mc, nc int) *kernel[float64] {
			kern := &kernel[float64]{name: name, mr: mr, nr: nr, fn: fn, kcMax: kc, mc: mc, nc: nc}
			if mr == avx512Narrow64.mr {
				// The narrow kernel must have the same mr (kernel.narrow);
				// the 12-row candidate runs its last sliver at full width.
				kern.narrow = avx512Narrow64
			}
			return kern
		}
		ks = append(ks, avx512Kern64,
			k("8x16-128-64-2048", 8, 16, kernD8x16AVX512, 128, 64, 2048),
			k("8x16-256-128-2048", 8, 16, kernD8x16AVX512, 256, 128, 2048),
			k("12x16-256-96-2048", 12, 16, kernD12x16AVX512, 256, 96, 2048),
			k("8x24-256-64-2064", 8, 24, kernD8x24AVX512, 256, 64, 2064),
		)
	}
	return ks
}

// TestTuneBlockings: every blocking the tuning benchmarks compare computes
// the product within the rounding bound of mats.check, on shapes that cross
// every kc, mc and nr edge of these blockings (k = 700 > 2·320, m = 300 >
// 2·128, n = 2100 > 2064 for the widest nc, with ragged edges everywhere).
func TestTuneBlockings(t *testing.T) {
	shapes := []shape{{300, 70, 700}, {37, 2100, 33}}
	if testing.Short() || raceEnabled {
		shapes = shapes[:1]
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range tuneBlockings32() {
		for _, sh := range shapes {
			x := newMats[float32](rng, false, true, sh.m, sh.n, sh.k, 1, false)
			c := append([]float32(nil), x.c...)
			gemmWith(k, false, true, sh.m, sh.n, sh.k, 0.5, x.a, x.lda, x.b, x.ldb, -1, c, x.ldc, 2)
			x.check(t, fmt.Sprint(k.name, " ", sh), 0.5, -1, c)
		}
	}
	for _, k := range tuneBlockings64() {
		for _, sh := range shapes {
			x := newMats[float64](rng, true, false, sh.m, sh.n, sh.k, 1, false)
			c := append([]float64(nil), x.c...)
			gemmWith(k, true, false, sh.m, sh.n, sh.k, 0.5, x.a, x.lda, x.b, x.ldb, -1, c, x.ldc, 2)
			x.check(t, fmt.Sprint(k.name, " ", sh), 0.5, -1, c)
		}
	}
}

// benchMicro times one micro-kernel on kc = 256 steps of L1-resident packed
// slivers: its peak rate, with no packing or memory traffic.
func benchMicro[T float](b *testing.B, k microKernel[T], aligned func(int) []T) {
	avx2, avx512 := cpuFeatures()
	if !avx2 || (k.avx512 && !avx512) {
		b.Skip("this CPU does not run ", k.name)
	}
	const kc = 256
	a, bb, c := aligned(k.mr*kc), aligned(k.nr*kc), aligned(k.mr*k.nr)
	for i := range a {
		a[i] = T(i%7) / 8
	}
	for i := range bb {
		bb[i] = T(i%5) / 8
	}
	for b.Loop() {
		k.fn(kc, &a[0], &bb[0], &c[0], k.nr, 1, 1)
	}
	b.ReportMetric(2*kc*float64(k.mr*k.nr)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkTuneKernels: every assembly micro-kernel's peak rate, per
// kernel (sub-benchmark kernel=NAME).
func BenchmarkTuneKernels(b *testing.B) {
	for _, k := range tuneMicro32() {
		b.Run("kernel="+k.name, func(b *testing.B) { benchMicro(b, k, alignedF32) })
	}
	for _, k := range tuneMicro64() {
		b.Run("kernel="+k.name, func(b *testing.B) { benchMicro(b, k, alignedF64) })
	}
}

func tuneShapes() []benchShape {
	return append([]benchShape{
		{"n=256", false, false, 256, 256, 256},
		{"n=512", false, false, 512, 512, 512},
		{"n=1024", false, false, 1024, 1024, 1024},
		{"n=2048", false, false, 2048, 2048, 2048},
	}, mlpShapes...)
}

func benchBlocking[T float](b *testing.B, sh benchShape, kern *kernel[T]) {
	a, lda, bb, ldb, c, ldc := operands[T](sh)
	p := newPlan(kern, sh.transA, sh.transB, sh.m, sh.n, sh.k, 1)
	ws := make([]T, p.ws)
	for b.Loop() {
		for t := 0; t < p.tasks(); t++ {
			p.run(t, 1, a, lda, bb, ldb, 0, c, ldc, ws)
		}
	}
	gflops(b, sh)
}

// shapeKey is the shape's name without '=' (benchstat reads key=value parts
// of a sub-benchmark name as configuration keys).
func shapeKey(sh benchShape) string { return strings.ReplaceAll(sh.name, "=", "") }

// BenchmarkTuneGemm: whole single-threaded products with each blocking
// (sub-benchmarks type=float32|float64/shape=SHAPE/kernel=BLOCKING; the
// kernels in use are named avx2-6x16, avx512-8x32, ..., the candidates
// MRxNR-KC-MC-NC).
func BenchmarkTuneGemm(b *testing.B) {
	for _, sh := range tuneShapes() {
		for _, k := range tuneBlockings32() {
			b.Run(fmt.Sprintf("type=float32/shape=%s/kernel=%s", shapeKey(sh), k.name), func(b *testing.B) { benchBlocking(b, sh, k) })
		}
	}
	for _, sh := range tuneShapes() {
		for _, k := range tuneBlockings64() {
			b.Run(fmt.Sprintf("type=float64/shape=%s/kernel=%s", shapeKey(sh), k.name), func(b *testing.B) { benchBlocking(b, sh, k) })
		}
	}
}

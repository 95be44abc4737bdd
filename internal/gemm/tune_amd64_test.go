//go:build amd64 && !noasm

package gemm

import (
	"fmt"
	"os"
	"testing"
	"time"
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

// bestOf runs each candidate round-robin `rounds` times for about dur and
// returns the best rate of each (noise from other processes only slows).
func bestOf(rounds int, dur time.Duration, cands []func() float64) []float64 {
	best := make([]float64, len(cands))
	for r := 0; r < rounds; r++ {
		for i, f := range cands {
			var flops float64
			t0 := time.Now()
			for time.Since(t0) < dur {
				flops += f()
			}
			if g := flops / time.Since(t0).Seconds() / 1e9; g > best[i] {
				best[i] = g
			}
		}
	}
	return best
}

func TestTuneKernels(t *testing.T) {
	if os.Getenv("GEMM_TUNE") == "" {
		t.Skip("GEMM_TUNE not set")
	}
	const kc = 256
	type k32 struct {
		name   string
		mr, nr int
		f      func(k int, a, b, c *float32, ldc int, alpha, beta float32)
	}
	type k64 struct {
		name   string
		mr, nr int
		f      func(k int, a, b, c *float64, ldc int, alpha, beta float64)
	}
	var names []string
	var cands []func() float64
	for _, k := range []k32{
		{"S6x16AVX2", 6, 16, kernS6x16AVX2},
		{"S6x32AVX512", 6, 32, kernS6x32AVX512},
		{"S12x32AVX512", 12, 32, kernS12x32AVX512},
		{"S14x32AVX512", 14, 32, kernS14x32AVX512},
		{"S8x48AVX512", 8, 48, kernS8x48AVX512},
	} {
		a, bb, c := alignedF32(k.mr*kc), alignedF32(k.nr*kc), alignedF32(k.mr*k.nr)
		names = append(names, k.name)
		cands = append(cands, func() float64 {
			for i := 0; i < 100; i++ {
				k.f(kc, &a[0], &bb[0], &c[0], k.nr, 1, 1)
			}
			return 100 * 2 * kc * float64(k.mr*k.nr)
		})
	}
	for _, k := range []k64{
		{"D6x8AVX2", 6, 8, kernD6x8AVX2},
		{"D6x16AVX512", 6, 16, kernD6x16AVX512},
		{"D12x16AVX512", 12, 16, kernD12x16AVX512},
		{"D14x16AVX512", 14, 16, kernD14x16AVX512},
		{"D8x24AVX512", 8, 24, kernD8x24AVX512},
	} {
		a, bb, c := alignedF64(k.mr*kc), alignedF64(k.nr*kc), alignedF64(k.mr*k.nr)
		names = append(names, k.name)
		cands = append(cands, func() float64 {
			for i := 0; i < 100; i++ {
				k.f(kc, &a[0], &bb[0], &c[0], k.nr, 1, 1)
			}
			return 100 * 2 * kc * float64(k.mr*k.nr)
		})
	}
	best := bestOf(15, 20*time.Millisecond, cands)
	for i, n := range names {
		fmt.Printf("%-14s %6.1f GFLOP/s\n", n, best[i])
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

func tuneGemm[T float](kerns []*kernel[T]) {
	for _, sh := range tuneShapes() {
		a, lda, bb, ldb, c, ldc := operands[T](sh)
		var cands []func() float64
		for _, kern := range kerns {
			p := newPlan(kern, sh.transA, sh.transB, sh.m, sh.n, sh.k, 1)
			ws := make([]T, p.ws)
			cands = append(cands, func() float64 {
				for t := 0; t < p.tasks(); t++ {
					p.run(t, 1, a, lda, bb, ldb, 0, c, ldc, ws)
				}
				return 2 * float64(sh.m*sh.n*sh.k)
			})
		}
		rounds := 7
		if sh.m >= 1024 {
			rounds = 3
		}
		best := bestOf(rounds, 30*time.Millisecond, cands)
		fmt.Printf("%-20s", sh.name)
		for i, k := range kerns {
			fmt.Printf(" %s %6.1f", k.name, best[i])
		}
		fmt.Println()
	}
}

func TestTuneGemm(t *testing.T) {
	if os.Getenv("GEMM_TUNE") == "" {
		t.Skip("GEMM_TUNE not set")
	}
	k32 := func(name string, mr, nr int, fn func(k int, a, b, c *float32, ldc int, alpha, beta float32), kc, mc, nc int) *kernel[float32] {
		return &kernel[float32]{name: name, mr: mr, nr: nr, fn: fn, kcMax: kc, mc: mc, nc: nc}
	}
	n32 := func(k *kernel[float32]) *kernel[float32] { k.narrow = avx512Narrow32; return k }
	tuneGemm([]*kernel[float32]{
		avx2Kern32,
		avx512Kern32,
		n32(k32("8x32/192/128", 8, 32, kernS8x32AVX512, 192, 128, 2048)),
		n32(k32("8x32/320/128", 8, 32, kernS8x32AVX512, 320, 128, 2048)),
		n32(k32("8x32/256/64", 8, 32, kernS8x32AVX512, 256, 64, 2048)),
		n32(k32("8x32/256/256", 8, 32, kernS8x32AVX512, 256, 256, 2048)),
		n32(k32("8x32/256/128/512", 8, 32, kernS8x32AVX512, 256, 128, 512)),
	})
	k64 := func(name string, mr, nr int, fn func(k int, a, b, c *float64, ldc int, alpha, beta float64), kc, mc, nc int) *kernel[float64] {
		return &kernel[float64]{name: name, mr: mr, nr: nr, fn: fn, kcMax: kc, mc: mc, nc: nc, narrow: avx512Narrow64}
	}
	tuneGemm([]*kernel[float64]{
		avx2Kern64,
		avx512Kern64,
		k64("8x16/128/64", 8, 16, kernD8x16AVX512, 128, 64, 2048),
		k64("8x16/256/128", 8, 16, kernD8x16AVX512, 256, 128, 2048),
		k64("12x16/256/96", 12, 16, kernD12x16AVX512, 256, 96, 2048),
		k64("8x24/256/64", 8, 24, kernD8x24AVX512, 256, 64, 2064),
	})
}

//go:build amd64 && !noasm

package gemm

// extraKernels32 lists every assembly kernel this machine runs: the ones
// in use, the same with small blocking so that the tests cross the block
// edges, and the candidates that lost (see BenchmarkTuneKernels), which are
// tested more lightly.
func extraKernels32() []*kernel[float32] {
	avx2, avx512 := cpuFeatures()
	var ks []*kernel[float32]
	add := func(name string, mr, nr int, fn func(k int, a, b, c *float32, ldc int, alpha, beta float32)) {
		ks = append(ks, &kernel[float32]{name: name, mr: mr, nr: nr, fn: fn, kcMax: 96, mc: 4 * mr, nc: 3 * nr})
		candidate[ks[len(ks)-1]] = true
	}
	if avx2 {
		ks = append(ks, avx2Kern32)
		add("avx2-6x16-smallblocks", 6, 16, kernS6x16AVX2)
		ks[len(ks)-1].narrow = avx2Narrow32
		delete(candidate, ks[len(ks)-1])
	}
	if avx512 {
		ks = append(ks, avx512Kern32)
		add("avx512-8x32-smallblocks", 8, 32, kernS8x32AVX512)
		ks[len(ks)-1].narrow = avx512Narrow32
		delete(candidate, ks[len(ks)-1])
		ks[len(ks)-1].vec = avx512Kern32.vec
		add("s6x32", 6, 32, kernS6x32AVX512)
		add("s8x32", 8, 32, kernS8x32AVX512)
		add("s12x32", 12, 32, kernS12x32AVX512)
		add("s14x32", 14, 32, kernS14x32AVX512)
		add("s8x48", 8, 48, kernS8x48AVX512)
	}
	return ks
}

func extraKernels64() []*kernel[float64] {
	avx2, avx512 := cpuFeatures()
	var ks []*kernel[float64]
	add := func(name string, mr, nr int, fn func(k int, a, b, c *float64, ldc int, alpha, beta float64)) {
		ks = append(ks, &kernel[float64]{name: name, mr: mr, nr: nr, fn: fn, kcMax: 96, mc: 4 * mr, nc: 3 * nr})
		candidate[ks[len(ks)-1]] = true
	}
	if avx2 {
		ks = append(ks, avx2Kern64)
		add("avx2-6x8-smallblocks", 6, 8, kernD6x8AVX2)
		ks[len(ks)-1].narrow = avx2Narrow64
		delete(candidate, ks[len(ks)-1])
	}
	if avx512 {
		ks = append(ks, avx512Kern64)
		add("avx512-8x16-smallblocks", 8, 16, kernD8x16AVX512)
		ks[len(ks)-1].narrow = avx512Narrow64
		delete(candidate, ks[len(ks)-1])
		ks[len(ks)-1].vec = avx512Kern64.vec
		add("d6x16", 6, 16, kernD6x16AVX512)
		add("d8x16", 8, 16, kernD8x16AVX512)
		add("d12x16", 12, 16, kernD12x16AVX512)
		add("d14x16", 14, 16, kernD14x16AVX512)
		add("d8x24", 8, 24, kernD8x24AVX512)
	}
	return ks
}

//go:build amd64 && !noasm

package gemm

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax, edx uint32)

// cpuFeatures reports whether the processor and the operating system
// support AVX2 with FMA, and AVX-512 F/DQ/BW/VL.
func cpuFeatures() (avx2fma, avx512 bool) {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false, false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const (
		fma     = 1 << 12
		osxsave = 1 << 27
		avx     = 1 << 28
	)
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false, false
	}
	xcr0, _ := xgetbv()
	if xcr0&0x6 != 0x6 { // SSE and AVX state enabled by the OS
		return false, false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const (
		avx2     = 1 << 5
		avx512f  = 1 << 16
		avx512dq = 1 << 17
		avx512bw = 1 << 30
		avx512vl = 1 << 31
	)
	avx2fma = ebx7&avx2 != 0
	avx512 = avx2fma && ebx7&(avx512f|avx512dq|avx512bw|avx512vl) == avx512f|avx512dq|avx512bw|avx512vl &&
		xcr0&0xe0 == 0xe0 // opmask and ZMM state
	return avx2fma, avx512
}

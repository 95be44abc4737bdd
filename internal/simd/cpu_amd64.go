//go:build !noasm

package simd

import "golang.org/x/sys/cpu"

// detect returns the best level the CPU and the OS support. x/sys/cpu
// reports AVX and AVX-512 only where the OS saves their registers.
func detect() int {
	x := cpu.X86
	if !x.HasAVX2 || !x.HasFMA {
		return levelGo
	}
	if x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512BW && x.HasAVX512VL {
		return levelAVX512
	}
	return levelAVX2
}

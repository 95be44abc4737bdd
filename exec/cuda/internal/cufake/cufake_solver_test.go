package cufake

import "strings"

// The exports of the fake cuFFT and cuSOLVER (fakecufft.c, fakecusolver.c)
// and the cuBLAS routines fakecusolver.c adds to the fake cuBLAS: exactly
// the symbols package cu binds (TestExports).
var (
	cufftExports = "cufftCreate cufftDestroy cufftGetVersion cufftSetAutoAllocation cufftMakePlanMany64 cufftSetWorkArea " +
		"cufftSetStream cufftExecC2C cufftExecZ2Z cufftExecR2C cufftExecD2Z cufftExecC2R cufftExecZ2D"
	cusolverExports = "cusolverDnCreate cusolverDnDestroy cusolverGetVersion cusolverDnSetStream cusolverDnCreateSyevjInfo " +
		"cusolverDnDestroySyevjInfo cusolverDnCreateGesvdjInfo cusolverDnDestroyGesvdjInfo" + perPrecision("cusolverDn",
		"potrf potrs potrfBatched potrsBatched getrf getrs geqrf orgqr syevd gesvd syevjBatched gesvdjBatched "+
			"potrf_bufferSize getrf_bufferSize geqrf_bufferSize orgqr_bufferSize syevd_bufferSize gesvd_bufferSize "+
			"syevjBatched_bufferSize gesvdjBatched_bufferSize") + perComplex("cusolverDn",
		"potrf potrs getrf getrs potrf_bufferSize getrf_bufferSize")
	solveBLASExports = perPrecision("cublas", "trsm_v2 trsmBatched getrfBatched getrsBatched")
)

// perPrecision lists prefix+S+name and prefix+D+name for every name, each
// after a space.
func perPrecision(prefix, names string) string {
	var b strings.Builder
	for _, p := range []string{"S", "D"} {
		for _, n := range strings.Fields(names) {
			b.WriteString(" " + prefix + p + n)
		}
	}
	return b.String()
}

// perComplex is perPrecision for C and Z.
func perComplex(prefix, names string) string {
	var b strings.Builder
	for _, p := range []string{"C", "Z"} {
		for _, n := range strings.Fields(names) {
			b.WriteString(" " + prefix + p + n)
		}
	}
	return b.String()
}

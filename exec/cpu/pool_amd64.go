//go:build !noasm

package cpu

import "github.com/loomgraph/loom/internal/simd"

// maxRows2x2 writes the 2x2 maxima of rows row pairs (input rows of w
// elements, ow windows each; pair r at x[2rw:]) into y (ow per pair),
// stopping at the first pair with a NaN in a window: it returns that
// pair's index, or rows. pool_amd64.s, AVX-512.
//
//go:noescape
func maxRows2x2(y, x *float32, rows, w, ow int) int

// maxGradRows2x2 writes, for each pair, g at every window's arg-max and
// zero at its other taps into dx (laid out as x), stopping like
// maxRows2x2. The input columns past 2·ow are not written.
//
//go:noescape
func maxGradRows2x2(dx, x, gy *float32, rows, w, ow int) int

// pool2x2Asm reports whether the assembly 2x2 pooling runs: on AVX-512
// machines at the simd level avx512 (LOOM_SIMD=go or avx2 turn it off).
func pool2x2Asm() bool { return simd.Level() == "avx512" }

// Package fft is loom's own fast Fourier transform, in pure Go, for
// complex64 and complex128: plans cached by length and direction, a
// Stockham (self-sorting, out-of-place) mixed-radix algorithm with
// butterflies of radix 4, 2, 3 and 5 and a generic one for the other
// small primes, Bluestein's chirp-z algorithm for lengths with a prime
// factor above maxRadix, transforms along any axis of a row-major array
// (rows in place, other axes through a small transposed block of
// columns), and real-input transforms (r2c, and its inverse c2r) through a
// half-length complex transform and a twiddle pass.
//
// The transforms are unnormalised, as FFTW's: the forward one computes
// X[k] = Σ x[j]·exp(-2πi·jk/n), the inverse one the same sum with +2πi,
// so inverse(forward(x)) = n·x. Callers scale.
//
// The complex128 code is written once in engine128.go; engine64.go is
// generated from it by gen.go (`go generate ./internal/fft`), replacing
// every identifier ending in 128 by the same ending in 64 and the real
// element type float64 by float32. Twiddles are always computed in
// float64 (twiddle.go) and rounded once.
//
// Plans are immutable and safe for concurrent use; every Transform takes
// its scratch memory from the caller (WorkLen elements), so a transform
// allocates nothing.
package fft

//go:generate go run gen.go

import (
	"math"
	"sync"
)

// maxRadix is the largest prime factor handled by a butterfly of its own
// (O(p²) per group of p points); a length with a larger prime factor is
// transformed with Bluestein's algorithm.
const maxRadix = 61

// factor splits n into the radices of the Stockham stages: fours first,
// then at most one two, then threes, fives and the other primes in
// increasing order. It returns nil when n has a prime factor above
// maxRadix.
func factor(n int) []int {
	f := []int{}
	for n%4 == 0 {
		f = append(f, 4)
		n /= 4
	}
	if n%2 == 0 {
		f = append(f, 2)
		n /= 2
	}
	for p := 3; n > 1; p += 2 {
		if p > maxRadix {
			return nil
		}
		for n%p == 0 {
			f = append(f, p)
			n /= p
		}
	}
	return f
}

// bluesteinLen is the power of two Bluestein's algorithm convolves in for
// length n: the smallest at least 2n-1.
func bluesteinLen(n int) int {
	m := 1
	for m < 2*n-1 {
		m *= 2
	}
	return m
}

// twiddle is exp(sign·2πi·k/n) computed in float64 with k reduced into
// the first octant, so that w^k for large n loses no accuracy.
func twiddle(k, n int, sign float64) complex128 {
	k %= n
	if k < 0 {
		k += n
	}
	// exp(i·θ), θ = 2πk/n; use symmetry to keep the argument small.
	var c, s float64
	switch {
	case 8*k <= n:
		s, c = math.Sincos(2 * math.Pi * float64(k) / float64(n))
	case 8*k <= 3*n: // θ in (π/4, 3π/4]: cos θ = sin(π/2-θ)
		s, c = math.Sincos(2 * math.Pi * float64(n-4*k) / float64(4*n))
		s, c = c, s
	case 8*k <= 5*n: // θ near π
		s, c = math.Sincos(2 * math.Pi * float64(2*k-n) / float64(2*n))
		s, c = -s, -c
	case 8*k <= 7*n: // θ near 3π/2
		s, c = math.Sincos(2 * math.Pi * float64(4*k-3*n) / float64(4*n))
		s, c = -c, s
	default: // θ near 2π
		s, c = math.Sincos(-2 * math.Pi * float64(n-k) / float64(n))
	}
	return complex(c, sign*s)
}

// chirp is exp(sign·iπ·k²/n), with k² reduced modulo 2n first.
func chirp(k, n int, sign float64) complex128 {
	kk := (int64(k) * int64(k)) % int64(2*n)
	return twiddle(int(kk), 2*n, sign)
}

func direction(inverse bool) float64 {
	if inverse {
		return 1
	}
	return -1
}

type planKey struct {
	n       int
	inverse bool
	kind    uint8 // 0 complex128, 1 complex64, 2 real complex128, 3 real complex64
}

var plans sync.Map // planKey -> plan

func cached[P any](k planKey, build func() P) P {
	if p, ok := plans.Load(k); ok {
		return p.(P)
	}
	p, _ := plans.LoadOrStore(k, build())
	return p.(P)
}

// columnBlock is how many columns Axis gathers at once when the axis is
// not the last one: 64 bytes of complex64 per row of the block.
const columnBlock = 8

// AxisItems is the number of independent pieces of work of a transform
// along the middle axis of an [outer, n, inner] array: the rows when
// inner is 1, else the blocks of columnBlock columns of every outer index.
func AxisItems(outer, inner int) int {
	if inner == 1 {
		return outer
	}
	return outer * ((inner + columnBlock - 1) / columnBlock)
}

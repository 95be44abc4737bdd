package scalar

import (
	"math"
	"math/bits"
)

// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and
// Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC 2011), which
// JAX and PyTorch's CUDA backend use: a 128-bit counter and a 64-bit key
// give four 32-bit words, with no state between calls. loom's random ops
// (ops/random.go) draw a stream from it: word j of the stream of key k in
// stream s is lane j%4 of Philox(k, (lo32(j/4), hi32(j/4), lo32(s),
// hi32(s))). exec/cuda's generator has the same function in C; the
// conformance suite compares the two bit for bit.

// The round multipliers and the Weyl key increments (the golden ratio and
// √3 - 1 in 32 bits), from the paper.
const (
	PhiloxM0 = 0xD2511F53
	PhiloxM1 = 0xCD9E8D57
	PhiloxW0 = 0x9E3779B9
	PhiloxW1 = 0xBB67AE85
)

// Philox4x32 is Philox4x32-10 of counter c under key k.
func Philox4x32(c [4]uint32, k [2]uint32) [4]uint32 {
	c0, c1, c2, c3 := c[0], c[1], c[2], c[3]
	k0, k1 := k[0], k[1]
	for r := 0; r < 10; r++ {
		if r > 0 {
			k0 += PhiloxW0
			k1 += PhiloxW1
		}
		hi0, lo0 := bits.Mul32(PhiloxM0, c0)
		hi1, lo1 := bits.Mul32(PhiloxM1, c2)
		c0, c1, c2, c3 = hi1^c1^k0, lo1, hi0^c3^k1, lo0
	}
	return [4]uint32{c0, c1, c2, c3}
}

// PhiloxBlock is block b of stream s under key k: the counter
// (lo32(b), hi32(b), lo32(s), hi32(s)).
func PhiloxBlock(k [2]uint32, s, b uint64) [4]uint32 {
	return Philox4x32([4]uint32{uint32(b), uint32(b >> 32), uint32(s), uint32(s >> 32)}, k)
}

// The maps from stream words to values, shared by the reference and the
// CPU kernels (exec/cuda's C does the same arithmetic).

// Uniform32 is a float32 in [0, 1) from one word: its top 24 bits times
// 2⁻²⁴ (every value a multiple of 2⁻²⁴, all exact in float32).
func Uniform32(w uint32) float32 { return float32(w>>8) * (1.0 / (1 << 24)) }

// Uniform64 is a float64 in [0, 1) from two words: the top 53 of their
// 64 bits (a high) times 2⁻⁵³.
func Uniform64(a, b uint32) float64 {
	return float64(uint64(a)<<21|uint64(b>>11)) * (1.0 / (1 << 53))
}

// Normal32 is a standard normal from two words by the Box-Muller
// transform, z = √(-2 ln u₁)·cos(2π u₂), with u₁ = (top 24 bits of a + 1)
// × 2⁻²⁴ in (0, 1] (so the log is finite) and u₂ = Uniform32(b), computed
// in float64 and rounded once to float32. The sine half of the pair is
// not used, so that element i depends only on its own words.
func Normal32(a, b uint32) float32 {
	u1 := float64((a>>8)+1) * (1.0 / (1 << 24))
	u2 := float64(Uniform32(b))
	return float32(math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2))
}

// Normal64 is Normal32 in float64 from four words: u₁ from the top 53
// bits of (a, b) plus one, times 2⁻⁵³, in (0, 1]; u₂ = Uniform64(c, d).
func Normal64(a, b, c, d uint32) float64 {
	u1 := float64((uint64(a)<<21|uint64(b>>11))+1) * (1.0 / (1 << 53))
	u2 := Uniform64(c, d)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// BernoulliThreshold is the integer t with P(w < t) = t/2³² closest below
// p for a uniform word w: floor(p·2³²), 0 for p <= 0 (and NaN) and 2³²
// for p >= 1 (so p = 1 is always true). The error in the probability is
// below 2⁻³².
func BernoulliThreshold(p float64) uint64 {
	switch {
	case !(p > 0):
		return 0
	case p >= 1:
		return 1 << 32
	}
	return uint64(math.Floor(p * (1 << 32)))
}

// PhiloxFill writes the words of blocks b0, b0+1, ... of stream s under
// key k into dst (4 words per block, len(dst) a multiple of 4): the
// stream words 4·b0 ... 4·b0+len(dst)-1. Two blocks go through the
// rounds together, so their multiplies overlap; the words are
// Philox4x32's.
func PhiloxFill(dst []uint32, k [2]uint32, s, b0 uint64) {
	s0, s1 := uint32(s), uint32(s>>32)
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		b := b0 + uint64(i/4)
		a0, a1, a2, a3 := uint32(b), uint32(b>>32), s0, s1
		c0, c1, c2, c3 := uint32(b+1), uint32((b+1)>>32), s0, s1
		k0, k1 := k[0], k[1]
		for r := 0; r < 10; r++ {
			hi0, lo0 := bits.Mul32(PhiloxM0, a0)
			hi1, lo1 := bits.Mul32(PhiloxM1, a2)
			hj0, lj0 := bits.Mul32(PhiloxM0, c0)
			hj1, lj1 := bits.Mul32(PhiloxM1, c2)
			a0, a1, a2, a3 = hi1^a1^k0, lo1, hi0^a3^k1, lo0
			c0, c1, c2, c3 = hj1^c1^k0, lj1, hj0^c3^k1, lj0
			k0 += PhiloxW0
			k1 += PhiloxW1
		}
		d := dst[i : i+8 : i+8]
		d[0], d[1], d[2], d[3] = a0, a1, a2, a3
		d[4], d[5], d[6], d[7] = c0, c1, c2, c3
	}
	if i < len(dst) {
		r := PhiloxBlock(k, s, b0+uint64(i/4))
		copy(dst[i:i+4], r[:])
	}
}

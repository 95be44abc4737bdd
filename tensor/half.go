package tensor

import "math"

// F16 is the bit pattern of an IEEE 754 binary16 (half precision) number.
type F16 uint16

// BF16 is the bit pattern of a bfloat16 number (the upper half of a float32).
type BF16 uint16

// F16FromFloat32 rounds f to the nearest binary16 value (ties to even).
// Values beyond the range become ±Inf; NaN stays NaN.
func F16FromFloat32(f float32) F16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN
		if man != 0 {
			return F16(sign | 0x7e00 | uint16(man>>13))
		}
		return F16(sign | 0x7c00)
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return F16(sign | 0x7c00)
	}
	if e <= 0 {
		// Subnormal in half precision (or zero).
		if e < -10 {
			return F16(sign)
		}
		man |= 0x800000 // implicit bit
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		rest := man & ((uint32(1) << shift) - 1)
		m := man >> shift
		if rest > half || (rest == half && m&1 == 1) {
			m++
		}
		return F16(sign | uint16(m))
	}
	m := man >> 13
	rest := man & 0x1fff
	h := uint32(e)<<10 | m
	if rest > 0x1000 || (rest == 0x1000 && m&1 == 1) {
		h++ // may carry into the exponent, which is the correct rounding
	}
	return F16(sign | uint16(h))
}

// Float32 returns the exact float32 value of h.
func (h F16) Float32() float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = man * 2^-24
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | man<<13)
}

// BF16FromFloat32 rounds f to the nearest bfloat16 value (ties to even);
// NaN stays NaN.
func BF16FromFloat32(f float32) BF16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and non-zero
		return BF16(b>>16 | 0x40)
	}
	b += 0x7fff + (b>>16)&1
	return BF16(b >> 16)
}

// Float32 returns the exact float32 value of h.
func (h BF16) Float32() float32 { return math.Float32frombits(uint32(h) << 16) }

package scalar

import "testing"

// TestPhiloxKnownAnswers checks Philox4x32-10 against the known-answer
// vectors that the authors of Salmon et al., "Parallel random numbers: as
// easy as 1, 2, 3" (SC 2011) published with their Random123 library
// (kat_vectors, lines "philox4x32 10"): counter and key all zeros, all
// ones, and the digits of π.
func TestPhiloxKnownAnswers(t *testing.T) {
	cases := []struct {
		ctr  [4]uint32
		key  [2]uint32
		want [4]uint32
	}{
		{[4]uint32{0, 0, 0, 0}, [2]uint32{0, 0}, [4]uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
		{[4]uint32{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, [2]uint32{0xffffffff, 0xffffffff}, [4]uint32{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
		{[4]uint32{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, [2]uint32{0xa4093822, 0x299f31d0}, [4]uint32{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
	}
	for _, c := range cases {
		if got := Philox4x32(c.ctr, c.key); got != c.want {
			t.Errorf("Philox4x32(%08x, %08x) = %08x, want %08x", c.ctr, c.key, got, c.want)
		}
	}
}

// TestStreamMaps checks the maps from words to values at their ends
// (hand: 0xffffffff>>8 = 2²⁴-1, so the largest uniform is 1 - 2⁻²⁴).
func TestStreamMaps(t *testing.T) {
	if got := Uniform32(0); got != 0 {
		t.Errorf("Uniform32(0) = %v", got)
	}
	if got, want := Uniform32(0xffffffff), float32(1-1.0/(1<<24)); got != want {
		t.Errorf("Uniform32(max) = %v, want %v", got, want)
	}
	if got, want := Uniform64(0xffffffff, 0xffffffff), 1-1.0/(1<<53); got != want {
		t.Errorf("Uniform64(max) = %v, want %v", got, want)
	}
	// u1 = 1 (a's top bits all ones) gives z = 0 whatever u2.
	if got := Normal32(0xffffffff, 12345); got != 0 {
		t.Errorf("Normal32 at u1 = 1: %v, want 0", got)
	}
	// u1 = 2⁻²⁴, u2 = 0: z = √(2·24·ln 2) = 5.768107546403532 (hand, python math).
	if got, want := Normal32(0, 0), float32(5.768107546403532); got != want {
		t.Errorf("Normal32(0, 0) = %v, want %v", got, want)
	}
	for _, c := range []struct {
		p    float64
		want uint64
	}{{0, 0}, {-1, 0}, {1, 1 << 32}, {2, 1 << 32}, {0.5, 1 << 31}, {0.25, 1 << 30}} {
		if got := BernoulliThreshold(c.p); got != c.want {
			t.Errorf("BernoulliThreshold(%v) = %d, want %d", c.p, got, c.want)
		}
	}
}

// TestPhiloxFill: the two-block loop gives PhiloxBlock's words, for odd
// and even block counts and a start past 2³² blocks (the counter's high
// word).
func TestPhiloxFill(t *testing.T) {
	k := [2]uint32{0x12345678, 0x9abcdef0}
	for _, b0 := range []uint64{0, 5, 1<<32 - 1} {
		for _, blocks := range []int{1, 2, 7} {
			dst := make([]uint32, 4*blocks)
			PhiloxFill(dst, k, 3<<32|9, b0)
			for b := range blocks {
				if r := PhiloxBlock(k, 3<<32|9, b0+uint64(b)); [4]uint32(dst[4*b:4*b+4]) != r {
					t.Errorf("start %d, block %d: %08x, want %08x", b0, b, dst[4*b:4*b+4], r)
				}
			}
		}
	}
}

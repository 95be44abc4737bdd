package cpu

import "unsafe"

// Sort of lines fewer than the workers (one long line: a sort of a whole
// vector) runs each line's radix sort in parallel: every pass, each of P
// chunks of the line counts its digits, a prefix over (digit, chunk)
// gives every chunk its place in each digit's bucket, and the chunks
// scatter at once. This is the sequential LSD sort's stable order, so the
// result is the same bits on any number of workers (a stable sort of the
// same keys has one result). Encoding and decoding the keys are split by
// chunks too.

// parSortMin is the shortest line sorted in parallel: 256K elements
// (about 1 ms on one thread; below that the passes' dispatches and
// per-chunk histograms cost more than they save).
const parSortMin = 1 << 18

// parSort is the per-instance state of a parallel Sort.
type parSort[T elem, K sortKey] struct {
	a        *args
	sp       sortPlan
	enc      encoder[T, K]
	dec      decoder[T, K]
	flip     K
	parts    int
	bits     uint // digit width: 11 for 32-bit keys (3 passes), 8 for 64-bit (8 passes)
	passes   int
	k0, k1   []K
	hist     [][]uint32 // per chunk: the current pass's digit counts
	special  []bool     // per chunk: a -0 or NaN was encoded
	src, dst []K
	sh       uint
	base     int // the line's first element
	stage    int // what the loop body does (see stages)
	loop     *loop
}

const (
	stageEncode = iota
	stageCount
	stageScatter
	stageDecode
)

func newParSort[T elem, K sortKey](a *args, sp sortPlan, enc encoder[T, K], dec decoder[T, K], flip K, parts int) *parSort[T, K] {
	L := sp.g.A
	s := &parSort[T, K]{a: a, sp: sp, enc: enc, dec: dec, flip: flip, parts: parts,
		k0: make([]K, L), k1: make([]K, L), hist: make([][]uint32, parts), special: make([]bool, parts)}
	s.bits, s.passes = 11, 3
	if unsafe.Sizeof(K(0)) == 8 {
		s.bits, s.passes = 8, 8
	}
	for c := range s.hist {
		s.hist[c] = make([]uint32, 1<<s.bits)
	}
	s.loop = a.Loop(func(lo, hi, _ int) {
		for c := lo; c < hi; c++ {
			s.chunk(c)
		}
	})
	return s
}

// bounds is chunk c's range of the line.
func (s *parSort[T, K]) bounds(c int) (int, int) {
	L := s.sp.g.A
	return c * L / s.parts, (c + 1) * L / s.parts
}

// chunk does the current stage for chunk c.
func (s *parSort[T, K]) chunk(c int) {
	c0, c1 := s.bounds(c)
	inner := s.sp.g.inner
	mask := K(1)<<s.bits - 1
	switch s.stage {
	case stageEncode:
		s.special[c] = s.enc(s.k0[c0:c1], as[T](s.a.In(0)), s.base+c0*inner, inner, s.flip)
	case stageCount:
		h := s.hist[c]
		clear(h)
		for _, k := range s.src[c0:c1] {
			h[k>>s.sh&mask]++
		}
	case stageScatter:
		h, dst := s.hist[c], s.dst
		for _, k := range s.src[c0:c1] {
			j := k >> s.sh & mask
			dst[h[j]] = k
			h[j]++
		}
	case stageDecode:
		s.dec(as[T](s.a.Out()), s.base+c0*inner, inner, s.src[c0:c1], s.flip)
	}
}

func (s *parSort[T, K]) run(stage int) bool {
	s.stage = stage
	s.loop.Run(s.parts, 1, 0)
	return !s.a.Stopped()
}

// sortLine sorts the line starting at element base; false when the Run
// was cancelled.
func (s *parSort[T, K]) sortLine(base int) bool {
	L, inner := s.sp.g.A, s.sp.g.inner
	s.base = base
	if !s.run(stageEncode) {
		return false
	}
	s.src, s.dst = s.k0, s.k1
	for d := range s.passes {
		s.sh = uint(d) * s.bits
		if !s.run(stageCount) {
			return false
		}
		// Offsets in (digit, chunk) order; a pass where every key has
		// the same digit moves nothing.
		var sum uint32
		for j := range s.hist[0] {
			total := uint32(0)
			for c := range s.hist {
				n := s.hist[c][j]
				s.hist[c][j] = sum + total
				total += n
			}
			if total == uint32(L) {
				sum = 0
				break // one digit: skip the pass
			}
			sum += total
		}
		if sum == 0 {
			continue
		}
		if !s.run(stageScatter) {
			return false
		}
		s.src, s.dst = s.dst, s.src
	}
	if !s.run(stageDecode) {
		return false
	}
	for _, sp := range s.special {
		if sp {
			fixSpecials(as[T](s.a.Out()), as[T](s.a.In(0)), base, inner, L)
			break
		}
	}
	return true
}

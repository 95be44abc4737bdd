package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The sorting ops (Sort, ArgSort, TopK, SearchSorted); see ops/sort.go
// for the order.
//
// Sort, ArgSort and TopK view the operand as [outer, L, inner] (scanGeom)
// and handle one line (an outer and an inner index) per work item, lines
// in parallel. A line's elements are first encoded as unsigned keys whose
// integer order is the sorting order: a float's bits with the sign bit
// flipped for positives and every bit flipped for negatives, -0 made +0
// and every NaN the largest key; an integer's bits with the sign bit
// flipped; descending flips every bit of the key (so NaN comes first and
// equal values keep their order). Floats of 4 bytes or less and all
// integers but int64 get 32-bit keys, float64 and int64 64-bit ones.
//
// The keys are sorted by an LSD radix sort on bytes (stable; a byte whose
// value is the same in every key is skipped), carrying the line indices
// for ArgSort; short lines are sorted by insertion. Sort decodes the sorted
// keys back into values; where a line has -0 or NaN (whose keys are
// shared), the zeros and NaNs are then copied in their input order into
// their runs of the output, which is where a stable sort puts them. TopK
// with k small next to the line keeps the k best (key, index) pairs in a
// heap while streaming the keys, then sorts them; otherwise it sorts the
// line. Results do not depend on the thread count.

// sortSmall is the longest line sorted by insertion.
const sortSmall = 48

// topKHeapRatio: TopK uses the heap when k*topKHeapRatio <= L.
const topKHeapRatio = 8

type sortKey interface{ uint32 | uint64 }

// encoder writes the keys of m elements of x from p0 in steps of stride
// into dst, xor flip, and reports whether any is -0 or NaN.
type encoder[T elem, K sortKey] func(dst []K, x []T, p0, stride int, flip K) bool

// decoder writes the values of keys (xor flip) to y from p0 in steps of
// stride.
type decoder[T elem, K sortKey] func(y []T, p0, stride int, keys []K, flip K)

func encF32(dst []uint32, x []float32, p0, stride int, flip uint32) bool {
	special := false
	p := p0
	for i := range dst {
		b := math.Float32bits(x[p])
		k := b ^ (uint32(int32(b)>>31) | 0x80000000)
		if b<<1 == 0 || b<<1 > 0xff000000 { // ±0 or NaN
			special = special || b != 0
			k = 0x80000000
			if b<<1 != 0 {
				k = 0xffffffff
			}
		}
		dst[i] = k ^ flip
		p += stride
	}
	return special
}

func decF32(y []float32, p0, stride int, keys []uint32, flip uint32) {
	p := p0
	for _, k := range keys {
		k ^= flip
		y[p] = math.Float32frombits(k ^ (uint32(int32(^k)>>31) | 0x80000000))
		p += stride
	}
}

func encF64(dst []uint64, x []float64, p0, stride int, flip uint64) bool {
	special := false
	p := p0
	for i := range dst {
		b := math.Float64bits(x[p])
		k := b ^ (uint64(int64(b)>>63) | 1<<63)
		if b<<1 == 0 || b<<1 > 0xffe0000000000000 {
			special = special || b != 0
			k = 1 << 63
			if b<<1 != 0 {
				k = math.MaxUint64
			}
		}
		dst[i] = k ^ flip
		p += stride
	}
	return special
}

func decF64(y []float64, p0, stride int, keys []uint64, flip uint64) {
	p := p0
	for _, k := range keys {
		k ^= flip
		y[p] = math.Float64frombits(k ^ (uint64(int64(^k)>>63) | 1<<63))
		p += stride
	}
}

func encInt32[T int8 | int16 | int32](dst []uint32, x []T, p0, stride int, flip uint32) bool {
	p := p0
	for i := range dst {
		dst[i] = uint32(int32(x[p])) ^ 0x80000000 ^ flip
		p += stride
	}
	return false
}

func decInt32[T int8 | int16 | int32](y []T, p0, stride int, keys []uint32, flip uint32) {
	p := p0
	for _, k := range keys {
		y[p] = T(int32(k ^ flip ^ 0x80000000))
		p += stride
	}
}

func encUint8(dst []uint32, x []uint8, p0, stride int, flip uint32) bool {
	p := p0
	for i := range dst {
		dst[i] = uint32(x[p]) ^ flip
		p += stride
	}
	return false
}

func decUint8(y []uint8, p0, stride int, keys []uint32, flip uint32) {
	p := p0
	for _, k := range keys {
		y[p] = uint8(k ^ flip)
		p += stride
	}
}

func encInt64(dst []uint64, x []int64, p0, stride int, flip uint64) bool {
	p := p0
	for i := range dst {
		dst[i] = uint64(x[p]) ^ 1<<63 ^ flip
		p += stride
	}
	return false
}

func decInt64(y []int64, p0, stride int, keys []uint64, flip uint64) {
	p := p0
	for _, k := range keys {
		y[p] = int64(k ^ flip ^ 1<<63)
		p += stride
	}
}

// sortMode is what a sort kernel writes.
type sortMode uint8

const (
	modeSort sortMode = iota // the sorted values
	modeArg                  // the indices that sort (int64)
	modeTopK                 // the indices of the first k (int64)
)

func prepareSort(n *graph.Node) (*kernel, error) {
	x := n.Input(0)
	var axis, k int
	var desc bool
	mode := modeSort
	switch a := n.Attr().(type) {
	case opdef.SortAttr:
		axis, desc, k = a.Axis, a.Descending, x.Shape()[a.Axis]
		if n.Op() == ops.OpArgSort {
			mode = modeArg
		}
	case opdef.TopKAttr:
		axis, desc, k, mode = a.Axis, a.Largest, a.K, modeTopK
	default:
		return nil, fmt.Errorf("%w: %v with attribute %T", errUnsupported, n.Op(), n.Attr())
	}
	g := scanGeomOf(x.Shape(), axis)
	if g.A > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %v of a line of %d elements (at most 2^32-1)", errUnsupported, n.Op(), g.A)
	}
	sp := sortPlan{g: g, mode: mode, desc: desc, k: k}
	switch x.DType() {
	case tensor.Float32:
		return sortKernel(sp, encF32, decF32), nil
	case tensor.Float64:
		return sortKernel(sp, encF64, decF64), nil
	case tensor.Int32:
		return sortKernel(sp, encInt32[int32], decInt32[int32]), nil
	case tensor.Int16:
		return sortKernel(sp, encInt32[int16], decInt32[int16]), nil
	case tensor.Int8:
		return sortKernel(sp, encInt32[int8], decInt32[int8]), nil
	case tensor.Uint8:
		return sortKernel(sp, encUint8, decUint8), nil
	case tensor.Int64:
		return sortKernel(sp, encInt64, decInt64), nil
	}
	return nil, fmt.Errorf("%w: %v of %v", errUnsupported, n.Op(), x.DType())
}

type sortPlan struct {
	g    scanGeom
	mode sortMode
	desc bool
	k    int
}

// sortBufs is one part's scratch: two key and two index buffers of a
// line's length, and the radix histograms.
type sortBufs[K sortKey] struct {
	k0, k1 []K
	i0, i1 []uint32
	hist   [8][256]uint32
	hist11 [3][2048]uint32
}

func sortKernel[T elem, K sortKey](sp sortPlan, enc encoder[T, K], dec decoder[T, K]) *kernel {
	g := sp.g
	L := g.A
	lines := g.outer * g.inner
	var flip K
	if sp.desc {
		flip = ^flip
	}
	heap := sp.mode == modeTopK && sp.k*topKHeapRatio <= L
	return &kernel{bind: func(a *args) func() {
		if P := a.Threads(); sp.mode == modeSort && L >= parSortMin && lines < P {
			// Fewer lines than workers: each line's passes in parallel.
			s := newParSort(a, sp, enc, dec, flip, P)
			return func() {
				for line := range lines {
					if !s.sortLine(line/g.inner*L*g.inner + line%g.inner) {
						return
					}
				}
			}
		}
		parts := min(a.Threads(), max(lines, 1))
		if heap {
			parts = a.Threads() // a split TopK's pieces
		}
		bufs := make([]*sortBufs[K], parts)
		tvs := make([][]T, parts) // TopK's heap: the root's value, per part
		for i := range bufs {
			b := &sortBufs[K]{}
			if heap {
				b.k0, b.i0, b.k1 = make([]K, sp.k), make([]uint32, sp.k), make([]K, 1)
			} else {
				b.k0, b.k1 = make([]K, L), make([]K, L)
				if sp.mode != modeSort {
					b.i0, b.i1 = make([]uint32, L), make([]uint32, L)
				}
			}
			bufs[i] = b
			tvs[i] = make([]T, 1)
		}
		l := a.Loop(func(lo, hi, part int) {
			x := as[T](a.In(0))
			b := bufs[part]
			work := 0
			for line := lo; line < hi; line++ {
				if work += L; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				if L == 0 || sp.k == 0 {
					continue
				}
				o, in := line/g.inner, line%g.inner
				base := o*L*g.inner + in
				obase := o*sp.k*g.inner + in
				if heap {
					topKHeap(b, tvs[part], x, base, g.inner, L, sp.k, flip, enc, dec)
					writeIndices(as[int64](a.Out()), obase, g.inner, b.i0[:sp.k])
					continue
				}
				keys := b.k0[:L]
				special := enc(keys, x, base, g.inner, flip)
				if sp.mode == modeSort {
					ks, _ := radixSort(b, keys, b.k1[:L], nil, nil)
					y := as[T](a.Out())
					dec(y, base, g.inner, ks, flip)
					if special {
						fixSpecials(y, x, base, g.inner, L)
					}
					continue
				}
				idx := b.i0[:L]
				for i := range idx {
					idx[i] = uint32(i)
				}
				_, is := radixSort(b, keys, b.k1[:L], idx, b.i1[:L])
				writeIndices(as[int64](a.Out()), obase, g.inner, is[:sp.k])
			}
		})
		if heap {
			if split := topKSplit(a.Threads(), lines, L, sp.k); split > 1 {
				return topKSplitRun(a, sp, split, bufs, tvs, enc, dec)
			}
		}
		return func() { l.Run(lines, max(1, grainElems/max(1, 4*L)), 0) }
	}}
}

// topKChunk is the fewest elements of a line one part of a split TopK
// selects from: 256K. Every piece costs more than its share of the
// scan (about 37 µs each for k 100 on this machine, measured with the
// pool forced to 4-16 workers on 2 CPUs: 1M elements took 289 µs in 2
// pieces, 349 µs in 6 and 805 µs in 16), so a piece must be long enough
// to pay for itself; with 1<<15 a 1M line was cut into as many pieces
// as there were threads.
const topKChunk = 1 << 18

// topKSplit returns how many pieces each line of a heap TopK is cut into
// so that every thread has work when the lines are fewer than the
// threads: 1 when they are not, or when the pieces would be short (under
// topKChunk elements, or too few for the heap: k*topKHeapRatio).
func topKSplit(threads, lines, L, k int) int {
	if lines >= threads || k == 0 {
		return 1
	}
	return max(1, min((threads+lines-1)/lines, L/max(topKChunk, k*topKHeapRatio)))
}

// topKSplitRun is TopK by heap with each line cut into split pieces: a
// first loop selects the k best pairs of every piece (pieces in
// parallel), a second merges each line's split sorted lists into its k
// best. The pieces are fixed by the shapes and the thread count, and the
// merge picks by (key, index), so the result is the unsplit one.
func topKSplitRun[T elem, K sortKey](a *args, sp sortPlan, split int, bufs []*sortBufs[K], tvs [][]T, enc encoder[T, K], dec decoder[T, K]) func() {
	g, k := sp.g, sp.k
	L, lines := g.A, g.outer*g.inner
	items := lines * split
	var flip K
	if sp.desc {
		flip = ^flip
	}
	ck, ci := make([]K, items*k), make([]uint32, items*k)
	heads := make([][]int, len(bufs))
	for i := range heads {
		heads[i] = make([]int, split)
	}
	pick := a.Loop(func(lo, hi, part int) {
		x := as[T](a.In(0))
		b := bufs[part]
		for it := lo; it < hi; it++ {
			if a.Stopped() {
				return
			}
			line, c := it/split, it%split
			c0, c1 := c*L/split, (c+1)*L/split
			o, in := line/g.inner, line%g.inner
			base := o*L*g.inner + in + c0*g.inner
			topKHeap(b, tvs[part], x, base, g.inner, c1-c0, k, flip, enc, dec)
			copy(ck[it*k:(it+1)*k], b.k0[:k])
			for r, j := range b.i0[:k] {
				ci[it*k+r] = j + uint32(c0)
			}
		}
	})
	merge := a.Loop(func(lo, hi, part int) {
		y := as[int64](a.Out())
		h := heads[part]
		for line := lo; line < hi; line++ {
			clear(h)
			o, in := line/g.inner, line%g.inner
			q := o*k*g.inner + in
			for range k {
				best := -1
				for c, r := range h {
					if r == k {
						continue
					}
					p := (line*split+c)*k + r
					if best < 0 {
						best = c
						continue
					}
					bp := (line*split+best)*k + h[best]
					if pairLess(ck[p], ci[p], ck[bp], ci[bp]) {
						best = c
					}
				}
				y[q] = int64(ci[(line*split+best)*k+h[best]])
				h[best]++
				q += g.inner
			}
		}
	})
	return func() {
		pick.Run(items, 1, 0)
		merge.Run(lines, max(1, grainElems/max(1, k*split)), 0)
	}
}

func writeIndices(y []int64, p0, stride int, idx []uint32) {
	p := p0
	for _, i := range idx {
		y[p] = int64(i)
		p += stride
	}
}

// fixSpecials rewrites the zeros and NaNs of a sorted float line y with
// the input's, in input order: their keys are shared (-0 and +0, every
// NaN), so the decoded ones lost their signs and payloads, and a stable
// sort keeps them in input order within their runs.
func fixSpecials[T elem](y, x []T, p0, stride, L int) {
	zi, ni := 0, 0 // the next zero and NaN of the input line
	next := func(i int, nan bool) int {
		for ; i < L; i++ {
			v := x[p0+i*stride]
			if (nan && v != v) || (!nan && v == 0) {
				return i
			}
		}
		return L
	}
	zi, ni = next(0, false), next(0, true)
	for r := range L {
		q := p0 + r*stride
		switch v := y[q]; {
		case v == 0 && zi < L:
			y[q] = x[p0+zi*stride]
			zi = next(zi+1, false)
		case v != v && ni < L:
			y[q] = x[p0+ni*stride]
			ni = next(ni+1, true)
		}
	}
}

// radixSort sorts keys stably, and idx along with them when idx is not
// nil, using tk and ti as the other buffers; it returns the buffers that
// hold the result.
func radixSort[K sortKey](b *sortBufs[K], keys, tk []K, idx, ti []uint32) ([]K, []uint32) {
	n := len(keys)
	if n <= sortSmall {
		insertionSort(keys, idx)
		return keys, idx
	}
	W := int(unsafe.Sizeof(keys[0]))
	if W == 4 && n >= radix11 && idx == nil {
		return radixSort11(&b.hist11, keys, tk, idx, ti)
	}
	h := &b.hist
	for d := range W {
		h[d] = [256]uint32{}
	}
	if W == 4 {
		for _, k := range keys {
			k32 := uint32(k)
			h[0][k32&255]++
			h[1][k32>>8&255]++
			h[2][k32>>16&255]++
			h[3][k32>>24]++
		}
	} else {
		for _, k := range keys {
			for d := range 8 {
				h[d][k>>(8*d)&255]++
			}
		}
	}
	for d := range W {
		if h[d][keys[0]>>(8*d)&255] == uint32(n) {
			continue // every key has this byte
		}
		keys, tk, idx, ti = radixPass(h[d][:], keys, tk, idx, ti, uint(8*d), 255)
	}
	return keys, idx
}

// radix11 is the shortest line of 32-bit keys sorted (keys alone: Sort)
// in three passes of 11 bits (11, 11, 10) rather than four of 8: fewer
// passes over memory, once the line is long enough to pay for the
// 2048-bucket histograms. With indices (ArgSort, TopK) the twice wider
// scatter did not gain (noisy measurements; see the note of issue 14).
const radix11 = 1 << 16

// radixSort11 is radixSort for 32-bit keys in three passes of 11 bits.
func radixSort11[K sortKey](h *[3][2048]uint32, keys, tk []K, idx, ti []uint32) ([]K, []uint32) {
	n := len(keys)
	*h = [3][2048]uint32{}
	for _, k := range keys {
		k32 := uint32(k)
		h[0][k32&2047]++
		h[1][k32>>11&2047]++
		h[2][k32>>22]++
	}
	for d := range 3 {
		if h[d][keys[0]>>(11*d)&2047] == uint32(n) {
			continue // every key has these bits
		}
		keys, tk, idx, ti = radixPass(h[d][:], keys, tk, idx, ti, uint(11*d), 2047)
	}
	return keys, idx
}

// radixPass is one pass of the radix sorts: hd, the histogram of the
// digit (keys>>sh)&mask, becomes the digits' offsets, and keys (idx
// along, when not nil) are scattered stably into tk (ti). It returns the
// buffers swapped: the sorted ones first.
func radixPass[K sortKey](hd []uint32, keys, tk []K, idx, ti []uint32, sh uint, mask K) ([]K, []K, []uint32, []uint32) {
	var sum uint32
	for j := range hd {
		c := hd[j]
		hd[j] = sum
		sum += c
	}
	if idx == nil {
		for _, k := range keys {
			j := k >> sh & mask
			tk[hd[j]] = k
			hd[j]++
		}
		return tk, keys, idx, ti
	}
	for i, k := range keys {
		j := k >> sh & mask
		o := hd[j]
		tk[o] = k
		ti[o] = idx[i]
		hd[j] = o + 1
	}
	return tk, keys, ti, idx
}

// insertionSort sorts a short line stably by key (idx along, when not
// nil).
func insertionSort[K sortKey](keys []K, idx []uint32) {
	for i := 1; i < len(keys); i++ {
		k := keys[i]
		j := i
		for j > 0 && keys[j-1] > k {
			keys[j] = keys[j-1]
			j--
		}
		keys[j] = k
		if idx != nil {
			v := idx[i]
			copy(idx[j+1:i+1], idx[j:i])
			idx[j] = v
		}
	}
}

// topKHeap selects the k smallest (key, index) pairs of a line of L
// elements (for the largest values the keys are flipped) into b.k0,
// b.i0, sorted. The heap is a max-heap of the pairs kept, so its root is
// the worst; an element replaces it only when its key is smaller (an
// equal key comes later: a larger index). The scan compares elements with
// the root's value t in the element type, without encoding them: x is
// better than t when x > t, or x is NaN and t is not (largest; mirrored
// for smallest), which is exactly key(x) < key(t) (-0 and +0 are equal
// both ways); only the few elements that pass are encoded. t (one
// element) holds the root's value and b.k1 (one key) an element's key:
// buffers of the part, so that nothing is allocated per run.
func topKHeap[T elem, K sortKey](b *sortBufs[K], t []T, x []T, p0, stride, L, k int, flip K, enc encoder[T, K], dec decoder[T, K]) {
	hk, hi := b.k0[:k], b.i0[:k]
	enc(hk, x, p0, stride, flip)
	for i := range hi {
		hi[i] = uint32(i)
	}
	for c := k/2 - 1; c >= 0; c-- {
		siftFrom(hk, hi, c)
	}
	largest := flip != 0
	one := b.k1[:1]
	t = t[:1]
	dec(t, 0, 1, hk[:1], flip)
	tv := t[0]
	switch {
	case stride == 1 && largest:
		for i, v := range x[p0+k : p0+L] {
			if v > tv || (v != v && tv == tv) {
				tv = heapOffer(hk, hi, one, t, x, p0+k+i, 1, k+i, flip, enc, dec)
			}
		}
	case stride == 1:
		for i, v := range x[p0+k : p0+L] {
			if v < tv || (tv != tv && v == v) {
				tv = heapOffer(hk, hi, one, t, x, p0+k+i, 1, k+i, flip, enc, dec)
			}
		}
	default:
		for i := k; i < L; i++ {
			v := x[p0+i*stride]
			if (largest && (v > tv || (v != v && tv == tv))) || (!largest && (v < tv || (tv != tv && v == v))) {
				tv = heapOffer(hk, hi, one, t, x, p0+i*stride, stride, i, flip, enc, dec)
			}
		}
	}
	// Pop the worst to the back until the heap is empty: sorted ascending.
	for n := k - 1; n > 0; n-- {
		rk, ri := hk[0], hi[0]
		siftDown(hk[:n], hi[:n], hk[n], hi[n])
		hk[n], hi[n] = rk, ri
	}
}

// heapOffer encodes the element of x at position p (index i of its line)
// into one and, when its key is smaller than the root's, replaces the
// root; it returns the root's value (decoded through t).
//
//go:noinline
func heapOffer[T elem, K sortKey](hk []K, hi []uint32, one []K, t, x []T, p, stride, i int, flip K, enc encoder[T, K], dec decoder[T, K]) T {
	enc(one, x, p, stride, flip)
	if one[0] < hk[0] {
		siftDown(hk, hi, one[0], uint32(i))
		dec(t, 0, 1, hk[:1], flip)
	}
	return t[0]
}

// pairLess orders (key, index) pairs.
func pairLess[K sortKey](ka K, ia uint32, kb K, ib uint32) bool {
	return ka < kb || (ka == kb && ia < ib)
}

// siftFrom moves the pair at c down the max-heap hk, hi to its place.
func siftFrom[K sortKey](hk []K, hi []uint32, c int) {
	siftDownAt(hk, hi, hk[c], hi[c], c)
}

// siftDown replaces the root of the max-heap hk, hi with (k, i) and
// restores the heap.
func siftDown[K sortKey](hk []K, hi []uint32, k K, i uint32) { siftDownAt(hk, hi, k, i, 0) }

// siftDownAt puts (k, i) at c and moves it down to its place.
func siftDownAt[K sortKey](hk []K, hi []uint32, k K, i uint32, c int) {
	n := len(hk)
	for {
		l := 2*c + 1
		if l >= n {
			break
		}
		if r := l + 1; r < n && pairLess(hk[l], hi[l], hk[r], hi[r]) {
			l = r
		}
		if !pairLess(k, i, hk[l], hi[l]) {
			break
		}
		hk[c], hi[c] = hk[l], hi[l]
		c = l
	}
	hk[c], hi[c] = k, i
}

// ---- SearchSorted ----

func prepareSearchSorted(n *graph.Node) (*kernel, error) {
	right := n.Attr().(opdef.SearchSortedAttr).Right
	s := n.Input(0).Shape()
	M := s[len(s)-1]
	rows := len(s) > 1
	V := 1
	if r := n.Rank(); r > 0 {
		V = n.Shape()[r-1]
	}
	N := n.Shape().Size()
	switch n.Input(0).DType() {
	case tensor.Float32:
		return searchKernel[float32](M, V, N, rows, right), nil
	case tensor.Float64:
		return searchKernel[float64](M, V, N, rows, right), nil
	case tensor.Int32:
		return searchKernel[int32](M, V, N, rows, right), nil
	case tensor.Int64:
		return searchKernel[int64](M, V, N, rows, right), nil
	case tensor.Int16:
		return searchKernel[int16](M, V, N, rows, right), nil
	case tensor.Int8:
		return searchKernel[int8](M, V, N, rows, right), nil
	case tensor.Uint8:
		return searchKernel[uint8](M, V, N, rows, right), nil
	}
	return nil, fmt.Errorf("%w: SearchSorted of %v", errUnsupported, n.Input(0).DType())
}

// sortBefore is the sorting order on elements: a < b, or b NaN and a not
// (for integers, a < b).
func sortBefore[T elem](a, b T) bool { return a < b || (b != b && a == a) }

// searchKernel bisects a row of M sorted elements for each value, as the
// reference does (ops/sort.go's refSearchSorted).
func searchKernel[T elem](M, V, N int, rows, right bool) *kernel {
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			s, v, y := as[T](a.In(0)), as[T](a.In(1)), as[int64](a.Out())
			for p := lo; p < hi; p++ {
				row := 0
				if rows {
					row = p / V * M
				}
				x := v[p]
				lo, hi := 0, M
				for lo < hi {
					mid := int(uint(lo+hi) >> 1)
					e := s[row+mid]
					var before bool
					if right {
						before = !sortBefore(x, e)
					} else {
						before = sortBefore(e, x)
					}
					if before {
						lo = mid + 1
					} else {
						hi = mid
					}
				}
				y[p] = int64(lo)
			}
		})
		logM := 1
		for m := M; m > 1; m >>= 1 {
			logM++
		}
		return func() { l.Run(N, max(1, grainElems/(4*logM)), checkElems) }
	}}
}

package cpu

// Sliding-window MaxPool. When a pool's stride along an axis is a
// multiple of its dilation, every window's taps along that axis lie on
// one lattice (the coordinates phase, phase+dil, ... of the input), and
// the windows are runs of k lattice points that start m = stride/dil
// points apart. The maximum of every run then costs about three
// comparisons per point (van Herk and Gil-Werman: the maxima of each
// block of k points from its start and from its end, one of each per
// window) instead of k, and a 2-D window is the maximum along H of the
// maxima along W (the windows are boxes). PyTorch's and ONNX's large
// dilated pools (pytorch-converted/test_MaxPool2d_stride_padding_dilation:
// 60x80 taps, dilation and stride 10) are where this pays.
//
// The values are argMax's bits: maxStep keeps the first of equal maxima
// (-0 before +0 as they come) and takes a later NaN, and that fold is
// associative, so any grouping of a window's taps in their row-major
// order gives the same result; a window without in-bounds taps is low.

// slideAxis is one pooled axis seen on its lattice.
type slideAxis struct {
	phase, dil int // input coordinate of lattice point i: phase + i·dil
	n          int // lattice points inside the input
	first      int // lattice index of output 0's first tap (may be negative)
	m, k       int // lattice points between windows' starts; taps per window
}

// slidePlan is the lattices of H and W (the depth dim neither pooled nor
// padded), or nil when a pool does not take this path.
type slidePlan struct {
	h, w slideAxis
	rows int // output rows of one item: its lattice rows × out[2] fit slideTile
}

// slideTile bounds the elements of an item's maxima along W (per part).
const slideTile = 1 << 14

// minSlideTaps is the window size from which the sliding path replaces
// the direct loops (a 3x3 window is cheaper to scan).
const minSlideTaps = 16

// slidePool lets the benchmarks compare the sliding path with the direct
// loops (SetSlidePool in the tests).
var slidePool = true

func newSlidePlan(p *poolPlan) *slidePlan {
	if !slidePool || p.fast2x2 || p.in[0] != 1 || p.out[0] != 1 || p.k[1]*p.k[2] < minSlideTaps {
		return nil
	}
	var ax [2]slideAxis
	for j := 1; j <= 2; j++ {
		d := p.dil[j]
		if p.out[j] > 1 && p.s[j]%d != 0 {
			return nil
		}
		st := p.start[j][0]
		phase := ((st % d) + d) % d
		n := 0
		if p.in[j] > phase {
			n = (p.in[j] - phase + d - 1) / d
		}
		ax[j-1] = slideAxis{phase: phase, dil: d, n: n, first: (st - phase) / d, m: max(p.s[j]/d, 1), k: p.k[j]}
	}
	if ax[0].n == 0 || ax[1].n == 0 {
		return nil // every window is empty: the direct loops write low
	}
	sp := &slidePlan{h: ax[0], w: ax[1]}
	ow := p.out[2]
	if ax[0].k*ow > 1<<20 {
		return nil // one row's maxima along W would not fit a part's scratch
	}
	sp.rows = 1
	if per := slideTile / ow; per > ax[0].k {
		sp.rows = (per-ax[0].k)/ax[0].m + 1
	}
	return sp
}

// maxStep is argMax's step: v, which comes after m, replaces it when it is
// greater or NaN (so the first of equal maxima stays: -0 before a later +0).
func maxStep[T elem](m, v T) T {
	if v > m || v != v {
		return v
	}
	return m
}

// slideMax writes dst[(o-o0)·ds] for outputs o in [o0, o1): the maximum
// over lattice points [first+o·m, first+o·m+k) ∩ [0, n) of the sequence
// src[i·ss], low where that is empty. pre and suf hold at least the
// points the outputs reach.
func slideMax[T elem](src []T, ss, n int, dst []T, ds, o0, o1, first, m, k int, low T, pre, suf []T) {
	a, b := max(0, first+o0*m), min(n, first+(o1-1)*m+k)
	if a >= b {
		for o := o0; o < o1; o++ {
			dst[(o-o0)*ds] = low
		}
		return
	}
	// pre[i-a]: the maximum from i's block start to i; suf[i-a]: from i to
	// its block's end (blocks of k points from a).
	for bs := a; bs < b; bs += k {
		be := min(bs+k, b)
		acc := low
		for i := bs; i < be; i++ {
			acc = maxStep(acc, src[i*ss])
			pre[i-a] = acc
		}
		acc = low
		for i := be - 1; i >= bs; i-- {
			// a right fold: x[i] comes before the maximum of the rest
			acc = maxStep(src[i*ss], acc)
			suf[i-a] = acc
		}
	}
	for o := o0; o < o1; o++ {
		lo, hi := max(a, first+o*m), min(b, first+o*m+k)
		v := low
		switch {
		case lo >= hi:
		case (lo-a)/k != (hi-1-a)/k:
			v = maxStep(suf[lo-a], pre[hi-1-a])
		case (lo-a)%k == 0:
			v = pre[hi-1-a]
		case hi == min(a+((lo-a)/k+1)*k, b):
			v = suf[lo-a]
		default: // not a run of the blocks' ends: the taps themselves
			for i := lo; i < hi; i++ {
				v = maxStep(v, src[i*ss])
			}
		}
		dst[(o-o0)*ds] = v
	}
}

// slideKernel is MaxPool on the sliding path: items are (plane, block of
// sp.rows output rows, block of columns); an item takes the maxima along W
// of the lattice rows its windows reach, then along H.
func slideKernel[T elem](p *poolPlan, sp *slidePlan, low T) *kernel {
	OH, OW, W := p.out[1], p.out[2], p.in[2]
	rb := (OH + sp.rows - 1) / sp.rows
	span := max(sp.w.n, (sp.rows-1)*sp.h.m+sp.h.k)
	return &kernel{bind: func(a *args) func() {
		// Column blocks only where the row blocks are too few to give
		// every thread two: each block takes its own maxima along W of
		// the lattice rows (k-1 points of overlap per row and block), so
		// not where that overlap would be more than a block's own points
		// (the 60x80 window of 25 columns: 4 blocks would each read 86
		// of a row's 100 points).
		cb := 1
		if n := p.planes * rb; n < 2*a.Threads() {
			cb = min(OW, (2*a.Threads()+n-1)/n)
		}
		bw := (OW + cb - 1) / cb
		if bw*sp.w.m < sp.w.k {
			cb, bw = 1, OW
		}
		cb = (OW + bw - 1) / bw
		items := p.planes * rb * cb
		// an item's cost: about three steps per lattice point it reads
		// (the blocks' maxima from both ends, then the windows') and its
		// outputs
		pts := min(sp.h.n, (sp.rows-1)*sp.h.m+sp.h.k) * min(sp.w.n, (bw-1)*sp.w.m+sp.w.k)
		per := max(1, 3*pts+sp.rows*bw)
		grain := max(1, grainElems/per)
		step := max(1, checkElems/per)
		type scratch struct{ t, pre, suf []T }
		sc := make([]scratch, a.Threads())
		for i := range sc {
			sc[i] = scratch{make([]T, ((sp.rows-1)*sp.h.m+sp.h.k)*bw), make([]T, span), make([]T, span)}
		}
		l := a.Loop(func(lo, hi, part int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			s := &sc[part]
			for it := lo; it < hi; it++ {
				i, rest := it/(rb*cb), it%(rb*cb)
				q0 := rest / cb * sp.rows
				q1 := min(OH, q0+sp.rows)
				c0 := rest % cb * bw
				c1 := min(OW, c0+bw)
				nc := c1 - c0
				xp := x[i*p.inPlane : (i+1)*p.inPlane]
				yp := y[i*p.outPlane : (i+1)*p.outPlane]
				h := sp.h
				ha, hb := max(0, h.first+q0*h.m), min(h.n, h.first+(q1-1)*h.m+h.k)
				if ha >= hb {
					for q := q0; q < q1; q++ {
						for c := c0; c < c1; c++ {
							yp[q*OW+c] = low
						}
					}
					continue
				}
				w := sp.w
				for hl := ha; hl < hb; hl++ {
					row := (h.phase + hl*h.dil) * W
					slideMax(xp[row+w.phase:], w.dil, w.n, s.t[(hl-ha)*nc:], 1, c0, c1, w.first, w.m, w.k, low, s.pre, s.suf)
				}
				for c := c0; c < c1; c++ {
					slideMax(s.t[c-c0:], nc, hb-ha, yp[q0*OW+c:], OW, q0, q1, h.first-ha, h.m, h.k, low, s.pre, s.suf)
				}
			}
		})
		return func() { l.Run(items, grain, step) }
	}}
}

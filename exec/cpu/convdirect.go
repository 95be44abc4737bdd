package cpu

import (
	"github.com/loomgraph/loom/internal/gemm"
	"github.com/loomgraph/loom/internal/stop"
)

// Stride-1 convolutions with few input channels per group (an image
// network's first layers: cg below shiftMinChannels) on machines with
// AVX-512 read their zero-padded input in place: output row (a0, a1) of
// group g is
//
//	y[o, a0, a1, :] = Σ_(c,t) w[g][o, c, t] · xpad[c·pv + (a0·p1 + a1)·p2 + shift[t] :]
//
// one internal/gemm.ShiftPlan.Run per row (the filter transposed once per run as
// its A operand, one offset per (channel, tap) as its B rows). Nothing is
// packed or copied but the padded image, and each output element is
// written once, straight into y. The column-matrix products of
// convShiftColKernel remain for other machines and for float types the
// kernels lack.

// newShiftDirectGeo is the padded layout of a convolution the shifted
// kernels take, or false.
func newShiftDirectGeo[T float32 | float64](g *convGeo) (*shiftGeo, bool) {
	if !gemm.ShiftAvailable[T]() || g.identity || g.cg >= shiftMinChannels || g.og < colMinOut {
		return nil, false
	}
	return shiftGeoOf(g, g.cg, g.og, 0)
}

// directRows is the output rows a work item takes: whole images when
// there are enough of them to share between threads, else fewer rows,
// so that a single image still runs on every thread.
func directRows(g *convGeo, threads int) int {
	rows := g.y[0] * g.y[1]
	items := g.n * g.groups
	if items >= 4*threads {
		return rows
	}
	per := (4*threads + items - 1) / items
	return max(4, (rows+per-1)/per)
}

// convShiftDirectKernel: items are (batch, group, block of output rows);
// each pads its image's group and computes its rows. The epilogue (a
// fused elementwise step that consumes y; epilogue.go) runs over each
// item's rows of every output channel right after them, or, when it is a
// per-channel bias and ReLU (args.epiChan), inside the shifted products
// as they store each row.
func convShiftDirectKernel[T float32 | float64](g *convGeo, sh *shiftGeo) *kernel {
	lda := gemm.ShiftRows(g.og)
	off := make([]int32, g.ck)
	for c := 0; c < g.cg; c++ {
		for t, s := range sh.shift {
			off[c*g.kv+t] = int32(c*sh.pv + s)
		}
	}
	rows := g.y[0] * g.y[1]
	sp := gemm.NewShift[T](g.og, g.y[2], lda, g.yv, off)
	return &kernel{epilogue: true, chanEpilogue: true, bind: func(a *args) func() {
		per := directRows(g, a.Threads())
		blocks := (rows + per - 1) / per
		xpad := make([][]T, a.Threads())
		for i := range xpad {
			// The borders stay zero: every item writes the same interior.
			xpad[i] = make([]T, g.cg*sh.pv)
		}
		// wt[g] is w[g] transposed (ck × lda, the rows past og zero), once
		// per run: the weights may change between runs.
		wt := make([]T, g.groups*g.ck*lda)
		l := a.Loop(func(lo, hi, part int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			done := a.Done()
			xp := xpad[part]
			var bias []T // the bias and ReLU applied as each row is stored
			relu := false
			if ce := a.epiChan; ce != nil {
				bias, relu = as[T](ce.Bias()), ce.Relu
			}
			for it := lo; it < hi; it++ {
				if stop.Done(done) {
					return
				}
				b, rest := it/(g.groups*blocks), it%(g.groups*blocks)
				gr, blk := rest/blocks, rest%blocks
				padInto(g, sh, x[(b*g.c+gr*g.cg)*g.sv:(b*g.c+(gr+1)*g.cg)*g.sv], xp)
				wg := wt[gr*g.ck*lda : (gr+1)*g.ck*lda]
				y0 := (b*g.o + gr*g.og) * g.yv
				yg := y[y0 : y0+g.og*g.yv]
				r0, r1 := blk*per, min(rows, (blk+1)*per)
				var bg []T
				if bias != nil {
					bg = bias[gr*g.og : (gr+1)*g.og]
				}
				for r := r0; r < r1; r++ {
					a0, a1 := r/g.y[1], r%g.y[1]
					q := (a0*sh.p[1] + a1) * sh.p[2]
					sp.RunEpi(wg, xp[q:], yg[r*g.y[2]:], bg, relu)
				}
				switch {
				case a.epi == nil:
				case r0 == 0 && r1 == rows:
					a.epi(part, y0, y0+g.og*g.yv) // the group's whole block
				default:
					for o := 0; o < g.og; o++ {
						a.epi(part, y0+o*g.yv+r0*g.y[2], y0+o*g.yv+r1*g.y[2])
					}
				}
			}
		})
		items := g.n * g.groups * blocks
		return func() {
			w := as[T](a.In(1))
			for gr := 0; gr < g.groups; gr++ {
				for o := 0; o < g.og; o++ {
					for r := 0; r < g.ck; r++ {
						wt[(gr*g.ck+r)*lda+o] = w[(gr*g.og+o)*g.ck+r]
					}
				}
			}
			l.Run(items, 1, 0)
		}
	}}
}

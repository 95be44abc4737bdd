package cpu

import "github.com/loomgraph/loom/internal/stop"

// Stride-1 convolutions with few input channels per group (an image
// network's first layer: cg = 1 to 3) and enough output channels: the
// per-tap products of convShiftKernel would have k = cg, and im2col's row
// segments are short. Here the input of one image and group is copied
// into the zero-padded layout of shiftGeo, and its column matrix on the
// padded positions is cg·kv contiguous copies: row (c, t) is
// xpad[c][shift[t]:]. Then
//
//	Conv:           y'     = w[g] · col          (og × ck · ck × q: one product per chunk)
//	ConvFilterGrad: dw[g] += dy' · colᵀ          (og × q · q × ck: one product per image)
//
// with y' and dy' on the padded positions (the dropped columns are
// computed and skipped, or zero).

// Thresholds of the column products: few input channels (from
// shiftMinChannels up, the per-tap products are better), and enough
// output channels to fill the rows of a micro-kernel (fewer, as in a
// depthwise convolution, run the depthwise loops).
const colMaxChannels, colMinOut = shiftMinChannels - 1, 8

func newShiftColGeo(g *convGeo) (*shiftGeo, bool) {
	if g.identity || g.cg > colMaxChannels || g.og < colMinOut {
		return nil, false
	}
	return shiftGeoOf(g, g.cg, g.og, shiftMinUseful)
}

// padInto copies the cg planes of xg into xp's interiors (the borders
// stay zero: every call writes the same places).
func padInto[T float32 | float64](g *convGeo, sh *shiftGeo, xg, xp []T) {
	for c := 0; c < g.cg; c++ {
		for i0 := 0; i0 < g.s[0]; i0++ {
			for i1 := 0; i1 < g.s[1]; i1++ {
				dst := c*sh.pv + ((i0+g.pl[0])*sh.p[1]+i1+g.pl[1])*sh.p[2] + g.pl[2]
				src := c*g.sv + (i0*g.s[1]+i1)*g.s[2]
				copy(xp[dst:dst+g.s[2]], xg[src:src+g.s[2]])
			}
		}
	}
}

// shiftCols writes the column matrix of positions [q0, q0+cnt) on the
// padded layout: row (c, t) is xp[c·pv + q0 + shift[t]:][:cnt].
func shiftCols[T float32 | float64](g *convGeo, sh *shiftGeo, xp []T, q0, cnt int, col []T) {
	for c := 0; c < g.cg; c++ {
		for t, off := range sh.shift {
			r := c*g.kv + t
			src := c*sh.pv + q0 + off
			copy(col[r*cnt:(r+1)*cnt], xp[src:src+cnt])
		}
	}
}

// convShiftColKernel: items are (batch, group); each pads its input, then
// for each chunk of padded positions builds the column block, multiplies
// w[g] by it and copies the kept columns to y.
func convShiftColKernel[T float32 | float64](g *convGeo, sh *shiftGeo, plan planFn[T]) *kernel {
	pc := min(sh.q, max(64, colTarget/g.ck/64*64))
	chunks := (sh.q + pc - 1) / pc
	tail := sh.q - (chunks-1)*pc
	full, last := plan(false, false, g.og, pc, g.ck), plan(false, false, g.og, tail, g.ck)
	return &kernel{bind: func(a *args) func() {
		wsLen := max(full.WorkspaceFloats(), last.WorkspaceFloats())
		xpad, col, blk, ws := make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			xpad[i], col[i], blk[i], ws[i] = make([]T, g.cg*sh.pv), make([]T, g.ck*pc), make([]T, g.og*pc), make([]T, wsLen)
		}
		l := a.Loop(func(lo, hi, part int) {
			x, w, y := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			done := a.Done()
			xp, cl, bk := xpad[part], col[part], blk[part]
			for it := lo; it < hi; it++ {
				if stop.Done(done) {
					return
				}
				b, gr := it/g.groups, it%g.groups
				padInto(g, sh, x[(b*g.c+gr*g.cg)*g.sv:(b*g.c+(gr+1)*g.cg)*g.sv], xp)
				wg := w[gr*g.og*g.ck : (gr+1)*g.og*g.ck]
				yg := y[(b*g.o+gr*g.og)*g.yv : (b*g.o+(gr+1)*g.og)*g.yv]
				for ch := 0; ch < chunks; ch++ {
					q0, cnt, p := ch*pc, pc, full
					if ch == chunks-1 {
						cnt, p = tail, last
					}
					shiftCols(g, sh, xp, q0, cnt, cl)
					if !runTasks(done, p, 1, wg, g.ck, cl, cnt, 0, bk, cnt, ws[part]) {
						return
					}
					keepColumns(g, sh, yg, bk, q0, cnt)
				}
			}
		})
		items := g.n * g.groups
		return func() { l.Run(items, 1, 0) }
	}}
}

// convShiftColFilterGradKernel: items are (batch slice, group), each
// summing its images' products dy'·colᵀ into its own partial gradient
// (dw's layout); the partials are then added in order.
func convShiftColFilterGradKernel[T float32 | float64](g *convGeo, sh *shiftGeo, plan planFn[T]) *kernel {
	p := plan(false, true, g.og, g.ck, sh.q)
	dwLen := g.o * g.ck
	slices := max(1, min(g.n, fgSlices, fgPartial/max(dwLen, 1)))
	return &kernel{bind: func(a *args) func() {
		xpad, col, dyp, ws := make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			// Borders and dropped columns stay zero: every image writes
			// the same places.
			xpad[i], col[i], dyp[i], ws[i] = make([]T, g.cg*sh.pv), make([]T, g.ck*sh.q), make([]T, g.og*sh.q), make([]T, p.WorkspaceFloats())
		}
		partial := make([]T, slices*dwLen)
		l := a.Loop(func(lo, hi, part int) {
			x, dy := as[T](a.In(0)), as[T](a.In(1))
			done := a.Done()
			xp, cl, dp := xpad[part], col[part], dyp[part]
			for it := lo; it < hi; it++ {
				sl, gr := it/g.groups, it%g.groups
				pt := partial[sl*dwLen+gr*g.og*g.ck : sl*dwLen+(gr+1)*g.og*g.ck]
				clear(pt)
				for b := sl * g.n / slices; b < (sl+1)*g.n/slices; b++ {
					if stop.Done(done) {
						return
					}
					padInto(g, sh, x[(b*g.c+gr*g.cg)*g.sv:(b*g.c+(gr+1)*g.cg)*g.sv], xp)
					shiftCols(g, sh, xp, 0, sh.q, cl)
					dyg := dy[(b*g.o+gr*g.og)*g.yv : (b*g.o+(gr+1)*g.og)*g.yv]
					for o := 0; o < g.og; o++ {
						for a0 := 0; a0 < g.y[0]; a0++ {
							for a1 := 0; a1 < g.y[1]; a1++ {
								dst := o*sh.q + (a0*sh.p[1]+a1)*sh.p[2]
								src := o*g.yv + (a0*g.y[1]+a1)*g.y[2]
								copy(dp[dst:dst+g.y[2]], dyg[src:src+g.y[2]])
							}
						}
					}
					if !runTasks(done, p, 1, dp, sh.q, cl, sh.q, 1, pt, g.ck, ws[part]) {
						return
					}
				}
			}
		})
		items := slices * g.groups
		return func() {
			l.Run(items, 1, 0)
			if a.Stopped() {
				return
			}
			dw := as[T](a.Out())
			copy(dw, partial[:dwLen])
			for sl := 1; sl < slices; sl++ {
				for i, v := range partial[sl*dwLen : (sl+1)*dwLen] {
					dw[i] += v
				}
			}
		}
	}}
}

// keepColumns copies the kept columns of a shifted product's block bk
// (og rows of cnt padded positions from q0) into the output group yg
// (og rows of g.yv), a run of each padded row at a time: a padded
// position is an output position when it lies below the output's size
// in its trailing two dims.
func keepColumns[T float32 | float64](g *convGeo, sh *shiftGeo, yg, bk []T, q0, cnt int) {
	q := q0
	for q < q0+cnt {
		a2 := q % sh.p[2]
		a1 := (q / sh.p[2]) % sh.p[1]
		a0 := q / (sh.p[2] * sh.p[1])
		end := min(q0+cnt, q-a2+sh.p[2])
		if a1 < g.y[1] && a2 < g.y[2] {
			n := min(end, q-a2+g.y[2]) - q
			dst := (a0*g.y[1]+a1)*g.y[2] + a2
			for o := 0; o < g.og; o++ {
				copy(yg[o*g.yv+dst:o*g.yv+dst+n], bk[o*cnt+q-q0:])
			}
		}
		q = end
	}
}

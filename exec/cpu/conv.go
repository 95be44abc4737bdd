package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/gemm"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/simd"
	"github.com/loomgraph/loom/internal/stop"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The convolutions (ops/conv.go) on the CPU, for float32 and float64, in
// 1 to 3 spatial dims (all handled as 3-D, missing leading dims of size
// 1).
//
// Each is a set of matrix products on internal/gemm over an implicit
// column matrix ("im2col"): for batch n and group g, column p of
// col[n, g] is the input patch under output position p (cg·prod(K) rows:
// channel-major, then the taps), so that
//
//	Conv:           y[n, g]  = w[g] · col[n, g]         (og × yv)
//	ConvTranspose:  col2im(w[g]ᵀ · dy[n, g])            (scatter-added into dx)
//	ConvFilterGrad: dw[g]   = Σ_n dy[n, g] · col[n, g]ᵀ  (og × cg·prod(K))
//
// The column matrix is never built whole: each work item packs the block
// of rows and output positions it needs into its own workspace (allocated
// when the kernel is bound, so a run allocates nothing) and multiplies it
// at once. A 1×1 window with stride 1 and no padding needs no columns:
// the input itself is the column matrix. Depthwise-like convolutions (one
// input channel per group, cg = 1) are direct loops over the taps.
//
// Stride-1 convolutions with many channels per group (the common 3×3
// layers) skip the column matrix altogether: the input is copied into a
// zero-padded buffer, and each tap is one product with the filter's slice
// over a shifted view of it (shiftGeo). Their input gradient is then the
// same kind of convolution of dy with the reversed filter, and their
// filter gradient one product per tap.
//
// On AVX-512 machines, stride-1 forward convolutions with few input
// channels per group read their padded input in place instead
// (convdirect.go: one internal/gemm shifted product per output row), and
// run the fused bias and activation that follow them as their epilogue
// (epilogue.go).
//
// Work is split into items whose boundaries depend on the shapes only
// (batch, group, position chunk, row block), each item computing disjoint
// outputs with a fixed order of additions, so results do not depend on the
// thread count.

// convGeo is a convolution's sizes, padded to 3 spatial dims: x [n, c,
// s...], w [o, cg, k...], y [n, o, y...].
type convGeo struct {
	n, c, o, groups, cg, og int
	s, k, y, st, dl, pl     [3]int
	sv, kv, yv, ck          int
	// identity: a 1×1 window, stride 1, no padding: col[n, g] is x[n, g].
	identity bool
}

func newConvGeo(nd *graph.Node) (*convGeo, error) {
	a, ok := nd.Attr().(opdef.ConvAttr)
	if !ok {
		return nil, fmt.Errorf("%v has no ConvAttr", nd.Op())
	}
	in0, in1, out := nd.Input(0).Shape(), nd.Input(1).Shape(), nd.Shape()
	g := &convGeo{groups: a.Groups}
	var s, k, y tensor.Shape
	switch nd.Op() {
	case ops.OpConv:
		g.n, g.c, g.o, s, k, y = in0[0], in0[1], in1[0], in0[2:], in1[2:], out[2:]
	case ops.OpConvTranspose:
		g.n, g.c, g.o, s, k, y = out[0], out[1], in1[0], out[2:], in1[2:], in0[2:]
	case ops.OpConvFilterGrad:
		g.n, g.c, g.o, s, k, y = in0[0], in0[1], in1[1], in0[2:], out[2:], in1[2:]
	default:
		return nil, fmt.Errorf("not a convolution: %v", nd.Op())
	}
	sp := len(s)
	if sp < 1 || sp > 3 || len(a.Stride) != sp {
		return nil, fmt.Errorf("convolution with %d spatial dims", sp)
	}
	g.identity = true
	for i := 0; i < 3; i++ {
		d := i - (3 - sp)
		if d < 0 {
			g.s[i], g.k[i], g.y[i], g.st[i], g.dl[i] = 1, 1, 1, 1, 1
			continue
		}
		g.s[i], g.k[i], g.y[i] = s[d], k[d], y[d]
		g.st[i], g.dl[i], g.pl[i] = a.Stride[d], a.Dilation[d], a.PadLo[d]
		if k[d] != 1 || a.Stride[d] != 1 || a.PadLo[d] != 0 || a.PadHi[d] != 0 {
			g.identity = false
		}
	}
	g.cg, g.og = g.c/g.groups, g.o/g.groups
	g.sv = g.s[0] * g.s[1] * g.s[2]
	g.kv = g.k[0] * g.k[1] * g.k[2]
	g.yv = g.y[0] * g.y[1] * g.y[2]
	g.ck = g.cg * g.kv
	return g, nil
}

// validRange is the range [lo, hi) of output indices u in [u0, u1) whose
// input index u·st + off lies in [0, s).
func validRange(u0, u1, st, off, s int) (lo, hi int) {
	lo = u0
	if off < 0 {
		lo = max(u0, (-off+st-1)/st)
	}
	hi = lo
	if s-1-off >= 0 {
		hi = min(u1, (s-1-off)/st+1)
	}
	lo = min(lo, u1)
	return lo, max(hi, lo)
}

// im2col writes rows [r0, r1) and output positions [p0, p0+cnt) of the
// column matrix of x (one batch and group: cg channels of sv elements)
// into col, row-major with row length cnt.
func im2col[T float32 | float64](g *convGeo, x []T, r0, r1, p0, cnt int, col []T) {
	y1, y2 := g.y[1], g.y[2]
	s0, s1, s2 := g.s[0], g.s[1], g.s[2]
	for r := r0; r < r1; r++ {
		c, t := r/g.kv, r%g.kv
		t2, t1, t0 := t%g.k[2], (t/g.k[2])%g.k[1], t/(g.k[2]*g.k[1])
		row := col[(r-r0)*cnt : (r-r0+1)*cnt]
		xc := x[c*g.sv : (c+1)*g.sv]
		off := t2*g.dl[2] - g.pl[2]
		flo, fhi := validRange(0, y2, g.st[2], off, s2) // of a whole row
		a, b, e := p0/(y1*y2), (p0/y2)%y1, p0%y2
		for j := 0; j < cnt; {
			seg := min(y2-e, cnt-j)
			out := row[j : j+seg]
			ia := a*g.st[0] - g.pl[0] + t0*g.dl[0]
			ib := b*g.st[1] - g.pl[1] + t1*g.dl[1]
			if ia < 0 || ia >= s0 || ib < 0 || ib >= s1 {
				clear(out)
			} else {
				xr := xc[(ia*s1+ib)*s2 : (ia*s1+ib+1)*s2]
				lo, hi := max(flo, e), min(fhi, e+seg)
				if hi < lo {
					lo, hi = e, e
				}
				if lo > e {
					clear(out[:lo-e])
				}
				if st := g.st[2]; st == 1 && lo < hi {
					// (an empty range may have lo+off < 0: no slicing then)
					copy(out[lo-e:hi-e], xr[lo+off:hi+off])
				} else {
					for u := lo; u < hi; u++ {
						out[u-e] = xr[u*st+off]
					}
				}
				if hi < e+seg {
					clear(out[hi-e:])
				}
			}
			j += seg
			e = 0
			if b++; b == y1 {
				b, a = 0, a+1
			}
		}
	}
}

// col2im adds rows [0, ck) of the column block col (output positions
// [p0, p0+cnt)) back into x (one batch and group), the transpose of
// im2col.
func col2im[T float32 | float64](g *convGeo, col []T, p0, cnt int, x []T, add func(d, a, b []T)) {
	y1, y2 := g.y[1], g.y[2]
	s0, s1, s2 := g.s[0], g.s[1], g.s[2]
	for r := 0; r < g.ck; r++ {
		c, t := r/g.kv, r%g.kv
		t2, t1, t0 := t%g.k[2], (t/g.k[2])%g.k[1], t/(g.k[2]*g.k[1])
		row := col[r*cnt : (r+1)*cnt]
		xc := x[c*g.sv : (c+1)*g.sv]
		off := t2*g.dl[2] - g.pl[2]
		a, b, e := p0/(y1*y2), (p0/y2)%y1, p0%y2
		for j := 0; j < cnt; {
			seg := min(y2-e, cnt-j)
			in := row[j : j+seg]
			ia := a*g.st[0] - g.pl[0] + t0*g.dl[0]
			ib := b*g.st[1] - g.pl[1] + t1*g.dl[1]
			if ia >= 0 && ia < s0 && ib >= 0 && ib < s1 {
				xr := xc[(ia*s1+ib)*s2 : (ia*s1+ib+1)*s2]
				lo, hi := validRange(e, e+seg, g.st[2], off, s2)
				if st := g.st[2]; st == 1 && lo < hi {
					dst := xr[lo+off : hi+off]
					add(dst, dst, in[lo-e:hi-e])
				} else {
					for u := lo; u < hi; u++ {
						xr[u*st+off] += in[u-e]
					}
				}
			}
			j += seg
			e = 0
			if b++; b == y1 {
				b, a = 0, a+1
			}
		}
	}
}

// chunkFor is the number of output positions a work item handles: about
// target elements of column block for rows rows, a multiple of 64 (whole
// micro-kernel columns of internal/gemm), at least 64, at most yv.
func chunkFor(yv, rows, target int) int {
	pc := max(64, target/max(rows, 1)/64*64)
	return min(pc, yv)
}

// planFn makes a single-threaded internal/gemm plan of the element type.
type planFn[T float32 | float64] func(transA, transB bool, m, n, k int) gemmPlan[T]

func prepareConv(nd *graph.Node) (*kernel, error) {
	g, err := newConvGeo(nd)
	if err != nil {
		return nil, err
	}
	switch nd.DType() {
	case tensor.Float32:
		return convKernel[float32](nd.Op(), g, func(ta, tb bool, m, n, k int) gemmPlan[float32] { return gemm.NewPlan32(ta, tb, m, n, k, 1) }), nil
	case tensor.Float64:
		return convKernel[float64](nd.Op(), g, func(ta, tb bool, m, n, k int) gemmPlan[float64] { return gemm.NewPlan64(ta, tb, m, n, k, 1) }), nil
	}
	return nil, fmt.Errorf("no %v kernel for %v", nd.Op(), nd.DType())
}

func convKernel[T float32 | float64](op graph.Op, g *convGeo, plan planFn[T]) *kernel {
	if op == ops.OpConv {
		if sh, ok := newShiftDirectGeo[T](g); ok {
			return convShiftDirectKernel[T](g, sh)
		}
	}
	if op == ops.OpConv || op == ops.OpConvFilterGrad {
		if sh, ok := newShiftColGeo(g); ok {
			if op == ops.OpConv {
				return convShiftColKernel(g, sh, plan)
			}
			return convShiftColFilterGradKernel(g, sh, plan)
		}
	}
	switch {
	case op == ops.OpConv && g.cg == 1 && !g.identity:
		if sh, ok := shiftGeoOf(g, 1, g.kv, depthShiftMinUseful); ok {
			return depthwiseShiftKernel[T](g, sh, false)
		}
		return depthwiseKernel[T](g)
	case op == ops.OpConvTranspose && g.cg == 1 && !g.identity:
		if tg, ok := transposeAsConv(g); ok && g.og == 1 {
			if sh, ok := shiftGeoOf(tg, 1, tg.kv, depthShiftMinUseful); ok {
				return depthwiseShiftKernel[T](tg, sh, true)
			}
		}
		return depthwiseTransposeKernel[T](g)
	case op == ops.OpConvFilterGrad && g.cg == 1 && !g.identity:
		if sh, ok := shiftGeoOf(g, 1, 1+g.kv, depthShiftMinUseful); ok {
			return depthwiseShiftFilterGradKernel[T](g, sh)
		}
		return depthwiseFilterGradKernel[T](g)
	case op == ops.OpConv:
		if sh, ok := newShiftGeo(g); ok {
			return convShiftKernel(g, sh, plan, false)
		}
		return convForwardKernel(g, plan)
	case op == ops.OpConvTranspose:
		if tg, ok := transposeAsConv(g); ok {
			if sh, ok := newShiftGeo(tg); ok {
				return convShiftKernel(tg, sh, plan, true)
			}
		}
		return convTransposeKernel(g, plan)
	}
	if sh, ok := newShiftGeo(g); ok {
		return convShiftFilterGradKernel(g, sh, plan)
	}
	return convFilterGradKernel(g, plan)
}

// runTasks runs every task of p (single-threaded plans have one).
func runTasks[T float32 | float64](done <-chan struct{}, p gemmPlan[T], alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ws []T) bool {
	for t := 0; t < p.Tasks(); t++ {
		if !p.RunUntil(done, t, alpha, a, lda, b, ldb, beta, c, ldc, ws) {
			return false
		}
	}
	return true
}

// colTarget is the elements of column block a work item packs (640 KiB
// of float32, within L2).
const colTarget = 160 << 10

// convForwardKernel: items are (batch, group, chunk of output positions);
// each packs its column block and multiplies w[g] by it into y.
func convForwardKernel[T float32 | float64](g *convGeo, plan planFn[T]) *kernel {
	pc := chunkFor(g.yv, g.ck, colTarget)
	chunks := (g.yv + pc - 1) / pc
	tail := g.yv - (chunks-1)*pc
	full, last := plan(false, false, g.og, pc, g.ck), plan(false, false, g.og, tail, g.ck)
	return &kernel{bind: func(a *args) func() {
		colLen := g.ck * pc
		if g.identity {
			colLen = 0
		}
		wsLen := max(full.WorkspaceFloats(), last.WorkspaceFloats())
		col, ws := make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			col[i], ws[i] = make([]T, colLen), make([]T, wsLen)
		}
		l := a.Loop(func(lo, hi, part int) {
			x, w, y := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			done := a.Done()
			for it := lo; it < hi; it++ {
				if stop.Done(done) {
					return
				}
				ch, bg := it%chunks, it/chunks
				b, gr := bg/g.groups, bg%g.groups
				p0 := ch * pc
				cnt, p := pc, full
				if ch == chunks-1 {
					cnt, p = tail, last
				}
				xg := x[(b*g.c+gr*g.cg)*g.sv : (b*g.c+(gr+1)*g.cg)*g.sv]
				bm, ldb := xg[p0:], g.sv
				if !g.identity {
					im2col(g, xg, 0, g.ck, p0, cnt, col[part])
					bm, ldb = col[part], cnt
				}
				if !runTasks(done, p, 1, w[gr*g.og*g.ck:(gr+1)*g.og*g.ck], g.ck, bm, ldb, 0, y[(b*g.o+gr*g.og)*g.yv+p0:], g.yv, ws[part]) {
					return
				}
			}
		})
		items := g.n * g.groups * chunks
		return func() {
			if items > 0 {
				l.Run(items, 1, 0)
			}
		}
	}}
}

// convTransposeKernel: dx[n, g] = col2im(w[g]ᵀ · dy[n, g]). Items are
// (batch, group), each zeroing its slice of dx and adding every chunk's
// columns back; a 1×1 identity window writes w[g]ᵀ · dy chunk by chunk.
func convTransposeKernel[T float32 | float64](g *convGeo, plan planFn[T]) *kernel {
	pc := chunkFor(g.yv, g.ck, colTarget)
	chunks := (g.yv + pc - 1) / pc
	tail := g.yv - (chunks-1)*pc
	full, last := plan(false, false, g.ck, pc, g.og), plan(false, false, g.ck, tail, g.og)
	add, _, _ := simd.Binary[T](simd.Add)
	return &kernel{bind: func(a *args) func() {
		colLen := g.ck * pc
		if g.identity {
			colLen = 0
		}
		// wt[g] is w[g]ᵀ (ck × og), transposed once per run: packing it is
		// then a copy, not a gather, in every product.
		wt := make([]T, g.o*g.ck)
		wsLen := max(full.WorkspaceFloats(), last.WorkspaceFloats())
		col, ws := make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			col[i], ws[i] = make([]T, colLen), make([]T, wsLen)
		}
		perItem := chunks // identity: one item per chunk
		if !g.identity {
			perItem = 1
		}
		l := a.Loop(func(lo, hi, part int) {
			dy, dx := as[T](a.In(0)), as[T](a.Out())
			done := a.Done()
			for it := lo; it < hi; it++ {
				if stop.Done(done) {
					return
				}
				bg := it / perItem
				b, gr := bg/g.groups, bg%g.groups
				wg := wt[gr*g.og*g.ck : (gr+1)*g.og*g.ck]
				dyg := dy[(b*g.o+gr*g.og)*g.yv:]
				dxg := dx[(b*g.c+gr*g.cg)*g.sv : (b*g.c+(gr+1)*g.cg)*g.sv]
				if g.identity {
					ch := it % perItem
					p0, p := ch*pc, full
					if ch == chunks-1 {
						p = last
					}
					if !runTasks(done, p, 1, wg, g.og, dyg[p0:], g.yv, 0, dxg[p0:], g.sv, ws[part]) {
						return
					}
					continue
				}
				clear(dxg)
				for ch := 0; ch < chunks; ch++ {
					p0, cnt, p := ch*pc, pc, full
					if ch == chunks-1 {
						cnt, p = tail, last
					}
					if !runTasks(done, p, 1, wg, g.og, dyg[p0:], g.yv, 0, col[part], cnt, ws[part]) {
						return
					}
					col2im(g, col[part], p0, cnt, dxg, add)
				}
			}
		})
		items := g.n * g.groups * perItem
		return func() {
			if items == 0 {
				return
			}
			w := as[T](a.In(1))
			for gr := 0; gr < g.groups; gr++ {
				src, dst := w[gr*g.og*g.ck:(gr+1)*g.og*g.ck], wt[gr*g.og*g.ck:(gr+1)*g.og*g.ck]
				for o := 0; o < g.og; o++ {
					for r, v := range src[o*g.ck : (o+1)*g.ck] {
						dst[r*g.og+o] = v
					}
				}
			}
			l.Run(items, 1, 0)
		}
	}}
}

// Filter gradient blocking: rows of dw's columns per work item (at most
// fgRows, split evenly), and the batch split into at most fgSlices slices
// of consecutive images, each summed into its own partial gradient (at
// most fgPartial elements of them in all), then the partials added in
// order. All three depend on the shapes only, not the thread count.
const (
	fgRows    = 512
	fgSlices  = 8
	fgPartial = 4 << 20
)

// convFilterGradKernel: dw[g][:, r0:r1] = Σ_n Σ_chunks dy[n, g][:, chunk]
// · col[n, g][r0:r1, chunk]ᵀ. Items are (batch slice, group, block of
// rows); each sums over its images and the chunks in order.
func convFilterGradKernel[T float32 | float64](g *convGeo, plan planFn[T]) *kernel {
	nb := (g.ck + fgRows - 1) / fgRows
	rb := min(g.ck, (g.ck+nb-1)/nb+31) / 32 * 32
	rb = max(rb, min(g.ck, 32))
	blocks := (g.ck + rb - 1) / rb
	rtail := g.ck - (blocks-1)*rb
	pc := chunkFor(g.yv, rb, colTarget)
	chunks := (g.yv + pc - 1) / pc
	tail := g.yv - (chunks-1)*pc
	dwLen := g.o * g.ck
	slices := max(1, min(g.n, fgSlices, fgPartial/max(dwLen, 1)))
	// plans[i][j]: i = full or tail block of rows, j = full or tail chunk.
	var plans [2][2]gemmPlan[T]
	for i, rows := range []int{rb, rtail} {
		for j, cnt := range []int{pc, tail} {
			plans[i][j] = plan(false, true, g.og, rows, cnt)
		}
	}
	add, _, _ := simd.Binary[T](simd.Add)
	return &kernel{bind: func(a *args) func() {
		colLen := rb * pc
		if g.identity {
			colLen = 0
		}
		wsLen := 0
		for i := range plans {
			for j := range plans[i] {
				wsLen = max(wsLen, plans[i][j].WorkspaceFloats())
			}
		}
		col, ws := make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			col[i], ws[i] = make([]T, colLen), make([]T, wsLen)
		}
		var partial []T // slices 1.. (slice 0 sums into dw)
		if slices > 1 {
			partial = make([]T, (slices-1)*dwLen)
		}
		l := a.Loop(func(lo, hi, part int) {
			x, dy := as[T](a.In(0)), as[T](a.In(1))
			done := a.Done()
			for it := lo; it < hi; it++ {
				sl, rest := it/(g.groups*blocks), it%(g.groups*blocks)
				gr, blk := rest/blocks, rest%blocks
				r0, rows, pi := blk*rb, rb, 0
				if blk == blocks-1 {
					rows, pi = rtail, 1
				}
				dw := as[T](a.Out())
				if sl > 0 {
					dw = partial[(sl-1)*dwLen : sl*dwLen]
				}
				c := dw[gr*g.og*g.ck+r0:]
				b0, b1 := sl*g.n/slices, (sl+1)*g.n/slices
				if b0 == b1 {
					for o := 0; o < g.og; o++ {
						clear(c[o*g.ck : o*g.ck+rows])
					}
					continue
				}
				var beta T
				for b := b0; b < b1; b++ {
					if stop.Done(done) {
						return
					}
					xg := x[(b*g.c+gr*g.cg)*g.sv : (b*g.c+(gr+1)*g.cg)*g.sv]
					dyg := dy[(b*g.o+gr*g.og)*g.yv:]
					for ch := 0; ch < chunks; ch++ {
						p0, cnt, pj := ch*pc, pc, 0
						if ch == chunks-1 {
							cnt, pj = tail, 1
						}
						var bm []T
						ldb := g.sv
						if g.identity {
							bm = xg[r0*g.sv+p0:]
						} else {
							im2col(g, xg, r0, r0+rows, p0, cnt, col[part])
							bm, ldb = col[part], cnt
						}
						if !runTasks(done, plans[pi][pj], 1, dyg[p0:], g.yv, bm, ldb, beta, c, g.ck, ws[part]) {
							return
						}
						beta = 1
					}
				}
			}
		})
		items := slices * g.groups * blocks
		return func() {
			l.Run(items, 1, 0)
			if slices > 1 && !a.Stopped() {
				dw := as[T](a.Out())
				for sl := 1; sl < slices; sl++ {
					add(dw, dw, partial[(sl-1)*dwLen:sl*dwLen])
				}
			}
		}
	}}
}

// The depthwise-like convolutions (one input channel per group: cg = 1,
// og filters per channel) are direct loops: each output row gets each
// tap's weight times a (strided) input row.

// depthwiseKernel: items are output planes (batch, output channel).
func depthwiseKernel[T float32 | float64](g *convGeo) *kernel {
	fma := fmaOf[T]()
	return &kernel{bind: func(a *args) func() {
		wb := tapBuffers[T](a.Threads(), g)
		l := a.Loop(func(lo, hi, part int) {
			x, w, y := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			for it := lo; it < hi; it++ {
				if a.Stopped() {
					return
				}
				b, o := it/g.o, it%g.o
				c := o / g.og
				yp := y[it*g.yv : (it+1)*g.yv]
				xp := x[(b*g.c+c)*g.sv : (b*g.c+c+1)*g.sv]
				wo := w[o*g.kv : (o+1)*g.kv]
				clear(yp)
				depthwisePlane(g, xp, wo, yp, false, fma, wb[part])
			}
		})
		return func() { l.Run(g.n*g.o, 1, 0) }
	}}
}

// fmaOf is internal/simd's d = a·b + c of the element type.
func fmaOf[T float32 | float64]() func(d, a, b, c []T) {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(simd.FMAF32).(func(d, a, b, c []T))
	}
	return any(simd.FMAF64).(func(d, a, b, c []T))
}

// tapBuffers are the per-part rows of one tap's weight that the
// depthwise loops multiply by (as internal/simd's FMA wants vectors).
func tapBuffers[T float32 | float64](threads int, g *convGeo) [][]T {
	wb := make([][]T, threads)
	for i := range wb {
		wb[i] = make([]T, g.kv*g.y[2])
	}
	return wb
}

// depthwisePlane adds to the output plane yp the convolution of the input
// plane xp with the taps wo; with transpose it adds the transpose instead
// (the gradient plane xp from yp). Output rows are the outer loop, so a
// row takes every tap while it is in L1; rows of unit stride are FMAs
// with wb holding each tap's weight (kv rows of y2).
func depthwisePlane[T float32 | float64](g *convGeo, xp, wo, yp []T, transpose bool, fma func(d, a, b, c []T), wb []T) {
	y0, y1, y2 := g.y[0], g.y[1], g.y[2]
	s0, s1, s2 := g.s[0], g.s[1], g.s[2]
	st := g.st[2]
	for t, wv := range wo {
		wr := wb[t*y2 : (t+1)*y2]
		for i := range wr {
			wr[i] = wv
		}
	}
	for a := 0; a < y0; a++ {
		for b := 0; b < y1; b++ {
			yr := yp[(a*y1+b)*y2 : (a*y1+b+1)*y2]
			for t := 0; t < g.kv; t++ {
				t2, t1, t0 := t%g.k[2], (t/g.k[2])%g.k[1], t/(g.k[2]*g.k[1])
				ia := a*g.st[0] - g.pl[0] + t0*g.dl[0]
				ib := b*g.st[1] - g.pl[1] + t1*g.dl[1]
				if ia < 0 || ia >= s0 || ib < 0 || ib >= s1 {
					continue
				}
				off := t2*g.dl[2] - g.pl[2]
				lo, hi := validRange(0, y2, st, off, s2)
				if lo >= hi {
					continue
				}
				xr := xp[(ia*s1+ib)*s2 : (ia*s1+ib+1)*s2]
				wv, wr := wo[t], wb[t*y2:t*y2+hi-lo]
				switch {
				case transpose && st == 1:
					d := xr[lo+off : hi+off]
					fma(d, wr, yr[lo:hi], d)
				case transpose:
					for u := lo; u < hi; u++ {
						xr[u*st+off] += wv * yr[u]
					}
				case st == 1:
					d := yr[lo:hi]
					fma(d, wr, xr[lo+off:hi+off], d)
				default:
					for u := lo; u < hi; u++ {
						yr[u] += wv * xr[u*st+off]
					}
				}
			}
		}
	}
}

// depthwiseTransposeKernel: items are input-gradient planes (batch,
// channel), each the sum over the channel's og filters.
func depthwiseTransposeKernel[T float32 | float64](g *convGeo) *kernel {
	fma := fmaOf[T]()
	return &kernel{bind: func(a *args) func() {
		wb := tapBuffers[T](a.Threads(), g)
		l := a.Loop(func(lo, hi, part int) {
			dy, w, dx := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			for it := lo; it < hi; it++ {
				if a.Stopped() {
					return
				}
				b, c := it/g.c, it%g.c
				xp := dx[it*g.sv : (it+1)*g.sv]
				clear(xp)
				for o := c * g.og; o < (c+1)*g.og; o++ {
					depthwisePlane(g, xp, w[o*g.kv:(o+1)*g.kv], dy[(b*g.o+o)*g.yv:(b*g.o+o+1)*g.yv], true, fma, wb[part])
				}
			}
		})
		return func() { l.Run(g.n*g.c, 1, 0) }
	}}
}

// depthwiseFilterGradKernel: items are output channels; each tap's
// gradient is a sum of row dot products over the batch, in order.
func depthwiseFilterGradKernel[T float32 | float64](g *convGeo) *kernel {
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, part int) {
			x, dy, dw := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			y0, y1, y2 := g.y[0], g.y[1], g.y[2]
			s0, s1, s2 := g.s[0], g.s[1], g.s[2]
			st := g.st[2]
			for o := lo; o < hi; o++ {
				if a.Stopped() {
					return
				}
				c := o / g.og
				for t := 0; t < g.kv; t++ {
					t2, t1, t0 := t%g.k[2], (t/g.k[2])%g.k[1], t/(g.k[2]*g.k[1])
					off := t2*g.dl[2] - g.pl[2]
					ulo, uhi := validRange(0, y2, st, off, s2)
					var sum T
					for b := 0; b < g.n && ulo < uhi; b++ {
						xp := x[(b*g.c+c)*g.sv : (b*g.c+c+1)*g.sv]
						yp := dy[(b*g.o+o)*g.yv : (b*g.o+o+1)*g.yv]
						for a0 := 0; a0 < y0; a0++ {
							ia := a0*g.st[0] - g.pl[0] + t0*g.dl[0]
							if ia < 0 || ia >= s0 {
								continue
							}
							for b1 := 0; b1 < y1; b1++ {
								ib := b1*g.st[1] - g.pl[1] + t1*g.dl[1]
								if ib < 0 || ib >= s1 {
									continue
								}
								xr := xp[(ia*s1+ib)*s2 : (ia*s1+ib+1)*s2]
								yr := yp[(a0*y1+b1)*y2 : (a0*y1+b1+1)*y2]
								if st == 1 {
									sum += dot(yr[ulo:uhi], xr[ulo+off:uhi+off])
								} else {
									for u := ulo; u < uhi; u++ {
										sum += yr[u] * xr[u*st+off]
									}
								}
							}
						}
					}
					dw[o*g.kv+t] = sum
				}
			}
		})
		return func() { l.Run(g.o, 1, 0) }
	}}
}

// dot is Σ x[i]·y[i] in four interleaved partial sums.
func dot[T float32 | float64](x, y []T) T {
	n := len(x)
	y = y[:n]
	var s0, s1, s2, s3 T
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < n; i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// shiftGeo is the geometry of the shifted products, for convolutions of
// stride 1 with many channels per group: the input of one batch and group
// is copied into a zero-padded buffer (dims P = S + lo + hi), in which
// output position a sits at q = (a0·P1 + a1)·P2 + a2 and reads tap t at
// q + shift[t]. Then y = Σ_t w[:, :, t] · xpad[:, shift[t]:] is one
// product per tap over a contiguous run of q (the columns with a1 >= Y1
// or a2 >= Y2 are computed and dropped), and no column matrix is built.
type shiftGeo struct {
	p     [3]int
	pv, q int   // padded volume; positions from the first output to the last
	shift []int // per tap
}

// Thresholds of the shifted products: enough channels per group for the
// per-tap products to be efficient, and few dropped columns. 0.75 admits
// a 3×3 window on a 7×7 map (49 of 61 columns kept), where the shifted
// products beat im2col, whose per-row copies of 7 elements dominate
// (cnn/train-step/b64's last stage: its Conv, ConvTranspose and
// ConvFilterGrad about 1.4x faster).
// Each thread holds a padded copy of one image's group (and, for the
// filter gradient, of dy's), at most shiftMaxBuffer elements each.
const (
	shiftMinChannels = 16
	shiftMinUseful   = 0.75
	shiftMaxBuffer   = 4 << 20
	// Depthwise loops save more per call than the dropped columns cost.
	depthShiftMinUseful = 0.5
)

func newShiftGeo(g *convGeo) (*shiftGeo, bool) {
	if g.identity || g.cg < shiftMinChannels || g.n*g.groups < 4 {
		return nil, false
	}
	return shiftGeoOf(g, g.cg, g.og, shiftMinUseful)
}

// shiftGeoOf is the shifted layout of a stride-1 convolution, refused when
// it would drop too many columns or a thread's copies (cin planes of the
// input, cout rows of positions) would be too large.
func shiftGeoOf(g *convGeo, cin, cout int, minUseful float64) (*shiftGeo, bool) {
	sh := &shiftGeo{}
	for d := 0; d < 3; d++ {
		if g.st[d] != 1 {
			return nil, false
		}
		sh.p[d] = g.y[d] + (g.k[d]-1)*g.dl[d]
	}
	sh.pv = sh.p[0] * sh.p[1] * sh.p[2]
	sh.q = ((g.y[0]-1)*sh.p[1]+g.y[1]-1)*sh.p[2] + g.y[2]
	if float64(g.yv) < minUseful*float64(sh.q) || cin*sh.pv > shiftMaxBuffer || cout*sh.q > shiftMaxBuffer {
		return nil, false
	}
	sh.shift = make([]int, g.kv)
	for t := range sh.shift {
		t2, t1, t0 := t%g.k[2], (t/g.k[2])%g.k[1], t/(g.k[2]*g.k[1])
		sh.shift[t] = (t0*g.dl[0]*sh.p[1]+t1*g.dl[1])*sh.p[2] + t2*g.dl[2]
	}
	return sh, true
}

// fgTransposedBelow: the shifted filter gradient's products take the
// output channels as columns below this many input channels per group
// (the micro-kernel's 32 columns), and where there are more output
// channels than input channels.
const fgTransposedBelow = 32

// shiftChunk is the positions a shifted product covers at a time.
const shiftChunk = 512

// convShiftKernel: items are (batch, group); each pads its input, then for
// each chunk of positions sums the per-tap products into a block and
// copies its kept columns to y.
//
// With flip it computes ConvTranspose as this convolution of dy (g is then
// transposeAsConv's geometry): the filter read as [C, O/G, K...] with
// every tap reversed.
func convShiftKernel[T float32 | float64](g *convGeo, sh *shiftGeo, plan planFn[T], flip bool) *kernel {
	pc := min(shiftChunk, sh.q)
	chunks := (sh.q + pc - 1) / pc
	tail := sh.q - (chunks-1)*pc
	full, last := plan(false, false, g.og, pc, g.cg), plan(false, false, g.og, tail, g.cg)
	return &kernel{bind: func(a *args) func() {
		wsLen := max(full.WorkspaceFloats(), last.WorkspaceFloats())
		xpad, blk, ws := make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			// The borders stay zero: every item writes the same interior.
			xpad[i], blk[i], ws[i] = make([]T, g.cg*sh.pv), make([]T, g.og*pc), make([]T, wsLen)
		}
		// wr[g][t] is w[g][:, :, t] (og × cg), rearranged once per run.
		wr := make([]T, g.o*g.ck)
		l := a.Loop(func(lo, hi, part int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			done := a.Done()
			xp, bk := xpad[part], blk[part]
			for it := lo; it < hi; it++ {
				if stop.Done(done) {
					return
				}
				b, gr := it/g.groups, it%g.groups
				xg := x[(b*g.c+gr*g.cg)*g.sv : (b*g.c+(gr+1)*g.cg)*g.sv]
				for c := 0; c < g.cg; c++ {
					for i0 := 0; i0 < g.s[0]; i0++ {
						for i1 := 0; i1 < g.s[1]; i1++ {
							dst := c*sh.pv + ((i0+g.pl[0])*sh.p[1]+i1+g.pl[1])*sh.p[2] + g.pl[2]
							src := c*g.sv + (i0*g.s[1]+i1)*g.s[2]
							copy(xp[dst:dst+g.s[2]], xg[src:src+g.s[2]])
						}
					}
				}
				yg := y[(b*g.o+gr*g.og)*g.yv : (b*g.o+(gr+1)*g.og)*g.yv]
				for ch := 0; ch < chunks; ch++ {
					q0, cnt, p := ch*pc, pc, full
					if ch == chunks-1 {
						cnt, p = tail, last
					}
					for t, off := range sh.shift {
						var beta T
						if t > 0 {
							beta = 1
						}
						wt := wr[(gr*g.kv+t)*g.og*g.cg : (gr*g.kv+t+1)*g.og*g.cg]
						if !runTasks(done, p, 1, wt, g.cg, xp[q0+off:], sh.pv, beta, bk, cnt, ws[part]) {
							return
						}
					}
					keepColumns(g, sh, yg, bk, q0, cnt)
				}
			}
		})
		items := g.n * g.groups
		return func() {
			w := as[T](a.In(1))
			for gr := 0; gr < g.groups; gr++ {
				for o := 0; o < g.og; o++ {
					for c := 0; c < g.cg; c++ {
						if flip { // w is [c'=o... ]: w[gr][c][o][kv-1-t]
							src := w[((gr*g.cg+c)*g.og+o)*g.kv:]
							for t := 0; t < g.kv; t++ {
								wr[((gr*g.kv+t)*g.og+o)*g.cg+c] = src[g.kv-1-t]
							}
							continue
						}
						src := w[((gr*g.og+o)*g.cg+c)*g.kv:]
						for t := 0; t < g.kv; t++ {
							wr[((gr*g.kv+t)*g.og+o)*g.cg+c] = src[t]
						}
					}
				}
			}
			l.Run(items, 1, 0)
		}
	}}
}

// transposeAsConv is, for a convolution of stride 1 whose padding is at
// most the dilated window's reach (dilation·(K-1)) on each side, the
// geometry of the convolution that computes its ConvTranspose: dy
// convolved with the filter read as [C, O/G, K...] and every tap reversed,
// padded by dilation·(K-1) - padding on each side (low and high).
func transposeAsConv(g *convGeo) (*convGeo, bool) {
	t := &convGeo{n: g.n, c: g.o, o: g.c, groups: g.groups, cg: g.og, og: g.cg,
		s: g.y, k: g.k, y: g.s, st: g.st, dl: g.dl, sv: g.yv, kv: g.kv, yv: g.sv, ck: g.og * g.kv}
	for d := 0; d < 3; d++ {
		reach := (g.k[d] - 1) * g.dl[d]
		hi := g.s[d] + g.pl[d] - g.y[d] // reach minus the high padding
		if g.st[d] != 1 || g.pl[d] > reach || hi < 0 {
			return nil, false
		}
		t.pl[d] = reach - g.pl[d]
	}
	return t, true
}

// convShiftFilterGradKernel is the filter gradient over the shifted
// products: dw[:, :, t] = Σ_n dy'[n] · xpad[n][:, shift[t]:]ᵀ, where dy' is
// dy laid out on the padded positions with zeros in the dropped columns.
// With fewer input than output channels per group, or fewer than
// fgTransposedBelow (tr), it computes dw[:, :, t]ᵀ = Σ_n xpad[n][:, shift[t]:] · dy'[n]ᵀ instead,
// dy' held transposed (position-major, [q][og]): the product's columns
// are then the output channels, where cg = 16 columns ran the half-width
// micro-kernel and packed a transposed operand per tap; dy' is transposed
// once per image, which costs more than it saves with as many input
// channels as output channels (a ResNet stage's 64 and 64: 5% slower;
// the CNN's 32 to 64: 5% faster).
// Items are (batch slice, group), each summing its images into its own
// partial gradient (tap-major); the partials are then added in order.
func convShiftFilterGradKernel[T float32 | float64](g *convGeo, sh *shiftGeo, plan planFn[T]) *kernel {
	tr := g.cg < fgTransposedBelow || g.cg < g.og
	p := plan(false, true, g.og, g.cg, sh.q)
	if tr {
		p = plan(false, false, g.cg, g.og, sh.q)
	}
	dwLen := g.o * g.ck
	slices := max(1, min(g.n, fgSlices, fgPartial/max(dwLen, 1)))
	return &kernel{bind: func(a *args) func() {
		xpad, dyp, ws := make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range ws {
			// Borders and dropped columns stay zero: every image writes
			// the same places.
			xpad[i], dyp[i], ws[i] = make([]T, g.cg*sh.pv), make([]T, g.og*sh.q), make([]T, p.WorkspaceFloats())
		}
		partial := make([]T, slices*dwLen) // [slice][group][tap][o][c], or [c][o] when tr
		l := a.Loop(func(lo, hi, part int) {
			x, dy := as[T](a.In(0)), as[T](a.In(1))
			done := a.Done()
			xp, dp := xpad[part], dyp[part]
			for it := lo; it < hi; it++ {
				sl, gr := it/g.groups, it%g.groups
				pt := partial[sl*dwLen+gr*g.og*g.ck : sl*dwLen+(gr+1)*g.og*g.ck]
				clear(pt)
				for b := sl * g.n / slices; b < (sl+1)*g.n/slices; b++ {
					if stop.Done(done) {
						return
					}
					xg := x[(b*g.c+gr*g.cg)*g.sv : (b*g.c+(gr+1)*g.cg)*g.sv]
					for c := 0; c < g.cg; c++ {
						for i0 := 0; i0 < g.s[0]; i0++ {
							for i1 := 0; i1 < g.s[1]; i1++ {
								dst := c*sh.pv + ((i0+g.pl[0])*sh.p[1]+i1+g.pl[1])*sh.p[2] + g.pl[2]
								src := c*g.sv + (i0*g.s[1]+i1)*g.s[2]
								copy(xp[dst:dst+g.s[2]], xg[src:src+g.s[2]])
							}
						}
					}
					dyg := dy[(b*g.o+gr*g.og)*g.yv : (b*g.o+(gr+1)*g.og)*g.yv]
					for a0 := 0; a0 < g.y[0]; a0++ {
						for a1 := 0; a1 < g.y[1]; a1++ {
							src := (a0*g.y[1] + a1) * g.y[2]
							if !tr {
								dst := (a0*sh.p[1] + a1) * sh.p[2]
								for o := 0; o < g.og; o++ {
									copy(dp[o*sh.q+dst:o*sh.q+dst+g.y[2]], dyg[o*g.yv+src:o*g.yv+src+g.y[2]])
								}
								continue
							}
							dst := (a0*sh.p[1] + a1) * sh.p[2] * g.og
							row := dp[dst : dst+g.y[2]*g.og]
							for o := 0; o < g.og; o++ {
								for a2, v := range dyg[o*g.yv+src : o*g.yv+src+g.y[2]] {
									row[a2*g.og+o] = v
								}
							}
						}
					}
					for t, off := range sh.shift {
						pt := pt[t*g.og*g.cg : (t+1)*g.og*g.cg]
						ok := false
						if tr {
							ok = runTasks(done, p, 1, xp[off:], sh.pv, dp, g.og, 1, pt, g.og, ws[part])
						} else {
							ok = runTasks(done, p, 1, dp, sh.q, xp[off:], sh.pv, 1, pt, g.cg, ws[part])
						}
						if !ok {
							return
						}
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
			for gr := 0; gr < g.groups; gr++ {
				for o := 0; o < g.og; o++ {
					for c := 0; c < g.cg; c++ {
						d := dw[((gr*g.og+o)*g.cg+c)*g.kv : ((gr*g.og+o)*g.cg+c+1)*g.kv]
						for t := range d {
							i := ((gr*g.kv+t)*g.og+o)*g.cg + c
							if tr {
								i = ((gr*g.kv+t)*g.cg+c)*g.og + o
							}
							v := partial[i]
							for sl := 1; sl < slices; sl++ {
								v += partial[sl*dwLen+i]
							}
							d[t] = v
						}
					}
				}
			}
		}
	}}
}

// depthwiseShiftKernel is the depthwise convolution of stride 1 over the
// shifted layout: each input plane is copied into a zero-padded buffer, and
// the output plane, laid out on the padded positions, is one FMA per tap
// over the whole plane (wb holds each tap's weight repeated); its kept
// columns are then copied to y. Items are (output channel, batch), so a
// thread fills wb once per channel. With flip, g is transposeAsConv's
// geometry of a depthwise convolution without multiplier (og = 1) and the
// kernel computes its ConvTranspose (dy convolved with the reversed taps).
func depthwiseShiftKernel[T float32 | float64](g *convGeo, sh *shiftGeo, flip bool) *kernel {
	fma := fmaOf[T]()
	return &kernel{bind: func(a *args) func() {
		xpad, ypad, wb := make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads())
		cur := make([]int, a.Threads()) // the channel whose taps wb holds
		for i := range xpad {
			xpad[i], ypad[i], wb[i] = make([]T, sh.pv), make([]T, sh.q), make([]T, g.kv*sh.q)
		}
		l := a.Loop(func(lo, hi, part int) {
			x, w, y := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			xp, yp, wt := xpad[part], ypad[part], wb[part]
			for it := lo; it < hi; it++ {
				if a.Stopped() {
					return
				}
				o, b := it/g.n, it%g.n
				c := o / g.og
				if cur[part] != o {
					for t := 0; t < g.kv; t++ {
						v := w[o*g.kv+t]
						if flip {
							v = w[o*g.kv+g.kv-1-t]
						}
						r := wt[t*sh.q : (t+1)*sh.q]
						for i := range r {
							r[i] = v
						}
					}
					cur[part] = o
				}
				xc := x[(b*g.c+c)*g.sv : (b*g.c+c+1)*g.sv]
				for i0 := 0; i0 < g.s[0]; i0++ {
					for i1 := 0; i1 < g.s[1]; i1++ {
						dst := ((i0+g.pl[0])*sh.p[1]+i1+g.pl[1])*sh.p[2] + g.pl[2]
						src := (i0*g.s[1] + i1) * g.s[2]
						copy(xp[dst:dst+g.s[2]], xc[src:src+g.s[2]])
					}
				}
				clear(yp)
				for t, off := range sh.shift {
					fma(yp, wt[t*sh.q:(t+1)*sh.q], xp[off:off+sh.q], yp)
				}
				yo := y[(b*g.o+o)*g.yv : (b*g.o+o+1)*g.yv]
				for a0 := 0; a0 < g.y[0]; a0++ {
					for a1 := 0; a1 < g.y[1]; a1++ {
						src := (a0*sh.p[1] + a1) * sh.p[2]
						dst := (a0*g.y[1] + a1) * g.y[2]
						copy(yo[dst:dst+g.y[2]], yp[src:src+g.y[2]])
					}
				}
			}
		})
		return func() {
			for i := range cur {
				cur[i] = -1 // the weights may have changed since the last run
			}
			l.Run(g.o*g.n, 1, 0)
		}
	}}
}

// depthwiseShiftFilterGradKernel is the depthwise filter gradient over
// the shifted layout: for each tap, acc_t += dy'·xpad[shift_t:] over the
// padded positions of every image (dy' with zeros in the dropped columns),
// one FMA per tap and image; dw[o, t] is then the sum of acc_t. Items are
// output channels.
func depthwiseShiftFilterGradKernel[T float32 | float64](g *convGeo, sh *shiftGeo) *kernel {
	fma := fmaOf[T]()
	return &kernel{bind: func(a *args) func() {
		xpad, dyp, acc := make([][]T, a.Threads()), make([][]T, a.Threads()), make([][]T, a.Threads())
		for i := range xpad {
			xpad[i], dyp[i], acc[i] = make([]T, sh.pv), make([]T, sh.q), make([]T, g.kv*sh.q)
		}
		l := a.Loop(func(lo, hi, part int) {
			x, dy, dw := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			xp, dp, ac := xpad[part], dyp[part], acc[part]
			for o := lo; o < hi; o++ {
				c := o / g.og
				clear(ac)
				for b := 0; b < g.n; b++ {
					if a.Stopped() {
						return
					}
					xc := x[(b*g.c+c)*g.sv : (b*g.c+c+1)*g.sv]
					for i0 := 0; i0 < g.s[0]; i0++ {
						for i1 := 0; i1 < g.s[1]; i1++ {
							dst := ((i0+g.pl[0])*sh.p[1]+i1+g.pl[1])*sh.p[2] + g.pl[2]
							src := (i0*g.s[1] + i1) * g.s[2]
							copy(xp[dst:dst+g.s[2]], xc[src:src+g.s[2]])
						}
					}
					yo := dy[(b*g.o+o)*g.yv : (b*g.o+o+1)*g.yv]
					for a0 := 0; a0 < g.y[0]; a0++ {
						for a1 := 0; a1 < g.y[1]; a1++ {
							dst := (a0*sh.p[1] + a1) * sh.p[2]
							src := (a0*g.y[1] + a1) * g.y[2]
							copy(dp[dst:dst+g.y[2]], yo[src:src+g.y[2]])
						}
					}
					for t, off := range sh.shift {
						r := ac[t*sh.q : (t+1)*sh.q]
						fma(r, dp, xp[off:off+sh.q], r)
					}
				}
				for t := 0; t < g.kv; t++ {
					var s0, s1, s2, s3 T
					r := ac[t*sh.q : (t+1)*sh.q]
					i := 0
					for ; i+4 <= len(r); i += 4 {
						s0, s1, s2, s3 = s0+r[i], s1+r[i+1], s2+r[i+2], s3+r[i+3]
					}
					for ; i < len(r); i++ {
						s0 += r[i]
					}
					dw[o*g.kv+t] = (s0 + s1) + (s2 + s3)
				}
			}
		})
		return func() { l.Run(g.o, 1, 0) }
	}}
}

package cpu

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The pooling ops (ops/pool.go): MaxPool, MaxPoolGrad, MaxPoolSelect,
// AvgPool and AvgPoolGrad. The forward kernels run over the output rows
// of all N*C planes in parallel (so a single large plane uses every
// thread), the gradients over the planes, one plane at a time; every
// result element has one writer and the gradients' sums add in the
// windows' row-major order whatever the thread count. The spatial dims are padded to three (leading dims of
// length 1), and the in-bounds taps of every window are precomputed per
// dim at prepare time, so the loops test no bounds. MaxPool and its
// gradients with a 2x2 kernel, stride 2, no padding or dilation (a CNN's
// pooling) have their own loops.

// poolPlan is the geometry of a pooling node, spatial dims padded to 3.
type poolPlan struct {
	in, out  [3]int
	dil      [3]int
	k, s     [3]int       // the window's taps and stride per dim
	start    [3][]int     // per output index: the window's first coordinate (may be negative)
	kLo, kHi [3][]int     // per output index: its in-bounds taps k in [kLo, kHi)
	div      [3][]float64 // per output index: its factor of AvgPool's divisor
	planes   int
	inPlane  int
	outPlane int
	fast2x2  bool // kernel 2x2 (the last two dims), stride 2, no padding or dilation, full windows
}

func newPoolPlan(a opdef.PoolAttr, x tensor.Shape) (*poolPlan, error) {
	d := len(x) - 2
	if d < 1 || d > 3 || len(a.Kernel) != d {
		return nil, fmt.Errorf("pooling needs x of rank 3 to 5 and a kernel per spatial dim, got %v and kernel %v", x, a.Kernel)
	}
	p := &poolPlan{planes: x[0] * x[1], inPlane: 1, outPlane: 1}
	for j := range 3 {
		i := j - (3 - d) // the attribute's dim, < 0 for a padding dim
		in, k, s, dil, lo, hi := 1, 1, 1, 1, 0, 0
		if i >= 0 {
			in, k, s, dil, lo, hi = x[2+i], a.Kernel[i], a.Stride[i], a.Dilation[i], a.PadLo[i], a.PadHi[i]
		}
		out := opdef.PoolOutSize(in, k, s, dil, lo, hi, a.Ceil)
		if out < 1 {
			return nil, fmt.Errorf("the window does not fit spatial dim %d of length %d", i, in)
		}
		p.in[j], p.out[j], p.dil[j], p.k[j], p.s[j] = in, out, dil, k, s
		p.start[j], p.kLo[j], p.kHi[j], p.div[j] = make([]int, out), make([]int, out), make([]int, out), make([]float64, out)
		for o := range out {
			st := o*s - lo
			klo, khi := 0, k
			for klo < k && st+klo*dil < 0 {
				klo++
			}
			for khi > klo && st+(khi-1)*dil >= in {
				khi--
			}
			p.start[j][o], p.kLo[j][o], p.kHi[j][o] = st, klo, khi
			if a.CountIncludePad {
				p.div[j][o] = float64(min(st+k, in+hi) - st)
			} else {
				p.div[j][o] = float64(khi - klo)
			}
		}
		p.inPlane *= in
		p.outPlane *= out
	}
	p.fast2x2 = d >= 2 && a.Kernel[d-1] == 2 && a.Kernel[d-2] == 2 && a.Stride[d-1] == 2 && a.Stride[d-2] == 2 &&
		a.Dilation[d-1] == 1 && a.Dilation[d-2] == 1 && a.PadLo[d-1] == 0 && a.PadLo[d-2] == 0 &&
		p.out[2]*2 <= p.in[2] && p.out[1]*2 <= p.in[1] && (d == 2 || (a.Kernel[0] == 1 && a.Stride[0] == 1 && a.Dilation[0] == 1 && a.PadLo[0] == 0))
	return p, nil
}

// preparePool prepares the kernel of every pooling op.
func preparePool(n *graph.Node) (*kernel, error) {
	a := n.Attr().(opdef.PoolAttr)
	xs := n.Input(0).Shape()
	switch n.Op() {
	case ops.OpMaxPoolGrad:
		xs = n.Shape()
	case ops.OpAvgPoolGrad:
		xs = n.Shape()
	}
	p, err := newPoolPlan(a, xs)
	if err != nil {
		return nil, err
	}
	if n.Op() == ops.OpMaxPool && n.DType().IsInt() {
		lo, _ := n.DType().IntRange()
		switch n.DType() {
		case tensor.Int8:
			return maxPoolKernel(p, int8(lo)), nil
		case tensor.Int16:
			return maxPoolKernel(p, int16(lo)), nil
		case tensor.Int32:
			return maxPoolKernel(p, int32(lo)), nil
		case tensor.Int64:
			return maxPoolKernel(p, lo), nil
		case tensor.Uint8:
			return maxPoolKernel(p, uint8(lo)), nil
		}
	}
	switch n.DType() {
	case tensor.Float32:
		return poolKernel[float32](n.Op(), p), nil
	case tensor.Float64:
		return poolKernel[float64](n.Op(), p), nil
	}
	return nil, fmt.Errorf("no %v kernel for %v", n.Op(), n.DType())
}

// maxPoolKernel is MaxPool in the integer dtypes: low is the result of a
// window without input taps (the dtype's minimum).
func maxPoolKernel[T elem](p *poolPlan, low T) *kernel {
	if sp := newSlidePlan(p); sp != nil {
		return slideKernel(p, sp, low)
	}
	return rowsKernel(p, func(a *args, i, r0, r1, c0, c1 int) {
		x, y := as[T](a.In(0)), as[T](a.Out())
		maxRows(p, x[i*p.inPlane:(i+1)*p.inPlane], y[i*p.outPlane:(i+1)*p.outPlane], low, r0, r1, c0, c1)
	})
}

func poolKernel[T float](op graph.Op, p *poolPlan) *kernel {
	switch op {
	case ops.OpMaxPool:
		if sp := newSlidePlan(p); sp != nil {
			return slideKernel(p, sp, T(math.Inf(-1)))
		}
		p := p.rowPairs()
		return rowsKernel(p, func(a *args, i, r0, r1, c0, c1 int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			maxRows(p, x[i*p.inPlane:(i+1)*p.inPlane], y[i*p.outPlane:(i+1)*p.outPlane], T(math.Inf(-1)), r0, r1, c0, c1)
		})
	case ops.OpMaxPoolSelect:
		return rowsKernel(p, func(a *args, i, r0, r1, c0, c1 int) {
			x, h, y := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			maxSelectRows(p, x[i*p.inPlane:(i+1)*p.inPlane], h[i*p.inPlane:(i+1)*p.inPlane], y[i*p.outPlane:(i+1)*p.outPlane], r0, r1, c0, c1)
		})
	case ops.OpAvgPool:
		return rowsKernel(p, func(a *args, i, r0, r1, c0, c1 int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			avgRows(p, x[i*p.inPlane:(i+1)*p.inPlane], y[i*p.outPlane:(i+1)*p.outPlane], r0, r1, c0, c1)
		})
	}
	var plane func(a *args, i int)
	switch op {
	case ops.OpMaxPoolGrad:
		plane = func(a *args, i int) {
			x, g, dx := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			maxGradPlane(p, x[i*p.inPlane:(i+1)*p.inPlane], g[i*p.outPlane:(i+1)*p.outPlane], dx[i*p.inPlane:(i+1)*p.inPlane])
		}
	case ops.OpAvgPoolGrad:
		plane = func(a *args, i int) {
			g, dx := as[T](a.In(0)), as[T](a.Out())
			avgGradPlane(p, g[i*p.outPlane:(i+1)*p.outPlane], dx[i*p.inPlane:(i+1)*p.inPlane])
		}
	}
	return planeKernel(p, plane)
}

// rowPairs is p seen as one plane of row pairs when the 2x2 windows tile
// every plane's rows exactly (an even height, depth passed through):
// then row pair r of plane i is row pair i·out[1] + r of the whole
// tensor, and the fast path's loops run across planes in one call
// instead of one call per small plane (a 14×14 map has 7 pairs). Only
// the fast path's fields stay meaningful; p itself when they do not.
func (p *poolPlan) rowPairs() *poolPlan {
	if !p.fast2x2 || p.in[1] != 2*p.out[1] || p.in[0] != 1 || p.out[0] != 1 || p.planes == 1 {
		return p
	}
	m := *p
	m.in[1], m.out[1] = p.planes*p.in[1], p.planes*p.out[1]
	m.inPlane, m.outPlane, m.planes = p.planes*p.inPlane, p.planes*p.outPlane, 1
	return &m
}

// planeKernel runs plane over the N*C planes in parallel.
func planeKernel(p *poolPlan, plane func(a *args, i int)) *kernel {
	per := max(1, p.inPlane+p.outPlane)
	grain := max(1, grainElems/per)
	step := max(1, checkElems/per)
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			for i := lo; i < hi; i++ {
				plane(a, i)
			}
		})
		return func() { l.Run(p.planes, grain, step) }
	}}
}

// outRows is the output rows of a plane: (od, oh) pairs, each out[2]
// results.
func (p *poolPlan) outRows() int { return p.out[0] * p.out[1] }

// minPoolItems is how many items rowsKernel makes at least, where the
// planes' rows are fewer (a 1-D signal is one row): rows are then cut
// into column blocks.
const minPoolItems = 64

// rowsKernel runs rows over the output rows of all planes in parallel,
// each row cut into cb blocks of bw columns (cb is 1 unless the planes
// have fewer than minPoolItems rows in all; the 2x2 fast path keeps whole
// rows). A part's items reach rows as calls on one plane: a range of whole
// rows, or a range of columns of one row. The work of an item is its
// share of the plane's input and output.
func rowsKernel(p *poolPlan, rows func(a *args, i, r0, r1, c0, c1 int)) *kernel {
	R, OW := p.outRows(), p.out[2]
	cb := 1
	if n := p.planes * R; n < minPoolItems && !p.fast2x2 {
		cb = min(OW, (minPoolItems+n-1)/n)
	}
	bw := (OW + cb - 1) / cb
	cb = (OW + bw - 1) / bw
	U := R * cb // items per plane
	per := max(1, (p.inPlane+p.outPlane)/U)
	grain := max(1, grainElems/per)
	step := max(1, checkElems/per)
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			for k := lo; k < hi; {
				i, u := k/U, k%U
				if cb == 1 {
					r1 := min(R, u+hi-k)
					rows(a, i, u, r1, 0, OW)
					k += r1 - u
					continue
				}
				r, b := u/cb, u%cb
				b1 := min(cb, b+hi-k)
				rows(a, i, r, r+1, b*bw, min(OW, b1*bw))
				k += b1 - b
			}
		})
		return func() { l.Run(p.planes*U, grain, step) }
	}}
}

// window visits the in-bounds taps of output (od, oh, ow) in row-major
// order as flat in-plane positions.
func (p *poolPlan) window(od, oh, ow int, f func(pos int)) {
	for kd := p.kLo[0][od]; kd < p.kHi[0][od]; kd++ {
		cd := p.start[0][od] + kd*p.dil[0]
		for kh := p.kLo[1][oh]; kh < p.kHi[1][oh]; kh++ {
			row := (cd*p.in[1] + p.start[1][oh] + kh*p.dil[1]) * p.in[2]
			for kw := p.kLo[2][ow]; kw < p.kHi[2][ow]; kw++ {
				f(row + p.start[2][ow] + kw*p.dil[2])
			}
		}
	}
}

// argMax is the window maximum of MaxPool (ops/pool.go): from -Inf at the
// first in-bounds tap, a tap greater than the maximum or NaN replaces it.
// It returns the position (-1 for a window without taps) and the value
// (low for none).
func argMax[T elem](p *poolPlan, x []T, od, oh, ow int, low T) (int, T) {
	at, m := -1, low
	lo0, hi0, lo1, hi1, lo2, hi2 := p.kLo[0][od], p.kHi[0][od], p.kLo[1][oh], p.kHi[1][oh], p.kLo[2][ow], p.kHi[2][ow]
	if lo0 >= hi0 || lo1 >= hi1 || lo2 >= hi2 {
		return -1, m
	}
	s0, s1, s2 := p.start[0][od], p.start[1][oh], p.start[2][ow]
	d0, d1, d2 := p.dil[0], p.dil[1], p.dil[2]
	for kd := lo0; kd < hi0; kd++ {
		cd := s0 + kd*d0
		for kh := lo1; kh < hi1; kh++ {
			row := (cd*p.in[1] + s1 + kh*d1) * p.in[2]
			for kw := lo2; kw < hi2; kw++ {
				c := row + s2 + kw*d2
				if v := x[c]; v > m || v != v || at < 0 {
					at, m = c, v
				}
			}
		}
	}
	return at, m
}

// max4 is argMax of a full 2x2 window a b / c d: the index (0 to 3) of
// the first of the four equal to their maximum (the first maximum, -0
// and +0 equal), or of the last NaN, and its value. Written without
// data-dependent branches for numbers (the maximum from the builtin max,
// the index from conditional moves): random data would mispredict most of
// PyTorch's compare-and-replace branches.
func max4[T elem](a, b, c, d T) (int, T) {
	m := max(max(a, b), max(c, d))
	k := 3
	if c == m {
		k = 2
	}
	if b == m {
		k = 1
	}
	if a == m {
		k = 0
	}
	if m != m { // a NaN: the last one
		switch {
		case d != d:
			k = 3
		case c != c:
			k = 2
		case b != b:
			k = 1
		default:
			k = 0
		}
	}
	return k, [4]T{a, b, c, d}[k]
}

// maxRows writes columns [c0, c1) of output rows [r0, r1) of one plane of
// MaxPool (row r is (od, oh) = (r / out[1], r mod out[1])); the 2x2 fast
// path writes whole rows (rowsKernel gives it no others).
func maxRows[T elem](p *poolPlan, x, y []T, low T, r0, r1, c0, c1 int) {
	O1, OW := p.out[1], p.out[2]
	if p.fast2x2 {
		W := p.in[2]
		for r := r0; r < r1; {
			od := r / O1
			end := min(r1, (od+1)*O1) // this depth slice's rows
			xd, yd := x[od*p.in[1]*W:(od+1)*p.in[1]*W], y[od*O1*OW:(od+1)*O1*OW]
			hEnd := end - od*O1
			for h := r - od*O1; h < hEnd; h++ {
				if x32, ok := any(xd).([]float32); ok && pool2x2Asm() {
					// row pairs h.. in assembly, up to one with a NaN
					y32 := any(yd).([]float32)
					_ = x32[(hEnd-1)*2*W+W+2*OW-1]
					_ = y32[hEnd*OW-1]
					if h += maxRows2x2(&y32[h*OW], &x32[h*2*W], hEnd-h, W, OW); h == hEnd {
						break
					}
				}
				x0 := xd[h*2*W:]
				x0, x1 := x0[:2*OW], x0[W:W+2*OW]
				yr := yd[h*OW : (h+1)*OW]
				for ow := range yr {
					a, b, c, d := x0[2*ow], x0[2*ow+1], x1[2*ow], x1[2*ow+1]
					m := max(max(a, b), max(c, d))
					if m == 0 {
						// the sign of a zero maximum is the first zero's (PyTorch
						// keeps the first of equal maxima; the builtin max
						// prefers +0)
						_, m = max4(a, b, c, d)
					}
					yr[ow] = m
				}
			}
			r = end
		}
		return
	}
	for r := r0; r < r1; r++ {
		od, oh := r/O1, r%O1
		yr := y[r*OW : (r+1)*OW]
		for ow := c0; ow < c1; ow++ {
			_, yr[ow] = argMax(p, x, od, oh, ow, low)
		}
	}
}

func maxGradPlane[T float](p *poolPlan, x, g, dx []T) {
	if p.fast2x2 {
		W, OW := p.in[2], p.out[2]
		if p.in[2] != 2*p.out[2] || p.in[1] != 2*p.out[1] {
			// the windows do not tile the plane: taps outside every window
			// stay zero
			clear(dx)
		}
		for od := range p.out[0] {
			xd, dxd := x[od*p.in[1]*W:(od+1)*p.in[1]*W], dx[od*p.in[1]*W:(od+1)*p.in[1]*W]
			gd := g[od*p.out[1]*OW : (od+1)*p.out[1]*OW]
			for r := 0; r < p.out[1]; r++ {
				if x32, ok := any(xd).([]float32); ok && pool2x2Asm() {
					// row pairs r.. in assembly, up to one with a NaN
					dx32, g32 := any(dxd).([]float32), any(gd).([]float32)
					_ = x32[(p.out[1]-1)*2*W+W+2*OW-1]
					_ = dx32[(p.out[1]-1)*2*W+W+2*OW-1]
					_ = g32[p.out[1]*OW-1]
					if r += maxGradRows2x2(&dx32[r*2*W], &x32[r*2*W], &g32[r*OW], p.out[1]-r, W, OW); r == p.out[1] {
						break
					}
				}
				base := r * 2 * W
				r0, r1 := xd[base:base+2*OW], xd[base+W:base+W+2*OW]
				d0, d1 := dxd[base:base+2*OW], dxd[base+W:base+W+2*OW]
				clear(d0)
				clear(d1)
				for ow, gv := range gd[r*OW : (r+1)*OW] {
					i := 2 * ow
					k, _ := max4(r0[i], r0[i+1], r1[i], r1[i+1])
					if k < 2 {
						d0[i+k] = gv
					} else {
						d1[i+k-2] = gv
					}
				}
			}
		}
		return
	}
	clear(dx)
	w := 0
	for od := range p.out[0] {
		for oh := range p.out[1] {
			for ow := range p.out[2] {
				if at, _ := argMax(p, x, od, oh, ow, T(math.Inf(-1))); at >= 0 {
					dx[at] += g[w]
				}
				w++
			}
		}
	}
}

// maxSelectRows writes columns [c0, c1) of output rows [r0, r1) of one
// plane of MaxPoolSelect.
func maxSelectRows[T float](p *poolPlan, x, h, y []T, r0, r1, c0, c1 int) {
	O1, OW := p.out[1], p.out[2]
	for r := r0; r < r1; r++ {
		od, oh := r/O1, r%O1
		yr := y[r*OW : (r+1)*OW]
		for ow := c0; ow < c1; ow++ {
			var v T
			if at, _ := argMax(p, x, od, oh, ow, T(math.Inf(-1))); at >= 0 {
				v = h[at]
			}
			yr[ow] = v
		}
	}
}

// avgRows writes columns [c0, c1) of output rows [r0, r1) of one plane
// of AvgPool.
func avgRows[T float](p *poolPlan, x, y []T, r0, r1, c0, c1 int) {
	O1, OW := p.out[1], p.out[2]
	for r := r0; r < r1; r++ {
		od, oh := r/O1, r%O1
		yr := y[r*OW : (r+1)*OW]
		for ow := c0; ow < c1; ow++ {
			var s float64
			p.window(od, oh, ow, func(pos int) { s += float64(x[pos]) })
			yr[ow] = T(s / (p.div[0][od] * p.div[1][oh] * p.div[2][ow]))
		}
	}
}

func avgGradPlane[T float](p *poolPlan, g, dx []T) {
	clear(dx)
	w := 0
	for od := range p.out[0] {
		for oh := range p.out[1] {
			for ow := range p.out[2] {
				v := T(float64(g[w]) / (p.div[0][od] * p.div[1][oh] * p.div[2][ow]))
				p.window(od, oh, ow, func(pos int) { dx[pos] += v })
				w++
			}
		}
	}
}

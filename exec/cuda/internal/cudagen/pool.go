package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The pooling ops (ops/pool.go), one thread per result element in a
// grid-stride loop, the spatial dims padded to three (leading dims of
// length 1) and every size a constant of the generated code:
//
//   - MaxPool and MaxPoolSelect: a thread per window finds its arg-max as
//     the CPU does (taps in row-major order from -Inf at the first
//     in-bounds tap, a greater or NaN tap replaces it) and writes the
//     maximum, or h at the arg-max. MaxPool also runs in the integer
//     dtypes (the dtype's minimum for a window without taps).
//   - AvgPool: a thread per window sums its in-bounds taps in double and
//     divides by PyTorch's divisor.
//   - MaxPoolGrad and AvgPoolGrad: a gather, deterministic without
//     atomics: a thread per input position visits the windows covering it
//     in row-major order (per dim, the taps k from last to first give the
//     windows o = (c + lo - k·dilation) / stride in increasing order) and
//     adds, in double, g of each window whose arg-max is this position
//     (recomputed), or g over the window's divisor.

// poolGeom is a pooling node's geometry, padded to three spatial dims.
type poolGeom struct {
	in, out, k, s, dil, lo, hi [3]int64
	planes                     int64
}

func poolGeomOf(n *graph.Node) poolGeom {
	a := n.Attr().(opdef.PoolAttr)
	xs := n.Input(0).Shape()
	if n.Op() == ops.OpMaxPoolGrad || n.Op() == ops.OpAvgPoolGrad {
		xs = n.Shape()
	}
	d := len(xs) - 2
	p := poolGeom{planes: int64(xs[0] * xs[1])}
	for j := range 3 {
		i := j - (3 - d)
		p.in[j], p.out[j], p.k[j], p.s[j], p.dil[j] = 1, 1, 1, 1, 1
		if i >= 0 {
			p.in[j], p.k[j], p.s[j], p.dil[j] = int64(xs[2+i]), int64(a.Kernel[i]), int64(a.Stride[i]), int64(a.Dilation[i])
			p.lo[j], p.hi[j] = int64(a.PadLo[i]), int64(a.PadHi[i])
			p.out[j] = int64(opdef.PoolOutSize(xs[2+i], a.Kernel[i], a.Stride[i], a.Dilation[i], a.PadLo[i], a.PadHi[i], a.Ceil))
		}
	}
	return p
}

func (p poolGeom) inPlane() int64  { return p.in[0] * p.in[1] * p.in[2] }
func (p poolGeom) outPlane() int64 { return p.out[0] * p.out[1] * p.out[2] }

// poolRow is the row of every pooling op.
func poolRow() entry {
	return entry{
		check: func(n *graph.Node) error {
			if n.Op() == ops.OpMaxPool && n.DType().IsInt() && cType(n.DType()) != "" {
				return nil
			}
			if n.DType() != tensor.Float32 && n.DType() != tensor.Float64 {
				return fmt.Errorf("needs float32 or float64 (MaxPool: or an integer dtype)")
			}
			return nil
		},
		gen: func(g *gen, n *graph.Node) error {
			if n.Shape().Size() > 0 {
				g.pool(n)
			}
			return nil
		},
	}
}

var poolAxes = [3]string{"d", "h", "w"}

// windowIndex emits, from the linear index v over [planes, out...], the
// plane pl and the window's coordinates od, oh, ow.
func (p poolGeom) windowIndex(c *code, v string) {
	c.line("const long long ow = %s %% %s;", v, ll(p.out[2]))
	c.line("const long long oh = (%s / %s) %% %s;", v, ll(p.out[2]), ll(p.out[1]))
	c.line("const long long od = (%s / %s) %% %s;", v, ll(p.out[2]*p.out[1]), ll(p.out[0]))
	c.line("const long long pl = %s / %s;", v, ll(p.outPlane()))
}

// taps opens the loops over the in-bounds taps of window (od, oh, ow)
// (variables named with suffix sfx): inside them, pos<sfx> is the tap's
// flat in-plane position; closeLoops closes them.
func (p poolGeom) taps(c *code, sfx string) {
	for j, ax := range poolAxes {
		c.line("for (long long k%s%s = 0; k%s%s < %s; k%s%s++) {", ax, sfx, ax, sfx, ll(p.k[j]), ax, sfx)
		c.line("const long long c%s%s = o%s%s * %s - %s + k%s%s * %s;", ax, sfx, ax, sfx, ll(p.s[j]), ll(p.lo[j]), ax, sfx, ll(p.dil[j]))
		c.line("if (c%s%s < 0LL || c%s%s >= %s) continue;", ax, sfx, ax, sfx, ll(p.in[j]))
	}
	c.line("const long long pos%s = (cd%s * %s + ch%s) * %s + cw%s;", sfx, sfx, ll(p.in[1]), sfx, ll(p.in[2]), sfx)
}

// closeLoops closes the three loops of taps or covering.
func closeLoops(c *code) {
	for range 3 {
		c.line("}")
	}
}

// argMax emits the arg-max search of window (od<sfx>, oh<sfx>, ow<sfx>)
// of plane x into at<sfx> (-1 for none) and m<sfx>.
func (p poolGeom) argMax(c *code, dt tensor.DType, sfx, x string) {
	c.line("long long at%s = -1LL;", sfx)
	if dt.IsInt() { // no NaN; a window without taps is the dtype's minimum
		lo, _ := dt.IntRange()
		c.line("%s m%s = (%s)%s;", cType(dt), sfx, cType(dt), ll(lo))
		p.taps(c, sfx)
		c.line("const %s v%s = %s[pos%s];", cType(dt), sfx, x, sfx)
		c.line("if (at%s < 0LL || v%s > m%s) { at%s = pos%s; m%s = v%s; }", sfx, sfx, sfx, sfx, sfx, sfx, sfx)
		closeLoops(c)
		return
	}
	c.line("%s m%s = -loom_inf_%s();", cType(dt), sfx, cInfos[dt].sfx)
	p.taps(c, sfx)
	c.line("const %s v%s = %s[pos%s];", cType(dt), sfx, x, sfx)
	c.line("if (at%s < 0LL || v%s > m%s || v%s != v%s) { at%s = pos%s; m%s = v%s; }", sfx, sfx, sfx, sfx, sfx, sfx, sfx, sfx, sfx)
	closeLoops(c)
}

// divisor emits PyTorch's AvgPool divisor of window (od<sfx>, oh<sfx>,
// ow<sfx>) into div<sfx> (double).
func (p poolGeom) divisor(c *code, sfx string, include bool) {
	c.line("double div%s = 1.0;", sfx)
	for j, ax := range poolAxes {
		c.line("{")
		c.line("const long long st = o%s%s * %s - %s;", ax, sfx, ll(p.s[j]), ll(p.lo[j]))
		if include {
			c.line("const long long e = st + %s < %s ? st + %s : %s;", ll(p.k[j]), ll(p.in[j]+p.hi[j]), ll(p.k[j]), ll(p.in[j]+p.hi[j]))
			c.line("div%s *= (double)(e - st);", sfx)
		} else {
			c.line("const long long b = st < 0LL ? 0LL : st;")
			c.line("const long long e = st + %s < %s ? st + %s : %s;", ll(p.k[j]), ll(p.in[j]), ll(p.k[j]), ll(p.in[j]))
			c.line("div%s *= (double)(e - b);", sfx)
		}
		c.line("}")
	}
}

// covering opens the loops over the windows covering input position (cd,
// ch, cw), in row-major order, as od_, oh_, ow_ with w_ their flat index in
// the plane; closeLoops closes them.
func (p poolGeom) covering(c *code) {
	for j, ax := range poolAxes {
		c.line("for (long long k%s = %s; k%s >= 0LL; k%s--) {", ax, ll(p.k[j]-1), ax, ax)
		c.line("const long long t%s = c%s + %s - k%s * %s;", ax, ax, ll(p.lo[j]), ax, ll(p.dil[j]))
		c.line("if (t%s < 0LL || t%s %% %s != 0LL || t%s / %s >= %s) continue;", ax, ax, ll(p.s[j]), ax, ll(p.s[j]), ll(p.out[j]))
		c.line("const long long o%s_ = t%s / %s;", ax, ax, ll(p.s[j]))
	}
	c.line("const long long w_ = (od_ * %s + oh_) * %s + ow_;", ll(p.out[1]), ll(p.out[2]))
}

func (g *gen) pool(n *graph.Node) {
	p := poolGeomOf(n)
	ct := cType(n.DType())
	size := int64(n.Shape().Size())
	include := n.Attr().(opdef.PoolAttr).CountIncludePad
	var c code
	c.gridStride("i", size)
	var params string
	var args []Arg
	switch n.Op() {
	case ops.OpMaxPool, ops.OpMaxPoolSelect, ops.OpAvgPool:
		p.windowIndex(&c, "i")
		c.line("const %s* x = in0 + pl * %s;", ct, ll(p.inPlane()))
		switch n.Op() {
		case ops.OpMaxPool:
			p.argMax(&c, n.DType(), "", "x")
			c.line("out[i] = m;")
			params, args = "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", []Arg{{Kind: In}, {Kind: Out}}
		case ops.OpMaxPoolSelect:
			p.argMax(&c, n.DType(), "", "x")
			c.line("out[i] = at < 0LL ? (%s)0 : in1[pl * %s + at];", ct, ll(p.inPlane()))
			params, args = "const "+ct+"* __restrict__ in0, const "+ct+"* __restrict__ in1, "+ct+"* __restrict__ out", []Arg{{Kind: In}, {Kind: In, Index: 1}, {Kind: Out}}
		default:
			c.line("double sum = 0.0;")
			p.taps(&c, "")
			c.line("sum += (double)x[pos];")
			closeLoops(&c)
			p.divisor(&c, "", include)
			c.line("out[i] = (%s)(sum / div);", ct)
			params, args = "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", []Arg{{Kind: In}, {Kind: Out}}
		}
	case ops.OpMaxPoolGrad, ops.OpAvgPoolGrad:
		c.line("const long long cw = i %% %s;", ll(p.in[2]))
		c.line("const long long ch = (i / %s) %% %s;", ll(p.in[2]), ll(p.in[1]))
		c.line("const long long cd = (i / %s) %% %s;", ll(p.in[2]*p.in[1]), ll(p.in[0]))
		c.line("const long long pl = i / %s;", ll(p.inPlane()))
		c.line("double acc = 0.0;")
		if n.Op() == ops.OpMaxPoolGrad {
			c.line("const long long me = (cd * %s + ch) * %s + cw;", ll(p.in[1]), ll(p.in[2]))
			c.line("const %s* x = in0 + pl * %s;", ct, ll(p.inPlane()))
			c.line("const %s* g = in1 + pl * %s;", ct, ll(p.outPlane()))
		} else {
			c.line("const %s* g = in0 + pl * %s;", ct, ll(p.outPlane()))
		}
		p.covering(&c)
		if n.Op() == ops.OpMaxPoolGrad {
			p.argMax(&c, n.DType(), "_", "x")
			c.line("if (at_ == me) acc += (double)g[w_];")
			params, args = "const "+ct+"* __restrict__ in0, const "+ct+"* __restrict__ in1, "+ct+"* __restrict__ out", []Arg{{Kind: In}, {Kind: In, Index: 1}, {Kind: Out}}
		} else {
			p.divisor(&c, "_", include)
			c.line("acc += (double)g[w_] / div_;")
			params, args = "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", []Arg{{Kind: In}, {Kind: Out}}
		}
		closeLoops(&c)
		c.line("out[i] = (%s)acc;", ct)
	}
	c.line("}")
	name := map[graph.Op]string{ops.OpMaxPool: "maxpool", ops.OpMaxPoolSelect: "maxpoolsel", ops.OpAvgPool: "avgpool",
		ops.OpMaxPoolGrad: "maxpoolgrad", ops.OpAvgPoolGrad: "avgpoolgrad"}[n.Op()]
	fn := g.function(name, params, c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(size, b), [3]int{int(b), 1, 1}, 0, args...)
}

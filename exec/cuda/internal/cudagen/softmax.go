package cudagen

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
)

// softmax generates Softmax (log false) and LogSoftmax (log true): the
// operand is viewed as [outer, A, inner] and each of the outer*inner
// lines of length A is normalised with its maximum m subtracted, s = sum
// of exp(x - m) in double, then exp(x - m) * (1/s) or (x - m) - log(s)
// (the CPU's row formulas: a NaN anywhere in a line makes the line NaN).
// Lines use the reduction's tiles: a block per row (lanes along the row,
// tree reductions in shared memory) when the axis is the innermost, else
// consecutive lines on consecutive threads.
func (g *gen) softmax(n *graph.Node, log bool) error {
	axis := n.Attr().(opdef.AxisAttr).Axis
	s := n.Shape()
	if s.Size() == 0 {
		return nil
	}
	outer, inner := int64(1), int64(1)
	for _, d := range s[:axis] {
		outer *= int64(d)
	}
	for _, d := range s[axis+1:] {
		inner *= int64(d)
	}
	A := int64(s[axis])
	lines := outer * inner
	t := g.chooseTile(lines, A, inner == 1, false)
	ct := cType(n.DType())
	sfx, e := cInfos[n.DType()].sfx, "exp"+cInfos[n.DType()].math
	var c code
	shared := 0
	if t.br > 1 {
		shared = int(t.bo * t.br * 8)
		c.line("%s* sm = (%s*)loom_smem;", ct, ct)
		c.line("double* ss = (double*)loom_smem;")
	}
	t.laneSlot(&c)
	me, partner := t.sharedIndex()
	if t.br > 1 {
		c.line("const long long me = %s;", me)
	}
	root := "slot"
	if t.rows {
		root = "slot * " + ll(t.br)
	}
	step := "1LL"
	if t.br > 1 {
		step = ll(t.br)
	}
	stride := ""
	if inner != 1 {
		stride = " * " + ll(inner)
	}
	c.line("for (long long w = blockIdx.x; w < %s; w += gridDim.x) {", ll(t.items))
	if t.bo > 1 {
		c.line("const long long line = w * %s + slot;", ll(t.bo))
	} else {
		c.line("const long long line = w;")
	}
	c.line("const bool live = line < %s;", ll(lines))
	switch {
	case inner == 1:
		c.line("const long long base = line * %s;", ll(A))
	case outer == 1:
		c.line("const long long base = line;")
	default:
		c.line("const long long base = (line / %s) * %s + line %% %s;", ll(inner), ll(A*inner), ll(inner))
	}
	// The maximum (NaN if any element is NaN).
	c.line("%s m = -loom_inf_%s();", ct, sfx)
	c.line("if (live) {")
	c.line("for (long long a = lane; a < %s; a += %s) {", ll(A), step)
	c.line("const %s v = in0[base + a%s];", ct, stride)
	c.line("if (loom_gt_%s(v, m)) m = v;", sfx)
	c.line("}")
	c.line("}")
	if t.br > 1 {
		c.line("sm[me] = m;")
		c.line("__syncthreads();")
		c.line("for (long long s = %s; s > 0; s >>= 1) {", ll(t.br/2))
		c.line("if (lane < s) {")
		c.line("const %s v = sm[me + %s];", ct, partner)
		c.line("if (loom_gt_%s(v, sm[me])) sm[me] = v;", sfx)
		c.line("}")
		c.line("__syncthreads();")
		c.line("}")
		c.line("m = sm[%s];", root)
		c.line("__syncthreads();")
	}
	// The sum of exponentials, in double.
	c.line("double sum = 0.0;")
	c.line("if (live) {")
	c.line("for (long long a = lane; a < %s; a += %s) {", ll(A), step)
	c.line("sum += (double)%s(in0[base + a%s] - m);", e, stride)
	c.line("}")
	c.line("}")
	if t.br > 1 {
		c.line("ss[me] = sum;")
		c.line("__syncthreads();")
		c.line("for (long long s = %s; s > 0; s >>= 1) {", ll(t.br/2))
		c.line("if (lane < s) ss[me] += ss[me + %s];", partner)
		c.line("__syncthreads();")
		c.line("}")
		c.line("sum = ss[%s];", root)
		c.line("__syncthreads();")
	}
	c.line("if (live) {")
	if log {
		c.line("const %s ls = (%s)log(sum);", ct, ct)
	} else {
		c.line("const %s inv = (%s)(1.0 / sum);", ct, ct)
	}
	c.line("for (long long a = lane; a < %s; a += %s) {", ll(A), step)
	if log {
		c.line("out[base + a%s] = (in0[base + a%s] - m) - ls;", stride, stride)
	} else {
		c.line("out[base + a%s] = %s(in0[base + a%s] - m) * inv;", stride, e, stride)
	}
	c.line("}")
	c.line("}")
	c.line("}")
	prefix := "softmax"
	if log {
		prefix = "logsoftmax"
	}
	fn := g.function(prefix, "const "+ct+"* __restrict__ in0, "+ct+"* __restrict__ out", c.String())
	g.launch(fn, min(t.items, g.t.maxGrid()), t.block(), shared, Arg{Kind: In}, Arg{Kind: Out})
	return nil
}

package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The scans (Cumsum, Cumprod, Cummax, LogCumSumExp) view the operand as
// [outer, A, inner] with the scanned axis in the middle: outer*inner
// lines of A elements, each scanned in order (from the end with Reverse).
// Floats accumulate in double (float32 too, as the CPU and the reference
// do, each output rounded once), integer sums and products in unsigned
// long long (two's complement wrap, truncated when stored), integer
// maxima in long long.
//
//   - A thread per line when the axis is not the innermost (consecutive
//     threads take consecutive inner indices, so every step's reads and
//     writes are coalesced) or the lines are short: the line is scanned
//     sequentially, in the CPU's order.
//   - A block per line when the axis is the innermost and long: each of
//     the block's 256 threads (fewer on a device with smaller blocks) folds a contiguous segment of the line,
//     thread 0 scans the 256 segment totals in shared memory, and each
//     thread rescans its segment from its prefix, writing the results.
//     Any length works (segments of ceil(A/256) elements); the order of
//     the combinations depends only on A, so results are deterministic.
//
// The gradient helpers (CumprodGrad, CummaxGrad) use a thread per line
// with the CPU's sequential arithmetic; CumprodGrad keeps its backward
// recurrence in a scratch buffer of doubles.

// scanKind is the arithmetic of a row of the table.
type scanKind uint8

const (
	scanSum scanKind = iota + 1
	scanProd
	scanMax
	scanLogSumExp
	scanCumprodGrad
	scanCummaxGrad
)

// scanBlock is the block size of the scans (or the device's, if smaller).
const scanBlock = 256

// scanRow is the table's row of a scan or a gradient helper.
func scanRow(k scanKind) entry {
	return entry{
		check: func(n *graph.Node) error {
			c := cInfos[n.DType()].class
			if c == floatClass || (c == intClass && k <= scanMax) {
				return nil
			}
			return fmt.Errorf("no scan of %v", n.DType())
		},
		gen: func(g *gen, n *graph.Node) error {
			if n.Shape().Size() == 0 {
				return nil
			}
			if k >= scanCumprodGrad {
				g.scanGrad(n, k)
				return nil
			}
			g.scan(n, k)
			return nil
		},
	}
}

// scanGeom returns the [outer, A, inner] view of n's shape along its
// ScanAttr's axis.
func scanGeom(n *graph.Node) (a opdef.ScanAttr, outer, A, inner int64) {
	a = n.Attr().(opdef.ScanAttr)
	s := n.Shape()
	outer, inner = 1, 1
	for _, d := range s[:a.Axis] {
		outer *= int64(d)
	}
	for _, d := range s[a.Axis+1:] {
		inner *= int64(d)
	}
	return a, outer, int64(s[a.Axis]), inner
}

// scanArith is the C of one scan's accumulator: its type, identity,
// conversion of a loaded element and the statement folding value v into
// accumulator s.
type scanArith struct {
	acc, ident string
	load       func(x string) string
	fold       func(c *code, s, v string)
}

func scanArithOf(k scanKind, dt tensor.DType) scanArith {
	if cInfos[dt].class == floatClass {
		a := scanArith{acc: "double", load: func(x string) string { return "(double)" + x }}
		switch k {
		case scanSum:
			a.ident = "0.0"
			a.fold = func(c *code, s, v string) { c.line("%s = %s + %s;", s, s, v) }
		case scanProd:
			a.ident = "1.0"
			a.fold = func(c *code, s, v string) { c.line("%s = %s * %s;", s, s, v) }
		case scanMax:
			// NaN propagates: a NaN replaces s, and nothing replaces a NaN;
			// a later equal value replaces s (torch.cummax: -0, +0).
			a.ident = "-loom_inf_f64()"
			a.fold = func(c *code, s, v string) { c.line("if (%s >= %s || %s != %s) %s = %s;", v, s, v, v, s, v) }
		case scanLogSumExp:
			// log(e^s + e^v) with the larger exponent factored out; NaN
			// propagates, -Inf is the identity, +Inf absorbs.
			a.ident = "-loom_inf_f64()"
			a.fold = func(c *code, s, v string) {
				c.line("{")
				c.line("const double hi_ = %s > %s ? %s : %s;", v, s, v, s)
				c.line("const double lo_ = %s > %s ? %s : %s;", v, s, s, v)
				c.line("if (%s != %s || %s != %s) %s = %s + %s;", s, s, v, v, s, s, v)
				c.line("else if (hi_ == loom_inf_f64() || hi_ == -loom_inf_f64()) %s = hi_;", s)
				c.line("else %s = hi_ + log1p(exp(lo_ - hi_));", s)
				c.line("}")
			}
		}
		return a
	}
	if k == scanMax {
		lo, _ := dt.IntRange()
		ident := fmt.Sprintf("%dLL", lo)
		if lo == -1<<63 {
			ident = "(-9223372036854775807LL - 1LL)"
		}
		return scanArith{acc: "long long", ident: ident, load: func(x string) string { return "(long long)" + x },
			fold: func(c *code, s, v string) { c.line("if (%s > %s) %s = %s;", v, s, s, v) }}
	}
	a := scanArith{acc: "unsigned long long", ident: "0ULL", load: func(x string) string { return "(unsigned long long)(long long)" + x }}
	a.fold = func(c *code, s, v string) { c.line("%s = %s + %s;", s, s, v) }
	if k == scanProd {
		a.ident = "1ULL"
		a.fold = func(c *code, s, v string) { c.line("%s = %s * %s;", s, s, v) }
	}
	return a
}

// linePos emits base, the flat position of line's first element, and
// returns the position expression of scan step k.
func linePos(c *code, line string, a opdef.ScanAttr, outer, A, inner int64) func(k string) string {
	switch {
	case inner == 1:
		c.line("const long long base = %s * %s;", line, ll(A))
	case outer == 1:
		c.line("const long long base = %s;", line)
	default:
		c.line("const long long base = (%s / %s) * %s + %s %% %s;", line, ll(inner), ll(A*inner), line, ll(inner))
	}
	return func(k string) string {
		i := k
		if a.Reverse {
			i = fmt.Sprintf("(%s - %s)", ll(A-1), k)
		}
		if inner == 1 {
			return "base + " + i
		}
		return fmt.Sprintf("base + %s * %s", i, ll(inner))
	}
}

// scan generates a scan node.
func (g *gen) scan(n *graph.Node, k scanKind) {
	a, outer, A, inner := scanGeom(n)
	lines := outer * inner
	ct := cType(n.DType())
	ar := scanArithOf(k, n.DType())
	params := "const " + ct + "* __restrict__ in0, " + ct + "* __restrict__ out"
	// step emits the load, fold and store of scan step kk.
	step := func(c *code, pos func(string) string, kk string) {
		c.line("{")
		c.line("const long long p = %s;", pos(kk))
		c.line("const %s v = %s;", ar.acc, ar.load("in0[p]"))
		if a.Exclusive {
			c.line("out[p] = (%s)s;", ct)
			ar.fold(c, "s", "v")
		} else {
			ar.fold(c, "s", "v")
			c.line("out[p] = (%s)s;", ct)
		}
		c.line("}")
	}
	bs := min(int64(scanBlock), int64(g.t.block()))
	if inner != 1 || A < 2*bs {
		var c code
		c.gridStride("line", lines)
		pos := linePos(&c, "line", a, outer, A, inner)
		c.line("%s s = %s;", ar.acc, ar.ident)
		c.line("for (long long k = 0; k < %s; k++) {", ll(A))
		step(&c, pos, "k")
		c.line("}")
		c.line("}")
		fn := g.function("scan_lines", params, c.String())
		b := int64(g.t.block())
		g.launch(fn, g.gridFor(lines, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: Out})
		return
	}
	// A block per row: segments of seg elements.
	seg := ceilDiv(A, bs)
	var c code
	c.line("%s* tot = (%s*)loom_smem;", ar.acc, ar.acc)
	c.line("const long long t = threadIdx.x;")
	c.line("for (long long line = blockIdx.x; line < %s; line += gridDim.x) {", ll(lines))
	pos := linePos(&c, "line", a, outer, A, inner)
	c.line("const long long k0 = t * %s;", ll(seg))
	c.line("const long long k1 = k0 + %s < %s ? k0 + %s : %s;", ll(seg), ll(A), ll(seg), ll(A))
	// Pass 1: the segment's total.
	c.line("%s s = %s;", ar.acc, ar.ident)
	c.line("for (long long k = k0; k < k1; k++) {")
	c.line("const %s v = %s;", ar.acc, ar.load("in0["+pos("k")+"]"))
	ar.fold(&c, "s", "v")
	c.line("}")
	c.line("tot[t] = s;")
	c.line("__syncthreads();")
	// The segments' exclusive prefixes, in order, by thread 0.
	c.line("if (t == 0) {")
	c.line("%s ps = %s;", ar.acc, ar.ident)
	c.line("for (int i = 0; i < %d; i++) {", bs)
	c.line("const %s v = tot[i];", ar.acc)
	c.line("tot[i] = ps;")
	ar.fold(&c, "ps", "v")
	c.line("}")
	c.line("}")
	c.line("__syncthreads();")
	// Pass 2: rescan the segment from its prefix.
	c.line("s = tot[t];")
	c.line("for (long long k = k0; k < k1; k++) {")
	step(&c, pos, "k")
	c.line("}")
	c.line("__syncthreads();")
	c.line("}")
	fn := g.function("scan_rows", params, c.String())
	g.launch(fn, min(lines, g.t.maxGrid()), [3]int{int(bs), 1, 1}, int(bs)*8, Arg{Kind: In}, Arg{Kind: Out})
}

// scanGrad generates CumprodGrad or CummaxGrad: a thread per line, the
// arithmetic of the CPU's kernel (exec/cpu/scan.go) and of the reference
// (ops/scan.go's refScanGrad) in double.
func (g *gen) scanGrad(n *graph.Node, k scanKind) {
	a, outer, A, inner := scanGeom(n)
	lines := outer * inner
	ct := cType(n.DType())
	var c code
	c.gridStride("line", lines)
	pos := linePos(&c, "line", a, outer, A, inner)
	at := func(k string) string { return "(" + pos(k) + ")" }
	if k == scanCumprodGrad {
		// s[i] in scratch, line-major.
		g.k.ScratchBytes = lines * A * 8
		c.line("double* s = ((double*)scratch) + line * %s;", ll(A))
		if a.Exclusive {
			c.line("s[%s] = 0.0;", ll(A-1))
			if A >= 2 {
				c.line("s[%s] = (double)g0[%s];", ll(A-2), at(ll(A-1)))
			}
			c.line("for (long long i = %s; i >= 0; i--) {", ll(A-3))
			c.line("const long long q = %s;", pos("(i + 1)"))
			c.line("s[i] = (double)g0[q] + (double)in0[q] * s[i + 1];")
			c.line("}")
		} else {
			c.line("s[%s] = (double)g0[%s];", ll(A-1), at(ll(A-1)))
			c.line("for (long long i = %s; i >= 0; i--) {", ll(A-2))
			c.line("s[i] = (double)g0[%s] + (double)in0[%s] * s[i + 1];", at("i"), at("(i + 1)"))
			c.line("}")
		}
		c.line("double pr = 1.0;")
		c.line("for (long long i = 0; i < %s; i++) {", ll(A))
		c.line("const long long q = %s;", pos("i"))
		c.line("out[q] = (%s)(pr * s[i]);", ct)
		c.line("pr *= (double)in0[q];")
		c.line("}")
	} else {
		// The cotangents of a run of steps with the same maximum are
		// summed in order and stored at its index; other positions get 0.
		c.line("%s best = 0;", ct)
		c.line("long long at = -1;")
		c.line("double sg = 0.0;")
		c.line("for (long long k = 0; k < %s; k++) {", ll(A))
		c.line("const long long q = %s;", pos("k"))
		if a.Exclusive {
			c.line("if (at >= 0) sg += (double)g0[q];")
		}
		c.line("const %s v = in0[q];", ct)
		c.line("if (at < 0 || v != v || (best == best && v >= best)) {")
		c.line("if (at >= 0) out[%s] = (%s)sg;", pos("at"), ct)
		c.line("best = v;")
		c.line("at = k;")
		c.line("sg = 0.0;")
		c.line("} else {")
		c.line("out[q] = (%s)0;", ct)
		c.line("}")
		if !a.Exclusive {
			c.line("sg += (double)g0[q];")
		}
		c.line("}")
		c.line("out[%s] = (%s)sg;", pos("at"), ct)
	}
	c.line("}")
	params := "const " + ct + "* __restrict__ in0, const " + ct + "* __restrict__ g0, " + ct + "* __restrict__ out"
	args := []Arg{{Kind: In, Index: 0}, {Kind: In, Index: 1}, {Kind: Out}}
	name := "cummaxgrad"
	if k == scanCumprodGrad {
		params += ", unsigned char* __restrict__ scratch"
		args = append(args, Arg{Kind: Scratch})
		name = "cumprodgrad"
	}
	fn := g.function(name, params, c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(lines, b), [3]int{int(b), 1, 1}, 0, args...)
}

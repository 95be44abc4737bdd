package cudagen

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The sorting ops (ops/sort.go) on the device.
//
// Sort, ArgSort and TopK sort (key, index) pairs with a bitonic network:
// each element's key is an unsigned 64-bit integer whose order is the
// sorting order (a double's bits with the sign bit flipped for positives
// and every bit for negatives, -0 made +0, every NaN the largest key; an
// integer's bits with the sign bit flipped; every bit flipped again for
// descending), and pairs compare by key, then index, which makes the
// network stable and its result the CPU's. A line of L elements is padded
// to P, the next power of two, with pairs after every real one (the
// largest key, indices >= L).
//
//   - P <= sortTile: a block per line sorts it in shared memory and
//     writes the result (Sort gathers the input at the sorted indices, so
//     -0 and NaN payloads are kept).
//   - Longer lines: the pairs live in scratch (8+4 bytes each); a kernel
//     encodes them, tiles of sortTile are sorted in shared memory, and
//     each merge stage k = 2·sortTile .. P runs one global compare-and-swap
//     launch per distance j >= sortTile, then one shared-memory launch for
//     the distances below; a last kernel writes the first K pairs out.
//
// TopK is the sort's first k pairs. SearchSorted is a thread per value
// bisecting its row as the CPU does. Indices out of

// sortTile is the most pairs sorted in shared memory by one block (24 KiB).
const sortTile = 2048

func sortRow() entry {
	return entry{
		check: func(n *graph.Node) error {
			if cInfos[n.Input(0).DType()].class == intClass || cInfos[n.Input(0).DType()].class == floatClass {
				return nil
			}
			return fmt.Errorf("no sort of %v", n.Input(0).DType())
		},
		gen: func(g *gen, n *graph.Node) error {
			if n.Shape().Size() > 0 {
				g.sortLines(n)
			}
			return nil
		},
	}
}

// sortKeyC emits the statements that set the unsigned long long variable
// dst to the key of element x of dtype dt.
func sortKeyC(c *code, dst, x string, dt tensor.DType, desc bool) {
	flip := ""
	if desc {
		flip = " ^ 0xFFFFFFFFFFFFFFFFULL"
	}
	switch {
	case cInfos[dt].class == floatClass:
		c.line("const double %s_v = (double)%s;", dst, x)
		c.line("unsigned long long %s = (unsigned long long)__double_as_longlong(%s_v);", dst, dst)
		c.line("if (%s_v != %s_v) %s = 0xFFFFFFFFFFFFFFFFULL;", dst, dst, dst)
		c.line("else if (%s_v == 0.0) %s = 0x8000000000000000ULL;", dst, dst)
		c.line("else %s = (%s >> 63) != 0ULL ? ~%s : (%s | 0x8000000000000000ULL);", dst, dst, dst, dst)
		if desc {
			c.line("%s = ~%s;", dst, dst)
		}
	case dt == tensor.Uint8:
		c.line("const unsigned long long %s = (unsigned long long)%s%s;", dst, x, flip)
	default:
		c.line("const unsigned long long %s = ((unsigned long long)(long long)%s ^ 0x8000000000000000ULL)%s;", dst, x, flip)
	}
}

// bitonicC emits the compare-and-swap steps of stages k = k0..k1 (powers
// of two; k1 = k0 for one stage) with distances j from min(k/2, jmax)
// down to 1, on m pairs in shared memory (sk, si), with the pairs'
// positions in their line offset by off (a C expression), so that the
// directions are the whole line's. Threads stride over the comparators.
func bitonicC(c *code, m, k0, k1, jmax int64, off string) {
	c.line("for (long long k = %s; k <= %s; k <<= 1) {", ll(k0), ll(k1))
	c.line("for (long long j = (k >> 1) < %s ? (k >> 1) : %s; j > 0; j >>= 1) {", ll(jmax), ll(jmax))
	c.line("for (long long cc = threadIdx.x; cc < %s; cc += blockDim.x) {", ll(m/2))
	c.line("const long long i = 2 * j * (cc / j) + cc %% j;")
	c.line("const long long q = i + j;")
	c.line("const bool up = (((%s) + i) & k) == 0;", off)
	c.line("const unsigned long long ka = sk[i], kb = sk[q];")
	c.line("const unsigned int ia = si[i], ib = si[q];")
	c.line("const bool gt = ka > kb || (ka == kb && ia > ib);")
	c.line("if (gt == up) {")
	c.line("sk[i] = kb; sk[q] = ka; si[i] = ib; si[q] = ia;")
	c.line("}")
	c.line("}")
	c.line("__syncthreads();")
	c.line("}")
	c.line("}")
}

// sortLines generates Sort, ArgSort or TopK.
func (g *gen) sortLines(n *graph.Node) {
	x := n.Input(0)
	var axis int
	var desc bool
	K := int64(0)
	switch a := n.Attr().(type) {
	case opdef.SortAttr:
		axis, desc, K = a.Axis, a.Descending, int64(x.Shape()[a.Axis])
	case opdef.TopKAttr:
		axis, desc, K = a.Axis, a.Largest, int64(a.K)
	}
	values := n.Op() == ops.OpSort
	s := x.Shape()
	outer, inner := int64(1), int64(1)
	for _, d := range s[:axis] {
		outer *= int64(d)
	}
	for _, d := range s[axis+1:] {
		inner *= int64(d)
	}
	L := int64(s[axis])
	P := pow2ceil(L)
	lines := outer * inner
	it, ot := cType(x.DType()), cType(n.DType())
	params := "const " + it + "* __restrict__ in0, " + ot + "* __restrict__ out"
	bs := min(int64(g.t.block()), max(P/2, 1))

	// inPos and outPos: the flat positions of element e of line ln in the
	// input and the output.
	pos := func(ln, e string, A int64) string {
		if inner == 1 {
			return fmt.Sprintf("(%s) * %s + (%s)", ln, ll(A), e)
		}
		return fmt.Sprintf("((%s) / %s) * %s + (%s) %% %s + (%s) * %s", ln, ll(inner), ll(A*inner), ln, ll(inner), e, ll(inner))
	}
	// write emits the output of rank r of line ln from sorted index idx.
	write := func(c *code, ln, r, idx string) {
		if values {
			c.line("out[%s] = in0[%s];", pos(ln, r, K), pos(ln, idx, L))
		} else {
			c.line("out[%s] = (long long)%s;", pos(ln, r, K), idx)
		}
	}
	// load emits pair e of line ln into sk[d], si[d].
	load := func(c *code, ln, e, d string) {
		c.line("if (%s < %s) {", e, ll(L))
		sortKeyC(c, "key", "in0["+pos(ln, e, L)+"]", x.DType(), desc)
		c.line("sk[%s] = key;", d)
		c.line("} else {")
		c.line("sk[%s] = 0xFFFFFFFFFFFFFFFFULL;", d)
		c.line("}")
		c.line("si[%s] = (unsigned int)%s;", d, e)
	}

	if P <= sortTile {
		var c code
		c.line("unsigned long long* sk = (unsigned long long*)loom_smem;")
		c.line("unsigned int* si = (unsigned int*)(sk + %s);", ll(P))
		c.line("for (long long line = blockIdx.x; line < %s; line += gridDim.x) {", ll(lines))
		c.line("for (long long e = threadIdx.x; e < %s; e += blockDim.x) {", ll(P))
		load(&c, "line", "e", "e")
		c.line("}")
		c.line("__syncthreads();")
		bitonicC(&c, P, 2, P, P, "0")
		c.line("for (long long r = threadIdx.x; r < %s; r += blockDim.x) {", ll(K))
		write(&c, "line", "r", "si[r]")
		c.line("}")
		c.line("__syncthreads();")
		c.line("}")
		fn := g.function("sort_block", params, c.String())
		g.launch(fn, min(lines, g.t.maxGrid()), [3]int{int(bs), 1, 1}, int(P*12), Arg{Kind: In}, Arg{Kind: Out})
		return
	}

	// Long lines: the pairs in scratch, keys then indices.
	T := int64(sortTile)
	bs = min(int64(g.t.block()), T/2)
	N := lines * P
	g.k.ScratchBytes = N * 12
	sp := "unsigned char* __restrict__ scratch"
	// ptrs declares the keys gk (unless indices only) and the indices gi.
	ptrs := func(c *code, keys ...bool) {
		if len(keys) == 0 || keys[0] {
			c.line("unsigned long long* gk = (unsigned long long*)scratch;")
		}
		c.line("unsigned int* gi = (unsigned int*)(scratch + %s);", ll(N*8))
	}
	scr := Arg{Kind: Scratch}
	b := int64(g.t.block())
	{ // encode
		var c code
		ptrs(&c)
		c.line("unsigned long long* sk = gk;")
		c.line("unsigned int* si = gi;")
		c.gridStride("p", N)
		c.line("const long long line = p / %s;", ll(P))
		c.line("const long long e = p %% %s;", ll(P))
		load(&c, "line", "e", "p")
		c.line("}")
		fn := g.function("sort_encode", "const "+it+"* __restrict__ in0, "+sp, c.String())
		g.launch(fn, g.gridFor(N, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, scr)
	}
	// tile runs stages k0..k1 (distances below T) on every tile in
	// shared memory.
	tile := func(k0, k1 int64) {
		var c code
		ptrs(&c)
		c.line("unsigned long long* sk = (unsigned long long*)loom_smem;")
		c.line("unsigned int* si = (unsigned int*)(sk + %s);", ll(T))
		c.line("for (long long t = blockIdx.x; t < %s; t += gridDim.x) {", ll(N/T))
		c.line("const long long g0 = t * %s;", ll(T))
		c.line("for (long long e = threadIdx.x; e < %s; e += blockDim.x) {", ll(T))
		c.line("sk[e] = gk[g0 + e];")
		c.line("si[e] = gi[g0 + e];")
		c.line("}")
		c.line("__syncthreads();")
		bitonicC(&c, T, k0, k1, T/2, fmt.Sprintf("g0 %% %s", ll(P)))
		c.line("for (long long e = threadIdx.x; e < %s; e += blockDim.x) {", ll(T))
		c.line("gk[g0 + e] = sk[e];")
		c.line("gi[g0 + e] = si[e];")
		c.line("}")
		c.line("__syncthreads();")
		c.line("}")
		fn := g.function("sort_tile", sp, c.String())
		g.launch(fn, min(N/T, g.t.maxGrid()), [3]int{int(bs), 1, 1}, int(T*12), scr)
	}
	tile(2, T)
	for k := 2 * T; k <= P; k *= 2 {
		for j := k / 2; j >= T; j /= 2 {
			var c code
			ptrs(&c)
			c.gridStride("cc", N/2)
			c.line("const long long i = 2 * %s * (cc / %s) + cc %% %s;", ll(j), ll(j), ll(j))
			c.line("const long long q = i + %s;", ll(j))
			c.line("const bool up = ((i %% %s) & %s) == 0;", ll(P), ll(k))
			c.line("const unsigned long long ka = gk[i], kb = gk[q];")
			c.line("const unsigned int ia = gi[i], ib = gi[q];")
			c.line("const bool gt = ka > kb || (ka == kb && ia > ib);")
			c.line("if (gt == up) {")
			c.line("gk[i] = kb; gk[q] = ka; gi[i] = ib; gi[q] = ia;")
			c.line("}")
			c.line("}")
			fn := g.function("sort_step", sp, c.String())
			g.launch(fn, g.gridFor(N/2, b), [3]int{int(b), 1, 1}, 0, scr)
		}
		tile(k, k)
	}
	{ // the first K pairs of every line
		var c code
		ptrs(&c, false)
		c.gridStride("p", lines*K)
		c.line("const long long line = p / %s;", ll(K))
		c.line("const long long r = p %% %s;", ll(K))
		write(&c, "line", "r", "gi[line * "+ll(P)+" + r]")
		c.line("}")
		fn := g.function("sort_write", params+", const "+sp, c.String())
		g.launch(fn, g.gridFor(lines*K, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: Out}, scr)
	}
}

// ---- SearchSorted ----

func searchSortedRow() entry {
	return entry{
		check: func(n *graph.Node) error {
			if c := cInfos[n.Input(0).DType()].class; c == intClass || c == floatClass {
				return nil
			}
			return fmt.Errorf("no SearchSorted of %v", n.Input(0).DType())
		},
		gen: func(g *gen, n *graph.Node) error {
			N := n.Shape().Size()
			if N == 0 {
				return nil
			}
			right := n.Attr().(opdef.SearchSortedAttr).Right
			s := n.Input(0).Shape()
			M := int64(s[len(s)-1])
			V := int64(1)
			if r := n.Rank(); r > 0 {
				V = int64(n.Shape()[r-1])
			}
			dt := n.Input(0).DType()
			ct := cType(dt)
			before := func(a, b string) string { // a before b in the sorting order
				if cInfos[dt].class == floatClass {
					return fmt.Sprintf("(%s < %s || (%s != %s && %s == %s))", a, b, b, b, a, a)
				}
				return fmt.Sprintf("(%s < %s)", a, b)
			}
			var c code
			c.gridStride("p", int64(N))
			if len(s) > 1 {
				c.line("const long long row = (p / %s) * %s;", ll(V), ll(M))
			} else {
				c.line("const long long row = 0;")
			}
			c.line("const %s v = in1[p];", ct)
			c.line("long long lo = 0, hi = %s;", ll(M))
			c.line("while (lo < hi) {")
			c.line("const long long mid = (long long)((unsigned long long)(lo + hi) >> 1);")
			c.line("const %s e = in0[row + mid];", ct)
			if right {
				c.line("if (!%s) lo = mid + 1; else hi = mid;", before("v", "e"))
			} else {
				c.line("if (%s) lo = mid + 1; else hi = mid;", before("e", "v"))
			}
			c.line("}")
			c.line("out[p] = lo;")
			c.line("}")
			params := "const " + ct + "* __restrict__ in0, const " + ct + "* __restrict__ in1, long long* __restrict__ out"
			fn := g.function("searchsorted", params, c.String())
			b := int64(g.t.block())
			g.launch(fn, g.gridFor(int64(N), b), [3]int{int(b), 1, 1}, 0, Arg{Kind: In, Index: 0}, Arg{Kind: In, Index: 1}, Arg{Kind: Out})
			return nil
		},
	}
}

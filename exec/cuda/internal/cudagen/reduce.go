package cudagen

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Reductions are deterministic (no atomics): every output element is
// combined in a fixed order that depends only on the shapes and the
// target. One kernel shape covers every strategy: a block holds BO
// output "slots" of BR "lanes" each; lane j of a slot folds the reduced
// elements j, j+BR, ... into a private accumulator, and the lanes of a
// slot are then combined by a tree in shared memory.
//
//   - BR = 1 is one thread per output (many outputs, short extents, or
//     reductions over outer axes where neighbouring threads read
//     neighbouring addresses).
//   - rows (the innermost axis reduced): lanes along threadIdx.x, so a
//     slot's lanes read consecutive addresses; BR grows with the extent
//     (32..256), BO = 256/BR rows per block.
//   - columns (the innermost axis kept): slots along threadIdx.x (32
//     consecutive outputs read consecutive addresses), 8 lanes along
//     threadIdx.y split the extent.
//   - two passes when there are few output tiles for the machine and long
//     extents: the extent is cut into P parts, pass 1 writes one partial
//     per (output, part) to scratch, pass 2 reduces the [outputs, P]
//     partials as rows.
//
// Float sums accumulate in double (float32 too, as the CPU does), integer
// sums in unsigned arithmetic of the element's width (two's complement
// wrap, as the CPU's int64 accumulator truncated).

// reduction is the arithmetic of a reduction op (its row of the table):
// a sum, a product, whether any or every element is nonzero, or the best
// element, the largest with max and else the smallest, or with arg its
// row-major index.
type reduction struct{ sum, prod, any, all, max, arg bool }

// logic reports whether the reduction is Any or All (a bool result from
// elements of any compute dtype).
func (r reduction) logic() bool { return r.any || r.all }

// reducer is the arithmetic of one reduction of one dtype.
type reducer struct {
	reduction
	name string       // the op's name, for the function's name: "sum", "argmax"
	dt   tensor.DType // element dtype
	acc  string       // accumulator C type
}

// reduceSupported checks that a reduction's elements are of a dtype it
// handles: the integers and floats (and bool, for Any and All; and the
// complex types, for Sum and Prod: reduceSupportedBy).
func reduceSupported(dt tensor.DType) error {
	if c := cInfos[dt].class; c != intClass && c != floatClass {
		return fmt.Errorf("no reduction of %v", dt)
	}
	return nil
}

// reduceSupportedBy is reduceSupported for reduction r.
func reduceSupportedBy(r reduction, dt tensor.DType) error {
	switch c := cInfos[dt].class; {
	case r.logic() && c == boolClass:
		return nil
	case c == complexClass && !(r.sum || r.prod):
		return fmt.Errorf("no %s of %v (complex numbers are not ordered)", reductionName(r), dt)
	case c == complexClass:
		return nil
	}
	return reduceSupported(dt)
}

// reductionName names r's arithmetic for messages.
func reductionName(r reduction) string {
	switch {
	case r.sum:
		return "sum"
	case r.prod:
		return "product"
	case r.any:
		return "Any"
	case r.all:
		return "All"
	case r.arg:
		return "arg reduction"
	}
	return "maximum or minimum"
}

// newReducer returns the reducer of op (a reduction of the table) over
// elements of dtype dt. Float sums accumulate in double, complex ones in
// complex128, integer sums in an unsigned type (wrapping): int32's
// unsigned int, the others' unsigned long long (a sum of int8s wraps to
// the same int8 either way).
func newReducer(op graph.Op, dt tensor.DType) (reducer, error) {
	red, err := reductionOf(op)
	if err != nil {
		return reducer{}, err
	}
	if err := reduceSupportedBy(red, dt); err != nil {
		return reducer{}, err
	}
	r := reducer{reduction: red, name: strings.ToLower(op.String()), dt: dt, acc: cType(dt)}
	if r.logic() {
		r.acc = "int"
	}
	if r.sum || r.prod {
		switch {
		case cInfos[dt].class == floatClass:
			r.acc = "double"
		case cInfos[dt].class == complexClass:
			r.acc = cType(tensor.Complex128)
		case dt.Size() == 4:
			r.acc = "unsigned int"
		default:
			r.acc = "unsigned long long"
		}
	}
	return r, nil
}

// isMax reports whether the best element is the largest.
func (r reducer) isMax() bool { return r.max }

// accSize is the byte size of the accumulator.
func (r reducer) accSize() int64 {
	switch r.acc {
	case "double", "long long", "unsigned long long":
		return 8
	case cType(tensor.Complex128):
		return 16
	}
	return 4
}

// identity is the accumulator's start value.
func (r reducer) identity() string {
	switch {
	case r.sum, r.any:
		return zeroOf(r.acc)
	case r.prod && r.dt.IsComplex():
		return "loom_complex_f64(1.0, 0.0)"
	case r.prod:
		return "(" + r.acc + ")1"
	case r.all:
		return "1"
	}
	switch r.dt {
	case tensor.Float32:
		if r.isMax() {
			return "-loom_inf_f32()"
		}
		return "loom_inf_f32()"
	case tensor.Float64:
		if r.isMax() {
			return "-loom_inf_f64()"
		}
		return "loom_inf_f64()"
	case tensor.Int32:
		if r.isMax() {
			return "(-2147483647 - 1)"
		}
		return "2147483647"
	case tensor.Int8, tensor.Int16, tensor.Uint8:
		lo, hi := r.dt.IntRange()
		if r.isMax() {
			return fmt.Sprintf("(%s)(%d)", cType(r.dt), lo)
		}
		return fmt.Sprintf("(%s)%d", cType(r.dt), hi)
	}
	if r.isMax() {
		return "(-9223372036854775807LL - 1LL)"
	}
	return "9223372036854775807LL"
}

// better returns the C condition "v replaces best".
func (r reducer) better(v, best string) string {
	f := ""
	if cInfos[r.dt].class == floatClass {
		f = cInfos[r.dt].sfx
	}
	switch {
	case f != "" && r.isMax():
		return fmt.Sprintf("loom_gt_%s(%s, %s)", f, v, best)
	case f != "":
		return fmt.Sprintf("loom_lt_%s(%s, %s)", f, v, best)
	case r.isMax():
		return fmt.Sprintf("%s > %s", v, best)
	}
	return fmt.Sprintf("%s < %s", v, best)
}

// fold emits the statement that folds value v (with index i for arg
// reductions) into accumulator acc (and index aidx). Folding is
// order-independent for the arg reductions: ties go to the smaller index.
func (r reducer) fold(c *code, acc, aidx, v, i string) {
	switch {
	case r.sum && r.dt.IsComplex():
		// loom_c128_of widens an element and keeps a partial sum (pass 2)
		c.line("%s += loom_c128_of(%s);", acc, v)
	case r.sum:
		c.line("%s += (%s)%s;", acc, r.acc, v)
	case r.prod && i == "":
		// combining partial products (the tree, pass 2)
		c.line("%s *= %s;", acc, v)
	case r.prod && r.dt.IsComplex():
		c.line("%s *= loom_c128_of(%s);", acc, v)
	case r.prod:
		c.line("%s *= (%s)%s;", acc, r.acc, v)
	case r.any && i == "":
		c.line("%s |= %s;", acc, v)
	case r.any:
		c.line("%s |= (%s != 0);", acc, v)
	case r.all && i == "":
		c.line("%s &= %s;", acc, v)
	case r.all:
		c.line("%s &= (%s != 0);", acc, v)
	case r.arg:
		c.line("if (%s || (!(%s) && %s < %s)) {", r.better(v, acc), r.better(acc, v), i, aidx)
		c.line("%s = %s;", acc, v)
		c.line("%s = %s;", aidx, i)
		c.line("}")
	default:
		c.line("if (%s) %s = %s;", r.better(v, acc), acc, v)
	}
}

// final is the output value of an accumulator.
func (r reducer) final(acc, aidx string) string {
	switch {
	case r.arg:
		return aidx
	case (r.sum || r.prod) && r.dt.IsComplex():
		return castExpr(tensor.Complex128, r.dt, acc)
	case r.sum, r.prod:
		return "(" + cType(r.dt) + ")" + acc
	case r.logic():
		return "(unsigned char)" + acc
	}
	return acc
}

// tile is the launch shape of a reduction kernel.
type tile struct {
	rows   bool  // lanes along threadIdx.x (else slots along x)
	bo, br int64 // outputs per block, lanes per output
	parts  int64 // parts of the extent (two passes when > 1)
	chunk  int64 // reduced elements per part
	items  int64 // tiles * parts: the work items of pass 1
}

// chooseTile picks the strategy for outN outputs of redN elements each;
// innerRed says the innermost (contiguous) dimension is reduced.
func (g *gen) chooseTile(outN, redN int64, innerRed, twoPass bool) tile {
	b := int64(g.t.block())
	sms := int64(g.t.SMs)
	var t tile
	switch {
	case innerRed && redN <= 16, !innerRed && (redN <= 32 || outN >= sms*b), b < 32:
		// A thread per output; a smaller block when there are few.
		t = tile{rows: false, bo: min(b, max(32, pow2ceil(outN))), br: 1}
	case innerRed:
		// Rows: about 8 elements per lane, 32 to 256 lanes; fewer rows
		// per block than fit when there are few rows (their lanes go to
		// the extent instead).
		br := min(max(pow2ceil(ceilDiv(redN, 8)), 32), b)
		bo := max(1, min(b/br, pow2ceil(outN)))
		br = max(br, min(b/bo, pow2ceil(redN)))
		t = tile{rows: true, bo: bo, br: br}
	default:
		// Columns: 32 consecutive outputs (fewer if there are fewer)
		// and the rest of the block's threads as lanes.
		bo := min(32, pow2ceil(outN))
		t = tile{rows: false, bo: bo, br: b / bo}
	}
	tiles := ceilDiv(outN, t.bo)
	t.parts, t.chunk = 1, redN
	if twoPass && tiles < 2*sms && ceilDiv(redN, t.br) >= 32 {
		p := min(ceilDiv(4*sms, tiles), ceilDiv(redN, t.br*16), 1024)
		if p >= 2 {
			t.chunk = ceilDiv(redN, p)
			t.parts = ceilDiv(redN, t.chunk)
		}
	}
	t.items = tiles * t.parts
	return t
}

// block returns the launch's block dimensions.
func (t tile) block() [3]int {
	if t.rows {
		return [3]int{int(t.br), int(t.bo), 1}
	}
	return [3]int{int(t.bo), int(t.br), 1}
}

// laneSlot emits lane (the thread's place along the reduced extent) and
// slot (its output within the block).
func (t tile) laneSlot(c *code) {
	lane, slot := "(long long)threadIdx.y", "(long long)threadIdx.x"
	if t.rows {
		lane, slot = slot, lane
	}
	if t.br > 1 {
		c.line("const long long lane = %s;", lane)
	} else {
		c.line("const long long lane = 0;")
	}
	c.line("const long long slot = %s;", slot)
}

// sharedIndex returns the expressions of a thread's place in the block's
// shared-memory tree (me) and of the distance to its partner at step s.
func (t tile) sharedIndex() (me, partner string) {
	if t.rows {
		return "slot * " + ll(t.br) + " + lane", "s"
	}
	return "lane * " + ll(t.bo) + " + slot", "s * " + ll(t.bo)
}

// redSpace is the iteration space of a reduction: kept and reduced
// dimensions after coalescing, with the strides of every operand.
type redSpace struct {
	kept, red   []dim
	outN, redN  int64
	innermostRd bool
	nops        int // operands
}

func newRedSpace(domain tensor.Shape, strides [][]int64, axes []int) redSpace {
	reduced := make([]bool, len(domain))
	for _, a := range axes {
		reduced[a] = true
	}
	ds := coalesce(domain, strides, reduced)
	s := redSpace{outN: 1, redN: 1, nops: len(strides)}
	for _, d := range ds {
		if d.reduced {
			s.red = append(s.red, d)
			s.redN *= d.size
		} else {
			s.kept = append(s.kept, d)
			s.outN *= d.size
		}
	}
	s.innermostRd = len(ds) > 0 && ds[len(ds)-1].reduced
	return s
}

// element emits the loads (and program) of one reduced element given the
// offset expression of every operand, returning the value expression and
// the index expression (for arg reductions).
type element func(c *code, off []string) (val, idx string)

// reduceKernel emits and launches the kernels of a reduction over space
// s: inParams declares the operands (passed as args), elem loads one
// reduced element, and the result (of dtype outDT) goes to out. With
// several parts it launches the two passes and sets the kernel's
// scratch size.
func (g *gen) reduceKernel(prefix, inParams string, args []Arg, r reducer, s redSpace, elem element, outDT tensor.DType) {
	if s.outN == 0 {
		return
	}
	t := g.chooseTile(s.outN, s.redN, s.innermostRd, true)
	outParam := cType(outDT) + "* __restrict__ out"
	if t.parts == 1 {
		body, shared := g.tileBody(r, s, t, elem, func(c *code, acc, aidx string) {
			c.line("out[o] = %s;", r.final(acc, aidx))
		})
		fn := g.function(prefix, inParams+outParam, body)
		g.launch(fn, min(t.items, g.t.maxGrid()), t.block(), shared, append(args, Arg{Kind: Out})...)
		return
	}
	// Pass 1: partials [outN, parts] in scratch (values, then indices).
	n := s.outN * t.parts
	idxOff := (n*r.accSize() + 7) / 8 * 8
	g.k.ScratchBytes = idxOff
	if r.arg {
		g.k.ScratchBytes += n * 8
	}
	body, shared := g.tileBody(r, s, t, elem, func(c *code, acc, aidx string) {
		c.line("((%s*)scratch)[o * %s + part] = %s;", r.acc, ll(t.parts), acc)
		if r.arg {
			c.line("((long long*)(scratch + %s))[o * %s + part] = %s;", ll(idxOff), ll(t.parts), aidx)
		}
	})
	fn := g.function(prefix+"_part", inParams+"unsigned char* __restrict__ scratch", body)
	g.launch(fn, min(t.items, g.t.maxGrid()), t.block(), shared, append(args, Arg{Kind: Scratch})...)
	// Pass 2: reduce the partials of each output as rows.
	s2 := redSpace{
		kept:        []dim{{size: s.outN, strides: []int64{t.parts}}},
		red:         []dim{{size: t.parts, strides: []int64{1}, reduced: true}},
		outN:        s.outN,
		redN:        t.parts,
		innermostRd: true,
		nops:        1,
	}
	if s.outN == 1 {
		s2.kept = nil
	}
	t2 := g.chooseTile(s2.outN, s2.redN, true, false)
	body, shared = g.tileBody(r, s2, t2, func(c *code, off []string) (string, string) {
		c.line("const %s v = ((const %s*)scratch)[%s];", r.acc, r.acc, off[0])
		if r.arg {
			return "v", fmt.Sprintf("((const long long*)(scratch + %s))[%s]", ll(idxOff), off[0])
		}
		return "v", "r"
	}, func(c *code, acc, aidx string) {
		c.line("out[o] = %s;", r.final(acc, aidx))
	})
	// The partials are accumulators: pass 2 folds them with the
	// accumulator's own arithmetic.
	fn = g.function(prefix+"_final", "const unsigned char* __restrict__ scratch, "+outParam, body)
	g.launch(fn, min(t2.items, g.t.maxGrid()), t2.block(), shared, Arg{Kind: Scratch}, Arg{Kind: Out})
}

// tileBody emits the body of a tiled reduction kernel and returns it with
// its dynamic shared memory size. write emits the store of output o (and,
// with parts, of partial part) from the accumulator variables.
func (g *gen) tileBody(r reducer, s redSpace, t tile, elem element, write func(c *code, acc, aidx string)) (string, int) {
	var c code
	shared := 0
	idxOff := int64(0)
	if t.br > 1 {
		n := t.bo * t.br
		idxOff = (n*r.accSize() + 7) / 8 * 8
		shared = int(idxOff)
		if r.arg {
			shared += int(n * 8)
		}
		c.line("%s* sv = (%s*)loom_smem;", r.acc, r.acc)
		if r.arg {
			c.line("long long* si = (long long*)(loom_smem + %d);", idxOff)
		}
	}
	t.laneSlot(&c)
	c.line("for (long long w = blockIdx.x; w < %s; w += gridDim.x) {", ll(t.items))
	switch {
	case t.parts > 1:
		c.line("const long long part = w %% %s;", ll(t.parts))
		c.line("const long long o = (w / %s) * %s + slot;", ll(t.parts), ll(t.bo))
	case t.bo > 1:
		c.line("const long long o = w * %s + slot;", ll(t.bo))
	default:
		c.line("const long long o = w;")
	}
	c.line("%s acc = %s;", r.acc, r.identity())
	if r.arg {
		c.line("long long aidx = 9223372036854775807LL;")
	}
	c.line("if (o < %s) {", ll(s.outN))
	nOps := s.nops
	kidx := c.decompose("o", "k", s.kept)
	base := make([]string, nOps)
	for k := range base {
		e := dot(kidx, s.kept, k)
		if e == "0LL" {
			continue
		}
		base[k] = fmt.Sprintf("b%d", k)
		c.line("const long long %s = %s;", base[k], e)
	}
	start := "lane"
	end := ll(s.redN)
	if t.parts > 1 {
		c.line("const long long rbeg = part * %s;", ll(t.chunk))
		c.line("const long long rend = rbeg + %s < %s ? rbeg + %s : %s;", ll(t.chunk), ll(s.redN), ll(t.chunk), ll(s.redN))
		start, end = "rbeg + lane", "rend"
	}
	step := "1LL"
	if t.br > 1 {
		step = ll(t.br)
	}
	c.line("for (long long r = %s; r < %s; r += %s) {", start, end, step)
	ridx := c.decompose("r", "j", s.red)
	off := make([]string, nOps)
	for k := range off {
		var terms []string
		if base[k] != "" {
			terms = append(terms, base[k])
		}
		if e := dot(ridx, s.red, k); e != "0LL" {
			terms = append(terms, e)
		}
		if len(terms) == 0 {
			off[k] = "0LL"
		} else {
			off[k] = strings.Join(terms, " + ")
		}
	}
	v, i := elem(&c, off)
	r.fold(&c, "acc", "aidx", v, i)
	c.line("}")
	c.line("}")
	if t.br > 1 {
		me, partner := t.sharedIndex()
		c.line("const long long me = %s;", me)
		c.line("sv[me] = acc;")
		if r.arg {
			c.line("si[me] = aidx;")
		}
		c.line("__syncthreads();")
		c.line("for (long long s = %s; s > 0; s >>= 1) {", ll(t.br/2))
		c.line("if (lane < s) {")
		c.line("const %s v = sv[me + %s];", r.acc, partner)
		if r.arg {
			c.line("const long long vi = si[me + %s];", partner)
			c.line("acc = sv[me];")
			c.line("aidx = si[me];")
			r.fold(&c, "acc", "aidx", "v", "vi")
			c.line("sv[me] = acc;")
			c.line("si[me] = aidx;")
		} else {
			c.line("acc = sv[me];")
			r.fold(&c, "acc", "aidx", "v", "")
			c.line("sv[me] = acc;")
		}
		c.line("}")
		c.line("__syncthreads();")
		c.line("}")
		c.line("if (lane == 0 && o < %s) {", ll(s.outN))
		c.line("acc = sv[me];")
		if r.arg {
			c.line("aidx = si[me];")
		}
		write(&c, "acc", "aidx")
		c.line("}")
		c.line("__syncthreads();")
	} else {
		c.line("if (o < %s) {", ll(s.outN))
		write(&c, "acc", "aidx")
		c.line("}")
	}
	c.line("}")
	return c.String(), shared
}

// reduction generates a Sum, Prod, Any, All, Max, Min, ArgMax or ArgMin node.
func (g *gen) reduction(n *graph.Node) error {
	x := n.Input(0)
	a := n.Attr().(opdef.AxesAttr)
	r, err := newReducer(n.Op(), x.DType())
	if err != nil {
		return err
	}
	st := broadcastStrides(x.Shape(), x.Shape())
	s := newRedSpace(x.Shape(), [][]int64{st}, a.Axes)
	if s.outN == 0 {
		return nil
	}
	if x.Shape().Size() == 0 {
		// A reduction over nothing: Sum and Any give 0, Prod and All 1,
		// and Max, Min and the arg reductions 0 as the reference does.
		if r.prod || r.all {
			g.fillWith(n.DType(), int64(n.Shape().Size()), oneOf(n.DType()))
			return nil
		}
		g.fill(n.DType(), int64(n.Shape().Size()))
		return nil
	}
	ct := cType(x.DType())
	g.reduceKernel(r.name, "const "+ct+"* __restrict__ in0, ", inArgs(1), r, s, func(c *code, off []string) (string, string) {
		c.line("const %s a0 = in0[%s];", ct, off[0])
		return "a0", "r"
	}, n.DType())
	return nil
}

// fusedReduction generates a Fused node that ends in a reduction: the
// program is evaluated per reduced element inside the reduction's loop.
func (g *gen) fusedReduction(p *program, n *graph.Node) error {
	outN := int64(n.Shape().Size())
	if outN == 0 {
		return nil
	}
	r, err := newReducer(p.reduce.Op, p.outDType())
	if err != nil {
		return err
	}
	if p.domain.Size() == 0 { // a sum (0) or product (1) over nothing
		if r.prod {
			g.fillWith(n.DType(), outN, oneOf(n.DType()))
			return nil
		}
		g.fill(n.DType(), outN)
		return nil
	}
	s := newRedSpace(p.domain, p.operandStrides(), p.reduce.Axes)
	used := p.used()
	g.reduceKernel("fused_"+r.name, inParams(p.ins), inArgs(len(p.ins)), r, s, func(c *code, off []string) (string, string) {
		for k, in := range p.ins {
			if used[k] {
				c.line("const %s a%d = in%d[%s];", cType(in.DType()), k, k, off[k])
			}
		}
		return p.emitOps(c), "r"
	}, n.DType())
	return nil
}

// fill launches a kernel that sets n elements of dtype dt of the result
// to zero.
func (g *gen) fill(dt tensor.DType, n int64) {
	g.fillWith(dt, n, "")
}

// fillWith launches a kernel that sets n elements of dtype dt of the
// result to the C expression v (zero when v is "").
func (g *gen) fillWith(dt tensor.DType, n int64, v string) {
	if n == 0 {
		return
	}
	ct, name := bitsType(dt), "zero"
	if v == "" {
		v = zeroOf(ct)
	} else {
		ct, name = cType(dt), "fill"
	}
	var c code
	c.gridStride("i", n)
	c.line("out[i] = %s;", v)
	c.line("}")
	fn := g.function(name, ct+"* __restrict__ out", c.String())
	b := int64(g.t.block())
	g.launch(fn, g.gridFor(n, b), [3]int{int(b), 1, 1}, 0, Arg{Kind: Out})
}

// oneOf is the C expression of 1 in dtype dt.
func oneOf(dt tensor.DType) string {
	if dt.IsComplex() {
		return castExpr(tensor.Float64, dt, "1.0")
	}
	return "(" + cType(dt) + ")1"
}

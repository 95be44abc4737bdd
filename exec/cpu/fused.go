package cpu

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The chunk evaluator runs a fused group (opdef.FusedAttr) over its domain in
// chunks of chunkElems elements: each op of the group's program runs over
// the chunk into a small register (a per-thread buffer that stays in
// cache), so intermediate values never go to main memory. Operands that
// have the domain's shape are read in place; one-element operands are
// passed as scalars (every micro-op takes them; one whose operands are all
// scalars computes one element and repeats it); other broadcast operands are
// gathered into a register at the start of each chunk. The last op writes
// straight into the output, or into a register that the trailing
// reduction folds into its accumulators. Each op's instruction is the
// micro-op of its entry in the table (table.go), the one its standalone
// kernel runs.

// chunkElems is the chunk length: 2048 elements is 8 KiB of float32 per
// register, so a program's live registers stay in L1/L2.
const chunkElems = 2048

// source kinds of an instruction operand.
const (
	srcReg      = iota // a register
	srcFull            // an operand with the domain's shape, read in place
	srcScalar          // an operand with one element
	srcPeriodic        // a broadcast operand expanded over one period (idx: its periodic index)
)

type source struct {
	kind int
	idx  int // register or operand index
}

// instr is one op of the program: run computes the chunk of length m
// into dst from srcs (scalars are one-element slices).
type instr struct {
	dst  source
	srcs []source
	run  microFn
}

type fusedPlan struct {
	attr     *opdef.FusedAttr
	n        int // domain elements
	inputs   []tensor.DType
	esize    []int        // element size per operand
	gathers  []gatherSpec // broadcast operands gathered per chunk
	periodic []gatherSpec // broadcast operands expanded once per run
	prog     []instr
	regs     int
	regBytes int
	outReg   int // register of the result when reducing
	outDT    tensor.DType
}

type gatherSpec struct {
	operand int
	reg     int
	bc      *bcast
	size    int
	period  int // periodic: the operand's pattern repeats every period positions
}

// maxExpanded bounds the elements of an expanded periodic operand (one
// period plus a chunk).
const maxExpanded = 1 << 16

// periodOf is the period of a broadcast operand's pattern over the domain
// (bc of the operand alone): the product of the coalesced dims inside its
// leading broadcast dims, or 0 when it has none (it does not repeat).
func periodOf(bc *bcast) int {
	lead := 0
	for lead < len(bc.dims)-1 && bc.strides[0][lead] == 0 {
		lead++
	}
	if lead == 0 {
		return 0
	}
	p := 1
	for _, d := range bc.dims[lead:] {
		p *= d
	}
	return p
}

// fusedSupported reports whether the CPU can run a fused group: every op
// must have a micro-op for its dtypes and a trailing reduction must be a
// row, column or full reduction after coalescing.
func fusedSupported(n *graph.Node) error {
	if a, ok := n.Attr().(*opdef.FusedAttr); ok {
		complexIn := n.DType().IsComplex()
		for _, in := range n.Inputs() {
			complexIn = complexIn || in.DType().IsComplex()
		}
		for _, o := range a.Ops {
			complexIn = complexIn || o.DType.IsComplex()
		}
		if complexIn {
			return errComplexFusion
		}
	}
	_, err := planFused(n)
	return err
}

func planFused(n *graph.Node) (*fusedPlan, error) {
	a, ok := n.Attr().(*opdef.FusedAttr)
	if !ok {
		return nil, fmt.Errorf("a Fused node without a program")
	}
	p := &fusedPlan{attr: a, n: a.Domain.Size(), outDT: n.DType()}
	ins := n.Inputs()
	p.inputs = make([]tensor.DType, len(ins))
	p.esize = make([]int, len(ins))
	for i, in := range ins {
		p.inputs[i], p.esize[i] = in.DType(), in.DType().Size()
	}
	// Register allocation with reuse by liveness over the program.
	last := make([]int, len(a.Ops)) // last op index reading op i's result
	for i := range last {
		last[i] = -1
	}
	for i, o := range a.Ops {
		for _, r := range o.Args {
			if r >= 0 {
				last[r] = i
			}
		}
	}
	var free []int
	alloc := func() int {
		if k := len(free); k > 0 {
			r := free[k-1]
			free = free[:k-1]
			return r
		}
		p.regs++
		return p.regs - 1
	}
	inputSrc := make([]source, len(ins))
	for i, in := range ins {
		switch {
		case in.Shape().Equal(a.Domain):
			inputSrc[i] = source{srcFull, i}
		case in.Shape().Size() == 1:
			// Every entry's micro-op takes a scalar operand (entry.microFor).
			inputSrc[i] = source{srcScalar, i}
		default:
			bc := newBcast(a.Domain, []tensor.Shape{in.Shape()})
			// An operand whose pattern repeats (a per-channel [1, C, 1, 1]
			// over [N, C, H, W]) is expanded over one period once per run,
			// and each chunk reads its window in place: gathering it per
			// chunk costs a call per run of equal elements (49 for a 7x7
			// feature map), several times the op itself.
			if per := periodOf(bc); per > 0 && per+chunkElems <= maxExpanded && per <= p.n/2 {
				inputSrc[i] = source{srcPeriodic, len(p.periodic)}
				p.periodic = append(p.periodic, gatherSpec{operand: i, reg: -1, bc: bc, size: p.esize[i], period: per})
				continue
			}
			r := alloc()
			inputSrc[i] = source{srcReg, r}
			p.gathers = append(p.gathers, gatherSpec{operand: i, reg: r, bc: bc, size: p.esize[i]})
		}
	}
	regOf := make([]int, len(a.Ops))
	for i, o := range a.Ops {
		srcs := make([]source, len(o.Args))
		dts := make([]tensor.DType, len(o.Args))
		for k, r := range o.Args {
			if r < 0 {
				srcs[k], dts[k] = inputSrc[-r-1], p.inputs[-r-1]
			} else {
				srcs[k], dts[k] = source{srcReg, regOf[r]}, a.Ops[r].DType
			}
		}
		final := i == len(a.Ops)-1
		dst := source{kind: srcFull, idx: -1} // the output
		if !final || a.Reduce != nil {
			regOf[i] = alloc()
			dst = source{srcReg, regOf[i]}
		}
		notReg := -1
		if o.Op == ops.OpWhere && srcs[0].kind != srcScalar && srcs[1].kind == srcScalar && srcs[2].kind != srcScalar {
			// Where(c, s, y), a scalar where c holds (masking, as in
			// SoftmaxCrossEntropy), has no simd select; Where(!c, y, s)
			// has: negate c into a register first.
			nr := alloc() // before this op's operands are freed: not one of them
			p.prog = append(p.prog, instr{dst: source{srcReg, nr}, srcs: srcs[:1], run: notBools})
			srcs = []source{{srcReg, nr}, srcs[2], srcs[1]}
			dts = []tensor.DType{tensor.Bool, dts[2], dts[1]}
			notReg = nr
		}
		// Registers whose last reader is this op are free for later ops
		// (not for this op's destination: a widening Cast would overwrite
		// operand elements it has not read yet).
		for k, r := range o.Args {
			if r >= 0 && last[r] == i && !slices.Contains(o.Args[:k], r) { // Mul(t, t) frees t once
				free = append(free, regOf[r])
			}
		}
		if notReg >= 0 {
			free = append(free, notReg)
		}
		run, err := microOp(o, dts, srcs)
		if err != nil {
			return nil, err
		}
		p.prog = append(p.prog, instr{dst: dst, srcs: srcs, run: run})
	}
	if a.Reduce != nil {
		p.outReg = regOf[len(a.Ops)-1]
		rp := newRedPlan(a.Domain, a.Reduce.Axes)
		if !(rp.isRows() || rp.isCols() || len(rp.redDims) == 0) {
			return nil, fmt.Errorf("%w: fused reduction over axes %v of %v is neither rows nor columns", errUnsupported, a.Reduce.Axes, a.Domain)
		}
		switch a.Reduce.Op {
		case ops.OpSum, ops.OpProd, ops.OpMax, ops.OpMin:
		default:
			return nil, fmt.Errorf("%w: fused reduction %v", errUnsupported, a.Reduce.Op)
		}
		if elemTypes[p.outDT] == nil || p.outDT.IsBool() {
			return nil, fmt.Errorf("%w: fused reduction of %v", errUnsupported, p.outDT)
		}
	}
	p.regBytes = chunkElems * 8
	return p, nil
}

// notBools is the micro-op d = !c of m bools (0 or 1): XOR with 1,
// eight at a time.
func notBools(m int, d, c, _, _ unsafe.Pointer) {
	dv, cv := view[uint8](d, m), view[uint8](c, m)
	w := m / 8
	if w > 0 {
		dw, cw := view[uint64](d, w), view[uint64](c, w)
		for i := range dw {
			dw[i] = cw[i] ^ 0x0101010101010101
		}
	}
	for i := 8 * w; i < m; i++ {
		dv[i] = cv[i] ^ 1
	}
}

func stride(s source) int {
	if s.kind == srcScalar {
		return 0
	}
	return 1
}

// microOp builds the chunk function of one fused op from its table entry.
func microOp(o opdef.FusedOp, dts []tensor.DType, srcs []source) (microFn, error) {
	strides := make([]int, len(srcs))
	for k, s := range srcs {
		strides[k] = stride(s)
	}
	f, err := table[o.Op].microFor(o.DType, dts, strides)
	if err != nil {
		return nil, fmt.Errorf("%w: no fused micro-op for %v of %v", errUnsupported, o.Op, dts)
	}
	return f, nil
}

var errUnsupported = fmt.Errorf("unsupported")

func prepareFused(n *graph.Node) (*kernel, error) {
	p, err := planFused(n)
	if err != nil {
		return nil, err
	}
	if p.attr.Reduce != nil {
		return fusedReduceKernel(p)
	}
	return &kernel{bind: func(a *args) func() {
		ev := newEvaluator(p, a)
		every := p.checkEvery()
		l := a.Loop(func(lo, hi, part int) {
			for c, q := 0, lo; q < hi; c, q = c+1, q+chunkElems {
				if c%every == every-1 && a.Stopped() {
					return
				}
				ev.chunk(part, q, min(chunkElems, hi-q), a.Out())
			}
		})
		return func() {
			ev.expand()
			l.Run(p.n, grainElems/4, 0)
		}
	}}, nil
}

// checkEvery is how many chunks the evaluator runs between checks for
// cancellation: about 32K element-ops (a program of one op checks every
// 16 chunks, one of 16 ops or more every chunk).
func (p *fusedPlan) checkEvery() int {
	return max(1, 16/max(1, len(p.prog)))
}

// evaluator holds one instance's registers: threads x regs buffers.
type evaluator struct {
	p    *fusedPlan
	a    *args
	regs [][][]byte // [part][reg]
	offs [][]int    // per part: gather offsets scratch
	exp  [][]byte   // per periodic operand: one period and a chunk
}

func newEvaluator(p *fusedPlan, a *args) *evaluator {
	ev := &evaluator{p: p, a: a}
	for t := 0; t < a.Threads(); t++ {
		mem := alignedBytes(max(1, p.regs) * p.regBytes)
		regs := make([][]byte, p.regs)
		for r := range regs {
			regs[r] = mem[r*p.regBytes : (r+1)*p.regBytes]
		}
		ev.regs = append(ev.regs, regs)
		ev.offs = append(ev.offs, make([]int, 1))
	}
	for _, g := range p.periodic {
		ev.exp = append(ev.exp, make([]byte, (g.period+chunkElems)*g.size))
	}
	return ev
}

// expand writes the periodic operands' expansions: one period gathered,
// then repeated for a chunk's length, so that the window of any chunk at
// q is the contiguous run from q mod period. Every run calls it before
// evaluating chunks (the operands may have changed).
func (ev *evaluator) expand() {
	for k, g := range ev.p.periodic {
		e, es := ev.exp[k], g.size
		gatherInto(e, ev.a.In(g.operand), g, 0, g.period, ev.offs[0])
		for n := g.period * es; n < len(e); {
			n += copy(e[n:], e[n-g.period*es:n])
		}
	}
}

// bytesOf resolves an operand for the chunk at domain position q: m
// elements (a register holds chunkElems) or, for a scalar, its one.
func (ev *evaluator) bytesOf(s source, part, q, m int, out []byte) []byte {
	switch s.kind {
	case srcReg:
		return ev.regs[part][s.idx]
	case srcScalar:
		return ev.a.In(s.idx)
	case srcPeriodic:
		g := ev.p.periodic[s.idx]
		o := q % g.period * g.size
		return ev.exp[s.idx][o : o+m*g.size]
	}
	if s.idx < 0 {
		es := ev.p.outDT.Size()
		return out[q*es : (q+m)*es]
	}
	es := ev.p.esize[s.idx]
	return ev.a.In(s.idx)[q*es : (q+m)*es]
}

// chunk evaluates the program over domain positions [q, q+m); the result
// goes to out (when not reducing) or to the output register.
func (ev *evaluator) chunk(part, q, m int, out []byte) {
	p := ev.p
	regs := ev.regs[part]
	for _, g := range p.gathers {
		gatherInto(regs[g.reg], ev.a.In(g.operand), g, q, m, ev.offs[part])
	}
	var srcs [3]unsafe.Pointer
	for _, in := range p.prog {
		for k, s := range in.srcs {
			srcs[k] = unsafe.Pointer(unsafe.SliceData(ev.bytesOf(s, part, q, m, out)))
		}
		in.run(m, unsafe.Pointer(unsafe.SliceData(ev.bytesOf(in.dst, part, q, m, out))), srcs[0], srcs[1], srcs[2])
	}
}

// gatherInto copies the broadcast operand's elements for domain positions
// [q, q+m) into a register.
func gatherInto(dst, src []byte, g gatherSpec, q, m int, offs []int) {
	es := g.size
	g.bc.walk(q, q+m, offs, func(p, run int, o []int) {
		d := dst[(p-q)*es : (p-q+run)*es]
		if g.bc.vec[0] == 1 {
			copy(d, src[o[0]*es:(o[0]+run)*es])
			return
		}
		fill(d, src[o[0]*es:(o[0]+1)*es])
	})
}

// fill repeats the element v (of len(v) bytes) over d: one element, then
// copies of the filled prefix doubling in length, so long fills (a
// per-channel value over a feature map) run at memmove's speed.
func fill(d, v []byte) {
	if len(v) == 0 {
		return
	}
	n := copy(d, v)
	for n < len(d) {
		n += copy(d[n:], d[:n])
	}
}

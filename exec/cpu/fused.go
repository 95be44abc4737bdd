package cpu

import (
	"fmt"
	"slices"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The chunk evaluator runs a fused group (opdef.FusedAttr) over its domain in
// chunks of chunkElems elements: each op of the group's program runs over
// the chunk into a small register (a per-thread buffer that stays in
// cache), so intermediate values never go to main memory. Operands that
// have the domain's shape are read in place; scalars are passed as
// scalars to the micro-ops that take them; other broadcast operands are
// gathered into a register at the start of each chunk. The last op writes
// straight into the output, or into a register that the trailing
// reduction folds into its accumulators.

func init() { kernels[opdef.OpFused] = prepareFused }

// chunkElems is the chunk length: 2048 elements is 8 KiB of float32 per
// register, so a program's live registers stay in L1/L2.
const chunkElems = 2048

// source kinds of an instruction operand.
const (
	srcReg    = iota // a register
	srcFull          // an operand with the domain's shape, read in place
	srcScalar        // an operand with one element
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
	run  func(dst []byte, srcs [3][]byte, m int)
}

type fusedPlan struct {
	attr     *opdef.FusedAttr
	n        int // domain elements
	inputs   []tensor.DType
	esize    []int        // element size per operand
	gathers  []gatherSpec // broadcast operands gathered per chunk
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
}

// fusedSupported reports whether the CPU can run a fused group: every op
// must have a micro-op for its dtypes and a trailing reduction must be a
// row, column or full reduction after coalescing.
func fusedSupported(n *graph.Node) error {
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
	// Operand modes.
	scalarOK := make([]bool, len(ins)) // every use accepts a scalar
	for i := range scalarOK {
		scalarOK[i] = ins[i].Shape().Size() == 1
	}
	for _, o := range a.Ops {
		for _, r := range o.Args {
			if r < 0 && !takesScalars(o.Op) {
				scalarOK[-r-1] = false
			}
		}
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
		case scalarOK[i]:
			inputSrc[i] = source{srcScalar, i}
		default:
			r := alloc()
			inputSrc[i] = source{srcReg, r}
			p.gathers = append(p.gathers, gatherSpec{operand: i, reg: r, bc: newBcast(a.Domain, []tensor.Shape{in.Shape()}), size: p.esize[i]})
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
		// Registers whose last reader is this op are free for later ops
		// (not for this op's destination: a widening Cast would overwrite
		// operand elements it has not read yet).
		for k, r := range o.Args {
			if r >= 0 && last[r] == i && !slices.Contains(o.Args[:k], r) { // Mul(t, t) frees t once
				free = append(free, regOf[r])
			}
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
		case ops.OpSum, ops.OpMax, ops.OpMin:
		default:
			return nil, fmt.Errorf("%w: fused reduction %v", errUnsupported, a.Reduce.Op)
		}
		switch p.outDT {
		case tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64:
		default:
			return nil, fmt.Errorf("%w: fused reduction of %v", errUnsupported, p.outDT)
		}
	}
	p.regBytes = chunkElems * 8
	return p, nil
}

// takesScalars: the micro-ops of these ops accept a one-element operand.
func takesScalars(op graph.Op) bool {
	switch op {
	case ops.OpAdd, ops.OpSub, ops.OpMul, ops.OpDiv, ops.OpPow, ops.OpMaximum, ops.OpMinimum,
		ops.OpEqual, ops.OpNotEqual, ops.OpLess, ops.OpLessEqual, ops.OpGreater, ops.OpGreaterEqual,
		ops.OpAnd, ops.OpOr, ops.OpWhere:
		return true
	}
	return false
}

func stride(s source) int {
	if s.kind == srcScalar {
		return 0
	}
	return 1
}

// microOp builds the chunk function of one fused op.
func microOp(o opdef.FusedOp, dts []tensor.DType, srcs []source) (func(d []byte, s [3][]byte, m int), error) {
	switch o.Op {
	case ops.OpAdd, ops.OpSub, ops.OpMul, ops.OpDiv, ops.OpPow, ops.OpMaximum, ops.OpMinimum:
		switch o.DType {
		case tensor.Float32:
			return arithMicro[float32](o.Op, srcs)
		case tensor.Float64:
			return arithMicro[float64](o.Op, srcs)
		case tensor.Int32:
			return arithMicro[int32](o.Op, srcs)
		case tensor.Int64:
			return arithMicro[int64](o.Op, srcs)
		}
	case ops.OpEqual, ops.OpNotEqual, ops.OpLess, ops.OpLessEqual, ops.OpGreater, ops.OpGreaterEqual:
		as0, bs0 := stride(srcs[0]), stride(srcs[1])
		switch dts[0] {
		case tensor.Float32:
			return compareMicro[float32](o.Op, as0, bs0), nil
		case tensor.Float64:
			return compareMicro[float64](o.Op, as0, bs0), nil
		case tensor.Int32:
			return compareMicro[int32](o.Op, as0, bs0), nil
		case tensor.Int64:
			return compareMicro[int64](o.Op, as0, bs0), nil
		case tensor.Bool:
			return compareMicro[uint8](o.Op, as0, bs0), nil
		}
	case ops.OpAnd, ops.OpOr:
		as0, bs0 := stride(srcs[0]), stride(srcs[1])
		and := o.Op == ops.OpAnd
		return func(d []byte, s [3][]byte, m int) {
			x, y := s[0], s[1]
			for i := 0; i < m; i++ {
				if and {
					d[i] = x[i*as0] & y[i*bs0]
				} else {
					d[i] = x[i*as0] | y[i*bs0]
				}
			}
		}, nil
	case ops.OpNot:
		return func(d []byte, s [3][]byte, m int) {
			x := s[0][:m]
			for i := range x {
				d[i] = x[i] ^ 1
			}
		}, nil
	case ops.OpWhere:
		cs, xs, ys := stride(srcs[0]), stride(srcs[1]), stride(srcs[2])
		switch o.DType.Size() {
		case 1:
			return whereMicro[uint8](cs, xs, ys), nil
		case 2:
			return whereMicro[uint16](cs, xs, ys), nil
		case 4:
			return whereMicro[uint32](cs, xs, ys), nil
		case 8:
			return whereMicro[uint64](cs, xs, ys), nil
		}
	case ops.OpCast:
		f := castFunc(dts[0], o.DType)
		if f == nil {
			break
		}
		fs, ts := dts[0].Size(), o.DType.Size()
		return func(d []byte, s [3][]byte, m int) { f(d[:m*ts], s[0][:m*fs]) }, nil
	case ops.OpStopGradient:
		es := o.DType.Size()
		return func(d []byte, s [3][]byte, m int) { copy(d[:m*es], s[0][:m*es]) }, nil
	default:
		var f any
		switch o.DType {
		case tensor.Float32:
			f = unaryFloat[float32](o.Op)
		case tensor.Float64:
			f = unaryFloat[float64](o.Op)
		case tensor.Int32:
			f = unaryInt[int32](o.Op)
		case tensor.Int64:
			f = unaryInt[int64](o.Op)
		}
		switch u := f.(type) {
		case func(d, a []float32):
			if u != nil {
				return func(d []byte, s [3][]byte, m int) { u(as[float32](d)[:m], as[float32](s[0])) }, nil
			}
		case func(d, a []float64):
			if u != nil {
				return func(d []byte, s [3][]byte, m int) { u(as[float64](d)[:m], as[float64](s[0])) }, nil
			}
		case func(d, a []int32):
			if u != nil {
				return func(d []byte, s [3][]byte, m int) { u(as[int32](d)[:m], as[int32](s[0])) }, nil
			}
		case func(d, a []int64):
			if u != nil {
				return func(d []byte, s [3][]byte, m int) { u(as[int64](d)[:m], as[int64](s[0])) }, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: no fused micro-op for %v of %v", errUnsupported, o.Op, dts)
}

func arithMicro[T num](op graph.Op, srcs []source) (func(d []byte, s [3][]byte, m int), error) {
	vv, vs, sv, ok := binaryOps[T](op)
	if !ok {
		return nil, fmt.Errorf("%w: %v", errUnsupported, op)
	}
	switch {
	case srcs[0].kind != srcScalar && srcs[1].kind != srcScalar:
		return func(d []byte, s [3][]byte, m int) { vv(as[T](d)[:m], as[T](s[0]), as[T](s[1])) }, nil
	case srcs[0].kind != srcScalar:
		return func(d []byte, s [3][]byte, m int) { vs(as[T](d)[:m], as[T](s[0]), as[T](s[1])[0]) }, nil
	case srcs[1].kind != srcScalar:
		return func(d []byte, s [3][]byte, m int) { sv(as[T](d)[:m], as[T](s[0])[0], as[T](s[1])) }, nil
	}
	// Both scalars: compute once and fill.
	return func(d []byte, s [3][]byte, m int) {
		var one [1]T
		vv(one[:], as[T](s[0]), as[T](s[1]))
		dd := as[T](d)[:m]
		for i := range dd {
			dd[i] = one[0]
		}
	}, nil
}

func compareMicro[T ordered](op graph.Op, as0, bs0 int) func(d []byte, s [3][]byte, m int) {
	f := compareRun[T](op)
	return func(d []byte, s [3][]byte, m int) { f(d[:m], as[T](s[0]), as0, as[T](s[1]), bs0) }
}

func whereMicro[T uint8 | uint16 | uint32 | uint64](cs, xs, ys int) func(d []byte, s [3][]byte, m int) {
	return func(d []byte, s [3][]byte, m int) {
		selectRun(as[T](d)[:m], s[0], cs, as[T](s[1]), xs, as[T](s[2]), ys)
	}
}

var errUnsupported = fmt.Errorf("unsupported")

func prepareFused(n *graph.Node) (*kernel, error) {
	p, err := planFused(n)
	if err != nil {
		return nil, err
	}
	if p.attr.Reduce != nil {
		return fusedReduceKernel(p, n)
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
		return func() { l.Run(p.n, grainElems/4, 0) }
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
	return ev
}

// bytesOf resolves an operand for the chunk at domain position q.
func (ev *evaluator) bytesOf(s source, part, q, m int, out []byte) []byte {
	switch s.kind {
	case srcReg:
		return ev.regs[part][s.idx]
	case srcScalar:
		return ev.a.In(s.idx)
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
	var srcs [3][]byte
	for _, in := range p.prog {
		for k, s := range in.srcs {
			srcs[k] = ev.bytesOf(s, part, q, m, out)
		}
		in.run(ev.bytesOf(in.dst, part, q, m, out), srcs, m)
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

// fill repeats the element v (of len(v) bytes) over d.
func fill(d, v []byte) {
	switch len(v) {
	case 4:
		x := as[uint32](v)[0]
		dd := as[uint32](d)
		for i := range dd {
			dd[i] = x
		}
	case 8:
		x := as[uint64](v)[0]
		dd := as[uint64](d)
		for i := range dd {
			dd[i] = x
		}
	default:
		for i := 0; i < len(d); i += len(v) {
			copy(d[i:i+len(v)], v)
		}
	}
}

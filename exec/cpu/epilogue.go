package cpu

import (
	"slices"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
)

// Epilogues. A convolution's bias and activation arrive as a fused
// elementwise step (Fused[Add,Relu]) that reads the convolution's result
// and, since the result dies there, overwrites it in place (exec's memory
// plan). Run as its own step, that pass reads and writes the whole result
// again from memory. Instead, a kernel that declares kernel.epilogue runs
// the fused program over each range of its result as soon as it has
// written it, while the range is in cache, and the fused step runs
// nothing. The values are the same bits: the same micro-ops over the same
// elements, only earlier.
//
// The fused step F qualifies for producer step P when
//   - P's result is an arena value that F alone reads (no other step, no
//     view of it), and F writes its result in P's result's buffer (in
//     place) or in a program output (a buffer no other step writes or
//     reads before F);
//   - F is an elementwise Fused group without a reduction (every output
//     element depends on the same element of P's result);
//   - every other operand of F exists before P runs (written by a step
//     before P, or a feed, variable or constant), so that P can read it.
//
// When F is only a per-channel bias and a ReLU of P's result, in place
// (Add(y, b) with b broadcast along axis 1, Relu, or both in that
// order: a convolution's bias and activation) and P's kernel declares
// kernel.chanEpilogue, the kernel applies them itself as it stores each
// element (internal/gemm's ShiftPlan.RunEpi), with the same bits as
// simd's Add and Relu.
//
// A step with an epilogue never joins a wave (interop.go): it writes and
// reads more than its own operands say. In a profile, F's slice is empty
// and its time is in P's.

// epiloguesOff turns the planning off (tests compare with it).
var epiloguesOff bool

// epilogueStep is a fused step run as another step's epilogue.
type epilogueStep struct {
	step int // the fused step's index
	plan *fusedPlan
	// bias and relu: the fused step is the producer's per-channel bias
	// (its operand bias, or -1 for none) and ReLU, which the producer's
	// kernel applies (kernel.chanEpilogue) when inKernel.
	inKernel bool
	bias     int
	relu     bool
}

// chanEpi is a per-channel bias and ReLU epilogue as the producer's
// kernel sees it (args.epiChan).
type chanEpi struct {
	fa   *args // the fused step's
	bias int
	Relu bool
}

// Bias is the bytes of the bias (one element per channel of the
// producer's result), or nil when there is none.
func (c *chanEpi) Bias() []byte {
	if c.bias < 0 {
		return nil
	}
	return c.fa.In(c.bias)
}

// chanEpilogueOf reports whether fused program fa over operands in is a
// per-channel bias and/or ReLU of operand in[ci] (of shape y and type dt):
// Add(y, b) with b of y's type whose only dimension above 1 is y's axis 1
// (aligned from the right, as broadcasting reads it), then Relu, or one of
// the two. bias is b's operand index, or -1.
func chanEpilogueOf(fa *opdef.FusedAttr, in []*graph.Node, ci int) (bias int, relu, ok bool) {
	y := in[ci].Shape()
	dt := in[ci].DType()
	if fa.Reduce != nil || !slices.Equal(fa.Domain, y) || len(y) < 2 {
		return -1, false, false
	}
	bias, prev := -1, -ci-1 // prev: the value the next op must read
	for k, o := range fa.Ops {
		if o.DType != dt || o.Attr != nil {
			return -1, false, false
		}
		switch {
		case o.Op == ops.OpAdd && k == 0 && len(o.Args) == 2 && o.Args[0] == prev && o.Args[1] < 0:
			b := -o.Args[1] - 1
			bs := in[b].Shape()
			if b == ci || in[b].DType() != dt || len(bs) > len(y) {
				return -1, false, false
			}
			for d := range bs {
				axis := len(y) - len(bs) + d
				if axis == 1 && bs[d] != y[1] || axis != 1 && bs[d] != 1 {
					return -1, false, false
				}
			}
			if len(bs) < len(y)-1 {
				return -1, false, false // b does not reach axis 1
			}
			bias = b
		case o.Op == ops.OpRelu && k == len(fa.Ops)-1 && len(o.Args) == 1 && o.Args[0] == prev:
			relu = true
		default:
			return -1, false, false
		}
		prev = k
	}
	return bias, relu, len(fa.Ops) > 0
}

// planEpilogues finds the steps whose fused consumer can be their
// epilogue and turns that consumer's kernel into noKernel.
func (e *executable) planEpilogues() {
	if epiloguesOff {
		return
	}
	p := e.plan
	readers := make([]int, len(p.Values))
	reader := make([]int, len(p.Values))
	for i, s := range p.Steps {
		for _, v := range s.In {
			r := p.Root(v)
			readers[r]++
			reader[r] = i
			if r != v {
				readers[r]++ // a view: never an epilogue's input
			}
		}
	}
	for j, s := range p.Steps {
		k := e.kernels[j]
		if s.Kind != exec.KernelStep || k == nil || !k.epilogue {
			continue
		}
		c := s.Out
		vc := p.Values[c]
		if vc.Storage != exec.InArena || vc.Alias >= 0 || readers[c] != 1 {
			continue
		}
		i := reader[c]
		f := p.Steps[i]
		if f.Kind != exec.KernelStep || f.Node.Op() != opdef.OpFused || e.kernels[i] == nil || e.kernels[i] == noKernel {
			continue
		}
		if a, ok := f.Node.Attr().(*opdef.FusedAttr); !ok || a.Reduce != nil {
			continue
		}
		vf := p.Values[f.Out]
		inPlace := vf.Storage == exec.InArena && vf.Buffer == vc.Buffer
		if !inPlace && (vf.Storage != exec.InOutput || vf.Alias >= 0) || vf.Bytes != vc.Bytes {
			continue
		}
		ok := true
		for _, v := range f.In {
			if v != c && p.Values[p.Root(v)].Def >= j {
				ok = false
			}
		}
		if !ok {
			continue
		}
		fp, err := planFused(f.Node)
		if err != nil {
			continue
		}
		if e.epi == nil {
			e.epi = map[int]*epilogueStep{}
		}
		ep := &epilogueStep{step: i, plan: fp, bias: -1}
		if ci := slices.Index(f.In, c); k.chanEpilogue && inPlace && ci >= 0 {
			ins := make([]*graph.Node, len(f.In))
			for q, v := range f.In {
				ins[q] = p.Values[v].Node
			}
			ep.bias, ep.relu, ep.inKernel = chanEpilogueOf(f.Node.Attr().(*opdef.FusedAttr), ins, ci)
		}
		e.epi[j] = ep
		e.kernels[i] = noKernel
	}
}

// bind gives the producer's args (pa) the epilogue and returns the
// producer's run (run) preceded by the program's per-run set-up.
func (ep *epilogueStep) bind(in *instance, pa *args, run func()) func() {
	s := in.exe.plan.Steps[ep.step]
	fa := &args{inst: in, node: s.Node, in: s.In, out: s.Out, step: ep.step}
	fa.workers = max(fa.Threads(), pa.Threads()) // the producer's loop parts call it
	if ep.inKernel {
		pa.epiChan = &chanEpi{fa: fa, bias: ep.bias, Relu: ep.relu}
		return run
	}
	ev := newEvaluator(ep.plan, fa)
	pa.epi = func(part, lo, hi int) {
		out := fa.Out()
		for q := lo; q < hi; q += chunkElems {
			ev.chunk(part, q, min(chunkElems, hi-q), out)
		}
	}
	return func() {
		ev.expand()
		run()
	}
}

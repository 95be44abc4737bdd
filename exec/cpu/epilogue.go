package cpu

import (
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/internal/opdef"
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
// A step with an epilogue never joins a wave (interop.go): it writes and
// reads more than its own operands say. In a profile, F's slice is empty
// and its time is in P's.

// epiloguesOff turns the planning off (tests compare with it).
var epiloguesOff bool

// epilogueStep is a fused step run as another step's epilogue.
type epilogueStep struct {
	step int // the fused step's index
	plan *fusedPlan
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
		e.epi[j] = &epilogueStep{step: i, plan: fp}
		e.kernels[i] = noKernel
	}
}

// bind gives the producer's args (pa) the epilogue and returns the
// producer's run (run) preceded by the program's per-run set-up.
func (ep *epilogueStep) bind(in *instance, pa *args, run func()) func() {
	s := in.exe.plan.Steps[ep.step]
	fa := &args{inst: in, node: s.Node, in: s.In, out: s.Out, step: ep.step}
	fa.workers = max(fa.Threads(), pa.Threads()) // the producer's loop parts call it
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

package cpu

import (
	"fmt"
	"runtime/debug"
)

// Collectives overlap computation. A collective step (kernel.alone) of a
// top-level program starts on a goroutine of its own, and the steps after
// it run meanwhile, up to the first wave that touches its memory (reads
// or writes its result, writes its operand: conflicts as interop.go
// defines them, which also covers the arena bytes the memory plan hands
// on) or is another collective (every rank calls its communicator in plan
// order, one at a time). The Run waits for it there, and at its end. A
// profiled Run runs collectives in place, one slice of the track each.

// planOverlap returns, for each wave that is a collective step, the index
// of the first later wave that must wait for it (len(waves): the end of
// the Run), and -1 for the other waves.
func (e *executable) planOverlap() []int {
	p := e.plan
	until := make([]int, len(e.waves))
	for k := range until {
		until[k] = -1
	}
	if e.nested {
		return until
	}
	for k, w := range e.waves {
		s := w.lo
		if w.hi-w.lo != 1 || e.kernels[s] == nil || !e.kernels[s].alone {
			continue
		}
		acc := accessOf(p, p.Steps[s])
		until[k] = len(e.waves)
	next:
		for j := k + 1; j < len(e.waves); j++ {
			for i := e.waves[j].lo; i < e.waves[j].hi; i++ {
				if kk := e.kernels[i]; kk != nil && kk.alone || p.Bodies[p.Steps[i].Node] != nil {
					until[k] = j // another collective, or a loop whose body might hold one
					break next
				}
				b := accessOf(p, p.Steps[i])
				if anyOverlap(acc.writes, b.reads) || anyOverlap(acc.writes, b.writes) || anyOverlap(acc.reads, b.writes) {
					until[k] = j
					break next
				}
			}
		}
		if until[k] == k+1 {
			until[k] = -1 // nothing to overlap with: run it in place
		}
	}
	return until
}

// startCollective runs step i on a goroutine; waitCollective waits for it.
func (in *instance) startCollective(i int) {
	in.collDone = make(chan struct{})
	go func() {
		defer close(in.collDone)
		defer func() {
			if r := recover(); r != nil {
				in.pmu.Lock()
				if in.panicked == nil {
					in.panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
				}
				in.pmu.Unlock()
			}
		}()
		in.run[i]()
	}()
}

// waitCollective waits for the running collective, if any.
func (in *instance) waitCollective() {
	if in.collDone != nil {
		<-in.collDone
		in.collDone = nil
	}
}

package cpu

import (
	"fmt"
	"runtime/debug"

	"github.com/loomgraph/loom/exec"
)

// Inter-op parallelism. A step whose kernel is too small for a second
// worker (workersFor gives it one) leaves the other cores idle; when the
// plan has several such steps in a row that do not touch each other's
// memory (the bias and weight gradients of different layers, the
// per-parameter optimiser updates), they run at the same time instead,
// each on one goroutine: a wave. Results are the same bits, as every step
// computes the same thing wherever it runs; the memory plan is kept, as
// two steps join a wave only when no byte one of them writes is read or
// written by the other (which is also what the plan's reuse of arena
// bytes requires: a step that takes over a freed buffer conflicts with
// the step that last read it).

// wave is the steps [lo, hi) of a plan, run concurrently when hi-lo > 1.
type wave struct{ lo, hi int }

// minWaveNs is the least estimated work of a wave: below it the dispatch
// (about 1 µs a part) costs more than running the steps one after the
// other.
const minWaveNs = minPartNs

// region is bytes of one buffer: key names the buffer (the arena, a
// feed, a variable, an output), [lo, hi) the bytes in it.
type region struct {
	key    regionKey
	lo, hi int64
}

type regionKey struct {
	storage exec.Storage
	index   int
}

var arenaKey = regionKey{exec.InArena, 0}

// regionOf is the bytes of value v, and false for a constant or a feed:
// read-only, they conflict with nothing (RunInto refuses outputs that
// share memory with a feed or with each other).
func regionOf(p *exec.Plan, v int) (region, bool) {
	r, off := p.View(v)
	root := p.Values[r]
	n := p.Values[v].Bytes
	switch root.Storage {
	case exec.InConst, exec.InInput:
		return region{}, false
	case exec.InArena:
		return region{arenaKey, root.Offset + off, root.Offset + off + n}, true
	case exec.InVar, exec.InNext:
		// A variable's current and next values may share memory: one key.
		return region{regionKey{exec.InVar, root.Index}, off, off + n}, true
	}
	return region{regionKey{root.Storage, root.Index}, off, off + n}, true
}

func (a region) overlaps(b region) bool { return a.key == b.key && a.lo < b.hi && b.lo < a.hi }

// stepAccess is what one step reads and writes.
type stepAccess struct{ reads, writes []region }

func accessOf(p *exec.Plan, s exec.Step) stepAccess {
	var acc stepAccess
	for _, v := range s.In {
		if r, ok := regionOf(p, v); ok {
			acc.reads = append(acc.reads, r)
		}
	}
	if r, ok := regionOf(p, s.Out); ok {
		acc.writes = append(acc.writes, r)
	}
	return acc
}

// conflicts reports whether a and b may not run at the same time.
func (a stepAccess) conflicts(b stepAccess) bool {
	return anyOverlap(a.writes, b.reads) || anyOverlap(a.writes, b.writes) || anyOverlap(b.writes, a.reads)
}

func anyOverlap(xs, ys []region) bool {
	for _, x := range xs {
		for _, y := range ys {
			if x.overlaps(y) {
				return true
			}
		}
	}
	return false
}

// planWaves groups the plan's steps: consecutive small kernel steps that
// are pairwise free of conflicts, worth minWaveNs together, form a wave;
// every other step is a wave of one. With one goroutine to run them
// (one thread, or GOMAXPROCS 1) every step is its own wave.
func (e *executable) planWaves() []wave {
	p := e.plan
	var waves []wave
	single := func(i int) { waves = append(waves, wave{i, i + 1}) }
	if e.be.pool.runners() <= 1 {
		for i := range p.Steps {
			single(i)
		}
		return waves
	}
	small := func(i int) (float64, bool) {
		s := p.Steps[i]
		if s.Kind != exec.KernelStep || e.kernels[i] == nil || e.kernels[i] == noKernel || e.kernels[i].alone || p.Bodies[s.Node] != nil || e.epi[i] != nil {
			return 0, false
		}
		if e.be.workersFor(s.Node) > 1 {
			return 0, false
		}
		return estimateNs(s.Node), true
	}
	var cur []stepAccess
	lo, work := 0, 0.0
	flush := func(hi int) {
		switch {
		case hi == lo:
		case hi-lo > 1 && work >= minWaveNs:
			waves = append(waves, wave{lo, hi})
		default:
			for i := lo; i < hi; i++ {
				single(i)
			}
		}
		lo, work, cur = hi, 0, cur[:0]
	}
	for i := range p.Steps {
		est, ok := small(i)
		if !ok {
			flush(i)
			single(i)
			lo = i + 1
			continue
		}
		acc := accessOf(p, p.Steps[i])
		for _, c := range cur {
			if c.conflicts(acc) {
				flush(i)
				break
			}
		}
		cur = append(cur, acc)
		work += est
	}
	flush(len(p.Steps))
	return waves
}

// runWave runs the steps of wave k on the pool, each step on one
// goroutine (the caller's or a worker's); a panic in a step is recorded
// like a kernel loop's, and re-raised by Run.
func (in *instance) runWave(k int) {
	w := in.exe.waves[k]
	in.exe.be.pool.For(w.hi-w.lo, 1, w.hi-w.lo, 0, &in.job, nil, nil, in.waveFns[k])
}

// bindWaves makes the loop bodies of the instance's waves, once, so that
// a Run allocates nothing.
func (in *instance) bindWaves() {
	in.waveFns = make([]func(lo, hi, part int), len(in.exe.waves))
	for k, w := range in.exe.waves {
		if w.hi-w.lo > 1 {
			in.waveFns[k] = func(lo, hi, _ int) {
				for i := w.lo + lo; i < w.lo+hi; i++ {
					in.runGuarded(i)
				}
			}
		}
	}
}

func (in *instance) runGuarded(i int) {
	defer func() {
		if r := recover(); r != nil {
			in.pmu.Lock()
			if in.panicked == nil {
				in.panicked = fmt.Sprintf("step %d (%s): %v\n%s", i, in.exe.plan.DescribeStep(i), r, debug.Stack())
			}
			in.pmu.Unlock()
		}
	}()
	in.run[i]()
}

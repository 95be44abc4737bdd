package cpu

import (
	"sync"

	"github.com/loomgraph/loom/exec"
)

// pool runs parallel loops on a fixed set of worker goroutines. A loop is
// split into at most threads parts; the caller runs one part itself. It
// allocates nothing per loop: the task carries a function value created
// when the kernel was bound, and the caller's WaitGroup.
type pool struct {
	threads int
	tasks   chan task
	stop    sync.Once
}

// tracer reports the parts of a step to a profiler (nil when none).
type tracer struct {
	obs  exec.StepObserver
	step int
}

type task struct {
	fn         func(lo, hi, part int)
	lo, hi     int
	part       int
	wg         *sync.WaitGroup
	tr         *tracer
	dispatched int64
}

func newPool(threads int) *pool {
	p := &pool{threads: threads, tasks: make(chan task, 4*threads)}
	for i := 1; i < threads; i++ {
		go p.worker(i)
	}
	return p
}

// worker runs tasks; id numbers the goroutine for the profiler (the
// caller of a loop is 0).
func (p *pool) worker(id int) {
	for t := range p.tasks {
		if t.tr != nil {
			start := t.tr.obs.Now()
			t.fn(t.lo, t.hi, t.part)
			t.tr.obs.Part(t.tr.step, id, t.dispatched, start, t.tr.obs.Now())
		} else {
			t.fn(t.lo, t.hi, t.part)
		}
		t.wg.Done()
	}
}

func (p *pool) close() { p.stop.Do(func() { close(p.tasks) }) }

// parts returns how many parts a loop of n iterations is split into when
// each part should have at least grain iterations.
func (p *pool) parts(n, grain int) int {
	if grain < 1 {
		grain = 1
	}
	k := n / grain
	if k > p.threads {
		k = p.threads
	}
	if k < 1 {
		k = 1
	}
	return k
}

// For runs fn over [0,n) split into parts of at least grain iterations,
// fn(lo, hi, part) with part in [0, parts). It returns when all parts are
// done. wg must not be in use by another loop; tr, when non-nil, receives
// the timing of the parts that run on workers.
func (p *pool) For(n, grain int, wg *sync.WaitGroup, tr *tracer, fn func(lo, hi, part int)) {
	k := p.parts(n, grain)
	if k <= 1 {
		if n > 0 {
			fn(0, n, 0)
		}
		return
	}
	wg.Add(k - 1)
	var now int64
	if tr != nil {
		now = tr.obs.Now()
	}
	for i := 1; i < k; i++ {
		p.tasks <- task{fn: fn, lo: i * n / k, hi: (i + 1) * n / k, part: i, wg: wg, tr: tr, dispatched: now}
	}
	fn(0, n/k, 0)
	wg.Wait()
}

package cpu

import (
	"sync"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/internal/stop"
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
	step       int
	done       <-chan struct{}
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
			runPart(t.fn, t.lo, t.hi, t.part, t.step, t.done)
			t.tr.obs.Part(t.tr.step, id, t.dispatched, start, t.tr.obs.Now())
		} else {
			runPart(t.fn, t.lo, t.hi, t.part, t.step, t.done)
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
//
// Cancellation: when done is not nil (the Run's context can be cancelled)
// and step > 0, each part calls fn on consecutive sub-ranges of at most
// step iterations and stops at the first sub-range boundary after done is
// closed; fn must give the same results however its part is cut (per-part
// state carried between the calls, nothing reset per call). With step 0 the
// kernel checks for cancellation itself (Loop bodies whose iterations are
// heavy or uneven). When done is nil each part is one call, as it always
// was: a Run that cannot be cancelled pays nothing.
func (p *pool) For(n, grain, step int, wg *sync.WaitGroup, tr *tracer, done <-chan struct{}, fn func(lo, hi, part int)) {
	if forcedStep > 0 && step > 0 {
		step = forcedStep
	}
	k := p.parts(n, grain)
	if k <= 1 {
		switch {
		case n <= 0:
		case done == nil && forcedStep == 0:
			fn(0, n, 0) // no call of runPart: small loops of short Runs
		default:
			runPart(fn, 0, n, 0, step, done)
		}
		return
	}
	wg.Add(k - 1)
	var now int64
	if tr != nil {
		now = tr.obs.Now()
	}
	for i := 1; i < k; i++ {
		p.tasks <- task{fn: fn, lo: i * n / k, hi: (i + 1) * n / k, part: i, step: step, done: done, wg: wg, tr: tr, dispatched: now}
	}
	runPart(fn, 0, n/k, 0, step, done)
	wg.Wait()
}

// runPart runs part of a loop: fn(lo, hi, part) in one call, or, when done
// is not nil (or a test forces sub-ranges) and step > 0, in calls over at
// most step iterations with a check of done before each.
func runPart(fn func(lo, hi, part int), lo, hi, part, step int, done <-chan struct{}) {
	if step <= 0 || (done == nil && forcedStep == 0) {
		fn(lo, hi, part)
		return
	}
	for lo < hi {
		if stop.Done(done) {
			return
		}
		e := hi
		if hi-lo > step {
			e = lo + step
		}
		fn(lo, e, part)
		lo = e
	}
}

// Cancellation granularity. A cancelled Run returns after its running
// kernel reaches its next check; the checks are spaced so that the work
// between two is well under a millisecond for cheap elements and a few
// milliseconds for the most expensive ones (Pow, scalar exp), while their
// cost (a non-blocking receive, a few ns) stays far below 0.1%.
const (
	// stepElems is the sub-range of elementwise and movement loops: 128K
	// elements (about 40 µs of a cheap op, 4 ms of a Pow).
	stepElems = 1 << 17
	// checkElems is how many elements a serial loop (a long reduction, a
	// strided softmax line, an ArgMax scan) handles between checks;
	// splitting these loops does not change their arithmetic.
	checkElems = 1 << 16
)

// longRun is the longest contiguous run a SIMD reduction (a sum, a
// maximum, a softmax row) handles in one call: 4M elements, a few ms.
// Longer runs reduce in blocks of longRun with checks between, their
// partial sums added in block order (a different rounding from one pass
// over the run, still independent of the thread count). A variable so
// that tests can shrink it.
var longRun = 1 << 22

// copyStep is the sub-range, in bytes, of loops that copy or clear memory
// (copies, Concat, Pad's zeroing): 32 MB, about 3 ms, so that memmove and
// memclr keep their non-temporal stores for large sizes (from 1 MB and
// 32 MB up: 512 KB pieces made a large Concat 20% slower). A variable so
// that tests can shrink it.
var copyStep = 1 << 25

// forcedStep, when positive, makes every stepped loop run in sub-ranges of
// forcedStep iterations even when the Run cannot be cancelled (tests).
var forcedStep = 0

package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/internal/stop"
)

// pool runs parallel loops on a fixed set of worker goroutines. A loop of
// k parts is a job whose parts are claimed one at a time by whoever is
// running: the caller claims parts too, and up to k-1 idle workers are
// signalled to help. Since parts are claimed, not assigned, a worker that
// starts late (parked, or waiting for a CPU when the pool has more
// workers than GOMAXPROCS) finds the parts already done by the others,
// instead of holding the loop up. There are min(threads, GOMAXPROCS)-1
// workers (GOMAXPROCS when the backend was made): a loop may be cut into
// up to threads parts, but no more goroutines work on it than can run at
// once. Nothing is allocated per loop: the job
// is the instance's, reused from loop to loop, and a generation number
// tells a stale signal (for a loop that is over) from a current one.
type pool struct {
	threads int
	wake    chan signal
	stop    sync.Once
	// procs is GOMAXPROCS when the pool was made: at most procs-1 workers
	// are signalled per loop (more could not run at once) and spin at a
	// time (spinners must never hold every P).
	procs    int
	spinners atomic.Int32
}

// spinFor is how long an idle worker keeps polling for the next loop
// before it parks, and how long the caller of a loop polls for its parts
// to finish before it blocks. Parking is cheap for the parker and dear
// for the next loop: on this project's machines (2-vCPU virtual machines)
// waking a parked worker whose CPU has gone idle costs about 10 µs
// (BenchmarkDispatch with 40 µs of serial work between loops), which made
// every small parallel kernel slower on two threads than on one. The
// steps of a Run follow each other within microseconds, so a worker that
// spins for 200 µs after a part is awake for the next kernel, and costs
// nothing once the Run is over but 200 µs of one CPU. Spinners yield
// (runtime.Gosched) between polls, so they never keep a runnable
// goroutine from a CPU.
var spinFor = 200 * time.Microsecond

// signal asks a worker to help with job j's loop of generation gen.
type signal struct {
	j   *job
	gen uint32
}

// tracer reports the parts of a step to a profiler (nil when none).
type tracer struct {
	obs  exec.StepObserver
	step int
}

// job is one loop at a time of an instance: its function and range, and
// the claim word: generation (32 bits), parts k (16 bits) and the next
// unclaimed part (16 bits), changed only atomically. The other fields
// are written before the claim word is published and read only by a
// participant that claimed a part of that generation.
type job struct {
	claim      atomic.Uint64
	fn         func(lo, hi, part int)
	n, step    int
	done       <-chan struct{}
	tr         *tracer
	dispatched int64
	// wg counts the unfinished parts for a caller that blocks; left
	// counts them for a caller that polls (decremented after wg.Done, so
	// that left == 0 implies the WaitGroup is at zero too).
	wg   sync.WaitGroup
	left atomic.Int32
}

const partsLimit = 1<<16 - 1

// claimPart claims the next part of generation gen: its index, or false
// when the loop of gen has no part left (or is over).
func (j *job) claimPart(gen uint32) (int, bool) {
	for {
		w := j.claim.Load()
		k, next := int(w>>16&0xffff), int(w&0xffff)
		if uint32(w>>32) != gen || next >= k {
			return 0, false
		}
		if j.claim.CompareAndSwap(w, w+1) {
			return next, true
		}
	}
}

// work runs parts of generation gen until none is left; worker is the
// goroutine's number for the profiler (0: the caller, not recorded).
func (j *job) work(gen uint32, worker int) {
	for {
		i, ok := j.claimPart(gen)
		if !ok {
			return
		}
		k := int(j.claim.Load() >> 16 & 0xffff)
		lo, hi := i*j.n/k, (i+1)*j.n/k
		if worker > 0 && j.tr != nil {
			start := j.tr.obs.Now()
			runPart(j.fn, lo, hi, i, j.step, j.done)
			j.tr.obs.Part(j.tr.step, worker, j.dispatched, start, j.tr.obs.Now())
		} else {
			runPart(j.fn, lo, hi, i, j.step, j.done)
		}
		j.wg.Done()
		j.left.Add(-1)
	}
}

// wait returns when every part is done, polling for up to spinFor first
// when spin is set.
func (j *job) wait(spin bool) {
	if spin && j.left.Load() != 0 {
		start := time.Now()
		for i := 1; j.left.Load() != 0; i++ {
			if i%16 == 0 {
				if time.Since(start) > spinFor {
					break
				}
				runtime.Gosched()
			}
		}
	}
	j.wg.Wait()
}

func newPool(threads int) *pool {
	p := &pool{threads: threads, wake: make(chan signal, 4*threads), procs: runtime.GOMAXPROCS(0)}
	for i := 1; i < min(threads, p.procs); i++ {
		go p.worker(i)
	}
	return p
}

// worker helps with loops; id numbers the goroutine for the profiler (the
// caller of a loop is 0).
func (p *pool) worker(id int) {
	for {
		s, ok := p.next()
		if !ok {
			return
		}
		s.j.work(s.gen, id)
	}
}

// next returns the next signal, spinning for up to spinFor (when fewer
// than procs-1 workers spin already) before it blocks; false when the
// pool is closed.
func (p *pool) next() (signal, bool) {
	select {
	case s, ok := <-p.wake:
		return s, ok
	default:
	}
	if p.spinners.Add(1) < int32(p.procs) {
		start := time.Now()
		for i := 1; ; i++ {
			select {
			case s, ok := <-p.wake:
				p.spinners.Add(-1)
				return s, ok
			default:
			}
			if i%16 == 0 {
				if time.Since(start) > spinFor {
					break
				}
				runtime.Gosched()
			}
		}
	}
	p.spinners.Add(-1)
	s, ok := <-p.wake
	return s, ok
}

func (p *pool) close() { p.stop.Do(func() { close(p.wake) }) }

// runners is how many goroutines can work on a loop at once: the caller
// and the workers.
func (p *pool) runners() int { return max(min(p.threads, p.procs), 1) }

// parts returns how many parts a loop of n iterations is split into when
// each part should have at least grain iterations (and there are at most
// p.threads parts).
func (p *pool) parts(n, grain int) int {
	if grain < 1 {
		grain = 1
	}
	return max(min(n/grain, p.threads, partsLimit), 1)
}

// For runs fn over [0,n) split into at most maxParts parts of at least
// grain iterations, fn(lo, hi, part) with part in [0, parts). It returns
// when all parts are done. j must not be in use by another loop; tr, when
// non-nil, receives the timing of the parts that run on workers.
//
// Cancellation: when done is not nil (the Run's context can be cancelled)
// and step > 0, each part calls fn on consecutive sub-ranges of at most
// step iterations and stops at the first sub-range boundary after done is
// closed; fn must give the same results however its part is cut (per-part
// state carried between the calls, nothing reset per call). With step 0 the
// kernel checks for cancellation itself (Loop bodies whose iterations are
// heavy or uneven). When done is nil each part is one call, as it always
// was: a Run that cannot be cancelled pays nothing.
func (p *pool) For(n, grain, maxParts, step int, j *job, tr *tracer, done <-chan struct{}, fn func(lo, hi, part int)) {
	if forcedStep > 0 && step > 0 {
		step = forcedStep
	}
	k := balance(n, min(p.parts(n, grain), max(maxParts, 1)), p.runners())
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
	j.fn, j.n, j.step, j.done, j.tr = fn, n, step, done, tr
	if tr != nil {
		j.dispatched = tr.obs.Now()
	}
	j.wg.Add(k)
	j.left.Store(int32(k))
	gen := uint32(j.claim.Load()>>32) + 1
	j.claim.Store(uint64(gen)<<32 | uint64(k)<<16)
	// Signal up to k-1 workers (no more than could run beside the caller);
	// a full queue means enough are signalled already.
	for range min(k-1, p.procs-1) {
		select {
		case p.wake <- signal{j, gen}:
		default:
		}
	}
	j.work(gen, 0)
	j.wait(p.procs > 1)
	j.fn, j.done, j.tr = nil, nil, nil // let go of the loop's closure
}

// balance returns how many of at most k parts to cut n iterations into
// when r goroutines claim them: the count with the least finishing time,
// ceil(parts/r) rounds of parts of at most ceil(n/parts) iterations (the
// fewest parts among equals). More parts than goroutines only pay when
// they even the rounds out: 10 iterations in 4 parts of 3, 3, 2, 2 on 2
// goroutines take 6 where 2 parts of 5 take 5, and 3 equal parts take
// 2/3 of the loop where 2 take 1/2.
func balance(n, k, r int) int {
	if k <= r || r < 1 {
		return k
	}
	best, cost := 1, n
	for c := 2; c <= k; c++ {
		if t := ceilDiv(c, r) * ceilDiv(n, c); t < cost {
			best, cost = c, t
		}
	}
	return best
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

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

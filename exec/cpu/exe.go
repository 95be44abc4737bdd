package cpu

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/stop"
	"github.com/loomgraph/loom/tensor"
)

// prepareFn builds the kernel of one node at lowering time: everything
// that depends only on shapes and attributes (broadcast strides, reduction
// plans) is computed here, once.
type prepareFn func(n *graph.Node) (*kernel, error)

// kernel is a prepared kernel. bind is called once per instance (an arena
// and its bindings); the function it returns runs the step and must not
// allocate.
type kernel struct {
	scratch int // bytes of scratch memory the kernel needs per instance
	bind    func(a *args) func()
	// ignoresIn0: the kernel never reads operand 0 (a scatter that fills
	// its result with operand 0's broadcast constant); the step computing
	// that operand is skipped when no other step reads it (Lower).
	ignoresIn0 bool
	// alone: the step never joins a wave (interop.go): a collective, which
	// every rank must call in plan order.
	alone bool
	// epilogue: the kernel calls args.epi over each range of its result
	// it has finished, so that the elementwise step consuming the result
	// in place can run there, while the range is in cache (epilogue.go).
	epilogue bool
	// chanEpilogue: the kernel, given args.epiChan instead of args.epi,
	// adds a per-channel bias and applies ReLU itself as it stores its
	// result (a convolution's bias and activation; epilogue.go).
	chanEpilogue bool
}

// args gives a bound kernel its operands. The byte slices behind In and
// Out change from run to run (feeds, outputs, variables), so kernels read
// them when they run, not when they bind.
type args struct {
	inst    *instance
	node    *graph.Node
	in      []int
	out     int
	scratch []byte
	workers int // Threads(), once computed
	step    int // the step's index in the plan
	// epi, when set, runs the step's epilogue over the flat elements
	// [lo, hi) of the result (kernel.epilogue; epilogue.go); part is the
	// calling loop part.
	epi func(part, lo, hi int)
	// epiChan, when set instead of epi, is an epilogue the kernel runs
	// itself (kernel.chanEpilogue).
	epiChan *chanEpi
}

func (a *args) In(i int) []byte { return a.inst.slots[a.in[i]] }
func (a *args) Out() []byte     { return a.inst.slots[a.out] }

// Loop prepares fn, a parallel loop body, at bind time. fn(lo, hi, part)
// handles iterations [lo,hi); part < Threads() numbers the piece, for
// per-part scratch.
func (a *args) Loop(fn func(lo, hi, part int)) *loop {
	return &loop{inst: a.inst, fn: a.inst.guard(fn), parts: a.Threads()}
}

type loop struct {
	inst  *instance
	fn    func(lo, hi, part int)
	parts int // the most parts: the kernel's Threads()
}

// Run runs the loop over [0,n) in parts of at least grain iterations;
// when the Run can be cancelled, each part runs in sub-ranges of at most
// step iterations with a check between them (step 0: the body checks
// itself, with Stopped). See pool.For.
func (l *loop) Run(n, grain, step int) {
	l.inst.exe.be.pool.For(n, grain, l.parts, step, &l.inst.job, l.inst.tr, l.inst.done, l.fn)
}

// Stopped reports whether the running Run's context is done: kernels whose
// loops are long or uneven call it between pieces of bounded work and
// return early when it is true (their output is then discarded: Run
// fails). It costs a nil check when the context cannot be cancelled and a
// non-blocking receive (a few ns) otherwise.
func (a *args) Stopped() bool { return a.inst.done != nil && stop.Done(a.inst.done) }

// Done is the running Run's ctx.Done() (nil when it cannot be cancelled),
// for code outside this package that checks it (internal/gemm). Read it
// when the kernel runs, not when it binds.
func (a *args) Done() <-chan struct{} { return a.inst.done }

// Fail records a run-time error of the kernel, such as an index out of
// range: the executor checks after the step and makes Run return err
// wrapped with the step's op, types and call site, so the step's output
// is never used and the exec layer keeps the Variables' values. A kernel
// that fails must still not read or write out of bounds; it calls Fail
// from its bound function (once its loops are done) or from a loop body,
// and the first error of a step is kept.
func (a *args) Fail(err error) {
	a.inst.pmu.Lock()
	// Steps of a wave (interop.go) run at once: the first step's error
	// is kept, whichever failed first in time.
	if a.inst.failed == nil || a.step < a.inst.failedStep {
		a.inst.failed, a.inst.failedStep = err, a.step
	}
	a.inst.pmu.Unlock()
}

// Threads is the most parts the kernel's loops are split into: the
// backend's threads, fewer when the kernel's estimated work does not pay
// for them (grain.go), and no more than the goroutines that can run them
// at once (pool.runners). Kernels size their per-part scratch and plan
// their splits (gemm tiles, TopK pieces) with it.
func (a *args) Threads() int {
	if a.workers == 0 {
		a.workers = a.inst.exe.be.workersFor(a.node)
	}
	return a.workers
}

type executable struct {
	be      *Backend
	plan    *exec.Plan
	views   []int     // aliases of feeds, variables and outputs: bound per run
	kernels []*kernel // per step; nil for copies
	// epi maps a step whose kernel runs an epilogue to the fused step it
	// runs (whose own kernel is then noKernel; epilogue.go).
	epi     map[int]*epilogueStep
	waves   []wave // the steps in order, grouped into waves (interop.go)
	overlap []int  // per wave: the wave a collective started there waits at (overlap.go), or -1
	mu      sync.Mutex
	free    []*instance
	nested  bool // a control-flow body (control.go)
}

// instance is one arena with its bound steps. Concurrent runs use
// different instances.
type instance struct {
	exe   *executable
	arena []byte
	slots [][]byte
	run   []func()
	job   job
	// done is the running Run's ctx.Done(), nil when the context cannot be
	// cancelled (and between runs).
	done <-chan struct{}
	// ctx is the running Run's context (nil between runs): the collective
	// ops pass it to the communicator, for its deadline.
	ctx context.Context
	// tr is set while a profiled Run executes (nil otherwise).
	tr    *tracer
	trBuf tracer
	// panicked holds a panic raised in a worker goroutine, re-raised in the
	// caller so that Run turns it into an error.
	pmu      sync.Mutex
	panicked any
	// failed is the error a kernel of the running step reported with
	// args.Fail (under pmu), returned by Run after the step; failedStep
	// is that step.
	failed     error
	failedStep int
	// collDone is closed when the collective running on its own goroutine
	// (overlap.go) is done; nil when none runs.
	collDone chan struct{}
	waveFns  []func(lo, hi, part int) // per wave of several steps (interop.go)
}

// Lower prepares a kernel for every step.
func (b *Backend) Lower(p *exec.Plan) (exec.Executable, error) {
	e := &executable{be: b, plan: p, kernels: make([]*kernel, len(p.Steps))}
	for i, v := range p.Values {
		if v.Alias >= 0 && v.Storage != exec.InArena && v.Storage != exec.InConst {
			e.views = append(e.views, i)
		}
	}
	for i, s := range p.Steps {
		if s.Kind != exec.KernelStep {
			continue
		}
		if bodies, ok := p.Bodies[s.Node]; ok {
			k, err := b.prepareControl(s.Node, bodies)
			if err != nil {
				return nil, fmt.Errorf("cpu: preparing %s %s (built at %s): %w", s.Node.Op(), s.Node.Type(), s.Node.Site(), err)
			}
			e.kernels[i] = k
			continue
		}
		prep := kernelFor(s.Node)
		if prep == nil {
			return nil, fmt.Errorf("%w: cpu has no kernel for %s", exec.ErrUnsupported, s.Node.Op())
		}
		k, err := prep(s.Node)
		if err != nil {
			return nil, fmt.Errorf("cpu: preparing %s %s (built at %s): %w", s.Node.Op(), s.Node.Type(), s.Node.Site(), err)
		}
		e.kernels[i] = k
	}
	e.skipUnread()
	e.planEpilogues()
	e.waves = e.planWaves()
	e.overlap = e.planOverlap()
	return e, nil
}

// skipUnread replaces by a no-op every kernel whose arena result no step
// reads (its readers all ignore it: see kernel.ignoresIn0).
func (e *executable) skipUnread() {
	p := e.plan
	reads := make([]int, len(p.Values))
	ignored := false
	for i, s := range p.Steps {
		for k, v := range s.In {
			if k == 0 && e.kernels[i] != nil && e.kernels[i].ignoresIn0 {
				ignored = true
				continue
			}
			reads[v]++
		}
	}
	if !ignored {
		return
	}
	for i, s := range p.Steps {
		if e.kernels[i] != nil && p.Values[s.Out].Storage == exec.InArena && p.Values[s.Out].Alias < 0 && reads[s.Out] == 0 {
			e.kernels[i] = noKernel
		}
	}
}

// noKernel is the kernel of a step whose result nothing reads.
var noKernel = &kernel{bind: func(*args) func() { return func() {} }}

func (e *executable) instance() (*instance, error) {
	e.mu.Lock()
	if n := len(e.free); n > 0 {
		in := e.free[n-1]
		e.free = e.free[:n-1]
		e.mu.Unlock()
		return in, nil
	}
	e.mu.Unlock()
	return e.newInstance()
}

// newInstance allocates an arena and binds every step to it. It fails,
// leaving nothing behind, when the memory cannot be had.
func (e *executable) newInstance() (in *instance, err error) {
	p := e.plan
	step := -1
	defer func() {
		// A bind allocates its per-instance buffers (scratch, registers,
		// workspaces); turn a failure there into an error.
		if r := recover(); r != nil {
			in, err = nil, fmt.Errorf("cpu: binding the kernel of step %d (%s): %v", step, p.DescribeStep(step), r)
		}
	}()
	in = &instance{exe: e, slots: make([][]byte, len(p.Values)), run: make([]func(), len(p.Steps))}
	if in.arena, err = e.be.alignedBytes(p.ArenaBytes, "the arena"); err != nil {
		return nil, err
	}
	for i, v := range p.Values {
		switch v.Storage {
		case exec.InArena:
			in.slots[i] = in.arena[v.Offset : v.Offset+v.Bytes : v.Offset+v.Bytes]
		case exec.InConst:
			in.slots[i] = v.Node.Value().Bytes()
		}
	}
	for i, v := range p.Values {
		if v.Alias >= 0 && (v.Storage == exec.InArena || v.Storage == exec.InConst) {
			r, off := p.View(i)
			in.slots[i] = in.slots[r][off : off+v.Bytes : off+v.Bytes]
		}
	}
	for i, s := range p.Steps {
		step = i
		if s.Kind == exec.AliasStep {
			in.run[i] = func() {}
			continue
		}
		if s.Kind == exec.CopyStep {
			a := &args{inst: in, in: s.In, out: s.Out}
			in.run[i] = copyLoop(a)
			continue
		}
		k := e.kernels[i]
		a := &args{inst: in, node: s.Node, in: s.In, out: s.Out, step: i}
		if k.scratch > 0 {
			what := fmt.Sprintf("the scratch memory of step %d (%s)", i, p.DescribeStep(i))
			if a.scratch, err = e.be.alignedBytes(int64(k.scratch), what); err != nil {
				return nil, err
			}
		}
		in.run[i] = k.bind(a)
		if ep := e.epi[i]; ep != nil {
			in.run[i] = ep.bind(in, a, in.run[i])
		}
	}
	in.bindWaves()
	return in, nil
}

// copyLoop copies operand 0 to the output in parallel sub-ranges (a copy
// step, or a kernel that is a copy), so that a long copy can be cancelled.
func copyLoop(a *args) func() {
	l := a.Loop(func(lo, hi, _ int) {
		copy(a.Out()[lo:hi], a.In(0)[lo:hi])
	})
	return func() { l.Run(min(len(a.Out()), len(a.In(0))), 4*grainElems, copyStep) }
}

// guard wraps a parallel body so that a panic in a worker goroutine is
// carried back to the caller instead of crashing the process.
func (in *instance) guard(fn func(lo, hi, part int)) func(lo, hi, part int) {
	return func(lo, hi, part int) {
		defer func() {
			if r := recover(); r != nil {
				in.pmu.Lock()
				if in.panicked == nil {
					in.panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
				}
				in.pmu.Unlock()
			}
		}()
		fn(lo, hi, part)
	}
}

// Run binds the frame's buffers and runs every step in order, checking for
// cancellation between steps.
func (e *executable) Run(ctx context.Context, f *exec.Frame) (err error) {
	e.be.mu.RLock()
	defer e.be.mu.RUnlock()
	if e.be.closed {
		return fmt.Errorf("cpu: %w", exec.ErrClosed)
	}
	in, err := e.instance()
	if err != nil {
		return err
	}
	p := e.plan
	for i, v := range p.Inputs {
		in.slots[v] = f.Inputs[i].Bytes()
	}
	for i, v := range p.Vars {
		in.slots[v.Value] = f.Vars[i].(*buffer).data
		if v.Update >= 0 {
			in.slots[v.Update] = f.Next[i].(*buffer).data
		}
	}
	for i, v := range p.Outputs {
		in.slots[v] = f.Outputs[i].Bytes()
	}
	in.bindViews()
	step := -1
	defer func() {
		in.waitCollective() // it works in the arena, which the pool hands on
		if r := recover(); r != nil {
			err = fmt.Errorf("cpu: internal error in the kernel of step %d (%s): %v", step, p.DescribeStep(step), r)
		}
		in.tr = nil
		in.done = nil
		in.ctx = nil
		in.failed = nil
		// Drop references to the caller's memory before pooling.
		for _, v := range p.Inputs {
			in.slots[v] = nil
		}
		for _, v := range p.Outputs {
			in.slots[v] = nil
		}
		for _, v := range e.views {
			in.slots[v] = nil
		}
		e.mu.Lock()
		e.free = append(e.free, in)
		e.mu.Unlock()
	}()
	// Kernels check done between pieces of bounded work (see pool.For and
	// args.Stopped) and return early when it is closed; Run then fails
	// before the next step, so a cut-short result is never used or
	// returned (and the exec layer keeps the variables' old values).
	done := ctx.Done()
	in.done, in.ctx = done, ctx
	obs := f.Observer
	if done != nil && stop.Done(done) {
		return fmt.Errorf("cpu: stopped before step 0 of %d: %w", len(in.run), ctx.Err())
	}
	waitAt := -1 // the wave the running collective must finish before
	for k, w := range e.waves {
		step = w.lo
		if k == waitAt {
			in.waitCollective()
			waitAt = -1
			if err := in.stepError(); err != nil {
				return err
			}
		}
		switch {
		case obs == nil && e.overlap[k] >= 0:
			in.startCollective(w.lo)
			waitAt = e.overlap[k]
			continue
		case obs != nil:
			// A profiled Run runs the steps of a wave one after the other,
			// so that each is one slice of the run's track.
			for i := w.lo; i < w.hi; i++ {
				step = i
				in.trBuf = tracer{obs: obs, step: i}
				in.tr = &in.trBuf
				t0 := obs.Now()
				in.run[i]()
				obs.Step(i, t0, obs.Now())
				in.tr = nil
				if in.panicked != nil || in.failed != nil {
					break
				}
			}
		case w.hi-w.lo == 1:
			in.run[w.lo]()
		default:
			in.runWave(k)
		}
		if err := in.stepError(); err != nil {
			return err
		}
		if done != nil && stop.Done(done) {
			i := w.hi - 1
			return fmt.Errorf("cpu: stopped at step %d of %d (%s): %w", i, len(in.run), p.DescribeStep(i), ctx.Err())
		}
	}
	in.waitCollective()
	return in.stepError()
}

// stepError re-raises a kernel's panic (Run turns it into an error) and
// returns the error a kernel reported with args.Fail, naming its step.
func (in *instance) stepError() error {
	in.pmu.Lock()
	r, failed, i := in.panicked, in.failed, in.failedStep
	in.panicked = nil
	in.pmu.Unlock()
	if r != nil {
		panic(r)
	}
	if failed != nil {
		p := in.exe.plan
		return fmt.Errorf("cpu: step %d of %d (%s): %w", i, len(in.run), p.DescribeStep(i), failed)
	}
	return nil
}

// bindViews points the slots of the aliases of feeds, variables and
// outputs into their roots' slots (after those are bound for a run).
func (in *instance) bindViews() {
	p := in.exe.plan
	for _, v := range in.exe.views {
		r, off := p.View(v)
		n := p.Values[v].Bytes
		in.slots[v] = in.slots[r][off : off+n : off+n]
	}
}

// Close releases the instances' arenas.
func (e *executable) Close() error {
	e.mu.Lock()
	e.free = nil
	e.mu.Unlock()
	return nil
}

// alignedBytes returns n zeroed bytes aligned to 64 for what (named in the
// error), or an error when n exceeds tensor.MemoryLimit() (the machine's
// memory unless the user set another limit): refusing them here turns what
// would be a panic (or the runtime's fatal out-of-memory error, which
// nothing can recover) into an error.
func (b *Backend) alignedBytes(n int64, what string) ([]byte, error) {
	if limit := tensor.MemoryLimit(); n < 0 || n > limit {
		return nil, fmt.Errorf("cpu: %s needs %d bytes, more than the memory limit of %d bytes (tensor.SetMemoryLimit): %w", what, n, limit, tensor.ErrTooLarge)
	}
	return alignedBytes(int(n)), nil
}

// alignedBytes returns n zeroed bytes aligned to 64.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+64+7)/8)
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
	off := int((64 - uintptr(unsafe.Pointer(&b[0]))%64) % 64)
	return b[off : off+n : off+n]
}

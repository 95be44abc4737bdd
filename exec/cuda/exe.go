//go:build linux

package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/internal/opdef"
)

// ptrOf is the address of a byte slice's first element (nil when empty).
func ptrOf(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

// lowerHook, when set (by tests), sees the generated functions of every
// Program lowered; an error stops the lowering there.
var lowerHook func([]cudagen.Func) error

// launch is one kernel launch with its parameter block: vals holds the
// device pointers, params points at each (cuLaunchKernel's kernelParams);
// both live in page-locked host memory (paramBlocks).
type launch struct {
	fn     cu.Function
	spec   cudagen.Launch
	vals   []cu.DevicePtr
	params []unsafe.Pointer
}

// stepExec is how one plan step runs.
type stepExec struct {
	launches []*launch
	mm       *mmPlan
	lib      libStep // cuSOLVER and cuFFT steps (linalg.go, fft.go)
	copy     bool    // a device-to-device copy of In[0]
	from     int64   // where the copy starts in In[0] (a TupleGet's offset)
	name     string
	// check, when set, is the kernel's index check; its status words are
	// at status in the program's status buffer.
	check  *cudagen.IndexCheck
	status int64
}

// executable is a Program lowered for the GPU: its module, its arena and
// transfer buffers, its stream. Runs are serialised.
//
// The body of a control-flow op (control.go) is an executable too, with
// a parent: it shares the parent's module and stream, owns its arena,
// and has no buffers of its own for its inputs and outputs (the
// parameters and results), whose addresses the op sets in ptr before
// each iteration.
type executable struct {
	be     *Backend
	plan   *exec.Plan
	parent *executable // the program whose control-flow op runs this body; nil for a program
	steps  []stepExec
	ptr    []cu.DevicePtr // device address of every value (variables set per run)
	own    []cu.DevicePtr // ptr as set up: the program's own memory for feeds and outputs
	views  []view         // values that alias another (Reshape and TupleGet views)
	owned  []cu.DevicePtr // allocations to free at Close
	// scratchBytes is the largest scratch buffer a launch needs.
	scratchBytes int64
	// calls counts the work put on the stream (kernel launches, copies,
	// library calls, read-backs), the bodies' included: all of a
	// program's executables share the program's counter.
	calls  *int64
	stream cu.Stream
	// staging: pinned host memory for the feeds and the outputs.
	pinned []byte
	params []byte // page-locked parameter blocks of the launches
	inOff  []int64
	// upNames and downNames name the transfers in traces.
	upNames, downNames []string
	outOff             []int64
	scratch            cu.DevicePtr
	hasMM              bool
	// statusBytes of device memory at statusDev hold the status words of
	// the steps that check indices, zeroed before each run and copied
	// after it into pinned memory at statusOff.
	statusBytes int64
	statusDev   cu.DevicePtr
	statusOff   int64
	events      []cu.Event // created on the first profiled run
	times       []evTime
	mu          sync.Mutex
	closed      bool
	// The Run in progress (under mu), for runFn, bound once so that a Run
	// allocates no closure.
	ctx   context.Context
	frame *exec.Frame
	runFn func() error
	// watch is the NCCL watchdog of the run in progress, armed by its
	// first NCCL collective (collective.go) and disarmed after the
	// stream's synchronisation (a program's own; bodies use their root's).
	watch *ncclWatch
}

// root is the program whose body e is (e itself for a program).
func (e *executable) root() *executable {
	for e.parent != nil {
		e = e.parent
	}
	return e
}

// disarm stops the NCCL watchdog of the run after the stream's
// synchronisation: when it fired, the run's error is (or wraps) the
// watchdog's.
func (e *executable) disarm(err error) error {
	w := e.watch
	if w == nil {
		return err
	}
	e.watch = nil
	werr := w.finish(nil)
	if f := w.fired.Load(); f != nil {
		if err != nil && errors.Is(err, *f) {
			return err
		}
		if err != nil {
			return fmt.Errorf("cuda: running the program on %s: %w (then: %v)", e.be.device.Name, *f, err)
		}
		return fmt.Errorf("cuda: running the program on %s: %w", e.be.device.Name, *f)
	}
	if err == nil && werr != nil {
		return fmt.Errorf("cuda: running the program on %s: %w", e.be.device.Name, werr)
	}
	return err
}

// view is a value whose bytes are at off in root's (Plan.View).
type view struct {
	v, root int
	off     int64
}

// evTime is one profiled piece of a run: events start and end, launched
// by the host at host.
type evTime struct {
	step       int // plan step, or -1 for a transfer
	name       string
	bytes      int64
	start, end int // event indices
	host       int64
}

// Lower generates and compiles the program's kernels (its bodies' too:
// one module) and sets up its device memory.
func (b *Backend) Lower(p *exec.Plan) (exec.Executable, error) {
	fs := &funcSet{seen: map[string]bool{}}
	e, err := b.prepare(p, nil, fs)
	if err != nil {
		return nil, err
	}
	e.runFn = func() error { return e.run(e.ctx, e.frame) }
	funcs := fs.funcs
	if lowerHook != nil {
		if err := lowerHook(funcs); err != nil {
			return nil, err
		}
	}
	var im *image
	if len(funcs) > 0 {
		var src strings.Builder
		src.WriteString(cudagen.Prelude())
		for _, f := range funcs {
			src.WriteString("\n")
			src.WriteString(f.Source)
		}
		var err error
		im, err = compileImage(b.lib.nvrtc, src.String(), b.arch())
		if err != nil {
			return nil, fmt.Errorf("cuda: %w", err)
		}
	}
	err = b.do(func() error { return e.setup(im) })
	if err != nil {
		e.free()
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return e, nil
}

// funcSet gathers the generated functions of a program and its bodies,
// each once.
type funcSet struct {
	funcs []cudagen.Func
	seen  map[string]bool
}

func (fs *funcSet) add(f cudagen.Func) {
	if !fs.seen[f.Name] {
		fs.seen[f.Name] = true
		fs.funcs = append(fs.funcs, f)
	}
}

// prepare plans every step of p (a program, or the body of a
// control-flow op of parent) and adds the functions it needs to fs.
func (b *Backend) prepare(p *exec.Plan, parent *executable, fs *funcSet) (*executable, error) {
	e := &executable{be: b, plan: p, parent: parent, steps: make([]stepExec, len(p.Steps)), ptr: make([]cu.DevicePtr, len(p.Values))}
	if parent != nil {
		e.calls = parent.calls
	} else {
		e.calls = new(int64)
	}
	for i, v := range p.Values {
		if v.Alias < 0 {
			continue
		}
		root, off := p.View(i)
		e.views = append(e.views, view{v: i, root: root, off: off})
	}
	t := b.target()
	for i, s := range p.Steps {
		st := &e.steps[i]
		switch s.Kind {
		case exec.AliasStep:
			continue
		case exec.CopyStep:
			st.copy, st.name = true, "Copy"
			continue
		}
		n := s.Node
		st.name = n.Op().String()
		if a, ok := n.Attr().(*opdef.FusedAttr); ok {
			st.name = "Fused[" + strings.Join(a.OpNames(), ",") + "]"
		}
		if err := b.Supports(n); err != nil {
			return nil, fmt.Errorf("cuda: %s %s (built at %s): %w", n.Op(), n.Type(), n.Site(), err)
		}
		switch lib := cudagen.LibraryOf(n); lib {
		case cudagen.Generated:
		case cudagen.Control:
			if a, ok := n.Attr().(opdef.TupleAttr); ok {
				// A TupleGet that is not a view: a copy out of the tuple.
				st.copy, st.from = true, a.Offset
				continue
			}
			cs, err := b.newControlStep(e, i, fs)
			if err != nil {
				return nil, fmt.Errorf("cuda: %s %s (built at %s): %w", n.Op(), n.Type(), n.Site(), err)
			}
			st.lib = cs
			e.hasMM = e.hasMM || cs.hasMM
			continue
		case cudagen.Collective:
			cs, err := newCollStep(n)
			if err != nil {
				return nil, fmt.Errorf("cuda: %s %s (built at %s): %w", n.Op(), n.Type(), n.Site(), err)
			}
			st.lib = cs
			continue
		case cudagen.GEMM:
			st.mm = newMMPlan(n)
			e.hasMM = true
			continue
		case cudagen.Solver, cudagen.FFT:
			ls, err := b.newLibStep(n, lib)
			if err != nil {
				return nil, fmt.Errorf("cuda: %s %s (built at %s): %w", n.Op(), n.Type(), n.Site(), err)
			}
			st.lib = ls
			for _, f := range ls.funcs() {
				fs.add(f)
			}
			continue
		default:
			return nil, fmt.Errorf("cuda: %s %s (built at %s): no call of %v", n.Op(), n.Type(), n.Site(), lib)
		}
		k, err := cudagen.Generate(n, t)
		if err != nil {
			return nil, fmt.Errorf("cuda: generating the kernel of %s %s (built at %s): %w", n.Op(), n.Type(), n.Site(), err)
		}
		for _, f := range k.Funcs {
			fs.add(f)
		}
		for _, l := range k.Launches {
			st.launches = append(st.launches, newLaunch(l))
		}
		if k.Check != nil {
			st.check, st.status = k.Check, e.statusBytes
			e.statusBytes += 8 * cudagen.StatusWords
		}
		e.scratchBytes = max(e.scratchBytes, k.ScratchBytes)
	}
	return e, nil
}

func newLaunch(l cudagen.Launch) *launch { return &launch{spec: l} }

// paramBlocks lays out every launch's parameter block (the argument values
// and the array of pointers to them) in page-locked host memory: C memory,
// which the launch needs no pinning for, so a Run allocates nothing.
func (e *executable) paramBlocks() error {
	var n int
	for i := range e.steps {
		for _, l := range e.steps[i].launches {
			n += len(l.spec.Args)
		}
	}
	if n == 0 {
		return nil
	}
	mem, err := e.be.lib.drv.MemAllocHost(int64(16 * n))
	if err != nil {
		return fmt.Errorf("allocating kernel parameter blocks: %w", err)
	}
	e.params = mem
	base := unsafe.Pointer(unsafe.SliceData(mem))
	off := uintptr(0)
	for i := range e.steps {
		for _, l := range e.steps[i].launches {
			k := uintptr(len(l.spec.Args))
			if k == 0 {
				continue
			}
			l.vals = unsafe.Slice((*cu.DevicePtr)(unsafe.Add(base, off)), k)
			l.params = unsafe.Slice((*unsafe.Pointer)(unsafe.Add(base, off+8*k)), k)
			for a := range l.vals {
				l.params[a] = unsafe.Pointer(&l.vals[a])
			}
			off += 16 * k
		}
	}
	return nil
}

// setup runs on the device goroutine: module, functions, memory, stream.
func (e *executable) setup(im *image) error {
	var mod cu.Module
	if im != nil {
		var err error
		mod, err = e.be.mods.load(e.be.lib.drv, im)
		if err != nil {
			return err
		}
	}
	return e.setupIn(mod)
}

// setupIn sets up the program (or body) with the kernels of module mod.
// A body takes its parent's stream, which the parent creates first.
func (e *executable) setupIn(mod cu.Module) error {
	b, d, p := e.be, e.be.lib.drv, e.plan
	for i := range e.steps {
		for _, l := range e.steps[i].launches {
			f, err := d.ModuleGetFunction(mod, l.spec.Func)
			if err != nil {
				return fmt.Errorf("cuModuleGetFunction(%s): %w", l.spec.Func, err)
			}
			l.fn = f
		}
	}
	if err := e.paramBlocks(); err != nil {
		return err
	}
	alloc := func(n int64) (cu.DevicePtr, error) {
		ptr, err := b.alloc.alloc(n)
		if err == nil {
			e.owned = append(e.owned, ptr)
		}
		return ptr, err
	}
	arena, err := alloc(p.ArenaBytes)
	if err != nil {
		return err
	}
	if e.scratchBytes > 0 {
		if e.scratch, err = alloc(e.scratchBytes); err != nil {
			return err
		}
	}
	if e.statusBytes > 0 {
		if e.statusDev, err = alloc(e.statusBytes); err != nil {
			return err
		}
	}
	var staging int64
	for i, v := range p.Inputs {
		if e.parent != nil {
			break // a body's parameters and results are its parent's memory
		}
		e.upNames = append(e.upNames, "upload "+p.InputNodes[i].Name())
		e.inOff = append(e.inOff, staging)
		staging += align(p.Values[v].Bytes)
	}
	for i, v := range p.Outputs {
		if e.parent != nil {
			break
		}
		e.downNames = append(e.downNames, fmt.Sprintf("download output %d", i))
		e.outOff = append(e.outOff, staging)
		staging += align(p.Values[v].Bytes)
	}
	e.statusOff = staging
	staging += align(e.statusBytes)
	if staging > 0 {
		if e.pinned, err = d.MemAllocHost(staging); err != nil {
			return fmt.Errorf("allocating %d bytes of pinned host memory: %w", staging, err)
		}
	}
	for i, v := range p.Values {
		if v.Alias >= 0 {
			continue
		}
		switch v.Storage {
		case exec.InArena:
			e.ptr[i] = arena + cu.DevicePtr(v.Offset)
		case exec.InInput, exec.InOutput:
			if e.parent != nil {
				continue // set before each iteration
			}
			if e.ptr[i], err = alloc(v.Bytes); err != nil {
				return err
			}
		case exec.InConst:
			if e.ptr[i], err = alloc(v.Bytes); err != nil {
				return err
			}
			if data := v.Node.Value().Bytes(); len(data) > 0 {
				if err := d.MemcpyHtoD(e.ptr[i], ptrOf(data), int64(len(data))); err != nil {
					return fmt.Errorf("uploading constant %s: %w", v.Node, err)
				}
			}
		}
	}
	e.resolveAliases()
	e.own = append([]cu.DevicePtr(nil), e.ptr...)
	if e.parent != nil {
		e.stream = e.parent.stream
	} else if e.stream, err = d.StreamCreate(0); err != nil {
		return fmt.Errorf("cuStreamCreate: %w", err)
	}
	for i := range e.steps {
		if l := e.steps[i].lib; l != nil {
			if err := l.setup(e, mod); err != nil {
				return fmt.Errorf("%s (built at %s): %w", p.Steps[i].Node.Op(), p.Steps[i].Node.Site(), err)
			}
		}
	}
	return nil
}

// align rounds a staging size up to 64 bytes.
func align(n int64) int64 { return (n + 63) &^ 63 }

// resolveAliases gives every view its address in its root's bytes.
func (e *executable) resolveAliases() {
	for _, v := range e.views {
		e.ptr[v.v] = e.ptr[v.root] + cu.DevicePtr(v.off)
	}
}

// Run uploads the feeds, runs every step on the program's stream,
// downloads the outputs and waits for the device.
func (e *executable) Run(ctx context.Context, f *exec.Frame) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return fmt.Errorf("cuda: %w", exec.ErrClosed)
	}
	p := e.plan
	for i, v := range p.Vars {
		buf, ok := f.Vars[i].(*buffer)
		if !ok || buf.b != e.be {
			return fmt.Errorf("cuda: variable %s is not stored on %s", v.User, e.be.device.Name)
		}
		e.ptr[v.Value] = buf.ptr
		if v.Update >= 0 {
			nb, ok := f.Next[i].(*buffer)
			if !ok || nb.b != e.be {
				return fmt.Errorf("cuda: variable %s's update is not stored on %s", v.User, e.be.device.Name)
			}
			e.ptr[v.Update] = nb.ptr
		}
	}
	// Device feeds and kept outputs (Program.RunDevice): the kernels read
	// and write their buffers in place of the program's own memory.
	for i, v := range p.Inputs {
		if i < len(f.InputBufs) && f.InputBufs[i] != nil {
			buf, ok := f.InputBufs[i].(*buffer)
			if !ok || buf.b != e.be || buf.freed {
				return fmt.Errorf("cuda: the device feed for %s is not live memory of %s", p.InputNodes[i], e.be.device.Name)
			}
			e.ptr[v] = buf.ptr
			defer func() { e.ptr[v] = e.own[v] }()
		}
	}
	for i, v := range p.Outputs {
		if i < len(f.OutputBufs) && f.OutputBufs[i] != nil {
			buf, ok := f.OutputBufs[i].(*buffer)
			if !ok || buf.b != e.be || buf.freed {
				return fmt.Errorf("cuda: the buffer for output %d is not live memory of %s", i, e.be.device.Name)
			}
			e.ptr[v] = buf.ptr
			defer func() { e.ptr[v] = e.own[v] }()
		}
	}
	e.resolveAliases()
	e.ctx, e.frame = ctx, f
	defer func() { e.ctx, e.frame = nil, nil }()
	return e.be.do(e.runFn)
}

// run enqueues the whole program (device goroutine).
func (e *executable) run(ctx context.Context, f *exec.Frame) (err error) {
	b, d, p := e.be, e.be.lib.drv, e.plan
	obs := f.Observer
	dobs, _ := obs.(exec.DeviceObserver)
	tm := timer{e: e, obs: obs, on: dobs != nil, next: 1}
	var h0 int64
	if tm.on {
		if err := e.prepareEvents(); err != nil {
			return err
		}
		e.times = e.times[:0]
		dobs.DeviceMemory(obs.Now(), b.alloc.inUse)
		h0 = obs.Now()
		if err := d.EventRecord(e.events[0], e.stream); err != nil {
			return fmt.Errorf("cuEventRecord: %w", err)
		}
	}
	// Whatever happens, the stream is drained before returning: nothing
	// may still write the caller's buffers or the arena. Then the NCCL
	// watchdog, if a collective armed it, is disarmed.
	synced := false
	defer func() {
		if !synced {
			if serr := d.StreamSynchronize(e.stream); serr != nil && err == nil {
				err = e.asyncErr(serr)
			}
		}
		err = e.disarm(err)
	}()
	for i, v := range p.Inputs {
		if i < len(f.InputBufs) && f.InputBufs[i] != nil {
			continue // read where it lies
		}
		src := f.Inputs[i].Bytes()
		n := int64(len(src))
		if n == 0 {
			continue
		}
		stage := e.pinned[e.inOff[i] : e.inOff[i]+n]
		copy(stage, src)
		err := tm.start()
		if err == nil {
			err = d.MemcpyHtoDAsync(e.ptr[v], ptrOf(stage), n, e.stream)
		}
		if err == nil {
			err = tm.stop(-1, e.upNames[i], n)
		}
		if err != nil {
			return fmt.Errorf("cuda: uploading feed %s: %w", p.InputNodes[i], err)
		}
	}
	if e.hasMM {
		if err := b.lib.blas.SetStream(b.blas, e.stream); err != nil {
			return fmt.Errorf("cuda: cublasSetStream: %w", err)
		}
	}
	if e.statusBytes > 0 {
		if err := d.MemsetD8Async(e.statusDev, 0, e.statusBytes, e.stream); err != nil {
			return fmt.Errorf("cuda: clearing the index checks' status: %w", err)
		}
	}
	done := ctx.Done()
	for i, s := range p.Steps {
		if s.Kind == exec.AliasStep {
			continue
		}
		if done != nil {
			select {
			case <-done:
				return fmt.Errorf("cuda: stopped before step %d of %d: %w", i, len(p.Steps), ctx.Err())
			default:
			}
		}
		var t0 int64
		if obs != nil {
			t0 = obs.Now()
		}
		err := tm.start()
		if err == nil {
			err = e.enqueue(i)
		}
		if err == nil {
			err = tm.stop(i, "", 0)
		}
		if err != nil {
			return fmt.Errorf("cuda: step %d (%s): %w", i, p.DescribeStep(i), err)
		}
		if obs != nil {
			if io, ok := obs.(exec.IterationObserver); ok {
				if c, ok := e.steps[i].lib.(*ctlStep); ok {
					io.Iterations(i, c.iters)
				}
			}
			obs.Step(i, t0, obs.Now())
		}
	}
	for i, v := range p.Outputs {
		n := p.Values[v].Bytes
		if n == 0 || i < len(f.OutputBufs) && f.OutputBufs[i] != nil {
			continue // empty, or written in place on the device
		}
		stage := e.pinned[e.outOff[i] : e.outOff[i]+n]
		err := tm.start()
		if err == nil {
			err = d.MemcpyDtoHAsync(ptrOf(stage), e.ptr[v], n, e.stream)
		}
		if err == nil {
			err = tm.stop(-1, e.downNames[i], n)
		}
		if err != nil {
			return fmt.Errorf("cuda: downloading output %d: %w", i, err)
		}
	}
	if e.statusBytes > 0 {
		if err := d.MemcpyDtoHAsync(ptrOf(e.pinned[e.statusOff:e.statusOff+e.statusBytes]), e.statusDev, e.statusBytes, e.stream); err != nil {
			return fmt.Errorf("cuda: reading the index checks' status: %w", err)
		}
	}
	synced = true
	if err := d.StreamSynchronize(e.stream); err != nil {
		return e.asyncErr(err)
	}
	if err := e.disarm(nil); err != nil {
		return err
	}
	if err := e.checkStatus(); err != nil {
		return err
	}
	for i := range e.steps {
		if l := e.steps[i].lib; l != nil {
			if err := l.check(); err != nil {
				return fmt.Errorf("cuda: step %d of %d (%s): %w", i, len(e.steps), e.plan.DescribeStep(i), err)
			}
		}
	}
	for i, v := range p.Outputs {
		if i < len(f.OutputBufs) && f.OutputBufs[i] != nil {
			continue
		}
		n := p.Values[v].Bytes
		copy(f.Outputs[i].Bytes(), e.pinned[e.outOff[i]:e.outOff[i]+n])
	}
	if tm.on {
		return e.report(dobs, h0)
	}
	return nil
}

// checkStatus returns the error of the first step (in order) whose index
// check found an index out of range in this run, naming the step's op,
// types and call site.
func (e *executable) checkStatus() error {
	if e.statusBytes == 0 {
		return nil
	}
	words := unsafe.Slice((*int64)(unsafe.Pointer(&e.pinned[e.statusOff])), e.statusBytes/8)
	for i := range e.steps {
		st := &e.steps[i]
		if st.check == nil {
			continue
		}
		w := words[st.status/8 : st.status/8+cudagen.StatusWords]
		if err := st.check.Err(w); err != nil {
			return fmt.Errorf("cuda: step %d of %d (%s): %w", i, len(e.steps), e.plan.DescribeStep(i), err)
		}
	}
	return nil
}

// asyncErr wraps an error that the stream's synchronisation reported.
func (e *executable) asyncErr(err error) error {
	return fmt.Errorf("cuda: running the program on %s: %w (an asynchronous error of a kernel or copy enqueued by this run)", e.be.device.Name, err)
}

// timer brackets the enqueues of a profiled run with events (a pair per
// step or transfer, after the origin event 0); on other runs it does
// nothing.
type timer struct {
	e    *executable
	obs  exec.StepObserver
	on   bool
	next int   // the next free event
	host int64 // when the host began the current enqueue
}

func (t *timer) start() error {
	if !t.on {
		return nil
	}
	t.host = t.obs.Now()
	if err := t.e.be.lib.drv.EventRecord(t.e.events[t.next], t.e.stream); err != nil {
		return fmt.Errorf("cuEventRecord: %w", err)
	}
	return nil
}

// stop records the end event of step (or of the transfer name of bytes).
func (t *timer) stop(step int, name string, bytes int64) error {
	if !t.on {
		return nil
	}
	if err := t.e.be.lib.drv.EventRecord(t.e.events[t.next+1], t.e.stream); err != nil {
		return fmt.Errorf("cuEventRecord: %w", err)
	}
	t.e.times = append(t.e.times, evTime{step: step, name: name, bytes: bytes, start: t.next, end: t.next + 1, host: t.host})
	t.next += 2
	return nil
}

// enqueue puts step i on the stream.
func (e *executable) enqueue(i int) error {
	b, d := e.be, e.be.lib.drv
	s := e.plan.Steps[i]
	st := &e.steps[i]
	switch {
	case st.copy:
		if n := e.plan.Values[s.Out].Bytes; n > 0 {
			*e.calls++
			return d.MemcpyDtoDAsync(e.ptr[s.Out], e.ptr[s.In[0]]+cu.DevicePtr(st.from), n, e.stream)
		}
		return nil
	case st.lib != nil:
		if _, ok := st.lib.(*ctlStep); !ok {
			*e.calls++
		}
		return st.lib.enqueue(e, i)
	case st.mm != nil:
		*e.calls++
		if err := st.mm.run(b.lib.blas, b.blas, d, e.stream, e.ptr[s.In[0]], e.ptr[s.In[1]], e.ptr[s.Out]); err != nil {
			return fmt.Errorf("cuBLAS: %w", err)
		}
		return nil
	}
	*e.calls += int64(len(st.launches))
	for _, l := range st.launches {
		for k, a := range l.spec.Args {
			switch a.Kind {
			case cudagen.In:
				l.vals[k] = e.ptr[s.In[a.Index]]
			case cudagen.Out:
				l.vals[k] = e.ptr[s.Out]
			case cudagen.Scratch:
				l.vals[k] = e.scratch
			case cudagen.Status:
				l.vals[k] = e.statusDev + cu.DevicePtr(st.status)
			}
		}
		sp := &l.spec
		if err := d.LaunchKernel(l.fn, sp.Grid, sp.Block, sp.Shared, e.stream, l.params); err != nil {
			return fmt.Errorf("cuLaunchKernel(%s, grid %v, block %v, shared %d): %w", sp.Func, sp.Grid, sp.Block, sp.Shared, err)
		}
	}
	return nil
}

// prepareEvents creates the timing events on the first profiled run: one
// origin and a pair per step and per transfer.
func (e *executable) prepareEvents() error {
	need := 1 + 2*(len(e.plan.Steps)+len(e.plan.Inputs)+len(e.plan.Outputs))
	for len(e.events) < need {
		ev, err := e.be.lib.drv.EventCreate(0)
		if err != nil {
			return fmt.Errorf("cuda: cuEventCreate: %w", err)
		}
		e.events = append(e.events, ev)
	}
	return nil
}

// report converts the events into the observer's clock and reports them.
// The origin event was recorded on an idle stream right after the host
// read h0, so a device time is h0 plus its offset from the origin; the
// spans are then shifted (never shrunk) so that none starts before the
// host launched it.
func (e *executable) report(obs exec.DeviceObserver, h0 int64) error {
	d := e.be.lib.drv
	type span struct{ start, end int64 }
	spans := make([]span, len(e.times))
	var shift int64
	for i, t := range e.times {
		s, err := d.EventElapsedTime(e.events[0], e.events[t.start])
		if err != nil {
			return fmt.Errorf("cuda: cuEventElapsedTime: %w", err)
		}
		en, err := d.EventElapsedTime(e.events[0], e.events[t.end])
		if err != nil {
			return fmt.Errorf("cuda: cuEventElapsedTime: %w", err)
		}
		spans[i] = span{h0 + int64(float64(s)*1e6), h0 + int64(float64(en)*1e6)}
		shift = max(shift, t.host-spans[i].start)
	}
	for i, t := range e.times {
		obs.DeviceSpan(0, t.step, t.name, t.bytes, t.host, spans[i].start+shift, spans[i].end+shift)
	}
	obs.DeviceMemory(obs.Now(), e.be.alloc.inUse)
	return nil
}

// Close frees the program's device memory, events and stream.
func (e *executable) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.free()
}

// free releases what setup acquired (also after a failed setup). After
// the backend's Close there is nothing left to free: Close released the
// device memory and the context.
func (e *executable) free() error {
	err := e.be.do(e.release)
	if errors.Is(err, exec.ErrClosed) {
		return nil
	}
	return err
}

// release frees what setup acquired (device goroutine), the bodies' too;
// a body leaves the stream to its parent.
func (e *executable) release() error {
	d := e.be.lib.drv
	var errs firstErr
	for _, p := range e.owned {
		errs.keep(e.be.alloc.put(p))
	}
	e.owned = nil
	for i := range e.steps {
		if l := e.steps[i].lib; l != nil {
			errs.keep(l.free(e))
		}
	}
	for _, m := range []*[]byte{&e.pinned, &e.params} {
		if *m != nil {
			errs.keep(d.MemFreeHost(*m))
			*m = nil
		}
	}
	for _, ev := range e.events {
		errs.keep(d.EventDestroy(ev))
	}
	e.events = nil
	if e.stream != 0 && e.parent == nil {
		errs.keep(d.StreamDestroy(e.stream))
	}
	e.stream = 0
	return errs.err
}

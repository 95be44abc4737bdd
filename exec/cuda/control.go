//go:build linux

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/internal/opdef"
)

// Control flow (issue 22): Cond, While and Scan.
//
// Every body of the op (exec.Plan.Bodies) is lowered like a program, as
// an executable with a parent (exe.go): its kernels are in the program's
// one module, it runs on the program's stream, and it owns its arena,
// allocated once at Lower. A body's parameters and results have no
// memory of their own: before each iteration the op sets their device
// addresses (the body's ptr entries) to where the values are, and the
// body's launches read them when they are enqueued. So an iteration
// enqueues the body's kernels and nothing else: no copy in or out, no
// allocation.
//
//   - Scan's x_t is the address of step t in xs, its y_t the address of
//     step t of the stacked result in the op's tuple.
//   - The carries of While and Scan ping-pong between their slot in the
//     tuple and one spare buffer each: an iteration reads the carries
//     where the previous one wrote them and writes the other buffer. A
//     Scan knows its length, so it starts on the buffer that makes the
//     last step write the tuple; a While copies a carry that ended in the
//     spare buffer into the tuple once, after the loop (and the initial
//     carries when it runs no iteration).
//   - Cond's branch reads the operands and writes the tuple directly.
//
// The predicate of Cond and the condition of While are on the device;
// the host reads them back (one device-to-host copy and one stream
// synchronisation per Cond, and per While iteration) to choose what to
// enqueue next. CUDA graph conditional nodes (CUDA 12.4: IF and WHILE
// nodes, whose condition a kernel sets) would keep that decision on the
// device, but they need the program captured as a graph and a driver and
// GPU to test them on; the emulator has neither, so they are not used. A
// Scan reads nothing back: its steps are enqueued back to back.
//
// Errors. A body whose kernels check indices, or that calls cuSOLVER
// (whose status the host reads), is "checked": its status is read back
// with the next synchronisation (a Scan then synchronises after every
// step), so a bad index or a singular matrix fails the Run naming the
// op, the body, its step and the iteration. The context is checked
// between iterations.

// body is one lowered body of a control-flow op.
type body struct {
	e       *executable
	name    string // "then branch", "else branch", "condition", "body"
	params  []int  // the body parameter fed to each of e.plan.Inputs
	checked bool   // its status must be read back (index checks, cuSOLVER)
}

// ctlStep runs one Cond, While or Scan node (a libStep).
type ctlStep struct {
	a      *opdef.ControlAttr
	bodies []*body
	hasMM  bool    // some body calls cuBLAS (the program sets its stream)
	offs   []int64 // each result's offset in the tuple
	bytes  []int64 // each result's size
	xStep  []int64 // Scan: the bytes of one step of each xs
	yStep  []int64 // Scan: the bytes of one step of each ys
	// The carries of While and Scan: where the current ones are (the
	// operands, then a tuple slot or the spare buffer), and the spare
	// buffers (one allocation, at spareOff).
	cur      []cu.DevicePtr
	spare    cu.DevicePtr
	spareOff []int64
	// pred is where While's cond writes its result; host is pinned memory
	// the predicate is read back into.
	pred cu.DevicePtr
	host []byte
	// The node's operands' value indices in the parent (its step's In),
	// and the iteration being enqueued (for the parameter addresses).
	in   []int
	tup  cu.DevicePtr
	step int
	// iters is the number of iterations the last run took (1 for a
	// Cond), for the profiler (exec.IterationObserver).
	iters int
}

// newControlStep lowers the bodies of the control-flow node of step i of
// e's plan.
func (b *Backend) newControlStep(e *executable, i int, fs *funcSet) (*ctlStep, error) {
	n := e.plan.Steps[i].Node
	a, ok := n.Attr().(*opdef.ControlAttr)
	if !ok {
		return nil, fmt.Errorf("the attribute is %T, not a control-flow op's", n.Attr())
	}
	plans := e.plan.Bodies[n]
	if len(plans) != len(a.Bodies) {
		return nil, fmt.Errorf("the plan has %d compiled bodies for the op's %d (a bug in loom's compiler)", len(plans), len(a.Bodies))
	}
	s := &ctlStep{a: a}
	s.offs, _ = opdef.TupleLayout(a.Outs)
	for _, t := range a.Outs {
		s.bytes = append(s.bytes, int64(t.Shape.Size()*t.DType.Size()))
	}
	names := map[opdef.ControlKind][]string{opdef.CondKind: {"then branch", "else branch"}, opdef.WhileKind: {"condition", "body"}, opdef.ScanKind: {"body"}}[a.Kind]
	if len(names) != len(plans) {
		return nil, fmt.Errorf("%v has %d bodies, want %d", a.Kind, len(plans), len(names))
	}
	for k, bp := range plans {
		want := len(a.Bodies[k].Results)
		if len(bp.Outputs) != want || len(bp.Params) != len(bp.Inputs) {
			return nil, fmt.Errorf("the compiled %s has %d outputs for %d results and %d parameters for %d inputs (a bug in loom's compiler)",
				names[k], len(bp.Outputs), want, len(bp.Params), len(bp.Inputs))
		}
		be, err := b.prepare(bp.Plan, e, fs)
		if err != nil {
			return nil, fmt.Errorf("in its %s: %w", names[k], err)
		}
		bd := &body{e: be, name: names[k], params: bp.Params, checked: be.statusBytes > 0}
		for j := range be.steps {
			if _, ok := be.steps[j].lib.(*linalgStep); ok {
				bd.checked = true
			}
		}
		s.hasMM = s.hasMM || be.hasMM
		s.bodies = append(s.bodies, bd)
	}
	if a.Kind == opdef.ScanKind {
		for k := range a.Xs {
			x := n.Input(a.Carries + k)
			s.xStep = append(s.xStep, int64(x.Shape()[1:].Size()*x.DType().Size()))
		}
		for j := a.Carries; j < len(a.Outs); j++ {
			t := a.Outs[j]
			s.yStep = append(s.yStep, int64(t.Shape[1:].Size()*t.DType.Size()))
		}
	}
	if a.Kind != opdef.CondKind {
		// The current carries, then room for the next ones (nextBuf).
		s.cur = make([]cu.DevicePtr, a.Carries, 2*a.Carries)
	}
	return s, nil
}

func (s *ctlStep) funcs() []cudagen.Func { return nil }

// setup allocates the spare carries and the predicate's buffers, then
// sets up the bodies (on the parent's stream, which exists by now).
func (s *ctlStep) setup(e *executable, mod cu.Module) error {
	d := e.be.lib.drv
	var spare int64
	for k := range s.cur {
		s.spareOff = append(s.spareOff, spare)
		spare += align(s.bytes[k])
	}
	var err error
	if spare > 0 {
		if s.spare, err = e.ownedAlloc(spare); err != nil {
			return err
		}
	}
	if s.a.Kind == opdef.WhileKind {
		if s.pred, err = e.ownedAlloc(8); err != nil {
			return err
		}
	}
	if s.a.Kind != opdef.ScanKind {
		if s.host, err = d.MemAllocHost(64); err != nil {
			return fmt.Errorf("allocating pinned memory for the predicate: %w", err)
		}
	}
	for _, bd := range s.bodies {
		if err := bd.e.setupIn(mod); err != nil {
			return fmt.Errorf("its %s: %w", bd.name, err)
		}
	}
	return nil
}

func (s *ctlStep) check() error { return nil }

// free releases the bodies and the pinned memory (the spare carries are
// the parent's owned memory).
func (s *ctlStep) free(e *executable) error {
	var errs firstErr
	for _, bd := range s.bodies {
		errs.keep(bd.e.release())
	}
	if s.host != nil {
		errs.keep(e.be.lib.drv.MemFreeHost(s.host))
		s.host = nil
	}
	return errs.err
}

// enqueue runs the op of step i of e: its loop runs on the host, which
// enqueues the bodies' kernels (and waits for the predicates).
func (s *ctlStep) enqueue(e *executable, i int) error {
	st := &e.plan.Steps[i]
	s.in, s.tup, s.iters = st.In, e.ptr[st.Out], 0
	for _, bd := range s.bodies {
		bd.e.ctx = e.ctx
		if bd.e.statusBytes > 0 {
			*e.calls++
			if err := e.be.lib.drv.MemsetD8Async(bd.e.statusDev, 0, bd.e.statusBytes, e.stream); err != nil {
				return fmt.Errorf("clearing the index checks' status: %w", err)
			}
		}
	}
	switch s.a.Kind {
	case opdef.CondKind:
		return s.runCond(e)
	case opdef.WhileKind:
		return s.runWhile(e)
	}
	return s.runScan(e)
}

// operand is the address of operand j of the node.
func (s *ctlStep) operand(e *executable, j int) cu.DevicePtr { return e.ptr[s.in[j]] }

// param is the address of body parameter j in the current iteration.
func (s *ctlStep) param(e *executable, j int) cu.DevicePtr {
	a := s.a
	switch {
	case a.Kind == opdef.CondKind:
		return s.operand(e, j+1)
	case j < a.Carries:
		return s.cur[j]
	case a.Kind == opdef.ScanKind && j < a.Carries+a.Xs:
		return s.operand(e, j) + cu.DevicePtr(int64(s.step)*s.xStep[j-a.Carries])
	}
	return s.operand(e, j)
}

// slot is the address of result k in the tuple.
func (s *ctlStep) slot(k int) cu.DevicePtr { return s.tup + cu.DevicePtr(s.offs[k]) }

// enqueueBody binds body bd's parameters (param) and results (out[k], or
// for Scan's ys step s.step of their slots) and enqueues its steps.
func (s *ctlStep) enqueueBody(e *executable, bd *body, next []cu.DevicePtr) error {
	be := bd.e
	p := be.plan
	for k, v := range p.Inputs {
		be.ptr[v] = s.param(e, bd.params[k])
	}
	for k, v := range p.Outputs {
		switch {
		case s.a.Kind == opdef.WhileKind && bd == s.bodies[0]: // the condition
			be.ptr[v] = s.pred
		case s.a.Kind == opdef.CondKind:
			be.ptr[v] = s.slot(k)
		case k < s.a.Carries:
			be.ptr[v] = next[k]
		default: // Scan's y_t
			be.ptr[v] = s.slot(k) + cu.DevicePtr(int64(s.step)*s.yStep[k-s.a.Carries])
		}
	}
	be.resolveAliases()
	for j := range p.Steps {
		if p.Steps[j].Kind == exec.AliasStep {
			continue
		}
		if err := be.enqueue(j); err != nil {
			return s.bodyErr(bd, j, err)
		}
	}
	return nil
}

// bodyErr names body bd's step j and the iteration.
func (s *ctlStep) bodyErr(bd *body, j int, err error) error {
	p := bd.e.plan
	where := "its " + bd.name
	if s.a.Kind != opdef.CondKind {
		where += fmt.Sprintf(", iteration %d", s.step)
	}
	return fmt.Errorf("%s, step %d of %d (%s): %w", where, j, len(p.Steps), p.DescribeStep(j), err)
}

// readStatus enqueues the copy of a checked body's status words to its
// pinned memory (checkBody reads them after the next synchronisation).
func (s *ctlStep) readStatus(e *executable, bd *body) error {
	be := bd.e
	if be.statusBytes == 0 {
		return nil
	}
	*e.calls++
	if err := e.be.lib.drv.MemcpyDtoHAsync(ptrOf(be.pinned[be.statusOff:be.statusOff+be.statusBytes]), be.statusDev, be.statusBytes, e.stream); err != nil {
		return fmt.Errorf("reading the index checks' status: %w", err)
	}
	return nil
}

// checkBody returns the error a checked body's kernels reported in the
// iteration just synchronised.
func (s *ctlStep) checkBody(bd *body) error {
	be := bd.e
	if be.statusBytes > 0 {
		words := unsafe.Slice((*int64)(unsafe.Pointer(&be.pinned[be.statusOff])), be.statusBytes/8)
		for j := range be.steps {
			c := be.steps[j].check
			if c == nil {
				continue
			}
			if err := c.Err(words[be.steps[j].status/8 : be.steps[j].status/8+cudagen.StatusWords]); err != nil {
				return s.bodyErr(bd, j, err)
			}
		}
	}
	for j := range be.steps {
		if l, ok := be.steps[j].lib.(*linalgStep); ok {
			if err := l.check(); err != nil {
				return s.bodyErr(bd, j, err)
			}
		}
	}
	return nil
}

// readPred copies the bool at src to the host (after everything enqueued
// so far) and returns it.
func (s *ctlStep) readPred(e *executable, src cu.DevicePtr) (bool, error) {
	d := e.be.lib.drv
	*e.calls++
	if err := d.MemcpyDtoHAsync(ptrOf(s.host[:1]), src, 1, e.stream); err != nil {
		return false, fmt.Errorf("reading the predicate back: %w", err)
	}
	if err := d.StreamSynchronize(e.stream); err != nil {
		return false, e.asyncErr(err)
	}
	return s.host[0] != 0, nil
}

// cancelled returns the context's error, if it is done, naming the
// iteration.
func (s *ctlStep) cancelled(e *executable) error {
	if e.ctx == nil {
		return nil
	}
	select {
	case <-e.ctx.Done():
		return fmt.Errorf("stopped before iteration %d: %w", s.step, e.ctx.Err())
	default:
		return nil
	}
}

// runCond reads the predicate and runs the branch it picks.
func (s *ctlStep) runCond(e *executable) error {
	s.step = 0
	p, err := s.readPred(e, s.operand(e, 0))
	if err != nil {
		return err
	}
	bd := s.bodies[1]
	if p {
		bd = s.bodies[0]
	}
	s.iters = 1
	if err := s.enqueueBody(e, bd, nil); err != nil {
		return err
	}
	if !bd.checked {
		return nil
	}
	return s.syncCheck(e, bd)
}

// syncCheck reads a checked body's status back, waits and checks it.
func (s *ctlStep) syncCheck(e *executable, bd *body) error {
	if err := s.readStatus(e, bd); err != nil {
		return err
	}
	if err := e.be.lib.drv.StreamSynchronize(e.stream); err != nil {
		return e.asyncErr(err)
	}
	return s.checkBody(bd)
}

// runWhile checks the condition (one read-back per iteration) and runs
// the body until the condition is false or the bound is reached. The
// status of a checked body is read back with the next condition.
func (s *ctlStep) runWhile(e *executable) error {
	a := s.a
	cond, bd := s.bodies[0], s.bodies[1]
	for k := range s.cur {
		s.cur[k] = s.operand(e, k)
	}
	next := s.nextBuf()
	pending := false // a checked body's status is on its way to the host
	for s.step = 0; a.MaxTrips == 0 || s.step < a.MaxTrips; s.step++ {
		if err := s.cancelled(e); err != nil {
			return err
		}
		if err := s.enqueueBody(e, cond, nil); err != nil {
			return err
		}
		if cond.checked {
			if err := s.readStatus(e, cond); err != nil {
				return err
			}
		}
		p, err := s.readPred(e, s.pred)
		if err != nil {
			return err
		}
		if pending {
			s.step--
			err := s.checkBody(bd)
			s.step++
			if err != nil {
				return err
			}
			pending = false
		}
		if cond.checked {
			if err := s.checkBody(cond); err != nil {
				return err
			}
		}
		if !p {
			break
		}
		for k := range s.cur {
			if s.cur[k] == s.slot(k) {
				next[k] = s.spare + cu.DevicePtr(s.spareOff[k])
			} else {
				next[k] = s.slot(k)
			}
		}
		s.iters++
		if err := s.enqueueBody(e, bd, next); err != nil {
			return err
		}
		copy(s.cur, next)
		if bd.checked {
			if err := s.readStatus(e, bd); err != nil {
				return err
			}
			pending = true
		}
	}
	if pending { // the bound stopped the loop after a checked body
		s.step--
		if err := s.syncCheck(e, bd); err != nil {
			return err
		}
	}
	return s.finish(e)
}

// nextBuf is the list of the next carries' addresses: the second half of
// s.cur's backing array (no allocation per run).
func (s *ctlStep) nextBuf() []cu.DevicePtr { return s.cur[len(s.cur) : 2*len(s.cur)] }

// finish copies the carries that are not in their tuple slot there.
func (s *ctlStep) finish(e *executable) error {
	for k, c := range s.cur {
		if c == s.slot(k) || s.bytes[k] == 0 {
			continue
		}
		*e.calls++
		if err := e.be.lib.drv.MemcpyDtoDAsync(s.slot(k), c, s.bytes[k], e.stream); err != nil {
			return fmt.Errorf("copying carry %d into the result: %w", k, err)
		}
	}
	return nil
}

// runScan enqueues the body once per step, without reading anything
// back unless the body is checked.
func (s *ctlStep) runScan(e *executable) error {
	a := s.a
	bd := s.bodies[0]
	for k := range s.cur {
		s.cur[k] = s.operand(e, k)
	}
	next := s.nextBuf()
	for it := range a.Length {
		s.step = it
		if a.Reverse {
			s.step = a.Length - 1 - it
		}
		if err := s.cancelled(e); err != nil {
			return err
		}
		// The last step writes the tuple: step it writes the slot when
		// Length-1-it is even.
		toSlot := (a.Length-1-it)%2 == 0
		for k := range s.cur {
			if toSlot {
				next[k] = s.slot(k)
			} else {
				next[k] = s.spare + cu.DevicePtr(s.spareOff[k])
			}
		}
		s.iters++
		if err := s.enqueueBody(e, bd, next); err != nil {
			return err
		}
		copy(s.cur, next)
		if bd.checked {
			if err := s.syncCheck(e, bd); err != nil {
				return err
			}
		}
	}
	return s.finish(e)
}

package cpu

import (
	"errors"
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/stop"
)

// Control flow (ops.Cond, ops.While, ops.Scan). Each body plan
// (exec.Plan.Bodies) is lowered like a program; every instance of the
// outer program binds one instance of each body (its own arena), so
// nothing is allocated per run or per iteration. A body's inputs and
// outputs are slots the loop points, before each iteration, at:
//
//   - the loop's operands (captures; the carries at the first iteration);
//   - for Scan's x_t, the step's rows of xs (a view, no copy);
//   - for a carry, one of two buffers that alternate (ping-pong): the
//     carry's place in the result tuple and a scratch copy; the
//     iteration that writes the final carry writes the tuple;
//   - for Scan's y_t, its rows of the stacked ys in the tuple (a view).
//
// The loop checks the context between iterations (the body's kernels
// check inside as usual). A body kernel's failure (an index out of range,
// a singular matrix) or panic becomes the Run's error naming the op, the
// body, the body's step and the iteration.

// errStopped is what a body returns when the Run's context is done: the
// loop stops, and the executor reports the context's error after the
// step.
var errStopped = errors.New("stopped")

// prepareNeedsBodies is the table entry of the control-flow ops: Lower
// prepares them from the plan's bodies (prepareControl), so reaching this
// means a control-flow node without compiled bodies.
func prepareNeedsBodies(n *graph.Node) (*kernel, error) {
	return nil, fmt.Errorf("%s has no compiled bodies (exec.Plan.Bodies)", n.Op())
}

// prepareTupleGet copies one result out of a tuple: the compiler makes a
// TupleGet a view of its tuple except when it must land in an output or
// a variable.
func prepareTupleGet(n *graph.Node) (*kernel, error) {
	a := n.Attr().(opdef.TupleAttr)
	off := int(a.Offset)
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			copy(a.Out()[lo:hi], a.In(0)[off+lo:off+hi])
		})
		return func() { l.Run(len(a.Out()), 4*grainElems, copyStep) }
	}}, nil
}

// prepareControl lowers the bodies of control-flow node n and returns
// its kernel.
func (b *Backend) prepareControl(n *graph.Node, bodies []*exec.BodyPlan) (*kernel, error) {
	a, ok := n.Attr().(*opdef.ControlAttr)
	if !ok || len(bodies) != len(a.Bodies) {
		return nil, fmt.Errorf("%d compiled bodies for %s", len(bodies), n.Op())
	}
	exes := make([]*executable, len(bodies))
	for k, bp := range bodies {
		x, err := b.Lower(bp.Plan)
		if err != nil {
			return nil, fmt.Errorf("the %s: %w", exec.BodyName(a.Kind, k), err)
		}
		exes[k] = x.(*executable)
		exes[k].nested = true
		exes[k].waves = nil // a body runs its steps one by one (runSteps)
	}
	offs, _ := opdef.TupleLayout(a.Outs)
	sizes := make([]int, len(a.Outs))
	for i, t := range a.Outs {
		sizes[i] = t.Shape.Size() * t.DType.Size()
	}
	// The scratch: the second buffer of every carry, at the offsets the
	// carries have in the tuple (so one offset table serves both), and a
	// byte for While's predicate.
	carryBytes := 0
	if a.Kind != opdef.CondKind && a.Carries > 0 { // Cond's Carries counts its operands, not carries
		carryBytes = int(offs[a.Carries-1]) + sizes[a.Carries-1]
	}
	k := &kernel{scratch: carryBytes + 1}
	k.bind = func(args *args) func() {
		l := &loopRun{args: args, node: n, attr: a, bodies: bodies, offs: offs, sizes: sizes, carryBytes: carryBytes}
		l.inst = make([]*instance, len(exes))
		for i, x := range exes {
			in, err := x.newInstance()
			if err != nil {
				panic(err) // newInstance of the outer program turns it into an error
			}
			l.inst[i] = in
		}
		switch a.Kind {
		case opdef.CondKind:
			return l.cond
		case opdef.WhileKind:
			return l.while
		}
		return l.scan
	}
	return k, nil
}

// loopRun is one bound control-flow step.
type loopRun struct {
	args       *args
	node       *graph.Node
	attr       *opdef.ControlAttr
	bodies     []*exec.BodyPlan
	inst       []*instance // one per body
	offs       []int64     // each result's offset in the tuple
	sizes      []int       // each result's bytes (a Scan's ys: all steps)
	carryBytes int
	// The iteration's state: where the carries are (-1 the operands, 0
	// the tuple, 1 the scratch), where they go, and Scan's step.
	cur, next, t int
	trips        int // While's iterations so far
}

// carry returns carry i's bytes in buffer set s: 0 the tuple, 1 the
// scratch.
func (l *loopRun) carry(s, i int) []byte {
	off, n := int(l.offs[i]), l.sizes[i]
	if s == 0 {
		return l.args.Out()[off : off+n : off+n]
	}
	return l.args.scratch[off : off+n : off+n]
}

// bind points body k's input slots at the iteration's values
// (inValue) and its output slots at where its results go (outValue).
func (l *loopRun) bind(k int) {
	in, bp := l.inst[k], l.bodies[k]
	for i, v := range bp.Inputs {
		in.slots[v] = l.inValue(k, bp.Params[i])
	}
	for r, v := range bp.Outputs {
		in.slots[v] = l.outValue(k, r)
	}
}

// inValue is the bytes of body parameter j in the current iteration.
func (l *loopRun) inValue(k, j int) []byte {
	a := l.attr
	switch a.Kind {
	case opdef.CondKind:
		return l.args.In(j + 1)
	case opdef.ScanKind:
		if j >= a.Carries && j < a.Carries+a.Xs {
			x := l.args.In(j)
			n := len(x) / a.Length
			return x[l.t*n : (l.t+1)*n : (l.t+1)*n]
		}
	}
	if j < a.Carries && l.cur >= 0 {
		return l.carry(l.cur, j)
	}
	return l.args.In(j)
}

// outValue is where result r of body k goes in the current iteration.
func (l *loopRun) outValue(k, r int) []byte {
	a := l.attr
	switch {
	case a.Kind == opdef.WhileKind && k == 0:
		return l.args.scratch[l.carryBytes : l.carryBytes+1 : l.carryBytes+1]
	case a.Kind == opdef.CondKind:
		off, n := int(l.offs[r]), l.sizes[r]
		return l.args.Out()[off : off+n : off+n]
	case r < a.Carries:
		return l.carry(l.next, r)
	}
	// Scan's y_t: its rows of the stacked ys.
	off, n := int(l.offs[r]), l.sizes[r]/a.Length
	return l.args.Out()[off+l.t*n : off+(l.t+1)*n : off+(l.t+1)*n]
}

// runBody runs body k's steps once (its slots bound); iter numbers the
// iteration for messages. It returns false when the loop must stop (an
// error recorded with args.Fail, or the Run cancelled).
func (l *loopRun) runBody(k, iter int) bool {
	in := l.inst[k]
	in.bindViews()
	in.done, in.tr, in.ctx = l.args.inst.done, l.args.inst.tr, l.args.inst.ctx
	step, err := in.runSteps()
	if err == nil {
		return true
	}
	if err != errStopped {
		what := "iteration"
		if l.attr.Kind == opdef.ScanKind {
			what = "step"
		}
		where := fmt.Sprintf("%s %d, ", what, iter)
		if l.attr.Kind == opdef.CondKind {
			where = ""
		}
		l.args.Fail(fmt.Errorf("%s: %s%s step %d (%s): %w", l.node.Op(), where, exec.BodyName(l.attr.Kind, k), step, l.bodies[k].DescribeStep(step), err))
	}
	return false
}

// runSteps runs the instance's steps in order (a body's): it returns the
// failing step and its error, errStopped when the Run's context is done,
// and turns a panic into an error.
func (in *instance) runSteps() (step int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (a bug in loom): %v", r)
		}
		in.panicked, in.failed = nil, nil
	}()
	for i, run := range in.run {
		step = i
		run()
		if in.panicked != nil {
			panic(in.panicked)
		}
		if in.failed != nil {
			return i, in.failed
		}
		if in.done != nil && stop.Done(in.done) {
			return i, errStopped
		}
	}
	return -1, nil
}

// release drops the body instances' references to the Run's memory.
func (l *loopRun) release() {
	for k, in := range l.inst {
		for _, v := range l.bodies[k].Inputs {
			in.slots[v] = nil
		}
		for _, v := range l.bodies[k].Outputs {
			in.slots[v] = nil
		}
		for _, v := range in.exe.views {
			in.slots[v] = nil
		}
		in.done, in.tr, in.ctx = nil, nil, nil
	}
}

func (l *loopRun) stopped() bool {
	d := l.args.inst.done
	return d != nil && stop.Done(d)
}

// cond runs the branch the predicate chooses, its results written into
// the tuple.
func (l *loopRun) cond() {
	defer l.release()
	k := 1
	if l.args.In(0)[0] != 0 {
		k = 0
	}
	l.bind(k)
	if l.runBody(k, 0) {
		l.report(1)
	}
}

// report gives a profiler the step's iteration count (a top-level loop's
// only: a nested loop's step is its body's, which has no slice of its
// own).
func (l *loopRun) report(n int) {
	tr := l.args.inst.tr
	if tr == nil || l.args.inst.exe.nested {
		return
	}
	if o, ok := tr.obs.(exec.IterationObserver); ok {
		o.Iterations(tr.step, n)
	}
}

// while runs cond and body until cond is false (or MaxTrips iterations).
// The carries start in the operands (cur -1) and then alternate between
// the tuple (0) and the scratch (1).
func (l *loopRun) while() {
	defer l.release()
	a := l.attr
	l.cur, l.trips = -1, 0
	for trip := 0; a.MaxTrips == 0 || trip < a.MaxTrips; trip++ {
		if trip > 0 && l.stopped() {
			return
		}
		l.bind(0)
		if !l.runBody(0, trip) {
			return
		}
		if l.args.scratch[l.carryBytes] == 0 {
			break
		}
		l.next = trip % 2
		l.bind(1)
		if !l.runBody(1, trip) {
			return
		}
		l.cur = l.next
		l.trips = trip + 1
	}
	l.finish()
	l.report(l.trips)
}

// finish leaves the final carries in the tuple (they are in buffer set
// l.cur; -1: still the operands).
func (l *loopRun) finish() {
	if l.cur == 0 {
		return
	}
	for i := range l.attr.Carries {
		src := l.args.In(i)
		if l.cur == 1 {
			src = l.carry(1, i)
		}
		copy(l.carry(0, i), src)
	}
}

// scan runs the body for every step, x_t and y_t views into xs and the
// stacked ys; the step that writes the final carries writes the tuple.
func (l *loopRun) scan() {
	defer l.release()
	a := l.attr
	l.cur = -1
	for k := range a.Length {
		if k > 0 && l.stopped() {
			return
		}
		l.t = k
		if a.Reverse {
			l.t = a.Length - 1 - k
		}
		l.next = (a.Length - 1 - k) % 2
		l.bind(0)
		if !l.runBody(0, l.t) {
			return
		}
		l.cur = l.next
	}
	l.finish()
	l.report(a.Length)
}

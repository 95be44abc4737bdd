package exec

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"unsafe"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

// Feeds maps Input nodes to the values they take in one Run.
type Feeds map[*graph.Node]*tensor.Tensor

// Program is a compiled computation bound to a backend, holding the
// current values of its Variables on the device.
//
// Run may be called from several goroutines at once. Runs that update
// variables are serialised with each other and with Write; runs that only
// read variables proceed in parallel.
type Program struct {
	be       Backend
	plan     *Plan
	exe      Executable
	store    *varStore
	slots    []*varSlot // per Plan.Vars
	inputIdx map[*graph.Node]int
	varIdx   map[*graph.Node]int
	updates  bool
	ignore   bool // IgnoreUnusedFeeds
	timings  []PassTiming
	nodes0   int
	nodes1   int          // nodes of the optimised graph (Plan().Graph can grow)
	nOut     int          // the user's outputs: the first nOut of Plan.Outputs
	checks   []checkValue // CheckNumerics: the values checked, in step order
	// life guards closed and active: every call that touches the program's
	// buffers (Run, Read, Write, Save/LoadVariables) is active from enter
	// to exit, and Close waits for active calls before it frees anything.
	life      sync.Mutex
	idle      sync.Cond // signalled when active drops to 0
	closed    bool
	active    int
	framesMu  sync.Mutex
	freeFrame []*Frame
	frames    int // frames made so far
	infoOnce  sync.Once
	infos     []stepInfo
	// fingerprint of the plan, for a program with collectives: the first
	// Run checks it is every rank's (dist.CheckSame); sameChecked once
	// that passed.
	fingerprint uint64
	sameMu      sync.Mutex
	sameChecked bool
}

// varStore holds variable buffers; programs sharing variables share it.
type varStore struct {
	graph *graph.Graph
	be    Backend
	mu    sync.RWMutex
	slots map[*graph.Node]*varSlot // by the user's Variable node
	refs  int
}

type varSlot struct {
	node      *graph.Node  // the user's Variable
	dtype     tensor.DType // the dtype it is held in (see Precision)
	cur, next Buffer
}

// convertTensor returns t in dtype dt (t itself if it has it already).
func convertTensor(t *tensor.Tensor, dt tensor.DType) *tensor.Tensor {
	if t.DType() == dt {
		return t
	}
	out, _ := tensor.FromFloat64s(dt, t.Float64s(), t.Shape()...)
	return out
}

func newProgram(c *compilation) (*Program, error) {
	exe, err := c.be.Lower(c.plan)
	if err != nil {
		return nil, fmt.Errorf("exec: Compile: lowering for %s: %w", c.be.Name(), err)
	}
	p := &Program{
		be: c.be, plan: c.plan, exe: exe, timings: c.timings, nodes0: c.nodes0, nodes1: c.plan.Graph.Len(), ignore: c.cfg.ignoreUnused,
		inputIdx: map[*graph.Node]int{}, varIdx: map[*graph.Node]int{},
		nOut: len(c.outs), checks: c.checks,
	}
	if c.collectives {
		p.fingerprint = planFingerprint(c.plan)
	}
	p.idle.L = &p.life
	for i, n := range c.plan.InputNodes {
		p.inputIdx[n] = i
	}
	store := &varStore{graph: c.user, be: c.be, slots: map[*graph.Node]*varSlot{}}
	if c.cfg.share != nil {
		store = c.cfg.share.store
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if store.refs == 0 && c.cfg.share != nil {
		// The program whose variables we share was closed after check().
		exe.Close()
		return nil, fmt.Errorf("exec: Compile: ShareVariables: %w: the program was closed", ErrClosed)
	}
	store.refs++
	for i, v := range c.plan.Vars {
		p.varIdx[v.User] = i
		if v.Update >= 0 {
			p.updates = true
		}
		s := store.slots[v.User]
		if s != nil && s.dtype != v.Node.DType() {
			store.refs--
			exe.Close()
			return nil, fmt.Errorf("exec: Compile: ShareVariables: variable %q is held as %v by the other program and %v by this one (compile both with the same Precision)", v.User.Name(), s.dtype, v.Node.DType())
		}
		if s == nil {
			s = &varSlot{node: v.User, dtype: v.Node.DType()}
			init := convertTensor(v.User.Value(), v.Node.DType())
			if s.cur, err = c.be.NewBuffer(init); err == nil {
				s.next, err = c.be.NewBuffer(init)
			}
			if err != nil {
				store.refs--
				exe.Close()
				return nil, fmt.Errorf("exec: Compile: allocating variable %q %s: %w", v.User.Name(), v.User.Type(), err)
			}
			store.slots[v.User] = s
		}
		p.slots = append(p.slots, s)
	}
	p.store = store
	return p, nil
}

// Plan returns a copy of the program's plan, for inspection: changing it
// does not change the program (its graph is shared: nodes are immutable).
func (p *Program) Plan() *Plan {
	if p == nil {
		return nil
	}
	return p.plan.Clone()
}

// Passes returns the timing of each compile pass.
func (p *Program) Passes() []PassTiming {
	if p == nil {
		return nil
	}
	return append([]PassTiming(nil), p.timings...)
}

// Backend returns the backend the program runs on.
func (p *Program) Backend() Backend {
	if p == nil {
		return nil
	}
	return p.be
}

// Inputs returns the Input nodes (of the user's graph) that Run needs.
func (p *Program) Inputs() []*graph.Node {
	if p.usable("Inputs") != nil {
		return nil
	}
	return append([]*graph.Node(nil), p.plan.InputNodes...)
}

// Run computes the outputs from feeds, one value per Input the outputs
// depend on, and applies the variable updates. It returns new tensors, in
// output order. Errors (bad feeds, cancelled context, device failure)
// leave the Program and its variables as they were.
func (p *Program) Run(ctx context.Context, feeds Feeds) ([]*tensor.Tensor, error) {
	if err := p.usable("Run"); err != nil {
		return nil, err
	}
	outs := make([]*tensor.Tensor, p.nOut)
	for i, v := range p.plan.Outputs[:p.nOut] {
		n := p.plan.Values[v].Node
		t, err := tensor.Make(n.DType(), n.Shape()...)
		if err != nil {
			return nil, fmt.Errorf("exec: Run: output %d: %w", i, err)
		}
		outs[i] = t
	}
	if err := p.run(ctx, feeds, outs); err != nil {
		return nil, err
	}
	return outs, nil
}

// RunInto is Run writing the outputs into caller-provided tensors of the
// outputs' types, which must not share memory with the feeds. In steady
// state it allocates nothing.
func (p *Program) RunInto(ctx context.Context, feeds Feeds, outs []*tensor.Tensor) error {
	if err := p.usable("RunInto"); err != nil {
		return err
	}
	if len(outs) != p.nOut {
		return fmt.Errorf("exec: RunInto: %w: %d output tensors for %d outputs", ErrFeed, len(outs), p.nOut)
	}
	for i, v := range p.plan.Outputs[:p.nOut] {
		n := p.plan.Values[v].Node
		t := outs[i]
		if t == nil {
			return fmt.Errorf("exec: RunInto: %w: output %d is nil", ErrFeed, i)
		}
		if t.DType() != n.DType() || !t.Shape().Equal(n.Shape()) {
			return fmt.Errorf("exec: RunInto: %w: output %d is %s, the program computes %s", ErrFeed, i, t.Type(), n.Type())
		}
		for in, f := range feeds {
			if overlaps(t, f) {
				return fmt.Errorf("exec: RunInto: %w: output %d shares memory with the feed of %s", ErrFeed, i, in)
			}
		}
		for j := 0; j < i; j++ {
			if overlaps(t, outs[j]) {
				return fmt.Errorf("exec: RunInto: %w: outputs %d and %d share memory", ErrFeed, j, i)
			}
		}
	}
	return p.run(ctx, feeds, outs)
}

func overlaps(a, b *tensor.Tensor) bool {
	x, y := a.Bytes(), b.Bytes()
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	xs, ys := uintptr(unsafe.Pointer(&x[0])), uintptr(unsafe.Pointer(&y[0]))
	return xs < ys+uintptr(len(y)) && ys < xs+uintptr(len(x))
}

// usable returns an error for a nil or zero Program (one not made by
// Compile), naming the method called.
func (p *Program) usable(method string) error {
	if p == nil || p.plan == nil {
		return fmt.Errorf("exec: %s: %w: nil or zero Program (make one with exec.Compile)", method, graph.ErrInvalid)
	}
	return nil
}

// enter marks a call that uses the program's buffers as active, or returns
// ErrClosed (or the error of a nil Program). Every successful enter is
// paired with an exit.
func (p *Program) enter(method string) error {
	if err := p.usable(method); err != nil {
		return err
	}
	p.life.Lock()
	defer p.life.Unlock()
	if p.closed {
		return fmt.Errorf("exec: %s: %w", method, ErrClosed)
	}
	p.active++
	return nil
}

func (p *Program) exit() {
	p.life.Lock()
	p.active--
	if p.active == 0 && p.closed {
		p.idle.Broadcast()
	}
	p.life.Unlock()
}

func (p *Program) run(ctx context.Context, feeds Feeds, outs []*tensor.Tensor) error {
	return p.runWith(ctx, feeds, nil, false, outs, nil)
}

// runWith runs with host feeds and device feeds dev (binds: the backend
// takes their Buffers in the Frame), writing output i into outs[i], or,
// where outBufs[i] is non-nil, into that Buffer.
func (p *Program) runWith(ctx context.Context, feeds Feeds, dev DeviceFeeds, binds bool, outs []*tensor.Tensor, outBufs []Buffer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("exec: Run: %w", err)
	}
	if err := p.enter("Run"); err != nil {
		return err
	}
	defer p.exit()
	if err := p.checkSame(ctx); err != nil {
		return err
	}
	f := p.frame()
	defer p.release(f)
	if err := p.bindFeeds(f, feeds, dev, binds); err != nil {
		return err
	}
	copy(f.Outputs, outs)
	if outBufs != nil {
		if f.OutputBufs == nil {
			f.OutputBufs = make([]Buffer, len(p.plan.Outputs))
		}
		copy(f.OutputBufs, outBufs)
	}
	copy(f.Outputs[p.nOut:], f.checks)
	var rr *runRecorder
	var runStart int64
	if obs, ok := ctx.Value(observerKey{}).(StepObserver); ok {
		f.Observer = obs
	} else if rec := profile.FromContext(ctx); rec != nil {
		rr = p.startRecording(rec, f)
		f.Observer = rr
		runStart = rec.Now()
	}
	if p.updates {
		p.store.mu.Lock()
		defer p.store.mu.Unlock()
	} else {
		p.store.mu.RLock()
		defer p.store.mu.RUnlock()
	}
	for i, s := range p.slots {
		f.Vars[i], f.Next[i] = s.cur, s.next
	}
	err := p.exe.Run(ctx, f)
	if rr != nil {
		rr.finish(runStart, err)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("exec: Run: %w", err)
		}
		return fmt.Errorf("exec: Run on %s: %w", p.be.Name(), err)
	}
	if p.checks != nil {
		if err := p.checkNumerics(f); err != nil {
			return err
		}
	}
	for i, v := range p.plan.Vars {
		if v.Update >= 0 {
			s := p.slots[i]
			s.cur, s.next = s.next, s.cur
		}
	}
	return nil
}

// checkSame checks, at the first Run of a program with collective ops,
// that every rank compiled the same plan (the ranks exchange the plans'
// fingerprints: a collective, which every rank's first Run makes).
func (p *Program) checkSame(ctx context.Context) error {
	if p.fingerprint == 0 {
		return nil
	}
	p.sameMu.Lock()
	defer p.sameMu.Unlock()
	if p.sameChecked {
		return nil
	}
	if err := dist.CheckSame(ctx, p.plan.Comm, p.fingerprint, "compiled program"); err != nil {
		return fmt.Errorf("exec: Run: %w", err)
	}
	p.sameChecked = true
	return nil
}

// planFingerprint hashes what the ranks must agree on: every node of the
// plan's graph (op, attribute, type, operands) in step order, and the
// bodies' plans. Call sites are left out.
func planFingerprint(pl *Plan) uint64 {
	h := fnv.New64a()
	var hashPlan func(pl *Plan)
	hashPlan = func(pl *Plan) {
		for _, n := range pl.Graph.Nodes() {
			attr := n.Attr()
			if isControl(n) {
				attr = nil // its text numbers it per process; the bodies are hashed below
			}
			fmt.Fprintf(h, "%d %s %v %s", n.ID(), n.Op(), attr, n.Type())
			if n.Op() == graph.OpConst {
				h.Write(n.Value().Bytes())
			}
			for _, x := range n.Inputs() {
				fmt.Fprintf(h, " %d", x.ID())
			}
			h.Write([]byte{'\n'})
		}
		for _, s := range pl.Steps {
			fmt.Fprintf(h, "step %d %d\n", s.Kind, s.Node.ID())
		}
		for _, n := range pl.Graph.Nodes() {
			for _, b := range pl.Bodies[n] {
				hashPlan(b.Plan)
			}
		}
	}
	hashPlan(pl)
	return h.Sum64() | 1 // never 0, which means "no check"
}

// bindFeeds checks feeds (and the device feeds dev) against the plan's
// inputs and puts them in f.
func (p *Program) bindFeeds(f *Frame, feeds Feeds, dev DeviceFeeds, binds bool) error {
	matched := 0
	for i, n := range p.plan.InputNodes {
		var dt tensor.DType
		var shape tensor.Shape
		t, ok := feeds[n]
		d, onDev := dev[n]
		switch {
		case ok:
			if t == nil {
				return fmt.Errorf("exec: Run: %w: the feed for Input %q %s is a nil tensor", ErrFeed, n.Name(), n.Type())
			}
			dt, shape = t.DType(), t.Shape()
		case onDev:
			dt, shape = d.dtype, d.shape
		default:
			return fmt.Errorf("exec: Run: %w: missing feed for Input %q %s (built at %s)", ErrFeed, n.Name(), n.Type(), n.Site())
		}
		matched++
		if dt != n.DType() || !shape.Equal(n.Shape()) {
			what := "shape"
			if dt != n.DType() {
				what = "dtype"
			}
			typ := tensor.TypeString(dt, shape)
			return fmt.Errorf("exec: Run: %w: the feed for Input %q %s (built at %s) is %s: wrong %s", ErrFeed, n.Name(), n.Type(), n.Site(), typ, what)
		}
		if onDev {
			ht, buf, err := d.feedValue(binds)
			if err != nil {
				return fmt.Errorf("exec: Run: reading the device feed for Input %q %s: %w", n.Name(), n.Type(), err)
			}
			if buf != nil {
				if f.InputBufs == nil {
					f.InputBufs = make([]Buffer, len(p.plan.Inputs))
				}
				f.InputBufs[i] = buf
			}
			t = ht
		}
		f.Inputs[i] = t
	}
	if matched == len(feeds)+len(dev) {
		return nil
	}
	for n := range dev {
		if _, ok := p.inputIdx[n]; !ok {
			if n != nil && n.Op() == graph.OpInput && n.Graph() == p.store.graph && p.ignore {
				continue
			}
			return fmt.Errorf("exec: Run: %w: extra device feed for %s, which this program does not use as an Input", ErrFeed, n)
		}
	}
	for n := range feeds {
		if _, ok := p.inputIdx[n]; ok {
			continue
		}
		switch {
		case n == nil:
			return fmt.Errorf("exec: Run: %w: a feed has a nil node as its key", ErrFeed)
		case n.Graph() != p.store.graph:
			return fmt.Errorf("exec: Run: %w: extra feed for %s, a node of another graph", ErrFeed, n)
		case n.Op() != graph.OpInput:
			return fmt.Errorf("exec: Run: %w: extra feed for %s (built at %s): only Inputs are fed (use Program.Write for a Variable)", ErrFeed, n, n.Site())
		case !p.ignore:
			return fmt.Errorf("exec: Run: %w: extra feed for Input %q %s (built at %s), which this program does not use (compile with exec.IgnoreUnusedFeeds to allow it)", ErrFeed, n.Name(), n.Type(), n.Site())
		}
	}
	return nil
}

func (p *Program) frame() *Frame {
	p.framesMu.Lock()
	if n := len(p.freeFrame); n > 0 {
		f := p.freeFrame[n-1]
		p.freeFrame = p.freeFrame[:n-1]
		p.framesMu.Unlock()
		return f
	}
	p.frames++
	id := p.frames - 1
	p.framesMu.Unlock()
	f := &Frame{
		id:      id,
		Inputs:  make([]*tensor.Tensor, len(p.plan.Inputs)),
		Vars:    make([]Buffer, len(p.plan.Vars)),
		Next:    make([]Buffer, len(p.plan.Vars)),
		Outputs: make([]*tensor.Tensor, len(p.plan.Outputs)),
	}
	for _, v := range p.plan.Outputs[p.nOut:] {
		// CheckNumerics' scalars: the frame's own, kept with it.
		n := p.plan.Values[v].Node
		f.checks = append(f.checks, tensor.Zeros(n.DType(), n.Shape()...))
	}
	return f
}

func (p *Program) release(f *Frame) {
	clear(f.Inputs)
	clear(f.Outputs[:p.nOut])
	clear(f.Vars)
	clear(f.Next)
	clear(f.InputBufs)
	clear(f.OutputBufs)
	f.Observer = nil
	p.framesMu.Lock()
	p.freeFrame = append(p.freeFrame, f)
	p.framesMu.Unlock()
}

// Read returns a copy of variable w's current value.
func (p *Program) Read(w *graph.Node) (*tensor.Tensor, error) {
	if err := p.enter("Read"); err != nil {
		return nil, err
	}
	defer p.exit()
	i, ok := p.varIdx[w]
	if !ok {
		return nil, fmt.Errorf("exec: Read(%s): %w: not a Variable of this program", w, graph.ErrInvalid)
	}
	p.store.mu.RLock()
	defer p.store.mu.RUnlock()
	return p.readSlot(i)
}

// readSlot copies variable i's current value into a new tensor of its
// declared dtype. The caller holds p.store.mu.
func (p *Program) readSlot(i int) (*tensor.Tensor, error) {
	s := p.slots[i]
	t, err := tensor.Make(s.dtype, s.node.Shape()...)
	if err != nil {
		return nil, fmt.Errorf("exec: Read(%q): %w", s.node.Name(), err)
	}
	if err := s.cur.Read(t); err != nil {
		return nil, fmt.Errorf("exec: Read(%q): %w", s.node.Name(), err)
	}
	return convertTensor(t, s.node.DType()), nil
}

// Write sets variable w's value to a copy of t, which must have w's type
// (else the error, "bad value", wraps ErrFeed).
func (p *Program) Write(w *graph.Node, t *tensor.Tensor) error {
	if err := p.enter("Write"); err != nil {
		return err
	}
	defer p.exit()
	i, ok := p.varIdx[w]
	if !ok {
		return fmt.Errorf("exec: Write(%s): %w: not a Variable of this program", w, graph.ErrInvalid)
	}
	if t == nil || t.DType() != w.DType() || !t.Shape().Equal(w.Shape()) {
		return fmt.Errorf("exec: Write(%q %s): %w: got %s", w.Name(), w.Type(), errBadValue, t.Type())
	}
	t = convertTensor(t, p.slots[i].dtype)
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	if err := p.slots[i].cur.Write(t); err != nil {
		return fmt.Errorf("exec: Write(%q): %w", w.Name(), err)
	}
	return nil
}

// Variables returns the program's Variable nodes (of the user's graph).
func (p *Program) Variables() []*graph.Node {
	if p.usable("Variables") != nil {
		return nil
	}
	out := make([]*graph.Node, len(p.plan.Vars))
	for i, v := range p.plan.Vars {
		out[i] = v.User
	}
	return out
}

// Close waits for running Runs, then releases the program's device
// memory (variables too, unless another program shares them).
func (p *Program) Close() error {
	if err := p.usable("Close"); err != nil {
		return err
	}
	p.life.Lock()
	if p.closed {
		p.life.Unlock()
		return nil
	}
	p.closed = true
	for p.active > 0 {
		p.idle.Wait()
	}
	p.life.Unlock()
	err := p.exe.Close()
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.refs--
	if p.store.refs == 0 {
		for _, s := range p.store.slots {
			s.cur.Free()
			s.next.Free()
		}
		p.store.slots = nil
	}
	return err
}

type observerKey struct{}

// WithObserver returns a context that makes Program.Run report every step
// to obs. The profiler uses it.
func WithObserver(ctx context.Context, obs StepObserver) context.Context {
	return context.WithValue(ctx, observerKey{}, obs)
}

// Stats describes what the compiler made of a program.
type Stats struct {
	GraphNodes  int   // nodes in the user's graph
	NodesBefore int   // nodes the outputs and updates need, before optimisation
	NodesAfter  int   // nodes after optimisation (fused groups count once)
	Kernels     int   // kernel launches per Run
	Copies      int   // copy steps per Run
	Views       int   // reshapes that run as views (no copy)
	InPlace     int   // kernels that overwrite a dying operand
	FusedGroups []int // ops in each fused kernel (a trailing reduction counts)
	ArenaBytes  int64 // the arena every Run works in
	PeakBytes   int64 // the most arena bytes live at once
	Passes      []PassTiming
}

// Stats returns the compiler's statistics for the program.
func (p *Program) Stats() Stats {
	if p.usable("Stats") != nil {
		return Stats{}
	}
	s := Stats{
		GraphNodes: p.nodes0, ArenaBytes: p.plan.ArenaBytes, PeakBytes: p.plan.PeakBytes,
		InPlace: p.plan.InPlace, NodesAfter: p.nodes1, Passes: p.Passes(),
	}
	for _, t := range p.timings {
		if t.Name == "prune" {
			s.NodesBefore = t.NodesAfter
		}
	}
	for _, st := range p.plan.Steps {
		switch st.Kind {
		case KernelStep:
			s.Kernels++
			if a, ok := st.Node.Attr().(*opdef.FusedAttr); ok {
				s.FusedGroups = append(s.FusedGroups, len(a.OpNames()))
			}
		case CopyStep:
			s.Copies++
		case AliasStep:
			s.Views++
		}
	}
	return s
}

func (s Stats) String() string {
	return fmt.Sprintf("%d graph nodes, %d needed, %d after optimisation; %d kernels (%d fused: %v), %d copies, %d views, %d in place; arena %d bytes, peak %d bytes",
		s.GraphNodes, s.NodesBefore, s.NodesAfter, s.Kernels, len(s.FusedGroups), s.FusedGroups, s.Copies, s.Views, s.InPlace, s.ArenaBytes, s.PeakBytes)
}

// errBadValue is Write's error for a value of the wrong type: its message
// says "bad value" (Write takes a value, not a feed), and it is ErrFeed
// for errors.Is, as it always was.
var errBadValue error = badValue{}

type badValue struct{}

func (badValue) Error() string { return "bad value" }
func (badValue) Unwrap() error { return ErrFeed }

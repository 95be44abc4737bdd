package exec

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

// Option configures Compile.
type Option func(*config) error

type config struct {
	updates      []update
	ignoreUnused bool
	precision    tensor.DType
	fastMath     bool
	rec          *profile.Recorder
	verify       bool
	disabled     map[string]bool
	share        *Program
	dumpAfter    map[string]bool
	memLimit     int64
	numerics     bool
	comm         dist.Communicator
}

// WithCommunicator gives the program the communicator its collective ops
// (ops.AllReduce, AllGather, ReduceScatter, Broadcast, Reduce) run on:
// an MPI communicator (package dist/mpi), or dist.Local{} for one
// process. A graph with collectives compiled without one is an error, and
// so is a collective built for another number of ranks than c.Size().
// A graph whose collectives are all built for one rank needs none (it
// gets dist.Local{}).
// Every rank must compile the same graph: the first Run checks it (the
// ranks compare a fingerprint of their plans) and fails with an error
// wrapping dist.ErrMismatch where they differ.
func WithCommunicator(c dist.Communicator) Option {
	return func(cfg *config) error {
		if c == nil {
			return fmt.Errorf("exec: WithCommunicator: nil communicator")
		}
		cfg.comm = c
		return nil
	}
}

// collectivesEarly returns nodes (a topological order) with every
// collective op, and the data-movement nodes that feed only it (the
// Reshapes and Concat of a gradient bucket), moved up to just after the
// last of its operands: a collective starts as soon as its operands are
// ready (data-parallel training's buckets, whose AllReduces are built
// after the whole backward pass, each run right after their gradients),
// and every rank computes the same order. Other nodes keep their order.
func collectivesEarly(nodes []*graph.Node) []*graph.Node {
	movable := map[*graph.Node]bool{}
	pos := make(map[*graph.Node]int, len(nodes))
	for i, n := range nodes {
		pos[n] = i
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		d := opdef.Lookup(n.Op())
		if d == nil || n.Op().IsLeaf() {
			continue
		}
		if d.Kind == opdef.Collective {
			movable[n] = true
		}
		if !movable[n] {
			continue
		}
		for _, x := range n.Inputs() {
			if dx := opdef.Lookup(x.Op()); dx != nil && dx.Kind == opdef.Movement && !x.Op().IsLeaf() && onlyFeeds(x, movable, nodes[pos[x]+1:]) {
				movable[x] = true
			}
		}
	}
	if len(movable) == 0 {
		return nodes
	}
	// key: (anchor, depth). A node that stays: (its index, 0); a moved
	// node: its latest operand's key with depth + 1.
	type key struct{ a, d, i int }
	keys := make(map[*graph.Node]key, len(nodes))
	for i, n := range nodes {
		k := key{i, 0, i}
		if movable[n] {
			k = key{-1, 0, i}
			for _, x := range n.Inputs() {
				if kx := keys[x]; kx.a > k.a || kx.a == k.a && kx.d+1 > k.d {
					k.a, k.d = kx.a, kx.d+1
				}
			}
		}
		keys[n] = k
	}
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(x, y *graph.Node) int {
		a, b := keys[x], keys[y]
		if a.a != b.a {
			return a.a - b.a
		}
		if a.d != b.d {
			return a.d - b.d
		}
		return a.i - b.i
	})
	return out
}

// onlyFeeds reports whether every consumer of x among later is movable.
func onlyFeeds(x *graph.Node, movable map[*graph.Node]bool, later []*graph.Node) bool {
	for _, n := range later {
		if !movable[n] && slices.Contains(n.Inputs(), x) {
			return false
		}
	}
	return true
}

// checkCollectives checks the collective ops of the optimised graph
// against the communicator.
func (c *compilation) checkCollectives() error {
	for _, n := range c.g.Nodes() {
		d := opdef.Lookup(n.Op())
		if d == nil || d.Kind != opdef.Collective {
			continue
		}
		c.collectives = true
		a, _ := n.Attr().(opdef.CollectiveAttr)
		if c.cfg.comm == nil && a.Size == 1 {
			// Over one rank a collective is the identity: no
			// communicator is needed (dist.Local serves it).
			c.cfg.comm = dist.Local{}
		}
		if c.cfg.comm == nil {
			return fmt.Errorf("exec: Compile: %s (built at %s) is a collective op, and the program has no communicator: compile with exec.WithCommunicator (dist/mpi's, or dist.Local{} for one process)", n.Op(), n.Site())
		}
		if a.Size != c.cfg.comm.Size() {
			return fmt.Errorf("exec: Compile: %s (built at %s) is built for %d ranks, and the communicator (%s) has %d", n.Op(), n.Site(), a.Size, c.cfg.comm.Name(), c.cfg.comm.Size())
		}
	}
	return nil
}

type update struct{ w, next *graph.Node }

// Update makes every Run replace variable w's value with next's value
// (computed from the values before the Run). next must have w's dtype and
// shape.
func Update(w, next *graph.Node) Option {
	return func(c *config) error {
		c.updates = append(c.updates, update{w, next})
		return nil
	}
}

// DisablePasses turns off optional passes by name (see Passes): for tests,
// benchmarks, and users chasing a numerical difference. Naming an unknown
// or a required pass is an error.
func DisablePasses(names ...string) Option {
	return func(c *config) error {
		for _, name := range names {
			found := false
			for _, p := range passes {
				if p.Name == name {
					found = true
					if p.Required {
						return fmt.Errorf("exec: DisablePasses: pass %q is required", name)
					}
				}
			}
			if !found {
				return fmt.Errorf("exec: DisablePasses: no pass named %q (passes: %s)", name, passNames())
			}
			c.disabled[name] = true
		}
		return nil
	}
}

func passNames() string {
	var names []string
	for _, p := range passes {
		names = append(names, p.Name)
	}
	return strings.Join(names, ", ")
}

// Precision compiles a graph built in one float precision (float32 or
// float64) to compute in dt instead: float inputs are converted on entry,
// constants and variables are held in dt, and outputs are converted back
// to the dtypes the graph declares. Program.Read and Write convert too.
func Precision(dt tensor.DType) Option {
	return func(c *config) error {
		if dt != tensor.Float32 && dt != tensor.Float64 {
			return fmt.Errorf("exec: Precision(%v): only float32 and float64 are compute precisions", dt)
		}
		c.precision = dt
		return nil
	}
}

// FastMath lets the simplifier apply rewrites that are exact only inside
// an input domain: exp(log x) -> x (x > 0) and log(exp x) -> x (exp(x)
// finite and nonzero). Without it they are not applied.
func FastMath() Option {
	return func(c *config) error { c.fastMath = true; return nil }
}

// IgnoreUnusedFeeds makes Run accept (and ignore) feeds for Inputs of the
// program's graph that the program does not use, so that one Feeds map can
// serve several programs. By default such a feed is an error, as a guard
// against feeding the wrong program.
func IgnoreUnusedFeeds() Option {
	return func(c *config) error { c.ignoreUnused = true; return nil }
}

// VerifyEachPass runs graph.Verify after every pass (tests turn it on; so
// does the environment variable LOOM_VERIFY=1).
func VerifyEachPass() Option {
	return func(c *config) error { c.verify = true; return nil }
}

// ShareVariables makes the new Program use p's variable storage instead of
// its own: both see every update the other makes (an evaluation program
// next to a training program). p must be compiled for the same backend
// from the same graph.
func ShareVariables(p *Program) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("exec: ShareVariables(nil)")
		}
		c.share = p
		return nil
	}
}

// MemoryLimit makes Compile refuse a program whose memory on the device
// (its arena, constants and variables, and any single value) would exceed
// bytes. Without it the limit is the memory the backend's Device reports.
// Refusing at Compile, naming the node and its call site, is what keeps a
// graph of absurd sizes from ending the process when it runs.
func MemoryLimit(bytes int64) Option {
	return func(c *config) error {
		if bytes <= 0 {
			return fmt.Errorf("exec: MemoryLimit(%d): the limit must be positive", bytes)
		}
		c.memLimit = bytes
		return nil
	}
}

// CheckNumerics makes every Run check each value the program computes for
// NaN and Inf, and fail with an error wrapping ErrNonFinite that names the
// first kernel (in run order) whose result is not finite although all its
// operands were: its op, its type and the user's call site, as PyTorch's
// anomaly mode and Gorgonia's NaN watch do. Values that are not finite
// because an operand was (a NaN in a feed, a -Inf mask constant) are not
// errors. A failing Run does not update the variables.
//
// It is a debugging aid: the program then runs every op as its own kernel
// (constant folding and fusion are off, so the op named is exactly the one
// built) and adds a small reduction after each float kernel. Without the
// option nothing of it is compiled in, so it costs nothing.
func CheckNumerics() Option {
	return func(c *config) error { c.numerics = true; return nil }
}

// Pass is one stage of the compile pipeline.
type Pass struct {
	Name string
	Doc  string
	// Required passes cannot be disabled: the program needs them to run.
	Required bool
	run      func(*compilation) error
}

// passes is the pipeline, in order. Its order must satisfy constraints.
// (It is filled in init: constfold compiles programs itself, which makes
// a package-level initialiser circular.)
var passes []Pass

func init() { passes = pipeline() }

func pipeline() []Pass {
	return []Pass{
		{"prune", "copy only what the outputs and updates need into a new graph", true, prune},
		{"precision", "convert float computation to the precision asked for with Precision", false, precision},
		{"constfold", "evaluate nodes whose operands are all constants, with the ops' reference evaluators", false, constfold},
		{"simplify", "algebraic rewrites, each one line of data (x*1, --x, transpose of transpose, ...)", false, simplify},
		{"cse", "merge nodes with the same op, attribute and operands", false, cse},
		{"loopcse", "compute a loop and its extension (a gradient's forward loop saving residuals) once", false, loopcse},
		{"hoist", "move loop-invariant nodes of While and Scan bodies out of the loop", false, hoist},
		{"fuse", "group elementwise ops (and a trailing reduction) into single kernels", false, fuse},
		{"numerics", "with CheckNumerics only: add a NaN/Inf check of every float kernel's result", true, numerics},
		{"schedule", "order the steps and give every value a home", true, schedule},
		{"memplan", "liveness analysis, arena offsets with buffer reuse and in-place updates", true, memplan},
	}
}

// Constraint says pass Before must run before pass After, and why.
type Constraint struct {
	Before, After, Reason string
}

// Constraints returns the ordering rules of the pipeline, as data (a test
// checks the pipeline against them): a copy.
func Constraints() []Constraint { return slices.Clone(constraints) }

// constraints are the ordering rules of the pipeline.
var constraints = []Constraint{
	{"prune", "precision", "the program's inputs and variables are fixed by what the outputs need, before any rewrite"},
	{"precision", "simplify", "constants converted to the compute precision can then be simplified and folded"},
	{"precision", "constfold", "folding must produce constants in the compute precision"},
	{"constfold", "simplify", "folding exposes simplifications: x*(2-1) folds to x*1, which simplifies to x"},
	{"constfold", "cse", "folded constants with equal values are merged"},
	{"simplify", "cse", "rewritten nodes become identical and are merged"},
	{"cse", "fuse", "fusion groups single-use chains; merging first makes uses exact"},
	{"cse", "loopcse", "a loop and its extension have the same operands once equal nodes are merged"},
	{"loopcse", "hoist", "hoisting rebuilds loops with new attributes, which hides the Extends link"},
	{"hoist", "fuse", "hoisted nodes join the outer graph's fusion groups"},
	{"precision", "hoist", "the bodies are converted before nodes move out of them"},
	{"fuse", "schedule", "the schedule orders kernels, fused groups included"},
	{"prune", "schedule", "the schedule covers exactly the nodes the outputs need"},
	{"fuse", "numerics", "the checks read the results of the kernels that will run"},
	{"numerics", "schedule", "the checks are outputs the schedule places"},
	{"schedule", "memplan", "liveness is computed over the step order"},
}

// Passes returns the pipeline's passes in order: copies, so changing them
// changes no compilation (a Pass's code is unexported; Compile runs the
// pipeline's own passes, and DisablePasses reads their names).
func Passes() []Pass { return slices.Clone(passes) }

// PassTiming records one pass of one compilation.
type PassTiming struct {
	Name          string
	Start, End    time.Time
	NodesBefore   int
	NodesAfter    int
	StepsAfter    int
	ArenaAfter    int64
	Skipped       bool
	VerifiedAfter bool
}

// compilation is the state the passes share.
type compilation struct {
	cfg     *config
	be      Backend
	user    *graph.Graph
	outs    []*graph.Node // user output nodes
	updates []update      // user nodes

	g       *graph.Graph  // the graph being compiled
	gOuts   []*graph.Node // outputs in g
	gNext   []*graph.Node // update values in g, parallel to updates
	origin  map[*graph.Node]*graph.Node
	vars    []*graph.Node // Variables in g, in plan order
	inputs  []*graph.Node // Inputs in g, in plan order
	plan    *Plan
	timings []PassTiming
	nodes0  int
	checks  []checkValue // CheckNumerics: checked nodes, their check outputs follow gOuts
	body    bool         // compiling a control-flow body (compileBody)
	// collectives: the graph (or a body) has a collective op; the first
	// Run checks that every rank compiled the same plan.
	collectives bool
}

// Compile optimises and plans the computation of outputs (and of the
// variable updates given as options) for backend be, and lowers it.
// Build errors of the graph are returned here; so are unsupported ops.
func Compile(be Backend, outputs []*graph.Node, opts ...Option) (*Program, error) {
	if be == nil {
		return nil, fmt.Errorf("exec: Compile: nil backend")
	}
	cfg := &config{disabled: map[string]bool{}, dumpAfter: map[string]bool{}}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	if os.Getenv("LOOM_VERIFY") == "1" {
		cfg.verify = true
	}
	if !cfg.numerics {
		cfg.disabled["numerics"] = true
	} else {
		// Every op its own kernel, computed at run time, so that the kernel
		// a check blames is one op the user built.
		cfg.disabled["constfold"] = true
		cfg.disabled["fuse"] = true
	}
	for _, name := range strings.Split(os.Getenv("LOOM_DUMP"), ",") {
		if name = strings.TrimSpace(name); name != "" {
			cfg.dumpAfter[name] = true
		}
	}
	c := &compilation{cfg: cfg, be: be, outs: outputs, updates: cfg.updates}
	if err := c.check(); err != nil {
		return nil, err
	}
	if err := c.runPasses(); err != nil {
		return nil, err
	}
	recordCompile(cfg.rec, be, c.timings)
	return newProgram(c)
}

// check validates the outputs and updates before any pass runs.
func (c *compilation) check() error {
	if len(c.outs) == 0 && len(c.updates) == 0 {
		return fmt.Errorf("exec: Compile: %w: no outputs and no updates to compute", graph.ErrInvalid)
	}
	var nodes []*graph.Node
	for i, n := range c.outs {
		if n == nil {
			return fmt.Errorf("exec: Compile: %w: output %d is nil", graph.ErrInvalid, i)
		}
		nodes = append(nodes, n)
	}
	for i, u := range c.updates {
		if u.w == nil || u.next == nil {
			return fmt.Errorf("exec: Compile: %w: Update %d has a nil node", graph.ErrInvalid, i)
		}
		nodes = append(nodes, u.w, u.next)
	}
	for _, n := range nodes {
		if g := n.Graph(); g != nil && g.Err() != nil {
			return fmt.Errorf("exec: Compile: the graph has a build error: %w", g.Err())
		}
		if err := n.Err(); err != nil {
			return fmt.Errorf("exec: Compile: %w", err)
		}
	}
	c.user = nodes[0].Graph()
	for i, n := range nodes {
		if n.Graph() != c.user {
			return fmt.Errorf("exec: Compile: %w: node %d (%s) belongs to another graph than the first output", graph.ErrInvalid, i, n)
		}
	}
	seen := map[*graph.Node]bool{}
	for _, u := range c.updates {
		if u.w.Op() != graph.OpVariable {
			return fmt.Errorf("exec: Compile: Update(%s, ...): %w: the target is %s, not a Variable", u.w, graph.ErrInvalid, withArticle(u.w.Op().String()))
		}
		if seen[u.w] {
			return fmt.Errorf("exec: Compile: Update(%s, ...): %w: the variable is updated twice", u.w, graph.ErrInvalid)
		}
		seen[u.w] = true
		if u.next.DType() != u.w.DType() || !u.next.Shape().Equal(u.w.Shape()) {
			kind := graph.ErrShape
			if u.next.DType() != u.w.DType() {
				kind = graph.ErrDType
			}
			return fmt.Errorf("exec: Compile: Update(%q %s, %s built at %s): %w: the new value must have the variable's type (use ops.Cast or ops.BroadcastTo)",
				u.w.Name(), u.w.Type(), u.next.Type(), u.next.Site(), kind)
		}
	}
	if c.cfg.share != nil {
		if err := c.cfg.share.usable("ShareVariables"); err != nil {
			return fmt.Errorf("exec: Compile: %w", err)
		}
		c.cfg.share.life.Lock()
		closed := c.cfg.share.closed
		c.cfg.share.life.Unlock()
		if closed {
			return fmt.Errorf("exec: Compile: ShareVariables: %w: the program was closed", ErrClosed)
		}
		if c.cfg.share.be != c.be {
			return fmt.Errorf("exec: Compile: ShareVariables: %w: the program was compiled for another backend", graph.ErrInvalid)
		}
		if c.cfg.share.store.graph != c.user {
			return fmt.Errorf("exec: Compile: ShareVariables: %w: the program was compiled from another graph", graph.ErrInvalid)
		}
	}
	return nil
}

func (c *compilation) runPasses() error {
	c.nodes0 = c.user.Len()
	for _, p := range passes {
		t := PassTiming{Name: p.Name, Start: time.Now(), NodesBefore: c.nodeCount()}
		if c.cfg.disabled[p.Name] {
			t.Skipped = true
			t.End = t.Start
			t.NodesAfter = t.NodesBefore
			c.timings = append(c.timings, t)
			continue
		}
		prefix := "exec: Compile: "
		if c.body {
			prefix = ""
		}
		if err := runPass(p, c); err != nil {
			return fmt.Errorf("%spass %s: %w", prefix, p.Name, err)
		}
		if c.g != nil && c.g.Err() != nil {
			return fmt.Errorf("%spass %s left a graph error (a bug in loom): %w", prefix, p.Name, c.g.Err())
		}
		t.End = time.Now()
		t.NodesAfter = c.nodeCount()
		if c.plan != nil {
			t.StepsAfter = len(c.plan.Steps)
			t.ArenaAfter = c.plan.ArenaBytes
		}
		if c.cfg.verify && c.g != nil {
			if err := c.verifyGraph(); err != nil {
				return fmt.Errorf("%safter pass %s: %w", prefix, p.Name, err)
			}
			if c.plan != nil && p.Name == "memplan" {
				if err := c.plan.checkArena(); err != nil {
					return fmt.Errorf("%safter pass %s: %w", prefix, p.Name, err)
				}
			}
			t.VerifiedAfter = true
		}
		if c.cfg.dumpAfter[p.Name] {
			fmt.Fprintf(os.Stderr, "LOOM_DUMP after %s:\n%s", p.Name, graph.Format(c.g))
			if c.plan != nil && p.Name != "prune" {
				fmt.Fprint(os.Stderr, c.plan.Format())
			}
		}
		c.timings = append(c.timings, t)
	}
	return nil
}

// runPass runs one pass, turning a panic (a bug in loom) into an error
// that names the pass.
func runPass(p Pass, c *compilation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error (a bug in loom, please report it): %v", r)
		}
	}()
	return p.run(c)
}

func (c *compilation) nodeCount() int {
	if c.g == nil {
		return c.user.Len()
	}
	return c.g.Len()
}

// prune copies the ancestors of the outputs and update values, and the
// updated Variables, into a fresh graph.
func prune(c *compilation) error {
	roots := append([]*graph.Node(nil), c.outs...)
	for _, u := range c.updates {
		roots = append(roots, u.w, u.next)
	}
	g := graph.New()
	remap := map[*graph.Node]*graph.Node{}
	c.origin = map[*graph.Node]*graph.Node{}
	for _, n := range graph.Ancestors(roots...) {
		ins := make([]*graph.Node, len(n.Inputs()))
		for i, in := range n.Inputs() {
			ins[i] = remap[in]
		}
		m := opdef.Rebuild(g, n, ins)
		if !m.Valid() {
			return m.Err()
		}
		remap[n] = m
		if n.Op() == graph.OpInput || n.Op() == graph.OpVariable {
			c.origin[m] = n
		}
	}
	c.g = g
	c.gOuts = make([]*graph.Node, len(c.outs))
	for i, n := range c.outs {
		c.gOuts[i] = remap[n]
	}
	c.gNext = make([]*graph.Node, len(c.updates))
	for i, u := range c.updates {
		c.gNext[i] = remap[u.next]
	}
	return nil
}

// schedule orders the steps (the graph's node order is topological) and
// gives every value a home: feeds, variables and constants stay where they
// are; a node that is an output or a variable's next value is written
// straight there; every other result goes to the arena. Extra destinations
// of a value get copy steps.
func schedule(c *compilation) error {
	if err := c.checkCollectives(); err != nil {
		return err
	}
	p := &Plan{Graph: c.g, Comm: c.cfg.comm}
	home := map[*graph.Node]int{}
	addValue := func(v Value) int {
		v.Alias = -1
		p.Values = append(p.Values, v)
		return len(p.Values) - 1
	}
	sizes := map[*graph.Node]int64{}
	limit := c.deviceLimit()
	var tooBig error
	bytesOf := func(n *graph.Node) int64 {
		if b, ok := sizes[n]; ok {
			return b
		}
		b, err := c.valueBytes(n, limit)
		if err != nil && tooBig == nil {
			tooBig = err
		}
		sizes[n] = b
		return b
	}

	for _, n := range c.g.Nodes() {
		switch n.Op() {
		case graph.OpInput:
			home[n] = addValue(Value{Node: n, Storage: InInput, Index: len(p.Inputs), Bytes: bytesOf(n)})
			p.Inputs = append(p.Inputs, home[n])
			p.InputNodes = append(p.InputNodes, c.origin[n])
			c.inputs = append(c.inputs, n)
		case graph.OpVariable:
			home[n] = addValue(Value{Node: n, Storage: InVar, Index: len(p.Vars), Bytes: bytesOf(n)})
			p.Vars = append(p.Vars, VarPlan{Node: n, User: c.origin[n], Value: home[n], Update: -1})
			c.vars = append(c.vars, n)
		case graph.OpConst:
			home[n] = addValue(Value{Node: n, Storage: InConst, Index: len(p.Consts), Bytes: bytesOf(n)})
			p.Consts = append(p.Consts, home[n])
		}
	}
	varIndex := map[*graph.Node]int{}
	for i, v := range p.Vars {
		varIndex[v.User] = i
	}
	// Destinations: for each node, the list of (storage, index) it must
	// end up in besides its home.
	type dest struct {
		s   Storage
		idx int
	}
	dests := map[*graph.Node][]dest{}
	var order []*graph.Node
	addDest := func(n *graph.Node, d dest) {
		if _, ok := dests[n]; !ok {
			order = append(order, n)
		}
		dests[n] = append(dests[n], d)
	}
	for i, u := range c.updates {
		k := varIndex[u.w]
		next := c.gNext[i]
		if next == p.Vars[k].Node {
			continue // w <- w: nothing to do
		}
		addDest(next, dest{InNext, k})
	}
	for i, n := range c.gOuts {
		addDest(n, dest{InOutput, i})
	}
	p.Outputs = make([]int, len(c.gOuts))
	var pending []Step // copies of leaves, run first
	place := func(n *graph.Node, d dest) int {
		v := addValue(Value{Node: n, Storage: d.s, Index: d.idx, Bytes: bytesOf(n)})
		if d.s == InOutput {
			p.Outputs[d.idx] = v
		} else {
			p.Vars[d.idx].Update = v
		}
		return v
	}
	// Kernel nodes: home is the first destination, or the arena.
	var steps []Step
	for _, n := range collectivesEarly(c.g.Nodes()) {
		if n.Op().IsLeaf() {
			continue
		}
		ds := dests[n]
		in := make([]int, len(n.Inputs()))
		for i, x := range n.Inputs() {
			in[i] = home[x]
		}
		kind := KernelStep
		var out int
		switch {
		case len(ds) > 0:
			out = place(n, ds[0])
			ds = ds[1:]
		case n.Op() == ops.OpReshape:
			// A reshape is a view of its operand's bytes.
			r := p.Values[in[0]]
			out = addValue(Value{Node: n, Storage: r.Storage, Index: r.Index, Bytes: bytesOf(n)})
			p.Values[out].Alias = in[0]
			kind = AliasStep
		case n.Op() == ops.OpTupleGet:
			// A result of a control-flow op is a view of its tuple.
			r := p.Values[in[0]]
			out = addValue(Value{Node: n, Storage: r.Storage, Index: r.Index, Bytes: bytesOf(n)})
			p.Values[out].Alias = in[0]
			p.Values[out].ViewOffset = n.Attr().(opdef.TupleAttr).Offset
			kind = AliasStep
		default:
			out = addValue(Value{Node: n, Storage: InArena, Bytes: bytesOf(n)})
		}
		home[n] = out
		steps = append(steps, Step{Kind: kind, Node: n, In: in, Out: out})
		for _, d := range ds {
			steps = append(steps, Step{Kind: CopyStep, Node: n, In: []int{out}, Out: place(n, d)})
		}
	}
	for _, n := range order {
		if !n.Op().IsLeaf() {
			continue
		}
		for _, d := range dests[n] {
			pending = append(pending, Step{Kind: CopyStep, Node: n, In: []int{home[n]}, Out: place(n, d)})
		}
	}
	if tooBig != nil {
		return tooBig
	}
	p.Steps = append(pending, steps...)
	for _, s := range p.Steps {
		if s.Kind != KernelStep {
			continue
		}
		if err := c.be.Supports(s.Node); err != nil {
			return fmt.Errorf("%s: %w", s.Node.Site(), err)
		}
		if isControl(s.Node) {
			bodies, err := c.compileBodies(s.Node)
			if err != nil {
				return err
			}
			if p.Bodies == nil {
				p.Bodies = map[*graph.Node][]*BodyPlan{}
			}
			p.Bodies[s.Node] = bodies
		}
	}
	c.plan = p
	return nil
}

// memplan computes liveness and assigns arena offsets, then checks that
// the program fits in the device's memory.
func memplan(c *compilation) error {
	c.plan.liveness()
	c.plan.assignArena()
	return c.checkTotal()
}

// withArticle puts "a" or "an" before a name for a message: "an Input",
// "a Const".
func withArticle(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

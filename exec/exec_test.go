package exec_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func cpuBackend(t *testing.T) exec.Backend {
	t.Helper()
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func f32(t *testing.T, vals []float32, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestOpen(t *testing.T) {
	be, err := exec.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	be.Close()
	if be.Name() != "cpu" || be.Device().Kind != exec.CPU || be.Device().Processors < 1 {
		t.Errorf("device %+v", be.Device())
	}
	_, err = exec.Open("tpu")
	if !errors.Is(err, exec.ErrUnknownDevice) || !strings.Contains(err.Error(), "registered backends: cpu") {
		t.Errorf("Open(tpu) = %v", err)
	}
	for _, name := range []string{"cuda", "cuda:0", "cuda:3"} {
		if _, err := exec.Open(name); !errors.Is(err, exec.ErrUnavailable) {
			t.Errorf("Open(%s) = %v, want ErrUnavailable", name, err)
		}
	}
	if _, err := exec.Open("cpu:1"); !errors.Is(err, exec.ErrUnavailable) {
		t.Errorf("Open(cpu:1) = %v", err)
	}
	if _, err := exec.Open("cpu:x"); !errors.Is(err, exec.ErrUnknownDevice) {
		t.Errorf("Open(cpu:x) = %v", err)
	}
	if _, err := exec.Open(""); err == nil {
		t.Errorf("Open(\"\") succeeded")
	}
	devs := exec.Devices()
	if len(devs) == 0 || devs[0].Name != "cpu" {
		t.Errorf("Devices() = %v", devs)
	}
	t.Setenv("LOOM_DEVICE", "cpu")
	if be, err := exec.Default(); err != nil || be.Name() != "cpu" {
		t.Errorf("Default() = %v, %v", be, err)
	} else {
		be.Close()
	}
	t.Setenv("LOOM_DEVICE", "nope")
	if _, err := exec.Default(); err == nil {
		t.Errorf("Default with LOOM_DEVICE=nope succeeded")
	}
	if err := exec.Register("cpu", nil); err == nil {
		t.Errorf("registering cpu twice succeeded")
	}
}

func TestCompileErrors(t *testing.T) {
	be := cpuBackend(t)
	if _, err := exec.Compile(be, nil); err == nil || !strings.Contains(err.Error(), "no outputs") {
		t.Errorf("Compile with no outputs: %v", err)
	}
	if _, err := exec.Compile(be, []*graph.Node{nil}); err == nil || !strings.Contains(err.Error(), "output 0 is nil") {
		t.Errorf("Compile with a nil output: %v", err)
	}
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	good := ops.Exp(x)
	ops.MatMul(x, x) // fails: inner dimensions
	_, err := exec.Compile(be, []*graph.Node{good})
	if err == nil || !strings.Contains(err.Error(), "MatMul(f32[2,3], f32[2,3]): inner dimensions 3 and 2 differ") || !errors.Is(err, graph.ErrShape) {
		t.Errorf("Compile of a failed graph: %v", err)
	}
	g1, g2 := graph.New(), graph.New()
	a, b := g1.Input("a", tensor.Float32, 1), g2.Input("b", tensor.Float32, 1)
	if _, err := exec.Compile(be, []*graph.Node{a, b}); err == nil || !strings.Contains(err.Error(), "another graph") {
		t.Errorf("Compile across graphs: %v", err)
	}
	h := graph.New()
	w := h.Variable("w", tensor.Zeros(tensor.Float32, 3))
	y := h.Input("y", tensor.Float32, 3)
	for _, c := range []struct {
		name string
		opts []exec.Option
		want string
	}{
		{"not-a-variable", []exec.Option{exec.Update(y, y)}, "not a Variable"},
		{"wrong-type", []exec.Option{exec.Update(w, ops.Sum(w))}, "must have the variable's type"},
		{"twice", []exec.Option{exec.Update(w, y), exec.Update(w, y)}, "updated twice"},
		{"nil", []exec.Option{exec.Update(w, nil)}, "nil node"},
	} {
		if _, err := exec.Compile(be, []*graph.Node{y}, c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestPassOrder enforces the ordering constraints, as data, on the
// declared pipeline.
func TestPassOrder(t *testing.T) {
	pos := map[string]int{}
	for i, p := range exec.Passes() {
		pos[p.Name] = i
	}
	for _, c := range exec.Constraints() {
		b, ok1 := pos[c.Before]
		a, ok2 := pos[c.After]
		if !ok1 || !ok2 {
			t.Errorf("constraint %v names a pass that does not exist", c)
			continue
		}
		if b >= a {
			t.Errorf("pass %s must run before %s: %s", c.Before, c.After, c.Reason)
		}
		if c.Reason == "" {
			t.Errorf("constraint %s < %s has no reason", c.Before, c.After)
		}
	}
}

// TestPipelineDataIsCopies: changing what Rules, Constraints and Passes
// return changes neither their next answers nor a compilation.
func TestPipelineDataIsCopies(t *testing.T) {
	rules, cons, passes := exec.Rules(), exec.Constraints(), exec.Passes()
	n, first, firstCons, firstPass := len(rules), rules[0].Name, cons[0], passes[0].Name
	for i := range rules {
		rules[i].Apply = func(*graph.Node, []*graph.Node) *graph.Node { panic("a caller's rule ran") }
	}
	rules[0].Name, cons[0].Before, passes[0].Name, passes[0].Required = "changed", "changed", "changed", false
	if r := exec.Rules(); len(r) != n || r[0].Name != first {
		t.Errorf("Rules() after changing a copy: %d rules, the first %q; want %d, %q", len(r), r[0].Name, n, first)
	}
	if c := exec.Constraints(); c[0] != firstCons {
		t.Errorf("Constraints()[0] after changing a copy: %v, want %v", c[0], firstCons)
	}
	if p := exec.Passes(); p[0].Name != firstPass || !p[0].Required {
		t.Errorf("Passes()[0] after changing a copy: %q required=%v, want %q required", p[0].Name, p[0].Required, firstPass)
	}
	if _, err := exec.Compile(cpuBackend(t), []*graph.Node{graph.New().Input("x", tensor.Float32, 1)}, exec.DisablePasses(firstPass)); err == nil {
		t.Errorf("DisablePasses(%q) accepted after a copy was marked not required", firstPass)
	}
	// The simplifier still runs its own rules: x*1 is rewritten to x (no
	// Mul kernel is left; hand: the output is x).
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	p, got := compileRun(t, cpuBackend(t), []*graph.Node{ops.Exp(ops.Mul(x, ops.Scalar(x, 1)))}, exec.Feeds{x: f32(t, []float32{0, 1}, 2)}, exec.DisablePasses("fuse"))
	if k := kernelOps(p); k[ops.OpMul] != 0 || k[ops.OpExp] != 1 {
		t.Errorf("kernels %v, want one Exp", k)
	}
	// hand: exp(0) = 1, exp(1) = e (the CPU's exp is within a few ulp)
	if err := exectest.Compare(got[0], f32(t, []float32{1, 2.7182817}, 2), 1e-6); err != nil {
		t.Error(err)
	}
}

// TestPruneAndArenaReuse: only what the outputs need runs, and a chain of
// ten ops reuses two buffers instead of holding ten.
func TestPruneAndArenaReuse(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1000)
	unused := g.Input("unused", tensor.Float32, 1000)
	ops.Exp(unused)
	y := x
	for i := 0; i < 10; i++ {
		y = ops.Tanh(y)
	}
	z := ops.Sum(y)
	fused, err := exec.Compile(be, []*graph.Node{z}, exec.VerifyEachPass())
	if err != nil {
		t.Fatal(err)
	}
	defer fused.Close()
	if n := len(fused.Plan().Steps); n != 1 {
		t.Errorf("%d steps with fusion, want 1 (the chain and its sum in one kernel):\n%s", n, fused.Plan().Format())
	}
	p, err := exec.Compile(be, []*graph.Node{z}, exec.VerifyEachPass(), exec.DisablePasses("fuse"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	plan := p.Plan()
	if n := len(plan.Steps); n != 11 {
		t.Errorf("%d steps, want 11 (10 Tanh and a Sum):\n%s", n, plan.Format())
	}
	if len(plan.Inputs) != 1 || plan.InputNodes[0] != x {
		t.Errorf("inputs %v, want only x", plan.InputNodes)
	}
	// Each Tanh overwrites its operand in place, so the chain needs one
	// [1000]f32 buffer (4000 bytes, rounded to 4032 = 63*64); the first
	// Tanh reads the feed, the other nine work in place (hand count).
	if plan.ArenaBytes != 4032 || plan.InPlace != 9 {
		t.Errorf("arena %d bytes with %d in-place steps, want 4032 and 9:\n%s", plan.ArenaBytes, plan.InPlace, plan.Format())
	}
	if plan.PeakBytes != 4000 {
		t.Errorf("peak %d bytes, want 4000", plan.PeakBytes)
	}
	// Without in-place reuse (a Sum reads each value and the next Tanh
	// cannot overwrite it), two buffers alternate: build y_i = Tanh(y_{i-1})
	// with every y_i also summed.
	g2 := graph.New()
	x2 := g2.Input("x", tensor.Float32, 1000)
	var parts []*graph.Node
	y2 := x2
	for i := 0; i < 4; i++ {
		y2 = ops.Tanh(y2)
		parts = append(parts, ops.Sum(y2))
	}
	p2, err := exec.Compile(be, []*graph.Node{ops.Concat(0, ops.Reshape(parts[0], 1), ops.Reshape(parts[1], 1), ops.Reshape(parts[2], 1), ops.Reshape(parts[3], 1))},
		exec.VerifyEachPass(), exec.DisablePasses("fuse"))
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if a := p2.Plan().ArenaBytes; a > 3*4032 {
		t.Errorf("arena %d bytes for a chain whose values are each read twice; want at most three buffers:\n%s", a, p2.Plan().Format())
	}
}

// TestUpdatesReadOldValues: all updates are computed from the values
// before the run, so w1 <- w2, w2 <- w1 swaps them.
func TestUpdatesReadOldValues(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	w1 := g.Variable("w1", f32(t, []float32{1}, 1))
	w2 := g.Variable("w2", f32(t, []float32{2}, 1))
	s := ops.Add(w1, w2)
	p, err := exec.Compile(be, []*graph.Node{s}, exec.Update(w1, w2), exec.Update(w2, w1))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i, want := range [][2]float64{{2, 1}, {1, 2}, {2, 1}} {
		out, err := p.Run(context.Background(), exec.Feeds{})
		if err != nil {
			t.Fatal(err)
		}
		if out[0].Float64(0) != 3 { // hand: 1+2 whatever the order
			t.Errorf("run %d: sum %v", i, out[0])
		}
		a, _ := p.Read(w1)
		b, _ := p.Read(w2)
		if a.Float64(0) != want[0] || b.Float64(0) != want[1] {
			t.Errorf("run %d: w1=%v w2=%v, want %v", i, a, b, want)
		}
	}
}

// TestShareVariables: an evaluation program sees the training program's
// updates.
func TestShareVariables(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	w := g.Variable("w", f32(t, []float32{0}, 1))
	train, err := exec.Compile(be, nil, exec.Update(w, ops.Add(w, ops.Scalar(w, 1))))
	if err != nil {
		t.Fatal(err)
	}
	defer train.Close()
	eval, err := exec.Compile(be, []*graph.Node{ops.Mul(w, ops.Scalar(w, 10))}, exec.ShareVariables(train))
	if err != nil {
		t.Fatal(err)
	}
	defer eval.Close()
	for i := 0; i < 3; i++ {
		if _, err := train.Run(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	out, err := eval.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Float64(0) != 30 { // hand: w = 3 after three runs, times 10
		t.Errorf("eval = %v, want 30", out[0])
	}
	h := graph.New()
	h.Variable("w", f32(t, []float32{0}, 1))
	if _, err := exec.Compile(be, []*graph.Node{h.Lookup("w")}, exec.ShareVariables(train)); err == nil {
		t.Errorf("sharing across graphs succeeded")
	}
}

// TestRunInto writes into the caller's tensors, rejects aliasing feeds,
// and allocates nothing in steady state.
func TestRunInto(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	y := ops.Mul(x, x)
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	xv := f32(t, []float32{1, 2, 3, 4}, 4)
	out := tensor.Zeros(tensor.Float32, 4)
	feeds := exec.Feeds{x: xv}
	ctx := context.Background()
	if err := p.RunInto(ctx, feeds, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if got := out.Float64s(); got[3] != 16 { // hand: 4*4
		t.Errorf("RunInto wrote %v", got)
	}
	if err := p.RunInto(ctx, feeds, []*tensor.Tensor{xv}); err == nil || !strings.Contains(err.Error(), "shares memory") {
		t.Errorf("aliasing output: %v", err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.RunInto(ctx, feeds, []*tensor.Tensor{out}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("RunInto allocates %v times per run", allocs)
	}
}

func TestDump(t *testing.T) {
	// LOOM_DUMP only prints; check that naming passes does not break
	// compilation.
	t.Setenv("LOOM_DUMP", "prune,memplan")
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	if _, err := exec.Compile(be, []*graph.Node{ops.Neg(x)}); err != nil {
		t.Fatal(err)
	}
}

// cancelAt cancels a context when step `at` has run.
type cancelAt struct {
	at     int
	cancel context.CancelFunc
	steps  int
}

func (c *cancelAt) Now() int64                           { return 0 }
func (c *cancelAt) Part(step, worker int, d, s, e int64) {}
func (c *cancelAt) Step(step int, start, end int64) {
	c.steps++
	if step == c.at {
		c.cancel()
	}
}

// TestCancelBetweenOps: a context cancelled while a Run is in progress
// stops it before the next op; the variables keep their old values and
// the program keeps working.
func TestCancelBetweenOps(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	w := g.Variable("w", f32(t, []float32{1, 2}, 2))
	y := ops.Exp(ops.Exp(ops.Exp(w)))
	p, err := exec.Compile(be, []*graph.Node{y}, exec.Update(w, ops.Neg(w)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	obs := &cancelAt{at: 0, cancel: cancel}
	_, err = p.Run(exec.WithObserver(ctx, obs), nil)
	if !errors.Is(err, context.Canceled) || obs.steps != 1 {
		t.Errorf("Run = %v after %d steps, want context.Canceled after 1", err, obs.steps)
	}
	wv, _ := p.Read(w)
	if wv.Float64(0) != 1 || wv.Float64(1) != 2 {
		t.Errorf("w changed by a cancelled run: %v", wv)
	}
	if _, err := p.Run(context.Background(), nil); err != nil {
		t.Errorf("run after a cancelled run: %v", err)
	}
	wv, _ = p.Read(w)
	if wv.Float64(0) != -1 { // hand: w <- -w once
		t.Errorf("w = %v after one good run, want [-1 -2]", wv)
	}
}

// TestIgnoreUnusedFeeds: with the option, a feed for an unused Input of
// the same graph is accepted; other extra feeds still fail.
func TestIgnoreUnusedFeeds(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1)
	u := g.Input("u", tensor.Float32, 1)
	p, err := exec.Compile(be, []*graph.Node{ops.Neg(x)}, exec.IgnoreUnusedFeeds())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	one := f32(t, []float32{1}, 1)
	if _, err := p.Run(context.Background(), exec.Feeds{x: one, u: one}); err != nil {
		t.Errorf("unused feed rejected: %v", err)
	}
	if _, err := p.Run(context.Background(), exec.Feeds{x: one, ops.Neg(x): one}); err == nil {
		t.Errorf("a feed for a non-Input was accepted")
	}
}

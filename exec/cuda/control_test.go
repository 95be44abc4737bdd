//go:build linux

package cuda

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// controlProgram builds the control-flow cases of TestControlFlow into
// one graph (one compilation): every op, with captures, data-dependent
// trip counts, a bound that stops a While, Scan forward, reversed and of
// length 0 with mixed-dtype carries and ys, and nested loops (a While in
// a Scan, a Scan in a While, a Cond in a Scan). It returns the outputs,
// their names, and the Inputs x f32[3,4], w f32[4], n i32[], p bool[].
func controlProgram(g *graph.Graph) (outs []*graph.Node, names []string, x, w, n, p *graph.Node) {
	x = g.Input("x", tensor.Float32, 3, 4)
	w = g.Input("w", tensor.Float32, 4)
	n = g.Input("n", tensor.Int32)
	p = g.Input("p", tensor.Bool)
	add := func(name string, ns ...*graph.Node) {
		for _, o := range ns {
			outs = append(outs, o)
			names = append(names, name)
		}
	}
	one := func(like *graph.Node) *graph.Node { return ops.Scalar(like, 1) }
	v0 := ops.Slice(x, ops.R(0, 1)) // f32[1,4]
	v0 = ops.Reshape(v0, 4)
	i0 := ops.Scalar(n, 0)

	// Cond, both branches (p and not p), capturing w; an int operand.
	for _, pr := range []*graph.Node{p, ops.Not(p)} {
		r := ops.Cond(pr,
			func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(xs[0], w), ops.Add(xs[1], one(xs[1]))}
			},
			func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(xs[0], w), ops.Mul(xs[1], ops.Scalar(xs[1], 3))}
			},
			x, n)
		add("cond", r...)
		// A TupleGet read by another kernel (a view of the tuple).
		add("cond view", ops.Add(r[0], one(r[0])))
	}

	// While: n trips (data-dependent), v = v/2 + w.
	wh := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[1], n) },
		func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 0.5)), w), ops.Add(c[1], one(c[1]))}
		}, v0, i0)
	add("while", wh...)
	// WhileMax: the bound (4) stops it before the condition (i < 100).
	wm := ops.WhileMax(4, func(c []*graph.Node) *graph.Node { return ops.Less(c[1], ops.Scalar(c[1], 100)) },
		func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(c[0], ops.Mul(c[0], w)), ops.Add(c[1], one(c[1]))}
		}, v0, i0)
	add("whilemax", wm...)

	// Scan over x's rows: h = tanh(h*w + x_t), a counter; ys h (f32) and
	// the counter (i32).
	step := func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(ops.Mul(c[0], w), xt[0]))
		k := ops.Add(c[1], one(c[1]))
		return []*graph.Node{h, k}, []*graph.Node{h, k}
	}
	c, ys := ops.Scan(step, []*graph.Node{v0, i0}, []*graph.Node{x}, -1)
	add("scan", append(c, ys...)...)
	c, ys = ops.Scan(step, []*graph.Node{v0, i0}, []*graph.Node{x}, -1, ops.ScanReverse())
	add("scan reverse", append(c, ys...)...)
	// Length 0: the initial carries, empty ys.
	c, ys = ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Mul(c[0], w)}, []*graph.Node{c[0]}
	}, []*graph.Node{v0}, nil, 0)
	add("scan empty", append(c, ys...)...)

	// A While in a Scan (the inner trip count depends on x_t) and a Cond
	// in the same body.
	c, ys = ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
		in := ops.While(func(d []*graph.Node) *graph.Node {
			return ops.Less(ops.Sum(ops.Abs(d[0])), ops.Scalar(ops.Sum(d[0]), 20))
		},
			func(d []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(ops.Mul(d[0], ops.Scalar(d[0], 2)), w)}
			},
			ops.Add(c[0], xt[0]))
		sel := ops.Cond(ops.Greater(ops.Sum(xt[0]), ops.Scalar(ops.Sum(xt[0]), 0)),
			func(a []*graph.Node) []*graph.Node { return []*graph.Node{ops.Neg(a[0])} },
			func(a []*graph.Node) []*graph.Node { return a },
			in[0])
		return []*graph.Node{ops.Mul(sel[0], ops.Scalar(sel[0], 0.01))}, []*graph.Node{in[0]}
	}, []*graph.Node{v0}, []*graph.Node{x}, -1)
	add("while in scan", append(c, ys...)...)
	// A Scan in a While: n trips of a cumulative sum over x's rows.
	wh = ops.While(func(d []*graph.Node) *graph.Node { return ops.Less(d[1], n) },
		func(d []*graph.Node) []*graph.Node {
			s, _ := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 0.5)), xt[0])}, nil
			}, []*graph.Node{d[0]}, []*graph.Node{x}, -1)
			return []*graph.Node{s[0], ops.Add(d[1], one(d[1]))}
		}, v0, i0)
	add("scan in while", wh...)
	return outs, names, x, w, n, p
}

// TestControlFlow runs Cond, While and Scan (nested too) on the device
// and compares every result with the reference evaluator (float64,
// exectest.Eval), for feeds that change the branch and the trip counts
// between runs of the same program.
func TestControlFlow(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	outs, names, x, w, n, p := controlProgram(g)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	prog, err := exec.Compile(b, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	feeds := []exec.Feeds{
		{x: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 1), w: exectest.Rand(tensor.Float32, tensor.Shape{4}, -1, 1, 2),
			n: tensor.Scalar(int32(5)), p: tensor.Scalar(true)},
		// No While trip, the other branch.
		{x: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -2, 2, 3), w: exectest.Rand(tensor.Float32, tensor.Shape{4}, -1, 1, 4),
			n: tensor.Scalar(int32(0)), p: tensor.Scalar(false)},
		// An odd trip count (the carries end in the spare buffers).
		{x: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 5), w: exectest.Rand(tensor.Float32, tensor.Shape{4}, -1, 1, 6),
			n: tensor.Scalar(int32(3)), p: tensor.Scalar(true)},
	}
	for fi, f := range feeds {
		want, err := exectest.Eval(outs, f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := prog.Run(context.Background(), f)
		if err != nil {
			t.Fatalf("feeds %d: %v", fi, err)
		}
		for i := range outs {
			if err := exectest.Compare(got[i], want[i], 1e-5); err != nil {
				t.Errorf("feeds %d, %s (output %d, %s): %v", fi, names[i], i, outs[i].Type(), err)
			}
		}
	}
}

// TestControlErrors: an index out of range inside a Scan body and inside
// a While body fails the Run naming the op, the body, its step and the
// iteration; a long While stops when the context is cancelled.
func TestControlErrors(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	idx := g.Input("idx", tensor.Int32, 4)
	tab := g.Input("tab", tensor.Float32, 3, 2)
	_, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return nil, []*graph.Node{ops.Gather(tab, ops.Reshape(xt[0], 1), 0)}
	}, nil, []*graph.Node{idx}, -1)
	lim := g.Input("lim", tensor.Int32)
	wh := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[0], lim) },
		func(c []*graph.Node) []*graph.Node {
			row := ops.Gather(tab, ops.Reshape(ops.Sub(c[0], ops.Scalar(c[0], 1)), 1), 0)
			next := ops.Add(ops.Add(c[0], ops.Scalar(c[0], 1)), ops.Cast(ops.Sum(ops.Mul(row, ops.Scalar(row, 0))), tensor.Int32))
			return []*graph.Node{next, ops.Add(c[1], ops.Sum(row))}
		}, ops.Scalar(lim, 1), ops.Scalar(tab, 0))
	// The Scan's step 2 reads row 5 of 3.
	checkErr := func(out *graph.Node, f exec.Feeds, wants ...string) {
		t.Helper()
		prog, err := exec.Compile(b, []*graph.Node{out})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		_, err = prog.Run(context.Background(), f)
		if err == nil {
			t.Fatalf("no error; want one containing %q", wants)
		}
		t.Log(err)
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	}
	tabv := exectest.Rand(tensor.Float32, tensor.Shape{3, 2}, -1, 1, 1)
	checkErr(ys[0], exec.Feeds{idx: exectest.Tensor(tensor.Int32, []float64{0, 2, 5, 1}), tab: tabv},
		"Scan", "its body, iteration 2", "Gather", "control_test.go")
	// The While's body reads row c-1 for c = 1, 2, ...: row 3 at iteration 3.
	checkErr(wh[1], exec.Feeds{lim: tensor.Scalar(int32(10)), tab: tabv},
		"While", "its body, iteration 3", "Gather")

	// Cancellation inside a While of 1e9 trips (from the fed lim = 0).
	cnt := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[0], ops.Scalar(c[0], 1e9)) },
		func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(c[0], ops.Scalar(c[0], 1))} },
		lim)
	prog, err := exec.Compile(b, cnt)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = prog.Run(ctx, exec.Feeds{lim: tensor.Scalar(int32(0))})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "iteration") {
		t.Errorf("cancelled While: %v, want a deadline error naming the iteration", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the cancelled While stopped after %v", d)
	}
}

// workOf counts the work items one pass over e's steps puts on the
// stream, the control-flow steps excepted (their bodies run per
// iteration), and returns the control-flow steps.
func workOf(e *executable) (n int64, ctl []*ctlStep) {
	for i, s := range e.plan.Steps {
		st := &e.steps[i]
		switch {
		case s.Kind == exec.AliasStep:
		case st.copy:
			if e.plan.Values[s.Out].Bytes > 0 {
				n++
			}
		case st.lib != nil:
			if c, ok := st.lib.(*ctlStep); ok {
				ctl = append(ctl, c)
			} else {
				n++
			}
		case st.mm != nil:
			n++
		default:
			n += int64(len(st.launches))
		}
	}
	return n, ctl
}

// TestControlLaunches counts what a Scan and a While put on the stream:
// an iteration enqueues its body's kernels and nothing else (the
// parameters and results are rebound, not copied), a While adds one
// read-back of the condition per check, and no carry is copied when a
// Scan's last step writes the tuple. A Run allocates nothing.
func TestControlLaunches(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := open(t)
	defer b.Close()
	const steps, trips = 50, 7
	g := graph.New()
	x := g.Input("x", tensor.Float32, steps, 64)
	w := g.Input("w", tensor.Float32, 64)
	n := g.Input("n", tensor.Int32)
	h0 := ops.Reshape(ops.Slice(x, ops.R(0, 1)), 64)
	c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(ops.Mul(c[0], w), xt[0]))
		return []*graph.Node{h, ops.Add(c[1], ops.Scalar(c[1], 1))}, []*graph.Node{ops.Mul(h, h)}
	}, []*graph.Node{h0, ops.Scalar(n, 0)}, []*graph.Node{x}, -1)
	wh := ops.While(func(d []*graph.Node) *graph.Node { return ops.Less(d[1], n) },
		func(d []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Tanh(ops.Add(d[0], w)), ops.Add(d[1], ops.Scalar(d[1], 1))}
		}, h0, ops.Scalar(n, 0))
	outs := []*graph.Node{c[0], c[1], ys[0], wh[0], wh[1]}
	prog, err := exec.Compile(b, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{steps, 64}, -1, 1, 1),
		w: exectest.Rand(tensor.Float32, tensor.Shape{64}, -1, 1, 2), n: tensor.Scalar(int32(trips))}

	// The same plan, lowered here, to look inside.
	plan := prog.Plan()
	ex, err := b.Lower(plan)
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	e := ex.(*executable)
	outer, ctl := workOf(e)
	if len(ctl) != 2 {
		t.Fatalf("%d control-flow steps, want 2:\n%s", len(ctl), plan.Format())
	}
	var scan, while *ctlStep
	for _, s := range ctl {
		if s.a.Kind == opdef.ScanKind {
			scan = s
		} else {
			while = s
		}
	}
	body, _ := workOf(scan.bodies[0].e)
	cond, _ := workOf(while.bodies[0].e)
	wbody, _ := workOf(while.bodies[1].e)
	f := &exec.Frame{Outputs: make([]*tensor.Tensor, len(plan.Outputs))}
	for i, o := range outs {
		f.Outputs[i] = tensor.Zeros(o.DType(), o.Shape()...)
	}
	ctx := context.Background()
	for _, trips := range []int64{trips, 4} {
		feeds[n] = tensor.Scalar(int32(trips))
		want, err := exectest.Eval(outs, feeds)
		if err != nil {
			t.Fatal(err)
		}
		f.Inputs = f.Inputs[:0]
		for _, in := range plan.InputNodes {
			f.Inputs = append(f.Inputs, feeds[in])
		}
		// Scan: steps x body; While: trips+1 checks (condition and
		// read-back) and trips bodies; iteration i writes the tuple when
		// i is even, so after an even number of trips the two carries
		// are in the spare buffers and copied into the tuple.
		copies := 2 * (1 - trips%2)
		wantCalls := outer + steps*body + (trips+1)*(cond+1) + trips*wbody + copies
		before := *e.calls
		if err := e.Run(ctx, f); err != nil {
			t.Fatal(err)
		}
		got := *e.calls - before
		t.Logf("%d trips: %d work items on the stream: %d outside the loops, Scan %d x %d, While %d x (%d + 1 read-back) + %d x %d + %d copies",
			trips, got, outer, steps, body, trips+1, cond, trips, wbody, copies)
		if got != wantCalls {
			t.Errorf("%d trips: one Run put %d work items on the stream, want %d", trips, got, wantCalls)
		}
		for i := range outs {
			if err := exectest.Compare(f.Outputs[i], want[i], 1e-5); err != nil {
				t.Errorf("%d trips: output %d: %v", trips, i, err)
			}
		}
		// The profiler's hook hears each loop's iteration count.
		obs := &iterObserver{iters: map[int]int{}}
		f.Observer = obs
		if err := e.Run(ctx, f); err != nil {
			t.Fatal(err)
		}
		f.Observer = nil
		var counts []int
		for _, n := range obs.iters {
			counts = append(counts, n)
		}
		slices.Sort(counts)
		if !slices.Equal(counts, []int{int(trips), steps}) {
			t.Errorf("%d trips: iteration counts %v, want the While's %d and the Scan's %d", trips, counts, trips, steps)
		}
	}
	allocs := testing.AllocsPerRun(10, func() {
		if err := e.Run(ctx, f); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per Run of a Scan and a While", allocs)
	}
	// Through the Program (RunInto) too.
	pouts := make([]*tensor.Tensor, len(outs))
	for i, o := range outs {
		pouts[i] = tensor.Zeros(o.DType(), o.Shape()...)
	}
	allocs = testing.AllocsPerRun(10, func() {
		if err := prog.RunInto(ctx, feeds, pouts); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per RunInto of a Scan and a While", allocs)
	}
}

// iterObserver records the iteration count of every control-flow step.
type iterObserver struct{ iters map[int]int }

func (o *iterObserver) Now() int64                         { return time.Now().UnixNano() }
func (o *iterObserver) Step(int, int64, int64)             {}
func (o *iterObserver) Part(int, int, int64, int64, int64) {}
func (o *iterObserver) Iterations(step, n int)             { o.iters[step] = n }

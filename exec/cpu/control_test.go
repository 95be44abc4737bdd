package cpu_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// loopCase is a graph with control flow, its feeds, and the outputs to
// compare against exectest.Eval (the float64 reference interpreter).
type loopCase struct {
	name  string
	build func(g *graph.Graph) (outs []*graph.Node, feeds map[*graph.Node]*tensor.Tensor)
}

func seq(dt tensor.DType, scale float64, dims ...int) *tensor.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * math.Sin(float64(i)+1)
	}
	t, err := tensor.FromFloat64s(dt, v, dims...)
	if err != nil {
		panic(err)
	}
	return t
}

func scalarF(g *graph.Graph, v float64) *graph.Node { return g.Const(tensor.Scalar(float32(v))) }

var loopCases = []loopCase{
	{"scan-rnn", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// h_t = tanh(h W + x_t); y_t = h_t * 2, over 5 steps.
		h0 := g.Input("h0", tensor.Float32, 3, 4)
		xs := g.Input("xs", tensor.Float32, 5, 3, 4)
		w := g.Input("w", tensor.Float32, 4, 4)
		c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			h := ops.Tanh(ops.Add(ops.MatMul(c[0], w), x[0]))
			return []*graph.Node{h}, []*graph.Node{ops.Mul(h, ops.Scalar(h, 2))}
		}, []*graph.Node{h0}, []*graph.Node{xs}, -1)
		return []*graph.Node{c[0], ys[0]}, map[*graph.Node]*tensor.Tensor{
			h0: seq(tensor.Float32, 0.5, 3, 4), xs: seq(tensor.Float32, 1, 5, 3, 4), w: seq(tensor.Float32, 0.3, 4, 4)}
	}},
	{"scan-reverse-two-carries-int", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// a running sum (f64) and a counter (i32) over xs reversed; ys the
		// partial sums and the counter.
		xs := g.Input("xs", tensor.Float64, 6, 2)
		s0 := g.Const(tensor.Zeros(tensor.Float64, 2))
		k0 := g.Const(tensor.Scalar(int32(0)))
		c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			s := ops.Add(c[0], x[0])
			k := ops.Add(c[1], ops.Scalar(c[1], 1))
			return []*graph.Node{s, k}, []*graph.Node{s, k}
		}, []*graph.Node{s0, k0}, []*graph.Node{xs}, -1, ops.ScanReverse())
		return []*graph.Node{c[0], c[1], ys[0], ys[1]}, map[*graph.Node]*tensor.Tensor{xs: seq(tensor.Float64, 1, 6, 2)}
	}},
	{"scan-length-0", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		h0 := g.Input("h0", tensor.Float32, 2)
		c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{ops.Neg(c[0])}, []*graph.Node{c[0]}
		}, []*graph.Node{h0}, nil, 0)
		return []*graph.Node{c[0], ys[0]}, map[*graph.Node]*tensor.Tensor{h0: seq(tensor.Float32, 1, 2)}
	}},
	{"scan-odd-even-length", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// Lengths 1, 2 and 3 end the ping-pong in both buffers.
		h0 := g.Input("h0", tensor.Float32, 3)
		var outs []*graph.Node
		for _, n := range []int{1, 2, 3} {
			c, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 2)), ops.Scalar(c[0], 1))}, nil
			}, []*graph.Node{h0}, nil, n)
			outs = append(outs, c[0])
		}
		return outs, map[*graph.Node]*tensor.Tensor{h0: seq(tensor.Float32, 1, 3)}
	}},
	{"while-data-dependent", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// x <- x*1.5 + 1 while sum(x) < limit; count the trips.
		x0 := g.Input("x0", tensor.Float32, 4)
		limit := g.Input("limit", tensor.Float32)
		out := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(ops.Sum(c[0]), limit)
		}, func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 1.5)), ops.Scalar(c[0], 1)), ops.Add(c[1], ops.Scalar(c[1], 1))}
		}, x0, g.Const(tensor.Scalar(int64(0))))
		return out, map[*graph.Node]*tensor.Tensor{x0: seq(tensor.Float32, 1, 4), limit: tensor.Scalar(float32(300))}
	}},
	{"while-zero-trips", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		x0 := g.Input("x0", tensor.Float32, 4)
		out := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(ops.Sum(c[0]), ops.Scalar(c[0], -100))
		}, func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Neg(c[0])}
		}, x0)
		return out, map[*graph.Node]*tensor.Tensor{x0: seq(tensor.Float32, 1, 4)}
	}},
	{"whilemax-bound-hit", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		x0 := g.Input("x0", tensor.Float32, 2)
		out := ops.WhileMax(3, func(c []*graph.Node) *graph.Node {
			return ops.Less(ops.Sum(c[0]), ops.Scalar(c[0], 1e9))
		}, func(c []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(c[0], ops.Scalar(c[0], 1))}
		}, x0)
		return out, map[*graph.Node]*tensor.Tensor{x0: seq(tensor.Float32, 1, 2)}
	}},
	{"cond-both-branches-captures", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		x := g.Input("x", tensor.Float32, 3)
		w := g.Input("w", tensor.Float32, 3)
		var outs []*graph.Node
		for _, p := range []bool{true, false} {
			r := ops.Cond(g.Const(tensor.Scalar(p)), func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(xs[0], w), ops.Sum(xs[0])}
			}, func(xs []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sub(xs[0], w), ops.Max(xs[0])}
			}, x)
			outs = append(outs, r...)
		}
		return outs, map[*graph.Node]*tensor.Tensor{x: seq(tensor.Float32, 1, 3), w: seq(tensor.Float32, 2, 3)}
	}},
	{"scan-in-while", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// while s < 50: s += sum(cumsum via a Scan over xs, scaled by s)
		xs := g.Input("xs", tensor.Float32, 4)
		out := ops.While(func(c []*graph.Node) *graph.Node {
			return ops.Less(c[0], ops.Scalar(c[0], 50))
		}, func(c []*graph.Node) []*graph.Node {
			acc, ys := ops.Scan(func(a, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				n := ops.Add(a[0], ops.Mul(x[0], ops.Add(c[0], ops.Scalar(c[0], 1))))
				return []*graph.Node{n}, []*graph.Node{n}
			}, []*graph.Node{ops.Scalar(c[0], 0)}, []*graph.Node{xs}, -1)
			return []*graph.Node{ops.Add(ops.Add(c[0], acc[0]), ops.Max(ys[0]))}
		}, g.Const(tensor.Scalar(float32(1))))
		return out, map[*graph.Node]*tensor.Tensor{xs: seq(tensor.Float32, 1, 4)}
	}},
	{"scan-passthrough-and-capture-results", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// The body returns a carry unchanged, a capture as a y and the x
		// itself as a y: copies inside the body.
		a := g.Input("a", tensor.Float32, 2)
		b := g.Input("b", tensor.Float32, 3)
		xs := g.Input("xs", tensor.Float32, 3, 2)
		c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{c[0], ops.Add(c[1], x[0])}, []*graph.Node{b, x[0]}
		}, []*graph.Node{a, a}, []*graph.Node{xs}, -1)
		return append(c, ys...), map[*graph.Node]*tensor.Tensor{a: seq(tensor.Float32, 1, 2), b: seq(tensor.Float32, 2, 3), xs: seq(tensor.Float32, 1, 3, 2)}
	}},
	{"scan-in-scan-cond-in-scan", func(g *graph.Graph) ([]*graph.Node, map[*graph.Node]*tensor.Tensor) {
		// outer over rows of m: inner Scan over the row's elements (a
		// cumulative product scaled by an invariant), then a Cond on its
		// sign.
		m := g.Input("m", tensor.Float64, 4, 3)
		w := g.Input("w", tensor.Float64)
		c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			pc, _ := ops.Scan(func(p, e []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Mul(p[0], ops.Add(e[0], ops.Mul(w, ops.Scalar(e[0], 0.5))))}, nil
			}, []*graph.Node{ops.Scalar(x[0], 1)}, []*graph.Node{x[0]}, -1)
			r := ops.Cond(ops.Greater(pc[0], ops.Scalar(pc[0], 0)), func(v []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sqrt(v[0])}
			}, func(v []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Neg(v[0])}
			}, pc[0])
			return []*graph.Node{ops.Add(c[0], r[0])}, []*graph.Node{r[0]}
		}, []*graph.Node{g.Const(tensor.Scalar(float64(0)))}, []*graph.Node{m}, -1)
		return append(c, ys...), map[*graph.Node]*tensor.Tensor{m: seq(tensor.Float64, 2, 4, 3), w: tensor.Scalar(float64(0.3))}
	}},
}

// TestLoopsMatchReference runs every loop case on the CPU, with the
// optimising pipeline and with the optional passes off, against
// exectest.Eval.
func TestLoopsMatchReference(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	for _, c := range loopCases {
		for _, mode := range []string{"opt", "noopt"} {
			t.Run(c.name+"/"+mode, func(t *testing.T) {
				g := graph.New()
				outs, feeds := c.build(g)
				want, err := exectest.Eval(outs, feeds)
				if err != nil {
					t.Fatal(err)
				}
				opts := []exec.Option{exec.VerifyEachPass()}
				if mode == "noopt" {
					opts = append(opts, exec.DisablePasses("constfold", "simplify", "cse", "loopcse", "hoist", "fuse"))
				}
				p, err := exec.Compile(be, outs, opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				for run := range 2 { // the second run reuses the instance
					got, err := p.Run(context.Background(), exec.Feeds(feeds))
					if err != nil {
						t.Fatal(err)
					}
					for i := range outs {
						checkClose(t, run, i, got[i], want[i])
					}
				}
			})
		}
	}
}

func checkClose(t *testing.T, run, i int, got, want *tensor.Tensor) {
	t.Helper()
	if got.DType() != want.DType() || !got.Shape().Equal(want.Shape()) {
		t.Fatalf("run %d output %d: %s, want %s", run, i, got.Type(), want.Type())
	}
	tol := 1e-12
	if got.DType() == tensor.Float32 {
		tol = 1e-5
	}
	for k := range got.Size() {
		g, w := got.Float64(k), want.Float64(k)
		if math.Abs(g-w) > tol*(1+math.Abs(w)) {
			t.Fatalf("run %d output %d element %d: %v, want %v (reference)", run, i, k, g, w)
		}
	}
}

// rnn builds a Scan of steps steps of h = tanh(h W + x_t) over [b, n]
// states.
func rnn(g *graph.Graph, steps, b, n int) (h0, xs, w *graph.Node, outs []*graph.Node) {
	h0 = g.Input("h0", tensor.Float32, b, n)
	xs = g.Input("xs", tensor.Float32, steps, b, n)
	w = g.Input("w", tensor.Float32, n, n)
	c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(ops.MatMul(c[0], w), x[0]))
		return []*graph.Node{h}, []*graph.Node{ops.Sum(h, 1)}
	}, []*graph.Node{h0}, []*graph.Node{xs}, -1)
	return h0, xs, w, []*graph.Node{c[0], ys[0]}
}

// TestLoopAllocations: a Run with a Scan and one with a While allocate
// nothing in steady state (RunInto).
func TestLoopAllocations(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	h0, xs, w, outs := rnn(g, 20, 4, 8)
	wl := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Less(c[1], ops.Scalar(c[1], 7))
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Tanh(ops.MatMul(c[0], w)), ops.Add(c[1], ops.Scalar(c[1], 1))}
	}, h0, g.Const(tensor.Scalar(int32(0))))
	outs = append(outs, wl...)
	feeds := exec.Feeds{h0: seq(tensor.Float32, 1, 4, 8), xs: seq(tensor.Float32, 1, 20, 4, 8), w: seq(tensor.Float32, 0.3, 8, 8)}
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res := make([]*tensor.Tensor, len(outs))
	for i, o := range outs {
		res[i] = tensor.Zeros(o.DType(), o.Shape()...)
	}
	ctx, cancel := context.WithCancel(context.Background()) // a cancellable Run checks between iterations
	defer cancel()
	if err := p.RunInto(ctx, feeds, res); err != nil {
		t.Fatal(err)
	}
	if got := res[3].Float64(0); got != 7 {
		t.Fatalf("While ran %v iterations, want 7", got)
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := p.RunInto(ctx, feeds, res); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per Run with a Scan and a While, want 0", a)
	}
}

// TestCancelLongWhile: cancelling a Run stuck in a long While (one that
// would take minutes) returns the context's error promptly, and the
// program still runs afterwards.
func TestCancelLongWhile(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	x0 := g.Input("x0", tensor.Float32, 16)
	limit := g.Input("limit", tensor.Float32)
	out := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Less(c[1], limit)
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Sin(c[0]), ops.Add(c[1], ops.Scalar(c[1], 1))}
	}, x0, g.Const(tensor.Scalar(float32(0))))
	p, err := exec.Compile(be, out)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = p.Run(ctx, exec.Feeds{x0: seq(tensor.Float32, 1, 16), limit: tensor.Scalar(float32(1e30))})
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run of an endless While: %v, want the context's deadline", err)
	}
	if bound := 2 * time.Second; took > bound && !raceEnabled {
		t.Errorf("the cancelled Run returned after %v, want < %v", took, bound)
	}
	// Still usable: 3 iterations.
	got, err := p.Run(context.Background(), exec.Feeds{x0: seq(tensor.Float32, 1, 16), limit: tensor.Scalar(float32(3))})
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Float64(0) != 3 { // the counter: 0, 1, 2 are < 3
		t.Errorf("counter %v after the cancelled Run, want 3", got[1].Float64(0))
	}
}

// TestIndexErrorInScan: a Gather out of range at step 2 of a Scan fails
// the Run naming the Scan, the step, the body's Gather and the user's
// line.
func TestIndexErrorInScan(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	table := g.Input("table", tensor.Float32, 4, 2)
	idx := g.Input("idx", tensor.Int32, 5, 1)
	_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return c, []*graph.Node{ops.Gather(table, x[0], 0)}
	}, []*graph.Node{g.Const(tensor.Scalar(float32(0)))}, []*graph.Node{idx}, -1)
	p, err := exec.Compile(be, ys)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ix, _ := tensor.New([]int32{0, 3, 9, 1, 2}, 5, 1)
	_, err = p.Run(context.Background(), exec.Feeds{table: seq(tensor.Float32, 1, 4, 2), idx: ix})
	if !errors.Is(err, exec.ErrIndexOutOfRange) {
		t.Fatalf("Run: %v, want ErrIndexOutOfRange", err)
	}
	for _, want := range []string{"Scan", "step 2", "body step", "Gather", "control_test.go:", "index 9"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The program stays usable.
	ix, _ = tensor.New([]int32{0, 3, 2, 1, 2}, 5, 1)
	if _, err := p.Run(context.Background(), exec.Feeds{table: seq(tensor.Float32, 1, 4, 2), idx: ix}); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentLoopRuns: concurrent Runs of one program with loops give
// each its own answer (run it with -race).
func TestConcurrentLoopRuns(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	h0, xs, w, outs := rnn(g, 6, 2, 4)
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	const workers = 4
	want := make([][]*tensor.Tensor, workers)
	feeds := make([]exec.Feeds, workers)
	for i := range workers {
		feeds[i] = exec.Feeds{h0: seq(tensor.Float32, float64(i+1), 2, 4), xs: seq(tensor.Float32, 1, 6, 2, 4), w: seq(tensor.Float32, 0.3, 4, 4)}
		if want[i], err = exectest.Eval(outs, feeds[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				got, err := p.Run(context.Background(), feeds[i])
				if err != nil {
					t.Error(err)
					return
				}
				for k := range got {
					checkClose(t, 0, k, got[k], want[i][k])
				}
			}
		}()
	}
	wg.Wait()
}

package exectest

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// controlCases are the cases of the control-flow ops (ops/control.go):
// Cond, While and Scan, each read through TupleGet. Few on purpose (each
// costs a compile per mode and per backend; the CUDA emulator compiles
// every body's fused kernels): together they take both branches of a
// Cond, a While whose trip count depends on the data and one stopped by
// its bound, Scans forward and reverse, of length 0 and without xs, with
// several carries and ys of mixed dtypes (an int counter, a bool y), and
// a Cond inside a Scan inside a While, reading nodes of every graph
// around it. The sweeps are the CPU package's tests.
func controlCases() []Case {
	f32, f64, i32, i64 := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64
	scalar := func(dt tensor.DType, v float64) *tensor.Tensor { return Tensor(dt, []float64{v}, []int{}...) }
	return []Case{{
		// Two Conds, one taking each branch. The branch not taken gathers
		// at index 5 of an axis of length 3: running it would fail the run.
		Name:   "control/cond",
		Source: "hand: x*w = [0.5 -2 6]; x-w = [0.5 -3 1]; n+1 = 8",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, scalar(tensor.Bool, 1), scalar(tensor.Bool, 0),
				Tensor(f32, []float64{1, -2, 3}, 3), Tensor(f32, []float64{0.5, 1, 2}, 3),
				Tensor(i32, []float64{0, 5, 1}, 3), scalar(i32, 7))
			p, q, x, w, bad, n := in[0], in[1], in[2], in[3], in[4], in[5]
			failing := func(xs []*graph.Node) []*graph.Node { return []*graph.Node{ops.Gather(xs[0], bad, 0)} }
			r1 := ops.Cond(p, func(xs []*graph.Node) []*graph.Node { return []*graph.Node{ops.Mul(xs[0], w)} }, failing, x)
			r2 := ops.Cond(q,
				func(xs []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Add(ops.Gather(xs[0], bad, 0), w), ops.Add(xs[1], xs[1])}
				},
				func(xs []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Sub(xs[0], w), ops.Add(xs[1], ops.Scalar(xs[1], 1))}
				}, x, n)
			return []*graph.Node{r1[0], r2[0], r2[1]}, feeds
		},
		Want: []*tensor.Tensor{
			Tensor(f32, []float64{0.5, -2, 6}, 3), Tensor(f32, []float64{0.5, -3, 1}, 3), scalar(i32, 8),
		},
	}, {
		// Newton's square root until |x² - a| <= 1e-10, counting the trips
		// (their number depends on a: Eval's count is the golden one), and
		// the same loop stopped by a bound of 2 trips. Expected values:
		// Eval (the float64 reference).
		Name: "control/while",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, Tensor(f64, []float64{2, 9, 0.25}, 3), Tensor(f64, []float64{1, 1, 1}, 3))
			a, x0 := in[0], in[1]
			k0 := g.Const(scalar(i32, 0))
			cond := func(c []*graph.Node) *graph.Node {
				r := ops.Max(ops.Abs(ops.Sub(ops.Mul(c[0], c[0]), a)))
				return ops.Greater(r, ops.Scalar(r, 1e-10))
			}
			body := func(c []*graph.Node) []*graph.Node {
				x := ops.Mul(ops.Scalar(c[0], 0.5), ops.Add(c[0], ops.Div(a, c[0])))
				return []*graph.Node{x, ops.Add(c[1], ops.Scalar(c[1], 1))}
			}
			w := ops.While(cond, body, x0, k0)
			b := ops.WhileMax(2, cond, body, x0, k0)
			return []*graph.Node{w[0], w[1], b[0], b[1]}, feeds
		},
	}, {
		// A forward Scan of 5 steps, an RNN cell: two carries (f32 state,
		// i32 counter), two xs (f32, i64), two captures, three ys (f32,
		// i64, bool). Expected values: Eval.
		Name: "control/scan",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, Rand(f32, tensor.Shape{2, 3}, -1, 1, 221), Rand(f32, tensor.Shape{5, 2, 4}, -1, 1, 222),
				Tensor(i64, []float64{3, 1, 4, 1, 5}, 5), Rand(f32, tensor.Shape{4, 3}, -1, 1, 223), Rand(f32, tensor.Shape{3}, -1, 1, 224))
			h0, u, k, wt, b := in[0], in[1], in[2], in[3], in[4]
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				// 2b is loop-invariant (a capture times a constant of the
				// body): the compiler hoists it out of the loop.
				h := ops.Tanh(ops.Add(ops.Add(ops.MatMul(x[0], wt), ops.Mul(c[0], ops.Scalar(c[0], 0.5))), ops.Mul(b, ops.Scalar(c[0], 2))))
				n := ops.Add(c[1], ops.Scalar(c[1], 1))
				return []*graph.Node{h, n}, []*graph.Node{ops.Sum(h, 1), ops.Mul(ops.Cast(n, i64), x[1]), ops.Greater(ops.Sum(h), ops.Scalar(ops.Sum(h), 0))}
			}
			carry, ys := ops.Scan(step, []*graph.Node{h0, g.Const(scalar(i32, 0))}, []*graph.Node{u, k}, -1)
			return append(carry, ys...), feeds
		},
	}, {
		// A reverse Scan (ys stacked by step index), a Scan of length 0
		// (its carry is the initial one, its ys empty) and a Scan without
		// xs (a loop of 3 steps over its carry alone). Expected values:
		// Eval.
		Name: "control/scan-reverse",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, Rand(f64, tensor.Shape{3}, -1, 1, 231), Rand(f64, tensor.Shape{4, 3}, -1, 1, 232), Rand(f64, tensor.Shape{0, 3}, -1, 1, 233))
			c0, xs, empty := in[0], in[1], in[2]
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				n := ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 0.9)), x[0])
				return []*graph.Node{n}, []*graph.Node{ops.Mul(n, n)}
			}
			rc, ry := ops.Scan(step, []*graph.Node{c0}, []*graph.Node{xs}, -1, ops.ScanReverse())
			ec, ey := ops.Scan(step, []*graph.Node{c0}, []*graph.Node{empty}, -1)
			nc, ny := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
				n := ops.Sub(ops.Mul(c[0], c[0]), ops.Scalar(c[0], 0.5))
				return []*graph.Node{n}, []*graph.Node{ops.Sum(n)}
			}, []*graph.Node{c0}, nil, 3)
			return []*graph.Node{rc[0], ry[0], ec[0], ey[0], nc[0], ny[0]}, feeds
		},
	}, {
		// A While (3 trips, counted by an i32 carry) whose body runs a
		// Scan over xs whose body runs a Cond on the sign of the step's x:
		// xs is read by the Scan (a capture of the While body) and w by
		// the Cond's branch (a node of the top-level graph, three bodies
		// out). Expected values: Eval.
		Name: "control/nested",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, Rand(f32, tensor.Shape{2}, -1, 1, 241), Rand(f32, tensor.Shape{4, 2}, -1, 1, 242), Rand(f32, tensor.Shape{2}, 0.5, 1, 243))
			c0, xs, w := in[0], in[1], in[2]
			res := ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(c[1], ops.Scalar(c[1], 3)) },
				func(c []*graph.Node) []*graph.Node {
					s, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
						pos := ops.Greater(ops.Sum(x[0]), ops.Scalar(ops.Sum(x[0]), 0))
						r := ops.Cond(pos,
							func(v []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(v[0], ops.Mul(v[1], w))} },
							func(v []*graph.Node) []*graph.Node {
								return []*graph.Node{ops.Sub(ops.Mul(v[0], ops.Scalar(v[0], 0.5)), v[1])}
							},
							c[0], x[0])
						return r, []*graph.Node{ops.Sum(r[0])}
					}, []*graph.Node{c[0]}, []*graph.Node{xs}, -1)
					return []*graph.Node{ops.Add(s[0], ops.Mul(ops.Sum(ys[0]), ops.Scalar(s[0], 0.1))), ops.Add(c[1], ops.Scalar(c[1], 1))}
				}, c0, g.Const(scalar(i32, 0)))
			return res, feeds
		},
	}}
}

// controlRunErrors checks a run error inside a body: a Scan whose body
// gathers at the step's index fails at step 2 (index 7 of an axis of
// length 3) with an error wrapping exec.ErrIndexOutOfRange that names the
// Scan, its step (the iteration), the Gather and its step in the body; a
// good run afterwards works.
func controlRunErrors(t *testing.T, be exec.Backend) {
	f32, i32 := tensor.Float32, tensor.Int32
	g := graph.New()
	idx := g.Input("idx", i32, 4, 1)
	w := g.Input("w", f32, 3)
	c, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		v := ops.Gather(w, x[0], 0)
		return []*graph.Node{ops.Add(c[0], v)}, []*graph.Node{v}
	}, []*graph.Node{ops.Full(g, f32, 0, 1)}, []*graph.Node{idx}, -1)
	prog, err := exec.Compile(be, []*graph.Node{c[0], ys[0]})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	wv := Tensor(f32, []float64{1, 2, 4}, 3)
	_, err = prog.Run(context.Background(), exec.Feeds{idx: Tensor(i32, []float64{0, 1, 7, 2}, 4, 1), w: wv})
	if err == nil {
		t.Fatal("a Run gathering at index 7 of 3 succeeded")
	}
	if !errors.Is(err, exec.ErrIndexOutOfRange) {
		t.Errorf("error %q does not wrap exec.ErrIndexOutOfRange", err)
	}
	for _, want := range []string{"Scan", "Gather", "index 7", "built at"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// The loop's iteration (2) and the Gather's step in the body (0), in
	// each backend's words ("step 2, body step 0", "iteration 2, step 0").
	if !regexp.MustCompile(`\b(iteration|step) 2, .*\bstep 0\b`).MatchString(err.Error()) {
		t.Errorf("error %q does not name iteration 2 and the body's step 0", err)
	}
	// Indices 0, 1, 2, 2: the carry sums w[0]+w[1]+2·w[2] = 11 (hand).
	out, err := prog.Run(context.Background(), exec.Feeds{idx: Tensor(i32, []float64{0, 1, 2, 2}, 4, 1), w: wv})
	if err != nil {
		t.Fatalf("good run after the error: %v", err)
	}
	if err := Compare(out[0], Tensor(f32, []float64{11}, 1), 0); err != nil {
		t.Errorf("carry: %v", err)
	}
	if err := Compare(out[1], Tensor(f32, []float64{1, 2, 4, 4}, 4, 1), 0); err != nil {
		t.Errorf("ys: %v", err)
	}
}

// controlGradCases are the gradients of the control-flow ops (their rules
// in ops/control_grad.go), through autodiff.VJP with given cotangents,
// against goldens computed outside loom.
func controlGradCases() []Case {
	f64 := tensor.Float64
	scalar := func(dt tensor.DType, v float64) *tensor.Tensor { return Tensor(dt, []float64{v}, []int{}...) }
	// A Scan of 3 steps, h = tanh(h·W + x_t), y_t = h², forward (saving
	// the residuals) and reverse (ScanRemat: recomputing the steps), and
	// the cotangents of the final h and of the ys; golden values:
	//
	//	# torch 1.13, float64 (/usr/bin/python3)
	//	h0 = torch.tensor([0.5, -0.25], requires_grad=True)
	//	W = torch.tensor([[0.3, -0.2], [0.1, 0.4]], requires_grad=True)
	//	xs = torch.tensor([[0.1, 0.2], [-0.3, 0.5], [0.7, -0.1]], requires_grad=True)
	//	ch, cy = torch.tensor([1., -2.]), torch.tensor([[0.5, 1.], [-1., 0.25], [2., -0.5]])
	//	h, ys = h0, [None]*3
	//	for t in range(3):  # reversed(range(3)) for the reverse Scan
	//	    h = torch.tanh(h @ W + xs[t]); ys[t] = h * h
	//	L = (h * ch).sum() + (torch.stack(ys) * cy).sum()
	//	torch.autograd.grad(L, [h0, W, xs])
	scan := Case{
		Name:   "control/grad-scan",
		Source: "torch 1.13 float64 autograd of the same loop (the script in control_cases.go)",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, Tensor(f64, []float64{0.5, -0.25}, 2), Tensor(f64, []float64{0.3, -0.2, 0.1, 0.4}, 2, 2),
				Tensor(f64, []float64{0.1, 0.2, -0.3, 0.5, 0.7, -0.1}, 3, 2))
			h0, w, xs := in[0], in[1], in[2]
			ch := g.Const(Tensor(f64, []float64{1, -2}, 2))
			cy := g.Const(Tensor(f64, []float64{0.5, 1, -1, 0.25, 2, -0.5}, 3, 2))
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Tanh(ops.Add(ops.MatMul(c[0], w), x[0]))
				return []*graph.Node{h}, []*graph.Node{ops.Mul(h, h)}
			}
			var outs []*graph.Node
			for _, opts := range [][]ops.LoopOption{nil, {ops.ScanReverse(), ops.ScanRemat()}} {
				c, ys := ops.Scan(step, []*graph.Node{h0}, []*graph.Node{xs}, -1, opts...)
				outs = append(outs, c[0], ys[0])
				outs = append(outs, autodiff.VJP([]*graph.Node{c[0], ys[0]}, []*graph.Node{h0, w, xs}, []*graph.Node{ch, cy})...)
			}
			return outs, feeds
		},
		Want: []*tensor.Tensor{
			Tensor(f64, []float64{0.58748952497875795, 0.11601050908830396}, 2),
			Tensor(f64, []float64{0.048964160355482705, 0, 0.05265062199424482, 0.18199555008649007, 0.34514394195976666, 0.013458438218927456}, 3, 2),
			Tensor(f64, []float64{0.20359785707796782, 0.074273458554711014}, 2),
			Tensor(f64, []float64{0.16222017554635593, 0.41303935856366802, 0.76391690367805587, -0.89399342627023215}, 2, 2),
			Tensor(f64, []float64{0.68781310387235239, 0.013730370418689412, 1.4537483908674969, -0.32911117167015069, 2.1937403559103079, -2.0875323123811378}, 3, 2),
			Tensor(f64, []float64{0.086537937030870982, 0.31150553544496035}, 2),
			Tensor(f64, []float64{0.0074888145455589911, 0.09703569861285144, 0.015659327851201103, 0.059030076247070622, 0.45938857622834184, 0.084863038173370833}, 3, 2),
			Tensor(f64, []float64{0.43759982273627346, 0.26176707501436935}, 2),
			Tensor(f64, []float64{1.2258964638392067, 0.10883021570511901, -0.37989381280109324, -0.29070957619387883}, 2, 2),
			Tensor(f64, []float64{1.0784010559237327, -1.2433718463917207, 0.80958984399948253, -0.25220638402558998, 1.6242381721241661, 0.24835814450488189}, 3, 2),
		},
		Tol: 1e-12,
	}
	// Cond: then x·w + sin x (w captured), else x²; cotangent ct. By
	// hand: then dx = ct·(w + cos x), dw = ct·x; else dx = 2·ct·x and dw
	// = 0 (w is not read by the branch taken). x = [0.5 -1 2], w = [2 3
	// -1], ct = [1 -1 0.5]; the cosines are math.Cos.
	x := []float64{0.5, -1, 2}
	w := []float64{2, 3, -1}
	ct := []float64{1, -1, 0.5}
	thenDx := make([]float64, 3)
	for i := range thenDx {
		thenDx[i] = ct[i] * (w[i] + math.Cos(x[i]))
	}
	cond := Case{
		Name:   "control/grad-cond",
		Source: "hand: d(x·w + sin x) = w + cos x (math.Cos), d(x²) = 2x",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, scalar(tensor.Bool, 1), scalar(tensor.Bool, 0), Tensor(f64, x, 3), Tensor(f64, w, 3))
			p, q, xn, wn := in[0], in[1], in[2], in[3]
			c := g.Const(Tensor(f64, ct, 3))
			then := func(v []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(ops.Mul(v[0], wn), ops.Sin(v[0]))} }
			els := func(v []*graph.Node) []*graph.Node { return []*graph.Node{ops.Mul(v[0], v[0])} }
			var outs []*graph.Node
			for _, pred := range []*graph.Node{p, q} {
				r := ops.Cond(pred, then, els, xn)
				outs = append(outs, autodiff.VJP(r, []*graph.Node{xn, wn}, []*graph.Node{c})...)
			}
			return outs, feeds
		},
		Want: []*tensor.Tensor{
			Tensor(f64, thenDx, 3), Tensor(f64, []float64{0.5, 1, 1}, 3),
			Tensor(f64, []float64{1, 2, 2}, 3), Tensor(f64, []float64{0, 0, 0}, 3),
		},
		Tol: 1e-12,
	}
	// WhileMax: x = 1.5x + w while sum(x) < 10, from x0 = [1 2] with w =
	// [0.5 -0.5]: the sums go 3, 4.5, 6.75, 10.125, so 3 trips (a bound of
	// 5 not hit; a bound of 2 hit). After k trips x = 1.5^k·x0 + 2(1.5^k -
	// 1)·w, so for the cotangent ct = [1 3]: dx0 = 1.5^k·ct, dw =
	// 2(1.5^k - 1)·ct (by hand): k = 3: x = [5.75 4.375], dx0 = [3.375
	// 10.125], dw = [4.75 14.25]; k = 2: x = [3.5 3.25], dx0 = [2.25 6.75],
	// dw = [2.5 7.5].
	while := Case{
		Name:   "control/grad-whilemax",
		Source: "hand: x_k = 1.5^k·x0 + 2(1.5^k - 1)·w",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, Tensor(f64, []float64{1, 2}, 2), Tensor(f64, []float64{0.5, -0.5}, 2))
			x0, wn := in[0], in[1]
			c := g.Const(Tensor(f64, []float64{1, 3}, 2))
			cond := func(v []*graph.Node) *graph.Node {
				s := ops.Sum(v[0])
				return ops.Less(s, ops.Scalar(s, 10))
			}
			body := func(v []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(ops.Mul(v[0], ops.Scalar(v[0], 1.5)), wn)}
			}
			var outs []*graph.Node
			for _, bound := range []int{5, 2} {
				r := ops.WhileMax(bound, cond, body, x0)
				outs = append(outs, r[0])
				outs = append(outs, autodiff.VJP(r, []*graph.Node{x0, wn}, []*graph.Node{c})...)
			}
			return outs, feeds
		},
		Want: []*tensor.Tensor{
			Tensor(f64, []float64{5.75, 4.375}, 2), Tensor(f64, []float64{3.375, 10.125}, 2), Tensor(f64, []float64{4.75, 14.25}, 2),
			Tensor(f64, []float64{3.5, 3.25}, 2), Tensor(f64, []float64{2.25, 6.75}, 2), Tensor(f64, []float64{2.5, 7.5}, 2),
		},
	}
	return []Case{scan, cond, while}
}

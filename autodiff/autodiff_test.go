package autodiff_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// run compiles and runs outputs on the CPU.
func run(t *testing.T, outs []*graph.Node, feeds exec.Feeds) []*tensor.Tensor {
	t.Helper()
	if g := outs[0].Graph(); g != nil && g.Err() != nil {
		t.Fatal(g.Err())
	}
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	p, err := exec.Compile(be, outs, exec.VerifyEachPass(), exec.IgnoreUnusedFeeds())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func scalar64(v float64) *tensor.Tensor {
	t, _ := tensor.FromFloat64s(tensor.Float64, []float64{v}, []int{}...)
	return t
}

func vec64(vals ...float64) *tensor.Tensor {
	t, _ := tensor.FromFloat64s(tensor.Float64, vals)
	return t
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*(1+math.Abs(b)) }

// TestCubic: d/dx x^3 = 3x^2 = 12 at x = 2, and d2/dx2 = 6x = 12 (hand).
func TestCubic(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64)
	y := ops.Mul(ops.Mul(x, x), x)
	d1 := autodiff.Grad(y, x)[0]
	d2 := autodiff.Grad(d1, x)[0]
	d3 := autodiff.Grad(d2, x)[0] // 6 (hand: third derivative of x^3)
	out := run(t, []*graph.Node{y, d1, d2, d3}, exec.Feeds{x: scalar64(2)})
	for i, want := range []float64{8, 12, 12, 6} {
		if got := out[i].Float64(0); !near(got, want) {
			t.Errorf("derivative %d at 2 = %v, want %v", i, got, want)
		}
	}
	// The same through Pow: d/dx x^3 with the exponent a constant.
	p := ops.Pow(x, ops.Scalar(x, 3))
	pd := autodiff.Grad(autodiff.Grad(p, x)[0], x)[0]
	if got := run(t, []*graph.Node{pd}, exec.Feeds{x: scalar64(2)})[0].Float64(0); !near(got, 12) {
		t.Errorf("d2/dx2 pow(x,3) at 2 = %v, want 12", got)
	}
}

// TestHessianQuadratic: the Hessian of 0.5 x'Ax for symmetric A is A
// (hand: grad = 0.5 (A + A') x = A x, Hessian = A).
func TestHessianQuadratic(t *testing.T) {
	a := []float64{
		2, 1, 0,
		1, 3, -1,
		0, -1, 4,
	}
	at, _ := tensor.FromFloat64s(tensor.Float64, a, 3, 3)
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3)
	A := g.Const(at)
	y := ops.Mul(ops.Scalar(x, 0.5), ops.MatMul(x, ops.MatMul(A, x)))
	h := autodiff.Hessian(y, x)
	if !h.Shape().Equal(tensor.Shape{3, 3}) {
		t.Fatalf("Hessian shape %v, want [3,3]", h.Shape())
	}
	v := g.Input("v", tensor.Float64, 3)
	hv := autodiff.HVP(y, x, v)
	out := run(t, []*graph.Node{h, hv}, exec.Feeds{x: vec64(0.3, -1, 2), v: vec64(1, 2, 3)})
	for i, want := range a {
		if got := out[0].Float64(i); !near(got, want) {
			t.Errorf("H[%d] = %v, want %v", i, got, want)
		}
	}
	// Hand: A·[1,2,3] = [2+2, 1+6-3, -2+12] = [4, 4, 10].
	for i, want := range []float64{4, 4, 10} {
		if got := out[1].Float64(i); !near(got, want) {
			t.Errorf("HVP[%d] = %v, want %v", i, got, want)
		}
	}
}

// TestJacobian: y = [x0*x1, x0+x1, sin(x0)] at x = (2, 3) has Jacobian
// [[x1, x0], [1, 1], [cos x0, 0]] = [[3, 2], [1, 1], [cos 2, 0]] (hand).
func TestJacobian(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	x0 := ops.Slice(x, ops.R(0, 1))
	x1 := ops.Slice(x, ops.R(1, 2))
	y := ops.Concat(0, ops.Mul(x0, x1), ops.Add(x0, x1), ops.Sin(x0))
	j := autodiff.Jacobian(y, x)
	if !j.Shape().Equal(tensor.Shape{3, 2}) {
		t.Fatalf("Jacobian shape %v, want [3,2] (y's shape, then x's)", j.Shape())
	}
	out := run(t, []*graph.Node{j}, exec.Feeds{x: vec64(2, 3)})
	for i, want := range []float64{3, 2, 1, 1, math.Cos(2), 0} {
		if got := out[0].Float64(i); !near(got, want) {
			t.Errorf("J[%d] = %v, want %v", i, got, want)
		}
	}
	// Matrix-shaped y and x: shape [2,2,2,2].
	m := g.Input("m", tensor.Float64, 2, 2)
	if jm := autodiff.Jacobian(ops.MatMul(m, m), m); !jm.Shape().Equal(tensor.Shape{2, 2, 2, 2}) {
		t.Errorf("Jacobian of a matrix function has shape %v", jm.Shape())
	}
}

// TestSoftmaxVsLogSoftmax: the two give different values and different
// gradients in one graph (and CSE must not merge them).
func TestSoftmaxVsLogSoftmax(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3)
	w := g.Const(vec64(1, 2, 3))
	s := ops.Softmax(x, 0)
	ls := ops.LogSoftmax(x, 0)
	gs := autodiff.Grad(ops.Sum(ops.Mul(s, w)), x)[0]
	gls := autodiff.Grad(ops.Sum(ops.Mul(ls, w)), x)[0]
	out := run(t, []*graph.Node{s, ls, gs, gls}, exec.Feeds{x: vec64(1, 2, 3)})
	// Hand, with p = softmax([1,2,3]) = [0.09003057, 0.24472847, 0.66524096]:
	// d sum(w*softmax)/dx_i = p_i (w_i - sum_j w_j p_j), sum w p = 2.57521038;
	// d sum(w*logsoftmax)/dx_i = w_i - p_i * sum(w) = w_i - 6 p_i.
	p := []float64{0.09003057317038046, 0.24472847105479764, 0.6652409557748218}
	wp := 1*p[0] + 2*p[1] + 3*p[2]
	for i := range p {
		if got := out[0].Float64(i); !near(got, p[i]) {
			t.Errorf("softmax[%d] = %v, want %v", i, got, p[i])
		}
		if got := out[1].Float64(i); !near(got, math.Log(p[i])) {
			t.Errorf("logsoftmax[%d] = %v, want %v", i, got, math.Log(p[i]))
		}
		if got, want := out[2].Float64(i), p[i]*(float64(i+1)-wp); !near(got, want) {
			t.Errorf("softmax gradient[%d] = %v, want %v", i, got, want)
		}
		if got, want := out[3].Float64(i), float64(i+1)-6*p[i]; !near(got, want) {
			t.Errorf("log-softmax gradient[%d] = %v, want %v", i, got, want)
		}
	}
}

// TestReluAtZero: the gradient of sum(relu(x)) at x = 0 is 0 (the
// documented convention, as JAX and PyTorch), 1 where x > 0.
func TestReluAtZero(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3)
	d := autodiff.Grad(ops.Sum(ops.Relu(x)), x)[0]
	out := run(t, []*graph.Node{d}, exec.Feeds{x: vec64(0, 1, -1)})
	for i, want := range []float64{0, 1, 0} {
		if got := out[0].Float64(i); got != want {
			t.Errorf("relu'(%v) = %v, want %v", []float64{0, 1, -1}[i], got, want)
		}
	}
}

// TestTiesGoFirst: Max over a row with a tie sends the whole gradient to
// the first maximal element; Maximum with equal operands to the first.
func TestTiesGoFirst(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2, 3)
	dmax := autodiff.Grad(ops.Sum(ops.Max(x, 1)), x)[0]
	y := g.Input("y", tensor.Float64, 2)
	dmx := autodiff.Grad(ops.Sum(ops.Maximum(y, ops.Scalar(y, 1))), y)[0]
	xv, _ := tensor.FromFloat64s(tensor.Float64, []float64{1, 5, 5, 7, 2, 7}, 2, 3)
	out := run(t, []*graph.Node{dmax, dmx}, exec.Feeds{x: xv, y: vec64(1, 0)})
	for i, want := range []float64{0, 1, 0, 1, 0, 0} { // hand: first 5, first 7
		if got := out[0].Float64(i); got != want {
			t.Errorf("d max / dx[%d] = %v, want %v", i, got, want)
		}
	}
	for i, want := range []float64{1, 0} { // hand: tie at y=1 goes to y
		if got := out[1].Float64(i); got != want {
			t.Errorf("d maximum / dy[%d] = %v, want %v", i, got, want)
		}
	}
}

// TestStopGradient: d/dx [x * stop(x)] = stop(x) = x, not 2x (hand).
func TestStopGradient(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	d := autodiff.Grad(ops.Sum(ops.Mul(x, ops.StopGradient(x))), x)[0]
	out := run(t, []*graph.Node{d}, exec.Feeds{x: vec64(3, -2)})
	if out[0].Float64(0) != 3 || out[0].Float64(1) != -2 {
		t.Errorf("gradient %v, want [3 -2]", out[0])
	}
}

// TestIndependentAndIntermediate: an x that y does not depend on gets
// zeros of its shape; an intermediate x gets the total derivative.
func TestIndependentAndIntermediate(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	z := g.Input("z", tensor.Float64, 3, 2)
	h := ops.Exp(x)
	y := ops.Sum(ops.Mul(h, h)) // y = sum(e^{2x}); dy/dh = 2h
	grads := autodiff.Grad(y, z, h, x)
	if !grads[0].Shape().Equal(tensor.Shape{3, 2}) {
		t.Fatalf("zero gradient has shape %v", grads[0].Shape())
	}
	out := run(t, grads, exec.Feeds{x: vec64(0, 1), z: tensor.Zeros(tensor.Float64, 3, 2)})
	for i := 0; i < 6; i++ {
		if out[0].Float64(i) != 0 {
			t.Errorf("dz = %v, want zeros", out[0])
		}
	}
	for i, xv := range []float64{0, 1} {
		if got, want := out[1].Float64(i), 2*math.Exp(xv); !near(got, want) {
			t.Errorf("dh[%d] = %v, want %v", i, got, want)
		}
		if got, want := out[2].Float64(i), 2*math.Exp(2*xv); !near(got, want) {
			t.Errorf("dx[%d] = %v, want %v", i, got, want)
		}
	}
}

// TestVJP: for y = 2x (x of shape [3]) and cotangent c, VJP = 2c (hand).
func TestVJP(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3)
	c := g.Input("c", tensor.Float64, 3)
	y := ops.Mul(x, ops.Scalar(x, 2))
	v := autodiff.VJP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{c})[0]
	out := run(t, []*graph.Node{v}, exec.Feeds{x: vec64(1, 2, 3), c: vec64(1, -1, 0.5)})
	for i, want := range []float64{2, -2, 1} {
		if got := out[0].Float64(i); got != want {
			t.Errorf("vjp[%d] = %v, want %v", i, got, want)
		}
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  []string
	}{
		{"y-not-scalar", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Exp(x), x)[0]
		}, []string{"Grad(f64[3], f64[3])", "y must be a scalar", "VJP"}},
		{"y-integer", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Sum(ops.Cast(x, tensor.Int32)), x)[0]
		}, []string{"Grad(i32[], f64[3])", "only float32 and float64 outputs"}},
		{"x-integer", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Int64, 3)
			return autodiff.Grad(ops.Sum(ops.Cast(x, tensor.Float64)), x)[0]
		}, []string{"gradients exist only with respect to float"}},
		{"x-other-graph", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Sum(x), graph.New().Input("x", tensor.Float64, 3))[0]
		}, []string{"operand 1 belongs to another graph"}},
		{"x-nil", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Sum(x), nil)[0]
		}, []string{"operand 1 is nil"}},
		{"through-argmax", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Cast(ops.ArgMax(x), tensor.Float64), x)[0]
		}, []string{"ArgMax (i64[]", "is not differentiable"}},
		{"through-comparison", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Sum(ops.Cast(ops.Less(x, ops.Scalar(x, 1)), tensor.Float64)), x)[0]
		}, []string{"Less (b8[3]", "is not differentiable"}},
		{"through-cast-to-int", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.Grad(ops.Sum(ops.Cast(ops.Cast(x, tensor.Int64), tensor.Float64)), x)[0]
		}, []string{"Cast (i64[3]", "is not differentiable"}},
		{"vjp-cotangent-shape", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.VJP([]*graph.Node{x}, []*graph.Node{x}, []*graph.Node{g.Input("c", tensor.Float64, 2)})[0]
		}, []string{"cotangent 0 is f64[2], output 0 is f64[3]"}},
		{"hvp-shape", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64, 3)
			return autodiff.HVP(ops.Sum(x), x, g.Input("v", tensor.Float64, 2))
		}, []string{"v is f64[2], x is f64[3]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			n := c.build(g)
			if n.Valid() || g.Err() == nil {
				t.Fatalf("no error (node %v)", n)
			}
			msg := g.Err().Error()
			if !strings.HasPrefix(msg, "autodiff_test.go:") {
				t.Errorf("error %q does not name this file's call site", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			var ge *graph.Error
			if !errors.As(g.Err(), &ge) {
				t.Errorf("not a *graph.Error")
			}
		})
	}
}

// TestOnlyRequestedGradients: compiling Grad(loss, w1, w2) for an MLP
// executes no gradient with respect to the input batch x: no step
// produces a value of x's shape, and the backward pass has exactly three
// matrix products (dW2, the hidden-layer cotangent, dW1).
func TestOnlyRequestedGradients(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 64, 784)
	labels := g.Input("labels", tensor.Float32, 64, 10)
	w1 := g.Variable("w1", tensor.Zeros(tensor.Float32, 784, 256))
	w2 := g.Variable("w2", tensor.Zeros(tensor.Float32, 256, 10))
	h := ops.Relu(ops.MatMul(x, w1))
	logits := ops.MatMul(h, w2)
	loss := ops.Neg(ops.Mean(ops.Sum(ops.Mul(labels, ops.LogSoftmax(logits, -1)), -1)))
	grads := autodiff.Grad(loss, w1, w2)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	be, _ := cpu.New()
	defer be.Close()
	p, err := exec.Compile(be, append([]*graph.Node{loss}, grads...))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	matmuls := 0
	for _, s := range p.Plan().Steps {
		if s.Kind != exec.KernelStep {
			continue
		}
		if s.Node.Shape().Equal(x.Shape()) {
			t.Errorf("step %s computes a value of x's shape: a gradient with respect to x", s.Node)
		}
		if s.Node.Op() == ops.OpMatMul {
			matmuls++
		}
	}
	if matmuls != 5 { // 2 forward + 3 backward
		t.Errorf("%d matrix products, want 5:\n%s", matmuls, p.Plan().Format())
	}
}

// TestLinearRegression fits y = 3x - 2 (plus noise-free data) by gradient
// descent with exec.Update: after 200 steps of learning rate 0.1 on the
// mean squared error, the loss is below 1e-4 and the fit within 1e-2 of
// (3, -2). (Bound from the convergence rate: the loss contracts by at
// least (1-0.1*lambda_min)^2 per step with lambda_min ~ 0.3 here.)
func TestLinearRegression(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 32, 1)
	y := g.Input("y", tensor.Float64, 32, 1)
	w := g.Variable("w", tensor.Zeros(tensor.Float64, 1, 1))
	b := g.Variable("b", tensor.Zeros(tensor.Float64, 1))
	pred := ops.Add(ops.MatMul(x, w), b)
	loss := ops.Mean(ops.Square(ops.Sub(pred, y)))
	gr := autodiff.Grad(loss, w, b)
	lr := ops.Scalar(loss, 0.1)
	be, _ := cpu.New()
	defer be.Close()
	p, err := exec.Compile(be, []*graph.Node{loss},
		exec.Update(w, ops.Sub(w, ops.Mul(lr, gr[0]))),
		exec.Update(b, ops.Sub(b, ops.Mul(lr, gr[1]))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	xs, ys := make([]float64, 32), make([]float64, 32)
	for i := range xs {
		xs[i] = float64(i)/16 - 1
		ys[i] = 3*xs[i] - 2
	}
	xt, _ := tensor.FromFloat64s(tensor.Float64, xs, 32, 1)
	yt, _ := tensor.FromFloat64s(tensor.Float64, ys, 32, 1)
	var first, last float64
	for step := 0; step < 200; step++ {
		out, err := p.Run(context.Background(), exec.Feeds{x: xt, y: yt})
		if err != nil {
			t.Fatal(err)
		}
		if step == 0 {
			first = out[0].Float64(0)
		}
		last = out[0].Float64(0)
	}
	if last > 1e-4 || last >= first {
		t.Errorf("loss went from %v to %v; want below 1e-4", first, last)
	}
	wv, _ := p.Read(w)
	bv, _ := p.Read(b)
	if math.Abs(wv.Float64(0)-3) > 1e-2 || math.Abs(bv.Float64(0)+2) > 1e-2 {
		t.Errorf("fit w=%v b=%v, want 3 and -2", wv, bv)
	}
}

// TestSoftmaxCrossEntropy: stable for logits of magnitude 1e4, and the
// gradient with respect to the logits is softmax - one-hot.
// Row 0: logits 1e4 - [0,1,2], label 0: loss = -log softmax_0 =
// log(1+e^-1+e^-2) = 0.40760596444438 (Python float64), gradient
// softmax - e0 = [0.66524096-1, 0.24472847, 0.09003057].
// Row 1: logits [-1e4, 0, 1e4], label 1: loss = 1e4 (softmax is [0, e^-1e4,
// 1] to double precision), gradient [0, -1, 1].
func TestSoftmaxCrossEntropy(t *testing.T) {
	g := graph.New()
	logits := g.Input("logits", tensor.Float64, 2, 3)
	labels := g.Input("labels", tensor.Int64, 2)
	loss := ops.SparseSoftmaxCrossEntropy(logits, labels)
	d := autodiff.Grad(ops.Sum(loss), logits)[0]
	lv, _ := tensor.FromFloat64s(tensor.Float64, []float64{1e4, 1e4 - 1, 1e4 - 2, -1e4, 0, 1e4}, 2, 3)
	yv, _ := tensor.FromFloat64s(tensor.Int64, []float64{0, 1}, 2)
	out := run(t, []*graph.Node{loss, d}, exec.Feeds{logits: lv, labels: yv})
	for i, want := range []float64{0.4076059644443804, 1e4} {
		if got := out[0].Float64(i); !near(got, want) {
			t.Errorf("loss[%d] = %v, want %v", i, got, want)
		}
	}
	p := []float64{0.6652409557748218, 0.24472847105479764, 0.09003057317038046}
	for i, want := range []float64{p[0] - 1, p[1], p[2], 0, -1, 1} {
		if got := out[1].Float64(i); !near(got, want) {
			t.Errorf("gradient[%d] = %v, want %v", i, got, want)
		}
	}
}

package exec_test

import (
	"context"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// sinT is a tensor of dt holding scale·sin(i+1).
func sinT(dt tensor.DType, scale float64, dims ...int) *tensor.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = scale * math.Sin(float64(i)+1)
	}
	t, _ := tensor.FromFloat64s(dt, v, dims...)
	return t
}

// rnnScan: h = tanh(h @ (w*2) + x_t), ys = h; w*2 is loop-invariant (the
// 2 is a constant of the body, so the builder keeps the Mul in it).
func rnnScan(g *graph.Graph, dt tensor.DType, opts ...ops.LoopOption) (h0, xs, w *graph.Node, carry, ys []*graph.Node) {
	h0 = g.Input("h0", dt, 2, 3)
	xs = g.Input("xs", dt, 4, 2, 3)
	w = g.Input("w", dt, 3, 3)
	carry, ys = ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(ops.MatMul(c[0], ops.Mul(w, ops.Scalar(c[0], 2))), x[0]))
		return []*graph.Node{h}, []*graph.Node{h}
	}, []*graph.Node{h0}, []*graph.Node{xs}, -1, opts...)
	return
}

func rnnFeeds(dt tensor.DType, h0, xs, w *graph.Node) exec.Feeds {
	return exec.Feeds{h0: sinT(dt, 0.5, 2, 3), xs: sinT(dt, 1, 4, 2, 3), w: sinT(dt, 0.4, 3, 3)}
}

// bodyOps lists the ops of a body plan's kernel steps, fused groups
// spelled out.
func bodyOps(bp *exec.BodyPlan) string {
	var b strings.Builder
	for _, s := range bp.Steps {
		if s.Kind != exec.KernelStep {
			continue
		}
		if a, ok := s.Node.Attr().(*opdef.FusedAttr); ok {
			b.WriteString("Fused[" + strings.Join(a.OpNames(), ",") + "] ")
			continue
		}
		b.WriteString(s.Node.Op().String() + " ")
	}
	return b.String()
}

// loopOf returns the plan's one control-flow node and its body plans.
func loopOf(t *testing.T, p *exec.Plan) (*graph.Node, []*exec.BodyPlan) {
	t.Helper()
	if len(p.Bodies) != 1 {
		t.Fatalf("%d control-flow nodes in the plan, want 1", len(p.Bodies))
	}
	for n, b := range p.Bodies {
		return n, b
	}
	return nil, nil
}

func checkNear(t *testing.T, what string, got, want *tensor.Tensor, tol float64) {
	t.Helper()
	if !got.Shape().Equal(want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	for i := range got.Size() {
		if g, w := got.Float64(i), want.Float64(i); math.Abs(g-w) > tol*(1+math.Abs(w)) {
			t.Fatalf("%s element %d: %v, want %v (exectest.Eval)", what, i, g, w)
		}
	}
}

// TestHoist: the invariant w*2 leaves the Scan's body (one more operand,
// a capture; the body keeps MatMul and the fused tail) and the values do
// not change; with hoist off it stays in the body.
func TestHoist(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	h0, xs, w, carry, ys := rnnScan(g, tensor.Float64)
	outs := []*graph.Node{carry[0], ys[0]}
	feeds := rnnFeeds(tensor.Float64, h0, xs, w)
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, hoist := range []bool{true, false} {
		var opts []exec.Option
		if !hoist {
			opts = append(opts, exec.DisablePasses("hoist"))
		}
		p, got := compileRun(t, be, outs, feeds, opts...)
		for i := range outs {
			checkNear(t, "output", got[i], want[i], 1e-12)
		}
		n, bodies := loopOf(t, p.Plan())
		body := bodyOps(bodies[0])
		inBody := regexp.MustCompile(`(^|[ \[,])Mul[ ,\]]`).MatchString(body)
		if hoist {
			if inBody || len(n.Inputs()) != 4 {
				t.Errorf("hoisted: the Scan has %d operands (want 4: h0, xs, w, w*2) and its body runs %s(the Mul must be gone)", len(n.Inputs()), body)
			}
		} else if !inBody || len(n.Inputs()) != 3 {
			t.Errorf("not hoisted: the Scan has %d operands (want 3) and its body runs %s(want a Mul)", len(n.Inputs()), body)
		}
	}
}

// TestHoistKeepsFallibleOps: a Gather of captures in a While's body stays
// in it (a While that runs no iteration must not fail on its index).
func TestHoistKeepsFallibleOps(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	table := g.Input("table", tensor.Float32, 3, 2)
	idx := g.Input("idx", tensor.Int32, 1)
	out := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Less(ops.Sum(c[0]), ops.Scalar(c[0], -1e9)) // never true: no iteration
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Add(c[0], ops.Gather(table, ops.Add(idx, ops.Cast(ops.Scalar(c[0], 0), tensor.Int32)), 0))}
	}, g.Const(tensor.Zeros(tensor.Float32, 1, 2)))
	bad, _ := tensor.New([]int32{7}, 1)
	p, res := compileRun(t, be, out, exec.Feeds{table: sinT(tensor.Float32, 1, 3, 2), idx: bad})
	if res[0].Float64(0) != 0 || res[0].Float64(1) != 0 {
		t.Errorf("While without iterations gave %v, want the zero init", res[0])
	}
	_, bodies := loopOf(t, p.Plan())
	if body := bodyOps(bodies[1]); !strings.Contains(body, "Gather") {
		t.Errorf("the body runs %s: the Gather was hoisted", body)
	}
}

// TestLoopCSE: a Scan that Extends another (same operands, one more ys:
// what a gradient's forward Scan saving residuals looks like) replaces
// it: one loop runs, and the results of both are right.
func TestLoopCSE(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	h0, xs, w, carry, ys := rnnScan(g, tensor.Float64)
	orig := carry[0].Input(0)
	// The extension: the same body with the pre-activation as an extra y.
	_, ys2 := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		pre := ops.Add(ops.MatMul(c[0], ops.Mul(w, ops.Scalar(c[0], 2))), x[0])
		h := ops.Tanh(pre)
		return []*graph.Node{h}, []*graph.Node{h, pre}
	}, []*graph.Node{h0}, []*graph.Node{xs}, -1)
	ext := ys2[0].Input(0)
	a := *ext.Attr().(*opdef.ControlAttr)
	a.Extends = orig.Attr().(*opdef.ControlAttr)
	a.NewID()
	m := ops.Apply(ops.OpScan, &a, ext.Inputs()...)
	ext2 := ops.TupleGets(m)
	outs := []*graph.Node{carry[0], ys[0], ext2[2]}
	feeds := rnnFeeds(tensor.Float64, h0, xs, w)
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false} {
		var opts []exec.Option
		if !on {
			opts = append(opts, exec.DisablePasses("loopcse"))
		}
		p, got := compileRun(t, be, outs, feeds, opts...)
		for i := range outs {
			checkNear(t, "output", got[i], want[i], 1e-12)
		}
		loops := len(p.Plan().Bodies)
		if on && loops != 1 || !on && loops != 2 {
			t.Errorf("loopcse %v: %d loops in the plan", on, loops)
		}
	}
}

// TestTupleGetIsAView: a loop result read by another kernel is an alias
// step at its offset in the tuple; one that is an output is a copy
// kernel (TupleGet) into the output (which Neg then reads).
func TestTupleGetIsAView(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	h0, xs, w, carry, ys := rnnScan(g, tensor.Float32)
	outs := []*graph.Node{ops.Neg(carry[0]), ops.Exp(ys[0]), carry[0]}
	feeds := rnnFeeds(tensor.Float32, h0, xs, w)
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	p, got := compileRun(t, be, outs, feeds)
	for i := range outs {
		checkNear(t, "output", got[i], want[i], 1e-5)
	}
	plan := p.Plan()
	views, copies := 0, 0
	for _, s := range plan.Steps {
		if s.Node.Op() != ops.OpTupleGet {
			continue
		}
		off := s.Node.Attr().(opdef.TupleAttr).Offset
		switch {
		case s.Kind == exec.AliasStep:
			views++
			if v := plan.Values[s.Out]; v.ViewOffset != off || v.Alias != s.In[0] {
				t.Errorf("TupleGet view at %d of value %d, want %d of %d", v.ViewOffset, v.Alias, off, s.In[0])
			}
		case s.Kind == exec.KernelStep && plan.Values[s.Out].Storage == exec.InOutput:
			copies++
		}
	}
	if views != 1 || copies != 1 {
		t.Errorf("%d TupleGet views and %d copies into outputs, want 1 and 1:\n%s", views, copies, plan.Format())
	}
}

// TestPrecisionConvertsBodies: a float64 graph with a Scan and a Cond
// compiled with Precision(Float32) computes its bodies in float32 and
// returns float64 results close to the reference.
func TestPrecisionConvertsBodies(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	h0, xs, w, carry, ys := rnnScan(g, tensor.Float64, ops.ScanReverse())
	r := ops.Cond(ops.Greater(ops.Sum(carry[0]), ops.Scalar(carry[0], -100)), func(x []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(x[0], ops.Scalar(x[0], 3))}
	}, func(x []*graph.Node) []*graph.Node { return x }, ys[0])
	outs := []*graph.Node{carry[0], ys[0], r[0]}
	feeds := rnnFeeds(tensor.Float64, h0, xs, w)
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	p, got := compileRun(t, be, outs, feeds, exec.Precision(tensor.Float32))
	for i := range outs {
		if got[i].DType() != tensor.Float64 {
			t.Fatalf("output %d is %v, want float64", i, got[i].DType())
		}
		checkNear(t, "output", got[i], want[i], 1e-5)
	}
	for n, bodies := range p.Plan().Bodies {
		for _, bp := range bodies {
			for _, v := range bp.Inputs {
				if dt := bp.Values[v].Node.DType(); dt == tensor.Float64 {
					t.Errorf("a body of %s reads a float64 parameter under Precision(Float32)", n.Op())
				}
			}
		}
	}
}

// TestBodyCompileErrorNamesSite: a body value too large for the memory
// limit is refused at Compile naming the body's node and the user's line.
func TestBodyCompileErrorNamesSite(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	c, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		big := ops.BroadcastTo(ops.Exp(c[0]), 1000, 4) // 16000 bytes
		return []*graph.Node{ops.Sum(big, 0)}, nil
	}, []*graph.Node{x}, nil, 3)
	_, err := exec.Compile(be, c, exec.MemoryLimit(8000))
	if !errors.Is(err, tensor.ErrTooLarge) {
		t.Fatalf("Compile: %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"body of Scan", "control_test.go:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestCheckNumericsBlamesLoop: a Scan whose result overflows from finite
// operands is named by CheckNumerics (its op and call site).
func TestCheckNumericsBlamesLoop(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	c, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Exp(ops.Exp(c[0]))}, nil
	}, []*graph.Node{x}, nil, 3)
	p, err := exec.Compile(be, c, exec.CheckNumerics())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Run(context.Background(), exec.Feeds{x: sinT(tensor.Float32, 3, 2)})
	if !errors.Is(err, exec.ErrNonFinite) || !strings.Contains(err.Error(), "Scan[result 0]") || !strings.Contains(err.Error(), "control_test.go:") {
		t.Errorf("Run: %v, want ErrNonFinite naming the Scan and its line", err)
	}
}

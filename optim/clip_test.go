package optim_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// clipRun clips the two constant gradients a and b (float64) to maxNorm
// and returns the clipped values and the norm.
func clipRun(t *testing.T, a, b []float64, maxNorm float64) (ca, cb []float64, norm float64) {
	t.Helper()
	g := graph.New()
	at, _ := tensor.FromFloat64s(tensor.Float64, a)
	bt, _ := tensor.FromFloat64s(tensor.Float64, b)
	clipped, n, err := optim.ClipGlobalNorm([]*graph.Node{g.Const(at), g.Const(bt)}, maxNorm)
	if err != nil {
		t.Fatal(err)
	}
	be, _ := cpu.New()
	defer be.Close()
	p, err := exec.Compile(be, append(clipped, n))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out, err := p.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return out[0].Float64s(), out[1].Float64s(), out[2].Float64(0)
}

// TestClipGlobalNorm: gradients (3, 0) and (4) have the global norm
// sqrt(9+16) = 5 (hand); clipped to 1 every element is divided by 5:
// (0.6, 0) and (0.8). A bound of 10 leaves them unchanged, bit for bit
// (the factor is 10/max(5, 10) = 1 exactly), and so does a bound of 5.
func TestClipGlobalNorm(t *testing.T) {
	ca, cb, n := clipRun(t, []float64{3, 0}, []float64{4}, 1)
	if n != 5 {
		t.Errorf("norm %v, want 5", n)
	}
	want := []float64{0.6, 0, 0.8}
	got := append(ca, cb...)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("clipped to 1: %v, want %v", got, want)
			break
		}
	}
	for _, bound := range []float64{10, 5} {
		ca, cb, _ := clipRun(t, []float64{3, 0}, []float64{4}, bound)
		if ca[0] != 3 || ca[1] != 0 || cb[0] != 4 {
			t.Errorf("clipped to %v: %v %v, want unchanged (3, 0) (4)", bound, ca, cb)
		}
	}
	// All-zero gradients: the norm is 0 and the factor 1 (no 0/0).
	ca, cb, n = clipRun(t, []float64{0, 0}, []float64{0}, 1)
	if n != 0 || ca[0] != 0 || ca[1] != 0 || cb[0] != 0 {
		t.Errorf("zero gradients: %v %v norm %v", ca, cb, n)
	}
}

// TestClipGlobalNormTrains: clipping inside a training step. The loss
// sum(w*g) with g = (30, 40) has the gradient g, of norm 50; clipped to 1
// it is (0.6, 0.8), so one SGD step with LR 1 moves w from 0 to
// (-0.6, -0.8) (hand).
func TestClipGlobalNormTrains(t *testing.T) {
	g := graph.New()
	gt, _ := tensor.FromFloat64s(tensor.Float64, []float64{30, 40})
	w := g.Variable("w", tensor.Zeros(tensor.Float64, 2))
	loss := ops.Sum(ops.Mul(w, g.Const(gt)))
	grads, _, err := optim.ClipGlobalNorm(autodiff.Grad(loss, w), 1)
	if err != nil {
		t.Fatal(err)
	}
	ups, err := optim.SGD{LR: 1}.Apply([]*graph.Node{w}, grads)
	if err != nil {
		t.Fatal(err)
	}
	be, _ := cpu.New()
	defer be.Close()
	p, err := exec.Compile(be, []*graph.Node{loss}, ups...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v, _ := p.Read(w)
	if got := v.Float64s(); math.Abs(got[0]+0.6) > 1e-15 || math.Abs(got[1]+0.8) > 1e-15 {
		t.Errorf("w after one clipped step: %v, want [-0.6 -0.8]", got)
	}
}

func TestClipGlobalNormErrors(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	i := g.Input("i", tensor.Int32, 2)
	other := graph.New().Input("y", tensor.Float32, 2)
	for _, c := range []struct {
		grads []*graph.Node
		max   float64
		want  string
	}{
		{nil, 1, "no gradients"},
		{[]*graph.Node{x}, 0, "maxNorm must be positive"},
		{[]*graph.Node{x}, math.Inf(1), "maxNorm must be positive"},
		{[]*graph.Node{x}, math.NaN(), "maxNorm must be positive"},
		{[]*graph.Node{x, i}, 1, "gradient 1 is i32[2]"},
		{[]*graph.Node{x, other}, 1, "another graph"},
		{[]*graph.Node{x, nil}, 1, "gradient 1 is nil"},
	} {
		if _, _, err := optim.ClipGlobalNorm(c.grads, c.max); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, %v: error %v, want %q", c.grads, c.max, err, c.want)
		}
	}
}

package optim_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// dpModel is a 3-4-2 tanh MLP with a squared-error loss on a batch of b
// rows; it returns the step's options and the parameters.
func dpModel(t *testing.T, dt tensor.DType, b int, dp *optim.DataParallel, opt optim.Optimizer) (x, y *graph.Node, params []*graph.Node, opts []exec.Option) {
	t.Helper()
	g := graph.New()
	r := optim.NewRand(7)
	w1, _ := optim.GlorotUniform(r, dt, 3, 4)
	w2, _ := optim.GlorotUniform(r, dt, 4, 2)
	b1, _ := optim.Uniform(r, -0.1, 0.1, dt, 4)
	W1, W2, B1 := g.Variable("w1", w1), g.Variable("w2", w2), g.Variable("b1", b1)
	x = g.Input("x", dt, b, 3)
	y = g.Input("y", dt, b, 2)
	d := ops.Sub(ops.MatMul(ops.Tanh(ops.Add(ops.MatMul(x, W1), B1)), W2), y)
	loss := ops.Mean(ops.Mul(d, d))
	params = []*graph.Node{W1, B1, W2}
	var err error
	if dp != nil {
		opts, err = optim.MinimizeDataParallel(opt, *dp, loss, params...)
	} else {
		opts, err = optim.Minimize(opt, loss, params...)
	}
	if err != nil {
		t.Fatal(err)
	}
	return x, y, params, opts
}

func dpBatch(dt tensor.DType, step, lo, hi int) (*tensor.Tensor, *tensor.Tensor) {
	xs := make([]float64, 0, (hi-lo)*3)
	ys := make([]float64, 0, (hi-lo)*2)
	for i := lo; i < hi; i++ {
		for k := range 3 {
			xs = append(xs, math.Sin(float64(step*31+i*7+k)))
		}
		ys = append(ys, math.Cos(float64(step+i)), float64(i%2))
	}
	xt, _ := tensor.FromFloat64s(dt, xs, hi-lo, 3)
	yt, _ := tensor.FromFloat64s(dt, ys, hi-lo, 2)
	return xt, yt
}

// TestDataParallelMatchesOneProcess: two ranks, each on half of a batch
// of 8, end with the same weights as one process on the whole batch.
func TestDataParallelMatchesOneProcess(t *testing.T) {
	for _, c := range []struct {
		dt  tensor.DType
		tol float64
	}{
		// The whole-batch mean and the mean of the halves' means differ
		// only in rounding; measured after 10 Adam steps: 5.6e-17
		// (float64) and 6e-8 (float32), about one ulp. Bounds: 20 ulp.
		{tensor.Float64, 2e-15},
		{tensor.Float32, 1.2e-6},
	} {
		const steps, batch = 10, 8
		be, err := cpu.New()
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		opt := optim.Adam{LR: 0.05}
		// One process.
		x, y, params, opts := dpModel(t, c.dt, batch, nil, opt)
		p, err := exec.Compile(be, params, opts...)
		if err != nil {
			t.Fatal(err)
		}
		for s := range steps {
			xb, yb := dpBatch(c.dt, s, 0, batch)
			if _, err := p.Run(context.Background(), exec.Feeds{x: xb, y: yb}); err != nil {
				t.Fatal(err)
			}
		}
		want := make([]*tensor.Tensor, len(params))
		for i, w := range params {
			want[i], _ = p.Read(w)
		}
		p.Close()
		// Two ranks (buckets of 40 bytes: the float64 run has several).
		comms, _ := dist.NewGroup(2, 10*time.Second)
		got := make([][]*tensor.Tensor, 2)
		var wg sync.WaitGroup
		for r := range 2 {
			dp := &optim.DataParallel{Size: 2, BucketBytes: 40}
			x, y, params, opts := dpModel(t, c.dt, batch/2, dp, opt)
			p, err := exec.Compile(be, params, append(opts, exec.WithCommunicator(comms[r]))...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for s := range steps {
					xb, yb := dpBatch(c.dt, s, r*batch/2, (r+1)*batch/2)
					if _, err := p.Run(context.Background(), exec.Feeds{x: xb, y: yb}); err != nil {
						t.Error(err)
						return
					}
				}
				for _, w := range params {
					v, _ := p.Read(w)
					got[r] = append(got[r], v)
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		for i := range want {
			a, b := got[0][i].Bytes(), got[1][i].Bytes()
			if string(a) != string(b) {
				t.Errorf("%v: parameter %d differs between the ranks (it must be the same bits)", c.dt, i)
			}
			worst := 0.0
			for k := range want[i].Size() {
				w, v := want[i].Float64(k), got[0][i].Float64(k)
				worst = max(worst, math.Abs(w-v)/max(1, math.Abs(w)))
			}
			if worst > c.tol {
				t.Errorf("%v: parameter %d: largest difference from one process %.3g, bound %.1g", c.dt, i, worst, c.tol)
			}
			t.Logf("%v: parameter %d: largest relative difference from one process %.3g", c.dt, i, worst)
		}
	}
}

func TestDataParallelBuckets(t *testing.T) {
	g := graph.New()
	a := g.Input("a", tensor.Float32, 3)    // 12 bytes
	b := g.Input("b", tensor.Float32, 2, 2) // 16 bytes
	c := g.Input("c", tensor.Float64, 2)    // another dtype: its own bucket
	got, err := optim.DataParallel{Size: 1, BucketBytes: 32}.AllReduce([]*graph.Node{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range got {
		if !n.Shape().Equal([]*graph.Node{a, b, c}[i].Shape()) {
			t.Errorf("gradient %d comes back as %s", i, n.Type())
		}
	}
	// c alone is one AllReduce of it; a and b share one of a Concat.
	if got[2].Op() != ops.OpAllReduce || got[2].Input(0) != c {
		t.Errorf("the float64 gradient: %s", got[2].Op())
	}
	be, _ := cpu.New()
	defer be.Close()
	p, err := exec.Compile(be, got, exec.WithCommunicator(dist.Local{}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	av, _ := tensor.New([]float32{1, 2, 3}, 3)
	bv, _ := tensor.New([]float32{4, 5, 6, 7}, 2, 2)
	cv, _ := tensor.New([]float64{8, 9}, 2)
	outs, err := p.Run(context.Background(), exec.Feeds{a: av, b: bv, c: cv})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []*tensor.Tensor{av, bv, cv} { // one rank: the mean is the value
		if string(outs[i].Bytes()) != string(want.Bytes()) {
			t.Errorf("gradient %d: %v, want %v", i, outs[i], want)
		}
	}
	var kinds []string
	for _, s := range p.Plan().Steps {
		kinds = append(kinds, s.Node.Op().String())
	}
	if n := strings.Count(strings.Join(kinds, " "), "AllReduce"); n != 2 {
		t.Errorf("%d AllReduce steps (%v), want 2 buckets", n, kinds)
	}
	for _, bad := range []optim.DataParallel{{Size: 0}, {Size: 2, BucketBytes: -1}} {
		if _, err := bad.AllReduce([]*graph.Node{a}); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := (optim.DataParallel{Size: 1}).AllReduce([]*graph.Node{g.Input("i", tensor.Int32, 2)}); err == nil {
		t.Error("an int32 gradient: no error")
	}
	// Buckets fill in readiness order, the first-built gradient first:
	// with room for two, x1 and x2 share one and x3 (built last, ready
	// last) goes alone, whatever order the caller lists them in.
	x1 := ops.Neg(g.Input("x1", tensor.Float32, 3))
	x2 := ops.Neg(g.Input("x2", tensor.Float32, 3))
	x3 := ops.Neg(g.Input("x3", tensor.Float32, 3))
	out, err := optim.DataParallel{Size: 1, BucketBytes: 24}.AllReduce([]*graph.Node{x3, x1, x2})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Op() != ops.OpAllReduce || out[0].Input(0) != x3 {
		t.Errorf("x3, ready last, is %s of %s, want an AllReduce of its own", out[0].Op(), out[0].Input(0).Op())
	}
	if out[1].Op() == ops.OpAllReduce || out[2].Op() == ops.OpAllReduce {
		t.Errorf("x1 and x2 come back as %s and %s, want slices of one bucket", out[1].Op(), out[2].Op())
	}
}

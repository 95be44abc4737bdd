package mpi

import (
	"context"
	"hash/fnv"
	"math"
	"testing"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// TestRankProgram runs collective ops in a compiled Program over MPI:
// rank r holds x = [r+1, 10(r+1)]; the sum is [3, 30] and the gather
// [1, 10, 2, 20] on both ranks (hand calculation).
func TestRankProgram(t *testing.T) {
	c := rank(t)
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	p, err := exec.Compile(be, []*graph.Node{ops.AllReduce(x, ops.ReduceSum, 2), ops.AllGather(x, 0, 2)}, exec.WithCommunicator(c))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r := float32(c.Rank() + 1)
	xv, _ := tensor.New([]float32{r, 10 * r}, 2)
	outs, err := p.Run(context.Background(), exec.Feeds{x: xv})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{3, 30} {
		if got := outs[0].Float64(i); got != want {
			t.Errorf("rank %d: AllReduce[%d] = %v, want %v", c.Rank(), i, got, want)
		}
	}
	for i, want := range []float64{1, 10, 2, 20} {
		if got := outs[1].Float64(i); got != want {
			t.Errorf("rank %d: AllGather[%d] = %v, want %v", c.Rank(), i, got, want)
		}
	}
}

// TestRankDataParallel trains a small MLP data-parallel on 2 MPI ranks,
// each on half of every batch of 8, and checks the weights: the same
// bits on both ranks (their hashes pass dist.CheckSame), and within 20
// ulp of one process training on the whole batches (computed on each
// rank without a communicator; measured: about one ulp).
func TestRankDataParallel(t *testing.T) {
	c := rank(t)
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	const steps, batch = 10, 8
	train := func(b int, dp *optim.DataParallel, lo func(step int) int) []*tensor.Tensor {
		g := graph.New()
		r := optim.NewRand(7)
		w1, _ := optim.GlorotUniform(r, tensor.Float32, 3, 4)
		w2, _ := optim.GlorotUniform(r, tensor.Float32, 4, 2)
		W1, W2 := g.Variable("w1", w1), g.Variable("w2", w2)
		x, y := g.Input("x", tensor.Float32, b, 3), g.Input("y", tensor.Float32, b, 2)
		d := ops.Sub(ops.MatMul(ops.Tanh(ops.MatMul(x, W1)), W2), y)
		loss := ops.Mean(ops.Mul(d, d))
		opt := optim.Adam{LR: 0.05}
		var opts []exec.Option
		var err error
		if dp != nil {
			opts, err = optim.MinimizeDataParallel(opt, *dp, loss, W1, W2)
			opts = append(opts, exec.WithCommunicator(c))
		} else {
			opts, err = optim.Minimize(opt, loss, W1, W2)
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := exec.Compile(be, []*graph.Node{loss}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		for s := range steps {
			xs, ys := make([]float32, 0, b*3), make([]float32, 0, b*2)
			for i := lo(s); i < lo(s)+b; i++ {
				for k := range 3 {
					xs = append(xs, float32(math.Sin(float64(s*31+i*7+k))))
				}
				ys = append(ys, float32(math.Cos(float64(s+i))), float32(i%2))
			}
			xt, _ := tensor.New(xs, b, 3)
			yt, _ := tensor.New(ys, b, 2)
			if _, err := p.Run(context.Background(), exec.Feeds{x: xt, y: yt}); err != nil {
				t.Fatal(err)
			}
		}
		a, _ := p.Read(W1)
		b2, _ := p.Read(W2)
		return []*tensor.Tensor{a, b2}
	}
	one := train(batch, nil, func(int) int { return 0 })
	half := batch / 2
	got := train(half, &optim.DataParallel{Size: 2}, func(int) int { return c.Rank() * half })
	h := fnv.New64a()
	for _, w := range got {
		h.Write(w.Bytes())
	}
	if err := dist.CheckSame(context.Background(), c, h.Sum64(), "trained weights"); err != nil {
		t.Errorf("rank %d: %v", c.Rank(), err)
	}
	for i := range got {
		worst := 0.0
		for k := range got[i].Size() {
			w, v := one[i].Float64(k), got[i].Float64(k)
			worst = max(worst, math.Abs(w-v)/max(1, math.Abs(w)))
		}
		if worst > 1.2e-6 { // 20 float32 ulp
			t.Errorf("rank %d: parameter %d differs from one process by %.3g", c.Rank(), i, worst)
		}
	}
}

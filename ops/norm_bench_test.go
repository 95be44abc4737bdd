package ops_test

import (
	"context"
	"math"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkNorm times the normalisation composites forward and backward
// (the gradients of sum(y·w) with respect to x, gamma and beta) on one
// CPU thread: LayerNorm over the last axis of [256, 1024], and BatchNorm
// in training (ops.BatchStats, then ops.BatchNorm with them) over
// [64, 32, 28, 28]. PyTorch's side (/usr/bin/python3, torch 1.13; the
// median of 5 timings of 50 forwards or 20 forward+backwards):
//
//	torch.set_num_threads(1)
//	mod = torch.nn.LayerNorm(1024)  # or torch.nn.BatchNorm2d(32), in train()
//	x = torch.sin(torch.arange(n) * 0.37).reshape(shape); w = x.clone()
//	with torch.no_grad(): mod(x)                           # forward
//	xg = x.clone().requires_grad_(); (mod(xg) * w).sum().backward()  # forward+backward
func BenchmarkNorm(b *testing.B) {
	for _, c := range []struct {
		name  string
		shape []int
		f     func(x, gamma, beta *graph.Node) *graph.Node
	}{
		{"LayerNorm/256x1024", []int{256, 1024}, func(x, gamma, beta *graph.Node) *graph.Node { return ops.LayerNorm(x, gamma, beta, 1e-5) }},
		{"BatchNormTrain/64x32x28x28", []int{64, 32, 28, 28}, func(x, gamma, beta *graph.Node) *graph.Node {
			m, v := ops.BatchStats(x)
			return ops.BatchNorm(x, gamma, beta, m, v, 1e-5)
		}},
	} {
		for _, fwdOnly := range []bool{true, false} {
			name := c.name + "/fwd+bwd"
			if fwdOnly {
				name = c.name + "/fwd"
			}
			b.Run(name, func(b *testing.B) {
				g := graph.New()
				x := g.Input("x", tensor.Float32, c.shape...)
				pdim := c.shape[len(c.shape)-1]
				if len(c.shape) == 4 {
					pdim = c.shape[1]
				}
				gamma := g.Input("gamma", tensor.Float32, pdim)
				beta := g.Input("beta", tensor.Float32, pdim)
				w := g.Input("w", tensor.Float32, c.shape...)
				y := c.f(x, gamma, beta)
				outs := []*graph.Node{y}
				if !fwdOnly {
					outs = autodiff.Grad(ops.Sum(ops.Mul(y, w)), x, gamma, beta)
				}
				be, err := cpu.New(cpu.Threads(1))
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				p, err := exec.Compile(be, outs, exec.IgnoreUnusedFeeds())
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				fill := func(shape ...int) *tensor.Tensor {
					t, _ := tensor.Make(tensor.Float32, shape...)
					for i := range t.Size() {
						t.SetFloat64(i, math.Sin(float64(i)*0.37))
					}
					return t
				}
				feeds := exec.Feeds{x: fill(c.shape...), gamma: fill(pdim), beta: fill(pdim)}
				if !fwdOnly {
					feeds[w] = fill(c.shape...)
				}
				res := make([]*tensor.Tensor, len(outs))
				for i, o := range outs {
					res[i], _ = tensor.Make(o.DType(), o.Shape()...)
				}
				ctx := context.Background()
				if err := p.RunInto(ctx, feeds, res); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for range b.N {
					if err := p.RunInto(ctx, feeds, res); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

package autodiff_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkScanGradRNN times a tanh RNN over a Scan (hidden 128, batch
// 16, 200 steps, float32): the forward alone, and forward plus the
// gradient with respect to the weights, saving residuals (saved) or
// recomputing each step from the saved carries (remat).
func BenchmarkScanGradRNN(b *testing.B) {
	const hid, batch, steps = 128, 16, 200
	for _, mode := range []string{"forward", "saved", "remat"} {
		b.Run(mode, func(b *testing.B) {
			g := graph.New()
			xs := g.Input("xs", tensor.Float32, steps, batch, hid)
			h0 := g.Input("h0", tensor.Float32, batch, hid)
			w := g.Input("w", tensor.Float32, hid, hid)
			var opts []ops.LoopOption
			if mode == "remat" {
				opts = append(opts, ops.ScanRemat())
			}
			c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Tanh(ops.Add(ops.MatMul(c[0], w), xt[0]))
				return []*graph.Node{h}, []*graph.Node{ops.Mul(h, h)}
			}, []*graph.Node{h0}, []*graph.Node{xs}, steps, opts...)
			loss := ops.Add(ops.Sum(ys[0]), ops.Sum(c[0]))
			outs := []*graph.Node{loss}
			if mode != "forward" {
				outs = append(outs, autodiff.Grad(loss, w, h0)...)
			}
			if err := g.Err(); err != nil {
				b.Fatal(err)
			}
			be, err := cpu.New()
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			prog, err := exec.Compile(be, outs)
			if err != nil {
				b.Fatal(err)
			}
			defer prog.Close()
			r := rand.New(rand.NewPCG(1, 2))
			fill := func(s float64, shape ...int) *tensor.Tensor {
				v := make([]float32, tensor.Shape(shape).Size())
				for i := range v {
					v[i] = float32((r.Float64()*2 - 1) * s)
				}
				t, err := tensor.New(v, shape...)
				if err != nil {
					b.Fatal(err)
				}
				return t
			}
			feeds := exec.Feeds{xs: fill(1, steps, batch, hid), h0: fill(1, batch, hid), w: fill(0.1, hid, hid)}
			ctx := context.Background()
			if _, err := prog.Run(ctx, feeds); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := prog.Run(ctx, feeds); err != nil {
					b.Fatal(err)
				}
			}
			// The arena holds the saved residuals: remat saves one stack
			// (the carries) where saved keeps two (the carries and tanh's
			// outputs), 1.6 MB each.
			b.ReportMetric(float64(prog.Plan().ArenaBytes), "arena-B")
		})
	}
}

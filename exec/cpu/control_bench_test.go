package cpu_test

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// gruStep is one GRU step on the hidden state h [batch, hidden] given the
// step's input projections xp [batch, 3·hidden] (x@Wx + b, computed for
// all steps beforehand) and the recurrent weights wh [hidden, 3·hidden]:
// gh = h@Wh; r = σ(xr + ghr); z = σ(xz + ghz); n = tanh(xn + r·ghn);
// h' = (1-z)·n + z·h.
func gruStep(h, xp, wh *graph.Node) *graph.Node {
	gh := ops.Split(ops.MatMul(h, wh), 3, 1)
	x := ops.Split(xp, 3, 1)
	r := ops.Sigmoid(ops.Add(x[0], gh[0]))
	z := ops.Sigmoid(ops.Add(x[1], gh[1]))
	n := ops.Tanh(ops.Add(x[2], ops.Mul(r, gh[2])))
	return ops.Add(ops.Mul(ops.Sub(ops.Scalar(z, 1), z), n), ops.Mul(z, h))
}

// BenchmarkScanGRU runs a GRU over 1000 steps (hidden 256, batch 32)
// three ways: one Run of an ops.Scan; one Run of the same steps unrolled
// into one graph (fused, as a graph without loops compiles); and one Run
// per step from the host, feeding h back. Each iteration is the whole
// sequence.
func BenchmarkScanGRU(b *testing.B) {
	const steps, batch, hidden = 1000, 32, 256
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	h0t := seq(tensor.Float32, 0.5, batch, hidden)
	xst := seq(tensor.Float32, 1, steps, batch, 3*hidden)
	wht := seq(tensor.Float32, 0.05, hidden, 3*hidden)
	ctx := context.Background()

	b.Run("scan", func(b *testing.B) {
		g := graph.New()
		h0 := g.Input("h0", tensor.Float32, batch, hidden)
		xs := g.Input("xs", tensor.Float32, steps, batch, 3*hidden)
		wh := g.Input("wh", tensor.Float32, hidden, 3*hidden)
		c, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{gruStep(c[0], x[0], wh)}, nil
		}, []*graph.Node{h0}, []*graph.Node{xs}, -1)
		runBench(b, be, c, exec.Feeds{h0: h0t, xs: xst, wh: wht})
	})
	b.Run("unrolled", func(b *testing.B) {
		g := graph.New()
		h0 := g.Input("h0", tensor.Float32, batch, hidden)
		xs := g.Input("xs", tensor.Float32, steps, batch, 3*hidden)
		wh := g.Input("wh", tensor.Float32, hidden, 3*hidden)
		h := h0
		for t := range steps {
			h = gruStep(h, ops.Squeeze(ops.Slice(xs, ops.R(t, t+1)), 0), wh)
		}
		runBench(b, be, []*graph.Node{h}, exec.Feeds{h0: h0t, xs: xst, wh: wht})
	})
	b.Run("run-per-step", func(b *testing.B) {
		g := graph.New()
		h := g.Input("h", tensor.Float32, batch, hidden)
		x := g.Input("x", tensor.Float32, batch, 3*hidden)
		wh := g.Input("wh", tensor.Float32, hidden, 3*hidden)
		p, err := exec.Compile(be, []*graph.Node{gruStep(h, x, wh)})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		xsteps := make([]*tensor.Tensor, steps)
		per := batch * 3 * hidden * 4
		all := xst.Bytes()
		for t := range xsteps {
			if xsteps[t], err = tensor.FromBytes(tensor.Float32, all[t*per:(t+1)*per], batch, 3*hidden); err != nil {
				b.Fatal(err)
			}
		}
		bufs := [2]*tensor.Tensor{h0t.Clone(), tensor.Zeros(tensor.Float32, batch, hidden)}
		feeds := exec.Feeds{wh: wht}
		out := []*tensor.Tensor{nil}
		b.ResetTimer()
		for range b.N {
			copy(bufs[0].Bytes(), h0t.Bytes())
			for t := range steps {
				feeds[h], feeds[x] = bufs[t%2], xsteps[t]
				out[0] = bufs[(t+1)%2]
				if err := p.RunInto(ctx, feeds, out); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
	})
}

func runBench(b *testing.B, be exec.Backend, outs []*graph.Node, feeds exec.Feeds) {
	const steps = 1000
	p, err := exec.Compile(be, outs)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	res := make([]*tensor.Tensor, len(outs))
	for i, o := range outs {
		res[i] = tensor.Zeros(o.DType(), o.Shape()...)
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
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/steps, "ns/step")
}

package cpu_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// chain builds the 50-op elementwise benchmark graph over n float32
// elements laid out as [n/1024, 1024]: alternately a multiply by a scalar
// constant and an add of a broadcast [1024] row; with tanh, every third op
// is a Tanh instead.
func chain(n int, tanh bool) (*graph.Graph, *graph.Node, *graph.Node) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, n/1024, 1024)
	row := g.Const(exectest.Rand(tensor.Float32, tensor.Shape{1024}, -0.01, 0.01, 1))
	y := x
	for i := 0; i < 50; i++ {
		switch {
		case tanh && i%3 == 2:
			y = ops.Tanh(y)
		case i%2 == 0:
			y = ops.Mul(y, ops.Scalar(y, 0.999))
		default:
			y = ops.Add(y, row)
		}
	}
	return g, x, y
}

var sizes = []struct {
	name string
	n    int
}{{"1K", 1 << 10}, {"1M", 1 << 20}, {"16M", 1 << 24}}

// BenchmarkChain runs the 50-op chains fused and unfused (each op its own
// kernel, reading and writing memory), with RunInto so that only the
// program's own allocations count.
func BenchmarkChain(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	for _, kind := range []string{"muladd", "muladdtanh"} {
		for _, sz := range sizes {
			for _, mode := range []string{"fused", "unfused"} {
				b.Run(fmt.Sprintf("%s/%s/%s", kind, sz.name, mode), func(b *testing.B) {
					_, x, y := chain(sz.n, kind == "muladdtanh")
					var opts []exec.Option
					if mode == "unfused" {
						opts = append(opts, exec.DisablePasses("fuse"))
					}
					p, err := exec.Compile(be, []*graph.Node{y}, opts...)
					if err != nil {
						b.Fatal(err)
					}
					defer p.Close()
					feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 2)}
					out := []*tensor.Tensor{tensor.Zeros(tensor.Float32, y.Shape()...)}
					ctx := context.Background()
					if err := p.RunInto(ctx, feeds, out); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.SetBytes(int64(4 * sz.n))
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := p.RunInto(ctx, feeds, out); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/50, "ns/op-step")
				})
			}
		}
	}
}

// BenchmarkOverhead measures the cost per kernel of 50 unfused Adds on 1K
// float32 elements (the arithmetic itself is about 1024 adds, ~0.3 µs).
func BenchmarkOverhead(b *testing.B) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1024)
	y := x
	for i := 0; i < 50; i++ {
		y = ops.Add(y, x)
	}
	p, err := exec.Compile(be, []*graph.Node{y}, exec.DisablePasses("fuse"))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	steps := len(p.Plan().Steps)
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{1024}, -1, 1, 3)}
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32, 1024)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.RunInto(ctx, feeds, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/kernel")
}

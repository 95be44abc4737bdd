package cpu_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkLinalg: the CPU kernels of Cholesky, Solve (one right-hand
// side) and Eigh, float64, one thread (bench/cmd/linalg compares them with
// NumPy).
func BenchmarkLinalg(b *testing.B) {
	for _, c := range []struct {
		op string
		n  int
	}{{"cholesky", 256}, {"cholesky", 1024}, {"solve", 256}, {"solve", 1024}, {"eigh", 256}} {
		b.Run(fmt.Sprintf("%s/%d", c.op, c.n), func(b *testing.B) {
			be, err := cpu.New(cpu.Threads(1))
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			g := graph.New()
			n := c.n
			x := g.Input("x", tensor.Float64, n, n)
			feeds := exec.Feeds{x: laData(tensor.Float64, tensor.Shape{n, n}, float64(n), 1)}
			var y *graph.Node
			switch c.op {
			case "cholesky":
				y = ops.Cholesky(x)
			case "solve":
				r := g.Input("b", tensor.Float64, n, 1)
				feeds[r] = laData(tensor.Float64, tensor.Shape{n, 1}, 0, 2)
				y = ops.Solve(x, r)
			case "eigh":
				y, _ = ops.Eigh(x)
			}
			p, err := exec.Compile(be, []*graph.Node{y})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			out := []*tensor.Tensor{tensor.Zeros(y.DType(), y.Shape()...)}
			for b.Loop() {
				if err := p.RunInto(context.Background(), feeds, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package cpu_test

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkComplexMatMul: n x n products on one thread, real and complex
// side by side (issue 16: complex MatMul at n = 1024 at >= 80% of the
// real gemm's FLOP rate, a complex multiply-add counted as 8 real FLOPs).
// The GFLOP/s metric counts 2n^3 for real and 8n^3 for complex.
func BenchmarkComplexMatMul(b *testing.B) {
	for _, n := range []int{256, 1024} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex64, tensor.Float64, tensor.Complex128} {
			b.Run(dt.Short()+"/"+itoa(n), func(b *testing.B) {
				be, err := cpu.New(cpu.Threads(1))
				if err != nil {
					b.Fatal(err)
				}
				defer be.Close()
				g := graph.New()
				x, y := g.Input("a", dt, n, n), g.Input("b", dt, n, n)
				p, err := exec.Compile(be, []*graph.Node{ops.MatMul(x, y)})
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close()
				var va, vb *tensor.Tensor
				if dt.IsComplex() {
					va, vb = exectest.RandComplex(dt, tensor.Shape{n, n}, -1, 1, 1), exectest.RandComplex(dt, tensor.Shape{n, n}, -1, 1, 2)
				} else {
					va, vb = exectest.Rand(dt, tensor.Shape{n, n}, -1, 1, 1), exectest.Rand(dt, tensor.Shape{n, n}, -1, 1, 2)
				}
				feeds := exec.Feeds{x: va, y: vb}
				out := []*tensor.Tensor{tensor.Zeros(dt, n, n)}
				ctx := context.Background()
				if err := p.RunInto(ctx, feeds, out); err != nil {
					b.Fatal(err)
				}
				flops := 2 * float64(n) * float64(n) * float64(n)
				if dt.IsComplex() {
					flops *= 4
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := p.RunInto(ctx, feeds, out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

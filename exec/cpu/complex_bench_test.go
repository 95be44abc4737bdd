package cpu_test

import (
	"context"
	"sort"
	"strconv"
	"testing"
	"time"

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
			b.Run(dt.Short()+"/"+strconv.Itoa(n), func(b *testing.B) {
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

// mmProgram compiles an n x n product of dtype dt on one thread and
// returns a function running it once.
func mmProgram(b *testing.B, dt tensor.DType, n int) (run func(), done func()) {
	be, err := cpu.New(cpu.Threads(1))
	if err != nil {
		b.Fatal(err)
	}
	g := graph.New()
	x, y := g.Input("a", dt, n, n), g.Input("b", dt, n, n)
	p, err := exec.Compile(be, []*graph.Node{ops.MatMul(x, y)})
	if err != nil {
		b.Fatal(err)
	}
	var va, vb *tensor.Tensor
	if dt.IsComplex() {
		va, vb = exectest.RandComplex(dt, tensor.Shape{n, n}, -1, 1, 1), exectest.RandComplex(dt, tensor.Shape{n, n}, -1, 1, 2)
	} else {
		va, vb = exectest.Rand(dt, tensor.Shape{n, n}, -1, 1, 1), exectest.Rand(dt, tensor.Shape{n, n}, -1, 1, 2)
	}
	feeds := exec.Feeds{x: va, y: vb}
	out := []*tensor.Tensor{tensor.Zeros(dt, n, n)}
	run = func() {
		if err := p.RunInto(context.Background(), feeds, out); err != nil {
			b.Fatal(err)
		}
	}
	run()
	return run, func() { p.Close(); be.Close() }
}

// BenchmarkComplexMatMulRate: the complex product's FLOP rate (8n^3) as
// a fraction of the real one's (2n^3) at n = 1024 on one thread, the two
// timed alternately in each iteration so that a busy machine slows both
// alike; the metric "rate" is the ratio of the median times scaled by 4
// (the target: >= 0.8).
func BenchmarkComplexMatMulRate(b *testing.B) {
	const n = 1024
	for _, pair := range [][2]tensor.DType{{tensor.Float32, tensor.Complex64}, {tensor.Float64, tensor.Complex128}} {
		b.Run(pair[1].Short(), func(b *testing.B) {
			real, done1 := mmProgram(b, pair[0], n)
			defer done1()
			cplx, done2 := mmProgram(b, pair[1], n)
			defer done2()
			var tr, tc []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				real()
				t1 := time.Now()
				cplx()
				tr, tc = append(tr, t1.Sub(t0).Seconds()), append(tc, time.Since(t1).Seconds())
			}
			sort.Float64s(tr)
			sort.Float64s(tc)
			mr, mc := tr[len(tr)/2], tc[len(tc)/2]
			b.ReportMetric(4*mr/mc, "rate")
			b.ReportMetric(2*n*n*n/mr/1e9, "realGFLOP/s")
			b.ReportMetric(8*n*n*n/mc/1e9, "complexGFLOP/s")
		})
	}
}

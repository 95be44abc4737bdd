package cpu_test

import (
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkMath runs the hot ops of the Array API's math (rounding and
// the activations), each a one-op program over 64K elements (in cache,
// so the kernel's arithmetic shows), in float32 and float64.
func BenchmarkMath(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	const n = 1 << 16
	fns := []struct {
		name string
		f    func(*graph.Node) *graph.Node
	}{
		{"Floor", ops.Floor}, {"Ceil", ops.Ceil}, {"Round", ops.Round}, {"Trunc", ops.Trunc},
		{"Silu", ops.Silu}, {"GeluTanh", ops.GeluTanh}, {"Softplus", ops.Softplus},
	}
	for _, fn := range fns {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			b.Run(fn.name+"/"+dt.Short(), func(b *testing.B) {
				g := graph.New()
				x := g.Input("x", dt, n)
				feeds := exec.Feeds{x: exectest.Rand(dt, x.Shape(), -6, 6, 2)}
				benchRun(b, be, []*graph.Node{fn.f(x)}, feeds, int64(dt.Size()*n))
			})
		}
	}
}

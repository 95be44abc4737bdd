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

// BenchmarkRandom draws 2²⁰ values of each random op (key a Variable, so
// nothing folds), and runs Dropout on a float32 operand of that size,
// with the threads the backend has. ns/op over 2²⁰ is ns per element.
func BenchmarkRandom(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	const n = 1 << 20
	fs := []struct {
		name string
		f    func(key, x *graph.Node) *graph.Node
	}{
		{"Uniform/f32", func(k, _ *graph.Node) *graph.Node { return ops.RandomUniform(k, tensor.Float32, n) }},
		{"Uniform/f64", func(k, _ *graph.Node) *graph.Node { return ops.RandomUniform(k, tensor.Float64, n) }},
		{"Normal/f32", func(k, _ *graph.Node) *graph.Node { return ops.RandomNormal(k, tensor.Float32, n) }},
		{"Bernoulli", func(k, _ *graph.Node) *graph.Node { return ops.RandomBernoulli(k, 0.9, n) }},
		{"Dropout/f32", func(k, x *graph.Node) *graph.Node { return ops.Dropout(x, k, 0.1) }},
	}
	for _, f := range fs {
		b.Run(f.name, func(b *testing.B) {
			g := graph.New()
			key := g.Variable("key", ops.KeyTensor(1))
			x := g.Input("x", tensor.Float32, n)
			feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{n}, -1, 1, 1)}
			y := f.f(key, x)
			benchRun(b, be, []*graph.Node{y}, feeds, int64(n*y.DType().Size()), exec.IgnoreUnusedFeeds())
		})
	}
}

package cpu_test

import (
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkScan runs the scans and the product and logic reductions on a
// float32 [1024, 1024] operand (4 MiB), along the last axis (rows) and the
// first (columns), next to Sum over the same axis for comparison.
func BenchmarkScan(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	fs := []struct {
		name string
		f    func(x *graph.Node, axis int) *graph.Node
	}{
		{"Sum", func(x *graph.Node, axis int) *graph.Node { return ops.Sum(x, axis) }},
		{"Prod", func(x *graph.Node, axis int) *graph.Node { return ops.Prod(x, axis) }},
		{"All", func(x *graph.Node, axis int) *graph.Node { return ops.AllOf(x, axis) }},
		{"Var", func(x *graph.Node, axis int) *graph.Node { return ops.Var(x, 1, axis) }},
		{"Cumsum", func(x *graph.Node, axis int) *graph.Node { return ops.Cumsum(x, axis) }},
		{"Cumprod", func(x *graph.Node, axis int) *graph.Node { return ops.Cumprod(x, axis) }},
		{"Cummax", func(x *graph.Node, axis int) *graph.Node { return ops.Cummax(x, axis) }},
		{"LogCumSumExp", func(x *graph.Node, axis int) *graph.Node { return ops.LogCumSumExp(x, axis) }},
	}
	for _, f := range fs {
		for _, axis := range []int{1, 0} {
			b.Run(fmt.Sprintf("%s/axis%d", f.name, axis), func(b *testing.B) {
				g := graph.New()
				x := g.Input("x", tensor.Float32, 1024, 1024)
				// All over values that are never zero reads every element.
				feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), 0.5, 1.5, 3)}
				benchRun(b, be, []*graph.Node{f.f(x, axis)}, feeds, 4<<20)
			})
		}
	}
}

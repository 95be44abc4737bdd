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

// BenchmarkSort runs Sort, ArgSort and TopK (k = 100) on one float32 row
// of 1M elements (bench/'s sort and topk workloads), and Sort on 1024 rows
// of 1024 (rows in parallel).
func BenchmarkSort(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	cases := []struct {
		name  string
		shape []int
		f     func(x *graph.Node) []*graph.Node
	}{
		{"Sort/1M", []int{1 << 20}, func(x *graph.Node) []*graph.Node { return []*graph.Node{ops.Sort(x, 0, false)} }},
		{"ArgSort/1M", []int{1 << 20}, func(x *graph.Node) []*graph.Node { return []*graph.Node{ops.ArgSort(x, 0, false)} }},
		{"TopK100/1M", []int{1 << 20}, func(x *graph.Node) []*graph.Node { v, i := ops.TopK(x, 100, 0, true); return []*graph.Node{v, i} }},
		{"Sort/1024x1024", []int{1024, 1024}, func(x *graph.Node) []*graph.Node { return []*graph.Node{ops.Sort(x, 1, false)} }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			g := graph.New()
			x := g.Input("x", tensor.Float32, c.shape...)
			benchRun(b, be, c.f(x), exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 3)}, 4<<20)
		})
	}
}

package ops_test

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkPadModes compares the pad modes (composites of Slice, Concat,
// Reshape and BroadcastTo) with zero padding (one Pad kernel) on the CPU:
// a [1024,1024] float32 padded by 3 on every side.
func BenchmarkPadModes(b *testing.B) {
	w := ops.PadWidth{Low: 3, High: 3}
	for _, c := range []struct {
		name string
		f    func(x *graph.Node) *graph.Node
	}{
		{"zeros", func(x *graph.Node) *graph.Node { return ops.Pad(x, w, w) }},
		{"constant", func(x *graph.Node) *graph.Node { return ops.PadConstant(x, 1, w, w) }},
		{"reflect", func(x *graph.Node) *graph.Node { return ops.PadReflect(x, w, w) }},
		{"edge", func(x *graph.Node) *graph.Node { return ops.PadEdge(x, w, w) }},
		{"wrap", func(x *graph.Node) *graph.Node { return ops.PadWrap(x, w, w) }},
		{"flip", func(x *graph.Node) *graph.Node { return ops.Flip(x) }},
		{"repeat-each", func(x *graph.Node) *graph.Node { return ops.Repeat(x, alternating(1024), 1) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			g := graph.New()
			x := g.Input("x", tensor.Float32, 1024, 1024)
			be, err := exec.Open("cpu")
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			p, err := exec.Compile(be, []*graph.Node{c.f(x)})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			xt, _ := tensor.Make(tensor.Float32, 1024, 1024)
			feeds := exec.Feeds{x: xt}
			ctx := context.Background()
			b.SetBytes(4 << 20)
			b.ResetTimer()
			for range b.N {
				if _, err := p.Run(ctx, feeds); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// alternating is n counts 1, 2, 1, 2, ...
func alternating(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = 1 + i%2
	}
	return c
}

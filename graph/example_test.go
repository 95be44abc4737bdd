package graph_test

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Format prints a graph one node per line with the call site that built
// each node (the layout shown in Format's documentation).
func ExampleFormat() {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	one := g.Const(tensor.Scalar(float32(1)))
	y := ops.Add(x, one)
	ops.Sum(y, 1)
	fmt.Print(graph.Format(g))
	// Output:
	// %0 = Input "x" f32[2,3]                         example_test.go:15
	// %1 = Const f32[] {1}                            example_test.go:16
	// %2 = Add(%0, %1) f32[2,3]                       example_test.go:17
	// %3 = Sum(%2) axes=[1] f32[2]                    example_test.go:18
}

package ops_test

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Arange and Linspace build index vectors without storing them (the
// compiler folds small ones into constants); Eye and Tril compare a row
// and a column index.
func ExampleArange() {
	g := graph.New()
	r := ops.Arange(g, tensor.Int32, 1, 10, 3)          // numpy.arange(1, 10, 3)
	l := ops.Linspace(g, tensor.Float64, 0, 1, 5, true) // numpy.linspace(0, 1, 5)
	e := ops.Eye(g, tensor.Float32, 2, 3, 1)            // numpy.eye(2, 3, k=1)
	t := ops.Tril(ops.Add(e, ops.Scalar(e, 1)), 0)      // numpy.tril(e + 1)
	out, err := compute([]*graph.Node{r, l, e, t}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o)
	}
	// Output:
	// i32[3] [1 4 7]
	// f64[5] [   0 0.25  0.5 0.75    1]
	// f32[2,3]
	// [[0 1 0]
	//  [0 0 1]]
	// f32[2,3]
	// [[1 0 0]
	//  [1 1 0]]
}

// The pad modes follow numpy.pad: reflect mirrors about the end elements
// without repeating them, edge repeats them, wrap is circular; widths
// wider than the axis keep going.
func ExamplePadReflect() {
	g := graph.New()
	x := g.Const(mustNew([]float32{1, 2, 3}, 3))
	w := ops.PadWidth{Low: 2, High: 4}
	out, err := compute([]*graph.Node{ops.PadReflect(x, w), ops.PadEdge(x, w), ops.PadWrap(x, w), ops.PadConstant(x, -1, w)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Float64s())
	}
	// Output:
	// [3 2 1 2 3 2 1 2 3]
	// [1 1 1 2 3 3 3 3 3]
	// [2 3 1 2 3 1 2 3 1]
	// [-1 -1 1 2 3 -1 -1 -1 -1]
}

// Repeat takes one count or one per element; Tile repeats the whole
// array; Diagonal and Trace read a diagonal; Flip and Roll reorder.
func ExampleRepeat() {
	g := graph.New()
	x := g.Const(mustNew([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	outs := []*graph.Node{
		ops.Repeat(x, []int{2, 0, 1}, 1), // numpy.repeat(x, [2, 0, 1], axis=1)
		ops.Tile(x, 1, 2),                // numpy.tile(x, (1, 2))
		ops.Diagonal(x, 1, 0, 1),         // numpy.diagonal(x, 1)
		ops.Trace(x, 0, 0, 1),            // numpy.trace(x)
		ops.Flip(x, 1),                   // numpy.flip(x, 1)
		ops.Roll(x, 1),                   // numpy.roll(x, 1)
	}
	out, err := compute(outs, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Shape(), o.Float64s())
	}
	// Output:
	// [2,3] [1 1 3 4 4 6]
	// [2,6] [1 2 3 1 2 3 4 5 6 4 5 6]
	// [2] [2 6]
	// [] [6]
	// [2,3] [3 2 1 6 5 4]
	// [2,3] [6 1 2 3 4 5]
}

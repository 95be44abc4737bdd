package ops_test

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// Remainder takes the sign of the divisor (numpy.remainder, Python's %),
// Fmod the sign of the dividend (C's fmod), FloorDiv rounds down
// (numpy.floor_divide); Round rounds half to even (numpy.round).
func ExampleRemainder() {
	g := graph.New()
	a := g.Const(mustNew([]float32{7, -7, 7, -7}, 4))
	b := g.Const(mustNew([]float32{3, 3, -3, -3}, 4))
	h := g.Const(mustNew([]float32{0.5, 1.5, 2.5, -0.5}, 4))
	out, err := compute([]*graph.Node{ops.Remainder(a, b), ops.Fmod(a, b), ops.FloorDiv(a, b), ops.Round(h)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Float64s())
	}
	// Output:
	// [1 2 -2 -1]
	// [1 -1 1 -1]
	// [2 -3 -3 2]
	// [0 2 2 -0]
}

// The scans run along one axis (numpy.cumsum, numpy.cumprod, the values
// of torch.cummax); Exclusive starts from the identity and Reverse runs
// from the end. Prod, AnyOf and AllOf reduce over axes.
func ExampleCumsum() {
	g := graph.New()
	x := g.Const(mustNew([]float32{1, 2, 3, 4, -1, 0, 5, 2}, 2, 4))
	out, err := compute([]*graph.Node{
		ops.Cumsum(x, 1),
		ops.Cumsum(x, 1, ops.Exclusive),
		ops.Cumprod(x, 1, ops.Reverse),
		ops.Cummax(x, 1),
		ops.Prod(x, 1),
		ops.AnyOf(x, 1), ops.AllOf(x, 1),
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Float64s())
	}
	// Output:
	// [1 3 6 10 -1 -1 4 6]
	// [0 1 3 6 0 -1 -1 4]
	// [24 24 12 4 -0 0 10 2]
	// [1 2 3 4 -1 0 5 5]
	// [24 -0]
	// [1 1]
	// [1 0]
}

package ops_test

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// runFeeds compiles outs once on the CPU and runs the program once per
// feed of in, printing the values of each run's outputs on a line.
func runFeeds(outs []*graph.Node, in *graph.Node, feeds ...*tensor.Tensor) {
	be, err := exec.Open("cpu")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer be.Close()
	p, err := exec.Compile(be, outs)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	for _, f := range feeds {
		res, err := p.Run(context.Background(), exec.Feeds{in: f})
		if err != nil {
			fmt.Println(err)
			return
		}
		for i, r := range res {
			if i > 0 {
				fmt.Print(" ")
			}
			fmt.Print(r.Float64s())
		}
		fmt.Println()
	}
}

// Cond runs one of two functions, chosen at run time by a bool scalar
// computed in the graph: here x² when x sums to more than 0, -x
// otherwise. One compiled program takes either branch (by hand: [1 2 3]
// sums to 6, squared [1 4 9]; [-1 -2 0.5] sums to -2.5, negated [1 2
// -0.5]).
func ExampleCond() {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	s := ops.Sum(x)
	y := ops.Cond(ops.Greater(s, ops.Scalar(s, 0)),
		func(v []*graph.Node) []*graph.Node { return []*graph.Node{ops.Mul(v[0], v[0])} },
		func(v []*graph.Node) []*graph.Node { return []*graph.Node{ops.Neg(v[0])} },
		x)
	fmt.Println(y[0].Type())
	runFeeds(y, x, mustNew([]float32{1, 2, 3}, 3), mustNew([]float32{-1, -2, 0.5}, 3))
	// Output:
	// f32[3]
	// [1 4 9]
	// [1 2 -0.5]
}

// While loops as long as a condition computed from its carries holds, so
// the number of iterations depends on the data: the Collatz sequence
// (n/2 for even n, 3n+1 for odd) reaches 1 from 6 in 8 steps and from 27
// in 111. WhileMax bounds the iterations: 27 is at 566 after 50 steps.
// (Counted by a Python loop.)
func ExampleWhile() {
	g := graph.New()
	n := g.Input("n", tensor.Int64)
	notOne := func(c []*graph.Node) *graph.Node { return ops.NotEqual(c[0], ops.Scalar(c[0], 1)) }
	step := func(c []*graph.Node) []*graph.Node {
		v, two := c[0], ops.Scalar(c[0], 2)
		even := ops.Equal(ops.Remainder(v, two), ops.Scalar(v, 0))
		next := ops.Where(even, ops.FloorDiv(v, two), ops.Add(ops.Mul(v, ops.Scalar(v, 3)), ops.Scalar(v, 1)))
		return []*graph.Node{next, ops.Add(c[1], ops.Scalar(c[1], 1))}
	}
	steps := g.Const(tensor.Zeros(tensor.Int32))
	res := ops.While(notOne, step, n, steps)
	bounded := ops.WhileMax(50, notOne, step, n, steps)
	runFeeds([]*graph.Node{res[0], res[1], bounded[0], bounded[1]}, n,
		tensor.Scalar[int64](6), tensor.Scalar[int64](27))
	// Output:
	// [1] [8] [1] [8]
	// [1] [111] [566] [50]
}

// Scan runs its body over the leading axis of xs, carrying a state from
// step to step, and stacks each step's outputs: here an exponential
// moving average m = m/2 + x/2 from m = 0, forward and reversed (by
// hand: 4, 8, 0, 2 give 2, 5, 2.5, 2.25; from the last step back 1, 0.5,
// 4.25, 4.125, stacked by step index).
func ExampleScan() {
	g := graph.New()
	xs := g.Input("xs", tensor.Float32, 4)
	ema := func(c, x []*graph.Node) (next, ys []*graph.Node) {
		m := ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 0.5)), ops.Mul(x[0], ops.Scalar(x[0], 0.5)))
		return []*graph.Node{m}, []*graph.Node{m}
	}
	m0 := ops.Full(g, tensor.Float32, 0)
	last, ys := ops.Scan(ema, []*graph.Node{m0}, []*graph.Node{xs}, -1)
	first, rys := ops.Scan(ema, []*graph.Node{m0}, []*graph.Node{xs}, -1, ops.ScanReverse())
	fmt.Println(last[0].Type(), ys[0].Type())
	runFeeds([]*graph.Node{last[0], ys[0], first[0], rys[0]}, xs, mustNew([]float32{4, 8, 0, 2}, 4))
	// Output:
	// f32[] f32[4]
	// [2.25] [2 5 2.5 2.25] [4.125] [4.125 4.25 0.5 1]
}

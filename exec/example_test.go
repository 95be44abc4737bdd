package exec_test

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Build a graph with an input, a constant and a variable; broadcast; compile
// for the CPU; run with feeds; read the results and the updated variable;
// and see the error a mistake gets.
func Example() {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	w0, _ := tensor.New([]float32{1, 2, 3}, 3)
	w := g.Variable("w", w0)
	scale := g.Const(tensor.Scalar(float32(10)))
	y := ops.Mul(ops.Add(x, w), scale) // [2,3] + [3] broadcasts, then * []
	total := ops.Sum(y, 1)             // row sums, f32[2]

	be, _ := exec.Open("cpu")
	defer be.Close()
	prog, err := exec.Compile(be, []*graph.Node{y, total}, exec.Update(w, ops.Add(w, ops.Scalar(w, 1))))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer prog.Close()
	xv, _ := tensor.New([]float32{0, 0, 0, 1, 1, 1}, 2, 3)
	out, _ := prog.Run(context.Background(), exec.Feeds{x: xv})
	fmt.Println(out[0])
	fmt.Println(out[1])
	wv, _ := prog.Read(w)
	fmt.Println(wv)

	_, err = prog.Run(context.Background(), exec.Feeds{})
	fmt.Println(err)
	fmt.Println(ops.MatMul(x, x).Err() != nil, g.Err() != nil)
	// Output:
	// f32[2,3]
	// [[10 20 30]
	//  [20 30 40]]
	// f32[2] [60 90]
	// f32[3] [2 3 4]
	// exec: Run: bad feed: missing feed for Input "x" f32[2,3] (built at example_test.go:19)
	// true true
}

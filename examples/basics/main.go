// Command basics shows loom's API end to end: build a graph with an Input,
// a Const and a Variable, apply ops with NumPy broadcasting, compile it for
// the CPU, run it with feeds, update the variable, read the results, and
// see the precise error a mistake gets.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu" // registers "cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "basics:", err)
		os.Exit(1)
	}
}

func run(out *os.File) error {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4, 3)                      // a batch of 4 rows
	w0, _ := tensor.New([]float32{0.5, -1, 1, 2, 0, -0.5}, 3, 2) // initial weights
	w := g.Variable("w", w0)                                     // lives in the Program
	bias := g.Const(tensor.Scalar(float32(0.1)))                 // broadcast to [4,2]
	logits := ops.Add(ops.MatMul(x, w), bias)                    // [4,3]x[3,2] + []
	probs := ops.Softmax(logits, -1)                             // rows sum to 1
	best := ops.ArgMax(probs, 1)                                 // i64[4]
	rowMax := ops.Max(logits, 1)                                 // f32[4]
	decay := ops.Mul(w, ops.Scalar(w, 0.9))                      // w <- 0.9 w each run
	if err := g.Err(); err != nil {
		return err
	}

	be, err := exec.Open("cpu")
	if err != nil {
		return err
	}
	defer be.Close()
	fmt.Fprintf(out, "device: %s\n", be.Device())
	prog, err := exec.Compile(be, []*graph.Node{probs, best, rowMax}, exec.Update(w, decay))
	if err != nil {
		return err
	}
	defer prog.Close()

	xv, _ := tensor.New([]float32{
		1, 0, 0,
		0, 1, 0,
		0, 0, 1,
		1, 1, 1,
	}, 4, 3)
	for step := 1; step <= 2; step++ {
		res, err := prog.Run(context.Background(), exec.Feeds{x: xv})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "\nrun %d\nsoftmax(x·w + 0.1) = %v\nargmax = %v\nrow max = %v\n", step, res[0], res[1], res[2])
	}
	wNow, err := prog.Read(w)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nw after two updates (0.81 w0) = %v\n", wNow)

	// Mistakes get precise errors: the user's call site, the op, the types.
	bad := ops.MatMul(x, x)
	fmt.Fprintf(out, "\nbuild error: %v\n", bad.Err())
	_, err = prog.Run(context.Background(), exec.Feeds{})
	fmt.Fprintf(out, "run error: %v\n", err)
	fmt.Fprintf(out, "\ncompiled plan:\n%s", prog.Plan().Format())
	return nil
}

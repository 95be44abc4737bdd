package optim_test

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// Minimize differentiates the loss and returns the updates of one step,
// which exec.Compile turns into a training step. Here plain gradient
// descent on (w-3)² from w = 0 with LR 0.25: each step is
// w <- w - 0.25·2(w-3), halving the distance to 3, so w runs 1.5, 2.25,
// 2.625, 2.8125 (exact in binary); each Run returns the loss of the
// values before its update.
func ExampleMinimize() {
	g := graph.New()
	w := g.Variable("w", tensor.Scalar(0.0))
	loss := ops.Square(ops.Sub(w, ops.Scalar(w, 3)))
	updates, err := optim.Minimize(optim.SGD{LR: 0.25}, loss, w)
	if err != nil {
		fmt.Println(err)
		return
	}
	be, _ := exec.Open("cpu")
	defer be.Close()
	step, err := exec.Compile(be, []*graph.Node{loss}, updates...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer step.Close()
	for i := 1; i <= 4; i++ {
		out, err := step.Run(context.Background(), nil)
		if err != nil {
			fmt.Println(err)
			return
		}
		wv, _ := step.Read(w)
		fmt.Printf("step %d: loss %g, then w = %g\n", i, out[0].Float64(0), wv.Float64(0))
	}
	// Output:
	// step 1: loss 9, then w = 1.5
	// step 2: loss 2.25, then w = 2.25
	// step 3: loss 0.5625, then w = 2.625
	// step 4: loss 0.140625, then w = 2.8125
}

// A training loop: fit y = w·x + b to four points on the line y = 2x + 1
// with Adam. The data is fed at every step; the parameters and Adam's
// moments live in the Program. The loss (mean squared error) falls from
// 21 (w = b = 0: the mean of 1, 9, 25, 49) to nearly 0, and w and b
// approach 2 and 1. (The printed values agree with a float64 re-computation
// of PyTorch's Adam update in plain Python.)
func Example_trainingLoop() {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 4)
	y := g.Input("y", tensor.Float64, 4)
	w := g.Variable("w", tensor.Scalar(0.0))
	b := g.Variable("b", tensor.Scalar(0.0))
	pred := ops.Add(ops.Mul(x, w), b)
	loss := ops.Mean(ops.Square(ops.Sub(pred, y)))
	updates, err := optim.Minimize(optim.Adam{LR: 0.05}, loss, w, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	be, _ := exec.Open("cpu")
	defer be.Close()
	step, err := exec.Compile(be, []*graph.Node{loss}, updates...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer step.Close()

	xv, _ := tensor.New([]float64{0, 1, 2, 3})
	yv, _ := tensor.New([]float64{1, 3, 5, 7})
	feeds := exec.Feeds{x: xv, y: yv}
	for i := 0; i <= 300; i++ {
		out, err := step.Run(context.Background(), feeds)
		if err != nil {
			fmt.Println(err)
			return
		}
		if i%50 == 0 {
			fmt.Printf("step %3d: loss %.4f\n", i, out[0].Float64(0))
		}
	}
	wv, _ := step.Read(w)
	bv, _ := step.Read(b)
	fmt.Printf("w = %.2f, b = %.2f\n", wv.Float64(0), bv.Float64(0))
	// Output:
	// step   0: loss 21.0000
	// step  50: loss 0.1487
	// step 100: loss 0.0599
	// step 150: loss 0.0193
	// step 200: loss 0.0048
	// step 250: loss 0.0009
	// step 300: loss 0.0001
	// w = 1.99, b = 1.02
}

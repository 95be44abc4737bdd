package main

import (
	"context"
	"fmt"
	"log"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu" // registers the "cpu" backend
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func main() {
	// Build the graph: nothing runs yet, every builder checks its operands.
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3) // fed at every Run
	w0, err := tensor.New([]float32{1, 0, 0, 1, 1, -1}, 3, 2)
	if err != nil {
		log.Fatal(err)
	}
	w := g.Variable("w", w0)                  // lives in the Program
	b := g.Const(tensor.Scalar(float32(0.5))) // broadcast like NumPy
	logits := ops.Add(ops.MatMul(x, w), b)    // [2,3]·[3,2] + []
	probs := ops.Softmax(logits, -1)          // each row sums to 1
	halved := ops.Mul(w, ops.Scalar(w, 0.5))  // w's next value
	if err := g.Err(); err != nil {           // the first build error, if any
		log.Fatal(err)
	}

	// Compile for a device, run, read a variable.
	be, err := exec.Open("cpu") // or exec.Default(): $LOOM_DEVICE, else a GPU, else the CPU
	if err != nil {
		log.Fatal(err)
	}
	defer be.Close()
	prog, err := exec.Compile(be, []*graph.Node{logits, probs}, exec.Update(w, halved))
	if err != nil {
		log.Fatal(err)
	}
	defer prog.Close()
	batch, err := tensor.New([]float32{1, 2, 3, 0, 1, 0}, 2, 3)
	if err != nil {
		log.Fatal(err)
	}
	outs, err := prog.Run(context.Background(), exec.Feeds{x: batch}) // in output order
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("logits:", outs[0])
	p, err := tensor.Values[float32](outs[1])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("probabilities: %.4f\n", p)
	wNow, err := prog.Read(w) // updated by the Run
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("w:", wNow)

	// A mistake is a build error with the call site, the op and the types.
	fmt.Println(ops.MatMul(x, x).Err())
}

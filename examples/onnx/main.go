// Command onnx runs and fine-tunes a model trained elsewhere: a small CNN
// defined and trained on MNIST in PyTorch (train_torch.py), exported to
// ONNX (cnn.onnx, committed and embedded in this program, so no Python is
// needed here) and imported by loom's onnx package.
//
// It imports the model once with its weights as Variables, at the training
// batch size, and applies it a second time in the same graph at the
// evaluation batch size (onnx.Model.Apply), so that the evaluation program
// shares the training program's weights (exec.ShareVariables). Then it
//
//  1. runs the imported model on the 10000 MNIST test images and compares
//     its predictions with PyTorch's (torch_predictions.pb, written by the
//     script) and its logits on the first 100 images with PyTorch's
//     (torch_logits.pb);
//  2. fine-tunes every weight for one epoch in loom (softmax cross-entropy,
//     Adam), and evaluates again;
//  3. saves the fine-tuned weights as safetensors, under the model's own
//     initialiser names (conv1.weight, fc2.bias, ...).
//
// -model imports another file instead; its input must be [batch, 1, 28, 28]
// images and its output [batch, 10] scores, and the PyTorch comparison is
// skipped. The data is examples/mnist's (see examples/internal/mnist).
package main

import (
	"bytes"
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/mnist"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/onnx"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// The PyTorch side's files (see train_torch.py).
var (
	//go:embed cnn.onnx
	cnnModel []byte
	//go:embed torch_predictions.pb
	torchPredictions []byte
	//go:embed torch_logits.pb
	torchLogits []byte
)

type config struct {
	model     string // "": the embedded cnn.onnx
	batch     int
	epochs    int
	lr        float64
	device    string
	seed      uint64
	limit     int    // training examples (0: all)
	evalLimit int    // test examples (0: all)
	save      string // safetensors path ("": none)
	progress  bool
}

// result is what a run reports.
type result struct {
	before, after float64 // test accuracy before and after fine-tuning
	agree, n      int     // predictions equal to PyTorch's, of n (n = 0: not compared)
	maxLogitDiff  float64 // on the first images, against PyTorch's logits
	losses        []float64
}

func main() {
	report.Main("onnx", parseFlags, func(w io.Writer, c config, terminal bool) error {
		c.progress = terminal
		_, err := run(w, c)
		return err
	})
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("onnx", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.model, "model", "", "ONNX model to import instead of the embedded cnn.onnx ([batch,1,28,28] images to [batch,10] scores)")
	fs.IntVar(&c.batch, "batch", 64, "fine-tuning batch size")
	fs.IntVar(&c.epochs, "epochs", 1, "fine-tuning epochs (0: evaluate only)")
	fs.Float64Var(&c.lr, "lr", 2e-4, "Adam's learning rate for fine-tuning")
	fs.StringVar(&c.device, "device", "", device.Usage)
	fs.Uint64Var(&c.seed, "seed", 1, "shuffling seed")
	fs.IntVar(&c.limit, "limit", 0, "fine-tune on the first N training examples only (0: all 60000)")
	fs.IntVar(&c.evalLimit, "eval-limit", 0, "evaluate on the first N test images only (0: all 10000)")
	fs.StringVar(&c.save, "save", "cnn-finetuned.safetensors", "write the fine-tuned weights to this safetensors file (empty: don't)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, nil
}

func run(w io.Writer, c config) (*result, error) {
	dir, err := mnist.DataDir()
	if err != nil {
		return nil, err
	}
	trainSet, testSet, err := mnist.Load(dir)
	if err != nil {
		return nil, err
	}
	trainSet, testSet = trainSet.Head(c.limit), testSet.Head(c.evalLimit)
	if c.batch < 1 || c.batch > trainSet.N {
		return nil, fmt.Errorf("batch size %d does not fit %d training examples", c.batch, trainSet.N)
	}
	const side = mnist.Side

	// Import: the weights become Variables, the input is bound to the
	// training batch size (the model's batch dimension is symbolic).
	src, name := cnnModel, "cnn.onnx (embedded, trained by train_torch.py)"
	if c.model != "" {
		if src, err = os.ReadFile(c.model); err != nil {
			return nil, err
		}
		name = c.model
	}
	ins, _, err := onnx.Signature(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(ins) != 1 {
		return nil, fmt.Errorf("%s: the model has %d inputs, want 1 (images)", name, len(ins))
	}
	m, err := onnx.ImportBytes(src, onnx.InputShape(ins[0].Name, c.batch, 1, side, side), onnx.Variables())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(m.Outputs) != 1 || !m.Outputs[0].Shape().Equal(tensor.Shape{c.batch, 10}) {
		return nil, fmt.Errorf("%s: want one output of shape [%d 10], the model has %v", name, c.batch, m.Outputs)
	}
	g := m.Graph
	x, logits := m.Inputs[0], m.Outputs[0]
	params := make([]*graph.Node, 0, len(m.Variables))
	nParams := 0
	for _, v := range m.Variables {
		params = append(params, v)
		nParams += v.Shape().Size()
	}
	sort.Slice(params, func(i, j int) bool { return params[i].Name() < params[j].Name() })
	fmt.Fprintf(w, "imported %s: opset %d, from %s %s, %d weights in %d Variables\n", name, m.Opset, m.Producer, m.ProducerVersion, nParams, len(params))

	// Fine-tuning: the loss on top of the imported graph.
	y := g.Input("label", tensor.Int32, c.batch)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(logits, y))
	updates, err := optim.Minimize(optim.Adam{LR: c.lr}, loss, params...)
	if err != nil {
		return nil, err
	}

	// Evaluation: the model applied again at a larger batch, on the same
	// Variables.
	evalBatch := testSet.EvalBatch()
	xe := g.Input("image_eval", tensor.Float32, evalBatch, 1, side, side)
	eouts, err := m.Apply(xe)
	if err != nil {
		return nil, err
	}
	elogits := eouts[0]
	predict := ops.ArgMax(elogits, 1)

	be, err := device.Open(c.device)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	step, err := exec.Compile(be, []*graph.Node{loss}, updates...)
	if err != nil {
		return nil, err
	}
	defer step.Close()
	eval, err := exec.Compile(be, []*graph.Node{predict, elogits}, exec.ShareVariables(step))
	if err != nil {
		return nil, err
	}
	defer eval.Close()
	fmt.Fprintf(w, "on %s; evaluation batch %d: %v\n", be.Device(), evalBatch, eval.Stats())

	ctx := context.Background()
	xeb := tensor.Zeros(tensor.Float32, evalBatch, 1, side, side)
	xev, _ := tensor.Values[float32](xeb)
	outs := []*tensor.Tensor{tensor.Zeros(tensor.Int64, evalBatch), tensor.Zeros(tensor.Float32, evalBatch, 10)}
	// evaluate returns the accuracy, the predictions and the logits of
	// the first evaluation batch.
	evaluate := func() (float64, []int64, []float32, error) {
		var preds []int64
		var first []float32
		correct := 0
		for b := 0; b < testSet.N/evalBatch; b++ {
			copy(xev, testSet.X[b*evalBatch*mnist.Pixels:(b+1)*evalBatch*mnist.Pixels])
			if err := eval.RunInto(ctx, exec.Feeds{xe: xeb}, outs); err != nil {
				return 0, nil, nil, err
			}
			pv, _ := tensor.Values[int64](outs[0])
			for i, p := range pv {
				if p == int64(testSet.Y[b*evalBatch+i]) {
					correct++
				}
			}
			preds = append(preds, pv...)
			if b == 0 {
				lv, _ := tensor.Values[float32](outs[1])
				first = append([]float32(nil), lv...)
			}
		}
		return float64(correct) / float64(len(preds)), preds, first, nil
	}

	res := &result{}
	start := time.Now()
	acc, preds, first, err := evaluate()
	if err != nil {
		return nil, err
	}
	res.before = acc
	fmt.Fprintf(w, "imported model: test accuracy %.4f on %d images (%.0f images/s)\n", acc, len(preds), float64(len(preds))/time.Since(start).Seconds())
	if c.model == "" {
		if err := compareTorch(w, res, preds, first); err != nil {
			return nil, err
		}
	}

	// Fine-tuning.
	xb := tensor.Zeros(tensor.Float32, c.batch, 1, side, side)
	yb := tensor.Zeros(tensor.Int32, c.batch)
	xs, _ := tensor.Values[float32](xb)
	ys, _ := tensor.Values[int32](yb)
	feeds := exec.Feeds{x: xb, y: yb}
	lout := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	r := optim.NewRand(c.seed)
	order := make([]int, trainSet.N)
	for i := range order {
		order[i] = i
	}
	steps := trainSet.N / c.batch
	res.after = res.before
	for epoch := 1; epoch <= c.epochs; epoch++ {
		mnist.Shuffle(r, order)
		bar := &report.Progress{W: w, InPlace: c.progress, Lines: 2, Smooth: 50}
		bar.Start(steps, 0)
		line := func(bar string, loss float64) string {
			return fmt.Sprintf("fine-tuning epoch %d/%d %s  loss %.4f", epoch, c.epochs, bar, loss)
		}
		t0 := time.Now()
		for s := 0; s < steps; s++ {
			trainSet.Batch(order[s*c.batch:(s+1)*c.batch], xs, ys)
			if err := step.RunInto(ctx, feeds, lout); err != nil {
				return nil, err
			}
			l := lout[0].Float64(0)
			if math.IsNaN(l) {
				return nil, fmt.Errorf("the loss is NaN at epoch %d step %d", epoch, s)
			}
			res.losses = append(res.losses, l)
			bar.Update(s+1, l, line)
		}
		bar.Done(line)
		elapsed := time.Since(t0)
		if res.after, _, _, err = evaluate(); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "fine-tuned epoch %d (%d steps of %d in %v): test accuracy %.4f\n", epoch, steps, c.batch, elapsed.Round(time.Millisecond), res.after)
	}
	if c.save != "" {
		meta := map[string]string{"model": name, "test_accuracy": fmt.Sprintf("%.4f", res.after)}
		if err := step.SaveVariablesFile(c.save, meta); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote the fine-tuned weights to %s (safetensors, the model's initialiser names)\n", c.save)
	}
	fmt.Fprintf(w, "test accuracy: %.4f imported, %.4f after %d epoch(s) of fine-tuning in loom\n", res.before, res.after, c.epochs)
	return res, nil
}

// compareTorch compares the imported model's predictions and first logits
// with the ones PyTorch computed for the same images.
func compareTorch(w io.Writer, res *result, preds []int64, first []float32) error {
	_, tp, err := onnx.ReadTensor(bytes.NewReader(torchPredictions))
	if err != nil {
		return fmt.Errorf("torch_predictions.pb: %w", err)
	}
	want, err := tensor.Values[int64](tp)
	if err != nil {
		return fmt.Errorf("torch_predictions.pb: %w", err)
	}
	if len(preds) > len(want) {
		return fmt.Errorf("torch_predictions.pb has %d predictions, evaluated %d images", len(want), len(preds))
	}
	for i, p := range preds {
		if p == want[i] {
			res.agree++
		}
	}
	res.n = len(preds)
	_, tl, err := onnx.ReadTensor(bytes.NewReader(torchLogits))
	if err != nil {
		return fmt.Errorf("torch_logits.pb: %w", err)
	}
	wl, err := tensor.Values[float32](tl)
	if err != nil {
		return fmt.Errorf("torch_logits.pb: %w", err)
	}
	k := min(len(wl), len(first))
	for i := 0; i < k; i++ {
		res.maxLogitDiff = math.Max(res.maxLogitDiff, math.Abs(float64(first[i]-wl[i])))
	}
	fmt.Fprintf(w, "same prediction as PyTorch on %d of %d test images; logits of the first %d images within %.2g of PyTorch's\n", res.agree, res.n, k/10, res.maxLogitDiff)
	return nil
}

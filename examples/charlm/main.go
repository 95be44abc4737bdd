// Command charlm trains a small decoder-only transformer on the bytes of
// the Go standard library's source and then writes Go-looking code.
//
// The model (model.go, written with package nn's layers) is GPT-2's
// layout at a small size: a token
// embedding plus learned positions, pre-LayerNorm blocks of causal
// multi-head self-attention (a -Inf mask above the diagonal) and a GELU
// MLP, residual connections, dropout, and the token embedding reused as
// the output layer. It trains with AdamW (weight decay on the matrices
// only), gradient clipping by the global norm and a cosine learning-rate
// schedule with linear warmup, all inside the compiled training step: a
// Run takes a batch and the learning rate and updates every Variable.
//
// The text is $(go env GOROOT)/src's .go files (tests, testdata and
// vendored code left out), read in lexical order; every 20th file is held
// out for validation. Tokens are the byte values that occur. Batches are
// random windows of the context length. Package examples/internal/gosrc
// reads the text and draws the batches, for grulm too.
//
// It shows a progress bar with the loss, writes loss.png (the training
// and validation loss) and trace.json (one profiled training step, for
// https://ui.perfetto.dev), saves and resumes checkpoints (-save,
// -resume: the weights, AdamW's moments and step count and the dropout
// key, in a safetensors file), and prints a sample of generated text
// (temperature and top-k sampling) at the end.
package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/gosrc"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

type config struct {
	model       modelConfig // vocab is filled in from the corpus
	batch       int
	steps       int     // total training steps (a resumed run continues to this many)
	lr          float64 // peak learning rate
	minLR       float64 // the cosine decays to this
	warmup      int     // steps of linear warmup
	weightDecay float64
	clip        float64 // gradient clipping: max global norm
	evalEvery   int     // validation loss every this many steps (0: at the end only)
	evalBatches int
	seed        uint64
	device      string
	corpusBytes int // read at most this many bytes of source (0: all)
	outDir      string
	save        string // checkpoint to write at the end ("": none)
	resume      string // checkpoint to start from ("": fresh weights)
	sampleLen   int    // bytes to generate at the end
	temperature float64
	topK        int
	prompt      string
	progress    bool // draw the progress bar in place (a terminal)
	// comm, when set, makes this process one rank of a data-parallel job
	// (-dist mpi): each rank trains on its 1/Size of every batch, the
	// gradients averaged over the ranks before clipping.
	comm dist.Communicator
	dist string
}

func defaultConfig() config {
	return config{
		model:       modelConfig{layers: 2, dModel: 128, heads: 4, ctx: 128, dropout: 0.1},
		batch:       32,
		steps:       2000,
		lr:          6e-3,
		minLR:       6e-4,
		warmup:      50,
		weightDecay: 0.1,
		clip:        1,
		evalEvery:   500,
		evalBatches: 8,
		seed:        1,
		outDir:      ".",
		sampleLen:   600,
		temperature: 0.6,
		topK:        10,
		prompt:      "func ",
	}
}

func main() {
	report.Main("charlm", parseFlags, func(w io.Writer, c config, terminal bool) error {
		c.progress = terminal
		comm, out, done, err := report.Distributed(c.dist, w)
		if err != nil {
			return err
		}
		defer done()
		if comm != nil {
			c.comm, c.progress = comm, c.progress && comm.Rank() == 0
		}
		_, err = run(out, c)
		return err
	})
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("charlm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.model.layers, "layers", c.model.layers, "transformer blocks")
	fs.IntVar(&c.model.dModel, "dmodel", c.model.dModel, "model width")
	fs.IntVar(&c.model.heads, "heads", c.model.heads, "attention heads")
	fs.IntVar(&c.model.ctx, "ctx", c.model.ctx, "context length in bytes")
	fs.Float64Var(&c.model.dropout, "dropout", c.model.dropout, "dropout rate")
	fs.IntVar(&c.batch, "batch", c.batch, "batch size (windows per step)")
	fs.IntVar(&c.steps, "steps", c.steps, "training steps")
	fs.Float64Var(&c.lr, "lr", c.lr, "peak learning rate (AdamW)")
	fs.Float64Var(&c.minLR, "minlr", c.minLR, "final learning rate of the cosine schedule")
	fs.IntVar(&c.warmup, "warmup", c.warmup, "steps of linear learning-rate warmup")
	fs.Float64Var(&c.weightDecay, "wd", c.weightDecay, "AdamW weight decay (on the matrices)")
	fs.Float64Var(&c.clip, "clip", c.clip, "clip the gradients to this global norm")
	fs.IntVar(&c.evalEvery, "eval-every", c.evalEvery, "validation loss every N steps (0: at the end only)")
	fs.IntVar(&c.evalBatches, "eval-batches", c.evalBatches, "batches of held-out text per validation")
	fs.Uint64Var(&c.seed, "seed", c.seed, "random seed (weights, batches, dropout)")
	fs.StringVar(&c.device, "device", "", device.Usage)
	fs.StringVar(&c.dist, "dist", "", "mpi: one rank of a data-parallel job started by mpirun")
	mb := fs.Float64("corpus-mb", 0, "read at most this many MB of Go source (0: all of GOROOT/src)")
	fs.StringVar(&c.outDir, "out", c.outDir, "directory for trace.json and loss.png (empty: write neither)")
	fs.StringVar(&c.save, "save", "", "write a checkpoint (safetensors) here at the end")
	fs.StringVar(&c.resume, "resume", "", "start from this checkpoint (same model flags)")
	fs.IntVar(&c.sampleLen, "sample", c.sampleLen, "bytes of text to generate at the end (0: none)")
	fs.Float64Var(&c.temperature, "temperature", c.temperature, "sampling temperature")
	fs.IntVar(&c.topK, "topk", c.topK, "sample from the k most likely bytes (0: all)")
	fs.StringVar(&c.prompt, "prompt", c.prompt, "text the sample starts from")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.corpusBytes = int(*mb * (1 << 20))
	return c, c.check()
}

func (c config) check() error {
	switch {
	case c.batch < 1 || c.steps < 0 || c.warmup < 0 || c.evalEvery < 0 || c.evalBatches < 1 || c.sampleLen < 0 || c.topK < 0:
		return fmt.Errorf("bad sizes: batch %d, steps %d, warmup %d, eval every %d, eval batches %d, sample %d, top-k %d",
			c.batch, c.steps, c.warmup, c.evalEvery, c.evalBatches, c.sampleLen, c.topK)
	case !(c.lr > 0) || !(c.minLR >= 0) || c.minLR > c.lr:
		return fmt.Errorf("bad learning rates: -lr %v, -minlr %v (want 0 <= minlr <= lr, lr > 0)", c.lr, c.minLR)
	case !(c.clip > 0) || !(c.weightDecay >= 0):
		return fmt.Errorf("bad -clip %v or -wd %v", c.clip, c.weightDecay)
	case !(c.temperature > 0):
		return fmt.Errorf("bad -temperature %v (want > 0)", c.temperature)
	}
	return nil
}

// rate is the learning rate of step t (0-based) of total: linear warmup
// from lr/warmup to lr over the first warmup steps, then a cosine decay
// from lr to minLR at the last step.
func (c config) rate(t int) float64 {
	if t < c.warmup {
		return c.lr * float64(t+1) / float64(c.warmup)
	}
	span := c.steps - c.warmup
	if span <= 1 {
		return c.lr
	}
	p := float64(t-c.warmup) / float64(span-1)
	return c.minLR + 0.5*(c.lr-c.minLR)*(1+math.Cos(math.Pi*min(p, 1)))
}

// result is what a run reports.
type result struct {
	vocab     int
	initLoss  float64   // validation loss before training (from step 0)
	losses    []float64 // training loss of every step run
	firstStep int       // the step losses[0] belongs to (a resumed run starts late)
	val       []valPoint
	elapsed   time.Duration // training time (without validation)
	sample    string
}

type valPoint struct {
	step int // after this many steps
	loss float64
}

// trainer is the compiled model: the training step, the validation loss
// and the sampler, sharing the Variables.
type trainer struct {
	c       config
	data    *gosrc.Corpus
	g       *graph.Graph
	m       *model
	be      exec.Backend
	rec     *profile.Recorder
	step    *exec.Program
	eval    *exec.Program
	sampler *sampler

	x, y, lr   *graph.Node // the training step's inputs
	ex, ey     *graph.Node // the validation loss's inputs
	feeds      exec.Feeds
	evalFeeds  exec.Feeds
	trainBatch *gosrc.Batcher
	valBatch   *gosrc.Batcher
	lrv        []float32
	out        []*tensor.Tensor // loss, gradient norm
	evalOut    []*tensor.Tensor
}

func newTrainer(c config, data *gosrc.Corpus) (*trainer, error) {
	c.model.vocab = len(data.Vocab)
	t := &trainer{c: c, data: data, g: graph.New(), rec: profile.New()}
	g := t.g
	m, err := newModel(g, c.seed, c.model)
	if err != nil {
		return nil, err
	}
	t.m = m
	B, T := c.batch, c.model.ctx
	ranks, rank := 1, 0
	if c.comm != nil {
		ranks, rank = c.comm.Size(), c.comm.Rank()
		if B%ranks != 0 {
			return nil, fmt.Errorf("batch size %d does not divide among %d ranks", B, ranks)
		}
	}
	b := B / ranks // this rank's windows of every batch
	t.x = g.Input("x", tensor.Int32, b, T)
	t.y = g.Input("y", tensor.Int32, b, T)
	t.lr = g.Input("lr", tensor.Float32)

	// The training step: the loss, its gradients clipped by their global
	// norm, AdamW with weight decay on the matrices only.
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(m.forward(t.x, true), ops.Reshape(t.y, b*T)))
	params, nd := m.params()
	grads := autodiff.Grad(loss, params...)
	shown := loss // the loss reported: the whole batch's (the ranks' mean)
	if c.comm != nil {
		if grads, err = (optim.DataParallel{Size: ranks}).AllReduce(grads); err != nil {
			return nil, err
		}
		shown = ops.AllReduce(loss, ops.ReduceMean, ranks)
	}
	grads, norm, err := optim.ClipGlobalNorm(grads, c.clip)
	if err != nil {
		return nil, err
	}
	upd, err := optim.Adam{LR: c.lr, Beta2: 0.99, WeightDecay: c.weightDecay, Decoupled: true, LRNode: t.lr}.Apply(params[:nd], grads[:nd])
	if err != nil {
		return nil, err
	}
	upd2, err := optim.Adam{LR: c.lr, Beta2: 0.99, LRNode: t.lr}.Apply(params[nd:], grads[nd:])
	if err != nil {
		return nil, err
	}
	opts := append(append(append(upd, upd2...), m.nn.Updates()...), exec.Record(t.rec)) // + the dropout key's advance
	if c.comm != nil {
		opts = append(opts, exec.WithCommunicator(c.comm))
	}

	// The validation loss: the same model without dropout.
	t.ex = g.Input("x_val", tensor.Int32, B, T)
	t.ey = g.Input("y_val", tensor.Int32, B, T)
	evalLoss := ops.Mean(ops.SparseSoftmaxCrossEntropy(m.forward(t.ex, false), ops.Reshape(t.ey, B*T)))
	smp := newSampler(g, m, c.topK)
	if err := g.Err(); err != nil {
		return nil, err
	}

	t.be, err = device.Open(c.device)
	if err != nil {
		return nil, err
	}
	if t.step, err = exec.Compile(t.be, []*graph.Node{shown, norm}, opts...); err != nil {
		t.Close()
		return nil, err
	}
	if t.eval, err = exec.Compile(t.be, []*graph.Node{evalLoss}, exec.ShareVariables(t.step)); err != nil {
		t.Close()
		return nil, err
	}
	if err := smp.compile(t.be, t.step); err != nil {
		t.Close()
		return nil, err
	}
	t.sampler = smp

	t.trainBatch = gosrc.NewBatcher(data.Train, B, T)
	t.valBatch = gosrc.NewBatcher(data.Val, B, T)
	lrt := tensor.Zeros(tensor.Float32)
	t.lrv, _ = tensor.Values[float32](lrt)
	// This rank's rows of every batch: views of the batcher's tensors.
	xs, _ := tensor.Values[int32](t.trainBatch.X)
	ys, _ := tensor.Values[int32](t.trainBatch.Y)
	xr, _ := tensor.New(xs[rank*b*T:(rank+1)*b*T], b, T)
	yr, _ := tensor.New(ys[rank*b*T:(rank+1)*b*T], b, T)
	t.feeds = exec.Feeds{t.x: xr, t.y: yr, t.lr: lrt}
	t.evalFeeds = exec.Feeds{t.ex: t.valBatch.X, t.ey: t.valBatch.Y}
	t.out = []*tensor.Tensor{tensor.Zeros(tensor.Float32), tensor.Zeros(tensor.Float32)}
	t.evalOut = []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	return t, nil
}

func (t *trainer) Close() {
	for _, p := range []*exec.Program{t.step, t.eval} {
		if p != nil {
			p.Close()
		}
	}
	if t.sampler != nil {
		t.sampler.Close()
	}
	if t.be != nil {
		t.be.Close()
	}
}

// trainStep runs training step i (0-based): it fills the batch, feeds the
// learning rate and runs the compiled step, returning the loss before
// the update. It allocates nothing (TestZeroAllocs).
func (t *trainer) trainStep(ctx context.Context, i int) (float64, error) {
	t.trainBatch.Fill(t.c.seed, i)
	t.lrv[0] = float32(t.c.rate(i))
	if err := t.step.RunInto(ctx, t.feeds, t.out); err != nil {
		return 0, err
	}
	return t.out[0].Float64(0), nil
}

// valLoss is the mean loss on c.evalBatches fixed held-out batches.
func (t *trainer) valLoss(ctx context.Context) (float64, error) {
	var sum float64
	for i := 0; i < t.c.evalBatches; i++ {
		t.valBatch.Fill(^t.c.seed, i) // the same batches at every validation
		if err := t.eval.RunInto(ctx, t.evalFeeds, t.evalOut); err != nil {
			return 0, err
		}
		sum += t.evalOut[0].Float64(0)
	}
	return sum / float64(t.c.evalBatches), nil
}

// stepCount reads the training steps taken so far from AdamW's step
// counter (the decayed group's "<first matrix>/adam_step" Variable).
func (t *trainer) stepCount() (int, error) {
	ps, _ := t.m.params()
	v := t.g.Lookup(ps[0].Name() + "/adam_step")
	if v == nil {
		return 0, errors.New("no adam_step variable")
	}
	s, err := t.step.Read(v)
	if err != nil {
		return 0, err
	}
	return int(s.Float64(0)), nil
}

// metadata describes a checkpoint: the model and the vocabulary, which a
// resumed run must match.
func (t *trainer) metadata() map[string]string {
	return map[string]string{
		"model": t.c.model.String(),
		"vocab": hex.EncodeToString(t.data.Vocab),
	}
}

// load sets every Variable from the checkpoint at path, after checking
// that its model and vocabulary are this run's, and returns the step it
// was taken at.
func (t *trainer) load(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	_, meta, err := tensor.ReadSafetensors(bytes.NewReader(b), tensor.SafetensorsLimits{})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	want := t.metadata()
	for _, k := range []string{"model", "vocab"} {
		if meta[k] != want[k] {
			return 0, fmt.Errorf("%s: the checkpoint's %s is %q, this run's %q", path, k, meta[k], want[k])
		}
	}
	if _, err := t.step.LoadVariables(bytes.NewReader(b)); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return t.stepCount()
}

func run(w io.Writer, c config) (*result, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	root, err := gosrc.Goroot()
	if err != nil {
		return nil, err
	}
	loadStart := time.Now()
	data, err := gosrc.Load(root, c.corpusBytes)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "Go source from %s: %d files, %.1f MB for training, %.1f MB held out, %d distinct bytes (read in %v)\n",
		data.Root, data.Files, float64(len(data.Train))/(1<<20), float64(len(data.Val))/(1<<20), len(data.Vocab), time.Since(loadStart).Round(time.Millisecond))
	if len(data.Val) < c.model.ctx+2 || len(data.Train) < c.model.ctx+2 {
		return nil, fmt.Errorf("the corpus is too small for a context of %d", c.model.ctx)
	}
	t, err := newTrainer(c, data)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	c = t.c
	nParams := 0
	ps, _ := t.m.params()
	for _, p := range ps {
		nParams += p.Shape().Size()
	}
	fmt.Fprintf(w, "transformer: %v; %d parameters\n", c.model, nParams)
	fmt.Fprintf(w, "AdamW lr %g (warmup %d, cosine to %g), weight decay %g, clip %g, batch %d, %d steps, seed %d, on %s\n",
		c.lr, c.warmup, c.minLR, c.weightDecay, c.clip, c.batch, c.steps, c.seed, t.be.Device())
	fmt.Fprintf(w, "training step: %v\n", t.step.Stats())

	ctx := context.Background()
	res := &result{vocab: len(data.Vocab)}
	start := 0
	if c.resume != "" {
		if start, err = t.load(c.resume); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "resumed from %s at step %d\n", c.resume, start)
	}
	res.firstStep = start
	if res.initLoss, err = t.valLoss(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "validation loss at step %d: %.4f (ln %d = %.4f)\n", start, res.initLoss, len(data.Vocab), math.Log(float64(len(data.Vocab))))

	bar := &report.Progress{W: w, InPlace: c.progress, Lines: 10, Smooth: 20}
	bar.Start(c.steps, start)
	var evalTime, elapsed time.Duration
	val, step := -1.0, start // the latest validation loss (-1: none yet) and step
	line := func(b string, loss float64) string {
		v := ""
		if val >= 0 {
			v = fmt.Sprintf("  val %.4f", val)
		}
		perStep := elapsed.Seconds() * 1e3 / float64(max(1, step-start))
		return fmt.Sprintf("step %5d/%d %s  loss %.4f%s  %5.1f ms/step", step, c.steps, b, loss, v, perStep)
	}
	trainStart := time.Now()
	for i := start; i < c.steps; i++ {
		runCtx := ctx
		if i == start+min(10, c.steps-start-1) {
			runCtx = profile.NewContext(ctx, t.rec) // one warm step, profiled
		}
		l, err := t.trainStep(runCtx, i)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(l) {
			return nil, fmt.Errorf("the loss is NaN at step %d", i)
		}
		res.losses = append(res.losses, l)
		if (c.evalEvery > 0 && (i+1)%c.evalEvery == 0) || i+1 == c.steps {
			e := time.Now()
			v, err := t.valLoss(ctx)
			if err != nil {
				return nil, err
			}
			evalTime += time.Since(e)
			res.val = append(res.val, valPoint{i + 1, v})
			val = v
		}
		step, elapsed = i+1, time.Since(trainStart)-evalTime
		bar.Update(step, l, line)
	}
	res.elapsed = time.Since(trainStart) - evalTime
	bar.Done(line)
	if n := len(res.losses); n > 0 {
		fmt.Fprintf(w, "trained %d steps in %v (%.1f ms/step, %.0f tokens/s)\n", n, res.elapsed.Round(time.Millisecond),
			res.elapsed.Seconds()*1e3/float64(n), float64(n*c.batch*c.model.ctx)/res.elapsed.Seconds())
	}
	if len(res.val) > 0 {
		fmt.Fprintf(w, "validation loss after %d steps: %.4f\n", c.steps, res.val[len(res.val)-1].loss)
	}

	if c.outDir != "" && len(res.losses) > 0 {
		tracePath := report.RankPath(c.outDir, "trace.json", c.comm)
		if err := report.WriteTrace(t.rec, tracePath); err != nil {
			return nil, err
		}
		plotPath := report.RankPath(c.outDir, "loss.png", c.comm)
		if err := plotLoss(res, plotPath); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote %s (one profiled training step: open it in https://ui.perfetto.dev) and %s (the loss curve)\n", tracePath, plotPath)
	}
	if c.save != "" {
		meta := t.metadata()
		meta["step"] = strconv.Itoa(c.steps)
		if err := t.step.SaveVariablesFile(c.save, meta); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote the checkpoint to %s (weights, AdamW state, dropout key)\n", c.save)
	}
	if c.sampleLen > 0 {
		text, err := t.sampler.generate(ctx, data, c.prompt, c.sampleLen, c.temperature, c.seed)
		if err != nil {
			return nil, err
		}
		res.sample = text
		fmt.Fprintf(w, "sample (temperature %g, top-%d):\n%s\n", c.temperature, c.topK, text)
	}
	return res, nil
}

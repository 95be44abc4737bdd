// Command grulm trains a GRU language model on the bytes of the Go
// standard library's source and then writes Go-looking code.
//
// The text and its batches are charlm's (package examples/internal/gosrc
// reads and splits them): the .go files under $(go env GOROOT)/src,
// tests, testdata and vendored code left out, in lexical path order,
// every 20th file held out for validation; tokens are the byte values
// that occur, and a training step's windows are a hash of the seed and
// the step.
//
// The recurrence is in the graph: the T time steps of a training window
// are one ops.Scan whose carry is the GRU state, and the training step
// differentiates through it with autodiff (a reverse Scan over the saved
// steps), clips the gradients by their global norm and applies Adam, all
// in one compiled program. Generation is one Scan too, whose carry holds
// the token just drawn (Gumbel-max sampling at a temperature, the noise
// fed from the host), so a whole sample is one Run.
//
// It prints the training loss as it falls, the validation loss (in nats
// per byte; ln(vocab) is a uniform guess) before and after, and a sample.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/gosrc"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

type config struct {
	model       modelConfig // vocab comes from the corpus
	batch       int
	steps       int
	lr          float64
	clip        float64
	evalEvery   int // print the losses every this many steps
	evalBatches int
	seed        uint64
	device      string
	corpusBytes int // 0: all of GOROOT/src
	sampleLen   int // bytes generated after the prompt (0: no sample)
	temperature float64
	prompt      string
}

func defaultConfig() config {
	return config{
		model: modelConfig{hidden: 256, ctx: 64},
		batch: 32, steps: 1000, lr: 3e-3, clip: 1,
		evalEvery: 100, evalBatches: 8, seed: 1,
		sampleLen: 400, temperature: 0.6, prompt: "func ",
	}
}

func main() {
	report.Main("grulm", parseFlags, func(w io.Writer, c config, _ bool) error {
		_, err := run(w, c)
		return err
	})
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("grulm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.model.hidden, "hidden", c.model.hidden, "GRU state width")
	fs.IntVar(&c.model.ctx, "ctx", c.model.ctx, "training window in bytes (the Scan's length)")
	fs.IntVar(&c.batch, "batch", c.batch, "windows per training step")
	fs.IntVar(&c.steps, "steps", c.steps, "training steps")
	fs.Float64Var(&c.lr, "lr", c.lr, "Adam's learning rate")
	fs.Float64Var(&c.clip, "clip", c.clip, "clip the gradients to this global norm")
	fs.IntVar(&c.evalEvery, "eval-every", c.evalEvery, "print the losses every N steps")
	fs.IntVar(&c.evalBatches, "eval-batches", c.evalBatches, "batches of held-out text per validation")
	fs.Uint64Var(&c.seed, "seed", c.seed, "random seed (weights, batches, sampling)")
	fs.StringVar(&c.device, "device", "", device.Usage)
	mb := fs.Float64("corpus-mb", float64(c.corpusBytes)/(1<<20), "read at most this many MB of Go source (0: all of GOROOT/src)")
	fs.IntVar(&c.sampleLen, "sample", c.sampleLen, "bytes to generate after the prompt (0: none)")
	fs.Float64Var(&c.temperature, "temperature", c.temperature, "sampling temperature (0: greedy)")
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
	case c.batch < 1 || c.steps < 0 || c.evalEvery < 1 || c.evalBatches < 1 || c.sampleLen < 0 || c.corpusBytes < 0:
		return fmt.Errorf("bad sizes: batch %d, steps %d, eval every %d, eval batches %d, sample %d",
			c.batch, c.steps, c.evalEvery, c.evalBatches, c.sampleLen)
	case !(c.lr > 0) || !(c.clip > 0) || !(c.temperature >= 0):
		return fmt.Errorf("bad -lr %v, -clip %v or -temperature %v", c.lr, c.clip, c.temperature)
	case c.model.hidden < 1 || c.model.ctx < 1:
		return fmt.Errorf("bad -hidden %d or -ctx %d", c.model.hidden, c.model.ctx)
	}
	return nil
}

// trainer is the compiled model: the training step, the validation loss
// and the sampler, sharing the Variables.
type trainer struct {
	c       config
	data    *gosrc.Corpus
	g       *graph.Graph
	m       *model
	be      exec.Backend
	step    *exec.Program
	eval    *exec.Program
	sampler *sampler

	x, y, ex, ey  *graph.Node
	loss, evLoss  *graph.Node
	train, val    *gosrc.Batcher
	out, evalOut  []*tensor.Tensor
	trainF, evalF exec.Feeds
}

// build makes the graphs (no backend involved): the training loss and its
// update, the validation loss, the sampler.
func build(c config, data *gosrc.Corpus) (*trainer, []exec.Option, error) {
	c.model.vocab = len(data.Vocab)
	t := &trainer{c: c, data: data, g: graph.New()}
	g := t.g
	m, err := newModel(g, c.seed, c.model)
	if err != nil {
		return nil, nil, err
	}
	t.m = m
	B, T := c.batch, c.model.ctx
	t.x = g.Input("x", tensor.Int32, B, T)
	t.y = g.Input("y", tensor.Int32, B, T)
	t.loss = m.loss(t.x, t.y)
	params := m.params()
	grads, _, err := optim.ClipGlobalNorm(autodiff.Grad(t.loss, params...), c.clip)
	if err != nil {
		return nil, nil, err
	}
	upd, err := optim.Adam{LR: c.lr}.Apply(params, grads)
	if err != nil {
		return nil, nil, err
	}
	t.ex = g.Input("val_x", tensor.Int32, B, T)
	t.ey = g.Input("val_y", tensor.Int32, B, T)
	t.evLoss = m.loss(t.ex, t.ey)
	if c.sampleLen > 0 {
		// The first byte of the prompt is the carry's initial token; each
		// step adds one byte.
		t.sampler = newSampler(g, m, max(len(c.prompt), 1)+c.sampleLen-1)
	}
	if err := g.Err(); err != nil {
		return nil, nil, err
	}
	t.train, t.val = gosrc.NewBatcher(data.Train, B, T), gosrc.NewBatcher(data.Val, B, T)
	t.trainF = exec.Feeds{t.x: t.train.X, t.y: t.train.Y}
	t.evalF = exec.Feeds{t.ex: t.val.X, t.ey: t.val.Y}
	t.out = []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	t.evalOut = []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	return t, upd, nil
}

func newTrainer(c config, data *gosrc.Corpus) (*trainer, error) {
	t, upd, err := build(c, data)
	if err != nil {
		return nil, err
	}
	if t.be, err = device.Open(c.device); err != nil {
		return nil, err
	}
	if t.step, err = exec.Compile(t.be, []*graph.Node{t.loss}, upd...); err != nil {
		return nil, err
	}
	if t.eval, err = exec.Compile(t.be, []*graph.Node{t.evLoss}, exec.ShareVariables(t.step)); err != nil {
		t.Close()
		return nil, err
	}
	if t.sampler != nil {
		if err := t.sampler.compile(t.be, t.step); err != nil {
			t.Close()
			return nil, err
		}
	}
	return t, nil
}

func (t *trainer) Close() {
	for _, p := range []*exec.Program{t.eval, t.step} {
		if p != nil {
			p.Close()
		}
	}
	if t.sampler != nil {
		t.sampler.Close()
	}
}

// trainStep runs training step i and returns its loss (before the update).
func (t *trainer) trainStep(ctx context.Context, i int) (float64, error) {
	t.train.Fill(t.c.seed, i)
	if err := t.step.RunInto(ctx, t.trainF, t.out); err != nil {
		return 0, err
	}
	v, _ := tensor.Values[float32](t.out[0])
	return float64(v[0]), nil
}

// valLoss is the mean loss over evalBatches fixed held-out batches.
func (t *trainer) valLoss(ctx context.Context) (float64, error) {
	var sum float64
	for i := 0; i < t.c.evalBatches; i++ {
		t.val.Fill(t.c.seed^0x7a1, i)
		if err := t.eval.RunInto(ctx, t.evalF, t.evalOut); err != nil {
			return 0, err
		}
		v, _ := tensor.Values[float32](t.evalOut[0])
		sum += float64(v[0])
	}
	return sum / float64(t.c.evalBatches), nil
}

// result is what a run reports.
type result struct {
	vocab    int
	initVal  float64   // validation loss before training
	losses   []float64 // training loss of every step
	finalVal float64
	sample   string
	elapsed  time.Duration
}

func run(w io.Writer, c config) (*result, error) {
	root, err := gosrc.Goroot()
	if err != nil {
		return nil, err
	}
	data, err := gosrc.Load(root, c.corpusBytes)
	if err != nil {
		return nil, err
	}
	t, err := newTrainer(c, data)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	fmt.Fprintf(w, "corpus: %d files of %s, %d bytes training, %d validation, vocabulary %d\n",
		data.Files, root, len(data.Train), len(data.Val), len(data.Vocab))
	fmt.Fprintf(w, "GRU: %v; Adam lr %g, clip %g, batch %d, %d steps, on %s\n", t.m.cfg, c.lr, c.clip, c.batch, c.steps, t.be.Device())
	fmt.Fprintf(w, "training step: %v\n", t.step.Stats())

	ctx := context.Background()
	res := &result{vocab: len(data.Vocab)}
	if res.initVal, err = t.valLoss(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "validation loss before training: %.4f (ln %d = %.4f)\n", res.initVal, res.vocab, math.Log(float64(res.vocab)))
	start := time.Now()
	var evalTime time.Duration
	for i := 0; i < c.steps; i++ {
		l, err := t.trainStep(ctx, i)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(l) {
			return nil, fmt.Errorf("the loss is NaN at step %d", i)
		}
		res.losses = append(res.losses, l)
		if (i+1)%c.evalEvery == 0 || i+1 == c.steps {
			e := time.Now()
			v, err := t.valLoss(ctx)
			if err != nil {
				return nil, err
			}
			evalTime += time.Since(e)
			res.finalVal = v
			n := min(c.evalEvery, len(res.losses))
			fmt.Fprintf(w, "step %5d/%d  loss %.4f (mean of the last %d)  val %.4f  %.1f ms/step\n", i+1, c.steps,
				mean(res.losses[len(res.losses)-n:]), n, v, (time.Since(start)-evalTime).Seconds()*1e3/float64(i+1))
		}
	}
	res.elapsed = time.Since(start) - evalTime
	if n := len(res.losses); n > 0 {
		fmt.Fprintf(w, "trained %d steps in %v (%.1f ms/step, %.0f bytes/s)\n", n, res.elapsed.Round(time.Millisecond),
			res.elapsed.Seconds()*1e3/float64(n), float64(n*c.batch*c.model.ctx)/res.elapsed.Seconds())
	}
	if c.sampleLen > 0 {
		if res.sample, err = t.sampler.generate(ctx, data, c.prompt, c.temperature, c.seed); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "sample (one Run of a %d-step Scan, temperature %g):\n%s\n", t.sampler.n, c.temperature, res.sample)
	}
	return res, nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

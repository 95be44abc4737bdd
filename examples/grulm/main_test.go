package main

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/gosrc"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// tinyConfig trains in a couple of seconds: state 64, window 32, batch
// 16, 300 steps on the first 1 MB of the corpus.
func tinyConfig() config {
	c := defaultConfig()
	c.model = modelConfig{hidden: 64, ctx: 32}
	c.batch, c.steps, c.evalEvery, c.evalBatches = 16, 300, 100, 4
	c.lr = 1e-2
	c.corpusBytes = 1 << 20
	c.device = "cpu"
	c.sampleLen = 60
	return c
}

// TestTrainSmall trains the tiny model through the command's path (about
// 0.5 s): the validation loss starts near ln(vocab) (weights U(±1/8) give
// nearly uniform predictions); the training loss (mean of 10 steps) must
// fall by at least 1.5 nats (it falls 4.18 -> 2.22 with the default seed
// 1; by 1.84 to 1.97 with seeds 0 to 4) and the validation loss by at
// least 0.6 (4.70 -> 3.69; by 0.96 to 1.23 with seeds 0 to 4: the
// held-out files are other packages, and 1 MB is little text); the
// sample is the prompt and 60 bytes.
func TestTrainSmall(t *testing.T) {
	c := tinyConfig()
	var out bytes.Buffer
	res, err := run(&out, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	lnV := math.Log(float64(res.vocab))
	if math.Abs(res.initVal-lnV) > 0.1 {
		t.Errorf("initial validation loss %.4f, want within 0.1 of ln %d = %.4f", res.initVal, res.vocab, lnV)
	}
	if len(res.losses) != c.steps {
		t.Fatalf("%d losses for %d steps", len(res.losses), c.steps)
	}
	first, last := mean(res.losses[:10]), mean(res.losses[len(res.losses)-10:])
	t.Logf("validation loss %.4f -> %.4f; training loss (mean of 10 steps) %.4f -> %.4f", res.initVal, res.finalVal, first, last)
	if !(res.finalVal < res.initVal-0.6) || !(last < first-1.5) {
		t.Errorf("validation loss %.4f -> %.4f, training loss %.4f -> %.4f: want falls of at least 0.6 and 1.5 nats", res.initVal, res.finalVal, first, last)
	}
	if !strings.HasPrefix(res.sample, c.prompt) || len(res.sample) != len(c.prompt)+c.sampleLen {
		t.Errorf("sample %q: want the prompt %q and %d bytes", res.sample, c.prompt, c.sampleLen)
	}
	if !strings.Contains(out.String(), res.sample) {
		t.Errorf("the output does not show the sample:\n%s", out.String())
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags([]string{"-hidden", "32", "-ctx", "16", "-steps", "7", "-corpus-mb", "1.5", "-temperature", "0"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.model.hidden != 32 || c.model.ctx != 16 || c.steps != 7 || c.corpusBytes != 3<<19 || c.temperature != 0 || c.device != "" {
		t.Errorf("flags: %+v", c)
	}
	for _, bad := range [][]string{{"-lr", "0"}, {"-temperature", "-1"}, {"-batch", "0"}, {"-hidden", "0"}, {"x"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestZeroAllocs: a training step (filling the batch, running the
// compiled step with its forward and backward Scans) allocates nothing on
// the Go heap once warm.
func TestZeroAllocs(t *testing.T) {
	c := tinyConfig()
	c.sampleLen = 0
	root, err := gosrc.Goroot()
	if err != nil {
		t.Skip(err)
	}
	data, err := gosrc.Load(root, c.corpusBytes)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := newTrainer(c, data)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	i := 0
	step := func() {
		if _, err := tr.trainStep(ctx, i); err != nil {
			t.Fatal(err)
		}
		i++
	}
	for range 20 {
		step()
	}
	if allocs := testing.AllocsPerRun(50, step); allocs != 0 {
		t.Errorf("%v allocations per training step, want 0", allocs)
	}
}

// TestSamplerCPU: the generation Scan compiled for the CPU draws the
// tokens exectest.Eval draws from the same feeds (the tiny model, the
// prompt "cab", temperature 1, Gumbel noise of seed 3; float32 on the CPU
// against float32-rounded float64 could differ only at a near tie of two
// logits plus noise, and there is none here).
func TestSamplerCPU(t *testing.T) {
	g, m := tinyModel(t)
	data := gosrc.NewCorpus([]byte("abcde"))
	s := newSampler(g, m, 30)
	be, err := device.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	if s.prog, err = exec.Compile(be, []*graph.Node{s.tokens}); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.generate(context.Background(), data, "cab", 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exectest.Eval([]*graph.Node{s.tokens}, s.feeds())
	if err != nil {
		t.Fatal(err)
	}
	toks, _ := tensor.Values[int32](out[0])
	if want := s.text(data, "cab", toks); got != want || len(got) != 31 {
		t.Errorf("the CPU generated %q, exectest.Eval %q (want 31 bytes)", got, want)
	}
	t.Logf("%q", got)
}

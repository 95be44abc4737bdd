package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/loomgraph/loom/examples/internal/gosrc"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// sampler generates text with one Run: the whole generation is one
// ops.Scan of n steps whose carry is the GRU state and the previous token
// (a dependence through the sampled token itself, which no unrolled
// batch computation could express). Step t feeds the previous token to the
// cell, and its next token is forced[t] while the prompt lasts, else drawn
// from softmax(logits/temperature) by the Gumbel-max trick: the ArgMax of
// logits/temperature + G_t, with G_t standard Gumbel noise drawn on the
// host and fed as one of the scanned xs.
type sampler struct {
	m      *model
	n      int         // steps: the bytes of a sample, less the first
	first  *graph.Node // [1] int32: the prompt's first token
	forced *graph.Node // [n] int32: forced[t] is the token after step t while force[t]
	force  *graph.Node // [n] bool
	noise  *graph.Node // [n,V] f32: the Gumbel noise of each step
	temp   *graph.Node // scalar f32
	tokens *graph.Node // [n,1] int32: the token after each step
	prog   *exec.Program

	firstT, forcedT, forceT, noiseT, tempT *tensor.Tensor
	out                                    []*tensor.Tensor
}

// newSampler builds the generation graph for n steps.
func newSampler(g *graph.Graph, m *model, n int) *sampler {
	V := m.cfg.vocab
	s := &sampler{m: m, n: n}
	s.first = g.Input("sample_first", tensor.Int32, 1)
	s.forced = g.Input("sample_forced", tensor.Int32, n)
	s.force = g.Input("sample_force", tensor.Bool, n)
	s.noise = g.Input("sample_noise", tensor.Float32, n, V)
	s.temp = g.Input("temperature", tensor.Float32)
	h0 := ops.Full(g, tensor.Float32, 0, 1, m.cfg.hidden)
	_, ys := ops.Scan(func(c, x []*graph.Node) (next, y []*graph.Node) {
		h, tok := c[0], c[1]
		forced, force, noise := x[0], x[1], x[2]
		h = m.cell(h, m.inputGates(tok)) // [1,H]
		logits := ops.Div(m.logits(h), s.temp)
		drawn := ops.Cast(ops.ArgMax(ops.Add(logits, noise), -1), tensor.Int32) // [1]
		tok = ops.Where(force, forced, drawn)
		return []*graph.Node{h, tok}, []*graph.Node{tok}
	}, []*graph.Node{h0, s.first}, []*graph.Node{s.forced, s.force, s.noise}, n)
	s.tokens = ys[0]
	s.firstT = tensor.Zeros(tensor.Int32, 1)
	s.forcedT = tensor.Zeros(tensor.Int32, n)
	s.forceT = tensor.Zeros(tensor.Bool, n)
	s.noiseT = tensor.Zeros(tensor.Float32, n, V)
	s.tempT = tensor.Zeros(tensor.Float32)
	return s
}

func (s *sampler) compile(be exec.Backend, share *exec.Program) error {
	var err error
	s.prog, err = exec.Compile(be, []*graph.Node{s.tokens}, exec.ShareVariables(share))
	return err
}

func (s *sampler) Close() {
	if s.prog != nil {
		s.prog.Close()
	}
}

func (s *sampler) feeds() exec.Feeds {
	return exec.Feeds{s.first: s.firstT, s.forced: s.forcedT, s.force: s.forceT, s.noise: s.noiseT, s.temp: s.tempT}
}

// prepare writes the feeds for prompt (its bytes must be in the corpus;
// empty: a newline) at temperature, with noise from seed (temperature 0:
// greedy, no noise).
func (s *sampler) prepare(data *gosrc.Corpus, prompt string, temperature float64, seed uint64) (int, error) {
	if prompt == "" {
		prompt = "\n"
	}
	if len(prompt) > s.n+1 {
		return 0, fmt.Errorf("the prompt is %d bytes, longer than the %d the sampler was built for", len(prompt), s.n+1)
	}
	ids := make([]int32, len(prompt))
	for i := 0; i < len(prompt); i++ {
		if ids[i] = int32(data.IDs[prompt[i]]); ids[i] < 0 {
			return 0, fmt.Errorf("the prompt's byte %q does not occur in the corpus", prompt[i])
		}
	}
	first, _ := tensor.Values[int32](s.firstT)
	forced, _ := tensor.Values[int32](s.forcedT)
	force, _ := tensor.Values[bool](s.forceT)
	noise, _ := tensor.Values[float32](s.noiseT)
	temp, _ := tensor.Values[float32](s.tempT)
	first[0] = ids[0]
	for t := range forced {
		force[t] = t+1 < len(ids)
		forced[t] = 0
		if force[t] {
			forced[t] = ids[t+1]
		}
	}
	temp[0] = 1
	clear(noise)
	if temperature > 0 {
		temp[0] = float32(temperature)
		r := optim.NewRand(seed)
		for i := range noise {
			u := max(r.Float64(), 1e-300) // (0, 1)
			noise[i] = float32(-math.Log(-math.Log(u)))
		}
	}
	return len(prompt), nil
}

// text is the prompt's first byte and the tokens the steps produced.
func (s *sampler) text(data *gosrc.Corpus, prompt string, toks []int32) string {
	var sb strings.Builder
	if prompt == "" {
		prompt = "\n"
	}
	sb.WriteByte(prompt[0])
	for _, t := range toks {
		sb.WriteByte(data.Vocab[t])
	}
	return sb.String()
}

// generate returns the prompt followed by generated text, s.n+1 bytes in
// all (the prompt's first byte and one per step).
func (s *sampler) generate(ctx context.Context, data *gosrc.Corpus, prompt string, temperature float64, seed uint64) (string, error) {
	if _, err := s.prepare(data, prompt, temperature, seed); err != nil {
		return "", err
	}
	out, err := s.prog.Run(ctx, s.feeds())
	if err != nil {
		return "", err
	}
	toks, _ := tensor.Values[int32](out[0])
	return s.text(data, prompt, toks), nil
}

package main

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/examples/internal/gosrc"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// tinyModel is a model small enough to check by hand-written loops: 5
// tokens, state width 4, window 6.
func tinyModel(t *testing.T) (*graph.Graph, *model) {
	t.Helper()
	g := graph.New()
	m, err := newModel(g, 7, modelConfig{vocab: 5, hidden: 4, ctx: 6})
	if err != nil {
		t.Fatal(err)
	}
	return g, m
}

func values(t *testing.T, n *graph.Node) []float64 {
	t.Helper()
	return n.Value().Float64s()
}

// hostGRU is the model in float64 Go loops (the reference): the logits
// [T·B, V], time-major, for ids [B][T] from a zero state.
type hostGRU struct {
	V, H           int
	wx, bx, wh, bh []float64
	wo, bo         []float64
}

func newHostGRU(t *testing.T, m *model) *hostGRU {
	return &hostGRU{V: m.cfg.vocab, H: m.cfg.hidden,
		wx: values(t, m.wx), bx: values(t, m.bx), wh: values(t, m.wh), bh: values(t, m.bh),
		wo: values(t, m.wo), bo: values(t, m.bo)}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// step returns the state after token tok from state h.
func (r *hostGRU) step(h []float64, tok int) []float64 {
	H := r.H
	pre := func(gate, j int) (x, hh float64) {
		c := gate*H + j
		x = r.wx[tok*3*H+c] + r.bx[c]
		hh = r.bh[c]
		for k := 0; k < H; k++ {
			hh += h[k] * r.wh[k*3*H+c]
		}
		return x, hh
	}
	next := make([]float64, H)
	for j := 0; j < H; j++ {
		xr, hr := pre(0, j)
		xz, hz := pre(1, j)
		xn, hn := pre(2, j)
		rg, z := sigmoid(xr+hr), sigmoid(xz+hz)
		n := math.Tanh(xn + rg*hn)
		next[j] = (1-z)*n + z*h[j]
	}
	return next
}

func (r *hostGRU) logits(h []float64) []float64 {
	out := make([]float64, r.V)
	for v := range out {
		out[v] = r.bo[v]
		for k := 0; k < r.H; k++ {
			out[v] += h[k] * r.wo[k*r.V+v]
		}
	}
	return out
}

// TestForwardReference: the Scan's logits (exectest.Eval) are the host
// loops' to float32 rounding.
func TestForwardReference(t *testing.T) {
	g, m := tinyModel(t)
	const B, T = 2, 6
	ids := []int32{0, 3, 4, 1, 1, 2, 4, 4, 0, 2, 3, 1}
	x := g.Input("x", tensor.Int32, B, T)
	logits := m.forward(x)
	unrolled := m.forwardUnrolled(x)
	xt, _ := tensor.New(ids, B, T)
	out, err := exectest.Eval([]*graph.Node{logits, unrolled}, map[*graph.Node]*tensor.Tensor{x: xt})
	if err != nil {
		t.Fatal(err)
	}
	got, unr := out[0].Float64s(), out[1].Float64s()
	ref := newHostGRU(t, m)
	V := m.cfg.vocab
	for b := 0; b < B; b++ {
		h := make([]float64, m.cfg.hidden)
		for s := 0; s < T; s++ {
			h = ref.step(h, int(ids[b*T+s]))
			want := ref.logits(h)
			for v := 0; v < V; v++ {
				i := (s*B+b)*V + v
				if math.Abs(got[i]-want[v]) > 1e-5 || got[i] != unr[i] {
					t.Fatalf("window %d step %d logit %d: Scan %v, unrolled %v, host %v", b, s, v, got[i], unr[i], want[v])
				}
			}
		}
	}
}

// TestSamplerReference: the generation Scan (exectest.Eval) keeps the
// prompt and then, at temperature 0 (greedy, no noise), continues with
// the host model's most likely byte at every step.
func TestSamplerReference(t *testing.T) {
	g, m := tinyModel(t)
	data := gosrc.NewCorpus([]byte("abcde"))
	const n = 9
	s := newSampler(g, m, n)
	for _, prompt := range []string{"cab", "e"} {
		if _, err := s.prepare(data, prompt, 0, 1); err != nil {
			t.Fatal(err)
		}
		out, err := exectest.Eval([]*graph.Node{s.tokens}, s.feeds())
		if err != nil {
			t.Fatal(err)
		}
		toks, _ := tensor.Values[int32](out[0])
		text := s.text(data, prompt, toks)
		if len(text) != n+1 || text[:len(prompt)] != prompt {
			t.Fatalf("prompt %q: generated %q, want the prompt and %d bytes in all", prompt, text, n+1)
		}
		ref := newHostGRU(t, m)
		h := make([]float64, m.cfg.hidden)
		for i := 0; i < n; i++ {
			h = ref.step(h, data.IDs[text[i]])
			if i+1 < len(prompt) {
				continue
			}
			l := ref.logits(h)
			best := 0
			for v := range l {
				if l[v] > l[best] {
					best = v
				}
			}
			if text[i+1] != data.Vocab[best] {
				t.Fatalf("prompt %q: byte %d of %q is %q; the host model's most likely is %q (logits %v)", prompt, i+1, text, text[i+1], data.Vocab[best], l)
			}
		}
		t.Logf("prompt %q: %q", prompt, text)
	}
	if _, err := s.prepare(data, "abcdefghijk", 0, 1); err == nil {
		t.Error("a prompt longer than the sampler's steps: no error")
	}
	if _, err := s.prepare(data, "cax", 0, 1); err == nil {
		t.Error("a prompt byte outside the vocabulary: no error")
	}
}

// TestSamplerDistribution: at temperature τ the Gumbel-max draw picks
// token v with probability softmax(logits/τ)[v]. A one-step sampler after
// the prompt "c", 4000 seeds, τ = 0.7: every token's frequency is within
// 4 standard deviations (√(p(1-p)/4000)) of the host model's probability.
func TestSamplerDistribution(t *testing.T) {
	g, m := tinyModel(t)
	data := gosrc.NewCorpus([]byte("abcde"))
	s := newSampler(g, m, 1)
	const draws, tau = 4000, 0.7
	counts := make([]float64, m.cfg.vocab)
	for seed := uint64(0); seed < draws; seed++ {
		if _, err := s.prepare(data, "c", tau, seed); err != nil {
			t.Fatal(err)
		}
		out, err := exectest.Eval([]*graph.Node{s.tokens}, s.feeds())
		if err != nil {
			t.Fatal(err)
		}
		toks, _ := tensor.Values[int32](out[0])
		counts[toks[0]]++
	}
	ref := newHostGRU(t, m)
	l := ref.logits(ref.step(make([]float64, m.cfg.hidden), data.IDs['c']))
	var z float64
	p := make([]float64, len(l))
	for v := range l {
		p[v] = math.Exp(l[v] / tau)
		z += p[v]
	}
	for v := range p {
		p[v] /= z
		f := counts[v] / draws
		if sd := math.Sqrt(p[v] * (1 - p[v]) / draws); math.Abs(f-p[v]) > 4*sd {
			t.Errorf("token %d drawn with frequency %.4f, probability %.4f (sd %.4f)", v, f, p[v], sd)
		}
	}
	t.Logf("frequencies %v, probabilities %v", counts, p)
}

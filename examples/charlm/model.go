package main

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// modelConfig is the transformer's size.
type modelConfig struct {
	vocab   int     // tokens (byte values)
	layers  int     // transformer blocks
	dModel  int     // width of the residual stream
	heads   int     // attention heads (dModel/heads wide each)
	ctx     int     // context length T
	dropout float64 // dropout rate on the attention weights and the residual branches
}

func (c modelConfig) String() string {
	return fmt.Sprintf("vocab %d, %d layers, d_model %d, %d heads, context %d, dropout %g", c.vocab, c.layers, c.dModel, c.heads, c.ctx, c.dropout)
}

func (c modelConfig) check() error {
	switch {
	case c.vocab < 2 || c.layers < 1 || c.dModel < 1 || c.heads < 1 || c.ctx < 2:
		return fmt.Errorf("bad model size: %v", c)
	case c.dModel%c.heads != 0:
		return fmt.Errorf("d_model %d is not a multiple of the %d heads", c.dModel, c.heads)
	case !(c.dropout >= 0 && c.dropout < 1):
		return fmt.Errorf("dropout %v is not in [0, 1)", c.dropout)
	}
	return nil
}

// block is one pre-LayerNorm transformer block's parameters:
// x + attn(LN1(x)), then x + MLP(LN2(x)).
type block struct {
	ln1g, ln1b *graph.Node // [D]
	wqkv, bqkv *graph.Node // [D,3D], [3D]: queries, keys and values of every head
	wo, bo     *graph.Node // [D,D], [D]: the heads' outputs projected back
	ln2g, ln2b *graph.Node // [D]
	w1, b1     *graph.Node // [D,4D], [4D]
	w2, b2     *graph.Node // [4D,D], [D]
}

// model is a decoder-only transformer (GPT-2's layout): token embedding
// plus learned positions, pre-LayerNorm blocks of causal multi-head
// self-attention and a GELU MLP with residuals, a final LayerNorm and the
// token embedding (tied) as the output layer.
type model struct {
	cfg        modelConfig
	tok, pos   *graph.Node // [V,D], [T,D]
	blocks     []block
	lnfg, lnfb *graph.Node
	mask       *graph.Node // [T,T]: 0 on and below the diagonal, -Inf above
	// decay are the matrices (AdamW's weight decay applies), noDecay the
	// biases, the LayerNorms' gains and the embeddings (it does not).
	decay, noDecay []*graph.Node
}

// newModel creates the parameters as Variables of g, initialised as
// GPT-2: weights N(0, 0.02), the residual projections (wo, w2)
// N(0, 0.02/sqrt(2·layers)), biases 0, LayerNorm gains 1.
func newModel(g *graph.Graph, r *optim.Rand, cfg modelConfig) (*model, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	m := &model{cfg: cfg}
	D, V, T := cfg.dModel, cfg.vocab, cfg.ctx
	var err error
	variable := func(name string, decay bool, t *tensor.Tensor) *graph.Node {
		v := g.Variable(name, t)
		if decay {
			m.decay = append(m.decay, v)
		} else {
			m.noDecay = append(m.noDecay, v)
		}
		return v
	}
	normal := func(name string, std float64, decay bool, shape ...int) *graph.Node {
		if err != nil {
			return nil
		}
		var t *tensor.Tensor
		t, err = optim.Normal(r, 0, std, tensor.Float32, shape...)
		if err != nil {
			return nil
		}
		return variable(name, decay, t)
	}
	fill := func(name string, v float64, shape ...int) *graph.Node {
		t, _ := tensor.Full(tensor.Float32, v, shape...)
		return variable(name, false, t)
	}
	residStd := 0.02 / math.Sqrt(2*float64(cfg.layers))
	m.tok = normal("tok_emb", 0.02, false, V, D)
	m.pos = normal("pos_emb", 0.02, false, T, D)
	for l := 0; l < cfg.layers; l++ {
		p := fmt.Sprintf("block%d/", l)
		b := block{
			ln1g: fill(p+"ln1/gain", 1, D), ln1b: fill(p+"ln1/bias", 0, D),
			wqkv: normal(p+"attn/wqkv", 0.02, true, D, 3*D), bqkv: fill(p+"attn/bqkv", 0, 3*D),
			wo: normal(p+"attn/wo", residStd, true, D, D), bo: fill(p+"attn/bo", 0, D),
			ln2g: fill(p+"ln2/gain", 1, D), ln2b: fill(p+"ln2/bias", 0, D),
			w1: normal(p+"mlp/w1", 0.02, true, D, 4*D), b1: fill(p+"mlp/b1", 0, 4*D),
			w2: normal(p+"mlp/w2", residStd, true, 4*D, D), b2: fill(p+"mlp/b2", 0, D),
		}
		m.blocks = append(m.blocks, b)
	}
	m.lnfg, m.lnfb = fill("lnf/gain", 1, D), fill("lnf/bias", 0, D)
	if err != nil {
		return nil, err
	}
	mask := make([]float32, T*T)
	for i := 0; i < T; i++ {
		for j := i + 1; j < T; j++ {
			mask[i*T+j] = float32(math.Inf(-1))
		}
	}
	mt, err := tensor.New(mask, T, T)
	if err != nil {
		return nil, err
	}
	m.mask = g.Const(mt)
	return m, g.Err()
}

// params are every trained Variable: the decayed ones first.
func (m *model) params() []*graph.Node {
	return append(append([]*graph.Node(nil), m.decay...), m.noDecay...)
}

// layerNorm normalises the last axis of x to mean 0 and variance 1
// (biased, as torch.nn.LayerNorm, eps 1e-5), then scales and shifts it.
func layerNorm(x, gain, bias *graph.Node) *graph.Node {
	mu := ops.MeanKeepDims(x, -1)
	xc := ops.Sub(x, mu)
	v := ops.MeanKeepDims(ops.Square(xc), -1)
	y := ops.Mul(xc, ops.Rsqrt(ops.Add(v, ops.Scalar(v, 1e-5))))
	return ops.Add(ops.Mul(y, gain), bias)
}

// linear is x·w + b for x [N,in].
func linear(x, w, b *graph.Node) *graph.Node { return ops.Add(ops.MatMul(x, w), b) }

// forward returns the logits [B·T, V] for the token ids [B, T] (int32).
// With drop (training) every dropout site gets its own mask from drop;
// nil drop (evaluation, sampling) leaves dropout out.
func (m *model) forward(ids *graph.Node, drop *dropper) *graph.Node {
	B, T := ids.Shape()[0], ids.Shape()[1]
	D, H := m.cfg.dModel, m.cfg.heads
	dh := D / H
	x := embed(m.tok, ids)                                // [B,T,D]
	x = ops.Add(x, ops.Slice(m.pos, ops.R(0, T)))         // + positions [T,D]
	x = drop.apply(ops.Reshape(x, B*T, D), m.cfg.dropout) // [B·T, D]
	mask := m.mask
	if T != m.cfg.ctx {
		mask = ops.Slice(mask, ops.R(0, T), ops.R(0, T))
	}
	scale := 1 / math.Sqrt(float64(dh))
	for _, b := range m.blocks {
		// Causal self-attention.
		h := layerNorm(x, b.ln1g, b.ln1b)
		qkv := ops.Reshape(linear(h, b.wqkv, b.bqkv), B, T, 3, H, dh)
		qkv = ops.Transpose(qkv, 2, 0, 3, 1, 4) // [3,B,H,T,dh]
		parts := ops.Unstack(qkv, 0)
		q, k, v := ops.Mul(parts[0], ops.Scalar(parts[0], scale)), parts[1], parts[2]
		att := ops.Add(ops.MatMulT(q, k, false, true), mask) // [B,H,T,T]
		att = drop.apply(ops.Softmax(att, -1), m.cfg.dropout)
		o := ops.Transpose(ops.MatMul(att, v), 0, 2, 1, 3) // [B,T,H,dh]
		o = linear(ops.Reshape(o, B*T, D), b.wo, b.bo)
		x = ops.Add(x, drop.apply(o, m.cfg.dropout))
		// MLP.
		h = layerNorm(x, b.ln2g, b.ln2b)
		// GELU in its tanh approximation, as GPT-2: loom's CPU erf
		// costs about 15 times as much (20 ns an element).
		h = ops.GeluTanh(linear(h, b.w1, b.b1))
		x = ops.Add(x, drop.apply(linear(h, b.w2, b.b2), m.cfg.dropout))
	}
	x = layerNorm(x, m.lnfg, m.lnfb)
	return ops.MatMulT(x, m.tok, false, true) // tied output layer: [B·T, V]
}

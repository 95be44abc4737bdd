package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
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

// model is a decoder-only transformer (GPT-2's layout): token embedding
// plus learned positions, pre-LayerNorm blocks of causal multi-head
// self-attention and a GELU MLP with residuals, a final LayerNorm and the
// token embedding (tied) as the output layer. Its Variables are made by
// the nn.Model on the first forward and found by name on the others.
type model struct {
	cfg  modelConfig
	nn   *nn.Model
	mask *graph.Node // [T,T]: 0 on and below the diagonal, -Inf above
}

// newModel makes the model; its parameters are initialised as GPT-2's
// (from seed): weights and embeddings N(0, 0.02), the residual
// projections N(0, 0.02/sqrt(2·layers)), biases 0, LayerNorm gains 1.
func newModel(g *graph.Graph, seed uint64, cfg modelConfig) (*model, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	T := cfg.ctx
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
	return &model{cfg: cfg, nn: nn.New(g, seed), mask: g.Const(mt)}, g.Err()
}

// params are every trained Variable (after a forward), the matrices of
// the Linear layers first: decay of them, which AdamW's weight decay
// applies to (not to the biases, the LayerNorms' gains and the
// embeddings).
func (m *model) params() (all []*graph.Node, decay int) {
	var rest []*graph.Node
	for _, p := range m.nn.Params() {
		if p.Shape().Rank() == 2 && strings.HasSuffix(p.Name(), "/weight") {
			all = append(all, p)
		} else {
			rest = append(rest, p)
		}
	}
	return append(all, rest...), len(all)
}

// forward returns the logits [B·T, V] for the token ids [B, T] (int32).
// In training every dropout site draws its own mask; otherwise (evaluation,
// sampling) there is no dropout.
func (m *model) forward(ids *graph.Node, training bool) *graph.Node {
	m.nn.SetTraining(training)
	B, T := ids.Shape()[0], ids.Shape()[1]
	D, H, V, p := m.cfg.dModel, m.cfg.heads, m.cfg.vocab, m.cfg.dropout
	dh := D / H
	gpt := m.nn.WithInit(nn.Normal(0.02), nn.Zeros)
	resid := m.nn.WithInit(nn.Normal(0.02/math.Sqrt(2*float64(m.cfg.layers))), nn.Zeros)
	tok := m.nn.Param("tok_emb", nn.Normal(0.02), tensor.Float32, V, D)
	pos := m.nn.Param("pos_emb", nn.Normal(0.02), tensor.Float32, m.cfg.ctx, D)
	x := ops.Add(ops.Gather(tok, ids, 0), ops.Slice(pos, ops.R(0, T))) // [B,T,D]
	x = m.nn.Dropout(ops.Reshape(x, B*T, D), p)                        // [B·T, D]
	mask := m.mask
	if T != m.cfg.ctx {
		mask = ops.Slice(mask, ops.R(0, T), ops.R(0, T))
	}
	scale := 1 / math.Sqrt(float64(dh))
	for l := 0; l < m.cfg.layers; l++ {
		g, r := gpt.Scope(fmt.Sprint("block", l)), resid.Scope(fmt.Sprint("block", l))
		// Causal self-attention, the heads' queries, keys and values from
		// one matrix product.
		qkv := ops.Reshape(g.Linear(g.LayerNorm(x), 3*D), B, T, 3, H, dh)
		parts := ops.Unstack(ops.Transpose(qkv, 2, 0, 3, 1, 4), 0) // 3 × [B,H,T,dh]
		q, k, v := ops.Mul(parts[0], ops.Scalar(parts[0], scale)), parts[1], parts[2]
		att := ops.Add(ops.MatMulT(q, k, false, true), mask) // [B,H,T,T]
		att = m.nn.Dropout(ops.Softmax(att, -1), p)
		o := ops.Transpose(ops.MatMul(att, v), 0, 2, 1, 3) // [B,T,H,dh]
		x = ops.Add(x, m.nn.Dropout(r.Linear(ops.Reshape(o, B*T, D), D), p))
		// MLP. GELU in its tanh approximation, as GPT-2: loom's CPU erf
		// costs about 15 times as much (20 ns an element).
		h := ops.GeluTanh(g.Linear(g.LayerNorm(x), 4*D))
		x = ops.Add(x, m.nn.Dropout(r.Linear(h, D), p))
	}
	x = m.nn.LayerNorm(x)
	return ops.MatMulT(x, tok, false, true) // tied output layer: [B·T, V]
}

package main

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// modelConfig is the GRU's size.
type modelConfig struct {
	vocab  int // tokens (byte values), from the corpus
	hidden int // the GRU's state width H
	ctx    int // training window T (the Scan's length)
}

func (c modelConfig) String() string {
	return fmt.Sprintf("vocab %d, hidden %d, window %d", c.vocab, c.hidden, c.ctx)
}

func (c modelConfig) check() error {
	if c.vocab < 2 || c.hidden < 1 || c.ctx < 1 {
		return fmt.Errorf("bad model size: %v", c)
	}
	return nil
}

// model is a one-layer GRU language model over bytes: the input token's
// row of the input matrix (an embedding straight into the three gates'
// pre-activations: one-hot inputs make the input projection a Gather), the
// GRU cell (PyTorch's equations, reset gate applied after the recurrent
// product), and a linear output layer to the vocabulary's logits.
//
//	r = σ(Wx_r[tok] + bx_r + h·Wh_r + bh_r)
//	z = σ(Wx_z[tok] + bx_z + h·Wh_z + bh_z)
//	n = tanh(Wx_n[tok] + bx_n + r ⊙ (h·Wh_n + bh_n))
//	h' = (1 - z) ⊙ n + z ⊙ h
type model struct {
	cfg            modelConfig
	nn             *nn.Model
	wx, bx, wh, bh *graph.Node // [V,3H], [3H], [H,3H], [3H]: the gates r, z, n side by side
	wo, bo         *graph.Node // [H,V], [V]
}

// newModel makes the Variables, all drawn from U(-1/√H, 1/√H) as
// PyTorch's GRU and Linear (fan-in H) do.
func newModel(g *graph.Graph, seed uint64, cfg modelConfig) (*model, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	V, H := cfg.vocab, cfg.hidden
	bound := 1 / math.Sqrt(float64(H))
	u := func(r *optim.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
		return optim.Uniform(r, -bound, bound, dt, shape...)
	}
	m := &model{cfg: cfg, nn: nn.New(g, seed)}
	gru, out := m.nn.Scope("gru"), m.nn.Scope("out")
	m.wx = gru.Param("wx", u, tensor.Float32, V, 3*H)
	m.bx = gru.Param("bx", u, tensor.Float32, 3*H)
	m.wh = gru.Param("wh", u, tensor.Float32, H, 3*H)
	m.bh = gru.Param("bh", u, tensor.Float32, 3*H)
	m.wo = out.Param("weight", u, tensor.Float32, H, V)
	m.bo = out.Param("bias", u, tensor.Float32, V)
	return m, g.Err()
}

// params are the trained Variables.
func (m *model) params() []*graph.Node { return m.nn.Params() }

// inputGates is the input's part of the gates' pre-activations for token
// ids of any shape: [..., 3H].
func (m *model) inputGates(ids *graph.Node) *graph.Node {
	return ops.Add(ops.Gather(m.wx, ids, 0), m.bx)
}

// cell is one GRU step: the state h [B,H] and the input gates xg [B,3H]
// give the next state. Built inside a Scan's body, the weights it reads
// (wh, bh) are captured from the model's graph.
func (m *model) cell(h, xg *graph.Node) *graph.Node {
	hg := ops.Add(ops.MatMul(h, m.wh), m.bh)
	x := ops.Split(xg, 3, -1)
	hh := ops.Split(hg, 3, -1)
	r := ops.Sigmoid(ops.Add(x[0], hh[0]))
	z := ops.Sigmoid(ops.Add(x[1], hh[1]))
	n := ops.Tanh(ops.Add(x[2], ops.Mul(r, hh[2])))
	return ops.Add(n, ops.Mul(z, ops.Sub(h, n))) // (1-z)·n + z·h
}

// logits is the output layer: [..., H] -> [..., V].
func (m *model) logits(h *graph.Node) *graph.Node {
	return ops.Add(ops.MatMul(h, m.wo), m.bo)
}

// forward returns the logits [T·B, V] for the token ids [B,T] (int32),
// time-major (row t·B + b is step t of window b), from a zero state. The
// time loop is one ops.Scan over the T steps: the carry is the state, x_t
// the step's input gates [B,3H] (computed for every step at once, before
// the loop), y_t the new state; the output layer then runs on all the
// states at once, outside the loop.
func (m *model) forward(ids *graph.Node) *graph.Node {
	B, T, H := ids.Shape()[0], ids.Shape()[1], m.cfg.hidden
	xg := m.inputGates(ops.Transpose(ids, 1, 0)) // [T,B,3H]
	h0 := ops.Full(ids.Graph(), tensor.Float32, 0, B, H)
	_, ys := ops.Scan(func(c, x []*graph.Node) (next, y []*graph.Node) {
		h := m.cell(c[0], x[0])
		return []*graph.Node{h}, []*graph.Node{h}
	}, []*graph.Node{h0}, []*graph.Node{xg}, T)
	return m.logits(ops.Reshape(ys[0], T*B, H))
}

// loss is the mean cross-entropy of predicting y [B,T] from x [B,T].
func (m *model) loss(x, y *graph.Node) *graph.Node {
	B, T := y.Shape()[0], y.Shape()[1]
	labels := ops.Reshape(ops.Transpose(y, 1, 0), T*B) // time-major, as the logits
	return ops.Mean(ops.SparseSoftmaxCrossEntropy(m.forward(x), labels))
}

// forwardUnrolled is forward with the time loop unrolled on the host (T
// copies of the cell in the graph): the same function, for the tests.
func (m *model) forwardUnrolled(ids *graph.Node) *graph.Node {
	B, T, H := ids.Shape()[0], ids.Shape()[1], m.cfg.hidden
	xg := m.inputGates(ops.Transpose(ids, 1, 0))
	h := ops.Full(ids.Graph(), tensor.Float32, 0, B, H)
	hs := make([]*graph.Node, T)
	for t := range hs {
		h = m.cell(h, ops.Squeeze(ops.Slice(xg, ops.R(t, t+1)), 0))
		hs[t] = h
	}
	return m.logits(ops.Reshape(ops.Stack(0, hs...), T*B, H))
}

package bench

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// KindCharLM is one training step of examples/charlm's transformer.
const KindCharLM = "charlm"

// CharLM hyper-parameters shared by every engine (examples/charlm's
// defaults): AdamW with betas (0.9, 0.99), eps 1e-8, weight decay 0.1 on
// the matrices only, gradients clipped to global norm 1, LayerNorm eps
// 1e-5, GELU in its tanh approximation (GPT-2's).
const (
	CharLMBeta1       = 0.9
	CharLMBeta2       = 0.99
	CharLMWeightDecay = 0.1
	CharLMClip        = 1.0
	CharLMInit        = 0.034641016151377546 // 0.02·√3: uniform weights of standard deviation 0.02
)

// CharLMSpec is one training step of examples/charlm's default model:
// vocabulary 176 (the distinct bytes of Go 1.26's src/*.go), 2 blocks,
// d_model 128, 4 heads, context 128, batch 32, dropout 0.1, lr 6e-3.
func CharLMSpec() Spec {
	return Spec{Name: "charlm/train-step", Kind: KindCharLM, Vocab: 176, Blocks: 2, DModel: 128, Heads: 4, Ctx: 128,
		Batch: 32, Dropout: 0.1, LR: 6e-3, Seed: 700}
}

// CharLMCheckSpec is a smaller charlm without dropout (whose random masks
// differ between engines), for the cross-check.
func CharLMCheckSpec() Spec {
	return Spec{Name: "charlm/check", Kind: KindCharLM, Vocab: 50, Blocks: 2, DModel: 32, Heads: 4, Ctx: 16,
		Batch: 4, LR: 3e-3, Seed: 710}
}

// charlmParam is one parameter of the charlm workload, in the order every
// engine creates them (torch_bench.py's CharLM reads the same list):
// matrices are Uniform(seed, n, -CharLMInit, CharLMInit) laid out
// [in,out], biases 0, LayerNorm gains 1.
type charlmParam struct {
	name  string
	shape []int
	seed  uint64 // 0: a bias (zeros) or a gain (ones, see gain)
	gain  bool
	decay bool
}

// charlmParams lists the parameters: tok_emb [V,D] (seed+10), pos_emb
// [T,D] (seed+11), then per block l the LayerNorm, attention and MLP
// weights (wqkv, wo, w1, w2 from seed+20+10l+{0,1,2,3}), then the final
// LayerNorm.
func (s Spec) charlmParams() []charlmParam {
	D, V, T := s.DModel, s.Vocab, s.Ctx
	ps := []charlmParam{{name: "tok_emb", shape: []int{V, D}, seed: s.Seed + 10}, {name: "pos_emb", shape: []int{T, D}, seed: s.Seed + 11}}
	for l := 0; l < s.Blocks; l++ {
		p := fmt.Sprintf("block%d/", l)
		b := s.Seed + 20 + 10*uint64(l)
		ps = append(ps,
			charlmParam{name: p + "ln1/gain", shape: []int{D}, gain: true}, charlmParam{name: p + "ln1/bias", shape: []int{D}},
			charlmParam{name: p + "attn/wqkv", shape: []int{D, 3 * D}, seed: b, decay: true}, charlmParam{name: p + "attn/bqkv", shape: []int{3 * D}},
			charlmParam{name: p + "attn/wo", shape: []int{D, D}, seed: b + 1, decay: true}, charlmParam{name: p + "attn/bo", shape: []int{D}},
			charlmParam{name: p + "ln2/gain", shape: []int{D}, gain: true}, charlmParam{name: p + "ln2/bias", shape: []int{D}},
			charlmParam{name: p + "mlp/w1", shape: []int{D, 4 * D}, seed: b + 2, decay: true}, charlmParam{name: p + "mlp/b1", shape: []int{4 * D}},
			charlmParam{name: p + "mlp/w2", shape: []int{4 * D, D}, seed: b + 3, decay: true}, charlmParam{name: p + "mlp/b2", shape: []int{D}},
		)
	}
	return append(ps, charlmParam{name: "lnf/gain", shape: []int{D}, gain: true}, charlmParam{name: "lnf/bias", shape: []int{D}})
}

// charlmData are the inputs: token ids x and targets y, [B,T] each,
// Classes(seed+0) and Classes(seed+1) over the vocabulary.
func (s Spec) charlmData() (x, y []int32) {
	n := s.Batch * s.Ctx
	for _, c := range Classes(s.Seed, n, s.Vocab) {
		x = append(x, int32(c))
	}
	for _, c := range Classes(s.Seed+1, n, s.Vocab) {
		y = append(y, int32(c))
	}
	return x, y
}

// newCharLM builds the training step of examples/charlm's model (its
// model.go, at the spec's size) into g: the loss, its gradients clipped
// to global norm CharLMClip, AdamW on two groups (weight decay on the
// matrices only), the learning rate fed as a scalar Input (as the
// example's schedule does), and the dropout key advanced every Run.
func (e *Loom) newCharLM(g *graph.Graph, s Spec, in *loomInst) ([]*graph.Node, []exec.Option, error) {
	B, T, D, H := s.Batch, s.Ctx, s.DModel, s.Heads
	if D%H != 0 {
		return nil, nil, fmt.Errorf("charlm: d_model %d is not a multiple of %d heads", D, H)
	}
	vars := map[string]*graph.Node{}
	var decay, noDecay []*graph.Node
	for _, p := range s.charlmParams() {
		n := 1
		for _, d := range p.shape {
			n *= d
		}
		var t *tensor.Tensor
		switch {
		case p.seed != 0:
			t = f32(Uniform(p.seed, n, -CharLMInit, CharLMInit), p.shape...)
		case p.gain:
			t, _ = tensor.Full(tensor.Float32, 1, p.shape...)
		default:
			t = tensor.Zeros(tensor.Float32, p.shape...)
		}
		v := g.Variable(p.name, t)
		vars[p.name] = v
		if p.decay {
			decay = append(decay, v)
		} else {
			noDecay = append(noDecay, v)
		}
	}
	x := g.Input("x", tensor.Int32, B, T)
	y := g.Input("y", tensor.Int32, B, T)
	lr := g.Input("lr", tensor.Float32)
	drop := newCharLMDropper(g, s.Seed+2, s.Dropout)

	mask := make([]float32, T*T)
	for i := 0; i < T; i++ {
		for j := i + 1; j < T; j++ {
			mask[i*T+j] = float32(math.Inf(-1))
		}
	}
	maskN := g.Const(f32(mask, T, T))
	dh := D / H
	scale := 1 / math.Sqrt(float64(dh))
	layerNorm := func(h *graph.Node, name string) *graph.Node {
		mu := ops.MeanKeepDims(h, -1)
		hc := ops.Sub(h, mu)
		v := ops.MeanKeepDims(ops.Square(hc), -1)
		hn := ops.Mul(hc, ops.Rsqrt(ops.Add(v, ops.Scalar(v, 1e-5))))
		return ops.Add(ops.Mul(hn, vars[name+"/gain"]), vars[name+"/bias"])
	}
	linear := func(h *graph.Node, w, b string) *graph.Node { return ops.Add(ops.MatMul(h, vars[w]), vars[b]) }

	h := charlmEmbed(vars["tok_emb"], x)
	h = drop.apply(ops.Reshape(ops.Add(h, vars["pos_emb"]), B*T, D))
	for l := 0; l < s.Blocks; l++ {
		p := fmt.Sprintf("block%d/", l)
		a := layerNorm(h, p+"ln1")
		qkv := ops.Transpose(ops.Reshape(linear(a, p+"attn/wqkv", p+"attn/bqkv"), B, T, 3, H, dh), 2, 0, 3, 1, 4)
		parts := ops.Unstack(qkv, 0)
		q, k, v := ops.Mul(parts[0], ops.Scalar(parts[0], scale)), parts[1], parts[2]
		att := drop.apply(ops.Softmax(ops.Add(ops.MatMulT(q, k, false, true), maskN), -1))
		o := ops.Reshape(ops.Transpose(ops.MatMul(att, v), 0, 2, 1, 3), B*T, D)
		h = ops.Add(h, drop.apply(linear(o, p+"attn/wo", p+"attn/bo")))
		a = ops.GeluTanh(linear(layerNorm(h, p+"ln2"), p+"mlp/w1", p+"mlp/b1"))
		h = ops.Add(h, drop.apply(linear(a, p+"mlp/w2", p+"mlp/b2")))
	}
	logits := ops.MatMulT(layerNorm(h, "lnf"), vars["tok_emb"], false, true)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(logits, ops.Reshape(y, B*T)))

	params := append(append([]*graph.Node(nil), decay...), noDecay...)
	grads, _, err := optim.ClipGlobalNorm(autodiff.Grad(loss, params...), CharLMClip)
	if err != nil {
		return nil, nil, err
	}
	nd := len(decay)
	opts, err := optim.Adam{LR: s.LR, Beta1: CharLMBeta1, Beta2: CharLMBeta2, WeightDecay: CharLMWeightDecay, Decoupled: true, LRNode: lr}.Apply(params[:nd], grads[:nd])
	if err != nil {
		return nil, nil, err
	}
	opts2, err := optim.Adam{LR: s.LR, Beta1: CharLMBeta1, Beta2: CharLMBeta2, LRNode: lr}.Apply(params[nd:], grads[nd:])
	if err != nil {
		return nil, nil, err
	}
	opts = append(append(opts, opts2...), drop.advance()...)

	xd, yd := s.charlmData()
	xt, _ := tensor.New(xd, B, T)
	yt, _ := tensor.New(yd, B, T)
	lrt := tensor.Scalar(float32(s.LR))
	in.feeds = exec.Feeds{x: xt, y: yt, lr: lrt}
	return []*graph.Node{loss}, opts, nil
}

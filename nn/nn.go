package nn

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// Model creates and holds a model's Variables. Its layer methods take
// nodes and return nodes of its graph; the Variables they need are
// created on first use, under a name made from the Model's scope, the
// layer's automatic name and the parameter's name
// ("block0/linear1/weight"), and found again by that name when the same
// layers are built again. A Model made by Scope shares the store of the
// Model it came from. Not safe for concurrent use.
type Model struct {
	s      *store
	prefix string // "" or "name/.../"
	init   *inits // nil: PyTorch's defaults
}

// inits are the initialisers a Model made by WithInit uses instead of
// PyTorch's defaults.
type inits struct{ weight, bias Initializer }

// store is what every Model of one New shares.
type store struct {
	g        *graph.Graph
	rng      *optim.Rand
	training bool
	vars     map[string]*graph.Node // every Variable made, by name
	params   []*graph.Node          // trainable, creation order
	state    []*graph.Node          // running statistics, the dropout key
	updates  map[*graph.Node]*graph.Node
	key      *graph.Node    // the dropout key Variable (nil until a training Dropout)
	sites    uint32         // dropout sites of this build
	counts   map[string]int // prefix + kind -> layers built in this build
}

// New returns a Model that creates its Variables in g, initialised from a
// generator seeded with seed (optim.NewRand), in training mode (as a
// PyTorch module starts).
func New(g *graph.Graph, seed uint64) *Model {
	return &Model{s: &store{
		g: g, rng: optim.NewRand(seed), training: true,
		vars: map[string]*graph.Node{}, updates: map[*graph.Node]*graph.Node{}, counts: map[string]int{},
	}}
}

// Graph returns the graph the Model builds in.
func (m *Model) Graph() *graph.Graph { return m.s.g }

// Rand returns the generator the Model's initialisers draw from (seeded
// by New), for a program that draws the rest of its randomness after
// the model's (a shuffle) from the same seed.
func (m *Model) Rand() *optim.Rand { return m.s.rng }

// Scope returns a Model whose layers are named below "name/" (within m's
// own scope); it shares m's Variables, mode and updates.
func (m *Model) Scope(name string) *Model {
	return &Model{s: m.s, prefix: m.prefix + name + "/", init: m.init}
}

// SetTraining switches between training (BatchNorm normalises with the
// batch's statistics and updates its running statistics, Dropout drops)
// and inference (BatchNorm uses the running statistics, Dropout passes x
// through). It also starts a new build: the automatic layer names count
// from 0 again, so the model function built again after it finds the
// Variables of the first build by name (an evaluation graph next to the
// training graph, sharing its Variables through exec.ShareVariables).
func (m *Model) SetTraining(training bool) {
	m.s.training = training
	m.s.counts = map[string]int{}
	m.s.sites = 0
}

// Training reports the mode SetTraining set.
func (m *Model) Training() bool { return m.s.training }

// Params returns the trainable Variables in creation order (the argument
// of autodiff.Grad and of the optimisers).
func (m *Model) Params() []*graph.Node { return append([]*graph.Node(nil), m.s.params...) }

// Names returns Params' names: the Variables' names, which are also their
// keys in the checkpoints exec.Program.SaveVariables writes.
func (m *Model) Names() []string {
	names := make([]string, len(m.s.params))
	for i, p := range m.s.params {
		names[i] = p.Name()
	}
	return names
}

// State returns the Variables that are not trained: BatchNorm's running
// statistics and the dropout key, in creation order.
func (m *Model) State() []*graph.Node { return append([]*graph.Node(nil), m.s.state...) }

// Updates returns the exec.Update options of the last training build:
// BatchNorm's running statistics and the dropout key's advance
// (exec.AdvanceKey). Pass them to exec.Compile of the training step, with
// the optimiser's.
func (m *Model) Updates() []exec.Option {
	var opts []exec.Option
	for _, v := range m.s.state {
		if next, ok := m.s.updates[v]; ok {
			opts = append(opts, exec.Update(v, next))
		}
	}
	return opts
}

// layer returns the Model of the next layer of kind in m's scope
// ("linear0/", "linear1/", ...), counting within the current build.
func (m *Model) layer(kind string) *Model {
	k := m.prefix + kind
	n := m.s.counts[k]
	m.s.counts[k] = n + 1
	return &Model{s: m.s, prefix: k + strconv.Itoa(n) + "/", init: m.init}
}

// fail records a build error naming the layer and returns an invalid node.
func (m *Model) fail(layer string, inputs []*graph.Node, format string, args ...any) *graph.Node {
	return graph.Failf(graph.ErrInvalid, "nn."+layer, inputs, format, args...)
}

// variable returns the Variable name in m's scope, creating it with
// make's value on first use; a Variable found by name must have the type
// asked for. trainable ones are Params, the others State.
func (m *Model) variable(layer, name string, trainable bool, dt tensor.DType, shape []int, make func() (*tensor.Tensor, error)) *graph.Node {
	g := m.s.g
	if err := g.Err(); err != nil {
		return g.Fail(err)
	}
	full := m.prefix + name
	if v, ok := m.s.vars[full]; ok {
		if v.DType() != dt || !v.Shape().Equal(shape) {
			return g.Fail(graph.NewError(graph.ErrShape, "nn."+layer, nil, "Variable %q exists as %s, this build asks for %v%v", full, v.Type(), dt, tensor.Shape(shape)))
		}
		return v
	}
	t, err := make()
	if err != nil {
		return g.Fail(graph.NewError(graph.ErrInvalid, "nn."+layer, nil, "initialising %q: %v", full, err))
	}
	v := g.Variable(full, t)
	if !v.Valid() {
		return v
	}
	m.s.vars[full] = v
	if trainable {
		m.s.params = append(m.s.params, v)
	} else {
		m.s.state = append(m.s.state, v)
	}
	return v
}

// Initializer makes a parameter's initial value from the Model's
// generator (optim.HeNormal and the other optim initialisers have this
// form).
type Initializer func(r *optim.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error)

// Normal is the Initializer of N(0, std²) (GPT-2 uses 0.02).
func Normal(std float64) Initializer {
	return func(r *optim.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
		return optim.Normal(r, 0, std, dt, shape...)
	}
}

// Zeros is the Initializer of zeros.
func Zeros(_ *optim.Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	return optim.Zeros(dt, shape...)
}

// WithInit returns a Model of m's scope (sharing everything else) whose
// Linear, Conv and Embedding layers initialise their weights with weight
// and their biases with bias instead of PyTorch's defaults; a nil one
// keeps the default.
func (m *Model) WithInit(weight, bias Initializer) *Model {
	in := &inits{weight, bias}
	if m.init != nil {
		if weight == nil {
			in.weight = m.init.weight
		}
		if bias == nil {
			in.bias = m.init.bias
		}
	}
	return &Model{s: m.s, prefix: m.prefix, init: in}
}

// Param returns the trainable Variable name in m's scope (no layer name
// is added: Scope first to group it), created with init's value of type
// dt and shape on first use and found by name afterwards: for the
// parameters of a layer of one's own (a positional embedding, a table
// shared between an embedding and the output layer).
func (m *Model) Param(name string, init Initializer, dt tensor.DType, shape ...int) *graph.Node {
	if init == nil {
		return m.s.g.Fail(graph.NewError(graph.ErrInvalid, "nn.Param", nil, "%q: nil Initializer", m.prefix+name))
	}
	shape = append([]int(nil), shape...)
	return m.variable("Param", name, true, dt, shape, func() (*tensor.Tensor, error) { return init(m.s.rng, dt, shape...) })
}

// weight is the "weight" Variable: the Model's weight initialiser, or
// def.
func (m *Model) weight(layer string, dt tensor.DType, shape []int, def func() (*tensor.Tensor, error)) *graph.Node {
	if m.init != nil && m.init.weight != nil {
		def = func() (*tensor.Tensor, error) { return m.init.weight(m.s.rng, dt, shape...) }
	}
	return m.variable(layer, "weight", true, dt, shape, def)
}

// bias is the "bias" Variable: the Model's bias initialiser, or def.
func (m *Model) bias(layer string, dt tensor.DType, shape []int, def func() (*tensor.Tensor, error)) *graph.Node {
	if m.init != nil && m.init.bias != nil {
		def = func() (*tensor.Tensor, error) { return m.init.bias(m.s.rng, dt, shape...) }
	}
	return m.variable(layer, "bias", true, dt, shape, def)
}

// uniform is U(-bound, bound) from the Model's generator.
func (m *Model) uniform(bound float64, dt tensor.DType, shape []int) func() (*tensor.Tensor, error) {
	return func() (*tensor.Tensor, error) { return optim.Uniform(m.s.rng, -bound, bound, dt, shape...) }
}

func full(v float64, dt tensor.DType, shape []int) func() (*tensor.Tensor, error) {
	return func() (*tensor.Tensor, error) { return tensor.Full(dt, v, shape...) }
}

// check returns x's graph error, or an error when x is not a float node
// of the Model's graph with at least minRank axes.
func (m *Model) check(layer string, x *graph.Node, minRank int) *graph.Node {
	if _, bad := graph.Operands("nn."+layer, x); bad != nil {
		return bad
	}
	if x.Graph() != m.s.g {
		return m.fail(layer, []*graph.Node{x}, "x belongs to another graph than the Model's")
	}
	if !x.DType().IsFloat() {
		return graph.Failf(graph.ErrDType, "nn."+layer, []*graph.Node{x}, "x must be a float tensor")
	}
	if x.Rank() < minRank {
		return graph.Failf(graph.ErrShape, "nn."+layer, []*graph.Node{x}, "x must have at least %d axes", minRank)
	}
	return nil
}

// Linear is x·weight + bias for x [..., in]: weight [in, out] and bias
// [out], initialised as torch.nn.Linear (kaiming_uniform with a = √5 for
// the weight, which is U(±1/√in), and U(±1/√in) for the bias).
func (m *Model) Linear(x *graph.Node, out int) *graph.Node {
	if bad := m.check("Linear", x, 1); bad != nil {
		return bad
	}
	if out < 1 {
		return m.fail("Linear", []*graph.Node{x}, "out %d must be positive", out)
	}
	l := m.layer("linear")
	return l.dense(x, out)
}

// dense is Linear's computation in l's scope (weight and bias directly in
// it).
func (l *Model) dense(x *graph.Node, out int) *graph.Node {
	dt, in := x.DType(), x.Shape()[x.Rank()-1]
	bound := 1 / math.Sqrt(float64(max(in, 1)))
	w := l.weight("Linear", dt, []int{in, out}, l.uniform(bound, dt, []int{in, out}))
	b := l.bias("Linear", dt, []int{out}, l.uniform(bound, dt, []int{out}))
	if x.Rank() == 2 {
		return ops.Add(ops.MatMul(x, w), b)
	}
	// one matrix product for every leading axis
	lead := x.Shape()[:x.Rank()-1]
	y := ops.Add(ops.MatMul(ops.Reshape(x, -1, in), w), b)
	return ops.Reshape(y, append(append([]int(nil), lead...), out)...)
}

// Conv is a convolution with bias as torch.nn.Conv1d/2d/3d: x
// [N, C, S...] with len(kernel) spatial dims, "weight" [out, C/groups,
// kernel...] and "bias" [out], both U(±1/√fanIn) with fanIn =
// C/groups·∏kernel (PyTorch's kaiming_uniform with a = √5 and its bias
// rule); opts are ops.Conv's (Stride, Padding, Same, Dilation, Groups, ...).
func (m *Model) Conv(x *graph.Node, out int, kernel []int, opts ...ops.WindowOption) *graph.Node {
	const layer = "Conv"
	if bad := m.check(layer, x, 3); bad != nil {
		return bad
	}
	in := []*graph.Node{x}
	if len(kernel) < 1 || len(kernel) > 3 || x.Rank() != len(kernel)+2 {
		return graph.Failf(graph.ErrShape, "nn."+layer, in, "a kernel of %d dims needs x [N, C, S...] with %d spatial dims (1 to 3)", len(kernel), len(kernel))
	}
	var win ops.Window
	for _, o := range opts {
		if o != nil {
			o(&win)
		}
	}
	groups := max(win.Groups, 1)
	c := x.Shape()[1]
	fan := c / groups
	for _, k := range kernel {
		if k < 1 {
			return graph.Failf(graph.ErrShape, "nn."+layer, in, "kernel %v: every size must be positive", kernel)
		}
		fan *= k
	}
	if out < 1 || c%groups != 0 || out%groups != 0 {
		return graph.Failf(graph.ErrShape, "nn."+layer, in, "%d groups must divide the %d input and the %d output channels", groups, c, out)
	}
	l := m.layer("conv")
	dt := x.DType()
	wshape := append([]int{out, c / groups}, kernel...)
	bound := 1 / math.Sqrt(float64(fan))
	w := l.weight(layer, dt, wshape, l.uniform(bound, dt, wshape))
	b := l.bias(layer, dt, []int{out}, l.uniform(bound, dt, []int{out}))
	return ops.ConvBias(x, w, b, opts...)
}

// BatchNorm normalises x [N, C, S...] per channel as torch.nn.BatchNorm1d/2d/3d
// (eps 1e-5, momentum 0.1): "weight" (γ, ones) and "bias" (β, zeros) [C]
// are trained; "running_mean" (zeros) and "running_var" (ones) [C] are
// State. In training it normalises with the batch's mean and biased
// variance (ops.BatchStats) and its Updates set
// running = 0.9·running + 0.1·batch, with the unbiased variance
// (var·m/(m-1), m = N·S... values per channel), as PyTorch; in inference
// it normalises with the running statistics.
func (m *Model) BatchNorm(x *graph.Node) *graph.Node {
	const layer, eps, momentum = "BatchNorm", 1e-5, 0.1
	if bad := m.check(layer, x, 2); bad != nil {
		return bad
	}
	l := m.layer("batchnorm")
	dt, c := x.DType(), x.Shape()[1]
	shape := []int{c}
	gamma := l.variable(layer, "weight", true, dt, shape, full(1, dt, shape))
	beta := l.variable(layer, "bias", true, dt, shape, full(0, dt, shape))
	rm := l.variable(layer, "running_mean", false, dt, shape, full(0, dt, shape))
	rv := l.variable(layer, "running_var", false, dt, shape, full(1, dt, shape))
	if !m.s.training {
		return ops.BatchNorm(x, gamma, beta, rm, rv, eps)
	}
	count := x.Shape().Size() / max(c, 1)
	if count < 2 {
		return graph.Failf(graph.ErrShape, "nn."+layer, []*graph.Node{x}, "training needs more than one value per channel (x has %d), as PyTorch", count)
	}
	mean, v := ops.BatchStats(x)
	unbiased := float64(count) / float64(count-1)
	keep := ops.Scalar(rm, 1-momentum)
	m.s.updates[rm] = ops.Add(ops.Mul(rm, keep), ops.Mul(ops.StopGradient(mean), ops.Scalar(mean, momentum)))
	m.s.updates[rv] = ops.Add(ops.Mul(rv, keep), ops.Mul(ops.StopGradient(v), ops.Scalar(v, momentum*unbiased)))
	return ops.BatchNorm(x, gamma, beta, mean, v, eps)
}

// LayerNorm normalises the last axis of x as torch.nn.LayerNorm (eps
// 1e-5), with "weight" (ones) and "bias" (zeros) of x's last length.
func (m *Model) LayerNorm(x *graph.Node) *graph.Node {
	const layer = "LayerNorm"
	if bad := m.check(layer, x, 1); bad != nil {
		return bad
	}
	l := m.layer("layernorm")
	dt, shape := x.DType(), []int{x.Shape()[x.Rank()-1]}
	gamma := l.variable(layer, "weight", true, dt, shape, full(1, dt, shape))
	beta := l.variable(layer, "bias", true, dt, shape, full(0, dt, shape))
	return ops.LayerNorm(x, gamma, beta, 1e-5)
}

// GroupNorm normalises x [N, C, S...] in groups of C/groups channels as
// torch.nn.GroupNorm (eps 1e-5), with "weight" (ones) and "bias" (zeros)
// [C].
func (m *Model) GroupNorm(x *graph.Node, groups int) *graph.Node {
	const layer = "GroupNorm"
	if bad := m.check(layer, x, 2); bad != nil {
		return bad
	}
	l := m.layer("groupnorm")
	dt, shape := x.DType(), []int{x.Shape()[1]}
	gamma := l.variable(layer, "weight", true, dt, shape, full(1, dt, shape))
	beta := l.variable(layer, "bias", true, dt, shape, full(0, dt, shape))
	return ops.GroupNorm(x, gamma, beta, groups, 1e-5)
}

// Embedding looks up the rows of "weight" [vocab, dim] (float32, N(0, 1)
// as torch.nn.Embedding) for the integer ids: ids' shape + [dim]. An id
// outside [-vocab, vocab) is a run error (ops.Gather).
func (m *Model) Embedding(ids *graph.Node, vocab, dim int) *graph.Node {
	const layer = "Embedding"
	if _, bad := graph.Operands("nn."+layer, ids); bad != nil {
		return bad
	}
	if ids.Graph() != m.s.g {
		return m.fail(layer, []*graph.Node{ids}, "ids belong to another graph than the Model's")
	}
	if vocab < 1 || dim < 1 {
		return m.fail(layer, []*graph.Node{ids}, "vocab %d and dim %d must be positive", vocab, dim)
	}
	l := m.layer("embedding")
	dt, shape := tensor.Float32, []int{vocab, dim}
	w := l.weight(layer, dt, shape, func() (*tensor.Tensor, error) { return optim.Normal(l.s.rng, 0, 1, dt, shape...) })
	return ops.Gather(w, ids, 0)
}

// Dropout zeroes each element of x with probability rate and scales the
// others by 1/(1-rate) in training (ops.Dropout), and is x in inference.
// Every Dropout of a build has its own key, folded (ops.FoldIn) from one
// key Variable "dropout/key" (State, seeded from the Model's generator)
// that Updates advances after every Run (exec.AdvanceKey), so each
// training step draws new masks with no host work, reproducibly from the
// seed and the checkpoint.
func (m *Model) Dropout(x *graph.Node, rate float64) *graph.Node {
	const layer = "Dropout"
	if bad := m.check(layer, x, 0); bad != nil {
		return bad
	}
	if !(rate >= 0 && rate < 1) {
		return m.fail(layer, []*graph.Node{x}, "rate %v must be in [0, 1)", rate)
	}
	if !m.s.training || rate == 0 {
		return x
	}
	if m.s.key == nil {
		root := &Model{s: m.s}
		seed := uint64(m.s.rng.Uint32())<<32 | uint64(m.s.rng.Uint32())
		m.s.key = root.variable(layer, "dropout/key", false, tensor.Int32, []int{2}, func() (*tensor.Tensor, error) { return ops.KeyTensor(seed), nil })
		if !m.s.key.Valid() {
			return m.s.key
		}
		m.s.updates[m.s.key] = ops.NextKey(m.s.key)
	}
	m.s.sites++
	return ops.Dropout(x, ops.FoldIn(m.s.key, m.s.sites), rate)
}

// MultiHeadAttention is torch.nn.MultiheadAttention's computation (with
// batch_first, no dropout): for q [B, Tq, D] and k, v [B, Tk, D] it
// projects each with its own Linear layer ("query", "key", "value", each
// D -> D), splits D into heads (D must be a multiple of heads), computes
// softmax(q·kᵀ/√(D/heads) + mask)·v per head, joins the heads and
// projects them with the Linear "out". mask (nil: none) is added to the
// scores: a float node broadcastable to [B, heads, Tq, Tk], with -Inf
// where a query must not see a key (a causal mask is -Inf above the
// diagonal of a [Tq, Tk] matrix).
func (m *Model) MultiHeadAttention(q, k, v *graph.Node, heads int, mask *graph.Node) *graph.Node {
	const layer = "MultiHeadAttention"
	for _, x := range []*graph.Node{q, k, v} {
		if bad := m.check(layer, x, 3); bad != nil {
			return bad
		}
	}
	in := []*graph.Node{q, k, v}
	if q.Rank() != 3 || k.Rank() != 3 || v.Rank() != 3 {
		return graph.Failf(graph.ErrShape, "nn."+layer, in, "q, k and v must be [B, T, D]")
	}
	B, Tq, D := q.Shape()[0], q.Shape()[1], q.Shape()[2]
	Tk := k.Shape()[1]
	if !k.Shape().Equal(v.Shape()) || k.Shape()[0] != B || k.Shape()[2] != D {
		return graph.Failf(graph.ErrShape, "nn."+layer, in, "k and v must be [%d, Tk, %d] like q", B, D)
	}
	if heads < 1 || D%heads != 0 {
		return graph.Failf(graph.ErrShape, "nn."+layer, in, "%d heads do not divide the width %d", heads, D)
	}
	if mask != nil {
		if _, bad := graph.Operands("nn."+layer, mask); bad != nil {
			return bad
		}
		if !mask.DType().IsFloat() {
			return graph.Failf(graph.ErrDType, "nn."+layer, []*graph.Node{mask}, "the mask must be a float node added to the scores (-Inf: masked)")
		}
	}
	l := m.layer("attention")
	dh := D / heads
	split := func(x *graph.Node, name string, T int) *graph.Node { // [B, H, T, dh]
		x = l.Scope(name).dense(x, D)
		return ops.Transpose(ops.Reshape(x, B, T, heads, dh), 0, 2, 1, 3)
	}
	qh, kh, vh := split(q, "query", Tq), split(k, "key", Tk), split(v, "value", Tk)
	qh = ops.Mul(qh, ops.Scalar(qh, 1/math.Sqrt(float64(dh))))
	att := ops.MatMulT(qh, kh, false, true) // [B, H, Tq, Tk]
	if mask != nil {
		att = ops.Add(att, ops.Cast(mask, att.DType()))
	}
	o := ops.MatMul(ops.Softmax(att, -1), vh) // [B, H, Tq, dh]
	o = ops.Reshape(ops.Transpose(o, 0, 2, 1, 3), B, Tq, D)
	return l.Scope("out").dense(o, D)
}

// String describes the Model: its scope, mode and Variables.
func (m *Model) String() string {
	n := 0
	for _, p := range m.s.params {
		n += p.Shape().Size()
	}
	mode := "training"
	if !m.s.training {
		mode = "inference"
	}
	return fmt.Sprintf("nn.Model %q: %d parameters in %d Variables (+%d state), %s", m.prefix, n, len(m.s.params), len(m.s.state), mode)
}

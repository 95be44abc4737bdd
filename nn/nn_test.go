package nn_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// TestLinearByHand: the weight and bias are PyTorch's default draws
// (U(±1/√in) each, weight first) from optim.NewRand(seed), and the output
// is x·W + b computed here by hand from them.
func TestLinearByHand(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 7)
	x := g.Input("x", tensor.Float64, 2, 3)
	y := m.Linear(x, 2)
	p := compile(t, be, []*graph.Node{y})
	xv := []float64{1, -2, 0.5, 3, 0.25, -1}
	out := floats(run(t, p, exec.Feeds{x: f64(t, xv, 2, 3)})[0])

	if got := m.Names(); len(got) != 2 || got[0] != "linear0/weight" || got[1] != "linear0/bias" {
		t.Fatalf("names %q", got)
	}
	w, b := read(t, p, m.Params()[0]), read(t, p, m.Params()[1])
	r := optim.NewRand(7)
	l := 1 / math.Sqrt(3)
	wt, _ := optim.Uniform(r, -l, l, tensor.Float64, 3, 2)
	bt, _ := optim.Uniform(r, -l, l, tensor.Float64, 2)
	near(t, "weight", w, floats(wt), 0)
	near(t, "bias", b, floats(bt), 0)
	want := make([]float64, 4)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			want[i*2+j] = b[j]
			for k := 0; k < 3; k++ {
				want[i*2+j] += xv[i*3+k] * w[k*2+j]
			}
		}
	}
	near(t, "y", out, want, 1e-15)
}

// TestLinearLeadingAxes: x [2, 3, 4] is a stack of rows: the same as the
// rows one by one.
func TestLinearLeadingAxes(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 1)
	x := g.Input("x", tensor.Float32, 2, 3, 4)
	y := m.Linear(x, 5)
	m.SetTraining(false)
	flat := m.Linear(ops.Reshape(x, 6, 4), 5) // the same Variables (linear0 again)
	if len(m.Params()) != 2 || !y.Shape().Equal([]int{2, 3, 5}) {
		t.Fatalf("%d params, y %v", len(m.Params()), y.Shape())
	}
	p := compile(t, be, []*graph.Node{y, flat})
	xs := tensor.Zeros(tensor.Float32, 2, 3, 4)
	for i := range 24 {
		xs.SetFloat64(i, math.Sin(float64(i)))
	}
	out := run(t, p, exec.Feeds{x: xs})
	near(t, "stacked", floats(out[0]), floats(out[1]), 0)
}

// TestLinearInitStatistics: U(±1/√in) has variance 1/(3·in); 131072
// draws estimate it within 1%.
func TestLinearInitStatistics(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 3)
	x := g.Input("x", tensor.Float32, 1, 256)
	y := m.Linear(x, 512)
	p := compile(t, be, []*graph.Node{y})
	w := read(t, p, m.Params()[0])
	var s, s2, hi float64
	for _, v := range w {
		s += v
		s2 += v * v
		hi = math.Max(hi, math.Abs(v))
	}
	n := float64(len(w))
	v := s2/n - (s/n)*(s/n)
	if want := 1.0 / (3 * 256); math.Abs(v-want) > 0.01*want || hi > 1.0/16 {
		t.Errorf("weight variance %v (want %v), max |w| %v (bound 1/16)", v, want, hi)
	}
}

// TestBatchNormTwoSteps: two training steps of BatchNorm2d, then its
// inference form on an evaluation graph of the same Model, against
// torch.nn.BatchNorm2d (golden_test.go): the second step's output, the
// running statistics after both (momentum 0.1, the unbiased variance),
// and the inference output from them.
func TestBatchNormTwoSteps(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 1)
	build := func(x *graph.Node) *graph.Node { return m.BatchNorm(x) }
	x := g.Input("x", tensor.Float64, 4, 3, 2, 2)
	y := build(x)
	step := compile(t, be, []*graph.Node{y}, m.Updates()...)
	m.SetTraining(false)
	xe := g.Input("x_eval", tensor.Float64, 4, 3, 2, 2)
	ye := build(xe)
	eval := compile(t, be, []*graph.Node{ye}, exec.ShareVariables(step))

	if got := strings.Join(m.Names(), " "); got != "batchnorm0/weight batchnorm0/bias" {
		t.Errorf("params %q", got)
	}
	st := m.State()
	if len(st) != 2 || st[0].Name() != "batchnorm0/running_mean" || st[1].Name() != "batchnorm0/running_var" {
		t.Fatalf("state %v", st)
	}
	x1, x2 := f64(t, sinSeq(48, 1.3, 0.5, 3, 0.1), 4, 3, 2, 2), f64(t, sinSeq(48, 0.9, 0.2, 2, -0.05), 4, 3, 2, 2)
	run(t, step, exec.Feeds{x: x1})
	y2 := run(t, step, exec.Feeds{x: x2})[0]
	near(t, "training output", floats(y2), bnY2Gold, 1e-12)
	near(t, "running_mean", read(t, step, st[0]), bnRunningMeanGold, 1e-12)
	near(t, "running_var", read(t, step, st[1]), bnRunningVarGold, 1e-12)
	near(t, "inference output", floats(run(t, eval, exec.Feeds{xe: x1})[0]), bnEvalGold, 1e-12)
	// the evaluation program updates nothing
	near(t, "running_mean after eval", read(t, step, st[0]), bnRunningMeanGold, 1e-12)
}

// TestMultiHeadAttention against torch.nn.MultiheadAttention with the
// same weights (golden_test.go), with and without an additive mask.
func TestMultiHeadAttention(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 1)
	q := g.Input("q", tensor.Float64, 2, 3, 4)
	k := g.Input("k", tensor.Float64, 2, 5, 4)
	v := g.Input("v", tensor.Float64, 2, 5, 4)
	maskv := make([]float64, 15)
	for _, i := range []int{3, 4, 9} { // mask[0, 3:] and mask[1, 4]
		maskv[i] = math.Inf(-1)
	}
	mask := g.Const(f64(t, maskv, 3, 5))
	masked := m.MultiHeadAttention(q, k, v, 2, mask)
	m.SetTraining(false)
	plain := m.MultiHeadAttention(q, k, v, 2, nil)
	want := "attention0/query/weight attention0/query/bias attention0/key/weight attention0/key/bias attention0/value/weight attention0/value/bias attention0/out/weight attention0/out/bias"
	if got := strings.Join(m.Names(), " "); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
	p := compile(t, be, []*graph.Node{masked, plain})
	for i, w := range m.Params() {
		var val []float64
		if i%2 == 0 { // W_i = seq(16, 0.3+0.2i, 0.1i, 0.5, 0), torch's [out, in]
			j := float64(i / 2)
			val = transposed(sinSeq(16, 0.3+0.2*j, 0.1*j, 0.5, 0), 4)
		} else {
			j := float64(i / 2)
			val = sinSeq(4, 0.7+0.1*j, 0.3*j, 0.2, 0)
		}
		if err := p.Write(w, f64(t, val, w.Shape()...)); err != nil {
			t.Fatal(err)
		}
	}
	out := run(t, p, exec.Feeds{
		q: f64(t, sinSeq(24, 1.3, 0.5, 3, 0.1), 2, 3, 4),
		k: f64(t, sinSeq(40, 0.8, 0.1, 1.5, 0), 2, 5, 4),
		v: f64(t, sinSeq(40, 1.1, 0.7, 2, 0), 2, 5, 4),
	})
	near(t, "masked", floats(out[0]), mhaOutGold, 1e-12)
	near(t, "unmasked", floats(out[1]), mhaNoMaskGold, 1e-12)
}

// TestDropout: in training about rate of the elements are 0 and the rest
// x/(1-rate); each Run draws a new mask (the key advances); in inference
// Dropout is x.
func TestDropout(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 5)
	x := g.Input("x", tensor.Float32, 100, 100)
	a, b := m.Dropout(x, 0.25), m.Dropout(x, 0.25)
	p := compile(t, be, []*graph.Node{a, b}, m.Updates()...)
	if len(m.State()) != 1 || m.State()[0].Name() != "dropout/key" || len(m.Params()) != 0 {
		t.Fatalf("state %v, params %v", m.State(), m.Params())
	}
	ones, _ := tensor.Full(tensor.Float32, 1, 100, 100)
	first := run(t, p, exec.Feeds{x: ones})
	second := run(t, p, exec.Feeds{x: ones})
	zeros := func(y *tensor.Tensor) (n int) {
		for i := range y.Size() {
			switch v := y.Float64(i); {
			case v == 0:
				n++
			case math.Abs(v-4.0/3) > 1e-6:
				t.Fatalf("kept value %v, want 4/3", v)
			}
		}
		return n
	}
	same := func(u, v *tensor.Tensor) bool {
		for i := range u.Size() {
			if u.Float64(i) != v.Float64(i) {
				return false
			}
		}
		return true
	}
	// 10000 draws of p = 0.25: 2500 ± 43 (one standard deviation)
	for _, y := range append(first, second...) {
		if n := zeros(y); n < 2300 || n > 2700 {
			t.Errorf("%d zeros of 10000, want about 2500", n)
		}
	}
	if same(first[0], first[1]) || same(first[0], second[0]) {
		t.Error("two sites or two steps drew the same mask")
	}
	m.SetTraining(false)
	if y := m.Dropout(x, 0.25); y != x {
		t.Error("inference Dropout is not x")
	}
}

// TestEmbedding: rows of an N(0, 1) table, the Variable PyTorch's
// Embedding initialises the same way (from optim.NewRand(seed)).
func TestEmbedding(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 9)
	ids := g.Input("ids", tensor.Int32, 2, 2)
	y := m.Embedding(ids, 5, 3)
	p := compile(t, be, []*graph.Node{y})
	idv, _ := tensor.New([]int32{4, 0, 2, 4}, 2, 2)
	out := floats(run(t, p, exec.Feeds{ids: idv})[0])
	table, _ := optim.Normal(optim.NewRand(9), 0, 1, tensor.Float32, 5, 3)
	tv := floats(table)
	var want []float64
	for _, id := range []int{4, 0, 2, 4} {
		want = append(want, tv[id*3:id*3+3]...)
	}
	near(t, "rows", out, want, 0)
	if m.Names()[0] != "embedding0/weight" || !y.Shape().Equal([]int{2, 2, 3}) {
		t.Errorf("names %v, shape %v", m.Names(), y.Shape())
	}
}

// TestLayerAndGroupNorm: the layers are ops.LayerNorm and ops.GroupNorm
// with their ones and zeros: normalised rows have mean 0 and variance
// 1/(1+eps/var).
func TestLayerAndGroupNorm(t *testing.T) {
	be := backend(t)
	g := graph.New()
	m := nn.New(g, 1)
	x := g.Input("x", tensor.Float64, 2, 4, 3)
	ln := m.LayerNorm(x)
	gn := m.GroupNorm(x, 2)
	want := "layernorm0/weight layernorm0/bias groupnorm0/weight groupnorm0/bias"
	if got := strings.Join(m.Names(), " "); got != want {
		t.Fatalf("names %q, want %q", got, want)
	}
	p := compile(t, be, []*graph.Node{ln, gn})
	out := run(t, p, exec.Feeds{x: f64(t, sinSeq(24, 1.3, 0.5, 3, 0.1), 2, 4, 3)})
	check := func(name string, y []float64, size int) {
		for r := 0; r < len(y)/size; r++ {
			var s, s2 float64
			for _, v := range y[r*size : (r+1)*size] {
				s += v
				s2 += v * v
			}
			// 1e-5 of eps against variances of order 1: within 1e-4
			if math.Abs(s/float64(size)) > 1e-12 || math.Abs(s2/float64(size)-1) > 1e-4 {
				t.Errorf("%s row %d: mean %v, mean square %v", name, r, s/float64(size), s2/float64(size))
			}
		}
	}
	check("LayerNorm", floats(out[0]), 3)
	check("GroupNorm", floats(out[1]), 6)
}

// TestRebuildReusesVariables: the same model function built after
// SetTraining(false) finds the first build's Variables by name, and a
// scope names them below it.
func TestRebuildReusesVariables(t *testing.T) {
	g := graph.New()
	m := nn.New(g, 1)
	f := func(x *graph.Node) *graph.Node {
		h := m.Scope("enc").Linear(x, 8)
		h = ops.Relu(m.Scope("enc").BatchNorm(ops.Reshape(h, 2, 8, 1)))
		return m.Linear(m.Dropout(ops.Reshape(h, 2, 8), 0.1), 3)
	}
	x := g.Input("x", tensor.Float32, 2, 4)
	f(x)
	params, names := m.Params(), m.Names()
	m.SetTraining(false)
	f(x)
	want := "enc/linear0/weight enc/linear0/bias enc/batchnorm0/weight enc/batchnorm0/bias linear0/weight linear0/bias"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("names %q, want %q", got, want)
	}
	again := m.Params()
	if len(again) != len(params) {
		t.Fatalf("%d params after the rebuild, %d before", len(again), len(params))
	}
	for i := range params {
		if again[i] != params[i] {
			t.Errorf("param %d is a new node", i)
		}
	}
	if len(m.Updates()) != 3 { // running mean, running var, dropout key
		t.Errorf("%d updates, want 3", len(m.Updates()))
	}
}

// TestCheckpointRoundTrip: a trained model saved by its Program (keys:
// the Variables' names) and loaded into a fresh graph and Model with
// another seed gives the same outputs.
func TestCheckpointRoundTrip(t *testing.T) {
	be := backend(t)
	model := func(m *nn.Model, x, ids *graph.Node) *graph.Node {
		h := ops.Add(m.Linear(x, 6), ops.Reshape(m.Embedding(ids, 4, 6), 3, 6))
		h = m.LayerNorm(ops.Tanh(h))
		h = m.BatchNorm(ops.Reshape(h, 3, 6, 1))
		return m.Linear(ops.Reshape(h, 3, 6), 2)
	}
	build := func(seed uint64) (*graph.Graph, *nn.Model, *graph.Node, *graph.Node, *graph.Node) {
		g := graph.New()
		m := nn.New(g, seed)
		x := g.Input("x", tensor.Float32, 3, 5)
		ids := g.Input("ids", tensor.Int32, 3, 1)
		return g, m, x, ids, model(m, x, ids)
	}
	xv := tensor.Zeros(tensor.Float32, 3, 5)
	for i := range 15 {
		xv.SetFloat64(i, math.Cos(float64(i)))
	}
	idv, _ := tensor.New([]int32{1, 3, 0}, 3, 1)

	_, m1, x1, ids1, y1 := build(1)
	loss := ops.Mean(ops.Square(y1))
	upd, err := optim.SGD{LR: 0.1}.Apply(m1.Params(), autodiff.Grad(loss, m1.Params()...))
	if err != nil {
		t.Fatal(err)
	}
	train := compile(t, be, []*graph.Node{loss}, append(upd, m1.Updates()...)...)
	feeds := exec.Feeds{x1: xv, ids1: idv}
	for range 3 {
		run(t, train, feeds)
	}
	m1.SetTraining(false)
	eval1 := compile(t, be, []*graph.Node{model(m1, x1, ids1)}, exec.ShareVariables(train))
	want := floats(run(t, eval1, feeds)[0])
	var buf bytes.Buffer
	if err := train.SaveVariables(&buf, nil); err != nil {
		t.Fatal(err)
	}
	ts, _, err := tensor.ReadSafetensors(bytes.NewReader(buf.Bytes()), tensor.SafetensorsLimits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(m1.Names(), "batchnorm0/running_mean", "batchnorm0/running_var") {
		if ts[n] == nil {
			t.Errorf("checkpoint has no key %q", n)
		}
	}

	_, m2, x2, ids2, _ := build(2)
	m2.SetTraining(false)
	y2 := model(m2, x2, ids2)
	eval2 := compile(t, be, []*graph.Node{y2})
	before := floats(run(t, eval2, exec.Feeds{x2: xv, ids2: idv})[0])
	if _, err := eval2.LoadVariables(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	got := floats(run(t, eval2, exec.Feeds{x2: xv, ids2: idv})[0])
	near(t, "loaded model", got, want, 0)
	if before[0] == want[0] {
		t.Error("the fresh model already gave the trained outputs")
	}
}

// TestErrors: bad layer input is a build error naming the layer and the
// caller's line.
func TestErrors(t *testing.T) {
	for name, c := range map[string]struct {
		f    func(m *nn.Model, g *graph.Graph) *graph.Node
		kind error
		text string
	}{
		"linear-int": {func(m *nn.Model, g *graph.Graph) *graph.Node { return m.Linear(g.Input("x", tensor.Int32, 2, 3), 4) }, graph.ErrDType, "nn.Linear"},
		"linear-out": {func(m *nn.Model, g *graph.Graph) *graph.Node { return m.Linear(g.Input("x", tensor.Float32, 2, 3), 0) }, graph.ErrInvalid, "nn.Linear"},
		"rebuild-shape": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			m.Linear(g.Input("x", tensor.Float32, 2, 3), 4)
			m.SetTraining(false)
			return m.Linear(g.Input("y", tensor.Float32, 2, 5), 4)
		}, graph.ErrShape, `"linear0/weight" exists as f32[3,4]`},
		"batchnorm-one-value": {func(m *nn.Model, g *graph.Graph) *graph.Node { return m.BatchNorm(g.Input("x", tensor.Float32, 1, 3)) }, graph.ErrShape, "more than one value per channel"},
		"batchnorm-rank":      {func(m *nn.Model, g *graph.Graph) *graph.Node { return m.BatchNorm(g.Input("x", tensor.Float32, 3)) }, graph.ErrShape, "nn.BatchNorm"},
		"groupnorm-groups": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			return m.GroupNorm(g.Input("x", tensor.Float32, 2, 6, 4), 4)
		}, graph.ErrShape, "GroupNorm"},
		"dropout-rate":    {func(m *nn.Model, g *graph.Graph) *graph.Node { return m.Dropout(g.Input("x", tensor.Float32, 3), 1) }, graph.ErrInvalid, "nn.Dropout"},
		"embedding-vocab": {func(m *nn.Model, g *graph.Graph) *graph.Node { return m.Embedding(g.Input("x", tensor.Int32, 3), 0, 2) }, graph.ErrInvalid, "nn.Embedding"},
		"attention-heads": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float32, 2, 3, 4)
			return m.MultiHeadAttention(x, x, x, 3, nil)
		}, graph.ErrShape, "3 heads"},
		"attention-kv": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			q, k := g.Input("q", tensor.Float32, 2, 3, 4), g.Input("k", tensor.Float32, 2, 5, 4)
			return m.MultiHeadAttention(q, k, q, 2, nil)
		}, graph.ErrShape, "k and v"},
		"other-graph": {func(m *nn.Model, g *graph.Graph) *graph.Node {
			return m.Linear(graph.New().Input("x", tensor.Float32, 2, 3), 4)
		}, graph.ErrInvalid, "another graph"},
	} {
		g := graph.New()
		n := c.f(nn.New(g, 1), g)
		if n.Valid() {
			t.Errorf("%s: no error", name)
			continue
		}
		err := n.Err()
		if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), "nn_test.go") {
			t.Errorf("%s: got %v, want %v naming %q and the call site", name, err, c.kind, c.text)
		}
	}
}

// TestParam: a parameter of one's own, created once with its initialiser
// (optim.NewRand(seed)'s first draws) and found again by name.
func TestParam(t *testing.T) {
	g := graph.New()
	m := nn.New(g, 4)
	p := m.Scope("pos").Param("table", nn.Normal(0.5), tensor.Float32, 3, 2)
	again := m.Scope("pos").Param("table", nn.Normal(0.5), tensor.Float32, 3, 2)
	want, _ := optim.Normal(optim.NewRand(4), 0, 0.5, tensor.Float32, 3, 2)
	if p != again || p.Name() != "pos/table" || len(m.Params()) != 1 {
		t.Fatalf("%v %v %v", p, again, m.Params())
	}
	near(t, "table", floats(p.Value()), floats(want), 0)
	if bad := m.Param("other", nil, tensor.Float32, 2); bad.Valid() || !strings.Contains(g.Err().Error(), "nil Initializer") {
		t.Errorf("nil initialiser: %v", g.Err())
	}
}

// TestRand: the Model's generator continues after the initialisers'
// draws (one Linear's weight and bias from the same seed).
func TestRand(t *testing.T) {
	g := graph.New()
	m := nn.New(g, 8)
	m.Linear(g.Input("x", tensor.Float32, 1, 4), 3)
	r := optim.NewRand(8)
	optim.Uniform(r, -0.5, 0.5, tensor.Float32, 4, 3)
	optim.Uniform(r, -0.5, 0.5, tensor.Float32, 3)
	if got, want := m.Rand().Uint32(), r.Uint32(); got != want {
		t.Errorf("next draw %d, want %d", got, want)
	}
}

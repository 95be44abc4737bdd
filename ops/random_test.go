package ops_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// runOn compiles and runs outs on be (nil: a default CPU backend).
func runOn(t *testing.T, be exec.Backend, outs []*graph.Node, feeds exec.Feeds, opts ...exec.Option) []*tensor.Tensor {
	t.Helper()
	if be == nil {
		b, err := cpu.New()
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		be = b
	}
	p, err := exec.Compile(be, outs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// randomNodes are one node of every random op and dtype, drawn with key.
func randomNodes(key *graph.Node, shape ...int) []*graph.Node {
	return []*graph.Node{
		ops.Apply(ops.OpRandomBits, opdef.RandomAttr{DType: tensor.Int32, Shape: shape}, key),
		ops.RandomUniform(key, tensor.Float32, shape...),
		ops.RandomUniform(key, tensor.Float64, shape...),
		ops.RandomNormal(key, tensor.Float32, shape...),
		ops.RandomNormal(key, tensor.Float64, shape...),
		ops.RandomBernoulli(key, 0.3, shape...),
		ops.NextKey(key),
		ops.FoldIn(key, 7),
	}
}

// TestPhiloxStreamKnownAnswer: the first block of the stream of key
// (0, 0) is Philox4x32-10 of counter 0 under key 0, the first of the
// known-answer vectors of Random123 (Salmon et al., SC 2011), as
// internal/scalar's test checks the generator itself.
func TestPhiloxStreamKnownAnswer(t *testing.T) {
	g := graph.New()
	bits := ops.Apply(ops.OpRandomBits, opdef.RandomAttr{DType: tensor.Int32, Shape: tensor.Shape{2, 2}}, ops.Key(g, 0))
	got := runOn(t, nil, []*graph.Node{bits}, nil, exec.DisablePasses("constfold"))
	want := []uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}
	vs, _ := tensor.Values[int32](got[0])
	for i, v := range vs {
		if uint32(v) != want[i] {
			t.Errorf("stream of key 0, word %d: %08x, want %08x", i, uint32(v), want[i])
		}
	}
	// The key's layout is JAX's: [high word, low word] of the seed.
	if vs, _ = tensor.Values[int32](ops.KeyTensor(0x0000000500000007)); !slices.Equal(vs, []int32{5, 7}) {
		t.Errorf("KeyTensor(5<<32 | 7) = %v, want [5 7]", vs)
	}
}

// TestRandomMatchesReference: the CPU kernels give the reference's values
// (internal/scalar's maps of the same stream) bit for bit, on a shape
// that is not a multiple of the block, and whatever the thread count.
func TestRandomMatchesReference(t *testing.T) {
	g := graph.New()
	key := g.Input("key", tensor.Int32, 2)
	outs := randomNodes(key, 3, 1001)
	big := randomNodes(key, 1<<17+3)
	feeds := exec.Feeds{key: ops.KeyTensor(20261124)}
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	got := runOn(t, nil, outs, feeds)
	for i := range outs {
		if !bytes.Equal(got[i].Bytes(), want[i].Bytes()) {
			t.Errorf("%s: CPU differs from the reference", outs[i])
		}
	}
	var first []*tensor.Tensor
	for _, threads := range []int{1, 2, 7} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		got := runOn(t, be, big, feeds)
		be.Close()
		if first == nil {
			first = got
			continue
		}
		for i := range big {
			if !bytes.Equal(got[i].Bytes(), first[i].Bytes()) {
				t.Errorf("%s: %d threads give other values than 1", big[i], threads)
			}
		}
	}
}

// TestRandomKeys: the same key gives the same values (by design: random
// ops are functions of their key, and the compiler may merge them);
// NextKey, FoldIn and every n of FoldIn give different keys and values.
func TestRandomKeys(t *testing.T) {
	g := graph.New()
	k := ops.Key(g, 42)
	outs := []*graph.Node{
		ops.RandomUniform(k, tensor.Float32, 100),
		ops.RandomUniform(k, tensor.Float32, 100),
		ops.RandomUniform(ops.NextKey(k), tensor.Float32, 100),
		ops.RandomUniform(ops.FoldIn(k, 0), tensor.Float32, 100),
		ops.RandomUniform(ops.FoldIn(k, 1), tensor.Float32, 100),
		ops.RandomUniform(ops.Key(g, 43), tensor.Float32, 100),
	}
	got := runOn(t, nil, outs, nil)
	if !bytes.Equal(got[0].Bytes(), got[1].Bytes()) {
		t.Error("two RandomUniform of one key differ")
	}
	for i := 2; i < len(got); i++ {
		for j := 0; j < i; j++ {
			if j != 1 && bytes.Equal(got[i].Bytes(), got[j].Bytes()) {
				t.Errorf("outputs %d and %d are equal; their keys differ", i, j)
			}
		}
	}
}

// TestAdvanceKey: with the key a Variable advanced by exec.AdvanceKey,
// every Run draws new values; the sequence is the one NextKey gives, so a
// second program from the same seed repeats it.
func TestAdvanceKey(t *testing.T) {
	sequence := func() [][]byte {
		g := graph.New()
		key := g.Variable("key", ops.KeyTensor(1))
		u := ops.RandomUniform(key, tensor.Float32, 64)
		be, err := cpu.New()
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		p, err := exec.Compile(be, []*graph.Node{u, key}, exec.AdvanceKey(key))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		var runs [][]byte
		for range 4 {
			out, err := p.Run(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, out[0].Bytes())
		}
		return runs
	}
	a, b := sequence(), sequence()
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Errorf("run %d: two programs from seed 1 differ", i)
		}
		for j := 0; j < i; j++ {
			if bytes.Equal(a[i], a[j]) {
				t.Errorf("runs %d and %d drew the same values", j, i)
			}
		}
	}
	// Run 1 used NextKey(KeyTensor(1)).
	g := graph.New()
	want := runOn(t, nil, []*graph.Node{ops.RandomUniform(ops.NextKey(ops.Key(g, 1)), tensor.Float32, 64)}, nil)
	if !bytes.Equal(a[1], want[0].Bytes()) {
		t.Error("the second Run did not use NextKey of the first key")
	}
}

// draw computes n values of a random builder with key 2026 on the CPU, as
// float64s.
func draw(t *testing.T, f func(key *graph.Node) *graph.Node) []float64 {
	t.Helper()
	g := graph.New()
	got := runOn(t, nil, []*graph.Node{ops.Cast(f(ops.Key(g, 2026)), tensor.Float64)}, nil)
	vs, _ := tensor.Values[float64](got[0])
	return vs
}

// sigmas is the width of the statistical tests' acceptance bands: a
// statistic that is normal by the central limit theorem is accepted
// within 5 standard errors (a fixed seed makes each test deterministic;
// for a seed drawn at random the chance that a correct generator fails
// one such bound is 5.7e-7).
const sigmas = 5

func meanVar(xs []float64) (m, v float64) {
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, v / float64(len(xs))
}

// TestUniformStatistics: 2²⁰ uniforms in each float dtype. Mean 1/2 and
// variance 1/12 within 5 standard errors (of the mean √(1/12N); of the
// variance √((1/80 - 1/144)/N) = √(1/180N), from the fourth central
// moment 1/80); a chi-square test on 100 equal bins below 148.23, the
// 0.999 quantile of χ² with 99 degrees of freedom (computed from the
// regularised incomplete gamma function; Wilson-Hilferty gives 148.3);
// every value in [0, 1); the lag-1 correlation and the correlation with
// the values of NextKey(key) within 5/√N.
func TestUniformStatistics(t *testing.T) {
	const n = 1 << 20
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		xs := draw(t, func(k *graph.Node) *graph.Node { return ops.RandomUniform(k, dt, n) })
		m, v := meanVar(xs)
		if d := math.Abs(m - 0.5); d > sigmas*math.Sqrt(1.0/12/n) {
			t.Errorf("%v: mean %v is %.2g from 1/2", dt, m, d)
		}
		if d := math.Abs(v - 1.0/12); d > sigmas*math.Sqrt(1.0/180/n) {
			t.Errorf("%v: variance %v is %.2g from 1/12", dt, v, d)
		}
		var bins [100]float64
		for _, x := range xs {
			if !(x >= 0 && x < 1) {
				t.Fatalf("%v: %v is outside [0, 1)", dt, x)
			}
			bins[int(x*100)]++
		}
		chi := 0.0
		for _, c := range bins {
			chi += (c - n/100.0) * (c - n/100.0) / (n / 100.0)
		}
		if chi > 148.23 {
			t.Errorf("%v: chi-square on 100 bins %.1f > 148.23", dt, chi)
		}
		if r := correlation(xs[1:], xs[:n-1]); math.Abs(r) > sigmas/math.Sqrt(n) {
			t.Errorf("%v: lag-1 correlation %v", dt, r)
		}
		ys := draw(t, func(k *graph.Node) *graph.Node { return ops.RandomUniform(ops.NextKey(k), dt, n) })
		if r := correlation(xs, ys); math.Abs(r) > sigmas/math.Sqrt(n) {
			t.Errorf("%v: correlation with NextKey's values %v", dt, r)
		}
		t.Logf("%v: mean %.6f variance %.6f chi-square %.1f", dt, m, v, chi)
	}
}

func correlation(a, b []float64) float64 {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	c := 0.0
	for i := range a {
		c += (a[i] - ma) * (b[i] - mb)
	}
	return c / float64(len(a)) / math.Sqrt(va*vb)
}

// TestNormalStatistics: 2²⁰ normals in each float dtype. Mean 0 within 5
// standard errors √(1/N), variance 1 within 5·√(2/N) (the variance of
// z² is 2); the Kolmogorov-Smirnov distance to Φ below 1.9495/√N, the
// 0.999 quantile of Kolmogorov's limiting distribution (from its series
// 1 - 2Σ(-1)^(k-1)e^(-2k²x²)); the largest magnitude at most Box-Muller's
// bound √(2·24 ln 2) (f32) or √(2·53 ln 2) (f64).
func TestNormalStatistics(t *testing.T) {
	const n = 1 << 20
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		xs := draw(t, func(k *graph.Node) *graph.Node { return ops.RandomNormal(k, dt, n) })
		m, v := meanVar(xs)
		if math.Abs(m) > sigmas*math.Sqrt(1.0/n) {
			t.Errorf("%v: mean %v", dt, m)
		}
		if math.Abs(v-1) > sigmas*math.Sqrt(2.0/n) {
			t.Errorf("%v: variance %v", dt, v)
		}
		bound := math.Sqrt(2 * 24 * math.Ln2)
		if dt == tensor.Float64 {
			bound = math.Sqrt(2 * 53 * math.Ln2)
		}
		slices.Sort(xs)
		if lo, hi := -xs[0], xs[n-1]; max(lo, hi) > bound*(1+1e-6) {
			t.Errorf("%v: extreme %v beyond %v", dt, max(lo, hi), bound)
		}
		d := 0.0
		for i, x := range xs {
			f := 0.5 * math.Erfc(-x/math.Sqrt2)
			d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
		}
		if d > 1.9495/math.Sqrt(n) {
			t.Errorf("%v: Kolmogorov-Smirnov distance %v > %v", dt, d, 1.9495/math.Sqrt(n))
		}
		t.Logf("%v: mean %.5f variance %.5f KS %.5f (critical %.5f)", dt, m, v, d, 1.9495/math.Sqrt(n))
	}
}

// TestBernoulliFrequency: the fraction of true among 2²⁰ draws is p within
// 5·√(p(1-p)/N); p = 0 and p = 1 are never and always true.
func TestBernoulliFrequency(t *testing.T) {
	const n = 1 << 20
	for _, p := range []float64{0, 0.1, 0.3, 0.5, 0.9, 1} {
		xs := draw(t, func(k *graph.Node) *graph.Node { return ops.RandomBernoulli(k, p, n) })
		m, _ := meanVar(xs)
		if math.Abs(m-p) > sigmas*math.Sqrt(p*(1-p)/n) {
			t.Errorf("p=%v: frequency %v", p, m)
		}
	}
}

// TestDropout: each element is 0 or x/(1-rate), about rate of them 0
// (within 5 standard errors); the gradient of Sum(Dropout(x)) is the
// same mask times 1/(1-rate); rate 0 is x itself, rate 1 zeros.
func TestDropout(t *testing.T) {
	const n, rate = 1 << 16, 0.25
	g := graph.New()
	xt := exectest.Rand(tensor.Float32, tensor.Shape{n}, 0.5, 2, 1)
	x := g.Variable("x", xt)
	key := ops.Key(g, 5)
	y := ops.Dropout(x, key, rate)
	gx := autodiff.Grad(ops.Sum(y), x)[0]
	if ops.Dropout(x, key, 0) != x {
		t.Error("Dropout with rate 0 is not x")
	}
	got := runOn(t, nil, []*graph.Node{y, gx, ops.Dropout(x, key, 1)}, nil)
	xs, _ := tensor.Values[float32](xt)
	ys, _ := tensor.Values[float32](got[0])
	gs, _ := tensor.Values[float32](got[1])
	zs, _ := tensor.Values[float32](got[2])
	dropped := 0
	for i := range xs {
		switch {
		case ys[i] == 0:
			dropped++
			if gs[i] != 0 {
				t.Fatalf("element %d dropped but its gradient is %v", i, gs[i])
			}
		case ys[i] != xs[i]*float32(1/(1-rate)) || gs[i] != float32(1/(1-rate)):
			t.Fatalf("element %d: %v -> %v (gradient %v), want x/(1-rate) and gradient 1/(1-rate)", i, xs[i], ys[i], gs[i])
		}
		if zs[i] != 0 {
			t.Fatalf("rate 1: element %d is %v", i, zs[i])
		}
	}
	if f := float64(dropped) / n; math.Abs(f-rate) > sigmas*math.Sqrt(rate*(1-rate)/n) {
		t.Errorf("dropped fraction %v, want %v", f, rate)
	}
}

// TestRandomErrors: bad keys, dtypes, probabilities and rates are build
// errors naming the op and the call site.
func TestRandomErrors(t *testing.T) {
	cases := []struct {
		name, want string
		kind       error
		build      func(g *graph.Graph) *graph.Node
	}{
		{"key-dtype", "RandomUniform", graph.ErrDType, func(g *graph.Graph) *graph.Node {
			return ops.RandomUniform(g.Input("k", tensor.Int64, 2), tensor.Float32, 3)
		}},
		{"key-shape", "RandomNormal", graph.ErrShape, func(g *graph.Graph) *graph.Node {
			return ops.RandomNormal(g.Input("k", tensor.Int32, 3), tensor.Float32, 3)
		}},
		{"dtype", "RandomUniform", graph.ErrDType, func(g *graph.Graph) *graph.Node {
			return ops.RandomUniform(ops.Key(g, 1), tensor.Int32, 3)
		}},
		{"negative-dim", "RandomUniform", graph.ErrShape, func(g *graph.Graph) *graph.Node {
			return ops.RandomUniform(ops.Key(g, 1), tensor.Float32, 3, -1)
		}},
		{"p", "RandomBernoulli", graph.ErrInvalid, func(g *graph.Graph) *graph.Node {
			return ops.RandomBernoulli(ops.Key(g, 1), 1.5, 3)
		}},
		{"p-nan", "RandomBernoulli", graph.ErrInvalid, func(g *graph.Graph) *graph.Node {
			return ops.RandomBernoulli(ops.Key(g, 1), math.NaN(), 3)
		}},
		{"rate", "Dropout", graph.ErrInvalid, func(g *graph.Graph) *graph.Node {
			return ops.Dropout(g.Input("x", tensor.Float32, 3), ops.Key(g, 1), -0.1)
		}},
		{"dropout-int", "Dropout", graph.ErrDType, func(g *graph.Graph) *graph.Node {
			return ops.Dropout(g.Input("x", tensor.Int32, 3), ops.Key(g, 1), 0.5)
		}},
		{"nil-graph", "Key", graph.ErrInvalid, func(g *graph.Graph) *graph.Node { return ops.Key(nil, 1) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			n := c.build(g)
			err := n.Err()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "random_test.go") {
				t.Errorf("error %q: want %v naming %s and the call site", err, c.kind, c.want)
			}
		})
	}
}

// TestRandomFolding: with a constant key, a small random op is folded by
// the compiler (its reference evaluator), a large one runs as a kernel;
// both give the kernel's values bit for bit (the reference and the CPU
// kernels compute the same stream with the same float64 functions).
func TestRandomFolding(t *testing.T) {
	for _, n := range []int{10, 1000} {
		g := graph.New()
		outs := randomNodes(ops.Key(g, 77), n)
		folded := runOn(t, nil, outs, nil)
		be, err := cpu.New()
		if err != nil {
			t.Fatal(err)
		}
		p, err := exec.Compile(be, outs)
		if err != nil {
			t.Fatal(err)
		}
		kernels := 0
		for _, s := range p.Plan().Steps {
			if s.Kind == exec.KernelStep {
				kernels++
			}
		}
		p.Close()
		be.Close()
		if want := map[int]int{10: 0, 1000: len(outs) - 2}[n]; kernels != want {
			t.Errorf("n=%d: %d kernels, want %d (NextKey and FoldIn, 2 elements, always fold)", n, kernels, want)
		}
		unfolded := runOn(t, nil, outs, nil, exec.DisablePasses("constfold"))
		for i := range outs {
			if !bytes.Equal(folded[i].Bytes(), unfolded[i].Bytes()) {
				t.Errorf("n=%d: %s folded differs from its kernel", n, outs[i])
			}
		}
	}
}

// Random values are a function of a key: the first Philox block of key 0
// is Random123's known-answer vector 6627e8d5 e169c58d bc57ac4c 9b00dbd8
// (Salmon et al., SC 2011), so the uniforms are those words' top 24 bits
// over 2²⁴ (hand: 0x6627e8 / 2²⁴ = 0.39904642, ...), and Dropout at rate
// 0.5 keeps the elements whose word is below 2³¹ (only the first), doubled.
// A key Variable with exec.AdvanceKey draws new values every Run.
func ExampleRandomUniform() {
	g := graph.New()
	key := ops.Key(g, 0)
	u := ops.RandomUniform(key, tensor.Float32, 4)
	d := ops.Dropout(ops.OnesLike(u), key, 0.5)
	out, err := compute([]*graph.Node{u, d}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// f32[4] [0.39904642 0.88052016 0.73571277  0.6054818]
	// f32[4] [2 0 0 0]
}

// TestRandomPrecision: under exec.Precision a float random op draws in
// the compute type: a float32 graph computed in float64 gives what the
// same graph written in float64 gives.
func TestRandomPrecision(t *testing.T) {
	xt := exectest.Rand(tensor.Float32, tensor.Shape{50}, -1, 1, 3)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 50)
	key := ops.Key(g, 9)
	y := ops.Add(x, ops.RandomNormal(key, tensor.Float32, 50))
	want := ops.Cast(ops.Add(ops.Cast(x, tensor.Float64), ops.RandomNormal(key, tensor.Float64, 50)), tensor.Float32)
	got := runOn(t, nil, []*graph.Node{y}, exec.Feeds{x: xt}, exec.Precision(tensor.Float64))
	ref := runOn(t, nil, []*graph.Node{want}, exec.Feeds{x: xt})
	if !bytes.Equal(got[0].Bytes(), ref[0].Bytes()) {
		t.Errorf("Precision(f64): %v, want %v", got[0], ref[0])
	}
}

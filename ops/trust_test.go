package ops_test

// Regression tests for the defects of issue 12 ("Trust") in the builders
// and the op table: hostile sizes, widths, steps and attributes, and the
// non-finite edge cases of LogSumExp and the cross-entropies.

import (
	"context"
	"errors"
	"math"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// run compiles outs on the CPU (checking the graph after every pass) and
// runs them with feeds.
func run(t *testing.T, outs []*graph.Node, feeds exec.Feeds, opts ...exec.Option) []*tensor.Tensor {
	t.Helper()
	if err := outs[0].Graph().Err(); err != nil {
		t.Fatal(err)
	}
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	p, err := exec.Compile(be, outs, append([]exec.Option{exec.VerifyEachPass(), exec.IgnoreUnusedFeeds()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func f64s(shape []int, vals ...float64) *tensor.Tensor {
	t, err := tensor.FromFloat64s(tensor.Float64, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// allocated returns the bytes the Go heap handed out while f ran.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// sameFloat compares with NaN equal to NaN and infinities exactly.
func sameFloat(got, want, tol float64) bool {
	if math.IsNaN(want) || math.IsInf(want, 0) {
		return math.IsNaN(got) && math.IsNaN(want) || got == want
	}
	return math.Abs(got-want) <= tol*(1+math.Abs(want))
}

func wantBuildError(t *testing.T, name string, g *graph.Graph, n *graph.Node, kind error, parts ...string) {
	t.Helper()
	err := g.Err()
	if n.Valid() || err == nil {
		t.Errorf("%s: built %v without an error", name, n)
		return
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: error %q does not wrap %v", name, err, kind)
	}
	if !regexp.MustCompile(`^trust_test\.go:\d+: `).MatchString(err.Error()) {
		t.Errorf("%s: error %q does not name this file's call site", name, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not contain %q", name, err, p)
		}
	}
}

// TestOneHotAllocation (defect 4): OneHot builds its class numbers from
// O(log classes) nodes, so building it allocates a few kilobytes whatever
// the class count (it used to make a float64 slice and a tensor of
// classes elements: 256 MB for 1<<24 classes, 24 GB for 1<<31).
func TestOneHotAllocation(t *testing.T) {
	for _, classes := range []int{1 << 24, 1<<31 + 7} { // stops at the first failure
		g := graph.New()
		idx := g.Input("idx", tensor.Int32, 4)
		var out *graph.Node
		bytes := allocated(func() { out = ops.OneHot(idx, classes, tensor.Float32) })
		if !out.Valid() {
			t.Fatalf("OneHot(%d classes): %v", classes, g.Err())
		}
		if want := (tensor.Shape{4, classes}); !out.Shape().Equal(want) || out.DType() != tensor.Float32 {
			t.Fatalf("OneHot(%d classes) is %s", classes, out.Type())
		}
		if bytes > 1<<20 {
			t.Fatalf("OneHot(%d classes) allocated %d bytes while building, want < 1 MB", classes, bytes)
		}
		if g.Len() > 400 {
			t.Errorf("OneHot(%d classes) made %d nodes, want O(log classes)", classes, g.Len())
		}
		if err := graph.Verify(g); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOneHotTooLarge (defect 4): a one-hot value whose byte size overflows
// is a clean build error naming OneHot and the call site (it panicked).
func TestOneHotTooLarge(t *testing.T) {
	for _, c := range []struct {
		classes int
		dt      tensor.DType
		shape   []int
	}{
		{1 << 62, tensor.Float32, []int{3}}, // 3·2^62·4 bytes
		{1 << 62, tensor.Bool, []int{}},     // the i64 class numbers: 2^62·8 bytes
		{math.MaxInt, tensor.Bool, []int{}},
		{1 << 40, tensor.Float64, []int{1 << 30}},
	} {
		g := graph.New()
		n := ops.OneHot(g.Input("idx", tensor.Int64, c.shape...), c.classes, c.dt)
		wantBuildError(t, "OneHot", g, n, graph.ErrShape, "OneHot(i64", "too large")
	}
}

// TestOneHotValues: OneHot is right for class counts that are powers of
// two, odd and even, with the class numbers folded into a constant and
// computed at run time (constfold disabled), for int32 and int64 indices.
// Expected rows: 1 at the index, 0 elsewhere; out-of-range indices give
// zero rows (the documented rule).
func TestOneHotValues(t *testing.T) {
	for _, classes := range []int{1, 2, 3, 5, 7, 8, 13, 64, 65, 100} {
		for _, dt := range []tensor.DType{tensor.Int32, tensor.Int64} {
			for _, fold := range []bool{true, false} {
				g := graph.New()
				idx := g.Input("idx", dt, 5)
				out := ops.OneHot(idx, classes, tensor.Float64)
				in := []float64{0, float64(classes - 1), float64(classes / 2), -1, float64(classes)}
				it, _ := tensor.FromFloat64s(dt, in)
				var opts []exec.Option
				if !fold {
					opts = append(opts, exec.DisablePasses("constfold"))
				}
				got := run(t, []*graph.Node{out}, exec.Feeds{idx: it}, opts...)[0].Float64s()
				for r, k := range in {
					for c := 0; c < classes; c++ {
						want := 0.0
						if float64(c) == k {
							want = 1
						}
						if got[r*classes+c] != want {
							t.Fatalf("classes %d %v fold %v: row %d (index %v) column %d = %v, want %v", classes, dt, fold, r, k, c, got[r*classes+c], want)
						}
					}
				}
			}
		}
	}
}

// TestSelectGradAllocation (defect 4's audit): the gradient of Max routes
// the cotangent to the element ArgMax picks through a numbering of the
// reduced positions, which was a constant of the reduced block's size
// (128 MB for a 4096x4096 block); it is now built from one arange per
// axis. The gradient is still right: checked by hand on a [2,3,4] input
// with distinct values over axes {0,2}.
func TestSelectGradAllocation(t *testing.T) {
	g := graph.New()
	s := g.Input("s", tensor.Float32)
	big := ops.BroadcastTo(s, 1<<12, 1<<12)
	var grads []*graph.Node
	bytes := allocated(func() { grads = autodiff.Grad(ops.Max(big), s) })
	if !grads[0].Valid() {
		t.Fatal(g.Err())
	}
	if bytes > 1<<20 {
		t.Fatalf("the gradient of Max over 4096x4096 allocated %d bytes while building, want < 1 MB", bytes)
	}

	h := graph.New()
	x := h.Input("x", tensor.Float64, 2, 3, 4)
	vals := make([]float64, 24)
	for i := range vals {
		vals[i] = float64((i * 7) % 24) // a permutation of 0..23: distinct values
	}
	for _, axes := range [][]int{{0, 2}, {1}, {0, 1, 2}, {2, 0}} {
		gr := autodiff.Grad(ops.Sum(ops.Max(x, axes...)), x)[0]
		got := run(t, []*graph.Node{gr}, exec.Feeds{x: f64s([]int{2, 3, 4}, vals...)})[0].Float64s()
		// Reference: for each group of positions agreeing on the kept
		// axes, a 1 at the largest element, 0 elsewhere.
		reduced := map[int]bool{}
		for _, a := range axes {
			reduced[a] = true
		}
		key := func(i int) [3]int {
			c := [3]int{i / 12, i / 4 % 3, i % 4}
			for a := range 3 {
				if reduced[a] {
					c[a] = -1
				}
			}
			return c
		}
		best := map[[3]int]int{}
		for i, v := range vals {
			if b, ok := best[key(i)]; !ok || v > vals[b] {
				best[key(i)] = i
			}
		}
		for i := range vals {
			want := 0.0
			if best[key(i)] == i {
				want = 1
			}
			if got[i] != want {
				t.Errorf("axes %v: d/dx[%d] = %v, want %v", axes, i, got[i], want)
			}
		}
	}
}

// TestPadOverflow (defect 6): pad widths whose padded length overflows an
// int are an ErrShape build error (f32[3] padded by MaxInt on each side
// built f32[1]; Interior 1<<62 built f32[5]).
func TestPadOverflow(t *testing.T) {
	for _, w := range []ops.PadWidth{
		{Low: math.MaxInt, High: math.MaxInt},
		{Interior: 1 << 62},
		{Low: math.MaxInt - 2, High: 1},
		{Low: 1, High: 1, Interior: math.MaxInt / 2},
	} {
		g := graph.New()
		n := ops.Pad(g.Input("x", tensor.Float32, 3), w)
		wantBuildError(t, "Pad", g, n, graph.ErrShape, "Pad(f32[3])", "longer than an int holds")
	}
	// The largest pads that fit still build: 3 + (MaxInt-3) elements of a
	// 1-byte dtype is MaxInt bytes. On a length-1 axis the interior width
	// plays no part and may be anything.
	g := graph.New()
	if n := ops.Pad(g.Input("x", tensor.Bool, 3), ops.PadWidth{Low: math.MaxInt - 3}); !n.Valid() || n.Shape()[0] != math.MaxInt {
		t.Errorf("Pad to MaxInt: %v %v", n, g.Err())
	}
	if n := ops.Pad(g.Input("y", tensor.Float32, 1), ops.PadWidth{Low: 1, High: 1, Interior: math.MaxInt}); !n.Valid() || n.Shape()[0] != 3 {
		t.Errorf("Pad with a huge interior on a length-1 axis: %v %v", n, g.Err())
	}
}

// TestPadHugeInteriorGrad: the gradient of such a Pad (a Slice) used
// Interior+1 as the step, which overflowed to a negative step.
func TestPadHugeInteriorGrad(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 1)
	w := g.Const(f64s([]int{3}, 10, 20, 30))
	y := ops.Sum(ops.Mul(ops.Pad(x, ops.PadWidth{Low: 1, High: 1, Interior: math.MaxInt}), w))
	gr := autodiff.Grad(y, x)[0]
	if !gr.Valid() {
		t.Fatal(g.Err())
	}
	// y = 20·x (x sits at position 1 of the padded vector): dy/dx = 20.
	if got := run(t, []*graph.Node{gr}, exec.Feeds{x: f64s([]int{1}, 2)})[0].Float64(0); got != 20 {
		t.Errorf("dy/dx = %v, want 20", got)
	}
}

// TestSliceHugeStep (defect 7): Slice with a step near MaxInt selects the
// first index (f32[5] gave f32[0]; a length-2 axis was refused with a
// false negative-dimension error), and its gradient is right.
func TestSliceHugeStep(t *testing.T) {
	for _, c := range []struct {
		n, start int
		step     int
		want     []float64 // x[i] = i+1
	}{
		{5, 0, math.MaxInt, []float64{1}},
		{2, 0, math.MaxInt, []float64{1}},
		{5, 1, math.MaxInt, []float64{2}},
		{5, -1, math.MaxInt - 1, []float64{5}},
		{5, 0, 4, []float64{1, 5}},
		{5, 0, 5, []float64{1}},
		{1, 0, math.MaxInt, []float64{1}},
	} {
		g := graph.New()
		x := g.Input("x", tensor.Float64, c.n)
		s := ops.Slice(x, ops.RS(c.start, ops.End, c.step))
		if !s.Valid() {
			t.Errorf("Slice(f64[%d], %d:End:%d): %v", c.n, c.start, c.step, g.Err())
			continue
		}
		if s.Shape()[0] != len(c.want) {
			t.Errorf("Slice(f64[%d], %d:End:%d) is %s, want length %d", c.n, c.start, c.step, s.Type(), len(c.want))
			continue
		}
		vals := make([]float64, c.n)
		for i := range vals {
			vals[i] = float64(i + 1)
		}
		gr := autodiff.Grad(ops.Sum(s), x)[0]
		res := run(t, []*graph.Node{s, gr}, exec.Feeds{x: f64s([]int{c.n}, vals...)})
		got, grad := res[0].Float64s(), res[1].Float64s()
		for i, w := range c.want {
			if got[i] != w {
				t.Errorf("Slice(f64[%d], %d:End:%d)[%d] = %v, want %v", c.n, c.start, c.step, i, got[i], w)
			}
		}
		// The gradient of the sum is 1 at the selected indices (the
		// values x[i] = i+1 name them), 0 elsewhere.
		for i := range grad {
			want := 0.0
			for _, w := range c.want {
				if w == float64(i+1) {
					want = 1
				}
			}
			if grad[i] != want {
				t.Errorf("Slice(f64[%d], %d:End:%d): gradient[%d] = %v, want %v", c.n, c.start, c.step, i, grad[i], want)
			}
		}
	}
}

// TestShapeRulesOverflow (defect 7's audit): the shape rules with integer
// arithmetic (Concat's sum, Reshape's product, BroadcastTo's target,
// MatMul's broadcast batch) report an overflow instead of building a
// wrapped-around shape.
func TestShapeRulesOverflow(t *testing.T) {
	b62 := func(g *graph.Graph, name string) *graph.Node { return g.Input(name, tensor.Bool, 1<<62) }
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		want  string
	}{
		// 4·2^62 wrapped to 0: Concat built b8[0].
		{"concat", func(g *graph.Graph) *graph.Node {
			x := b62(g, "x")
			return ops.Concat(0, x, x, x, x)
		}, "more than an int holds"},
		// 2^62·4 wrapped to 0 = the element count: Reshape built b8[0,1<<62,4].
		{"reshape", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("x", tensor.Bool, 0), 0, 1<<62, 4)
		}, "too many elements"},
		{"broadcast", func(g *graph.Graph) *graph.Node {
			return ops.BroadcastTo(g.Input("x", tensor.Bool), 0, 1<<62, 1<<62)
		}, "too many elements"},
		// Batch [2^31,2^31] of 0x0 products: no elements, but 2^62 floats of strides.
		{"matmul-batch", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32, 1<<31, 1, 0, 3), g.Input("b", tensor.Float32, 1, 1<<31, 3, 0))
		}, "too large"},
	}
	for _, c := range cases {
		g := graph.New()
		n := c.build(g)
		wantBuildError(t, c.name, g, n, graph.ErrShape, c.want)
	}
	// The rules themselves, called directly.
	concat := opdef.Lookup(ops.OpConcat)
	if _, err := concat.Shape([]tensor.Shape{{1 << 62}, {1 << 62}, {1 << 62}, {1 << 62}}, opdef.AxisAttr{Axis: 0}); err == nil {
		t.Errorf("Concat's rule accepted 4 x 2^62")
	}
	pad := opdef.Lookup(ops.OpPad)
	if _, err := pad.Shape([]tensor.Shape{{3}}, opdef.PadAttr{Widths: []ops.PadWidth{{Low: math.MaxInt, High: math.MaxInt}}}); err == nil {
		t.Errorf("Pad's rule accepted MaxInt widths")
	}
	slice := opdef.Lookup(ops.OpSlice)
	if s, err := slice.Shape([]tensor.Shape{{2}}, opdef.SliceAttr{Ranges: []ops.Range{{Start: 0, Stop: 2, Step: math.MaxInt}}}); err != nil || !s.Equal(tensor.Shape{1}) {
		t.Errorf("Slice's rule for 0:2:MaxInt of 2 = %v, %v; want [1]", s, err)
	}
}

// TestLogSumExpInf (defect 10): a row of all -Inf gives -Inf (it gave
// NaN), a row with a +Inf gives +Inf (NaN), and ordinary rows are
// unchanged; the gradient is the softmax of the row: checked against
// central differences on ordinary rows and by hand at the edges.
func TestLogSumExpInf(t *testing.T) {
	inf := math.Inf(1)
	rows := [][]float64{
		{-inf, -inf, -inf},
		{inf, 1, 2},
		{-inf, 0, -inf},
		{1, 2, 3},
		{-1000, -1000, -1000}, // stable: log(3) - 1000
		{inf, -inf, 0},
	}
	// Values by hand: -Inf; +Inf; log(e^0) = 0; log(e+e^2+e^3) (float64
	// reference below); -1000 + log 3; +Inf.
	want := []float64{-inf, inf, 0, math.Log(math.E + math.E*math.E + math.Exp(3)), -1000 + math.Log(3), inf}
	// Gradients by hand: softmax of the row. A row of -Inf has no
	// softmax (0/0: NaN, as in PyTorch and JAX); the +Inf entry is
	// Inf/Inf (NaN) and the others 0; -Inf entries next to a finite max
	// get 0.
	nan := math.NaN()
	e := func(k float64) float64 { return math.Exp(k) / (math.E + math.E*math.E + math.Exp(3)) }
	wantGrad := [][]float64{
		{nan, nan, nan},
		{nan, 0, 0},
		{0, 1, 0},
		{e(1), e(2), e(3)},
		{1.0 / 3, 1.0 / 3, 1.0 / 3},
		{nan, 0, 0},
	}
	g := graph.New()
	x := g.Input("x", tensor.Float64, len(rows), 3)
	y := ops.LogSumExp(x, 1)
	gr := autodiff.Grad(ops.Sum(y), x)[0]
	var flat []float64
	for _, r := range rows {
		flat = append(flat, r...)
	}
	res := run(t, []*graph.Node{y, gr}, exec.Feeds{x: f64s([]int{len(rows), 3}, flat...)})
	vals, grads := res[0].Float64s(), res[1].Float64s()
	for i := range rows {
		if !sameFloat(vals[i], want[i], 1e-15) {
			t.Errorf("LogSumExp(%v) = %v, want %v", rows[i], vals[i], want[i])
		}
		for k := range 3 {
			if !sameFloat(grads[i*3+k], wantGrad[i][k], 1e-15) {
				t.Errorf("d LogSumExp(%v)/dx[%d] = %v, want %v", rows[i], k, grads[i*3+k], wantGrad[i][k])
			}
		}
	}
	// Central differences on an ordinary row, over two axes at once.
	h := graph.New()
	z := h.Input("z", tensor.Float64, 2, 3)
	ly := ops.LogSumExp(z, 0, 1)
	lg := autodiff.Grad(ly, z)[0]
	zv := []float64{0.3, -1.2, 2.5, 0.7, -0.1, 1.9}
	res = run(t, []*graph.Node{ly, lg}, exec.Feeds{z: f64s([]int{2, 3}, zv...)})
	lse := func(v []float64) float64 {
		s := 0.0
		for _, a := range v {
			s += math.Exp(a)
		}
		return math.Log(s)
	}
	if !sameFloat(res[0].Float64(0), lse(zv), 1e-14) {
		t.Errorf("LogSumExp over both axes = %v, want %v", res[0].Float64(0), lse(zv))
	}
	for i := range zv {
		const step = 1e-6
		p, m := append([]float64{}, zv...), append([]float64{}, zv...)
		p[i] += step
		m[i] -= step
		fd := (lse(p) - lse(m)) / (2 * step)
		if math.Abs(res[1].Float64(i)-fd) > 1e-8 {
			t.Errorf("gradient[%d] = %v, central difference %v", i, res[1].Float64(i), fd)
		}
	}
}

// TestCrossEntropyMasked (defect 11): logits masked with -Inf give the
// finite loss of the other classes (they gave NaN from 0·-Inf), and the
// gradient stays softmax - labels.
func TestCrossEntropyMasked(t *testing.T) {
	inf := math.Inf(1)
	logits := []float64{-inf, 1, 2, 0.5, -inf, -0.5}
	class := []int64{2, 0}
	// By hand: row 0 is softmax over {1, 2}: loss -log(e^2/(e+e^2)) =
	// log(1+e^-1); row 1 over {0.5, -0.5}: loss -log(e^.5/(e^.5+e^-.5)) =
	// log(1+e^-1) too. Gradient: softmax - onehot, 0 at the masked logits.
	p := 1 / (1 + math.Exp(-1)) // the larger softmax weight of each row
	wantLoss := math.Log(1 + math.Exp(-1))
	wantGrad := []float64{0, 1 - p, p - 1, p - 1, 0, 1 - p}

	for _, sparse := range []bool{true, false} {
		g := graph.New()
		x := g.Input("x", tensor.Float64, 2, 3)
		var loss, labels *graph.Node
		var feeds exec.Feeds
		if sparse {
			c := g.Input("c", tensor.Int64, 2)
			ct, _ := tensor.New(class, 2)
			loss = ops.SparseSoftmaxCrossEntropy(x, c)
			feeds = exec.Feeds{c: ct}
		} else {
			labels = g.Input("l", tensor.Float64, 2, 3)
			loss = ops.SoftmaxCrossEntropy(x, labels, -1)
			feeds = exec.Feeds{labels: f64s([]int{2, 3}, 0, 0, 1, 1, 0, 0)}
		}
		feeds[x] = f64s([]int{2, 3}, logits...)
		outs := []*graph.Node{loss, autodiff.Grad(ops.Sum(loss), x)[0]}
		if labels != nil {
			outs = append(outs, autodiff.Grad(ops.Sum(loss), labels)[0])
		}
		res := run(t, outs, feeds)
		for i, l := range res[0].Float64s() {
			if !sameFloat(l, wantLoss, 1e-15) {
				t.Errorf("sparse=%v: loss[%d] = %v, want %v", sparse, i, l, wantLoss)
			}
		}
		for i, d := range res[1].Float64s() {
			if !sameFloat(d, wantGrad[i], 1e-15) {
				t.Errorf("sparse=%v: d loss/d logit[%d] = %v, want %v", sparse, i, d, wantGrad[i])
			}
		}
		if labels != nil {
			// d loss/d label = -log softmax, and 0 at a masked logit
			// (0·log 0 = 0): by hand -log(1-p) = 1+log(1+e^-1) for the
			// smaller weight, -log p = log(1+e^-1) for the larger.
			small, large := 1+wantLoss, wantLoss
			wantL := []float64{0, small, large, large, 0, small}
			for i, d := range res[2].Float64s() {
				if !sameFloat(d, wantL[i], 1e-14) {
					t.Errorf("d loss/d label[%d] = %v, want %v", i, d, wantL[i])
				}
			}
		}
	}
}

// TestCrossEntropyLabelOnMasked: a label other than 0 on a masked logit
// is an infinitely bad prediction: the loss is +Inf (by hand: -1·log 0).
func TestCrossEntropyLabelOnMasked(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3)
	l := g.Input("l", tensor.Float64, 3)
	loss := ops.SoftmaxCrossEntropy(x, l, 0)
	res := run(t, []*graph.Node{loss}, exec.Feeds{x: f64s([]int{3}, math.Inf(-1), 0, 1), l: f64s([]int{3}, 0.5, 0.5, 0)})
	if got := res[0].Float64(0); !math.IsInf(got, 1) {
		t.Errorf("loss = %v, want +Inf", got)
	}
}

// hostileAttrs are attributes a user can hand to Apply: the wrong type,
// typed nils, out-of-range and inconsistent contents.
func hostileAttrs() []graph.Attr {
	type userAttr struct{ graph.Attr }
	f := func(ops_ ...opdef.FusedOp) *opdef.FusedAttr {
		return &opdef.FusedAttr{Domain: tensor.Shape{2, 2}, Ops: ops_}
	}
	f32 := tensor.Float32
	return []graph.Attr{
		nil, userAttr{},
		opdef.AxesAttr{}, opdef.AxesAttr{Axes: []int{-1}}, opdef.AxesAttr{Axes: []int{5}}, opdef.AxesAttr{Axes: []int{1, 0}}, opdef.AxesAttr{Axes: []int{0, 0}},
		opdef.AxisAttr{Axis: -1}, opdef.AxisAttr{Axis: 9}, opdef.AxisAttr{},
		opdef.ShapeAttr{}, opdef.ShapeAttr{Shape: tensor.Shape{-1, -4}}, opdef.ShapeAttr{Shape: tensor.Shape{1 << 62, 1 << 62}}, opdef.ShapeAttr{Shape: tensor.Shape{4}},
		opdef.PermAttr{}, opdef.PermAttr{Perm: []int{5, 0}}, opdef.PermAttr{Perm: []int{0, 0}}, opdef.PermAttr{Perm: []int{-1, 0}},
		opdef.CastAttr{}, opdef.CastAttr{To: 99}, opdef.CastAttr{To: tensor.Int32},
		opdef.SliceAttr{}, opdef.SliceAttr{Ranges: []ops.Range{{Start: -1, Stop: 1, Step: 1}, {Start: 0, Stop: 1, Step: 1}}}, opdef.SliceAttr{Ranges: []ops.Range{{Start: 0, Stop: 9, Step: 1}, {Start: 0, Stop: 1, Step: 0}}},
		opdef.SliceAttr{Ranges: []ops.Range{{Start: 0, Stop: 2, Step: math.MaxInt}, {Start: 0, Stop: 2, Step: math.MinInt}}},
		opdef.PadAttr{}, opdef.PadAttr{Widths: []ops.PadWidth{{Low: -1}, {}}}, opdef.PadAttr{Widths: []ops.PadWidth{{Low: math.MaxInt}, {High: math.MaxInt}}},
		opdef.RepeatAttr{}, opdef.RepeatAttr{Axis: -1, Counts: []int{1, 1}}, opdef.RepeatAttr{Counts: []int{-1, 3}}, opdef.RepeatAttr{Counts: []int{math.MaxInt, math.MaxInt}},
		opdef.RepeatAttr{Axis: 1, Counts: []int{1, 1}}, opdef.RepeatAttr{Counts: []int{2, 0}},
		opdef.MatMulAttr{TransA: true}, opdef.CustomAttr{}, opdef.CustomAttr{Rule: func(dy *graph.Node) []*graph.Node { return nil }},
		(*opdef.FusedAttr)(nil), &opdef.FusedAttr{},
		f(opdef.FusedOp{Op: ops.OpAdd, DType: f32}),                                          // too few arguments (panicked)
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{-1, -1}, DType: f32}),                     // too many
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{0}, DType: f32}),                          // refers to itself
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{-9}, DType: f32}),                         // no such operand
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{math.MinInt}, DType: f32}),                // negation overflows
		f(opdef.FusedOp{Op: ops.OpSum, Args: []int{-1}, DType: f32}),                         // not elementwise
		f(opdef.FusedOp{Op: graph.Op(60000), Args: []int{-1}, DType: f32}),                   // unknown op
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{-1}, DType: tensor.Float64}),              // wrong dtype
		f(opdef.FusedOp{Op: ops.OpCast, Args: []int{-1}, DType: f32}),                        // Cast without CastAttr
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{-1}, DType: f32, Attr: opdef.AxisAttr{}}), // an attribute on Neg
		f(opdef.FusedOp{Op: opdef.OpFused, Args: []int{-1}, DType: f32}),
		&opdef.FusedAttr{Domain: tensor.Shape{-2}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: f32}}},
		&opdef.FusedAttr{Domain: tensor.Shape{1 << 62}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: f32}}},
		&opdef.FusedAttr{Domain: tensor.Shape{2, 2}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: f32}}, Reduce: &opdef.FusedReduce{Op: ops.OpExp}},
		&opdef.FusedAttr{Domain: tensor.Shape{2, 2}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: f32}}, Reduce: &opdef.FusedReduce{Op: ops.OpSum, Axes: []int{3}}},
		&opdef.FusedAttr{Domain: tensor.Shape{2, 2}, Ops: []opdef.FusedOp{{Op: ops.OpLess, Args: []int{-1, -1}, DType: tensor.Bool}}, Reduce: &opdef.FusedReduce{Op: ops.OpSum}},
		&opdef.FusedAttr{Domain: tensor.Shape{2, 0}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: f32}}, Reduce: &opdef.FusedReduce{Op: ops.OpMax, Axes: []int{1}}},
		&opdef.FusedAttr{Domain: tensor.Shape{3}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: f32}}}, // operands do not broadcast
		f(opdef.FusedOp{Op: ops.OpNeg, Args: []int{-1}, DType: f32}),                                                  // a good one
	}
}

// TestApplyHostileAttributes (defect 12): Apply with any attribute, for
// every op of the table and operand lists of several lengths and dtypes,
// never panics; what it accepts passes graph.Verify, and what Verify
// checks on nodes made with graph.Add never panics either.
func TestApplyHostileAttributes(t *testing.T) {
	for _, d := range opdef.Defs() {
		for ai, attr := range hostileAttrs() {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Bool, tensor.Int64} {
				for n := 0; n <= 3; n++ {
					g := graph.New()
					xs := make([]*graph.Node, n)
					for i := range xs {
						xs[i] = g.Input(string(rune('a'+i)), dt, 2, 2)
					}
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("Apply(%s, attr %d %T, %d x %v) panicked: %v", d.Name, ai, attr, n, dt, r)
							}
						}()
						out := ops.Apply(d.Op, attr, xs...)
						if out.Valid() {
							if err := graph.Verify(g); err != nil {
								t.Errorf("Apply(%s, attr %d %T) built %v, which fails Verify: %v", d.Name, ai, attr, out, err)
							}
						} else if out.Err() == nil {
							t.Errorf("Apply(%s, attr %d %T) is invalid without an error", d.Name, ai, attr)
						}
						// The same node made by hand: Verify reports, never panics.
						h := graph.New()
						ys := make([]*graph.Node, n)
						for i := range ys {
							ys[i] = h.Input(string(rune('a'+i)), dt, 2, 2)
						}
						h.Add(graph.Spec{Op: d.Op, Attr: attr, Inputs: ys, DType: dt, Shape: tensor.Shape{2, 2}})
						_ = graph.Verify(h)
					}()
				}
			}
		}
	}
}

// TestApplyRegressions: the reported cases of defect 12, and attributes
// on ops that take none.
func TestApplyRegressions(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 2)
	n := ops.Apply(ops.OpCustomGrad, nil, x)
	wantBuildError(t, "CustomGrad without an attribute", g, n, graph.ErrInvalid, "CustomGrad(f32[2,2])", "CustomAttr")

	g = graph.New()
	x = g.Input("x", tensor.Float32, 2, 2)
	n = ops.Apply(ops.OpCustomGrad, opdef.CustomAttr{Name: "r"}, x)
	wantBuildError(t, "CustomGrad without a rule", g, n, graph.ErrInvalid, "nil rule")

	g = graph.New()
	x = g.Input("x", tensor.Float32, 2, 2)
	n = ops.Apply(opdef.OpFused, &opdef.FusedAttr{Domain: tensor.Shape{2, 2}, Ops: []opdef.FusedOp{{Op: ops.OpAdd, DType: tensor.Float32}}}, x)
	wantBuildError(t, "Fused with a short op", g, n, graph.ErrInvalid, "Fused(f32[2,2])", "fused op 0 (Add) has 0 arguments, the op takes 2")

	g = graph.New()
	x = g.Input("x", tensor.Float32, 2, 2)
	n = ops.Apply(ops.OpAdd, opdef.AxesAttr{Axes: []int{0}}, x, x)
	wantBuildError(t, "Add with an attribute", g, n, graph.ErrInvalid, "takes no attribute")

	g = graph.New()
	x = g.Input("x", tensor.Float32, 0, 2)
	n = ops.Apply(ops.OpMax, opdef.AxesAttr{Axes: []int{0}}, x)
	wantBuildError(t, "Max over an empty axis", g, n, graph.ErrShape, "no identity")

	// A well-formed program is accepted and checked by Verify.
	g = graph.New()
	x = g.Input("x", tensor.Float32, 2, 2)
	c := g.Input("c", tensor.Float32)
	f := opdef.Fused(&opdef.FusedAttr{Domain: tensor.Shape{2, 2}, Ops: []opdef.FusedOp{
		{Op: ops.OpMul, Args: []int{-1, -2}, DType: tensor.Float32},
		{Op: ops.OpCast, Attr: opdef.CastAttr{To: tensor.Float64}, Args: []int{0}, DType: tensor.Float64},
	}, Reduce: &opdef.FusedReduce{Op: ops.OpSum, Axes: []int{1}}}, x, c)
	if !f.Valid() || f.Type() != "f64[2]" || graph.Verify(g) != nil {
		t.Errorf("a good program: %v, %v", f, g.Err())
	}
}

// TestApplyCopiesAttr: changing the slices of an attribute after Apply
// does not change the node (nodes are immutable).
func TestApplyCopiesAttr(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	axes := []int{1}
	s := ops.Apply(ops.OpSum, opdef.AxesAttr{Axes: axes}, x)
	perm := []int{1, 0}
	tr := ops.Apply(ops.OpTranspose, opdef.PermAttr{Perm: perm}, x)
	prog := &opdef.FusedAttr{Domain: tensor.Shape{2, 3}, Ops: []opdef.FusedOp{{Op: ops.OpNeg, Args: []int{-1}, DType: tensor.Float32}}}
	f := opdef.Fused(prog, x)
	axes[0], perm[0] = 7, 7
	prog.Ops[0].Args[0] = -5
	prog.Domain[0] = 9
	if err := graph.Verify(g); err != nil {
		t.Errorf("after changing the caller's slices: %v (%s %s %s)", err, s.Attr(), tr.Attr(), f.Attr())
	}
}

// TestInversePerm (defect 13): a slice that is not a permutation gives nil.
func TestInversePerm(t *testing.T) {
	for _, p := range [][]int{{5, 0}, {0, 0}, {-1, 0}, {1}} {
		if inv := ops.InversePerm(p); inv != nil {
			t.Errorf("InversePerm(%v) = %v, want nil", p, inv)
		}
	}
	// [2,0,1] maps 0->2, 1->0, 2->1; the inverse maps 2->0, 0->1, 1->2.
	if inv := ops.InversePerm([]int{2, 0, 1}); len(inv) != 3 || inv[0] != 1 || inv[1] != 2 || inv[2] != 0 {
		t.Errorf("InversePerm([2 0 1]) = %v, want [1 2 0]", inv)
	}
	if inv := ops.InversePerm(nil); inv == nil || len(inv) != 0 {
		t.Errorf("InversePerm(nil) = %#v, want an empty permutation", inv)
	}
}

// TestFullErrors (defect 13): Full on a nil graph, with a value its dtype
// cannot hold, or a shape too large is a build error naming Full.
func TestFullErrors(t *testing.T) {
	if n := ops.Full(nil, tensor.Float32, 1, 2); n.Valid() || !errors.Is(n.Err(), graph.ErrInvalid) || !strings.Contains(n.Err().Error(), "Full") {
		t.Errorf("Full(nil graph) = %v, %v", n, n.Err())
	}
	g := graph.New()
	wantBuildError(t, "Full int32 0.5", g, ops.Full(g, tensor.Int32, 0.5, 2), graph.ErrDType, "Full()", "not an integer")
	g = graph.New()
	wantBuildError(t, "Full too large", g, ops.Full(g, tensor.Float32, 0, 1<<62), graph.ErrShape, "Full()", "too large")
	g = graph.New()
	wantBuildError(t, "Full bad dtype", g, ops.Full(g, tensor.DType(77), 0, 2), graph.ErrDType, "Full()")
}

// TestNilHelpers (defect 13): the table's helpers and hooks accept nil
// nodes, rows and attributes.
func TestNilHelpers(t *testing.T) {
	if m, k := opdef.MatMulDims(nil); m != 0 || k != 0 {
		t.Errorf("MatMulDims(nil) = %d, %d", m, k)
	}
	if a, b := opdef.MatMulBatchOffsets(nil); a != nil || b != nil {
		t.Errorf("MatMulBatchOffsets(nil) = %v, %v", a, b)
	}
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	if m, k := opdef.MatMulDims(ops.Exp(x)); m != 0 || k != 0 {
		t.Errorf("MatMulDims(Exp) = %d, %d", m, k)
	}
	if ta, tb := opdef.MatMulFlags(nil); ta || tb {
		t.Errorf("MatMulFlags(nil) = %v, %v", ta, tb)
	}
	var d *opdef.Def
	if _, _, err := d.Infer(nil, nil); err == nil {
		t.Errorf("Infer on a nil row succeeded")
	}
	if _, _, err := opdef.Lookup(ops.OpAdd).Infer([]*graph.Node{x, nil}, nil); err == nil {
		t.Errorf("Infer with a nil operand succeeded")
	}
	if n := opdef.Rebuild(nil, nil, nil); n.Valid() || n.Err() == nil {
		t.Errorf("Rebuild(nil, nil) = %v", n)
	}
	var fa *opdef.FusedAttr
	if fa.String() == "" || fa.OpNames() != nil {
		t.Errorf("a nil *FusedAttr: %q %v", fa.String(), fa.OpNames())
	}
	for _, d := range opdef.Defs() {
		_ = d.FLOPsOf(nil)
		_ = d.FLOPsOf(x)
	}
}

// TestGradRulesGuarded (defect 13): a gradient rule called directly with
// nil or mismatched arguments returns invalid cotangents, no panic.
func TestGradRulesGuarded(t *testing.T) {
	for _, d := range opdef.Defs() {
		if d.Grad == nil {
			continue
		}
		g := graph.New()
		x := g.Input("x", tensor.Float32, 2)
		for name, args := range map[string]struct {
			n, dy *graph.Node
			need  []bool
		}{
			"nil":        {nil, nil, nil},
			"an Input":   {x, x, []bool{}},
			"nil dy":     {x, nil, []bool{true}},
			"short need": {x, x, nil},
		} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s rule, %s arguments: panic %v", d.Name, name, r)
					}
				}()
				for _, c := range d.Grad(args.n, args.dy, args.need) {
					if c.Valid() {
						t.Errorf("%s rule, %s arguments: a valid cotangent %v", d.Name, name, c)
					}
				}
			}()
		}
	}
}

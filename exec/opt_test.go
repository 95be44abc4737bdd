package exec_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

var optionalPasses = []string{"precision", "simplify", "constfold", "cse", "loopcse", "hoist", "fuse"}

// compileRun compiles outs with opts, runs them, and returns the program
// (closed at the end of the test) and the results.
func compileRun(t *testing.T, be exec.Backend, outs []*graph.Node, feeds exec.Feeds, opts ...exec.Option) (*exec.Program, []*tensor.Tensor) {
	t.Helper()
	p, err := exec.Compile(be, outs, append(opts, exec.VerifyEachPass())...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	res, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	return p, res
}

func kernelOps(p *exec.Program) map[graph.Op]int {
	m := map[graph.Op]int{}
	for _, s := range p.Plan().Steps {
		if s.Kind == exec.KernelStep {
			m[s.Node.Op()]++
		}
	}
	return m
}

// TestSimplifyRules shows every rule's rewrite and that it preserves the
// value: each case's optimised program must lack the op the rule removes
// (or have fewer steps), and agree with the unoptimised program.
func TestSimplifyRules(t *testing.T) {
	be := cpuBackend(t)
	type ruleCase struct {
		build  func(x, xi, pos, x3 *graph.Node) *graph.Node
		absent graph.Op // op that must not remain (0: check the step count)
	}
	sc := func(x *graph.Node, v float64) *graph.Node { return ops.Scalar(x, v) }
	cases := map[string]ruleCase{
		"x*1 -> x":            {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Mul(x, sc(x, 1))) }, ops.OpMul},
		"x*-1 -> -x":          {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Mul(sc(x, -1), x) }, ops.OpMul},
		"x*0 -> 0 (integers)": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Add(ops.Mul(xi, sc(xi, 0)), xi) }, ops.OpMul},
		"x+0 -> x":            {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Add(sc(x, 0), x)) }, ops.OpAdd},
		"x-0 -> x":            {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Sub(x, sc(x, 0))) }, ops.OpSub},
		"x/1 -> x":            {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Div(x, sc(x, 1))) }, ops.OpDiv},
		"x-x -> 0 (integers)": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Mul(ops.Sub(xi, xi), xi) }, ops.OpSub},
		"x**1 -> x":           {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Pow(x, sc(x, 1))) }, ops.OpPow},
		"x**2 -> x*x":         {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Pow(x, sc(x, 2)) }, ops.OpPow},
		"--x -> x":            {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Neg(ops.Neg(x))) }, ops.OpNeg},
		"exp(log x) -> x":     {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Sin(ops.Exp(ops.Log(pos))) }, ops.OpLog},
		"log(exp x) -> x":     {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Sin(ops.Log(ops.Exp(x))) }, ops.OpLog},
		"T(T(x)) -> T(x)": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Exp(ops.Transpose(ops.Transpose(x3, 1, 2, 0), 2, 0, 1)) // perms compose to the identity
		}, ops.OpTranspose},
		"R(R(x)) -> R(x)": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.Reshape(ops.Reshape(x3, 6, 2), 3, 4)) }, 0},
		"B(B(x)) -> B(x)": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Exp(ops.BroadcastTo(ops.BroadcastTo(ops.Slice(x, ops.R(0, 1)), 4, 3), 5, 4, 3))
		}, 0},
		"f(B(x), y) -> f(x, y)": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Mul(ops.BroadcastTo(ops.Sum(x), 2, 3), x)
		}, ops.OpBroadcastTo},
		"Cast(Cast(x)) -> Cast(x) when the inner cast is exact": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Exp(ops.Cast(ops.Cast(x, tensor.Float64), tensor.Float32))
		}, ops.OpCast},
		"StopGradient(x) -> x": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Exp(ops.StopGradient(x)) }, ops.OpStopGradient},
		"CustomGrad(x, ...) -> x": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Exp(ops.CustomGradient("id", ops.Sin(x), []*graph.Node{x}, func(dy *graph.Node) []*graph.Node { return []*graph.Node{dy} }))
		}, ops.OpCustomGrad},
		"Where(c, x, x) -> x": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Exp(ops.Where(ops.Greater(x, sc(x, 0)), pos, pos))
		}, ops.OpWhere},
		"MatMul(T(a), T(b)) -> MatMul with transposition flags": {func(x, xi, pos, x3 *graph.Node) *graph.Node {
			return ops.Add(ops.Sum(ops.MatMul(ops.Transpose(x), pos)), ops.Sum(ops.MatMul(x, ops.Transpose(pos)))) // transA and transB
		}, ops.OpTranspose},
		"Sum over length-1 axes -> Reshape": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Sum(ops.Reshape(x, 2, 1, 3), 1) }, ops.OpSum},
		"Max over length-1 axes -> Reshape": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.Max(ops.Reshape(x, 2, 3, 1), 2) }, ops.OpMax},
		"Min over length-1 axes -> Reshape": {func(x, xi, pos, x3 *graph.Node) *graph.Node { return ops.MinKeepDims(ops.Reshape(x, 1, 2, 3), 0) }, ops.OpMin},
	}
	for _, r := range exec.Rules() {
		c, ok := cases[r.Name]
		if !ok {
			t.Errorf("rule %q has no test case", r.Name)
			continue
		}
		t.Run(r.Name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.Float32, 2, 3)
			xi := g.Input("xi", tensor.Int32, 2, 3)
			pos := g.Input("pos", tensor.Float32, 2, 3)
			x3 := g.Input("x3", tensor.Float32, 2, 3, 2)
			y := c.build(x, xi, pos, x3)
			feeds := exec.Feeds{
				x: exectest.Rand(tensor.Float32, tensor.Shape{2, 3}, -2, 2, 1), xi: exectest.Rand(tensor.Int32, tensor.Shape{2, 3}, -5, 5, 2),
				pos: exectest.Rand(tensor.Float32, tensor.Shape{2, 3}, 0.1, 3, 3), x3: exectest.Rand(tensor.Float32, tensor.Shape{2, 3, 2}, -1, 1, 4),
			}
			opts := []exec.Option{exec.DisablePasses("constfold", "cse", "fuse"), exec.IgnoreUnusedFeeds()}
			if r.FastMath {
				opts = append(opts, exec.FastMath())
			}
			opt, got := compileRun(t, be, []*graph.Node{y}, feeds, opts...)
			plain, want := compileRun(t, be, []*graph.Node{y}, feeds, exec.DisablePasses(optionalPasses...), exec.IgnoreUnusedFeeds())
			if c.absent != 0 && kernelOps(opt)[c.absent] > 0 {
				t.Errorf("%v still runs:\n%s", c.absent, opt.Plan().Format())
			}
			if c.absent == 0 && len(opt.Plan().Steps) >= len(plain.Plan().Steps) {
				t.Errorf("no fewer steps (%d vs %d):\n%s", len(opt.Plan().Steps), len(plain.Plan().Steps), opt.Plan().Format())
			}
			// Values agree; fast-math rules only to rounding (exp(log x)
			// is x up to the rounding of log and exp).
			tol := 0.0
			if r.FastMath {
				tol = 1e-5
			}
			if err := exectest.Compare(got[0], want[0], tol); err != nil {
				t.Errorf("value changed: %v", err)
			}
		})
	}
}

// TestFastMathIsOptIn: without FastMath, exp(log x) is left alone, so
// negative x still gives NaN as the graph says.
func TestFastMathIsOptIn(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1)
	p, out := compileRun(t, be, []*graph.Node{ops.Exp(ops.Log(x))}, exec.Feeds{x: f32(t, []float32{-1}, 1)})
	if kernelOps(p)[ops.OpLog]+kernelOps(p)[opdef.OpFused] == 0 || out[0].Float64(0) == out[0].Float64(0) {
		t.Errorf("exp(log -1) = %v, want NaN (the rewrite must be opt-in)", out[0])
	}
}

// TestCSE: equal subexpressions merge; nodes differing in any attribute,
// or Softmax and LogSoftmax of one operand, stay distinct.
func TestCSE(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3, 4)
	a, b := g.Input("a", tensor.Float32, 3, 4), g.Input("b", tensor.Float32, 3, 4)
	outs := []*graph.Node{
		ops.Softmax(x, 0), ops.Softmax(x, 1), ops.LogSoftmax(x, 1), ops.Softmax(x, -1), // the last equals the second
		ops.Sum(x, 0), ops.Sum(x, 1), ops.SumKeepDims(x, 1),
		ops.Add(a, b), ops.Add(b, a), // commutative
		ops.Sub(a, b), ops.Sub(b, a), // not
	}
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 1), a: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 2), b: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 3)}
	p, got := compileRun(t, be, outs, feeds, exec.DisablePasses("fuse"))
	_, want := compileRun(t, be, outs, feeds, exec.DisablePasses(optionalPasses...))
	k := kernelOps(p)
	// Hand count: Softmax over 0 and over 1; one LogSoftmax; Sum over 0 and
	// over 1 (keepdims is a view of the same values? no: a distinct
	// attribute, so a third Sum); one Add; two Subs.
	if k[ops.OpSoftmax] != 2 || k[ops.OpLogSoftmax] != 1 || k[ops.OpSum] != 3 || k[ops.OpAdd] != 1 || k[ops.OpSub] != 2 {
		t.Errorf("kernels after CSE: %v\n%s", k, p.Plan().Format())
	}
	for i := range outs {
		if err := exectest.Compare(got[i], want[i], 0); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

// TestConstFold: x * (2 + 3) folds the constant to 5 and runs one Mul.
func TestConstFold(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	two, three := g.Const(tensor.Scalar(float32(2))), g.Const(tensor.Scalar(float32(3)))
	y := ops.Mul(x, ops.Exp(ops.Log(ops.Add(two, three))))
	p, got := compileRun(t, be, []*graph.Node{y}, exec.Feeds{x: f32(t, []float32{1, 2, 3, 4}, 4)})
	if k := kernelOps(p); len(k) != 1 || k[ops.OpMul] != 1 {
		t.Errorf("kernels %v, want one Mul:\n%s", k, p.Plan().Format())
	}
	// hand: x * 5 (exp(log 5) folds to 5 up to rounding: 5.0000005)
	if err := exectest.Compare(got[0], f32(t, []float32{5, 10, 15, 20}, 4), 1e-6); err != nil {
		t.Error(err)
	}
}

// TestConstFoldIota: an op without operands (Iota) folds when its result
// is small (up to foldLimit, 64 elements) and stays a kernel when it is
// larger (a 200-element constant would cost more to store than to
// compute). Values by hand: x + [0 1 2 3] and the sum 0+1+...+199 = 19900.
func TestConstFoldIota(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Int64, 4)
	small := ops.Add(x, ops.Iota(g, tensor.Int64, 0, 4))
	big := ops.Sum(ops.Iota(g, tensor.Int64, 0, 200))
	xv, err := tensor.New([]int64{10, 20, 30, 40}, 4)
	if err != nil {
		t.Fatal(err)
	}
	p, got := compileRun(t, be, []*graph.Node{small, big}, exec.Feeds{x: xv})
	if k := kernelOps(p); k[ops.OpIota] != 1 {
		t.Errorf("kernels %v, want one Iota (the 200-element one):\n%s", k, p.Plan().Format())
	}
	if v, _ := tensor.Values[int64](got[0]); fmt.Sprint(v) != "[10 21 32 43]" {
		t.Errorf("x + iota = %v, want [10 21 32 43]", v)
	}
	if v, _ := tensor.Values[int64](got[1]); fmt.Sprint(v) != "[19900]" {
		t.Errorf("sum of iota(200) = %v, want [19900]", v)
	}
}

// TestPrecision: a float32 graph compiled for float64 computes in float64
// but keeps its interface: (x + 1e8) - 1e8 for x = 1.5 is 0 in float32
// (the float32 spacing at 1e8 is 8) and 1.5 in float64 (hand).
func TestPrecision(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1)
	big := ops.Scalar(x, 1e8)
	w := g.Variable("w", f32(t, []float32{1}, 1))
	y := ops.Sub(ops.Add(ops.Mul(x, w), big), big)
	feeds := exec.Feeds{x: f32(t, []float32{1.5}, 1)}
	_, lo := compileRun(t, be, []*graph.Node{y}, feeds)
	hp, hi := compileRun(t, be, []*graph.Node{y}, feeds, exec.Precision(tensor.Float64), exec.Update(w, ops.Add(w, ops.Scalar(w, 1e-9))))
	if lo[0].Float64(0) != 0 || hi[0].Float64(0) != 1.5 || hi[0].DType() != tensor.Float32 {
		t.Errorf("float32: %v, float64 precision: %v (want 0 and 1.5 as f32)", lo[0], hi[0])
	}
	// The variable is held in float64: 1 + 1e-9 survives there, and Read
	// gives the user's dtype back.
	if _, err := hp.Run(context.Background(), feeds); err != nil {
		t.Fatal(err)
	}
	wv, _ := hp.Read(w)
	if wv.DType() != tensor.Float32 {
		t.Errorf("Read gave %v, want float32", wv.Type())
	}
	if !strings.Contains(hp.Plan().Format(), "f64") {
		t.Errorf("the plan does not compute in float64:\n%s", hp.Plan().Format())
	}
	if _, err := exec.Compile(be, []*graph.Node{y}, exec.Precision(tensor.Int32)); err == nil {
		t.Errorf("Precision(int32) accepted")
	}
}

// TestFusion: an elementwise chain with scalar and broadcast operands
// becomes one kernel; a value used twice outside its group is computed
// once; a trailing reduction joins the group.
func TestFusion(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 64, 300)
	row := g.Input("row", tensor.Float32, 300)
	col := g.Input("col", tensor.Float32, 64, 1)
	y := ops.Tanh(ops.Add(ops.Mul(ops.Sub(x, row), ops.Scalar(x, 0.5)), col))
	t1 := ops.Exp(ops.Neg(x))
	a := ops.Mul(t1, ops.Scalar(t1, 2))
	b := ops.Add(t1, ops.Scalar(t1, 1))
	sq := ops.Sum(ops.Square(ops.Add(x, row)), 1) // a row reduction
	colmax := ops.Max(ops.Mul(x, col), 0)         // a column reduction
	total := ops.Sum(ops.Abs(x))                  // a full reduction
	outs := []*graph.Node{y, a, b, sq, colmax, total}
	feeds := exec.Feeds{
		x: exectest.Rand(tensor.Float32, tensor.Shape{64, 300}, -2, 2, 1), row: exectest.Rand(tensor.Float32, tensor.Shape{300}, -1, 1, 2),
		col: exectest.Rand(tensor.Float32, tensor.Shape{64, 1}, -1, 1, 3),
	}
	p, got := compileRun(t, be, outs, feeds)
	_, want := compileRun(t, be, outs, feeds, exec.DisablePasses(optionalPasses...))
	st := p.Stats()
	// Hand count of kernels: y (4 ops), t1 (Neg, Exp: materialised, it has
	// two consumer groups), a and b (one op each: plain kernels), sq (Add,
	// Mul, Sum), colmax (Mul, Max), total (Abs, Sum) = 7 kernels, 5 fused.
	// (sq reads x+row, not x-row: a shared x-row would be merged by CSE and
	// computed once, outside both groups.)
	if st.Kernels != 7 || len(st.FusedGroups) != 5 {
		t.Errorf("stats: %v\n%s", st, p.Plan().Format())
	}
	for i := range outs {
		if err := exectest.Compare(got[i], want[i], 1e-5); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

// TestZeroAllocations: after the first run, RunInto allocates nothing and
// Run allocates only the output tensors (each a Tensor, its shape and its
// data) and the slice holding them.
func TestZeroAllocations(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 256, 100)
	b := g.Input("b", tensor.Float32, 100)
	w := g.Variable("w", exectest.Rand(tensor.Float32, tensor.Shape{100}, -1, 1, 5))
	h := ops.Tanh(ops.Add(ops.Mul(x, w), b))
	s := ops.Softmax(h, -1)
	loss := ops.Mean(ops.Sum(ops.Mul(s, s), 1))
	colsum := ops.Sum(h, 0)
	tr := ops.Transpose(ops.Reshape(h, 100, 256))
	outs := []*graph.Node{loss, colsum, ops.ArgMax(s, 1), tr}
	p, err := exec.Compile(be, outs, exec.Update(w, ops.Sub(w, ops.Mul(ops.Scalar(w, 0.01), colsum))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{256, 100}, -1, 1, 6), b: exectest.Rand(tensor.Float32, tensor.Shape{100}, -1, 1, 7)}
	ctx := context.Background()
	res, err := p.Run(ctx, feeds)
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := p.RunInto(ctx, feeds, res); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("RunInto: %v allocations per run, want 0", a)
	}
	if a := testing.AllocsPerRun(20, func() {
		if _, err := p.Run(ctx, feeds); err != nil {
			t.Fatal(err)
		}
	}); a > float64(1+3*len(outs)) {
		t.Errorf("Run: %v allocations per run, want at most %d (the outputs)", a, 1+3*len(outs))
	}
}

func TestDisablePassesErrors(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1)
	if _, err := exec.Compile(be, []*graph.Node{x}, exec.DisablePasses("memplan")); err == nil || !strings.Contains(err.Error(), "required") {
		t.Errorf("disabling memplan: %v", err)
	}
	if _, err := exec.Compile(be, []*graph.Node{x}, exec.DisablePasses("nope")); err == nil || !strings.Contains(err.Error(), "no pass named") {
		t.Errorf("disabling an unknown pass: %v", err)
	}
}

// TestDisableSimplifyDisablesEveryRewrite: with simplify off, x*1 stays a
// Mul although constant folding runs (the folder used to simplify the
// nodes it could not fold); (2+3) still folds. Hand: x*1*5 = 5x.
func TestDisableSimplifyDisablesEveryRewrite(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	two, three := g.Const(tensor.Scalar(float32(2))), g.Const(tensor.Scalar(float32(3)))
	y := ops.Mul(ops.Mul(x, ops.Scalar(x, 1)), ops.Add(two, three))
	p, got := compileRun(t, be, []*graph.Node{y}, exec.Feeds{x: f32(t, []float32{1, 2, 3, 4}, 4)}, exec.DisablePasses("simplify", "fuse"))
	if k := kernelOps(p); len(k) != 1 || k[ops.OpMul] != 2 {
		t.Errorf("kernels %v, want two Muls (x*1 kept, 2+3 folded):\n%s", k, p.Plan().Format())
	}
	if err := exectest.Compare(got[0], f32(t, []float32{5, 10, 15, 20}, 4), 0); err != nil {
		t.Error(err)
	}
	p2, _ := compileRun(t, be, []*graph.Node{y}, exec.Feeds{x: f32(t, []float32{1, 2, 3, 4}, 4)}, exec.DisablePasses("fuse"))
	if k := kernelOps(p2); k[ops.OpMul] != 1 {
		t.Errorf("with simplify: kernels %v, want one Mul", k)
	}
}

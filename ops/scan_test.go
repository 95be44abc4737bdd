package ops_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func init() {
	// The builders of this file's ops, for TestNilEverywhere.
	for name, f := range map[string]func(xs ...*graph.Node) *graph.Node{
		"Prod":         func(xs ...*graph.Node) *graph.Node { return ops.Prod(xs[0]) },
		"Any":          func(xs ...*graph.Node) *graph.Node { return ops.AnyOf(xs[0]) },
		"All":          func(xs ...*graph.Node) *graph.Node { return ops.AllOf(xs[0]) },
		"Cumsum":       func(xs ...*graph.Node) *graph.Node { return ops.Cumsum(xs[0], 0) },
		"Cumprod":      func(xs ...*graph.Node) *graph.Node { return ops.Cumprod(xs[0], 0, ops.Reverse) },
		"Cummax":       func(xs ...*graph.Node) *graph.Node { return ops.Cummax(xs[0], 0, ops.Exclusive) },
		"LogCumSumExp": func(xs ...*graph.Node) *graph.Node { return ops.LogCumSumExp(xs[0], 0) },
		"CumprodGrad":  func(xs ...*graph.Node) *graph.Node { return ops.Apply(ops.OpCumprodGrad, opdef.ScanAttr{}, xs...) },
		"CummaxGrad":   func(xs ...*graph.Node) *graph.Node { return ops.Apply(ops.OpCummaxGrad, opdef.ScanAttr{}, xs...) },
	} {
		builders[name] = f
	}
	for name, c := range map[string]struct {
		n int
		f func(xs ...*graph.Node) *graph.Node
	}{
		"ProdKeepDims":  {1, func(xs ...*graph.Node) *graph.Node { return ops.ProdKeepDims(xs[0], 0) }},
		"AnyOfKeepDims": {1, func(xs ...*graph.Node) *graph.Node { return ops.AnyOfKeepDims(xs[0], 0) }},
		"AllOfKeepDims": {1, func(xs ...*graph.Node) *graph.Node { return ops.AllOfKeepDims(xs[0], 0) }},
		"Var":           {1, func(xs ...*graph.Node) *graph.Node { return ops.Var(xs[0], 1) }},
		"VarKeepDims":   {1, func(xs ...*graph.Node) *graph.Node { return ops.VarKeepDims(xs[0], 0, 0) }},
		"Std":           {1, func(xs ...*graph.Node) *graph.Node { return ops.Std(xs[0], 0) }},
		"StdKeepDims":   {1, func(xs ...*graph.Node) *graph.Node { return ops.StdKeepDims(xs[0], 1, 0) }},
	} {
		composites[name] = c
	}
}

// TestScanGoldens checks the declared semantics of the reductions and
// scans of scan.go (their float64 and int64 references, which the
// conformance suite holds every backend to) against hand calculations and
// NumPy/PyTorch's documented behaviour.
func TestScanGoldens(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	un := func(f func(x *graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0]) }
	}
	// grad is the gradient of Σ f(x)·w at x, w the second input.
	grad := func(f func(x *graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node {
			return autodiff.Grad(ops.Sum(ops.Mul(f(xs[0]), xs[1])), xs[0])[0]
		}
	}
	f64, f32, i32 := tensor.Float64, tensor.Float32, tensor.Int32
	cases := []struct {
		name  string
		dt    tensor.DType
		shape []int
		f     func(xs ...*graph.Node) *graph.Node
		in    [][]float64
		want  []float64
	}{
		// hand: row products of [[1,2,3],[4,0,6]]
		{"Prod", f64, []int{2, 3}, un(func(x *graph.Node) *graph.Node { return ops.Prod(x, 1) }), [][]float64{{1, 2, 3, 4, 0, 6}}, []float64{6, 0}},
		// hand: 2^31 wraps to -2^31 in int32 (NumPy's int32 prod)
		{"Prod/int-wrap", i32, []int{2}, un(func(x *graph.Node) *graph.Node { return ops.Prod(x) }), [][]float64{{65536, 32768}}, []float64{-2147483648}},
		// hand: Any and All per row; NaN is nonzero
		{"Any", f64, []int{3, 2}, un(func(x *graph.Node) *graph.Node { return ops.AnyOf(x, 1) }), [][]float64{{0, 0, 0, nan, -0.0, 2}}, []float64{0, 1, 1}},
		{"All", f64, []int{3, 2}, un(func(x *graph.Node) *graph.Node { return ops.AllOf(x, 1) }), [][]float64{{1, 0, 3, nan, -0.0, 2}}, []float64{0, 1, 0}},
		// hand: mean 2.5, squared deviations 2.25+0.25+0.25+2.25 = 5: /4 and /3
		{"Var/0", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Var(x, 0) }), [][]float64{{1, 2, 3, 4}}, []float64{1.25}},
		{"Var/1", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Var(x, 1) }), [][]float64{{1, 2, 3, 4}}, []float64{5.0 / 3}},
		{"Std/0", f64, []int{2, 2}, un(func(x *graph.Node) *graph.Node { return ops.Std(x, 0, 1) }), [][]float64{{1, 3, 5, 5}}, []float64{1, 0}},
		// hand: N - correction = 0 divides by zero (NumPy: inf for 5/0)
		{"Var/ddof-N", f64, []int{2}, un(func(x *graph.Node) *graph.Node { return ops.Var(x, 2) }), [][]float64{{1, 2}}, []float64{inf}},
		// numpy.cumsum([1,2,3,4]) and its reversed and exclusive forms
		{"Cumsum", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 0) }), [][]float64{{1, 2, 3, 4}}, []float64{1, 3, 6, 10}},
		{"Cumsum/reverse", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 0, ops.Reverse) }), [][]float64{{1, 2, 3, 4}}, []float64{10, 9, 7, 4}},
		{"Cumsum/exclusive", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 0, ops.Exclusive) }), [][]float64{{1, 2, 3, 4}}, []float64{0, 1, 3, 6}},
		{"Cumsum/reverse-exclusive", i32, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cumsum(x, -1, ops.Reverse, ops.Exclusive) }), [][]float64{{1, 2, 3, 4}}, []float64{9, 7, 4, 0}},
		// hand: along axis 0 of [[1,2],[3,4]]
		{"Cumsum/axis0", f32, []int{2, 2}, un(func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 0) }), [][]float64{{1, 2, 3, 4}}, []float64{1, 2, 4, 6}},
		// numpy.cumprod([1,2,0,4]); exclusive starts at 1
		{"Cumprod", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cumprod(x, 0) }), [][]float64{{1, 2, 0, 4}}, []float64{1, 2, 0, 0}},
		{"Cumprod/exclusive", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cumprod(x, 0, ops.Exclusive) }), [][]float64{{1, 2, 0, 4}}, []float64{1, 1, 2, 0}},
		// torch.cummax values: NaN propagates; exclusive starts at -Inf
		{"Cummax", f64, []int{5}, un(func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0) }), [][]float64{{1, 3, 2, nan, 5}}, []float64{1, 3, 3, nan, nan}},
		{"Cummax/exclusive", f64, []int{5}, un(func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0, ops.Exclusive) }), [][]float64{{1, 3, 2, nan, 5}}, []float64{-inf, 1, 3, 3, nan}},
		// torch.cummax: a later equal value replaces the maximum, so the
		// sign of a zero follows the last zero
		{"Cummax/signed-zeros", f64, []int{4}, un(func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0) }), [][]float64{{-1, math.Copysign(0, -1), 0, math.Copysign(0, -1)}}, []float64{-1, math.Copysign(0, -1), 0, math.Copysign(0, -1)}},
		// hand: int32's exclusive identity is its minimum
		{"Cummax/int-exclusive", i32, []int{3}, un(func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0, ops.Exclusive) }), [][]float64{{-5, 7, 2}}, []float64{-2147483648, -5, 7}},
		// hand: log(e^0 + e^0) = ln 2; at 1000 the same without overflow;
		// -Inf is the identity
		{"LogCumSumExp", f64, []int{3}, un(func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0) }), [][]float64{{0, 0, -inf}}, []float64{0, math.Ln2, math.Ln2}},
		{"LogCumSumExp/large", f64, []int{2}, un(func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0) }), [][]float64{{1000, 1000}}, []float64{1000, 1000 + math.Ln2}},
		{"LogCumSumExp/exclusive", f64, []int{2}, un(func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0, ops.Exclusive) }), [][]float64{{1000, 1000}}, []float64{-inf, 1000}},
		// Gradients by hand. Prod of [2,0,3]: the products of the others
		// are [0, 6, 0] (prod/x would give NaN at the zero).
		{"Prod/grad-zero", f64, []int{3}, grad(func(x *graph.Node) *graph.Node { return ops.Prod(x) }), [][]float64{{2, 0, 3}, {1}}, []float64{0, 6, 0}},
		// Two zeros: every product of the others is 0.
		{"Prod/grad-two-zeros", f64, []int{3}, grad(func(x *graph.Node) *graph.Node { return ops.Prod(x) }), [][]float64{{0, 5, 0}, {1}}, []float64{0, 0, 0}},
		// Cumprod of [2,0,3] is [2,0,0]; with weights 1: dx0 = 1 + x1 +
		// x1·x2 = 1, dx1 = x0 + x0·x2 = 8, dx2 = x0·x1 = 0.
		{"Cumprod/grad-zero", f64, []int{3}, grad(func(x *graph.Node) *graph.Node { return ops.Cumprod(x, 0) }), [][]float64{{2, 0, 3}, {1, 1, 1}}, []float64{1, 8, 0}},
		// Cummax of [1,3,3,2] with weights [1,2,4,8]: y1 comes from index 1,
		// y2 and y3 from index 2 (the last of the tie): [1, 2, 12, 0].
		{"Cummax/grad-ties", f64, []int{4}, grad(func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0) }), [][]float64{{1, 3, 3, 2}, {1, 2, 4, 8}}, []float64{1, 2, 12, 0}},
		// Exclusive: y = [-Inf, 1, 3, 3]; w0 is dropped, w1 goes to index 0,
		// w2 to 1, w3 to 2: [2, 4, 8, 0].
		{"Cummax/grad-exclusive", f64, []int{4}, grad(func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0, ops.Exclusive) }), [][]float64{{1, 3, 3, 2}, {1, 2, 4, 8}}, []float64{2, 4, 8, 0}},
		// Prod's second derivative (through Cumprod's gradient): row 0 of
		// the Hessian of x0·x1·x2 at [2,0,3] is [0, x2, x1] = [0, 3, 0].
		{"Prod/hessian-row", f64, []int{3}, grad(func(x *graph.Node) *graph.Node {
			return autodiff.Grad(ops.Prod(x), x)[0]
		}), [][]float64{{2, 0, 3}, {1, 0, 0}}, []float64{0, 3, 0}},
		// Cumsum's gradient is the reverse cumsum of the weights.
		{"Cumsum/grad", f64, []int{3}, grad(func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 0) }), [][]float64{{5, 6, 7}, {1, 2, 4}}, []float64{7, 6, 4}},
		// LogCumSumExp of [0,0]: y = [0, ln2]; dy1/dx = [1/2, 1/2],
		// dy0/dx0 = 1: with weights [1, -2], [1 - 1, -1] = [0, -1].
		{"LogCumSumExp/grad", f64, []int{2}, grad(func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0) }), [][]float64{{0, 0}, {1, -2}}, []float64{0, -1}},
	}
	for _, c := range cases {
		g := graph.New()
		ts := make([]*tensor.Tensor, len(c.in))
		for i, v := range c.in {
			s := c.shape
			if i > 0 && len(v) != tensor.Shape(c.shape).Size() {
				s = []int{}
			}
			ts[i] = exectest.Tensor(c.dt, v, s...)
		}
		xs, feeds := exectest.Inputs(g, ts...)
		y := c.f(xs...)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := exectest.Eval([]*graph.Node{y}, feeds)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got[0].Size() != len(c.want) {
			t.Fatalf("%s: %d elements, want %d", c.name, got[0].Size(), len(c.want))
		}
		for i, w := range c.want {
			v := got[0].Float64(i)
			ok := v == w && math.Signbit(v) == math.Signbit(w) || math.IsNaN(v) && math.IsNaN(w) || math.Abs(v-w) <= 1e-14*math.Abs(w) && w != 0
			if !ok {
				t.Errorf("%s element %d: got %v, want %v", c.name, i, v, w)
			}
		}
	}
}

// TestScanErrors: bad arguments are build errors naming the op.
func TestScanErrors(t *testing.T) {
	in := func(g *graph.Graph, dt tensor.DType) *graph.Node { return g.Input("x", dt, 2, 3) }
	f32, i32 := tensor.Float32, tensor.Int32
	for name, c := range map[string]struct {
		f    func(g *graph.Graph) *graph.Node
		kind error
		op   string
	}{
		"axis":              {func(g *graph.Graph) *graph.Node { return ops.Cumsum(in(g, f32), 2) }, graph.ErrShape, "Cumsum"},
		"option":            {func(g *graph.Graph) *graph.Node { return ops.Cummax(in(g, f32), 0, ops.ScanOption(8)) }, graph.ErrInvalid, "Cummax"},
		"lcse-int":          {func(g *graph.Graph) *graph.Node { return ops.LogCumSumExp(in(g, i32), 0) }, graph.ErrDType, "LogCumSumExp"},
		"var-int":           {func(g *graph.Graph) *graph.Node { return ops.Var(in(g, i32), 0) }, graph.ErrDType, "Var"},
		"var-negative-ddof": {func(g *graph.Graph) *graph.Node { return ops.Var(in(g, f32), -1) }, graph.ErrInvalid, "Var"},
		"std-nan-ddof":      {func(g *graph.Graph) *graph.Node { return ops.Std(in(g, f32), math.NaN()) }, graph.ErrInvalid, "Std"},
		"prod-axis":         {func(g *graph.Graph) *graph.Node { return ops.Prod(in(g, f32), 0, 0) }, graph.ErrShape, "Prod"},
		"helper-shapes": {func(g *graph.Graph) *graph.Node {
			return ops.Apply(ops.OpCummaxGrad, opdef.ScanAttr{}, in(g, f32), g.Input("y", f32, 3, 2))
		}, graph.ErrShape, "CummaxGrad"},
	} {
		n := c.f(graph.New())
		var ge *graph.Error
		if n.Valid() || !errors.Is(n.Err(), c.kind) || !errors.As(n.Err(), &ge) || ge.Op != c.op {
			t.Errorf("%s: got %v (err %v), want a %v error of %s", name, n, n.Err(), c.kind, c.op)
		}
	}
}

// TestScanAttrEqual: CSE compares ScanAttrs by value.
func TestScanAttrEqual(t *testing.T) {
	a := opdef.ScanAttr{Axis: 1, Reverse: true}
	if !opdef.EqualAttrs(a, opdef.ScanAttr{Axis: 1, Reverse: true}) || opdef.EqualAttrs(a, opdef.ScanAttr{Axis: 1}) ||
		opdef.EqualAttrs(a, opdef.ScanAttr{Axis: 1, Reverse: true, Exclusive: true}) || opdef.EqualAttrs(a, opdef.AxisAttr{Axis: 1}) {
		t.Error("ScanAttr equality is not by value")
	}
	if s := (opdef.ScanAttr{Axis: 2, Reverse: true, Exclusive: true}).String(); s != "axis=2 reverse exclusive" {
		t.Errorf("String: %q", s)
	}
}

// TestScanHelpersNotDifferentiable: a second derivative through Cummax or
// Cumprod meets their gradient helpers, which have no rule: a build error
// naming the helper, not a silent zero.
func TestScanHelpersNotDifferentiable(t *testing.T) {
	for _, f := range []func(*graph.Node) *graph.Node{
		func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0) },
		func(x *graph.Node) *graph.Node { return ops.Cumprod(x, 0) },
	} {
		g := graph.New()
		x := g.Input("x", tensor.Float64, 3)
		d := autodiff.Grad(ops.Sum(f(x)), x)[0]
		if err := g.Err(); err != nil {
			t.Fatalf("first derivative: %v", err)
		}
		d2 := autodiff.Grad(ops.Sum(ops.Mul(d, d)), x)
		err := g.Err()
		// the first derivative is the helper's node (CummaxGrad, CumprodGrad)
		if err == nil || (d2 != nil && d2[0].Valid()) || !strings.Contains(err.Error(), d.Op().String()+" ") ||
			!strings.HasSuffix(d.Op().String(), "Grad") {
			t.Errorf("second derivative through %s: err %v", d.Op(), err)
		}
	}
}

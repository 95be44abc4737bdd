package autodiff_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// operand describes one input of a gradient check: its shape and how to
// draw values away from the op's kinks.
type operand struct {
	shape tensor.Shape
	draw  func(r *rand.Rand) float64
}

func uniform(lo, hi float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 { return lo + (hi-lo)*r.Float64() }
}

// awayFromZero draws from [-hi,-lo] ∪ [lo,hi].
func awayFromZero(lo, hi float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		v := lo + (hi-lo)*r.Float64()
		if r.IntN(2) == 0 {
			return -v
		}
		return v
	}
}

// distinct draws values on a grid of step 0.5 plus a small jitter, so no
// two are within 0.1 of each other with high probability: Max and
// Maximum are differentiable there.
func distinct(r *rand.Rand) float64 {
	return float64(r.IntN(40))*0.5 - 10 + 0.1*r.Float64()
}

type gradCase struct {
	name string
	in   []operand
	f    func(xs []*graph.Node) *graph.Node
}

// fdStep overrides the step (1e-6) and relative tolerance (1e-6) of cases
// computed partly in float32.
var fdStep = map[string][2]float64{
	// x^2 computed in float32: central differences are exact for a
	// quadratic, so a large step (1e-2) only meets float32 rounding of y
	// (about 1e-7 relative) divided by the step: 1e-5; allow 1e-3.
	"Cast/f64-f32-f64": {1e-2, 1e-3},
}

func op1(shape tensor.Shape, d func(*rand.Rand) float64) []operand { return []operand{{shape, d}} }

// gradCases maps every differentiable op of the table to its checks. A
// differentiable op without an entry fails TestEveryDifferentiableOpIsChecked.
var gradCases = map[string][]gradCase{
	"Add": binaryCases(ops.Add, uniform(-2, 2), uniform(-2, 2)),
	"Sub": binaryCases(ops.Sub, uniform(-2, 2), uniform(-2, 2)),
	"Mul": binaryCases(ops.Mul, uniform(-2, 2), uniform(-2, 2)),
	"Div": binaryCases(ops.Div, uniform(-2, 2), awayFromZero(0.5, 2)),
	"Pow": binaryCases(ops.Pow, uniform(0.5, 2), uniform(-2, 2)),
	"Maximum": {
		{"distinct", []operand{{tensor.Shape{3, 4}, distinct}, {tensor.Shape{3, 4}, distinct}}, func(x []*graph.Node) *graph.Node { return ops.Maximum(x[0], x[1]) }},
		{"broadcast", []operand{{tensor.Shape{3, 4}, distinct}, {tensor.Shape{4}, distinct}}, func(x []*graph.Node) *graph.Node { return ops.Maximum(x[0], x[1]) }},
	},
	"Minimum": {
		{"broadcast-left", []operand{{tensor.Shape{1, 4}, distinct}, {tensor.Shape{3, 4}, distinct}}, func(x []*graph.Node) *graph.Node { return ops.Minimum(x[0], x[1]) }},
	},
	"Neg":     unaryCases(ops.Neg, uniform(-2, 2)),
	"Abs":     unaryCases(ops.Abs, awayFromZero(0.1, 2)),
	"Sign":    unaryCases(ops.Sign, awayFromZero(0.1, 2)),
	"Exp":     unaryCases(ops.Exp, uniform(-2, 2)),
	"Log":     unaryCases(ops.Log, uniform(0.2, 3)),
	"Sqrt":    unaryCases(ops.Sqrt, uniform(0.2, 3)),
	"Tanh":    unaryCases(ops.Tanh, uniform(-2, 2)),
	"Sigmoid": unaryCases(ops.Sigmoid, uniform(-4, 4)),
	"Relu":    unaryCases(ops.Relu, awayFromZero(0.1, 2)),
	"Sin":     unaryCases(ops.Sin, uniform(-3, 3)),
	"Cos":     unaryCases(ops.Cos, uniform(-3, 3)),
	"Where": {
		{"broadcast", []operand{{tensor.Shape{3, 4}, uniform(-2, 2)}, {tensor.Shape{4}, uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node {
			return ops.Where(ops.Greater(x[0], ops.Scalar(x[0], 0)), x[0], x[1])
		}},
	},
	"Cast": {
		{"f64-f32-f64", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Cast(ops.Mul(ops.Cast(x[0], tensor.Float32), ops.Cast(x[0], tensor.Float32)), tensor.Float64)
		}},
	},
	"StopGradient": {
		// The stopped branch is constant in x (x*0), so finite
		// differences see only the first term; TestStopGradient checks
		// that a live stopped branch is ignored.
		{"cut", op1(tensor.Shape{3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Add(ops.Exp(x[0]), ops.StopGradient(ops.Mul(x[0], ops.Scalar(x[0], 0))))
		}},
	},
	"MatMul": {
		{"2d", []operand{{tensor.Shape{3, 4}, uniform(-1, 1)}, {tensor.Shape{4, 5}, uniform(-1, 1)}}, mm},
		{"batched", []operand{{tensor.Shape{2, 3, 4}, uniform(-1, 1)}, {tensor.Shape{2, 4, 2}, uniform(-1, 1)}}, mm},
		{"broadcast-batch", []operand{{tensor.Shape{2, 1, 3, 4}, uniform(-1, 1)}, {tensor.Shape{3, 4, 2}, uniform(-1, 1)}}, mm},
		{"vec-mat", []operand{{tensor.Shape{4}, uniform(-1, 1)}, {tensor.Shape{4, 3}, uniform(-1, 1)}}, mm},
		{"mat-vec", []operand{{tensor.Shape{2, 4}, uniform(-1, 1)}, {tensor.Shape{4}, uniform(-1, 1)}}, mm},
		{"transA", []operand{{tensor.Shape{4, 3}, uniform(-1, 1)}, {tensor.Shape{4, 5}, uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node { return ops.MatMulT(x[0], x[1], true, false) }},
		{"transB", []operand{{tensor.Shape{3, 4}, uniform(-1, 1)}, {tensor.Shape{5, 4}, uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node { return ops.MatMulT(x[0], x[1], false, true) }},
		{"transAB-batch", []operand{{tensor.Shape{2, 4, 3}, uniform(-1, 1)}, {tensor.Shape{5, 4}, uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node { return ops.MatMulT(x[0], x[1], true, true) }},
	},
	"Sum": {
		{"all", op1(tensor.Shape{2, 3, 4}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.Sum(x[0]) }},
		{"axes", op1(tensor.Shape{2, 3, 4}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.Sum(x[0], 0, 2) }},
		{"keepdims", op1(tensor.Shape{2, 3, 4, 2}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.SumKeepDims(x[0], 1, 3) }},
		{"mean", op1(tensor.Shape{3, 4}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.Mean(x[0], -1) }},
	},
	"Max": {
		{"axis", op1(tensor.Shape{3, 5}, distinct), func(x []*graph.Node) *graph.Node { return ops.Max(x[0], 1) }},
		{"axes-keep", op1(tensor.Shape{2, 3, 4}, distinct), func(x []*graph.Node) *graph.Node { return ops.MaxKeepDims(x[0], 0, 2) }},
		{"all", op1(tensor.Shape{4, 3}, distinct), func(x []*graph.Node) *graph.Node { return ops.Max(x[0]) }},
	},
	"Min": {
		{"axis0", op1(tensor.Shape{4, 3}, distinct), func(x []*graph.Node) *graph.Node { return ops.Min(x[0], 0) }},
	},
	"Reshape": {
		{"", op1(tensor.Shape{2, 6}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.Reshape(x[0], 3, -1, 2) }},
	},
	"Transpose": {
		{"", op1(tensor.Shape{2, 3, 4}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.Transpose(x[0], 2, 0, 1) }},
	},
	"BroadcastTo": {
		{"", op1(tensor.Shape{3, 1}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node { return ops.BroadcastTo(x[0], 2, 3, 4) }},
	},
	"Concat": {
		{"", []operand{{tensor.Shape{2, 3}, uniform(-1, 1)}, {tensor.Shape{2, 1}, uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node {
			return ops.Concat(1, x[0], x[1], x[0])
		}},
	},
	"Slice": {
		{"steps", op1(tensor.Shape{7, 5}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node {
			return ops.Slice(x[0], ops.RS(1, 7, 2), ops.R(-3, ops.End))
		}},
	},
	"Pad": {
		{"interior", op1(tensor.Shape{3, 2}, uniform(-1, 1)), func(x []*graph.Node) *graph.Node {
			return ops.Pad(x[0], ops.PadWidth{Low: 1, High: 2, Interior: 1}, ops.PadWidth{Interior: 2})
		}},
	},
	"Softmax": {
		{"last", op1(tensor.Shape{3, 4}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Softmax(x[0], -1) }},
		{"middle", op1(tensor.Shape{2, 3, 2}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Softmax(x[0], 1) }},
	},
	"LogSoftmax": {
		{"last", op1(tensor.Shape{3, 4}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.LogSoftmax(x[0], -1) }},
		{"first", op1(tensor.Shape{4, 2}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.LogSoftmax(x[0], 0) }},
	},
	"CustomGrad": {
		// A custom rule equal to the true derivative of x^2 (2x), so the
		// finite differences of the forward value must agree with it.
		{"square", op1(tensor.Shape{3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.CustomGradient("square", ops.Mul(x[0], x[0]), []*graph.Node{x[0]}, func(dy *graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(dy, ops.Mul(x[0], ops.Scalar(x[0], 2)))}
			})
		}},
	},
}

func mm(x []*graph.Node) *graph.Node { return ops.MatMul(x[0], x[1]) }

// binaryCases checks a binary op on equal shapes and with broadcasting on
// each side.
func binaryCases(f func(a, b *graph.Node) *graph.Node, da, db func(*rand.Rand) float64) []gradCase {
	g := func(x []*graph.Node) *graph.Node { return f(x[0], x[1]) }
	return []gradCase{
		{"same", []operand{{tensor.Shape{2, 3}, da}, {tensor.Shape{2, 3}, db}}, g},
		{"broadcast-right", []operand{{tensor.Shape{2, 3}, da}, {tensor.Shape{3}, db}}, g},
		{"broadcast-left", []operand{{tensor.Shape{2, 1}, da}, {tensor.Shape{2, 3}, db}}, g},
		{"scalar", []operand{{tensor.Shape{}, da}, {tensor.Shape{2, 2}, db}}, g},
		{"outer", []operand{{tensor.Shape{3, 1}, da}, {tensor.Shape{1, 2}, db}}, g},
	}
}

func unaryCases(f func(*graph.Node) *graph.Node, d func(*rand.Rand) float64) []gradCase {
	g := func(x []*graph.Node) *graph.Node { return f(x[0]) }
	return []gradCase{
		{"matrix", op1(tensor.Shape{2, 3}, d), g},
		{"scalar", op1(tensor.Shape{}, d), g},
	}
}

func TestEveryDifferentiableOpIsChecked(t *testing.T) {
	var missing []string
	for _, d := range ops.Defs() {
		if d.Differentiable && len(gradCases[d.Name]) == 0 {
			missing = append(missing, d.Name)
		}
		if d.Differentiable && d.Grad == nil {
			t.Errorf("%s is marked differentiable but has no gradient rule", d.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("differentiable ops without a finite-difference check: %v", missing)
	}
}

// TestFiniteDifferences checks every gradient rule against central
// differences in float64: for y = sum(f(xs) * R) with a fixed random R,
// dy/dx[i] ≈ (y(x+h e_i) - y(x-h e_i)) / 2h with h = 1e-6, whose error is
// O(h^2) + O(eps/h) ≈ 1e-10 here; we allow 1e-6 relative.
func TestFiniteDifferences(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	names := make([]string, 0, len(gradCases))
	for n := range gradCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for oi, name := range names {
		for ci, c := range gradCases[name] {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				gradCheck(t, be, c, uint64(oi*16+ci), fdStep[name+"/"+c.name])
			})
		}
	}
}

func gradCheck(t *testing.T, be exec.Backend, c gradCase, seed uint64, step [2]float64) {
	r := rand.New(rand.NewPCG(seed, 99))
	g := graph.New()
	xs := make([]*graph.Node, len(c.in))
	vals := make([]*tensor.Tensor, len(c.in))
	feeds := exec.Feeds{}
	for i, o := range c.in {
		xs[i] = g.Input(fmt.Sprintf("x%d", i), tensor.Float64, o.shape...)
		v := make([]float64, o.shape.Size())
		for k := range v {
			v[k] = o.draw(r)
		}
		vals[i], _ = tensor.New(v, o.shape...)
		if len(o.shape) == 0 {
			vals[i], _ = tensor.FromFloat64s(tensor.Float64, v, []int{}...)
		}
		feeds[xs[i]] = vals[i]
	}
	f := c.f(xs)
	if f.Valid() && f.DType() != tensor.Float64 {
		f = ops.Cast(f, tensor.Float64)
	}
	weights := make([]float64, f.Shape().Size())
	for k := range weights {
		weights[k] = 0.5 + r.Float64()
	}
	wt, _ := tensor.FromFloat64s(tensor.Float64, weights, f.Shape()...)
	y := ops.Sum(ops.Mul(f, g.Const(wt)))
	grads := autodiff.Grad(y, xs...)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for i, gr := range grads {
		if !gr.Shape().Equal(xs[i].Shape()) || gr.DType() != tensor.Float64 {
			t.Fatalf("gradient %d is %s, x is %s", i, gr.Type(), xs[i].Type())
		}
	}
	prog, err := exec.Compile(be, append([]*graph.Node{y}, grads...), exec.VerifyEachPass())
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	ctx := context.Background()
	out, err := prog.Run(ctx, feeds)
	if err != nil {
		t.Fatal(err)
	}
	h, tol := 1e-6, 1e-6
	if step[0] != 0 {
		h, tol = step[0], step[1]
	}
	for i := range xs {
		v, _ := tensor.Values[float64](vals[i])
		analytic := out[1+i].Float64s()
		for k := range v {
			orig := v[k]
			v[k] = orig + h
			plus, err := prog.Run(ctx, feeds)
			if err != nil {
				t.Fatal(err)
			}
			v[k] = orig - h
			minus, _ := prog.Run(ctx, feeds)
			v[k] = orig
			numeric := (plus[0].Float64(0) - minus[0].Float64(0)) / (2 * h)
			if d := math.Abs(numeric - analytic[k]); d > tol*(1+math.Abs(numeric)) {
				t.Errorf("d y / d x%d[%d]: rule %.10g, finite differences %.10g", i, k, analytic[k], numeric)
			}
		}
	}
}

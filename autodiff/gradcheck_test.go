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
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// operand describes one input of a gradient check: its shape and how to
// draw values away from the op's kinks.
type operand struct {
	shape tensor.Shape
	draw  func(r *rand.Rand) float64
}

// fixed is an operand with the given values (row-major, one per element:
// a check draws each element once, so they come back in order).
func fixed(shape tensor.Shape, vals ...float64) operand {
	if len(vals) != shape.Size() {
		panic(fmt.Sprintf("fixed: %d values for shape %v", len(vals), shape))
	}
	k := 0
	return operand{shape, func(*rand.Rand) float64 {
		v := vals[k%len(vals)]
		k++
		return v
	}}
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

// handFunc gives, from the inputs' values x and the weights w of y = Σ f·w,
// the values of f and the gradients dy/dx, by hand.
type handFunc func(x [][]float64, w []float64) (f []float64, grads [][]float64)

// hand replaces the finite differences of the cases named (op/case) by a
// hand calculation: for the rules that are not the derivative of the
// forward function by design (StopGradient, CustomGradient), and for the
// points where finite differences cannot see the rule (Sign at 0).
var hand = map[string]handFunc{
	// e^x + x², e^x
	"StopGradient/live-branch": elementwise(func(x float64) float64 { return math.Exp(x) + x*x }, math.Exp),
	// x·sin x, sin x
	"StopGradient/stopped-factor": elementwise(func(x float64) float64 { return x * math.Sin(x) }, math.Sin),
	"Sign/at-zero":                elementwise(sign, func(float64) float64 { return 0 }),
	// |x|, by the product rule sign(x) + x·Sign'(x) = sign(x)
	"Sign/x-times-sign": elementwise(math.Abs, sign),
	// x², cos x
	"CustomGrad/not-the-derivative": elementwise(func(x float64) float64 { return x * x }, math.Cos),
	// sign(x), 1
	"CustomGrad/straight-through": elementwise(sign, func(float64) float64 { return 1 }),
	// At a bound the gradient goes to x, as torch.clamp's: x = [-1, 1,
	// 0.5, -3, 3] in [-1, 1] gives dx = w for the first three, and the
	// bounds get the weights of the elements beyond them.
	"Clip/at-bounds": func(x [][]float64, w []float64) ([]float64, [][]float64) {
		lo, hi := x[1][0], x[2][0]
		f, dx, dlo, dhi := make([]float64, 5), make([]float64, 5), []float64{0}, []float64{0}
		for k, v := range x[0] {
			switch {
			case v < lo:
				f[k], dlo[0] = lo, dlo[0]+w[k]
			case v > hi:
				f[k], dhi[0] = hi, dhi[0]+w[k]
			default:
				f[k], dx[k] = v, w[k]
			}
		}
		return f, [][]float64{dx, dlo, dhi}
	},
	// The derivative at 0 is alpha, as PyTorch's (the x <= 0 branch).
	"LeakyRelu/at-zero": elementwise(func(x float64) float64 { return math.Max(x, 0.1*x) }, func(x float64) float64 {
		if x > 0 {
			return 1
		}
		return 0.1
	}),
	"Elu/at-zero": elementwise(func(x float64) float64 {
		if x > 0 {
			return x
		}
		return 1.5 * math.Expm1(x)
	}, func(x float64) float64 {
		if x > 0 {
			return 1
		}
		return 1.5 * math.Exp(x)
	}),
	// a·b; 0 and 3w
	"CustomGrad/nil-for-one": func(x [][]float64, w []float64) ([]float64, [][]float64) {
		f, da, db := make([]float64, 4), make([]float64, 4), make([]float64, 4)
		for k := range f {
			f[k], db[k] = x[0][k]*x[1][k], 3*w[k]
		}
		return f, [][]float64{da, db}
	},
}

// elementwise builds a want for one input and elementwise f: value(x) and
// the derivative the rule must give, times the weight.
func elementwise(value, deriv func(x float64) float64) handFunc {
	return func(x [][]float64, w []float64) ([]float64, [][]float64) {
		f, d := make([]float64, len(x[0])), make([]float64, len(x[0]))
		for k, v := range x[0] {
			f[k], d[k] = value(v), w[k]*deriv(v)
		}
		return f, [][]float64{d}
	}
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x // ±0
}

// fdStep overrides the step (1e-6) and relative tolerance (1e-6) of cases
// computed partly in float32.
var fdStep = map[string][2]float64{
	// x^2 computed in float32: central differences are exact for a
	// quadratic, so a large step (1e-2) only meets float32 rounding of y
	// (about 1e-7 relative) divided by the step: 1e-5; allow 1e-3.
	"Cast/f64-f32-f64": {1e-2, 1e-3},
	// x^2 in complex64 (float32 parts): as Cast/f64-f32-f64 above.
	"complex/promote/complex64": {1e-2, 1e-3},
}

func op1(shape tensor.Shape, d func(*rand.Rand) float64) []operand { return []operand{{shape, d}} }

// gradCases maps every differentiable op of the table to its checks. A
// differentiable op without an entry fails TestEveryDifferentiableOpIsChecked.
var gradCases = map[string][]gradCase{
	// Collectives (issue 18) on a group of one rank (compiled without a
	// communicator: Compile gives them dist.Local{}): each is the
	// identity, so this checks the rules' shapes and wiring; the values
	// over several ranks are checked by
	// hand in exec's TestCollectiveGradients.
	"AllReduce": {
		{"sum", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.AllReduce(x[0], ops.ReduceSum, 1) }},
		{"mean", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.AllReduce(x[0], ops.ReduceMean, 1) }},
		{"max", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.AllReduce(x[0], ops.ReduceMax, 1) }},
	},
	"AllGather": {{"axis1", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.AllGather(x[0], 1, 1) }}},
	"ReduceScatter": {
		{"sum", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.ReduceScatter(x[0], ops.ReduceSum, 1, 1) }},
		{"min", op1(tensor.Shape{2, 3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.ReduceScatter(x[0], ops.ReduceMin, 0, 1) }},
	},
	"Broadcast": {{"root0", op1(tensor.Shape{4}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Broadcast(x[0], 0, 1) }}},
	"Reduce": {
		{"mean", op1(tensor.Shape{4}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Reduce(x[0], ops.ReduceMean, 0, 1) }},
		{"max", op1(tensor.Shape{4}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return ops.Reduce(x[0], ops.ReduceMax, 0, 1) }},
	},
	"Maximum": {
		{"distinct", []operand{{tensor.Shape{3, 4}, distinct}, {tensor.Shape{3, 4}, distinct}}, func(x []*graph.Node) *graph.Node { return ops.Maximum(x[0], x[1]) }},
		{"broadcast", []operand{{tensor.Shape{3, 4}, distinct}, {tensor.Shape{4}, distinct}}, func(x []*graph.Node) *graph.Node { return ops.Maximum(x[0], x[1]) }},
	},
	"Minimum": {
		{"broadcast-left", []operand{{tensor.Shape{1, 4}, distinct}, {tensor.Shape{3, 4}, distinct}}, func(x []*graph.Node) *graph.Node { return ops.Minimum(x[0], x[1]) }},
	},
	"Abs": unaryCases(ops.Abs, awayFromZero(0.1, 2)),
	"Sign": append(unaryCases(ops.Sign, awayFromZero(0.1, 2)),
		// Sign' = 0 everywhere, 0 included (ops/grad.go), where finite
		// differences see a jump; a rule passing the cotangent through
		// (straight-through) would give w here, and w·x more in x·Sign(x).
		gradCase{"at-zero", []operand{fixed(tensor.Shape{2, 3}, -2, -0.5, 0, 0.25, 3, math.Copysign(0, -1))},
			func(x []*graph.Node) *graph.Node { return ops.Sign(x[0]) }},
		gradCase{"x-times-sign", []operand{fixed(tensor.Shape{5}, -1.5, -0.25, 0, 0.75, 2)},
			func(x []*graph.Node) *graph.Node { return ops.Mul(x[0], ops.Sign(x[0])) }},
	),
	"Relu": unaryCases(ops.Relu, awayFromZero(0.1, 2)),
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
		// The stopped branch x² adds to the value but not to the gradient
		// (finite differences of f would see 2x more): e^x + x², e^x.
		{"live-branch", op1(tensor.Shape{3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Add(ops.Exp(x[0]), ops.StopGradient(ops.Mul(x[0], x[0])))
		}},
		// A stopped factor is a constant in the product rule: x·sin x, sin x.
		{"stopped-factor", op1(tensor.Shape{2, 2}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Mul(x[0], ops.StopGradient(ops.Sin(x[0])))
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
	// The composites of ops/math.go (no ops of their own), away from
	// their kinks by finite differences and at them by hand (hand).
	"Clip": {
		{"scalar-bounds", []operand{fixed(tensor.Shape{6}, -1.7, -0.6, 0.3, 0.9, 1.4, 2.2), fixed(tensor.Shape{}, -1), fixed(tensor.Shape{}, 1)}, clip},
		{"broadcast-bounds", []operand{{tensor.Shape{3, 4}, uniform(-2, 2)}, {tensor.Shape{4}, uniform(-1.5, -0.5)}, {tensor.Shape{3, 1}, uniform(0.5, 1.5)}}, clip},
		{"at-bounds", []operand{fixed(tensor.Shape{5}, -1, 1, 0.5, -3, 3), fixed(tensor.Shape{}, -1), fixed(tensor.Shape{}, 1)}, clip},
	},
	"LeakyRelu": {
		{"", op1(tensor.Shape{2, 3}, awayFromZero(0.1, 2)), func(x []*graph.Node) *graph.Node { return ops.LeakyRelu(x[0], 0.1) }},
		{"at-zero", []operand{fixed(tensor.Shape{3}, -1, 0, 2)}, func(x []*graph.Node) *graph.Node { return ops.LeakyRelu(x[0], 0.1) }},
	},
	"Elu": {
		{"", op1(tensor.Shape{2, 3}, awayFromZero(0.1, 2)), func(x []*graph.Node) *graph.Node { return ops.Elu(x[0], 1.5) }},
		{"at-zero", []operand{fixed(tensor.Shape{3}, -1, 0, 2)}, func(x []*graph.Node) *graph.Node { return ops.Elu(x[0], 1.5) }},
	},
	"CustomGrad": {
		// Rules that differ from the derivative of the value, checked
		// against the rules' own values: differentiating the value (2x
		// here) instead of calling the rule fails.
		{"not-the-derivative", op1(tensor.Shape{3}, uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.CustomGradient("cos-rule", ops.Mul(x[0], x[0]), []*graph.Node{x[0]}, func(dy *graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(dy, ops.Cos(x[0]))}
			})
		}},
		// The straight-through estimator: Sign forward, identity backward.
		{"straight-through", []operand{fixed(tensor.Shape{4}, -1.5, 0, 0.5, 2)}, func(x []*graph.Node) *graph.Node {
			return ops.CustomGradient("ste", ops.Sign(x[0]), []*graph.Node{x[0]}, func(dy *graph.Node) []*graph.Node {
				return []*graph.Node{dy}
			})
		}},
		// Two inputs, nil for the first: value a·b, gradients 0 and 3w
		// (the subgraph a·b is not looked inside, so a gets no w·b).
		{"nil-for-one", []operand{{tensor.Shape{2, 2}, uniform(-2, 2)}, {tensor.Shape{2, 2}, uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node {
			return ops.CustomGradient("nil-rule", ops.Mul(x[0], x[1]), []*graph.Node{x[0], x[1]}, func(dy *graph.Node) []*graph.Node {
				return []*graph.Node{nil, ops.Mul(dy, ops.Scalar(dy, 3))}
			})
		}},
	},
}

func mm(x []*graph.Node) *graph.Node { return ops.MatMul(x[0], x[1]) }

func clip(x []*graph.Node) *graph.Node { return ops.Clip(x[0], x[1], x[2]) }

// The elementwise ops without hand-written checks get generated ones, with
// operands from their declared test domains (opdef.Def.Domain): a new op
// needs nothing written here.
func init() {
	for _, d := range opdef.Defs() {
		if d.Kind != opdef.Elementwise || !d.Differentiable() || d.Ref != nil || len(gradCases[d.Name]) > 0 {
			continue
		}
		in := make([]tensor.DType, d.Arity)
		for i := range in {
			in[i] = tensor.Float64
		}
		if _, err := d.DType(in, nil); err != nil {
			continue
		}
		draw := func(i int) func(*rand.Rand) float64 {
			iv := d.SampleDomain(i, tensor.Float64)
			if iv.Signed {
				return awayFromZero(iv.Lo, iv.Hi)
			}
			return uniform(iv.Lo, iv.Hi)
		}
		op := d.Op
		switch d.Arity {
		case 1:
			gradCases[d.Name] = unaryCases(func(x *graph.Node) *graph.Node { return ops.Apply(op, nil, x) }, draw(0))
		case 2:
			gradCases[d.Name] = binaryCases(func(a, b *graph.Node) *graph.Node { return ops.Apply(op, nil, a, b) }, draw(0), draw(1))
		}
	}
}

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
	for _, d := range opdef.Defs() {
		if d.Differentiable() && len(gradCases[d.Name])+len(controlGradCases[d.Name]) == 0 {
			missing = append(missing, d.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("differentiable ops without a finite-difference check: %v", missing)
	}
	// every override names a case (a misspelt one would silently fall
	// back to finite differences, or to the default step)
	cases := map[string]bool{}
	for _, m := range []map[string][]gradCase{gradCases, controlGradCases} {
		for name, cs := range m {
			for _, c := range cs {
				cases[name+"/"+c.name] = true
			}
		}
	}
	for k := range hand {
		if !cases[k] {
			t.Errorf("hand[%q] names no case", k)
		}
	}
	for k := range fdStep {
		if !cases[k] {
			t.Errorf("fdStep[%q] names no case", k)
		}
	}
}

// TestFiniteDifferences checks every gradient rule against central
// differences in float64 (or, for the cases in hand, against a hand
// calculation): for y = sum(f(xs) * R) with a fixed random R,
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
				gradCheck(t, be, c, uint64(oi*16+ci), fdStep[name+"/"+c.name], hand[name+"/"+c.name])
			})
		}
	}
}

func gradCheck(t *testing.T, be exec.Backend, c gradCase, seed uint64, step [2]float64, want handFunc) {
	gradCheckWith(t, backendRunner(be), c, seed, step, want)
}

// runner prepares outputs for evaluation: run evaluates them for feeds;
// done releases what prepare took.
type runner func(outputs []*graph.Node) (run func(exec.Feeds) ([]*tensor.Tensor, error), done func(), err error)

// backendRunner compiles the outputs for be (verifying after each pass).
func backendRunner(be exec.Backend) runner {
	return func(outputs []*graph.Node) (func(exec.Feeds) ([]*tensor.Tensor, error), func(), error) {
		prog, err := exec.Compile(be, outputs, exec.VerifyEachPass())
		if err != nil {
			return nil, nil, err
		}
		ctx := context.Background()
		return func(f exec.Feeds) ([]*tensor.Tensor, error) { return prog.Run(ctx, f) }, func() { prog.Close() }, nil
	}
}

func gradCheckWith(t *testing.T, prepare runner, c gradCase, seed uint64, step [2]float64, want handFunc) {
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
	run, done, err := prepare(append([]*graph.Node{y, f}, grads...))
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	out, err := run(feeds)
	if err != nil {
		t.Fatal(err)
	}
	if want != nil {
		x := make([][]float64, len(vals))
		for i := range vals {
			x[i], _ = tensor.Values[float64](vals[i])
		}
		wantF, wantG := want(x, weights)
		// Both sides are a few float64 operations (and exp, sin, cos within
		// a few ulp): 1e-12 relative.
		near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*(1+math.Abs(want)) }
		for k, v := range out[1].Float64s() {
			if !near(v, wantF[k]) {
				t.Errorf("f[%d] = %.15g, want %.15g (hand)", k, v, wantF[k])
			}
		}
		for i := range xs {
			for k, v := range out[2+i].Float64s() {
				if !near(v, wantG[i][k]) {
					t.Errorf("d y / d x%d[%d]: rule %.15g, hand %.15g", i, k, v, wantG[i][k])
				}
			}
		}
		return
	}
	h, tol := 1e-6, 1e-6
	if step[0] != 0 {
		h, tol = step[0], step[1]
	}
	for i := range xs {
		v, _ := tensor.Values[float64](vals[i])
		analytic := out[2+i].Float64s()
		for k := range v {
			orig := v[k]
			v[k] = orig + h
			plus, err := run(feeds)
			if err != nil {
				t.Fatal(err)
			}
			v[k] = orig - h
			minus, err := run(feeds)
			if err != nil {
				t.Fatal(err)
			}
			v[k] = orig
			numeric := (plus[0].Float64(0) - minus[0].Float64(0)) / (2 * h)
			if d := math.Abs(numeric - analytic[k]); d > tol*(1+math.Abs(numeric)) {
				t.Errorf("d y / d x%d[%d]: rule %.10g, finite differences %.10g", i, k, analytic[k], numeric)
			}
		}
	}
}

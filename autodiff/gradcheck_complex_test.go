package autodiff_test

import (
	"math/rand/v2"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The complex gradient checks (issue 16). TestFiniteDifferences feeds real
// float64 operands, so each case builds its complex values from pairs of
// them (z = Complex(x, y)) and ends in a real number that depends on both
// parts of the result (re(w) + 0.7 im(w)): the finite differences perturb
// every real and imaginary part of every complex operand separately, and
// the rules' cotangents (dL/dx + i dL/dy, docs/ARCHITECTURE.md "Complex
// numbers") must match them part by part, through Complex's rule (which
// splits the complex cotangent back into its parts).

// cz makes the k-th complex operand of a case from real operands 2k, 2k+1.
func cz(x []*graph.Node, k int) *graph.Node { return ops.Complex(x[2*k], x[2*k+1]) }

// cr is the real number a check reads of a complex result w: re(w) +
// 0.7 im(w), so that the cotangent entering w has both parts.
func cr(w *graph.Node) *graph.Node {
	if !w.DType().IsComplex() {
		return w
	}
	return ops.Add(ops.Real(w), ops.Mul(ops.Imag(w), ops.Scalar(ops.Imag(w), 0.7)))
}

// pairs is n complex operands of one shape: 2n real operands.
func pairs(n int, shape tensor.Shape, d func(*rand.Rand) float64) []operand {
	var out []operand
	for range 2 * n {
		out = append(out, operand{shape, d})
	}
	return out
}

func init() {
	u := uniform(-1.5, 1.5)
	unaryC := func(f func(z *graph.Node) *graph.Node, d func(*rand.Rand) float64) []gradCase {
		return []gradCase{
			{"matrix", pairs(1, tensor.Shape{2, 3}, d), func(x []*graph.Node) *graph.Node { return cr(f(cz(x, 0))) }},
			{"scalar", pairs(1, tensor.Shape{}, d), func(x []*graph.Node) *graph.Node { return cr(f(cz(x, 0))) }},
		}
	}
	binaryC := func(f func(a, b *graph.Node) *graph.Node, da, db func(*rand.Rand) float64) []gradCase {
		g := func(x []*graph.Node) *graph.Node { return cr(f(cz(x, 0), cz(x, 1))) }
		return []gradCase{
			{"same", []operand{{tensor.Shape{2, 3}, da}, {tensor.Shape{2, 3}, da}, {tensor.Shape{2, 3}, db}, {tensor.Shape{2, 3}, db}}, g},
			{"broadcast", []operand{{tensor.Shape{2, 3}, da}, {tensor.Shape{2, 3}, da}, {tensor.Shape{3}, db}, {tensor.Shape{3}, db}}, g},
		}
	}
	// The complex ops' own checks: Complex and Real/Imag take every other
	// check apart; these test them alone.
	gradCases["Complex"] = []gradCase{
		{"parts", pairs(1, tensor.Shape{2, 3}, u), func(x []*graph.Node) *graph.Node { return cr(cz(x, 0)) }},
		{"broadcast", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{3}, u}}, func(x []*graph.Node) *graph.Node { return cr(cz(x, 0)) }},
	}
	gradCases["Real"] = unaryC(func(z *graph.Node) *graph.Node { return ops.Real(ops.Mul(z, z)) }, u)
	gradCases["Imag"] = unaryC(func(z *graph.Node) *graph.Node { return ops.Imag(ops.Mul(z, z)) }, u)
	gradCases["Conj"] = binaryC(func(a, b *graph.Node) *graph.Node { return ops.Mul(ops.Conj(a), b) }, u, u)
	// Angle away from the origin and the branch cut (real part > 0).
	gradCases["Angle"] = []gradCase{
		{"right-half", []operand{{tensor.Shape{2, 3}, uniform(0.3, 2)}, {tensor.Shape{2, 3}, u}}, func(x []*graph.Node) *graph.Node { return ops.Angle(cz(x, 0)) }},
		{"upper-half", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, uniform(0.3, 2)}}, func(x []*graph.Node) *graph.Node { return ops.Angle(cz(x, 0)) }},
	}
	// The ops that admit complex as well as real operands.
	away := awayFromZero(0.3, 1.5)
	gradCases["complex/Add"] = binaryC(ops.Add, u, u)
	gradCases["complex/Sub"] = binaryC(ops.Sub, u, u)
	gradCases["complex/Mul"] = binaryC(ops.Mul, u, u)
	gradCases["complex/Div"] = binaryC(ops.Div, u, away)
	gradCases["complex/Neg"] = unaryC(ops.Neg, u)
	gradCases["complex/Abs"] = unaryC(ops.Abs, away)
	gradCases["complex/Exp"] = unaryC(ops.Exp, u)
	gradCases["complex/Log"] = unaryC(ops.Log, away)
	gradCases["complex/Sqrt"] = unaryC(ops.Sqrt, away)
	gradCases["complex/Square"] = unaryC(ops.Square, u)
	gradCases["complex/Sum"] = unaryC(func(z *graph.Node) *graph.Node { return ops.Sum(ops.Mul(z, z), 1) }, u)[:1]
	gradCases["complex/Mean"] = unaryC(func(z *graph.Node) *graph.Node { return ops.Mean(ops.Mul(z, z)) }, u)
	gradCases["complex/Prod"] = unaryC(func(z *graph.Node) *graph.Node { return ops.Prod(z, 1) }, away)[:1]
	gradCases["complex/Where"] = binaryC(func(a, b *graph.Node) *graph.Node {
		return ops.Where(ops.Greater(ops.Real(a), ops.Real(b)), ops.Mul(a, b), ops.Exp(b))
	}, u, u)
	gradCases["complex/MatMul"] = []gradCase{
		{"2d", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}, {tensor.Shape{3, 4}, u}, {tensor.Shape{3, 4}, u}},
			func(x []*graph.Node) *graph.Node { return cr(ops.MatMul(cz(x, 0), cz(x, 1))) }},
		{"transposed", []operand{{tensor.Shape{3, 2}, u}, {tensor.Shape{3, 2}, u}, {tensor.Shape{4, 3}, u}, {tensor.Shape{4, 3}, u}},
			func(x []*graph.Node) *graph.Node { return cr(ops.MatMulT(cz(x, 0), cz(x, 1), true, true)) }},
		{"batch-broadcast", []operand{{tensor.Shape{2, 2, 3}, u}, {tensor.Shape{2, 2, 3}, u}, {tensor.Shape{3, 2}, u}, {tensor.Shape{3, 2}, u}},
			func(x []*graph.Node) *graph.Node { return cr(ops.MatMul(cz(x, 0), cz(x, 1))) }},
	}
	// A real operand promoted to complex gets the real part of its
	// cotangent: x real, z complex, y = x*z.
	gradCases["complex/promote"] = []gradCase{
		{"real-times-complex", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}},
			func(x []*graph.Node) *graph.Node { return cr(ops.Mul(x[0], ops.Complex(x[1], x[2]))) }},
		{"cast", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}},
			func(x []*graph.Node) *graph.Node {
				return cr(ops.Mul(ops.Cast(x[0], tensor.Complex128), ops.Complex(x[1], x[0])))
			}},
		{"cast-to-real", pairs(1, tensor.Shape{2, 3}, u),
			func(x []*graph.Node) *graph.Node { return ops.Cast(ops.Mul(cz(x, 0), cz(x, 0)), tensor.Float64) }},
		{"complex64", pairs(1, tensor.Shape{2, 2}, u),
			func(x []*graph.Node) *graph.Node {
				z := ops.Cast(cz(x, 0), tensor.Complex64)
				return ops.Cast(cr(ops.Mul(z, z)), tensor.Float64)
			}},
	}
}

package autodiff_test

import (
	"context"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
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
	gradCases["complex/Reciprocal"] = unaryC(ops.Reciprocal, away)
	// Pow away from a = 0 and the negative real axis (log's branch cut).
	gradCases["complex/Pow"] = []gradCase{{"right-half", []operand{{tensor.Shape{2, 3}, uniform(0.4, 1.5)}, {tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}, {tensor.Shape{2, 3}, u}},
		func(x []*graph.Node) *graph.Node { return cr(ops.Pow(cz(x, 0), cz(x, 1))) }}}
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

// TestGradOfComplexInput: Grad with respect to a complex input returns
// dL/dx + i dL/dy. L = sum |z|² = sum x² + y² gives 2x + 2iy = 2z, and
// L = sum re(c·z) = sum (a x - b y) for c = a+ib gives a - ib = conj(c):
// by hand. A complex output cannot be differentiated.
func TestGradOfComplexInput(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	z := g.Input("z", tensor.Complex128, 3)
	c := ops.ComplexScalar(z, 2-3i)
	abs := ops.Abs(z)
	l1 := ops.Sum(ops.Mul(abs, abs))
	l2 := ops.Sum(ops.Real(ops.Mul(c, z)))
	grads := append(autodiff.Grad(l1, z), autodiff.Grad(l2, z)...)
	g2 := graph.New() // a graph of its own: build errors are sticky
	z2 := g2.Input("z", tensor.Complex128, 3)
	if bad := autodiff.Grad(ops.Sum(z2), z2)[0]; bad.Valid() || g2.Err() == nil || !strings.Contains(g2.Err().Error(), "take ops.Real") {
		t.Errorf("Grad of a complex output: %v", g2.Err())
	}
	p, err := exec.Compile(be, grads)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	zv, _ := tensor.New([]complex128{1 + 2i, -0.5, 3i})
	out, err := p.Run(context.Background(), exec.Feeds{z: zv})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range zv.Complex128s() {
		if got := out[0].Complex128(i); cmplx.Abs(got-2*v) > 1e-12 {
			t.Errorf("d sum|z|^2 / dz[%d] = %v, want %v", i, got, 2*v)
		}
		if got := out[1].Complex128(i); got != 2+3i {
			t.Errorf("d sum re(c z) / dz[%d] = %v, want conj(c) = 2+3i", i, got)
		}
	}
}

package exectest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The complex numbers' cases (issue 16): a few per op and complex dtype,
// against the reference (exact complex128 arithmetic, rounded to
// complex64's parts after every op) and a few golden values from
// PyTorch 1.13.

var complexTypes = []tensor.DType{tensor.Complex64, tensor.Complex128}

// RandComplex returns a complex tensor whose real and imaginary parts are
// drawn uniformly from [lo, hi).
func RandComplex(dt tensor.DType, shape tensor.Shape, lo, hi float64, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0xc0471e))
	vals := make([]complex128, shape.Size())
	for i := range vals {
		vals[i] = complex(lo+(hi-lo)*r.Float64(), lo+(hi-lo)*r.Float64())
	}
	t, err := tensor.FromComplex128s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// ComplexTensor returns a tensor of dtype dt holding vals.
func ComplexTensor(dt tensor.DType, vals []complex128, shape ...int) *tensor.Tensor {
	t, err := tensor.FromComplex128s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

func complexCases() []Case {
	var cs []Case
	add := func(name string, build func(g *graph.Graph) ([]*graph.Node, exec.Feeds)) {
		cs = append(cs, Case{Name: name, Build: build})
	}
	for _, dt := range complexTypes {
		dt, s := dt, dt.Short()
		// Binary arithmetic: same shapes, and a row broadcast.
		for _, op := range []struct {
			name string
			f    func(a, b *graph.Node) *graph.Node
		}{{"Add", ops.Add}, {"Sub", ops.Sub}, {"Mul", ops.Mul}, {"Div", ops.Div}, {"Pow", ops.Pow}} {
			op := op
			for _, sh := range shapePairs[:2] {
				sh := sh
				add(fmt.Sprintf("complex/%s/%s/%s", op.name, sh.name, s), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, RandComplex(dt, sh.a, -2, 2, 1), RandComplex(dt, sh.b, 0.5, 2, 2))
					return []*graph.Node{op.f(ns[0], ns[1])}, feeds
				})
			}
		}
		// Unary ops on [-2, 2) parts (Log and Sqrt of all four quadrants).
		for _, op := range []struct {
			name string
			f    func(x *graph.Node) *graph.Node
		}{{"Neg", ops.Neg}, {"Abs", ops.Abs}, {"Exp", ops.Exp}, {"Log", ops.Log}, {"Sqrt", ops.Sqrt},
			{"Conj", ops.Conj}, {"Real", ops.Real}, {"Imag", ops.Imag}, {"Angle", ops.Angle}, {"StopGradient", ops.StopGradient}, {"Reciprocal", ops.Reciprocal}} {
			op := op
			add(fmt.Sprintf("complex/%s/%s", op.name, s), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, RandComplex(dt, tensor.Shape{3, 5}, -2, 2, 3))
				return []*graph.Node{op.f(ns[0])}, feeds
			})
		}
		// Comparisons: b equals a in its first row, differs in one part
		// (real, then imaginary) in the others.
		add("complex/Equal/"+s, func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			a := ComplexTensor(dt, []complex128{1 + 2i, -3i, 0.5, 1 + 2i, -3i, 0.5}, 2, 3)
			b := ComplexTensor(dt, []complex128{1 + 2i, -3i, 0.5, 2 + 2i, -3.5i, 0.5 + 1i}, 2, 3)
			ns, feeds := Inputs(g, a, b)
			return []*graph.Node{ops.Equal(ns[0], ns[1]), ops.NotEqual(ns[0], ns[1])}, feeds
		})
		add("complex/Where/"+s, func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, Rand(tensor.Bool, tensor.Shape{2, 3}, 0, 1, 4), RandComplex(dt, tensor.Shape{2, 3}, -2, 2, 5), RandComplex(dt, tensor.Shape{3}, -2, 2, 6))
			return []*graph.Node{ops.Where(ns[0], ns[1], ns[2])}, feeds
		})
		// Complex from its parts, with a row broadcast.
		add("complex/Complex/"+dt.RealDType().Short(), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, Rand(dt.RealDType(), tensor.Shape{2, 3}, -2, 2, 7), Rand(dt.RealDType(), tensor.Shape{3}, -2, 2, 8))
			return []*graph.Node{ops.Complex(ns[0], ns[1])}, feeds
		})
		// Casts to and from the complex types.
		for _, other := range []tensor.DType{tensor.Bool, tensor.Int32, tensor.Uint8, tensor.Float32, tensor.Float64, tensor.Float16} {
			other := other
			add(fmt.Sprintf("complex/Cast/%s-%s", s, other.Short()), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, RandComplex(dt, tensor.Shape{3, 4}, -300, 300, 9))
				return []*graph.Node{ops.Cast(ns[0], other)}, feeds
			})
			add(fmt.Sprintf("complex/Cast/%s-%s", other.Short(), s), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				lo, hi := clampTo(other, -300, 300)
				ns, feeds := Inputs(g, Rand(other, tensor.Shape{3, 4}, lo, hi, 10))
				return []*graph.Node{ops.Cast(ns[0], dt)}, feeds
			})
		}
		add("complex/Cast/c64-c128/"+s, func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			to := tensor.Complex64
			if dt == to {
				to = tensor.Complex128
			}
			ns, feeds := Inputs(g, RandComplex(dt, tensor.Shape{5}, -1e3, 1e3, 11))
			return []*graph.Node{ops.Cast(ns[0], to)}, feeds
		})
		// Reductions.
		add("complex/Sum/"+s, func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, RandComplex(dt, tensor.Shape{3, 4, 5}, -2, 2, 12))
			return []*graph.Node{ops.Sum(ns[0], 1), ops.Sum(ns[0]), ops.Mean(ns[0], 0, 2)}, feeds
		})
		add("complex/Prod/"+s, func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, RandComplex(dt, tensor.Shape{4, 3}, -1.2, 1.2, 13))
			return []*graph.Node{ops.Prod(ns[0], 0), ops.Prod(ns[0], 1)}, feeds
		})
		// Products: plain, transposed operands, broadcast batches, and
		// one large enough for the packed gemm's blocking.
		for _, c := range []struct {
			name   string
			a, b   tensor.Shape
			ta, tb bool
		}{
			{"2d", tensor.Shape{3, 4}, tensor.Shape{4, 5}, false, false},
			{"tA", tensor.Shape{4, 3}, tensor.Shape{4, 5}, true, false},
			{"tB", tensor.Shape{3, 4}, tensor.Shape{5, 4}, false, true},
			{"tAB", tensor.Shape{2, 4, 3}, tensor.Shape{5, 4}, true, true},
			{"batch", tensor.Shape{2, 1, 3, 4}, tensor.Shape{3, 4, 2}, false, false},
			{"vec", tensor.Shape{4}, tensor.Shape{4, 3}, false, false},
			{"large", tensor.Shape{40, 70}, tensor.Shape{70, 33}, false, false},
		} {
			c := c
			add(fmt.Sprintf("complex/MatMul/%s/%s", c.name, s), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, RandComplex(dt, c.a, -1, 1, 14), RandComplex(dt, c.b, -1, 1, 15))
				if c.a.Rank() == 1 {
					return []*graph.Node{ops.MatMul(ns[0], ns[1])}, feeds
				}
				return []*graph.Node{ops.MatMulT(ns[0], ns[1], c.ta, c.tb)}, feeds
			})
		}
		// Data movement (16-byte elements for complex128).
		add("complex/movement/"+s, func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, RandComplex(dt, tensor.Shape{2, 3}, -2, 2, 16), Tensor(tensor.Int64, []float64{2, 0, 1, 2}, 2, 2))
			x, idx := ns[0], ns[1]
			return []*graph.Node{
				ops.Reshape(x, 3, 2),
				ops.Transpose(x),
				ops.BroadcastTo(x, 2, 2, 3),
				ops.Slice(x, ops.All, ops.RS(2, 0, -2)),
				ops.Concat(0, x, x),
				ops.Pad(x, ops.PadWidth{Low: 1}, ops.PadWidth{High: 1, Interior: 1}),
				ops.Repeat(x, []int{2, 1, 3}, 1),
				ops.Gather(x, idx, 1),
				ops.TakeAlongAxis(x, idx, 1),
				ops.Scatter(x, idx, ops.Neg(ops.TakeAlongAxis(x, idx, 1)), 1),
			}, feeds
		})
	}
	// Golden values from PyTorch 1.13 (torch.complex128): a @ b, and
	// sqrt, log, angle, abs, exp of [-1, 3+4j, -2-1e-300j, 0].
	a := ComplexTensor(tensor.Complex128, []complex128{1 + 2i, -3 + 0.5i, 0.25 - 1i, 2}, 2, 2)
	b := ComplexTensor(tensor.Complex128, []complex128{2 - 1i, 1i, -1 + 1i, 0.5 + 0.5i}, 2, 2)
	cs = append(cs, Case{Name: "complex/golden/MatMul", Source: "PyTorch 1.13: a @ b",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, a, b)
			return []*graph.Node{ops.MatMul(ns[0], ns[1])}, feeds
		},
		Want: []*tensor.Tensor{ComplexTensor(tensor.Complex128, []complex128{6.5 - 0.5i, -3.75 - 0.25i, -2.5 - 0.25i, 2 + 1.25i}, 2, 2)}})
	z := ComplexTensor(tensor.Complex128, []complex128{-1, 3 + 4i, complex(-2, -1e-300), 0})
	pi := math.Pi
	cs = append(cs, Case{Name: "complex/golden/functions", Source: "PyTorch 1.13: torch.sqrt, log, angle, abs, exp",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, z)
			x := ns[0]
			return []*graph.Node{ops.Sqrt(x), ops.Log(x), ops.Angle(x), ops.Abs(x), ops.Exp(x)}, feeds
		},
		Want: []*tensor.Tensor{
			ComplexTensor(tensor.Complex128, []complex128{1i, 2 + 1i, complex(3.5355339059327376e-301, -1.4142135623730951), 0}),
			ComplexTensor(tensor.Complex128, []complex128{complex(0, pi), 1.6094379124341003 + 0.9272952180016122i, complex(0.6931471805599453, -pi), complex(math.Inf(-1), 0)}),
			Tensor(tensor.Float64, []float64{pi, 0.9272952180016122, -pi, 0}),
			Tensor(tensor.Float64, []float64{1, 5, 2, 0}),
			ComplexTensor(tensor.Complex128, []complex128{0.36787944117144233, -13.128783081462158 - 15.200784463067956i, complex(0.1353352832366127, -1.353352832366127e-301), 1}),
		}})
	// Complex to bool is z != 0, either part: NumPy 1.24's z.astype(bool)
	// of [0, 1j, 1, -0j, nan, -2.5-0.5j] gives [False, True, True, False,
	// True, True]. (PyTorch 1.13's z.to(torch.bool) gives False for 1j: it
	// drops the imaginary part with a warning, as for any real dtype; loom
	// follows NumPy and the truth value of a Python complex.)
	zb := ComplexTensor(tensor.Complex64, []complex128{0, 1i, 1, complex(0, math.Copysign(0, -1)), complex(math.NaN(), 0), -2.5 - 0.5i})
	cs = append(cs, Case{Name: "complex/golden/CastBool", Source: "NumPy 1.24: z.astype(bool)",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, zb)
			return []*graph.Node{ops.Cast(ns[0], tensor.Bool), ops.Cast(ops.Cast(ns[0], tensor.Complex128), tensor.Bool)}, feeds
		},
		Want: []*tensor.Tensor{Tensor(tensor.Bool, []float64{0, 1, 1, 0, 1, 1}), Tensor(tensor.Bool, []float64{0, 1, 1, 0, 1, 1})}})
	return cs
}

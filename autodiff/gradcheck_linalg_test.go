package autodiff_test

import (
	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the linear-algebra ops (ops/linalg.go).
// Operands are made well conditioned (x + 3I), symmetric positive
// definite (x·xᵀ + 3I: Cholesky, whose gradient is the symmetric one, so
// it is checked through a symmetric parametrisation) or symmetric (x + xᵀ:
// Eigh, whose eigenvalues are then distinct almost surely, as a random
// matrix's singular values are). The decompositions' outputs are checked
// together, flattened and concatenated, so every cotangent flows.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	u := uniform(-1, 1)
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	well := func(x *graph.Node) *graph.Node {
		n := x.Shape()[x.Rank()-1]
		return ops.Add(x, ops.Mul(ops.Eye(x.Graph(), x.DType(), n, n, 0), ops.Scalar(x, 3)))
	}
	spd := func(x *graph.Node) *graph.Node { return well(ops.MatMulT(x, x, false, true)) }
	flat := func(xs ...*graph.Node) *graph.Node {
		parts := make([]*graph.Node, len(xs))
		for i, x := range xs {
			parts[i] = ops.Reshape(x, x.Shape().Size())
		}
		return ops.Concat(0, parts...)
	}
	two := func(a, b tensor.Shape) []operand { return []operand{{a, u}, {b, u}} }
	add("Cholesky",
		gradCase{"spd", op1(s(4, 4), u), func(x []*graph.Node) *graph.Node { return ops.Cholesky(spd(x[0])) }},
		gradCase{"batch", op1(s(2, 3, 3), u), func(x []*graph.Node) *graph.Node { return ops.Cholesky(spd(x[0])) }},
	)
	add("TriangularSolve",
		gradCase{"lower", two(s(4, 4), s(4, 2)), func(x []*graph.Node) *graph.Node {
			return ops.TriangularSolve(well(x[0]), x[1], ops.Triangular{})
		}},
		gradCase{"upper-transpose-unit-broadcast", two(s(2, 3, 3), s(3, 2)), func(x []*graph.Node) *graph.Node {
			return ops.TriangularSolve(well(x[0]), x[1], ops.Triangular{Upper: true, Transpose: true, UnitDiagonal: true})
		}},
	)
	add("Solve",
		gradCase{"matrix", two(s(4, 4), s(4, 3)), func(x []*graph.Node) *graph.Node { return ops.Solve(well(x[0]), x[1]) }},
		gradCase{"broadcast-vector", two(s(3, 3), s(2, 3, 1)), func(x []*graph.Node) *graph.Node { return ops.Solve(well(x[0]), x[1]) }},
	)
	add("Inv", gradCase{"batch", op1(s(2, 3, 3), u), func(x []*graph.Node) *graph.Node { return ops.Inv(well(x[0])) }})
	add("Det", gradCase{"batch", op1(s(2, 3, 3), u), func(x []*graph.Node) *graph.Node { return ops.Det(well(x[0])) }})
	add("SLogDet", gradCase{"sign-times-log", op1(s(2, 3, 3), u), func(x []*graph.Node) *graph.Node {
		sg, l := ops.SLogDet(ops.Sub(x[0], ops.Mul(ops.Eye(x[0].Graph(), tensor.Float64, 3, 3, 0), ops.Scalar(x[0], 2))))
		return ops.Mul(sg, l)
	}})
	qr := func(x []*graph.Node) *graph.Node { q, r := ops.QR(x[0]); return flat(q, r) }
	add("QR",
		gradCase{"tall", op1(s(5, 3), u), qr},
		gradCase{"square-batch", op1(s(2, 3, 3), u), qr},
		gradCase{"wide", op1(s(3, 5), u), qr},
	)
	add("Eigh", gradCase{"symmetric", op1(s(4, 4), u), func(x []*graph.Node) *graph.Node {
		w, v := ops.Eigh(ops.Add(x[0], ops.Transpose(x[0], 1, 0)))
		return flat(w, v)
	}})
	svd := func(x []*graph.Node) *graph.Node { a, b, c := ops.SVD(x[0]); return flat(a, b, c) }
	add("SVD",
		gradCase{"tall", op1(s(5, 3), u), svd},
		gradCase{"wide", op1(s(3, 4), u), svd},
	)
	add("LstSq",
		gradCase{"overdetermined", two(s(5, 3), s(5, 2)), func(x []*graph.Node) *graph.Node { return ops.LstSq(x[0], x[1]) }},
		gradCase{"underdetermined", two(s(2, 4), s(2, 1)), func(x []*graph.Node) *graph.Node { return ops.LstSq(x[0], x[1]) }},
	)
	// Second order: the gradient rules are built from these ops, so their
	// gradients are checked by finite differences in turn (f is the
	// gradient of Σ op(x)/c for fixed weights c = 1, 2, 3, ...).
	grad := func(f func(x []*graph.Node) *graph.Node) func(x []*graph.Node) *graph.Node {
		return func(x []*graph.Node) *graph.Node {
			y := f(x)
			if y.Rank() == 0 {
				y = ops.Reshape(y, 1)
			}
			c := ops.Add(ops.Cast(ops.Iota(y.Graph(), tensor.Int64, y.Rank()-1, y.Shape()...), tensor.Float64), ops.Scalar(y, 1))
			return autodiff.Grad(ops.Sum(ops.Mul(y, ops.Reciprocal(c))), x[0])[0]
		}
	}
	add("Solve", gradCase{"second-order", two(s(3, 3), s(3, 2)), grad(func(x []*graph.Node) *graph.Node { return ops.Solve(well(x[0]), x[1]) })})
	add("Cholesky", gradCase{"second-order", op1(s(3, 3), u), grad(func(x []*graph.Node) *graph.Node { return ops.Cholesky(spd(x[0])) })})
	add("QR", gradCase{"second-order", op1(s(4, 3), u), grad(qr)})
	add("SVD", gradCase{"second-order", op1(s(3, 3), u), grad(svd)})
	add("Det", gradCase{"second-order", op1(s(3, 3), u), grad(func(x []*graph.Node) *graph.Node { return ops.Det(well(x[0])) })})
	add("LstSq", gradCase{"second-order", two(s(4, 2), s(4, 1)), grad(func(x []*graph.Node) *graph.Node { return ops.LstSq(x[0], x[1]) })})
}

package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Linear algebra on the last two axes, batched over the leading ones:
// Cholesky, TriangularSolve, Solve, Inv, Det, SLogDet, QR, Eigh, SVD and
// LstSq, for float32 and float64 (float32 is computed in float64 and
// rounded, on the CPU). A decomposition is one op whose result packs its
// outputs (the layouts and the sign conventions of QR, Eigh and SVD are
// documented in internal/opdef/linalg.go); the builders slice it, so one
// factorisation serves all its outputs.
//
// Errors, as NumPy's numpy.linalg where it raises LinAlgError: an exactly
// singular matrix in Solve, Inv or TriangularSolve (a zero pivot, a zero
// diagonal element) and a matrix that is not positive definite in
// Cholesky are run errors naming the op, the matrix of the batch and the
// call site (exec.ErrSingular, exec.ErrNotPositiveDefinite). Det of a
// singular matrix is 0 and SLogDet gives sign 0 and log|det| -Inf, as
// NumPy; QR, Eigh, SVD and LstSq take any finite input (LstSq gives the
// minimum-norm solution of a rank-deficient system). NaN or Inf: Solve,
// Inv, Det, SLogDet, TriangularSolve and QR give NaN (SLogDet (±1, NaN),
// as NumPy), Cholesky reports a matrix not positive definite (a NaN
// pivot, as LAPACK's potrf), and Eigh, SVD and LstSq fail the run with
// "the iteration did not converge" (NumPy raises LinAlgError("SVD did not
// converge") for svd; its eigh may return NaN instead).
//
// Gradients (written with these builders, so they differentiate again):
// Solve, Inv, Det and SLogDet as in Giles 2008 ("Collected matrix
// derivative results for forward and reverse mode AD"); Cholesky as in
// Murray 2016 ("Differentiation of the Cholesky decomposition"); QR as in
// Walter & Lehmann 2018 and Liao et al. 2019 (the wide case); Eigh and SVD
// the usual formulas (Giles 2008; Townsend 2016, "Differentiating the
// singular value decomposition"), which divide by differences of
// eigenvalues or squared singular values: with repeated ones the
// gradient is Inf or NaN unless the loss does not depend on the choice
// of vectors (as in PyTorch and JAX); LstSq the derivative of the
// pseudo-inverse (Golub & Pereyra 1973), valid where the rank does not
// change. Cholesky and Eigh read only the lower triangle of their operand,
// but their gradients are the symmetric ones (the operand is taken as a
// symmetric matrix), as PyTorch's and JAX's; Det and SLogDet have no
// gradient at a singular matrix.

// Op codes of the linear-algebra ops.
var OpCholesky, OpTriangularSolve, OpSolve, OpInv, OpDet, OpSLogDet, OpQR, OpEigh, OpSVD, OpLstSq graph.Op

// Triangular describes TriangularSolve's matrix: lower unless Upper,
// transposed in the product when Transpose, and with an implicit unit
// diagonal (not read) when UnitDiagonal.
type Triangular = opdef.TriangularAttr

func init() {
	la := func(d *opdef.Def) graph.Op {
		d.Kind = opdef.Linalg
		if d.DType == nil {
			d.DType = sameDType(floats)
		}
		// Well-conditioned operands for the generated tests.
		if d.Domain == nil {
			d.Domain = []opdef.Interval{{Lo: -1, Hi: 1}}
		}
		return define(d)
	}
	OpCholesky = la(&opdef.Def{Name: "Cholesky", Doc: "the lower Cholesky factor L of a symmetric positive-definite matrix (A = L·Lᵀ, lower triangle read); batched",
		Arity: 1, Shape: shSquare("Cholesky", false), Ref: nonEmpty(refCholesky), Grad: gradCholesky,
		Cost: cubeCost(1.0 / 3)})
	OpTriangularSolve = la(&opdef.Def{Name: "TriangularSolve", Doc: "X with op(A)·X = B for triangular A (TriangularAttr: lower or upper, transposed, unit diagonal); batch dims broadcast",
		Arity: 2, Shape: shSolve, Ref: nonEmpty(refTriangularSolve), Grad: gradTriangularSolve,
		Cost: func(n *graph.Node) float64 { return solveCost(n, 0) }})
	OpSolve = la(&opdef.Def{Name: "Solve", Doc: "X with A·X = B (LU with partial pivoting); a singular A is a run error; batch dims broadcast",
		Arity: 2, Shape: shSolve, Ref: nonEmpty(refSolve), Grad: gradSolve,
		Cost: func(n *graph.Node) float64 { return solveCost(n, 2.0/3) }})
	OpInv = la(&opdef.Def{Name: "Inv", Doc: "the inverse of a square matrix; a singular one is a run error; batched",
		Arity: 1, Shape: shSquare("Inv", false), Ref: nonEmpty(refInv), Grad: gradInv, Cost: cubeCost(2)})
	OpDet = la(&opdef.Def{Name: "Det", Doc: "the determinant of a square matrix (0 when singular); batched",
		Arity: 1, Shape: shDet(0), Ref: refDet, Grad: gradDet, Cost: cubeCost(2.0 / 3)})
	OpSLogDet = la(&opdef.Def{Name: "SLogDet", Doc: "packed [..., 2]: the sign of the determinant and log|det| (0 and -Inf when singular); batched",
		Arity: 1, Shape: shDet(2), Ref: refDet, Grad: gradSLogDet, Cost: cubeCost(2.0 / 3)})
	OpQR = la(&opdef.Def{Name: "QR", Doc: "packed [..., m+k, n]: the reduced QR factorisation, Q (m×k) above R (k×n, diagonal >= 0); batched",
		Arity: 1, Shape: shQR, Ref: nonEmpty(refQR), Grad: gradQR, Cost: cubeCost(4.0 / 3)})
	OpEigh = la(&opdef.Def{Name: "Eigh", Doc: "packed [..., n+1, n]: the ascending eigenvalues above the eigenvectors (columns) of a symmetric matrix (lower triangle read); batched",
		Arity: 1, Shape: shEigh, Ref: nonEmpty(refEigh), Grad: gradEigh, Cost: cubeCost(9)})
	OpSVD = la(&opdef.Def{Name: "SVD", Doc: "packed [..., m+1+k, n]: the reduced SVD, U (m×k), the descending singular values, Vh (k×n); batched",
		Arity: 1, Shape: shSVD, Ref: nonEmpty(refSVD), Grad: gradSVD, Cost: cubeCost(12)})
	OpLstSq = la(&opdef.Def{Name: "LstSq", Doc: "the minimum-norm least-squares X of A·X ≈ B (SVD, NumPy's rcond); batch dims broadcast",
		Arity: 2, Shape: shLstSq, Ref: nonEmpty(refLstSq), Grad: gradLstSq, Cost: cubeCost(12)})
}

// ---- rules ----

// matOf checks that s has rank >= 2 and returns its batch dims and matrix
// size.
func matOf(what string, s tensor.Shape) (tensor.Shape, int, int, error) {
	if len(s) < 2 {
		return nil, 0, 0, shapeErr("%s needs at least 2 axes (a matrix, or a batch of them), got rank %d", what, len(s))
	}
	return s[:len(s)-2], s[len(s)-2], s[len(s)-1], nil
}

// shSquare: one square matrix (batched) to the same shape.
func shSquare(op string, _ bool) opdef.ShapeRule {
	return func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		if attr != nil {
			return nil, argErr("takes no attribute, got %T", attr)
		}
		_, m, n, err := matOf("the operand", in[0])
		if err != nil {
			return nil, err
		}
		if m != n {
			return nil, shapeErr("needs square matrices, got %d×%d", m, n)
		}
		return in[0].Clone(), nil
	}
}

// shDet: square matrices to their batch shape, with a trailing axis of
// length extra when extra > 0 (SLogDet's pair).
func shDet(extra int) opdef.ShapeRule {
	return func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		s, err := shSquare("", false)(in, attr)
		if err != nil {
			return nil, err
		}
		out := s[:len(s)-2].Clone()
		if out == nil {
			out = tensor.Shape{}
		}
		if extra > 0 {
			out = append(out, extra)
		}
		return out, nil
	}
}

// shSolve: A [..., n, n] and B [..., n, k] to [..., n, k], the batch dims
// broadcast (TriangularSolve needs its TriangularAttr, Solve none).
func shSolve(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	switch attr.(type) {
	case nil, opdef.TriangularAttr:
	default:
		return nil, argErr("unexpected attribute %T", attr)
	}
	ab, m, n, err := matOf("the matrix A", in[0])
	if err != nil {
		return nil, err
	}
	if m != n {
		return nil, shapeErr("needs a square A, got %d×%d", m, n)
	}
	bb, bn, k, err := matOf("the right-hand side B", in[1])
	if err != nil {
		return nil, err
	}
	if bn != n {
		return nil, shapeErr("A is %d×%d but B has %d rows", n, n, bn)
	}
	batch, err := opdef.BroadcastShapes(ab, bb)
	if err != nil {
		return nil, shapeErr("batch dimensions %v and %v do not broadcast", ab, bb)
	}
	return append(batch, n, k), nil
}

func shLstSq(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if attr != nil {
		return nil, argErr("takes no attribute, got %T", attr)
	}
	ab, m, n, err := matOf("the matrix A", in[0])
	if err != nil {
		return nil, err
	}
	bb, bm, k, err := matOf("the right-hand side B", in[1])
	if err != nil {
		return nil, err
	}
	if bm != m {
		return nil, shapeErr("A is %d×%d but B has %d rows", m, n, bm)
	}
	batch, err := opdef.BroadcastShapes(ab, bb)
	if err != nil {
		return nil, shapeErr("batch dimensions %v and %v do not broadcast", ab, bb)
	}
	return append(batch, n, k), nil
}

func shQR(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if attr != nil {
		return nil, argErr("takes no attribute, got %T", attr)
	}
	b, m, n, err := matOf("the operand", in[0])
	if err != nil {
		return nil, err
	}
	return append(b.Clone(), m+min(m, n), n), nil
}

func shEigh(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	s, err := shSquare("", false)(in, attr)
	if err != nil {
		return nil, err
	}
	s[len(s)-2]++
	return s, nil
}

func shSVD(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if attr != nil {
		return nil, argErr("takes no attribute, got %T", attr)
	}
	b, m, n, err := matOf("the operand", in[0])
	if err != nil {
		return nil, err
	}
	return append(b.Clone(), m+1+min(m, n), n), nil
}

// cubeCost is c·n³ per matrix of the operand (n the larger side; m·n·k
// for a rectangular one: the cost of its factorisation's order).
func cubeCost(c float64) func(n *graph.Node) float64 {
	return func(n *graph.Node) float64 {
		if !n.Valid() || len(n.Inputs()) == 0 || n.Input(0).Rank() < 2 {
			return 0
		}
		s := n.Input(0).Shape()
		r, q := float64(s[len(s)-2]), float64(s[len(s)-1])
		batch := float64(max(s[:len(s)-2].Size(), 0))
		return c * batch * r * q * min(r, q)
	}
}

// solveCost is c·n³ for the factorisation plus 2·n²·k for the solves, per
// matrix of the result.
func solveCost(n *graph.Node, c float64) float64 {
	if !n.Valid() || n.Rank() < 2 {
		return 0
	}
	s := n.Shape()
	r, k := float64(s[len(s)-2]), float64(s[len(s)-1])
	batch := float64(max(s[:len(s)-2].Size(), 0))
	return batch * (c*r*r*r + 2*r*r*k)
}

// ---- builders ----

// Cholesky returns the lower-triangular factor L with A = L·Lᵀ of each
// symmetric positive-definite matrix in a's last two axes, as
// numpy.linalg.cholesky (and torch.linalg.cholesky): only the lower
// triangle of a is read. A matrix that is not positive definite is a run
// error wrapping exec.ErrNotPositiveDefinite. For the upper factor take
// the transpose of L.
func Cholesky(a *graph.Node) *graph.Node {
	if _, bad := graph.Operands("Cholesky", a); bad != nil {
		return bad
	}
	return Apply(OpCholesky, nil, a)
}

// TriangularSolve returns X with op(A)·X = B, A triangular (t.Upper, else
// lower; op(A) = Aᵀ when t.Transpose; a unit diagonal when
// t.UnitDiagonal), as scipy.linalg.solve_triangular(a, b, trans, lower,
// unit_diagonal) and torch.linalg.solve_triangular: only A's triangle is
// read. a is [..., n, n]; b is [..., n, k], or [n] for one vector (the
// result is then [n]). Batch dimensions broadcast. A zero on the diagonal
// is a run error wrapping exec.ErrSingular (SciPy's LinAlgError).
func TriangularSolve(a, b *graph.Node, t Triangular) *graph.Node {
	return solveLike("TriangularSolve", OpTriangularSolve, t, a, b)
}

// Solve returns X with A·X = B for square A, by LU factorisation with
// partial pivoting, as numpy.linalg.solve (NumPy 2's rule: b is a vector
// only when it is 1-D, giving a 1-D result; otherwise [..., n, k]). Batch
// dimensions broadcast as in NumPy. An exactly singular A (a zero pivot)
// is a run error wrapping exec.ErrSingular; a nearly singular one gives
// large values, as LAPACK's gesv.
func Solve(a, b *graph.Node) *graph.Node {
	return solveLike("Solve", OpSolve, nil, a, b)
}

// LstSq returns the minimum-norm least-squares solution X of A·X ≈ B, as
// numpy.linalg.lstsq(a, b, rcond=None)[0]: computed from the SVD of A,
// with singular values below eps·max(m, n)·σ_max (eps of the dtype)
// taken as zero. a is [..., m, n], b is [..., m, k] or [m]; the result is
// [..., n, k] or [n]. Batch dimensions broadcast (NumPy's lstsq takes no
// batch; torch.linalg.lstsq does). The residuals, rank and singular
// values NumPy also returns are one builder away (B - A·X, SVD).
func LstSq(a, b *graph.Node) *graph.Node {
	return solveLike("LstSq", OpLstSq, nil, a, b)
}

// solveLike builds op on a and b, b a matrix or (1-D) a vector.
func solveLike(name string, op graph.Op, attr graph.Attr, a, b *graph.Node) *graph.Node {
	if _, bad := graph.Operands(name, a, b); bad != nil {
		return bad
	}
	if b.Rank() == 1 {
		x := Apply(op, attr, a, ExpandDims(b, 1))
		if !x.Valid() {
			return x
		}
		if x.Rank() != 2 {
			return fail(graph.ErrShape, name, []*graph.Node{a, b}, "a vector right-hand side needs a single matrix (rank 2), got rank %d", a.Rank())
		}
		return Reshape(x, x.Shape()[0])
	}
	return Apply(op, attr, a, b)
}

// Inv returns the inverse of each square matrix, as numpy.linalg.inv. An
// exactly singular matrix is a run error wrapping exec.ErrSingular.
func Inv(a *graph.Node) *graph.Node {
	if _, bad := graph.Operands("Inv", a); bad != nil {
		return bad
	}
	return Apply(OpInv, nil, a)
}

// Det returns the determinant of each square matrix (shape a's batch
// dims), as numpy.linalg.det: from the LU factorisation, 0 for a singular
// matrix, 1 for a 0×0 one.
func Det(a *graph.Node) *graph.Node {
	if _, bad := graph.Operands("Det", a); bad != nil {
		return bad
	}
	return Apply(OpDet, nil, a)
}

// SLogDet returns the sign (-1, 0 or 1) and the natural log of the
// absolute value of the determinant of each square matrix, as
// numpy.linalg.slogdet: sign 0 and logabsdet -Inf for a singular matrix.
// Only logabsdet is differentiable (the sign's gradient is zero).
func SLogDet(a *graph.Node) (sign, logabsdet *graph.Node) {
	if _, bad := graph.Operands("SLogDet", a); bad != nil {
		return bad, bad
	}
	p := Apply(OpSLogDet, nil, a)
	if !p.Valid() {
		return p, p
	}
	return lastIndex(p, 0), lastIndex(p, 1)
}

// QR returns the reduced QR factorisation a = q·r of each m×n matrix, as
// numpy.linalg.qr(a, mode="reduced"): q is m×k with orthonormal columns,
// r is k×n upper triangular, k = min(m, n). r's diagonal is made
// non-negative (NumPy leaves LAPACK's signs: its q and r may differ from
// these in the sign of matching columns and rows).
func QR(a *graph.Node) (q, r *graph.Node) {
	if _, bad := graph.Operands("QR", a); bad != nil {
		return bad, bad
	}
	p := Apply(OpQR, nil, a)
	if !p.Valid() {
		return p, p
	}
	m, n := a.Shape()[a.Rank()-2], a.Shape()[a.Rank()-1]
	k := min(m, n)
	return matSlice(p, R(0, m), R(0, k)), matSlice(p, R(m, m+k), All)
}

// Eigh returns the eigenvalues w (ascending) and eigenvectors v (as
// columns: a·v[:, i] = w[i]·v[:, i]) of each symmetric matrix, as
// numpy.linalg.eigh(a, UPLO="L"): only the lower triangle is read. Each
// eigenvector is scaled so that its component of largest magnitude is
// positive (LAPACK leaves the sign free, so NumPy's may differ).
func Eigh(a *graph.Node) (w, v *graph.Node) {
	if _, bad := graph.Operands("Eigh", a); bad != nil {
		return bad, bad
	}
	p := Apply(OpEigh, nil, a)
	if !p.Valid() {
		return p, p
	}
	return lastIndexRow(p, 0), matSlice(p, R(1, End), All)
}

// SVD returns the reduced singular value decomposition a = u·diag(s)·vh
// of each m×n matrix, as numpy.linalg.svd(a, full_matrices=False): u is
// m×k, s the k singular values in descending order, vh k×n, k = min(m,
// n). In each column of u the component of largest magnitude is positive
// (the row of vh changes sign with it); LAPACK leaves these signs free,
// so NumPy's may differ.
func SVD(a *graph.Node) (u, s, vh *graph.Node) {
	if _, bad := graph.Operands("SVD", a); bad != nil {
		return bad, bad, bad
	}
	p := Apply(OpSVD, nil, a)
	if !p.Valid() {
		return p, p, p
	}
	m, n := a.Shape()[a.Rank()-2], a.Shape()[a.Rank()-1]
	k := min(m, n)
	srow := matSlice(p, R(m, m+1), R(0, k))
	return matSlice(p, R(0, m), R(0, k)), Squeeze(srow, srow.Rank()-2), matSlice(p, R(m+1, m+1+k), All)
}

// matSlice slices the last two axes of x.
func matSlice(x *graph.Node, rows, cols Range) *graph.Node {
	rs := make([]Range, x.Rank())
	for i := range rs {
		rs[i] = All
	}
	rs[x.Rank()-2], rs[x.Rank()-1] = rows, cols
	return Slice(x, rs...)
}

// lastIndex is x[..., i].
func lastIndex(x *graph.Node, i int) *graph.Node {
	rs := make([]Range, x.Rank())
	for j := range rs {
		rs[j] = All
	}
	rs[x.Rank()-1] = R(i, i+1)
	return Squeeze(Slice(x, rs...), x.Rank()-1)
}

// lastIndexRow is x[..., i, :].
func lastIndexRow(x *graph.Node, i int) *graph.Node {
	return Squeeze(matSlice(x, R(i, i+1), All), x.Rank()-2)
}

// mT swaps the last two axes.
func mT(x *graph.Node) *graph.Node {
	perm := make([]int, x.Rank())
	for i := range perm {
		perm[i] = i
	}
	r := x.Rank()
	perm[r-2], perm[r-1] = r-1, r-2
	return Transpose(x, perm...)
}

// ---- gradients ----

// eyeMask is the bool n×n identity.
func eyeMask(g *graph.Graph, n int) *graph.Node {
	return Equal(Iota(g, tensor.Int64, 0, n, n), Iota(g, tensor.Int64, 1, n, n))
}

// sym is (x + xᵀ)/2.
func sym(x *graph.Node) *graph.Node { return Mul(Add(x, mT(x)), Scalar(x, 0.5)) }

// batchOnes is x[..., None, None].
func batchOnes(x *graph.Node) *graph.Node { return ExpandDims(ExpandDims(x, x.Rank()), x.Rank()+1) }

// invDiffs is F with F[i,j] = 1/(v[j] - v[i]) off the diagonal and 0 on
// it, for v [..., n].
func invDiffs(v *graph.Node) *graph.Node {
	n := v.Shape()[v.Rank()-1]
	d := Sub(ExpandDims(v, v.Rank()-1), ExpandDims(v, v.Rank()))
	eye := eyeMask(v.Graph(), n)
	return Where(eye, Scalar(v, 0), Reciprocal(Where(eye, Scalar(v, 1), d)))
}

// gradCholesky is Murray 2016's rule: with Φ(X) the lower triangle of X
// with its diagonal halved, Ā = sym(L⁻ᵀ Φ(Lᵀ L̄) L⁻¹).
func gradCholesky(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		l := n
		lbar := Tril(dy, 0)
		p := MatMulT(l, lbar, true, false)
		p = Sub(Tril(p, 0), Mul(Tril(Triu(p, 0), 0), Scalar(p, 0.5)))
		lt := Triangular{Transpose: true}
		x := Apply(OpTriangularSolve, lt, l, p)         // L⁻ᵀ·P
		s := mT(Apply(OpTriangularSolve, lt, l, mT(x))) // (L⁻ᵀ·Xᵀ)ᵀ = X·L⁻¹
		return sym(s)
	})
}

// gradSolve: B̄ = A⁻ᵀ X̄, Ā = -B̄ Xᵀ (Giles 2008, 2.3.1), summed over
// broadcast batch dims.
func gradSolve(n, dy *graph.Node, need []bool) []*graph.Node {
	a, b := n.Input(0), n.Input(1)
	bbar := Apply(OpSolve, nil, mT(a), dy)
	return each(need,
		func() *graph.Node { return SumTo(Neg(MatMulT(bbar, n, false, true)), a.Shape()) },
		func() *graph.Node { return SumTo(bbar, b.Shape()) })
}

func gradTriangularSolve(n, dy *graph.Node, need []bool) []*graph.Node {
	a, b := n.Input(0), n.Input(1)
	t := n.Attr().(opdef.TriangularAttr)
	tt := t
	tt.Transpose = !t.Transpose
	bbar := Apply(OpTriangularSolve, tt, a, dy)
	return each(need,
		func() *graph.Node {
			var abar *graph.Node
			if t.Transpose {
				abar = Neg(MatMulT(n, bbar, false, true))
			} else {
				abar = Neg(MatMulT(bbar, n, false, true))
			}
			k := 0
			if t.UnitDiagonal {
				k = 1
			}
			if t.Upper {
				abar = Triu(abar, k)
			} else {
				abar = Tril(abar, -k)
			}
			return SumTo(abar, a.Shape())
		},
		func() *graph.Node { return SumTo(bbar, b.Shape()) })
}

// gradInv: Ā = -Yᵀ Ȳ Yᵀ.
func gradInv(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		return Neg(MatMulT(MatMulT(n, dy, true, false), n, false, true))
	})
}

// gradDet: Ā = ȳ·det(A)·A⁻ᵀ.
func gradDet(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		return Mul(batchOnes(Mul(dy, n)), mT(Inv(n.Input(0))))
	})
}

// gradSLogDet: Ā = ḡ·A⁻ᵀ for logabsdet's cotangent ḡ; the sign's is
// dropped.
func gradSLogDet(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		return Mul(batchOnes(lastIndex(dy, 1)), mT(Inv(n.Input(0))))
	})
}

// gradQR: for m >= n, Ā = (Q̄ + Q·copyltu(M))·R⁻ᵀ with M = R·R̄ᵀ - Q̄ᵀ·Q
// (copyltu copies the lower triangle onto the upper); for m < n, with
// A = [X | Y] and R = [U | V], Ȳ = Q·V̄ and X̄ is the square rule with Q̄
// + Y·V̄ᵀ (Liao et al. 2019).
func gradQR(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		a := n.Input(0)
		m, c := a.Shape()[a.Rank()-2], a.Shape()[a.Rank()-1]
		k := min(m, c)
		q, r := matSlice(n, R(0, m), R(0, k)), matSlice(n, R(m, m+k), All)
		qbar, rbar := matSlice(dy, R(0, m), R(0, k)), Triu(matSlice(dy, R(m, m+k), All), 0)
		if m >= c {
			return qrGradSquare(q, r, qbar, rbar)
		}
		u := matSlice(r, All, R(0, k))
		ubar, vbar := matSlice(rbar, All, R(0, k)), matSlice(rbar, All, R(k, End))
		y := matSlice(a, All, R(k, End))
		xbar := qrGradSquare(q, u, Add(qbar, MatMulT(y, vbar, false, true)), ubar)
		return Concat(a.Rank()-1, xbar, MatMul(q, vbar))
	})
}

// qrGradSquare is the rule for a tall or square QR (r k×k).
func qrGradSquare(q, r, qbar, rbar *graph.Node) *graph.Node {
	mm := Sub(MatMulT(r, rbar, false, true), MatMulT(qbar, q, true, false))
	cl := Add(Tril(mm, 0), mT(Tril(mm, -1)))
	b := Add(qbar, MatMul(q, cl))
	// B·R⁻ᵀ = (R⁻¹·Bᵀ)ᵀ
	return mT(Apply(OpTriangularSolve, Triangular{Upper: true}, r, mT(b)))
}

// gradEigh: Ā = sym(V·(diag(w̄) + F∘(Vᵀ·V̄))·Vᵀ), F[i,j] = 1/(w[j] - w[i]).
func gradEigh(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		w, v := lastIndexRow(n, 0), matSlice(n, R(1, End), All)
		wbar, vbar := lastIndexRow(dy, 0), matSlice(dy, R(1, End), All)
		nn := w.Shape()[w.Rank()-1]
		inner := Mul(invDiffs(w), MatMulT(v, vbar, true, false))
		inner = Add(inner, Mul(ExpandDims(wbar, wbar.Rank()-1), Cast(eyeMask(n.Graph(), nn), n.DType())))
		return sym(MatMulT(MatMul(v, inner), v, false, true))
	})
}

// gradSVD is Townsend 2016's rule for the reduced SVD:
// Ā = U·[(F∘(UᵀŪ - ŪᵀU))·S + diag(s̄) + S·(F∘(VᵀV̄ - V̄ᵀV))]·Vᵀ
// + (I - UUᵀ)·Ū·S⁻¹·Vᵀ + U·S⁻¹·V̄ᵀ·(I - VVᵀ), F[i,j] = 1/(s[j]² - s[i]²).
func gradSVD(n, dy *graph.Node, need []bool) []*graph.Node {
	return each(need, func() *graph.Node {
		a := n.Input(0)
		m, c := a.Shape()[a.Rank()-2], a.Shape()[a.Rank()-1]
		k := min(m, c)
		u, vh := matSlice(n, R(0, m), R(0, k)), matSlice(n, R(m+1, m+1+k), All)
		s := lastIndexRow(matSlice(n, R(m, m+1), R(0, k)), 0)
		ubar, vhbar := matSlice(dy, R(0, m), R(0, k)), matSlice(dy, R(m+1, m+1+k), All)
		sbar := lastIndexRow(matSlice(dy, R(m, m+1), R(0, k)), 0)
		v, vbar := mT(vh), mT(vhbar)
		f := invDiffs(Mul(s, s))
		row := func(x *graph.Node) *graph.Node { return ExpandDims(x, x.Rank()-1) } // [..., 1, k]: scales columns
		col := func(x *graph.Node) *graph.Node { return ExpandDims(x, x.Rank()) }   // [..., k, 1]: scales rows
		utub := MatMulT(u, ubar, true, false)
		vtvb := MatMulT(v, vbar, true, false)
		j := Mul(Mul(f, Sub(utub, mT(utub))), row(s))
		kk := Mul(col(s), Mul(f, Sub(vtvb, mT(vtvb))))
		d := Mul(row(sbar), Cast(eyeMask(n.Graph(), k), n.DType()))
		core := MatMul(MatMul(u, Add(Add(j, d), kk)), vh)
		sinv := Reciprocal(s)
		left := MatMul(Mul(Sub(ubar, MatMul(u, utub)), row(sinv)), vh)       // (I - UUᵀ)Ū S⁻¹ Vᵀ
		right := MatMul(Mul(u, row(sinv)), Sub(vhbar, MatMul(mT(vtvb), vh))) // U S⁻¹ (V̄ᵀ - V̄ᵀV Vᵀ)
		return Add(core, Add(left, right))
	})
}

// gradLstSq differentiates X = A⁺·B (Golub & Pereyra 1973): with z =
// A⁺ᵀ·X̄, r = B - A·X, w = A⁺·z, z2 = A⁺ᵀ·X and p = (I - A⁺A)·X̄,
// B̄ = z and Ā = -z·Xᵀ + r·wᵀ + z2·pᵀ. Each pseudo-inverse product is an
// LstSq, so the rule differentiates again.
func gradLstSq(n, dy *graph.Node, need []bool) []*graph.Node {
	a, b := n.Input(0), n.Input(1)
	z := Apply(OpLstSq, nil, mT(a), dy)
	return each(need,
		func() *graph.Node {
			r := Sub(b, MatMul(a, n))
			w := Apply(OpLstSq, nil, a, z)
			z2 := Apply(OpLstSq, nil, mT(a), n)
			p := Sub(dy, Apply(OpLstSq, nil, a, MatMul(a, dy)))
			abar := Add(Neg(MatMulT(z, n, false, true)), Add(MatMulT(r, w, false, true), MatMulT(z2, p, false, true)))
			return SumTo(abar, a.Shape())
		},
		func() *graph.Node { return SumTo(z, b.Shape()) })
}

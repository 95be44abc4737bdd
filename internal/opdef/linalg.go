package opdef

import (
	"errors"
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The linear-algebra ops (ops/linalg.go) work on the last two axes of
// their operands, batched over the leading ones. The IR has no
// multi-output ops, so a decomposition is one op whose result packs its
// outputs in one array (the layouts below, shared by every backend), and
// the builders slice it: common-subexpression elimination then keeps one
// factorisation however many of its outputs are used.
//
// Packed layouts, per matrix of the batch (k = min(m, n)):
//
//   - SLogDet, [..., 2]: element 0 the sign (-1, 0 or 1), element 1
//     log|det| (-Inf for a singular matrix).
//   - QR of an m×n matrix, [..., m+k, n]: rows 0..m-1, columns 0..k-1
//     hold Q (m×k, orthonormal columns); rows m..m+k-1 hold R (k×n,
//     upper triangular, diagonal >= 0); the rest is zero.
//   - Eigh of an n×n matrix, [..., n+1, n]: row 0 holds the eigenvalues
//     in ascending order, rows 1..n the eigenvectors as columns (V, n×n).
//   - SVD of an m×n matrix, [..., m+1+k, n]: rows 0..m-1, columns 0..k-1
//     hold U (m×k); row m, columns 0..k-1, the singular values in
//     descending order; rows m+1..m+k hold Vh (k×n); the rest is zero.
//
// Sign conventions, so that every backend gives the same factors:
//   - QR: R's diagonal is non-negative (where a Householder step gives a
//     negative R[i,i], row i of R and column i of Q are negated). LAPACK
//     (and so NumPy) leaves the signs its reflectors give, which may
//     differ; the factorisation of a full-rank matrix with this rule is
//     unique.
//   - Eigh: in each eigenvector the component of largest magnitude (the
//     first of equal ones) is positive.
//   - SVD: in each column of U the component of largest magnitude (the
//     first of equal ones) is positive; the row of Vh is negated with it.
//     LAPACK normalises neither, so NumPy's vectors may differ by sign.

// ErrSingular is wrapped by the run errors of Solve, Inv and
// TriangularSolve for an exactly singular matrix (a zero pivot of the LU
// factorisation, a zero diagonal element of a triangular matrix), as
// NumPy raises LinAlgError("Singular matrix"). exec re-exports it.
var ErrSingular = errors.New("singular matrix")

// ErrNotPositiveDefinite is wrapped by Cholesky's run error for a matrix
// that is not (numerically) positive definite: a pivot <= 0 or NaN, as
// LAPACK's potrf reports and NumPy raises LinAlgError. exec re-exports
// it.
var ErrNotPositiveDefinite = errors.New("matrix is not positive definite")

// SingularError is the error of op for matrix number batch (row-major
// over the batch dimensions) whose pivot or diagonal element col is zero:
// the same words on every backend.
func SingularError(op string, batch, col int) error {
	return fmt.Errorf("%s: %w: matrix %d of the batch has a zero pivot at column %d", op, ErrSingular, batch, col)
}

// NotPositiveDefiniteError is Cholesky's error for matrix number batch
// whose leading minor of order col+1 is not positive.
func NotPositiveDefiniteError(op string, batch, col int) error {
	return fmt.Errorf("%s: %w: matrix %d of the batch, leading minor of order %d", op, ErrNotPositiveDefinite, batch, col+1)
}

// TriangularAttr is the attribute of TriangularSolve, which solves
// op(A)·X = B for X with A triangular: lower unless Upper, op(A) = Aᵀ when
// Transpose, and A's diagonal taken as ones (not read) when
// UnitDiagonal. Only A's triangle is read.
type TriangularAttr struct {
	Upper, Transpose, UnitDiagonal bool
}

func (a TriangularAttr) String() string {
	s := "lower"
	if a.Upper {
		s = "upper"
	}
	if a.Transpose {
		s += " transpose"
	}
	if a.UnitDiagonal {
		s += " unit"
	}
	return s
}

// EqualAttr compares by value.
func (a TriangularAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(TriangularAttr)
	return ok && a == c
}

// BatchOffsets returns, for each matrix of the batch shape batch (in
// row-major order), the element offset of the matching matrix of an
// operand of shape s (its last two axes the matrix, its leading ones
// broadcasting to batch as NumPy's do: missing or size-1 dims repeat).
// The linear-algebra ops with two operands (Solve, TriangularSolve,
// LstSq) broadcast their batch dimensions with it.
func BatchOffsets(batch, s tensor.Shape) []int {
	nb := max(batch.Size(), 0)
	out := make([]int, nb)
	if len(s) < 2 || nb == 0 {
		return out
	}
	mat := s[len(s)-2] * s[len(s)-1]
	bdims := s[:len(s)-2]
	st := make([]int, len(batch))
	acc := mat
	for i := len(bdims) - 1; i >= 0; i-- {
		j := len(batch) - len(bdims) + i
		if j >= 0 && bdims[i] == batch[j] && bdims[i] != 1 {
			st[j] = acc
		}
		acc *= bdims[i]
	}
	for i := range nb {
		q := i
		for d := len(batch) - 1; d >= 0; d-- {
			out[i] += (q % batch[d]) * st[d]
			q /= batch[d]
		}
	}
	return out
}

// LstSqCutoff is the relative threshold below which LstSq takes a
// singular value as zero: NumPy's default rcond, eps·max(m, n), eps of
// the dtype.
func LstSqCutoff(dt tensor.DType, m, n int) float64 {
	eps := 0x1p-52
	if dt == tensor.Float32 {
		eps = 0x1p-23
	}
	return eps * float64(max(m, n))
}

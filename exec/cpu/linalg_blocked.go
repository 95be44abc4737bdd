package cpu

import (
	"math"

	"github.com/loomgraph/loom/internal/gemm"
	blasgonum "gonum.org/v1/gonum/blas/gonum"
)

// The recursive (cache-oblivious) kernels of the square solvers, in
// float64, row-major: Cholesky, LU with partial pivoting and triangular
// solves. Each splits its matrix in halves down to laLeaf columns, so
// nearly all the work is in products on internal/gemm (run serially with
// a workspace bound once: they do not allocate); only the leaves are
// scalar loops. gonum's pure-Go LAPACK (Dpotrf, Dgetrf) was measured 1.0x
// and 4.6x slower than OpenBLAS through NumPy at n = 1024; these are
// within its time (bench/linalg.go).

// laLeaf is the widest block handled by the scalar loops.
const laLeaf = 16

// laWS is one worker's scratch: the products' workspace and a panel.
type laWS struct {
	g     []float64 // gemm.DgemmSerial's workspace
	panel []float64 // LU's leaf panel (column-major), n·laLeaf
	// done is the running Run's ctx.Done() (nil: not cancellable). The
	// products stop when it is closed (gemm's checks, a few ms apart) and
	// set stop; the recursions then return at their next split, leaving
	// garbage that the failed Run discards.
	done <-chan struct{}
	stop bool
}

// cut reports whether the factorisation should stop.
func (w *laWS) cut() bool { return w.stop }

func newLAWS(n int) *laWS {
	return &laWS{g: make([]float64, gemm.SerialWorkspace64(max(n, 1))), panel: make([]float64, max(n, 1)*laLeaf)}
}

// mul is C = alpha·op(A)·op(B) + beta·C.
func (w *laWS) mul(tA, tB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if w.stop {
		return
	}
	if !gemm.DgemmSerialUntil(w.done, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, w.g) {
		w.stop = true
	}
}

var blas64 blasgonum.Implementation

// chol factors the n×n matrix a (row stride lda; lower triangle read) in
// place into L (lower triangle; the strict upper triangle is left as it
// was). It returns -1, or the first column whose pivot is not positive
// (or NaN), as LAPACK's potrf.
func (w *laWS) chol(a []float64, lda, n int) int {
	if n <= laLeaf {
		for j := range n {
			rj := a[j*lda : j*lda+j]
			s := a[j*lda+j] - dot(rj, rj)
			if !(s > 0) {
				return j
			}
			d := math.Sqrt(s)
			a[j*lda+j] = d
			for i := j + 1; i < n; i++ {
				a[i*lda+j] = (a[i*lda+j] - dot(a[i*lda:i*lda+j], rj)) / d
			}
		}
		return -1
	}
	if w.cut() {
		return -1
	}
	n1 := n / 2
	n2 := n - n1
	if bad := w.chol(a, lda, n1); bad >= 0 {
		return bad
	}
	a21, a22 := a[n1*lda:], a[n1*lda+n1:]
	w.trsmRightLT(n1, n2, a, lda, a21, lda) // L21 = A21·L11⁻ᵀ
	w.syrkLower(n2, n1, a21, lda, a22, lda) // A22 -= L21·L21ᵀ
	if bad := w.chol(a22, lda, n2); bad >= 0 {
		return n1 + bad
	}
	return -1
}

// trsmRightLT solves X·Lᵀ = B in place (B m×n, L n×n lower).
func (w *laWS) trsmRightLT(n, m int, l []float64, ldl int, b []float64, ldb int) {
	if n <= laLeaf {
		for r := range m {
			x := b[r*ldb : r*ldb+n]
			for j := range n {
				x[j] = (x[j] - dot(x[:j], l[j*ldl:j*ldl+j])) / l[j*ldl+j]
			}
		}
		return
	}
	p := n / 2
	q := n - p
	w.trsmRightLT(p, m, l, ldl, b, ldb)
	// X2 = (B2 - X1·Lbᵀ)·Lc⁻ᵀ, Lb = L[p:, :p]
	w.mul(false, true, m, q, p, -1, b, ldb, l[p*ldl:], ldl, 1, b[p:], ldb)
	w.trsmRightLT(q, m, l[p*ldl+p:], ldl, b[p:], ldb)
}

// syrkLower is C -= A·Aᵀ on C's lower triangle (C n×n, A n×k).
func (w *laWS) syrkLower(n, k int, a []float64, lda int, c []float64, ldc int) {
	if n <= 4*laLeaf {
		w.mul(false, true, n, n, k, -1, a, lda, a, lda, 1, c, ldc)
		return
	}
	n1 := n / 2
	w.syrkLower(n1, k, a, lda, c, ldc)
	w.mul(false, true, n-n1, n1, k, -1, a[n1*lda:], lda, a, lda, 1, c[n1*ldc:], ldc)
	w.syrkLower(n-n1, k, a[n1*lda:], lda, c[n1*ldc+n1:], ldc)
}

// lu factors the n×n matrix a (row stride n) in place with partial
// pivoting (the largest magnitude, the first of equal ones): L unit lower
// below the diagonal, U on and above it. piv[i] is the row swapped with
// row i at step i. It returns -1, or the first column whose pivot is
// exactly zero (the factorisation goes on past it, as LAPACK's getrf).
func (w *laWS) lu(a []float64, n int, piv []int) int {
	return w.luRec(a, n, 0, n, n, piv)
}

// luRec factors the panel of the m rows from r0 and the nc columns from
// r0 (the trailing matrix's leading columns), swapping whole rows.
func (w *laWS) luRec(a []float64, n, r0, m, nc int, piv []int) int {
	if nc <= laLeaf {
		return w.luLeaf(a, n, r0, m, nc, piv)
	}
	if w.cut() {
		return -1
	}
	n1 := nc / 2
	n2 := nc - n1
	zero := w.luRec(a, n, r0, m, n1, piv)
	top := a[r0*n+r0:]
	// U12 = L11⁻¹·A12, then A22 -= L21·U12.
	w.trsm(false, false, true, n1, n2, top, n, top[n1:], n)
	w.mul(false, false, m-n1, n2, n1, -1, top[n1*n:], n, top[n1:], n, 1, top[n1*n+n1:], n)
	z2 := w.luRec(a, n, r0+n1, m-n1, n2, piv)
	if zero < 0 && z2 >= 0 {
		zero = n1 + z2
	}
	return zero
}

// luLeaf factors the m×nc panel at (r0, r0) unblocked, in a column-major
// copy (contiguous pivot searches and updates), swapping the rest of the
// rows in a.
func (w *laWS) luLeaf(a []float64, n, r0, m, nc int, piv []int) int {
	p := w.panel[:m*nc]
	for j := range nc {
		col := p[j*m : (j+1)*m]
		for i := range m {
			col[i] = a[(r0+i)*n+r0+j]
		}
	}
	zero := -1
	for j := range nc {
		cj := p[j*m : (j+1)*m]
		best := j
		for i := j + 1; i < m; i++ {
			if math.Abs(cj[i]) > math.Abs(cj[best]) {
				best = i
			}
		}
		piv[r0+j] = r0 + best
		if best != j {
			for c := range nc {
				p[c*m+j], p[c*m+best] = p[c*m+best], p[c*m+j]
			}
		}
		d := cj[j]
		if d == 0 {
			if zero < 0 {
				zero = j
			}
			continue
		}
		below := cj[j+1:]
		for i := range below {
			below[i] /= d
		}
		for c := j + 1; c < nc; c++ {
			cc := p[c*m : (c+1)*m]
			if f := cc[j]; f != 0 {
				blas64.Daxpy(len(below), -f, below, 1, cc[j+1:], 1)
			}
		}
	}
	for j := range nc {
		col := p[j*m : (j+1)*m]
		for i := range m {
			a[(r0+i)*n+r0+j] = col[i]
		}
	}
	// The same swaps on the rest of the rows.
	for j := range nc {
		r, q := r0+j, piv[r0+j]
		if q == r {
			continue
		}
		rr, rq := a[r*n:(r+1)*n], a[q*n:(q+1)*n]
		for c := 0; c < r0; c++ {
			rr[c], rq[c] = rq[c], rr[c]
		}
		for c := r0 + nc; c < n; c++ {
			rr[c], rq[c] = rq[c], rr[c]
		}
	}
	return zero
}

// trsm solves op(T)·X = B in place (B n×k, row stride ldb): T n×n with
// stored triangle upper or lower, op(T) = Tᵀ when trans, a unit diagonal
// (not read) when unit.
func (w *laWS) trsm(upper, trans, unit bool, n, k int, t []float64, ldt int, b []float64, ldb int) {
	if n == 0 || k == 0 {
		return
	}
	lower := upper == trans // op(T) is lower triangular
	if n <= laLeaf {
		el := func(i, j int) float64 {
			if trans {
				return t[j*ldt+i]
			}
			return t[i*ldt+j]
		}
		for s := range n {
			i := s
			if !lower {
				i = n - 1 - s
			}
			ri := b[i*ldb : i*ldb+k]
			lo, hi := 0, i
			if !lower {
				lo, hi = i+1, n
			}
			for j := lo; j < hi; j++ {
				if f := el(i, j); f != 0 {
					if k == 1 {
						ri[0] -= f * b[j*ldb]
					} else {
						blas64.Daxpy(k, -f, b[j*ldb:j*ldb+k], 1, ri, 1)
					}
				}
			}
			if !unit {
				d := el(i, i)
				for c := range ri {
					ri[c] /= d
				}
			}
		}
		return
	}
	if w.cut() {
		return
	}
	n1 := n / 2
	n2 := n - n1
	t22 := t[n1*ldt+n1:]
	b2 := b[n1*ldb:]
	// op(T)21 is T21 = t[n1·ldt:] or T12ᵀ (T12 = t[n1:]); op(T)12 the
	// other way round.
	if lower {
		w.trsm(upper, trans, unit, n1, k, t, ldt, b, ldb)
		off := n1 * ldt
		if trans {
			off = n1
		}
		w.mul(trans, false, n2, k, n1, -1, t[off:], ldt, b, ldb, 1, b2, ldb)
		w.trsm(upper, trans, unit, n2, k, t22, ldt, b2, ldb)
		return
	}
	w.trsm(upper, trans, unit, n2, k, t22, ldt, b2, ldb)
	off := n1
	if trans {
		off = n1 * ldt
	}
	w.mul(trans, false, n1, k, n2, -1, t[off:], ldt, b2, ldb, 1, b, ldb)
	w.trsm(upper, trans, unit, n1, k, t, ldt, b, ldb)
}

// luSolve solves A·X = B in place (B n×k) from lu's factors and pivots.
func (w *laWS) luSolve(lu []float64, n int, piv []int, b []float64, k int) {
	for i := range n {
		if q := piv[i]; q != i {
			ri, rq := b[i*k:(i+1)*k], b[q*k:(q+1)*k]
			for c := range ri {
				ri[c], rq[c] = rq[c], ri[c]
			}
		}
	}
	w.trsm(false, false, true, n, k, lu, n, b, k)
	w.trsm(true, false, false, n, k, lu, n, b, k)
}

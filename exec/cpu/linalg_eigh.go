package cpu

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// Eigh: gonum's Householder tridiagonalisation (Dsytrd) and its
// orthogonal factor (Dorgtr), then our implicit QL iteration with
// Wilkinson-like shifts on the tridiagonal matrix. gonum's Dsteqr applies
// each plane rotation to two columns of the row-major eigenvector matrix,
// a strided walk that made Dsyev 12-23x slower than NumPy at n = 256-512;
// here the rotations act on two rows of its transpose, contiguous.

// eighWork is Eigh's workspace for n×n matrices.
type eighWork struct {
	d, e, tau []float64
	wt        []float64 // Qᵀ, then the eigenvectors as rows
	order     []int
	work      []float64
}

func newEighWork(n int, impl lapackgonum.Implementation) *eighWork {
	w := &eighWork{d: make([]float64, n), e: make([]float64, n), tau: make([]float64, max(n-1, 1)),
		wt: make([]float64, n*n), order: make([]int, n)}
	if n > 0 {
		q := []float64{0}
		a := make([]float64, n*n)
		impl.Dsytrd(blas.Lower, n, a, n, w.d, w.e[:max(n-1, 0)], w.tau, q, -1)
		lw := int(q[0])
		impl.Dorgtr(blas.Lower, n, a, n, w.tau, q, -1)
		w.work = make([]float64, max(lw, int(q[0]), 1))
	}
	return w
}

// eigh computes the eigenvalues (ascending, into vals) and eigenvectors
// (columns of a, which holds the matrix's lower triangle on entry) of the
// n×n symmetric matrix. It reports false when the iteration does not
// converge (30 sweeps per eigenvalue, as LAPACK).
func (w *eighWork) eigh(impl lapackgonum.Implementation, a []float64, n int, vals []float64) bool {
	if n == 0 {
		return true
	}
	d, e := w.d, w.e
	impl.Dsytrd(blas.Lower, n, a, n, d, e[:n-1], w.tau, w.work, len(w.work))
	impl.Dorgtr(blas.Lower, n, a, n, w.tau, w.work, len(w.work))
	e[n-1] = 0
	for i := range n {
		if math.IsNaN(d[i]) || math.IsInf(d[i], 0) || math.IsNaN(e[i]) || math.IsInf(e[i], 0) {
			return false // would never converge: fail at once
		}
	}
	wt := w.wt
	for i := range n {
		for j := range n {
			wt[j*n+i] = a[i*n+j]
		}
	}
	if !tridiagQL(d, e, wt, n) {
		return false
	}
	order := w.order
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return d[order[i]] < d[order[j]] })
	for c, r := range order {
		vals[c] = d[r]
		row := wt[r*n : (r+1)*n]
		for i := range n {
			a[i*n+c] = row[i]
		}
	}
	return true
}

// tridiagQL diagonalises the symmetric tridiagonal matrix with diagonal d
// and subdiagonal e (e[i] couples i and i+1; e[n-1] is 0) by implicit QL
// steps, chasing each step's rotations from the bottom of the unreduced
// block up and applying each to rows i and i+1 of w (n×n). On return d
// holds the eigenvalues, unsorted, and row i of w the eigenvector of d[i]
// (when w held Qᵀ of A = Q·T·Qᵀ).
func tridiagQL(d, e, w []float64, n int) bool {
	const eps = 0x1p-52
	for l := 0; l < n; l++ {
		for iter := 0; ; iter++ {
			m := l
			for ; m < n-1; m++ {
				if math.Abs(e[m]) <= eps*(math.Abs(d[m])+math.Abs(d[m+1])) {
					break
				}
			}
			if m == l {
				break
			}
			if iter == 30*n {
				return false
			}
			// The shift: the eigenvalue of the leading 2×2 block nearer d[l].
			g := (d[l+1] - d[l]) / (2 * e[l])
			r := math.Hypot(g, 1)
			g = d[m] - d[l] + e[l]/(g+math.Copysign(r, g))
			s, c, p := 1.0, 1.0, 0.0
			i := m - 1
			underflow := false
			for ; i >= l; i-- {
				f, b := s*e[i], c*e[i]
				r = math.Hypot(f, g)
				e[i+1] = r
				if r == 0 { // the step deflated early
					d[i+1] -= p
					e[m] = 0
					underflow = true
					break
				}
				s, c = f/r, g/r
				g = d[i+1] - p
				r = (d[i]-g)*s + 2*c*b
				p = s * r
				d[i+1] = g + p
				g = c*r - b
				wi, wj := w[i*n:(i+1)*n], w[(i+1)*n:(i+2)*n]
				for k := range wi {
					x, y := wi[k], wj[k]
					wj[k] = s*x + c*y
					wi[k] = c*x - s*y
				}
			}
			if underflow {
				continue
			}
			d[l] -= p
			e[l] = g
			e[m] = 0
		}
	}
	return true
}

package ops

import (
	"fmt"
	"math"
	"sort"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The float64 reference evaluators of the linear-algebra ops: the plain
// textbook algorithms, written for clarity and sharing no code with any
// backend (LU with partial pivoting, Cholesky-Banachiewicz, substitution,
// Householder QR, cyclic Jacobi for Eigh, one-sided Jacobi (Hestenes) for
// the SVD). Matrices are row-major []float64.

// finiteOr is the error of the iterative ops (Eigh, SVD, LstSq) for a
// matrix holding NaN or Inf, which the backends' iterations reject: the
// same words as theirs.
func finiteOr(op string, b int, x []float64) error {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: the iteration did not converge for matrix %d of the batch (does it hold NaN or Inf?)", op, b)
		}
	}
	return nil
}

// batchOf returns the batch shape of x's matrices (x has rank >= 2).
func batchOf(s tensor.Shape) tensor.Shape {
	b := s[:len(s)-2].Clone()
	if b == nil {
		b = tensor.Shape{}
	}
	return b
}

func matDims(s tensor.Shape) (int, int) { return s[len(s)-2], s[len(s)-1] }

// refChol factors the n×n matrix a (lower triangle read): l and -1, or
// the first column whose pivot is not positive.
func refChol(a []float64, n int) ([]float64, int) {
	l := make([]float64, n*n)
	for j := range n {
		s := a[j*n+j]
		for k := range j {
			s -= l[j*n+k] * l[j*n+k]
		}
		if !(s > 0) {
			return nil, j
		}
		d := math.Sqrt(s)
		l[j*n+j] = d
		for i := j + 1; i < n; i++ {
			t := a[i*n+j]
			for k := range j {
				t -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = t / d
		}
	}
	return l, -1
}

func refCholesky(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	N, _ := matDims(a.Shape)
	for b := range max(batchOf(a.Shape).Size(), 0) {
		l, bad := refChol(a.F[b*N*N:(b+1)*N*N], N)
		if bad >= 0 {
			return nil, opdef.NotPositiveDefiniteError("Cholesky", b, bad)
		}
		copy(out.F[b*N*N:], l)
	}
	return out, nil
}

func refTriangularSolve(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a, bv := in[0], in[1]
	t := n.Attr().(opdef.TriangularAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	N, K := matDims(out.Shape)
	batch := batchOf(out.Shape)
	ao, bo := opdef.BatchOffsets(batch, a.Shape), opdef.BatchOffsets(batch, bv.Shape)
	lower := t.Upper == t.Transpose // op(A) is lower triangular
	for b := range ao {
		am := a.F[ao[b]:]
		// e is op(A)[i][j] inside its triangle.
		e := func(i, j int) float64 {
			if i == j && t.UnitDiagonal {
				return 1
			}
			if t.Transpose {
				return am[j*N+i]
			}
			return am[i*N+j]
		}
		if !t.UnitDiagonal {
			for i := range N {
				if e(i, i) == 0 {
					return nil, opdef.SingularError("TriangularSolve", b, i)
				}
			}
		}
		x := out.F[b*N*K:]
		for c := range K {
			for s := range N {
				i := s
				if !lower {
					i = N - 1 - s
				}
				v := bv.F[bo[b]+i*K+c]
				for j := range N {
					if (lower && j < i) || (!lower && j > i) {
						v -= e(i, j) * x[j*K+c]
					}
				}
				x[i*K+c] = v / e(i, i)
			}
		}
	}
	return out, nil
}

// refLUOf factors the n×n matrix a with partial pivoting (the largest
// magnitude, the first of equal ones): the factors in place of a copy, the
// row permutation, its sign, and the first column with a zero pivot (-1
// for none).
func refLUOf(a []float64, n int) ([]float64, []int, float64, int) {
	lu := append([]float64(nil), a[:n*n]...)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	sign, zero := 1.0, -1
	for j := range n {
		p := j
		for i := j + 1; i < n; i++ {
			if math.Abs(lu[i*n+j]) > math.Abs(lu[p*n+j]) {
				p = i
			}
		}
		if p != j {
			for c := range n {
				lu[j*n+c], lu[p*n+c] = lu[p*n+c], lu[j*n+c]
			}
			perm[j], perm[p] = perm[p], perm[j]
			sign = -sign
		}
		d := lu[j*n+j]
		if d == 0 {
			if zero < 0 {
				zero = j
			}
			continue
		}
		for i := j + 1; i < n; i++ {
			f := lu[i*n+j] / d
			lu[i*n+j] = f
			for c := j + 1; c < n; c++ {
				lu[i*n+c] -= f * lu[j*n+c]
			}
		}
	}
	return lu, perm, sign, zero
}

// refLUSolve solves A·x = b for one column (stride ldb) with A's LU.
func refLUSolve(lu []float64, perm []int, n int, b []float64, ldb int, x []float64, ldx int) {
	y := make([]float64, n)
	for i := range n {
		v := b[perm[i]*ldb]
		for j := range i {
			v -= lu[i*n+j] * y[j]
		}
		y[i] = v
	}
	for i := n - 1; i >= 0; i-- {
		v := y[i]
		for j := i + 1; j < n; j++ {
			v -= lu[i*n+j] * y[j]
		}
		y[i] = v / lu[i*n+i]
	}
	for i := range n {
		x[i*ldx] = y[i]
	}
}

func refSolve(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a, bv := in[0], in[1]
	out := opdef.NewValue(n.DType(), n.Shape())
	N, K := matDims(out.Shape)
	batch := batchOf(out.Shape)
	ao, bo := opdef.BatchOffsets(batch, a.Shape), opdef.BatchOffsets(batch, bv.Shape)
	for b := range ao {
		lu, perm, _, zero := refLUOf(a.F[ao[b]:], N)
		if zero >= 0 {
			return nil, opdef.SingularError("Solve", b, zero)
		}
		for c := range K {
			refLUSolve(lu, perm, N, bv.F[bo[b]+c:], K, out.F[b*N*K+c:], K)
		}
	}
	return out, nil
}

func refInv(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	N, _ := matDims(a.Shape)
	eye := make([]float64, N*N)
	for i := range N {
		eye[i*N+i] = 1
	}
	for b := range max(batchOf(a.Shape).Size(), 0) {
		lu, perm, _, zero := refLUOf(a.F[b*N*N:], N)
		if zero >= 0 {
			return nil, opdef.SingularError("Inv", b, zero)
		}
		for c := range N {
			refLUSolve(lu, perm, N, eye[c:], N, out.F[b*N*N+c:], N)
		}
	}
	return out, nil
}

// refDet is Det and SLogDet: the product of the LU pivots and the
// permutation's sign.
func refDet(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	if in[0].Len() == 0 { // 0×0 matrices: det 1, slogdet (1, 0)
		out := opdef.NewValue(n.DType(), n.Shape())
		for i := range out.F {
			out.F[i] = 1
			if n.Op() == OpSLogDet && i%2 == 1 {
				out.F[i] = 0
			}
		}
		return out, nil
	}
	a := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	N, _ := matDims(a.Shape)
	for b := range max(batchOf(a.Shape).Size(), 0) {
		lu, _, sign, zero := refLUOf(a.F[b*N*N:], N)
		if n.Op() == OpDet {
			d := sign
			for i := range N {
				d *= lu[i*N+i]
			}
			if zero >= 0 {
				d = 0 // +0, as NumPy's
			}
			out.F[b] = d
			continue
		}
		logabs := 0.0
		if zero >= 0 {
			sign, logabs = 0, math.Inf(-1)
		} else {
			for i := range N {
				d := lu[i*N+i]
				if d < 0 {
					sign = -sign
				}
				logabs += math.Log(math.Abs(d))
			}
		}
		out.F[2*b], out.F[2*b+1] = sign, logabs
	}
	return out, nil
}

// refQROf is the Householder QR of the m×n matrix a: q (m×k) and r (k×n)
// with r's diagonal made non-negative.
func refQROf(a []float64, m, n int) (q, r []float64) {
	k := min(m, n)
	w := append([]float64(nil), a[:m*n]...)
	vs := make([][]float64, k) // the reflectors' vectors (nil: identity)
	for j := range k {
		norm := 0.0
		for i := j; i < m; i++ {
			norm += w[i*n+j] * w[i*n+j]
		}
		norm = math.Sqrt(norm)
		if norm == 0 {
			continue
		}
		v := make([]float64, m)
		for i := j; i < m; i++ {
			v[i] = w[i*n+j]
		}
		s := 1.0
		if v[j] < 0 {
			s = -1
		}
		v[j] += s * norm
		vv := 0.0
		for i := j; i < m; i++ {
			vv += v[i] * v[i]
		}
		for c := j; c < n; c++ {
			d := 0.0
			for i := j; i < m; i++ {
				d += v[i] * w[i*n+c]
			}
			f := 2 * d / vv
			for i := j; i < m; i++ {
				w[i*n+c] -= f * v[i]
			}
		}
		vs[j] = v
	}
	r = make([]float64, k*n)
	for i := range k {
		for c := i; c < n; c++ {
			r[i*n+c] = w[i*n+c]
		}
	}
	// Q = H0·H1···H(k-1) applied to the first k columns of the identity.
	q = make([]float64, m*k)
	for i := range k {
		q[i*k+i] = 1
	}
	for j := k - 1; j >= 0; j-- {
		v := vs[j]
		if v == nil {
			continue
		}
		vv := 0.0
		for i := j; i < m; i++ {
			vv += v[i] * v[i]
		}
		for c := range k {
			d := 0.0
			for i := j; i < m; i++ {
				d += v[i] * q[i*k+c]
			}
			f := 2 * d / vv
			for i := j; i < m; i++ {
				q[i*k+c] -= f * v[i]
			}
		}
	}
	for i := range k {
		if r[i*n+i] < 0 {
			for c := range n {
				r[i*n+c] = -r[i*n+c]
			}
			for row := range m {
				q[row*k+i] = -q[row*k+i]
			}
		}
	}
	return q, r
}

func refQR(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	m, c := matDims(a.Shape)
	k := min(m, c)
	for b := range max(batchOf(a.Shape).Size(), 0) {
		q, r := refQROf(a.F[b*m*c:], m, c)
		o := out.F[b*(m+k)*c:]
		for i := range m {
			copy(o[i*c:i*c+k], q[i*k:(i+1)*k])
		}
		copy(o[m*c:], r)
	}
	return out, nil
}

// signFix makes the component of largest magnitude (the first of equal
// ones) of column j of the rows×cols matrix x (row stride ld) positive,
// reporting whether it negated the column.
func signFix(x []float64, rows, ld, j int) bool {
	best := 0
	for i := 1; i < rows; i++ {
		if math.Abs(x[i*ld+j]) > math.Abs(x[best*ld+j]) {
			best = i
		}
	}
	if rows == 0 || !(x[best*ld+j] < 0) {
		return false
	}
	for i := range rows {
		x[i*ld+j] = -x[i*ld+j]
	}
	return true
}

// refEighOf is the cyclic Jacobi method on the symmetric matrix whose
// lower triangle is a's: ascending eigenvalues and the eigenvectors as
// columns.
func refEighOf(a []float64, n int) ([]float64, []float64) {
	s := make([]float64, n*n)
	v := make([]float64, n*n)
	for i := range n {
		v[i*n+i] = 1
		for j := 0; j <= i; j++ {
			s[i*n+j], s[j*n+i] = a[i*n+j], a[i*n+j]
		}
	}
	for sweep := 0; sweep < 100; sweep++ {
		off, tot := 0.0, 0.0
		for i := range n {
			for j := range n {
				tot += s[i*n+j] * s[i*n+j]
				if i != j {
					off += s[i*n+j] * s[i*n+j]
				}
			}
		}
		if off <= 1e-32*tot || off == 0 {
			break
		}
		for p := range n {
			for q := p + 1; q < n; q++ {
				apq := s[p*n+q]
				if apq == 0 {
					continue
				}
				theta := (s[q*n+q] - s[p*n+p]) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				sn := t * c
				for k := range n { // columns p, q of S and V
					kp, kq := s[k*n+p], s[k*n+q]
					s[k*n+p], s[k*n+q] = c*kp-sn*kq, sn*kp+c*kq
					kp, kq = v[k*n+p], v[k*n+q]
					v[k*n+p], v[k*n+q] = c*kp-sn*kq, sn*kp+c*kq
				}
				for k := range n { // rows p, q of S
					pk, qk := s[p*n+k], s[q*n+k]
					s[p*n+k], s[q*n+k] = c*pk-sn*qk, sn*pk+c*qk
				}
			}
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return s[idx[i]*n+idx[i]] < s[idx[j]*n+idx[j]] })
	w := make([]float64, n)
	vs := make([]float64, n*n)
	for c, i := range idx {
		w[c] = s[i*n+i]
		for r := range n {
			vs[r*n+c] = v[r*n+i]
		}
	}
	for c := range n {
		signFix(vs, n, n, c)
	}
	return w, vs
}

func refEigh(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	N, _ := matDims(a.Shape)
	for b := range max(batchOf(a.Shape).Size(), 0) {
		// the lower triangle is what is read
		for i := range N {
			if err := finiteOr("Eigh", b, a.F[b*N*N+i*N:b*N*N+i*N+i+1]); err != nil {
				return nil, err
			}
		}
		w, v := refEighOf(a.F[b*N*N:], N)
		o := out.F[b*(N+1)*N:]
		copy(o, w)
		copy(o[N:], v)
	}
	return out, nil
}

// refSVDOf is the reduced SVD of the m×n matrix a by one-sided Jacobi:
// u (m×k), s (k, descending), vh (k×n), with the sign rule of opdef.
func refSVDOf(a []float64, m, n int) (u, s, vh []float64) {
	if m < n { // Aᵀ = U'·S·V'ᵀ, so A = V'·S·U'ᵀ
		at := make([]float64, m*n)
		for i := range m {
			for j := range n {
				at[j*m+i] = a[i*n+j]
			}
		}
		u2, s2, vh2 := refSVDTall(at, n, m)
		k := m
		u = make([]float64, m*k)
		vh = make([]float64, k*n)
		for i := range k {
			for j := range m {
				u[j*k+i] = vh2[i*m+j]
			}
			for j := range n {
				vh[i*n+j] = u2[j*k+i]
			}
		}
		s = s2
	} else {
		u, s, vh = refSVDTall(a, m, n)
	}
	k := min(m, n)
	for j := range k {
		if signFix(u, m, k, j) {
			for c := range n {
				vh[j*n+c] = -vh[j*n+c]
			}
		}
	}
	return u, s, vh
}

// refSVDTall is refSVDOf for m >= n, without the sign rule.
func refSVDTall(a []float64, m, n int) (u, s, vh []float64) {
	w := append([]float64(nil), a[:m*n]...)
	v := make([]float64, n*n)
	for i := range n {
		v[i*n+i] = 1
	}
	for sweep := 0; sweep < 100; sweep++ {
		rotated := false
		for p := range n {
			for q := p + 1; q < n; q++ {
				al, be, ga := 0.0, 0.0, 0.0
				for i := range m {
					al += w[i*n+p] * w[i*n+p]
					be += w[i*n+q] * w[i*n+q]
					ga += w[i*n+p] * w[i*n+q]
				}
				if ga == 0 || math.Abs(ga) <= 1e-15*math.Sqrt(al*be) {
					continue
				}
				rotated = true
				zeta := (be - al) / (2 * ga)
				t := 1 / (math.Abs(zeta) + math.Sqrt(1+zeta*zeta))
				if zeta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(1+t*t)
				sn := c * t
				for i := range m {
					x, y := w[i*n+p], w[i*n+q]
					w[i*n+p], w[i*n+q] = c*x-sn*y, sn*x+c*y
				}
				for i := range n {
					x, y := v[i*n+p], v[i*n+q]
					v[i*n+p], v[i*n+q] = c*x-sn*y, sn*x+c*y
				}
			}
		}
		if !rotated {
			break
		}
	}
	norms := make([]float64, n)
	for j := range n {
		for i := range m {
			norms[j] += w[i*n+j] * w[i*n+j]
		}
		norms[j] = math.Sqrt(norms[j])
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return norms[idx[i]] > norms[idx[j]] })
	u = make([]float64, m*n)
	s = make([]float64, n)
	vh = make([]float64, n*n)
	var zero []int
	for c, j := range idx {
		s[c] = norms[j]
		for i := range n {
			vh[c*n+i] = v[i*n+j]
		}
		if norms[j] == 0 {
			zero = append(zero, c)
			continue
		}
		for i := range m {
			u[i*n+c] = w[i*n+j] / norms[j]
		}
	}
	// Complete U's columns of zero singular values (Gram-Schmidt on the
	// unit vectors).
	var valid []int
	for c := range n {
		if s[c] > 0 {
			valid = append(valid, c)
		}
	}
	e := 0
	for _, c := range zero {
		for ; e < m; e++ {
			x := make([]float64, m)
			x[e] = 1
			for _, l := range valid {
				d := u[e*n+l]
				for i := range m {
					x[i] -= d * u[i*n+l]
				}
			}
			nx := 0.0
			for _, xi := range x {
				nx += xi * xi
			}
			if nx > 0.25 {
				nx = math.Sqrt(nx)
				for i := range m {
					u[i*n+c] = x[i] / nx
				}
				valid = append(valid, c)
				e++
				break
			}
		}
	}
	return u, s, vh
}

func refSVD(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	m, c := matDims(a.Shape)
	k := min(m, c)
	for b := range max(batchOf(a.Shape).Size(), 0) {
		if err := finiteOr("SVD", b, a.F[b*m*c:(b+1)*m*c]); err != nil {
			return nil, err
		}
		u, s, vh := refSVDOf(a.F[b*m*c:], m, c)
		o := out.F[b*(m+1+k)*c:]
		for i := range m {
			copy(o[i*c:i*c+k], u[i*k:(i+1)*k])
		}
		copy(o[m*c:], s)
		copy(o[(m+1)*c:], vh)
	}
	return out, nil
}

func refLstSq(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a, bv := in[0], in[1]
	out := opdef.NewValue(n.DType(), n.Shape())
	m, c := matDims(a.Shape)
	_, K := matDims(out.Shape)
	k := min(m, c)
	batch := batchOf(out.Shape)
	ao, bo := opdef.BatchOffsets(batch, a.Shape), opdef.BatchOffsets(batch, bv.Shape)
	cut := opdef.LstSqCutoff(n.DType(), m, c)
	for b := range ao {
		if err := finiteOr("LstSq", b, a.F[ao[b]:ao[b]+m*c]); err != nil {
			return nil, err
		}
		u, s, vh := refSVDOf(a.F[ao[b]:], m, c)
		x := out.F[b*c*K:]
		for i := range k {
			if !(s[i] > cut*s[0]) {
				continue
			}
			for col := range K {
				d := 0.0 // (uᵢᵀ·b)/sᵢ
				for r := range m {
					d += u[r*k+i] * bv.F[bo[b]+r*K+col]
				}
				d /= s[i]
				for j := range c {
					x[j*K+col] += d * vh[i*c+j]
				}
			}
		}
	}
	return out, nil
}

// nonEmpty wraps a linear-algebra reference: an empty operand or result
// gives the zero value of the result's shape without calling it, so the
// references deal only with non-empty matrices.
func nonEmpty(ref func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error)) func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	return func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
		if in[0].Len() == 0 || n.Shape().Size() == 0 {
			return opdef.NewValue(n.DType(), n.Shape()), nil
		}
		return ref(n, in)
	}
}

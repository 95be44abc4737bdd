package cpu

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// The linear-algebra ops (ops/linalg.go). Every matrix is computed in
// float64 (a float32 operand is widened into the workspace and the result
// rounded once at the end), matrices of a batch in parallel, one worker
// per matrix. Cholesky, LU (Solve, Inv, Det, SLogDet) and the triangular
// solves are our recursive kernels on internal/gemm (linalg_blocked.go);
// QR (Dgeqrf, Dorgqr), Eigh (Dsyev) and the SVD (Dgesvd, also behind
// LstSq) are gonum's pure-Go LAPACK. Workspaces are allocated when a
// kernel is bound, once per instance and worker; a Run does not allocate
// (but for the error of a failed matrix). The packed layouts and sign
// conventions are internal/opdef/linalg.go's.

// laFloat is the element types of the linear-algebra ops.
type laFloat interface{ float32 | float64 }

func prepareLinalg(n *graph.Node) (*kernel, error) {
	switch n.DType() {
	case tensor.Float32:
		return linalgKernel[float32](n)
	case tensor.Float64:
		return linalgKernel[float64](n)
	}
	return nil, fmt.Errorf("%w: %v of %v", errUnsupported, n.Op(), n.DType())
}

// laWork is one worker's workspace.
type laWork struct {
	la             *laWS
	a, x, y, z, zz []float64
	piv            []int
	work           []float64 // gonum's
}

func linalgKernel[T laFloat](n *graph.Node) (*kernel, error) {
	op := n.Op()
	a := n.Input(0)
	as_ := a.Shape()
	M, N := as_[len(as_)-2], as_[len(as_)-1]
	K := 0
	var batch tensor.Shape
	var aOff, bOff []int
	if len(n.Inputs()) == 2 {
		os := n.Shape()
		K = os[len(os)-1]
		batch = os[:len(os)-2]
		aOff = opdef.BatchOffsets(batch, as_)
		bOff = opdef.BatchOffsets(batch, n.Input(1).Shape())
	} else {
		batch = as_[:len(as_)-2]
		aOff = make([]int, max(batch.Size(), 0))
		for i := range aOff {
			aOff[i] = i * M * N
		}
	}
	nb := len(aOff)
	k := min(M, N)
	var lwork int
	var impl lapackgonum.Implementation
	if k > 0 { // gonum's workspace queries (on scratch of the real sizes)
		q := []float64{0}
		qa, qt := make([]float64, M*N), make([]float64, max(M, N))
		switch op {
		case ops.OpQR:
			impl.Dgeqrf(M, N, qa, N, qt, q, -1)
			lwork = int(q[0])
			impl.Dorgqr(M, k, k, qa, N, qt, q, -1)
			lwork = max(lwork, int(q[0]))
		case ops.OpEigh:
			impl.Dsyev(lapack.EVCompute, blas.Lower, N, qa, N, qt, q, -1)
			lwork = int(q[0])
		case ops.OpSVD, ops.OpLstSq:
			impl.Dgesvd(lapack.SVDStore, lapack.SVDStore, M, N, qa, N, qt, make([]float64, M*k), k, make([]float64, k*N), N, q, -1)
			lwork = int(q[0])
		}
	}
	cut := opdef.LstSqCutoff(n.DType(), M, N)
	var tri opdef.TriangularAttr
	if t, ok := n.Attr().(opdef.TriangularAttr); ok {
		tri = t
	}
	name := opdef.Lookup(op).Name
	cost := float64(M) * float64(N) * float64(max(k, K, 1))
	grain := max(1, int(float64(grainElems)/max(cost, 1)))

	newWork := func() *laWork {
		w := &laWork{la: newLAWS(max(M, N, K)), a: make([]float64, M*N)}
		switch op {
		case ops.OpSolve, ops.OpInv, ops.OpDet, ops.OpSLogDet:
			w.piv = make([]int, N)
			w.x = make([]float64, N*max(K, N))
		case ops.OpTriangularSolve:
			w.x = make([]float64, N*K)
		case ops.OpQR:
			w.x = make([]float64, k) // tau
			w.work = make([]float64, max(lwork, 1))
		case ops.OpEigh:
			w.x = make([]float64, N)
			w.work = make([]float64, max(lwork, 1))
		case ops.OpSVD, ops.OpLstSq:
			w.x = make([]float64, k)   // s
			w.y = make([]float64, M*k) // u
			w.z = make([]float64, k*N) // vt
			w.work = make([]float64, max(lwork, 1))
			if op == ops.OpLstSq {
				w.zz = make([]float64, M*K+k*K+N*K) // b, Uᵀb, x
			}
		}
		return w
	}

	// one computes matrix b, returning -1 or the failing column.
	one := func(w *laWork, in0, in1, out []T, b int) int {
		load(w.a, in0[aOff[b]:aOff[b]+M*N])
		switch op {
		case ops.OpCholesky:
			if bad := w.la.chol(w.a, N, N); bad >= 0 {
				return bad
			}
			o := out[b*N*N : (b+1)*N*N]
			for i := range N {
				for j := range N {
					if j > i {
						o[i*N+j] = 0
					} else {
						o[i*N+j] = T(w.a[i*N+j])
					}
				}
			}
		case ops.OpSolve, ops.OpInv:
			if bad := w.la.lu(w.a, N, w.piv); bad >= 0 {
				return bad
			}
			x := w.x[:N*max(K, 0)]
			kk := K
			if op == ops.OpInv {
				kk = N
				x = w.x[:N*N]
				clear(x)
				for i := range N {
					x[i*N+i] = 1
				}
			} else {
				load(x, in1[bOff[b]:bOff[b]+N*K])
			}
			w.la.luSolve(w.a, N, w.piv, x, kk)
			store(out[b*N*kk:(b+1)*N*kk], x)
		case ops.OpDet, ops.OpSLogDet:
			bad := w.la.lu(w.a, N, w.piv)
			sign := 1.0
			for i := range N {
				if w.piv[i] != i {
					sign = -sign
				}
			}
			if op == ops.OpDet {
				d := sign
				for i := range N {
					d *= w.a[i*N+i]
				}
				if bad >= 0 {
					d = 0 // +0, as NumPy's
				}
				out[b] = T(d)
				return -1
			}
			logabs := 0.0
			if bad >= 0 {
				sign, logabs = 0, math.Inf(-1)
			} else {
				for i := range N {
					d := w.a[i*N+i]
					if d < 0 {
						sign = -sign
					}
					logabs += math.Log(math.Abs(d))
				}
			}
			out[2*b], out[2*b+1] = T(sign), T(logabs)
		case ops.OpTriangularSolve:
			if !tri.UnitDiagonal {
				for i := range N {
					if w.a[i*N+i] == 0 {
						return i
					}
				}
			}
			x := w.x[:N*K]
			load(x, in1[bOff[b]:bOff[b]+N*K])
			w.la.trsm(tri.Upper, tri.Transpose, tri.UnitDiagonal, N, K, w.a, N, x, K)
			store(out[b*N*K:(b+1)*N*K], x)
		case ops.OpQR:
			o := out[b*(M+k)*N : (b+1)*(M+k)*N]
			clear(o)
			if k == 0 {
				return -1
			}
			impl.Dgeqrf(M, N, w.a, N, w.x, w.work, len(w.work))
			r := o[M*N:]
			for i := range k {
				for j := i; j < N; j++ {
					r[i*N+j] = T(w.a[i*N+j])
				}
			}
			impl.Dorgqr(M, k, k, w.a, N, w.x, w.work, len(w.work))
			for i := range k {
				neg := r[i*N+i] < 0
				if neg {
					for j := i; j < N; j++ {
						r[i*N+j] = -r[i*N+j]
					}
				}
				for row := range M {
					v := w.a[row*N+i]
					if neg {
						v = -v
					}
					o[row*N+i] = T(v)
				}
			}
		case ops.OpEigh:
			o := out[b*(N+1)*N : (b+1)*(N+1)*N]
			if N == 0 {
				return -1
			}
			if !impl.Dsyev(lapack.EVCompute, blas.Lower, N, w.a, N, w.x, w.work, len(w.work)) {
				return 0
			}
			store(o[:N], w.x)
			for j := range N {
				flipMaxNegative(w.a, N, N, j, nil)
			}
			store(o[N:], w.a)
		case ops.OpSVD, ops.OpLstSq:
			if k > 0 {
				if !impl.Dgesvd(lapack.SVDStore, lapack.SVDStore, M, N, w.a, N, w.x, w.y, k, w.z, N, w.work, len(w.work)) {
					return 0
				}
				for j := range k {
					flipMaxNegative(w.y, M, k, j, w.z[j*N:(j+1)*N])
				}
			}
			if op == ops.OpSVD {
				o := out[b*(M+1+k)*N : (b+1)*(M+1+k)*N]
				clear(o)
				for i := range M {
					store(o[i*N:i*N+k], w.y[i*k:(i+1)*k])
				}
				store(o[M*N:M*N+k], w.x)
				store(o[(M+1)*N:], w.z)
				return -1
			}
			bm, ub, x := w.zz[:M*K], w.zz[M*K:M*K+k*K], w.zz[M*K+k*K:]
			load(bm, in1[bOff[b]:bOff[b]+M*K])
			clear(x)
			if k > 0 {
				w.la.mul(true, false, k, K, M, 1, w.y, k, bm, K, 0, ub, K) // Uᵀ·B
				for i := range k {
					f := 0.0
					if w.x[i] > cut*w.x[0] {
						f = 1 / w.x[i]
					}
					for c := range K {
						ub[i*K+c] *= f
					}
				}
				w.la.mul(true, false, N, K, k, 1, w.z, N, ub, K, 0, x, K) // V·S⁺·Uᵀ·B
			}
			store(out[b*N*K:(b+1)*N*K], x)
		}
		return -1
	}

	return &kernel{bind: func(a *args) func() {
		parts := min(a.Threads(), max(nb, 1))
		works := make([]*laWork, parts)
		for i := range works {
			works[i] = newWork()
		}
		status := make([]int, nb)
		l := a.Loop(func(lo, hi, part int) {
			in0 := as[T](a.In(0))
			var in1 []T
			if len(n.Inputs()) == 2 {
				in1 = as[T](a.In(1))
			}
			out := as[T](a.Out())
			w := works[part]
			w.la.done, w.la.stop = a.Done(), false
			for b := lo; b < hi; b++ {
				if a.Stopped() {
					return
				}
				status[b] = one(works[part], in0, in1, out, b)
			}
		})
		return func() {
			for i := range status {
				status[i] = -1 // a cancelled Run leaves some unset
			}
			l.Run(nb, grain, 0)
			for b, st := range status {
				if st >= 0 {
					a.Fail(linalgError(name, b, st))
					return
				}
			}
		}
	}}, nil
}

// linalgError is the run error of matrix b failing at column col.
func linalgError(name string, b, col int) error {
	switch name {
	case "Cholesky":
		return opdef.NotPositiveDefiniteError(name, b, col)
	case "Eigh", "SVD", "LstSq":
		return fmt.Errorf("%s: the iteration did not converge for matrix %d of the batch", name, b)
	}
	return opdef.SingularError(name, b, col)
}

// flipMaxNegative negates column j of the rows×ld matrix x, and every
// element of other (the SVD's matching row of Vh), when the column's
// component of largest magnitude (the first of equal ones) is negative.
func flipMaxNegative(x []float64, rows, ld, j int, other []float64) {
	best := 0
	for i := 1; i < rows; i++ {
		if math.Abs(x[i*ld+j]) > math.Abs(x[best*ld+j]) {
			best = i
		}
	}
	if rows == 0 || !(x[best*ld+j] < 0) {
		return
	}
	for i := range rows {
		x[i*ld+j] = -x[i*ld+j]
	}
	for i := range other {
		other[i] = -other[i]
	}
}

func load[T laFloat](dst []float64, src []T) {
	for i := range dst {
		dst[i] = float64(src[i])
	}
}

func store[T laFloat](dst []T, src []float64) {
	for i := range dst {
		dst[i] = T(src[i])
	}
}

//go:build linux

package cu

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
)

// solverEnv is setup plus cuSOLVER, the solve part of cuBLAS and a handle
// of each.
type solverEnv struct {
	*env
	s  *CUSOLVER
	bs *BLASSolve
	h  SolverHandle
	bh Handle
}

func setupSolver(t *testing.T) *solverEnv {
	t.Helper()
	e := setup(t)
	if fakeLibs.CUSOLVER != "" {
		t.Setenv("LOOM_LIBCUSOLVER", fakeLibs.CUSOLVER)
	}
	se := &solverEnv{env: e}
	var err error
	se.s, err = LoadCUSOLVER()
	must(t, err)
	se.bs, err = LoadBLASSolve()
	must(t, err)
	if se.bs.Path() != e.b.Path() {
		t.Errorf("BLASSolve loaded %s, CUBLAS %s", se.bs.Path(), e.b.Path())
	}
	se.h, err = se.s.Create()
	must(t, err)
	se.bh, err = e.b.Create()
	must(t, err)
	t.Cleanup(func() {
		must(t, se.s.Destroy(se.h))
		must(t, e.b.Destroy(se.bh))
	})
	return se
}

// mat is a column-major matrix in float64 for the checks.
type mat struct {
	r, c int
	v    []float64
}

func (m mat) at(i, j int) float64 { return m.v[i+j*m.r] }

func randMat(r *rand.Rand, rows, cols int) mat {
	m := mat{rows, cols, make([]float64, rows*cols)}
	for i := range m.v {
		m.v[i] = r.Float64()*2 - 1
	}
	return m
}

// mul is the product a·b (or with ta, aᵀ·b), by the definition.
func mul(a mat, ta bool, b mat) mat {
	ar, ac := a.r, a.c
	get := a.at
	if ta {
		ar, ac = a.c, a.r
		get = func(i, j int) float64 { return a.at(j, i) }
	}
	if ac != b.r {
		panic("mul: shapes")
	}
	out := mat{ar, b.c, make([]float64, ar*b.c)}
	for j := 0; j < b.c; j++ {
		for i := 0; i < ar; i++ {
			var s float64
			for k := 0; k < ac; k++ {
				s += get(i, k) * b.at(k, j)
			}
			out.v[i+j*ar] = s
		}
	}
	return out
}

func eye(n int) mat {
	m := mat{n, n, make([]float64, n*n)}
	for i := 0; i < n; i++ {
		m.v[i+i*n] = 1
	}
	return m
}

// spd returns a random symmetric positive definite n×n matrix B·Bᵀ + n·I.
func spd(r *rand.Rand, n int) mat {
	b := randMat(r, n, n)
	a := mul(b, false, mat{n, n, transpose(b).v})
	for i := 0; i < n; i++ {
		a.v[i+i*n] += float64(n)
	}
	return a
}

func transpose(m mat) mat {
	out := mat{m.c, m.r, make([]float64, len(m.v))}
	for j := 0; j < m.c; j++ {
		for i := 0; i < m.r; i++ {
			out.v[j+i*m.c] = m.at(i, j)
		}
	}
	return out
}

// dev holds a float64 matrix on the device in precision p.
func (se *solverEnv) put(t *testing.T, p Precision, v []float64) DevicePtr {
	t.Helper()
	if p == Double {
		return upload(t, se.d, v)
	}
	return upload(t, se.d, toF32(v))
}

func (se *solverEnv) get(t *testing.T, p Precision, ptr DevicePtr, n int) []float64 {
	t.Helper()
	must(t, se.d.CtxSynchronize())
	out := make([]float64, n)
	if p == Double {
		download(t, se.d, out, ptr)
		return out
	}
	f := make([]float32, n)
	download(t, se.d, f, ptr)
	for i, x := range f {
		out[i] = float64(x)
	}
	return out
}

func (se *solverEnv) info(t *testing.T, ptr DevicePtr, n int) []int32 {
	t.Helper()
	must(t, se.d.CtxSynchronize())
	out := make([]int32, n)
	download(t, se.d, out, ptr)
	return out
}

func tolOf(p Precision) float64 {
	if p == Double {
		return 1e-10
	}
	return 2e-4
}

// work allocates a workspace of n elements of p.
func (se *solverEnv) work(t *testing.T, p Precision, n int) DevicePtr {
	t.Helper()
	if p == Double {
		return upload(t, se.d, make([]float64, max(n, 1)))
	}
	return upload(t, se.d, make([]float32, max(n, 1)))
}

// TestCholesky: Potrf and Potrs on a hand-checked 2×2 and random SPD
// matrices, a matrix that is not positive definite, and the batched forms.
func TestCholesky(t *testing.T) {
	se := setupSolver(t)
	s, h := se.s, se.h
	v, err := s.Version()
	must(t, err)
	if v <= 0 {
		t.Errorf("cuSOLVER version %d", v)
	}
	st, err := se.d.StreamCreate(0)
	must(t, err)
	defer se.d.StreamDestroy(st)
	must(t, s.SetStream(h, st))
	r := rand.New(rand.NewPCG(9, 10))
	info := upload(t, se.d, make([]int32, 4))
	for _, p := range []Precision{Single, Double} {
		// [[4 2] [2 3]] = L·Lᵀ with L = [[2 0] [1 √2]] (by hand).
		a := se.put(t, p, []float64{4, 2, 2, 3})
		lw, err := s.PotrfBufferSize(h, p, Lower, 2, a, 2)
		must(t, err)
		must(t, s.Potrf(h, p, Lower, 2, a, 2, se.work(t, p, lw), lw, info))
		got := se.get(t, p, a, 4)
		// The upper triangle (column-major index 2) is left as it was.
		checkClose(t, fmt.Sprintf("%vpotrf 2×2", p), got, []float64{2, 1, 2, math.Sqrt2}, tolOf(p))
		if in := se.info(t, info, 1); in[0] != 0 {
			t.Errorf("info %d", in[0])
		}

		for _, uplo := range []Fill{Lower, Upper} {
			const n, nrhs = 6, 2
			A := spd(r, n)
			B := randMat(r, n, nrhs)
			dA, dB := se.put(t, p, A.v), se.put(t, p, B.v)
			lw, err := s.PotrfBufferSize(h, p, uplo, n, dA, n)
			must(t, err)
			must(t, s.Potrf(h, p, uplo, n, dA, n, se.work(t, p, lw), lw, info))
			must(t, s.Potrs(h, p, uplo, n, nrhs, dA, n, dB, n, info))
			X := mat{n, nrhs, se.get(t, p, dB, n*nrhs)}
			checkClose(t, fmt.Sprintf("%vpotrs uplo=%d: A·X", p, uplo), mul(A, false, X).v, B.v, 10*tolOf(p))
		}

		// Not positive definite: the leading minor of order 2 of
		// [[1 2] [2 1]] is -3 (by hand), so info = 2.
		a = se.put(t, p, []float64{1, 2, 2, 1})
		must(t, s.Potrf(h, p, Lower, 2, a, 2, se.work(t, p, lw), lw, info))
		if in := se.info(t, info, 1); in[0] != 2 {
			t.Errorf("%vpotrf of an indefinite matrix: info %d, want 2", p, in[0])
		}

		// Batched: three matrices, the middle one not positive definite.
		const n = 3
		mats := []mat{spd(r, n), {n, n, []float64{1, 0, 0, 0, -1, 0, 0, 0, 1}}, spd(r, n)}
		var ptrs []uint64
		for _, m := range mats {
			ptrs = append(ptrs, uint64(se.put(t, p, m.v)))
		}
		arr := upload(t, se.d, ptrs)
		must(t, s.PotrfBatched(h, p, Lower, n, arr, n, info, 3))
		if in := se.info(t, info, 3); in[0] != 0 || in[1] != 2 || in[2] != 0 {
			t.Errorf("%vpotrfBatched info %v, want [0 2 0]", p, in)
		}
		b := randMat(r, n, 1)
		var bptrs []uint64
		for range mats {
			bptrs = append(bptrs, uint64(se.put(t, p, b.v)))
		}
		barr := upload(t, se.d, bptrs)
		must(t, s.PotrsBatched(h, p, Lower, n, 1, arr, n, barr, n, info, 3))
		for _, i := range []int{0, 2} {
			x := mat{n, 1, se.get(t, p, DevicePtr(bptrs[i]), n)}
			checkClose(t, fmt.Sprintf("%vpotrsBatched [%d]", p, i), mul(mats[i], false, x).v, b.v, 10*tolOf(p))
		}
		// cuSOLVER's potrsBatched takes one right-hand side only.
		if err := s.PotrsBatched(h, p, Lower, n, 2, arr, n, barr, n, info, 3); !errors.Is(err, SolverInvalidValue) {
			t.Errorf("%vpotrsBatched nrhs=2: %v", p, err)
		}
	}
}

// TestLU: Getrf and Getrs (both orientations), a singular matrix, and
// cuBLAS's batched LU.
func TestLU(t *testing.T) {
	se := setupSolver(t)
	s, h := se.s, se.h
	r := rand.New(rand.NewPCG(11, 12))
	info := upload(t, se.d, make([]int32, 4))
	for _, p := range []Precision{Single, Double} {
		const n, nrhs = 5, 3
		A, B := randMat(r, n, n), randMat(r, n, nrhs)
		for _, tr := range []Op{NoTrans, Trans} {
			dA, dB := se.put(t, p, A.v), se.put(t, p, B.v)
			ipiv := upload(t, se.d, make([]int32, n))
			lw, err := s.GetrfBufferSize(h, p, n, n, dA, n)
			must(t, err)
			must(t, s.Getrf(h, p, n, n, dA, n, se.work(t, p, lw), ipiv, info))
			if in := se.info(t, info, 1); in[0] != 0 {
				t.Fatalf("info %d", in[0])
			}
			must(t, s.Getrs(h, p, tr, n, nrhs, dA, n, ipiv, dB, n, info))
			X := mat{n, nrhs, se.get(t, p, dB, n*nrhs)}
			checkClose(t, fmt.Sprintf("%vgetrs trans=%d", p, tr), mul(A, tr == Trans, X).v, B.v, 20*tolOf(p))
		}
		// Singular: the second column of [[1 2] [2 4]] (column-major
		// {1 2 2 4}) is twice the first, so U[1][1] = 0: info = 2.
		dA := se.put(t, p, []float64{1, 2, 2, 4})
		ipiv := upload(t, se.d, make([]int32, 2))
		must(t, s.Getrf(h, p, 2, 2, dA, 2, se.work(t, p, 64), ipiv, info))
		if in := se.info(t, info, 1); in[0] != 2 {
			t.Errorf("%vgetrf of a singular matrix: info %d, want 2", p, in[0])
		}
		// Pivoting picks the row of 2 (by hand): ipiv[0] = 2.
		if pv := se.info(t, ipiv, 2); pv[0] != 2 {
			t.Errorf("%vgetrf pivots %v, want [2 ...]", p, pv)
		}

		// cuBLAS's batched LU and solve.
		const bn = 4
		mats := []mat{randMat(r, bn, bn), randMat(r, bn, bn)}
		rhs := randMat(r, bn, 2)
		var ap, bp []uint64
		for _, m := range mats {
			ap = append(ap, uint64(se.put(t, p, m.v)))
			bp = append(bp, uint64(se.put(t, p, rhs.v)))
		}
		aarr, barr := upload(t, se.d, ap), upload(t, se.d, bp)
		piv := upload(t, se.d, make([]int32, 2*bn))
		must(t, se.bs.GetrfBatched(se.bh, p, bn, aarr, bn, piv, info, 2))
		if in := se.info(t, info, 2); in[0] != 0 || in[1] != 0 {
			t.Errorf("getrfBatched info %v", in)
		}
		bad, err := se.bs.GetrsBatched(se.bh, p, NoTrans, bn, 2, aarr, bn, piv, barr, bn, 2)
		must(t, err)
		if bad != 0 {
			t.Errorf("getrsBatched info %d", bad)
		}
		for i, m := range mats {
			x := mat{bn, 2, se.get(t, p, DevicePtr(bp[i]), 2*bn)}
			checkClose(t, fmt.Sprintf("cublas%vgetrsBatched [%d]", p, i), mul(m, false, x).v, rhs.v, 20*tolOf(p))
		}
		// A bad leading dimension comes back in the host info: -5.
		bad, err = se.bs.GetrsBatched(se.bh, p, NoTrans, bn, 2, aarr, 1, piv, barr, bn, 2)
		if !errors.Is(err, BLASInvalidValue) || bad != -5 {
			t.Errorf("getrsBatched lda=1: %v, info %d, want CUBLAS_STATUS_INVALID_VALUE and -5", err, bad)
		}
	}
}

// TestTrsm: the four orientations of a triangular solve against the
// product, and the batched form.
func TestTrsm(t *testing.T) {
	se := setupSolver(t)
	r := rand.New(rand.NewPCG(13, 14))
	for _, p := range []Precision{Single, Double} {
		const m, n = 4, 3
		for _, side := range []Side{Left, Right} {
			for _, uplo := range []Fill{Lower, Upper} {
				for _, tr := range []Op{NoTrans, Trans} {
					for _, dg := range []Diag{NonUnit, Unit} {
						k := m
						if side == Right {
							k = n
						}
						// A triangular with a strong diagonal; the other
						// triangle holds garbage that must not be read.
						A := randMat(r, k, k)
						T := mat{k, k, make([]float64, k*k)}
						for j := 0; j < k; j++ {
							for i := 0; i < k; i++ {
								in := (uplo == Lower && i >= j) || (uplo == Upper && i <= j)
								if i == j {
									A.v[i+j*k] += 3
								}
								if in {
									T.v[i+j*k] = A.v[i+j*k]
								}
								if i == j && dg == Unit {
									T.v[i+j*k] = 1
								}
							}
						}
						B := randMat(r, m, n)
						const alpha = 0.5
						dA, dB := se.put(t, p, A.v), se.put(t, p, B.v)
						must(t, se.bs.Trsm(se.bh, p, side, uplo, tr, dg, m, n, alpha, dA, k, dB, m))
						X := mat{m, n, se.get(t, p, dB, m*n)}
						var got mat
						if side == Left {
							got = mul(T, tr == Trans, X)
						} else if tr == Trans {
							got = mul(X, false, transpose(T))
						} else {
							got = mul(X, false, T)
						}
						want := make([]float64, len(B.v))
						for i, x := range B.v {
							want[i] = alpha * x
						}
						checkClose(t, fmt.Sprintf("%vtrsm side=%d uplo=%d trans=%d diag=%d", p, side, uplo, tr, dg), got.v, want, 20*tolOf(p))

						if side == Left && uplo == Lower && tr == NoTrans && dg == NonUnit {
							// Batched: the same problem twice.
							var ap, bp []uint64
							for range 2 {
								ap = append(ap, uint64(se.put(t, p, A.v)))
								bp = append(bp, uint64(se.put(t, p, B.v)))
							}
							must(t, se.bs.TrsmBatched(se.bh, p, side, uplo, tr, dg, m, n, alpha, upload(t, se.d, ap), k, upload(t, se.d, bp), m, 2))
							for i := range 2 {
								checkClose(t, fmt.Sprintf("%vtrsmBatched [%d]", p, i), se.get(t, p, DevicePtr(bp[i]), m*n), X.v, tolOf(p))
							}
						}
					}
				}
			}
		}
		if err := se.bs.Trsm(se.bh, p, Left, Lower, NoTrans, NonUnit, m, n, 1, 0, m-1, 0, m); !errors.Is(err, BLASInvalidValue) {
			t.Errorf("trsm lda < m: %v", err)
		}
	}
	// A handle cuBLAS did not make.
	if err := se.bs.Trsm(Handle(12345), Double, Left, Lower, NoTrans, NonUnit, 1, 1, 1, 0, 1, 0, 1); !errors.Is(err, BLASNotInitialized) {
		t.Errorf("trsm with a bad handle: %v", err)
	}
}

// TestQR: Geqrf then Orgqr give Q with orthonormal columns and R upper
// triangular with Q·R = A.
func TestQR(t *testing.T) {
	se := setupSolver(t)
	s, h := se.s, se.h
	r := rand.New(rand.NewPCG(15, 16))
	info := upload(t, se.d, make([]int32, 1))
	for _, p := range []Precision{Single, Double} {
		const m, n = 5, 3
		A := randMat(r, m, n)
		dA := se.put(t, p, A.v)
		tau := se.put(t, p, make([]float64, n))
		lw, err := s.GeqrfBufferSize(h, p, m, n, dA, m)
		must(t, err)
		must(t, s.Geqrf(h, p, m, n, dA, m, tau, se.work(t, p, lw), lw, info))
		fact := se.get(t, p, dA, m*n)
		R := mat{n, n, make([]float64, n*n)}
		for j := 0; j < n; j++ {
			for i := 0; i <= j; i++ {
				R.v[i+j*n] = fact[i+j*m]
			}
		}
		lw, err = s.OrgqrBufferSize(h, p, m, n, n, dA, m, tau)
		must(t, err)
		must(t, s.Orgqr(h, p, m, n, n, dA, m, tau, se.work(t, p, lw), lw, info))
		Q := mat{m, n, se.get(t, p, dA, m*n)}
		if in := se.info(t, info, 1); in[0] != 0 {
			t.Errorf("info %d", in[0])
		}
		checkClose(t, fmt.Sprintf("%vorgqr: QᵀQ", p), mul(Q, true, Q).v, eye(n).v, 10*tolOf(p))
		checkClose(t, fmt.Sprintf("%vgeqrf: Q·R", p), mul(Q, false, R).v, A.v, 10*tolOf(p))
		// A workspace smaller than reported: info = -8, the workspace
		// argument.
		if err := s.Geqrf(h, p, m, n, dA, m, tau, se.work(t, p, 1), 0, info); !errors.Is(err, SolverInvalidValue) {
			t.Errorf("geqrf lwork=0: %v", err)
		} else if in := se.info(t, info, 1); in[0] != -8 {
			t.Errorf("geqrf lwork=0: info %d, want -8", in[0])
		}
	}
}

// TestEigen: Syevd and SyevjBatched give ascending eigenvalues and
// orthonormal vectors with A·V = V·diag(w); a hand-checked 2×2.
func TestEigen(t *testing.T) {
	se := setupSolver(t)
	s, h := se.s, se.h
	r := rand.New(rand.NewPCG(17, 18))
	info := upload(t, se.d, make([]int32, 3))
	check := func(name string, p Precision, A mat, w, vec []float64) {
		t.Helper()
		n := A.r
		for i := 1; i < n; i++ {
			if w[i] < w[i-1] {
				t.Errorf("%s: eigenvalues not ascending: %v", name, w)
			}
		}
		V := mat{n, n, vec}
		VW := mat{n, n, make([]float64, n*n)}
		for j := 0; j < n; j++ {
			for i := 0; i < n; i++ {
				VW.v[i+j*n] = V.at(i, j) * w[j]
			}
		}
		checkClose(t, name+": VᵀV", mul(V, true, V).v, eye(n).v, 10*tolOf(p))
		checkClose(t, name+": A·V", mul(A, false, V).v, VW.v, 20*tolOf(p))
	}
	for _, p := range []Precision{Single, Double} {
		// [[2 1] [1 2]] has eigenvalues 1 and 3 (by hand).
		dA := se.put(t, p, []float64{2, 1, 1, 2})
		dW := se.put(t, p, make([]float64, 2))
		lw, err := s.SyevdBufferSize(h, p, Vectors, Upper, 2, dA, 2, dW)
		must(t, err)
		must(t, s.Syevd(h, p, Vectors, Upper, 2, dA, 2, dW, se.work(t, p, lw), lw, info))
		checkClose(t, fmt.Sprintf("%vsyevd 2×2", p), se.get(t, p, dW, 2), []float64{1, 3}, tolOf(p))

		for _, uplo := range []Fill{Lower, Upper} {
			const n = 5
			A := randMat(r, n, n)
			A = mat{n, n, func() []float64 { // symmetrise
				v := make([]float64, n*n)
				for j := 0; j < n; j++ {
					for i := 0; i < n; i++ {
						v[i+j*n] = A.at(i, j) + A.at(j, i)
					}
				}
				return v
			}()}
			// Only the uplo triangle is read: spoil the other.
			stored := append([]float64(nil), A.v...)
			for j := 0; j < n; j++ {
				for i := 0; i < n; i++ {
					if (uplo == Lower && i < j) || (uplo == Upper && i > j) {
						stored[i+j*n] = 99
					}
				}
			}
			dA := se.put(t, p, stored)
			dW := se.put(t, p, make([]float64, n))
			lw, err := s.SyevdBufferSize(h, p, Vectors, uplo, n, dA, n, dW)
			must(t, err)
			must(t, s.Syevd(h, p, Vectors, uplo, n, dA, n, dW, se.work(t, p, lw), lw, info))
			check(fmt.Sprintf("%vsyevd uplo=%d", p, uplo), p, A, se.get(t, p, dW, n), se.get(t, p, dA, n*n))
		}

		// Batched Jacobi.
		params, err := s.CreateSyevjInfo()
		must(t, err)
		const n, batch = 4, 3
		var all []float64
		var mats []mat
		for range batch {
			m := spd(r, n)
			mats = append(mats, m)
			all = append(all, m.v...)
		}
		dA = se.put(t, p, all)
		dW = se.put(t, p, make([]float64, n*batch))
		lw, err = s.SyevjBatchedBufferSize(h, p, Vectors, Lower, n, dA, n, dW, params, batch)
		must(t, err)
		must(t, s.SyevjBatched(h, p, Vectors, Lower, n, dA, n, dW, se.work(t, p, lw), lw, info, params, batch))
		w, vec := se.get(t, p, dW, n*batch), se.get(t, p, dA, n*n*batch)
		for b := range batch {
			check(fmt.Sprintf("%vsyevjBatched [%d]", p, b), p, mats[b], w[b*n:(b+1)*n], vec[b*n*n:(b+1)*n*n])
		}
		// n > 32 is refused.
		if _, err := s.SyevjBatchedBufferSize(h, p, Vectors, Lower, 33, dA, 33, dW, params, 1); !errors.Is(err, SolverInvalidValue) {
			t.Errorf("syevjBatched n=33: %v", err)
		}
		must(t, s.DestroySyevjInfo(params))
	}
}

// TestSVD: Gesvd (m >= n, all and economy) and GesvdjBatched (m < n):
// U·diag(S)·Vᵀ = A with orthonormal factors and descending S.
func TestSVD(t *testing.T) {
	se := setupSolver(t)
	s, h := se.s, se.h
	r := rand.New(rand.NewPCG(19, 20))
	info := upload(t, se.d, make([]int32, 2))
	recon := func(name string, p Precision, A, U mat, S []float64, Vt mat) {
		t.Helper()
		k := len(S)
		for i := 1; i < k; i++ {
			if S[i] > S[i-1] || S[i] < 0 {
				t.Errorf("%s: singular values %v", name, S)
			}
		}
		US := mat{U.r, k, make([]float64, U.r*k)}
		for j := 0; j < k; j++ {
			for i := 0; i < U.r; i++ {
				US.v[i+j*U.r] = U.at(i, j) * S[j]
			}
		}
		Vk := mat{k, Vt.c, make([]float64, k*Vt.c)}
		for j := 0; j < Vt.c; j++ {
			for i := 0; i < k; i++ {
				Vk.v[i+j*k] = Vt.at(i, j)
			}
		}
		checkClose(t, name+": U·S·Vᵀ", mul(US, false, Vk).v, A.v, 20*tolOf(p))
		checkClose(t, name+": UᵀU", mul(U, true, U).v, eye(U.c).v, 10*tolOf(p))
		checkClose(t, name+": V·Vᵀ", mul(transpose(Vt), true, transpose(Vt)).v, eye(Vt.r).v, 10*tolOf(p))
	}
	for _, p := range []Precision{Single, Double} {
		const m, n = 5, 3
		A := randMat(r, m, n)
		for _, job := range []byte{'A', 'S'} {
			ucols := m
			if job == 'S' {
				ucols = n
			}
			dA := se.put(t, p, A.v)
			dS, dU, dVt := se.put(t, p, make([]float64, n)), se.put(t, p, make([]float64, m*ucols)), se.put(t, p, make([]float64, n*n))
			lw, err := s.GesvdBufferSize(h, p, m, n)
			must(t, err)
			must(t, s.Gesvd(h, p, job, job, m, n, dA, m, dS, dU, m, dVt, n, se.work(t, p, lw), lw, 0, info))
			if in := se.info(t, info, 1); in[0] != 0 {
				t.Errorf("info %d", in[0])
			}
			recon(fmt.Sprintf("%vgesvd job=%c", p, job), p, A, mat{m, ucols, se.get(t, p, dU, m*ucols)}, se.get(t, p, dS, n), mat{n, n, se.get(t, p, dVt, n*n)})
		}
		// cuSOLVER's gesvd needs m >= n: argument 5 (n) is refused.
		lw, err := s.GesvdBufferSize(h, p, m, n)
		must(t, err)
		if err := s.Gesvd(h, p, 'N', 'N', 2, 3, se.put(t, p, make([]float64, 6)), 2, se.put(t, p, make([]float64, 3)), 0, 1, 0, 1, se.work(t, p, lw), lw, 0, info); !errors.Is(err, SolverInvalidValue) {
			t.Errorf("gesvd m < n: %v", err)
		} else if in := se.info(t, info, 1); in[0] != -5 {
			t.Errorf("gesvd m < n: info %d, want -5", in[0])
		}
		// A rank-1 2×3 matrix, u·vᵀ with u = (1 2) and v = (1 1 1): its
		// singular values are ‖u‖·‖v‖ = √5·√3 = √15 and 0 (by hand).
		params, err := s.CreateGesvdjInfo()
		must(t, err)
		const bm, bn, batch = 2, 3, 2
		rank1 := mat{bm, bn, []float64{1, 2, 1, 2, 1, 2}}
		mats := []mat{rank1, randMat(r, bm, bn)}
		dA := se.put(t, p, append(append([]float64(nil), mats[0].v...), mats[1].v...))
		dS := se.put(t, p, make([]float64, bm*batch))
		dU := se.put(t, p, make([]float64, bm*bm*batch))
		dV := se.put(t, p, make([]float64, bn*bn*batch))
		lw, err = s.GesvdjBatchedBufferSize(h, p, Vectors, bm, bn, dA, bm, dS, dU, bm, dV, bn, params, batch)
		must(t, err)
		must(t, s.GesvdjBatched(h, p, Vectors, bm, bn, dA, bm, dS, dU, bm, dV, bn, se.work(t, p, lw), lw, info, params, batch))
		S, U, V := se.get(t, p, dS, bm*batch), se.get(t, p, dU, bm*bm*batch), se.get(t, p, dV, bn*bn*batch)
		checkClose(t, fmt.Sprintf("%vgesvdjBatched rank 1", p), S[:2], []float64{math.Sqrt(15), 0}, tolOf(p))
		for b := range batch {
			Vt := transpose(mat{bn, bn, V[b*bn*bn : (b+1)*bn*bn]})
			recon(fmt.Sprintf("%vgesvdjBatched [%d]", p, b), p, mats[b], mat{bm, bm, U[b*bm*bm : (b+1)*bm*bm]}, S[b*bm:(b+1)*bm], Vt)
		}
		must(t, s.DestroyGesvdjInfo(params))
	}
}

// TestSolverErrors: argument checks, handles and the error values.
func TestSolverErrors(t *testing.T) {
	se := setupSolver(t)
	s := se.s
	info := upload(t, se.d, make([]int32, 1))
	a := upload(t, se.d, make([]float64, 16))
	// lda < n: argument 5 of potrf.
	if err := s.Potrf(se.h, Double, Lower, 4, a, 3, a, 64, info); !errors.Is(err, SolverInvalidValue) {
		t.Errorf("potrf lda < n: %v", err)
	} else if in := se.info(t, info, 1); in[0] != -5 {
		t.Errorf("potrf lda < n: info %d, want -5", in[0])
	}
	if _, err := s.PotrfBufferSize(se.h, Double, Fill(7), 4, a, 4); !errors.Is(err, SolverInvalidValue) {
		t.Errorf("potrf_bufferSize uplo 7: %v", err)
	}
	if err := s.Potrf(se.h, Precision(5), Lower, 4, a, 4, a, 64, info); err == nil {
		t.Error("precision 5 accepted")
	}
	if err := s.Getrf(se.h, Double, 1<<40, 1, a, 1, a, 0, info); err == nil {
		t.Error("m = 2^40 accepted")
	}
	h2, err := s.Create()
	must(t, err)
	must(t, s.Destroy(h2))
	if err := s.Destroy(h2); !errors.Is(err, SolverNotInitialized) {
		t.Errorf("second Destroy: %v", err)
	}
	if err := s.SetStream(h2, 0); !errors.Is(err, SolverNotInitialized) {
		t.Errorf("SetStream on a destroyed handle: %v", err)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{SolverInvalidValue, "CUSOLVER_STATUS_INVALID_VALUE (3): an invalid value was passed"},
		{SolverNotInitialized, "CUSOLVER_STATUS_NOT_INITIALIZED (1): the library or handle was not initialized"},
		{SolverStatus(77), "cusolverStatus_t(77)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if SolverSuccess.err() != nil {
		t.Error("CUSOLVER_STATUS_SUCCESS is an error")
	}
}

// TestLoadMissingSymbolLibs: a cuFFT, cuSOLVER or cuBLAS lacking one bound
// function does not load, and the error names the function; the
// environment override is tried first and reported.
func TestLoadMissingSymbolLibs(t *testing.T) {
	for _, c := range []struct {
		lib  string
		syms []symbol
		skip string
		load func([]candidate) error
	}{
		{"libcufft", (&CUFFT{}).symbols(), "cufftExecZ2D", func(c []candidate) error { _, err := loadCUFFT(c); return err }},
		{"libcusolver", (&CUSOLVER{}).symbols(), "cusolverDnDgesvdjBatched_bufferSize", func(c []candidate) error { _, err := loadCUSOLVER(c); return err }},
		{"libcublas", (&BLASSolve{}).symbols(), "cublasDgetrsBatched", func(c []candidate) error { _, err := loadBLASSolve(c); return err }},
	} {
		t.Run(c.lib, func(t *testing.T) {
			partial := buildStub(t, c.lib+"-partial", stubSource(c.syms, c.skip))
			err := c.load([]candidate{{partial, "test"}})
			if !errors.Is(err, ErrMissingSymbol) || !strings.Contains(err.Error(), c.skip) {
				t.Errorf("loading without %s: %v", c.skip, err)
			}
			full := buildStub(t, c.lib+"-full", stubSource(c.syms, ""))
			if err := c.load([]candidate{{full, "test"}}); err != nil {
				t.Errorf("complete stub: %v", err)
			}
		})
	}
	for _, c := range []struct {
		spec    libSpec
		env     string
		sonames []string
	}{
		{cufftSpec, "LOOM_LIBCUFFT", []string{"libcufft.so.12", "libcufft.so.11"}},
		{cusolverSpec, "LOOM_LIBCUSOLVER", []string{"libcusolver.so.12", "libcusolver.so.11"}},
	} {
		cands := c.spec.candidates(func(k string) string {
			if k == c.env {
				return "/x/override.so"
			}
			return ""
		})
		if len(cands) < 3 || cands[0].path != "/x/override.so" || cands[1].path != c.sonames[0] || cands[2].path != c.sonames[1] {
			t.Errorf("%s candidates %v", c.spec.what, cands)
		}
	}
}

// cmat is a column-major complex matrix for the checks.
type cmat struct {
	r, c int
	v    []complex128
}

func (m cmat) at(i, j int) complex128 { return m.v[i+j*m.r] }

func randCMat(r *rand.Rand, rows, cols int) cmat {
	m := cmat{rows, cols, make([]complex128, rows*cols)}
	for i := range m.v {
		m.v[i] = complex(r.Float64()*2-1, r.Float64()*2-1)
	}
	return m
}

// cmul is op(a)·b by the definition (op 0: a, 1: aᵀ, 2: aᴴ).
func cmul(a cmat, op int, b cmat) cmat {
	ar, ac := a.r, a.c
	get := a.at
	switch op {
	case 1:
		ar, ac = a.c, a.r
		get = func(i, j int) complex128 { return a.at(j, i) }
	case 2:
		ar, ac = a.c, a.r
		get = func(i, j int) complex128 { return cmplx.Conj(a.at(j, i)) }
	}
	out := cmat{ar, b.c, make([]complex128, ar*b.c)}
	for j := 0; j < b.c; j++ {
		for i := 0; i < ar; i++ {
			var s complex128
			for k := 0; k < ac; k++ {
				s += get(i, k) * b.at(k, j)
			}
			out.v[i+j*ar] = s
		}
	}
	return out
}

func (se *solverEnv) putC(t *testing.T, p Precision, v []complex128) DevicePtr {
	t.Helper()
	if p == DoubleComplex {
		return upload(t, se.d, v)
	}
	f := make([]complex64, len(v))
	for i, x := range v {
		f[i] = complex64(x)
	}
	return upload(t, se.d, f)
}

func (se *solverEnv) getC(t *testing.T, p Precision, ptr DevicePtr, n int) []complex128 {
	t.Helper()
	must(t, se.d.CtxSynchronize())
	out := make([]complex128, n)
	if p == DoubleComplex {
		download(t, se.d, out, ptr)
		return out
	}
	f := make([]complex64, n)
	download(t, se.d, f, ptr)
	for i, x := range f {
		out[i] = complex128(x)
	}
	return out
}

// TestComplexCholeskyLU: the C and Z Potrf/Potrs (Hermitian positive
// definite, both triangles) and Getrf/Getrs (all three operations), by
// reconstruction; a Hermitian matrix that is not positive definite.
func TestComplexCholeskyLU(t *testing.T) {
	se := setupSolver(t)
	s, h := se.s, se.h
	r := rand.New(rand.NewPCG(21, 22))
	info := upload(t, se.d, make([]int32, 1))
	for _, p := range []Precision{SingleComplex, DoubleComplex} {
		tol := 1e-10
		if p == SingleComplex {
			tol = 2e-4
		}
		work := func(n int) DevicePtr { return upload(t, se.d, make([]complex128, max(n, 1))) }
		const n, nrhs = 5, 2
		// A = B·Bᴴ + n·I is Hermitian positive definite.
		B0 := randCMat(r, n, n)
		A := cmul(B0, 0, cmat{n, n, cmul(B0, 2, eyeC(n)).v})
		for i := 0; i < n; i++ {
			A.v[i+i*n] += n
		}
		for _, uplo := range []Fill{Lower, Upper} {
			rhs := randCMat(r, n, nrhs)
			dA, dB := se.putC(t, p, A.v), se.putC(t, p, rhs.v)
			lw, err := s.PotrfBufferSize(h, p, uplo, n, dA, n)
			must(t, err)
			must(t, s.Potrf(h, p, uplo, n, dA, n, work(lw), lw, info))
			if in := se.info(t, info, 1); in[0] != 0 {
				t.Fatalf("%vpotrf info %d", p, in[0])
			}
			must(t, s.Potrs(h, p, uplo, n, nrhs, dA, n, dB, n, info))
			X := cmat{n, nrhs, se.getC(t, p, dB, n*nrhs)}
			checkComplex(t, fmt.Sprintf("%vpotrs uplo=%d: A·X", p, uplo), cmul(A, 0, X).v, rhs.v, 10*tol)
		}
		// [[1 2i] [-2i 1]] is Hermitian with determinant 1 - 4 = -3 (by
		// hand): not positive definite at order 2.
		dA := se.putC(t, p, []complex128{1, -2i, 2i, 1})
		must(t, s.Potrf(h, p, Lower, 2, dA, 2, work(64), 64, info))
		if in := se.info(t, info, 1); in[0] != 2 {
			t.Errorf("%vpotrf of an indefinite matrix: info %d, want 2", p, in[0])
		}

		G := randCMat(r, n, n)
		for _, op := range []Op{NoTrans, Trans, ConjTrans} {
			rhs := randCMat(r, n, nrhs)
			dA, dB := se.putC(t, p, G.v), se.putC(t, p, rhs.v)
			ipiv := upload(t, se.d, make([]int32, n))
			lw, err := s.GetrfBufferSize(h, p, n, n, dA, n)
			must(t, err)
			must(t, s.Getrf(h, p, n, n, dA, n, work(lw), ipiv, info))
			must(t, s.Getrs(h, p, op, n, nrhs, dA, n, ipiv, dB, n, info))
			X := cmat{n, nrhs, se.getC(t, p, dB, n*nrhs)}
			checkComplex(t, fmt.Sprintf("%vgetrs op=%d", p, op), cmul(G, int(op), X).v, rhs.v, 20*tol)
		}
	}
	// The other routines have no complex variant bound.
	if _, err := s.GeqrfBufferSize(h, DoubleComplex, 2, 2, 0, 2); err == nil {
		t.Error("a complex geqrf was accepted")
	}
}

func eyeC(n int) cmat {
	m := cmat{n, n, make([]complex128, n*n)}
	for i := 0; i < n; i++ {
		m.v[i+i*n] = 1
	}
	return m
}

package gemm

import "unsafe"

// The serial entry points of the linear-algebra kernels (exec/cpu's
// blocked Cholesky, LU and triangular solves), which call many products
// of changing shapes from inside one worker: each runs as one task on
// the calling goroutine with the caller's workspace, and does not
// allocate.

// SerialWorkspace64 is the workspace DgemmSerial needs for products whose
// dimensions are all at most maxDim.
func SerialWorkspace64(maxDim int) int {
	k := kern64
	pad := alignBytes / int(unsafe.Sizeof(float64(0)))
	packed := roundUp(k.mc*k.kcMax, pad) + roundUp(k.kcMax*k.nc, pad) + roundUp(k.mr*k.nr, pad) + pad
	vec := 2*roundUp(max(maxDim, 1), pad) + 8*pad
	return max(packed, vec)
}

// DgemmSerial computes C = alpha·op(A)·op(B) + beta·C as Dgemm does, in
// one task on the calling goroutine, with ws of at least
// SerialWorkspace64(max(m, n, k)) elements. It does not allocate.
func DgemmSerial(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, ws []float64) {
	p := newSerialPlan(kern64, transA, transB, m, n, k)
	p.run(0, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// DgemmSerialUntil is DgemmSerial that stops early once done is closed,
// as Plan64.RunUntil: it reports whether the product ran to the end (when
// not, C holds partial results). A nil done is never closed.
func DgemmSerialUntil(done <-chan struct{}, transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, ws []float64) bool {
	p := newSerialPlan(kern64, transA, transB, m, n, k)
	return p.runUntil(done, 0, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// newSerialPlan is newPlan for one thread without the task-grid search
// (which allocates): one task covering C.
func newSerialPlan[T float](kern *kernel[T], transA, transB bool, m, n, k int) plan[T] {
	p := plan[T]{transA: transA, transB: transB, m: m, n: n, k: k, kern: kern,
		gm: 1, gn: 1, tm: m, tn: n}
	if m <= 0 || n <= 0 {
		return newPlan(kern, transA, transB, m, n, k, 1)
	}
	if k == 0 || m*n*k <= smallWork {
		p.small = true
		return p
	}
	mr, nr := kern.mr, kern.nr
	nkb := (k + kern.kcMax - 1) / kern.kcMax
	p.kc = min(roundUp((k+nkb-1)/nkb, 4), kern.kcMax)
	if mode, alongM := vecMode(transA, transB, m, n); mode != vecNone && kern.vec != nil {
		p.planVec(mode, alongM, 1)
		return p
	}
	p.tm, p.tn = roundUp(m, mr), roundUp(n, nr)
	p.mc = min(kern.mc, roundUp(p.tm, mr))
	p.nc = min(kern.nc, roundUp(p.tn, nr))
	pad := alignBytes / int(unsafe.Sizeof(T(0)))
	p.offB = roundUp(p.mc*p.kc, pad)
	p.offC = p.offB + roundUp(p.kc*p.nc, pad)
	p.ws = p.offC + roundUp(mr*nr, pad) + pad
	return p
}

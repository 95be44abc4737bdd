package gemm

import "sync"

// Plan32 is a float32 matrix product of fixed dimensions and
// transposition, prepared once: C = alpha·op(A)·op(B) + beta·C with op(A)
// m×k, op(B) k×n and C m×n, all row-major.
//
// A Plan32 is immutable and may be used by any number of goroutines at once.
type Plan32 struct{ p plan[float32] }

// NewPlan32 prepares the product for running on up to threads workers.
// threads only shapes the split into tasks, never the results.
func NewPlan32(transA, transB bool, m, n, k int, threads int) *Plan32 {
	return &Plan32{newPlan(kern32, transA, transB, m, n, k, threads)}
}

// Tasks is the number of independent tasks the product splits into (at
// least 1). Each task computes a disjoint block of C and packs what it
// needs itself, so tasks can run concurrently with no synchronisation.
func (p *Plan32) Tasks() int { return p.p.tasks() }

// WorkspaceFloats is the size of the scratch that one running task needs
// (packed panels); it may be 0.
func (p *Plan32) WorkspaceFloats() int { return p.p.ws }

// Run computes task t: C's block t of alpha·op(A)·op(B) + beta·C. ws has at
// least WorkspaceFloats elements and must not be used by another task at
// the same time. When beta is zero C is only written, never read. C must
// not overlap A or B. Run does not allocate.
func (p *Plan32) Run(t int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ws []float32) {
	p.p.run(t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// RunUntil is Run that stops early once done is closed: it checks done
// between blocks of bounded work (a packed block of A against a panel of
// B: at most mc·kc·nc multiply-adds, a few ms; about a million in the
// matrix-vector paths and per million elements of C when only scaling)
// and reports whether the task ran to the end. When it did not, C's block
// holds partial results. A nil done is never closed (Run). Results are
// bit-identical to Run's.
func (p *Plan32) RunUntil(done <-chan struct{}, t int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, ws []float32) bool {
	return p.p.runUntil(done, t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, planning, allocating and
// running all tasks, on `threads` goroutines when threads > 1.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmThreads(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1)
}

// SgemmThreads is Sgemm on up to threads goroutines.
func SgemmThreads(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, threads int) {
	sgemmThreads(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, threads)
}

func sgemmThreads(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, threads int) {
	p := newPlan(kern32, transA, transB, m, n, k, threads)
	runAll(&p, alpha, a, lda, b, ldb, beta, c, ldc, threads)
}

// Plan64 is Plan32 for float64.
type Plan64 struct{ p plan[float64] }

// NewPlan64 is NewPlan32 for float64.
func NewPlan64(transA, transB bool, m, n, k int, threads int) *Plan64 {
	return &Plan64{newPlan(kern64, transA, transB, m, n, k, threads)}
}

// Tasks: see Plan32.Tasks.
func (p *Plan64) Tasks() int { return p.p.tasks() }

// WorkspaceFloats: see Plan32.WorkspaceFloats (in float64 elements).
func (p *Plan64) WorkspaceFloats() int { return p.p.ws }

// Run: see Plan32.Run.
func (p *Plan64) Run(t int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, ws []float64) {
	p.p.run(t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// RunUntil: see Plan32.RunUntil.
func (p *Plan64) RunUntil(done <-chan struct{}, t int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, ws []float64) bool {
	return p.p.runUntil(done, t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// Dgemm is Sgemm for float64.
func Dgemm(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	DgemmThreads(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1)
}

// DgemmThreads is Dgemm on up to threads goroutines.
func DgemmThreads(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int, threads int) {
	p := newPlan(kern64, transA, transB, m, n, k, threads)
	runAll(&p, alpha, a, lda, b, ldb, beta, c, ldc, threads)
}

func runAll[T float](p *plan[T], alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, threads int) {
	nt := p.tasks()
	workers := min(max(threads, 1), nt)
	if workers == 1 {
		ws := make([]T, p.ws)
		for t := 0; t < nt; t++ {
			p.run(t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := make([]T, p.ws)
			for {
				mu.Lock()
				t := next
				next++
				mu.Unlock()
				if t >= nt {
					return
				}
				p.run(t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
			}
		}()
	}
	wg.Wait()
}

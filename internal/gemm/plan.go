package gemm

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/loomgraph/loom/internal/stop"
)

// plan is the element-type-generic body of Plan32 and Plan64.
type plan[T float] struct {
	transA, transB bool
	m, n, k        int
	kern           *kernel[T]
	small          bool // direct loops, no packing (tiny products)
	vec            int  // matrix-vector path (vec.go), or vecNone
	vecAlongM      bool // the matrix-vector output is C's column (else row)
	kc             int  // k block: depends on k and the kernel only
	mc, nc         int  // rows of A / columns of B packed at a time
	tm, tn         int  // task tile (multiples of mr / nr)
	gm, gn         int  // task grid
	offB, offC     int  // workspace layout (elements, from the aligned base)
	ws             int  // workspace size, alignment slack included
}

const alignBytes = 64

// smallWork: products with m·n·k at most this are computed by direct loops.
const smallWork = 4 * 4 * 4

func newPlan[T float](kern *kernel[T], transA, transB bool, m, n, k, threads int) plan[T] {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	threads = max(threads, 1)
	p := plan[T]{transA: transA, transB: transB, m: m, n: n, k: k, kern: kern,
		gm: 1, gn: 1, tm: m, tn: n}
	if m == 0 || n == 0 {
		return p
	}
	if k == 0 || m*n*k <= smallWork {
		// k == 0 (C = beta·C) and tiny products: one task, no workspace.
		p.small = true
		return p
	}
	mr, nr := kern.mr, kern.nr
	nkb := (k + kern.kcMax - 1) / kern.kcMax
	p.kc = min(roundUp((k+nkb-1)/nkb, 4), kern.kcMax)
	if mode, alongM := vecMode(transA, transB, m, n); mode != vecNone && kern.vec != nil {
		p.planVec(mode, alongM, threads)
		return p
	}
	p.tiles(threads)
	p.mc = min(kern.mc, roundUp(p.tm, mr))
	p.nc = min(kern.nc, roundUp(p.tn, nr))
	pad := alignBytes / int(unsafe.Sizeof(T(0)))
	p.offB = roundUp(p.mc*p.kc, pad)
	p.offC = p.offB + roundUp(p.kc*p.nc, pad)
	p.ws = p.offC + roundUp(mr*nr, pad) + pad
	return p
}

// tiles chooses the task grid: the split that minimises the modelled time
// on `threads` workers (compute, packing and a fixed cost per task), with
// tile edges on the micro-kernel grid. It never affects the results.
func (p *plan[T]) tiles(threads int) {
	mr, nr := p.kern.mr, p.kern.nr
	mt, nt := ceilDiv(p.m, mr), ceilDiv(p.n, nr)
	k := float64(p.k)
	// cost units: one FMA of the micro-kernel; packing an element costs
	// about packCost, a task about taskCost.
	const packCost, taskCost = 8.0, 100000.0
	maxTasks := 1
	if threads > 1 {
		maxTasks = min(8*threads, 256)
	}
	type cand struct {
		gm, gn int
		cost   float64
	}
	var cands []cand
	minCost := 0.0
	for gm := 1; gm <= min(mt, maxTasks); gm++ {
		rm := ceilDiv(mt, gm)
		if ceilDiv(mt, rm) != gm {
			continue // same tiles as a smaller gm
		}
		for gn := 1; gm*gn <= maxTasks && gn <= nt; gn++ {
			cn := ceilDiv(nt, gn)
			if ceilDiv(nt, cn) != gn {
				continue
			}
			rows, cols := float64(rm*mr), float64(cn*nr)
			nA := float64(ceilDiv(cn*nr, p.kern.nc)) // A is packed once per nc columns
			task := rows*cols*k + packCost*(rows*k*nA+cols*k) + taskCost
			cost := float64(ceilDiv(gm*gn, threads)) * task
			cands = append(cands, cand{gm, gn, cost})
			if minCost == 0 || cost < minCost {
				minCost = cost
			}
		}
	}
	// among the near-best, the most tasks (dynamic balance on busy machines)
	best := cand{1, 1, math.Inf(1)}
	for _, c := range cands {
		if c.cost <= minCost*1.03 && (c.gm*c.gn > best.gm*best.gn ||
			c.gm*c.gn == best.gm*best.gn && c.cost < best.cost) {
			best = c
		}
	}
	p.gm, p.gn = best.gm, best.gn
	p.tm = ceilDiv(mt, p.gm) * mr
	p.tn = ceilDiv(nt, p.gn) * nr
	p.gm, p.gn = ceilDiv(p.m, p.tm), ceilDiv(p.n, p.tn)
}

func (p *plan[T]) tasks() int { return p.gm * p.gn }

func (p *plan[T]) checkArgs(a []T, lda int, b []T, ldb int, c []T, ldc int, ws []T) {
	ar, ac := p.m, p.k
	if p.transA {
		ar, ac = ac, ar
	}
	br, bc := p.k, p.n
	if p.transB {
		br, bc = bc, br
	}
	switch {
	case lda < max(1, ac):
		panic(fmt.Sprintf("gemm: lda %d < %d", lda, ac))
	case ldb < max(1, bc):
		panic(fmt.Sprintf("gemm: ldb %d < %d", ldb, bc))
	case ldc < max(1, p.n):
		panic(fmt.Sprintf("gemm: ldc %d < %d", ldc, p.n))
	}
	if p.m == 0 || p.n == 0 {
		return
	}
	if p.k > 0 && len(a) < (ar-1)*lda+ac {
		panic(fmt.Sprintf("gemm: len(a) %d < %d", len(a), (ar-1)*lda+ac))
	}
	if p.k > 0 && len(b) < (br-1)*ldb+bc {
		panic(fmt.Sprintf("gemm: len(b) %d < %d", len(b), (br-1)*ldb+bc))
	}
	if len(c) < (p.m-1)*ldc+p.n {
		panic(fmt.Sprintf("gemm: len(c) %d < %d", len(c), (p.m-1)*ldc+p.n))
	}
	if len(ws) < p.ws {
		panic(fmt.Sprintf("gemm: workspace has %d elements, want %d", len(ws), p.ws))
	}
}

// run computes task t.
func (p *plan[T]) run(t int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ws []T) {
	p.runUntil(nil, t, alpha, a, lda, b, ldb, beta, c, ldc, ws)
}

// runUntil computes task t, checking done (when not nil) between blocks of
// bounded work; it reports false when it stopped early because done was
// closed.
func (p *plan[T]) runUntil(done <-chan struct{}, t int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ws []T) bool {
	if t < 0 || t >= p.tasks() {
		panic(fmt.Sprintf("gemm: task %d out of range [0,%d)", t, p.tasks()))
	}
	p.checkArgs(a, lda, b, ldb, c, ldc, ws)
	if p.m == 0 || p.n == 0 {
		return true
	}
	i0 := t / p.gn * p.tm
	j0 := t % p.gn * p.tn
	i1, j1 := min(i0+p.tm, p.m), min(j0+p.tn, p.n)
	if alpha == 0 || p.k == 0 {
		return scale(done, beta, c, ldc, i0, i1, j0, j1)
	}
	if p.small {
		p.direct(alpha, a, lda, b, ldb, beta, c, ldc)
		return true
	}
	if p.vec != vecNone {
		return p.runVec(done, alpha, a, lda, b, ldb, beta, c, ldc, ws, i0, i1, j0, j1)
	}
	// align the workspace
	es := int(unsafe.Sizeof(T(0)))
	if mis := int(uintptr(unsafe.Pointer(&ws[0])) % alignBytes); mis != 0 {
		ws = ws[(alignBytes-mis)/es:]
	}
	kern := p.kern
	mr, nr, nr2 := kern.mr, kern.nr, 0
	if kern.narrow != nil {
		nr2 = kern.narrow.nr
	}
	pa, pb, tc := ws[:p.offB], ws[p.offB:p.offC], ws[p.offC:p.offC+mr*nr]
	for jc := j0; jc < j1; jc += p.nc {
		nb := min(p.nc, j1-jc)
		for pc := 0; pc < p.k; pc += p.kc {
			kb := min(p.kc, p.k-pc)
			packB(pb, b, ldb, p.transB, pc, kb, jc, nb, nr, nr2)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := i0; ic < i1; ic += p.mc {
				// mc·kc·nc multiply-adds per block: 67M (a few ms) at most
				if done != nil && stop.Done(done) {
					return false
				}
				mb := min(p.mc, i1-ic)
				packA(pa, a, lda, p.transA, ic, mb, pc, kb, mr)
				for jr := 0; jr < nb; jr += nr {
					nn := min(nr, nb-jr)
					kf, w := kern.fn, nr
					if nn <= nr2 {
						kf, w = kern.narrow.fn, nr2
					}
					bs := &pb[jr*kb]
					for ir := 0; ir < mb; ir += mr {
						mm := min(mr, mb-ir)
						as := &pa[ir*kb]
						co := (ic+ir)*ldc + jc + jr
						if mm == mr && nn == w {
							kf(kb, as, bs, &c[co], ldc, alpha, bet)
							continue
						}
						// edge block: through a full-size buffer, so that
						// the arithmetic is the kernel's
						if bet != 0 {
							for i := 0; i < mm; i++ {
								copy(tc[i*w:i*w+nn], c[co+i*ldc:co+i*ldc+nn])
							}
						}
						kf(kb, as, bs, &tc[0], w, alpha, bet)
						for i := 0; i < mm; i++ {
							copy(c[co+i*ldc:co+i*ldc+nn], tc[i*w:i*w+nn])
						}
					}
				}
			}
		}
	}
	return true
}

// checkElems is how many elements of C (scale) or multiply-adds (the
// matrix-vector paths) run between two checks of done.
const checkElems = 1 << 20

// scale sets C[i0:i1, j0:j1] to beta·C (zero when beta is zero, whatever C
// held); false when it stopped early because done was closed.
func scale[T float](done <-chan struct{}, beta T, c []T, ldc, i0, i1, j0, j1 int) bool {
	work := 0
	for i := i0; i < i1; i++ {
		if work += j1 - j0; work >= checkElems {
			if work = 0; stop.Done(done) {
				return false
			}
		}
		row := c[i*ldc+j0 : i*ldc+j1]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
	return true
}

// direct computes the whole product by plain loops (tiny products).
func (p *plan[T]) direct(alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	// strides of op(A)(i,l) and op(B)(l,j)
	sai, sal := lda, 1
	if p.transA {
		sai, sal = 1, lda
	}
	sbl, sbj := ldb, 1
	if p.transB {
		sbl, sbj = 1, ldb
	}
	for i := 0; i < p.m; i++ {
		for j := 0; j < p.n; j++ {
			var s T
			ai, bj := i*sai, j*sbj
			for l := 0; l < p.k; l++ {
				s += a[ai+l*sal] * b[l*sbl+bj]
			}
			s *= alpha
			if beta != 0 {
				s += beta * c[i*ldc+j]
			}
			c[i*ldc+j] = s
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }
func ceilDiv(x, m int) int { return (x + m - 1) / m }

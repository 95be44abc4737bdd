package gemm

import (
	"unsafe"

	"github.com/loomgraph/loom/internal/stop"
)

// Matrix-vector products (m == 1 or n == 1) without packing, on machines
// with vector kernels. With u the vector operand and W the matrix one:
//
//	vecAxpy: out[j] = alpha·Σ_l u[l]·W[l, j] + beta·out[j], W's rows
//	         contiguous in j: the same arithmetic as the micro-kernels
//	         (same k blocks, sums in k order, one FMA per term), so the
//	         result is what the general path gives.
//	vecDot:  out[i] = alpha·Σ_l W[i, l]·u[l] + beta·out[i], W's rows
//	         contiguous in l: dot products with several partial sums.
const (
	vecNone = iota
	vecAxpy
	vecDot
)

// vecMode chooses the matrix-vector path for a product, if any, and
// whether the output runs along m (C's column, n == 1) or along n (C's
// row, m == 1).
func vecMode(transA, transB bool, m, n int) (mode int, alongM bool) {
	switch {
	case n == 1 && !transA:
		return vecDot, true // rows of A · op(B)[:, 0]
	case m == 1 && transB:
		return vecDot, false // rows of B · op(A)[0, :]
	case m == 1:
		return vecAxpy, false // op(A)[0, :] · B
	case n == 1:
		return vecAxpy, true // op(B)[:, 0]ᵀ · op(A)ᵀ, A stored k×m
	}
	return vecNone, false
}

// planVec sets up a matrix-vector product: tasks split the output.
func (p *plan[T]) planVec(mode int, alongM bool, threads int) {
	p.vec, p.vecAlongM = mode, alongM
	length := p.n
	if alongM {
		length = p.m
	}
	tasks := 1
	if threads > 1 {
		tasks = min(threads, max(1, p.m*p.n*p.k>>16), ceilDiv(length, 64))
	}
	chunk := ceilDiv(length, tasks)
	if mode == vecAxpy {
		chunk = roundUp(chunk, 8*p.kern.vec.lanes)
	}
	if alongM {
		p.tm = chunk
		p.gm = ceilDiv(p.m, chunk)
	} else {
		p.tn = chunk
		p.gn = ceilDiv(p.n, chunk)
	}
	pad := alignBytes / int(unsafe.Sizeof(T(0)))
	p.offB = roundUp(p.k, pad) // u, when gathered
	p.offC = p.offB            // out buffer follows
	p.ws = p.offC + roundUp(chunk, pad)
}

// runVec computes the outputs [i0, i1) (n == 1) or [j0, j1) (m == 1),
// checking done between pieces of about checkElems multiply-adds; false
// when it stopped early.
func (p *plan[T]) runVec(done <-chan struct{}, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ws []T, i0, i1, j0, j1 int) bool {
	k := p.k
	// the vector operand u and its stride; the matrix W, its row stride,
	// and the offset of the first output in W's output direction
	var u, w []T
	var su, ldw, o0, o1, so int
	if p.vecAlongM {
		o0, o1, so = i0, i1, ldc
		if p.transB {
			u, su = b, 1
		} else {
			u, su = b, ldb
		}
		w, ldw = a, lda
	} else {
		o0, o1, so = j0, j1, 1
		if p.transA {
			u, su = a, lda
		} else {
			u, su = a, 1
		}
		w, ldw = b, ldb
	}
	if su != 1 {
		g := ws[:k]
		for l := range g {
			g[l] = u[l*su]
		}
		u = g
	}
	nout := o1 - o0
	vk := p.kern.vec
	if p.vec == vecDot {
		out := ws[p.offC : p.offC+nout]
		var tail uint64 = 1<<(k%vk.lanes) - 1
		// rows in groups of about checkElems multiply-adds (each row's
		// dot product is computed alone: the grouping changes nothing)
		rows := max(1, checkElems/k)
		for r := 0; r < nout; r += rows {
			if r > 0 && stop.Done(done) {
				return false
			}
			vk.dot(k, &w[(o0+r)*ldw], ldw, min(rows, nout-r), &u[0], &out[r], 1, tail)
		}
		for i, s := range out {
			ci := &c[(o0+i)*so]
			s *= alpha
			if beta != 0 {
				s += beta * *ci
			}
			*ci = s
		}
		return true
	}
	// vecAxpy: W[l, j] = w[l*ldw + o0 + j]; out contiguous (else through
	// the buffer)
	var out []T
	if so == 1 {
		out = c[o0:o1]
	} else {
		out = ws[p.offC : p.offC+nout]
		if beta != 0 {
			for i := range out {
				out[i] = c[(o0+i)*so]
			}
		}
	}
	blk, rem := 8*vk.lanes, 4*vk.lanes
	work := 0 // multiply-adds since the last check
	for pc := 0; pc < k; pc += p.kc {
		kb := min(p.kc, k-pc)
		bet := beta
		if pc > 0 {
			bet = 1
		}
		uu := &u[pc]
		wr := w[pc*ldw+o0:]
		j := 0
		for ; j+blk <= nout; j += blk {
			if work += kb * blk; work >= checkElems {
				if work = 0; stop.Done(done) {
					return false
				}
			}
			vk.axpy(kb, uu, &wr[j], ldw, &out[j], 0, alpha, bet)
		}
		work += kb * (nout - j)
		for ; j < nout; j += rem {
			lanes := nout - j
			var masks uint64
			for v := 0; v < 4; v++ {
				n := min(max(lanes-v*vk.lanes, 0), vk.lanes)
				masks |= (1<<n - 1) << (16 * v)
			}
			vk.axpyRem(kb, uu, &wr[j], ldw, &out[j], masks, alpha, bet)
		}
	}
	if so != 1 {
		for i, v := range out {
			c[(o0+i)*so] = v
		}
	}
	return true
}

package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/ops"
)

// fusedReduceKernel runs a fused group whose result is reduced: the
// elementwise program fills a chunk register that is folded into the
// accumulators at once, so the domain-sized intermediate never exists.
// Rows ([K, R], R reduced) fold each row; long rows are split into fixed
// blocks whose partial results are combined in order (so the result does
// not depend on the thread count); columns ([R, K], R reduced) give each
// thread a range of columns and fold every row into it.
func fusedReduceKernel(p *fusedPlan) (*kernel, error) {
	t := elemTypes[p.outDT]
	if t == nil {
		return nil, fmt.Errorf("%w: fused reduction of %v", errUnsupported, p.outDT)
	}
	return t.fusedReduce(p, p.outDT.IsFloat()), nil
}

func fusedReduceT[T elem, A acc](p *fusedPlan) *kernel {
	rp := newRedPlan(p.attr.Domain, p.attr.Reduce.Axes)
	op := p.attr.Reduce.Op
	// fold combines a chunk of values into an accumulator (Sum, Prod),
	// starting from ident; join combines two accumulators.
	var fold func(acc A, x []T) A
	isMax := op == ops.OpMax // for Max and Min: see beats
	accum := op == ops.OpSum || op == ops.OpProd
	ident, join := A(0), func(a, b A) A { return a + b }
	switch op {
	case ops.OpProd:
		ident, join = 1, func(a, b A) A { return a * b }
		fold = func(s A, x []T) A {
			for _, v := range x {
				s *= A(v)
			}
			return s
		}
	case ops.OpSum:
		fold = func(s A, x []T) A {
			if v, ok := vectorSum(x); ok {
				return s + A(v)
			}
			var s0, s1, s2, s3 A
			i := 0
			for ; i+4 <= len(x); i += 4 {
				s0 += A(x[i])
				s1 += A(x[i+1])
				s2 += A(x[i+2])
				s3 += A(x[i+3])
			}
			for ; i < len(x); i++ {
				s0 += A(x[i])
			}
			return s + (s0 + s1) + (s2 + s3)
		}
	}
	K, R := 1, p.n
	cols := rp.isCols()
	switch {
	case cols:
		K, R = rp.keptDims[0], rp.redDims[0]
	case len(rp.keptDims) == 1:
		K, R = rp.keptDims[0], rp.redN
	}
	if p.n == 0 {
		R = 0
	}
	k := &kernel{}
	if cols {
		var z A
		k.scratch = K * int(sizeOf(z)) // sum accumulators, one per column
		k.bind = func(a *args) func() {
			ev := newEvaluator(p, a)
			accs := as[A](a.scratch)
			l := a.Loop(func(lo, hi, part int) {
				out := as[T](a.Out())
				for j0 := lo; j0 < hi; j0 += chunkElems {
					m := min(chunkElems, hi-j0)
					if R == 0 { // a sum or product over nothing
						for j := j0; j < j0+m; j++ {
							out[j] = T(ident)
						}
						continue
					}
					// a check every ~32K element-ops (m may be small)
					every := max(1, p.checkEvery()*chunkElems/m)
					for r := 0; r < R; r++ {
						if r%every == every-1 && a.Stopped() {
							return
						}
						ev.chunk(part, r*K+j0, m, nil)
						x := as[T](ev.regs[part][p.outReg])[:m]
						switch {
						case accum && r == 0:
							for j, v := range x {
								accs[j0+j] = A(v)
							}
						case op == ops.OpSum:
							s := accs[j0 : j0+m]
							for j, v := range x {
								s[j] += A(v)
							}
						case op == ops.OpProd:
							s := accs[j0 : j0+m]
							for j, v := range x {
								s[j] *= A(v)
							}
						case r == 0:
							copy(out[j0:j0+m], x)
						default:
							o := out[j0 : j0+m]
							for j, v := range x {
								if beats(v, o[j], isMax) {
									o[j] = v
								}
							}
						}
					}
					if accum {
						for j := j0; j < j0+m; j++ {
							out[j] = T(accs[j])
						}
					}
				}
			})
			return func() {
				ev.expand()
				l.Run(K, max(1, grainElems/max(1, R)), 0)
			}
		}
		return k
	}
	// Rows: work items are (row, block) pairs with fixed-size blocks.
	block := min(max(R, 1), blockElems)
	blocks := (R + block - 1) / block
	if blocks == 0 {
		blocks = 1
	}
	var z T
	var za A
	k.scratch = K * blocks * max(int(sizeOf(za)), int(sizeOf(z)))
	k.bind = func(a *args) func() {
		ev := newEvaluator(p, a)
		sums := as[A](a.scratch)
		bests := as[T](a.scratch)
		every := p.checkEvery()
		l := a.Loop(func(lo, hi, part int) {
			c := 0 // chunks since the last check
			for item := lo; item < hi; item++ {
				row, b := item/blocks, item%blocks
				start := row*R + b*block
				end := min(start+block, (row+1)*R)
				s := ident
				var best T
				for q := start; q < end; q += chunkElems {
					if c++; c == every {
						if c = 0; a.Stopped() {
							return
						}
					}
					m := min(chunkElems, end-q)
					ev.chunk(part, q, m, nil)
					x := as[T](ev.regs[part][p.outReg])[:m]
					if accum {
						s = fold(s, x)
						continue
					}
					if q == start {
						best = x[0]
					}
					for _, v := range x {
						if beats(v, best, isMax) {
							best = v
						}
					}
				}
				if accum {
					sums[item] = s
				} else {
					bests[item] = best
				}
			}
		})
		// Rows shorter than a chunk: evaluate several rows per chunk.
		rowsPerChunk := 0
		if R > 0 && R <= chunkElems/2 {
			rowsPerChunk = chunkElems / R
		}
		small := a.Loop(func(lo, hi, part int) {
			out := as[T](a.Out())
			for c, r0 := 0, lo; r0 < hi; c, r0 = c+1, r0+rowsPerChunk {
				if c%every == every-1 && a.Stopped() {
					return
				}
				rows := min(rowsPerChunk, hi-r0)
				ev.chunk(part, r0*R, rows*R, nil)
				x := as[T](ev.regs[part][p.outReg])
				for r := 0; r < rows; r++ {
					seg := x[r*R : (r+1)*R]
					if accum {
						out[r0+r] = T(fold(ident, seg))
						continue
					}
					best := seg[0]
					for _, v := range seg[1:] {
						if beats(v, best, isMax) {
							best = v
						}
					}
					out[r0+r] = best
				}
			}
		})
		return func() {
			ev.expand()
			out := as[T](a.Out())
			if R == 0 {
				// a sum or product over nothing (Max/Min of nothing is a
				// build error)
				for i := range out {
					out[i] = T(ident)
				}
				return
			}
			if rowsPerChunk > 0 {
				small.Run(K, max(rowsPerChunk, grainElems/R), 0)
				return
			}
			l.Run(K*blocks, max(1, grainElems/block), 0)
			if a.Stopped() {
				return // the partial results are incomplete
			}
			for row := 0; row < K; row++ {
				if accum {
					s := ident
					for _, v := range sums[row*blocks : (row+1)*blocks] {
						s = join(s, v)
					}
					out[row] = T(s)
					continue
				}
				best := bests[row*blocks]
				for _, v := range bests[row*blocks+1 : (row+1)*blocks] {
					if beats(v, best, isMax) {
						best = v
					}
				}
				out[row] = best
			}
		}
	}
	return k
}

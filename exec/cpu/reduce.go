package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// blockElems is the size of the fixed blocks a long reduction is split
// into. Partial results are combined in block order, so the result does
// not depend on the thread count.
const blockElems = 1 << 14

// redPlan is a reduction after coalescing: output element o reads the
// input at offset(o) + roffset(r) for every reduced index r.
type redPlan struct {
	outN        int
	keptDims    []int
	keptStrides []int
	redDims     []int
	redStrides  []int
	redN        int
}

func newRedPlan(in tensor.Shape, axes []int) *redPlan {
	reduced := make([]bool, len(in))
	for _, a := range axes {
		reduced[a] = true
	}
	st := in.Strides()
	type group struct {
		dim, stride int
		red         bool
	}
	var gs []group
	for i, d := range in {
		if d == 1 {
			continue
		}
		if k := len(gs) - 1; k >= 0 && gs[k].red == reduced[i] && gs[k].stride == d*st[i] {
			gs[k].dim *= d
			gs[k].stride = st[i]
			continue
		}
		gs = append(gs, group{d, st[i], reduced[i]})
	}
	p := &redPlan{outN: 1, redN: 1}
	for _, g := range gs {
		if g.red {
			p.redDims = append(p.redDims, g.dim)
			p.redStrides = append(p.redStrides, g.stride)
			p.redN *= g.dim
		} else {
			p.keptDims = append(p.keptDims, g.dim)
			p.keptStrides = append(p.keptStrides, g.stride)
			p.outN *= g.dim
		}
	}
	return p
}

// base returns the input offset of output element o.
func (p *redPlan) base(o int) int {
	off := 0
	for d := len(p.keptDims) - 1; d >= 0 && o > 0; d-- {
		off += (o % p.keptDims[d]) * p.keptStrides[d]
		o /= p.keptDims[d]
	}
	return off
}

// runs calls fn for each contiguous-or-strided run of the reduced block
// starting at base: fn(offset, length, stride, firstIndex). Between runs,
// after every checkElems elements or so, it calls stopped (when not nil)
// and returns early when that is true.
func (p *redPlan) runs(base int, stopped func() bool, fn func(off, n, stride, r int)) {
	if len(p.redDims) == 0 {
		fn(base, 1, 1, 0)
		return
	}
	last := len(p.redDims) - 1
	inner, is := p.redDims[last], p.redStrides[last]
	next := checkElems // the next r at which to check
	for r := 0; r < p.redN; r += inner {
		if r >= next {
			if stopped != nil && stopped() {
				return
			}
			next = r + checkElems
		}
		off := base
		q := r / inner
		for d := last - 1; d >= 0 && q > 0; d-- {
			off += (q % p.redDims[d]) * p.redStrides[d]
			q /= p.redDims[d]
		}
		fn(off, inner, is, r)
	}
}

// isRows: the reduced elements of each output are one contiguous run.
func (p *redPlan) isRows() bool {
	return len(p.redDims) == 1 && p.redStrides[0] == 1 && (len(p.keptDims) == 0 || (len(p.keptDims) == 1 && p.keptStrides[0] == p.redN))
}

// isCols: the input is [R, K] with the R axis reduced.
func (p *redPlan) isCols() bool {
	return len(p.redDims) == 1 && len(p.keptDims) == 1 && p.keptStrides[0] == 1 && p.redStrides[0] == p.keptDims[0]
}

func prepareReduce(n *graph.Node) (*kernel, error) {
	x := n.Input(0)
	p := newRedPlan(x.Shape(), n.Attr().(opdef.AxesAttr).Axes)
	p.outN = n.Shape().Size()
	if x.DType().IsComplex() {
		return prepareComplexReduce(n, p)
	}
	t := elemTypes[x.DType()]
	if t == nil {
		return nil, fmt.Errorf("no %s kernel for %v", n.Op(), x.DType())
	}
	return t.reduce(n.Op(), p, x.DType().IsFloat())
}

// acc is the accumulator of a sum: float64 for floats (so float32 sums
// keep their precision), int64 for integers.
type acc interface{ float64 | int64 }

func reduceKernel[T elem](op graph.Op, p *redPlan, isFloat bool) (*kernel, error) {
	if op == ops.OpSum {
		if isFloat {
			return sumKernel[T, float64](p), nil
		}
		return sumKernel[T, int64](p), nil
	}
	switch op {
	case ops.OpMax, ops.OpMin:
		return selectKernel[T](p, op == ops.OpMax), nil
	case ops.OpArgMax, ops.OpArgMin:
		return argKernel[T](p, op == ops.OpArgMax), nil
	case ops.OpProd:
		if isFloat {
			return prodKernel[T, float64](p), nil
		}
		return prodKernel[T, int64](p), nil
	case ops.OpAny, ops.OpAll:
		return logicKernel[T](p, op == ops.OpAll), nil
	}
	return nil, fmt.Errorf("%s is not a reduction", op)
}

// beats reports whether v replaces best in a maximum (isMax) or a
// minimum: NaN always wins, so NaN propagates. It is inlined, and isMax
// is the same in every iteration of a loop.
func beats[T elem](v, best T, isMax bool) bool {
	if v != v {
		return best == best
	}
	if isMax {
		return v > best
	}
	return v < best
}

// sumKernel sums with accumulator A.
func sumKernel[T elem, A acc](p *redPlan) *kernel {
	// rowSum sums n elements of x from off with a stride; stopped, when
	// not nil, is called between pieces of a long run (the sum is then
	// cut short: the caller sees stopped too and discards it).
	rowSum := func(x []T, off, n, stride int, stopped func() bool) A {
		var s0, s1, s2, s3 A
		if stride == 1 {
			if vecOf[T]() != nil {
				if n <= longRun {
					s, _ := vectorSum(x[off : off+n])
					return A(s)
				}
				// A long run: blocks of longRun, added in order.
				var s float64
				for b := 0; b < n; b += longRun {
					if b > 0 && stopped != nil && stopped() {
						break
					}
					v, _ := vectorSum(x[off+b : off+min(b+longRun, n)])
					s += v
				}
				return A(s)
			}
			// Integers (exact, so any split gives the same sum): four
			// accumulators, a check every checkElems elements.
			x = x[off : off+n]
			i := 0
			for i+4 <= n {
				if i > 0 && stopped != nil && stopped() {
					return 0 // cut short
				}
				for e := min(i+checkElems, n); i+4 <= e; i += 4 {
					s0 += A(x[i])
					s1 += A(x[i+1])
					s2 += A(x[i+2])
					s3 += A(x[i+3])
				}
			}
			for ; i < n; i++ {
				s0 += A(x[i])
			}
			return (s0 + s1) + (s2 + s3)
		}
		// Strided: one accumulator in element order, checked between
		// pieces (the same additions in the same order).
		for i := 0; i < n; {
			if i > 0 && stopped != nil && stopped() {
				break
			}
			for e := min(i+checkElems, n); i < e; i++ {
				s0 += A(x[off+i*stride])
			}
		}
		return s0
	}
	k := &kernel{}
	switch {
	case p.isCols() && p.outN >= 64:
		// [R, K] -> [K]: accumulate whole rows into an A vector.
		K, R := p.keptDims[0], p.redDims[0]
		var z A
		k.scratch = K * int(sizeOf(z))
		k.bind = func(a *args) func() {
			accs := as[A](a.scratch)
			l := a.Loop(func(lo, hi, _ int) {
				x, out := as[T](a.In(0)), as[T](a.Out())
				s := accs[lo:hi]
				for j := range s {
					s[j] = A(x[lo+j])
				}
				every := max(1, checkElems/(hi-lo)) // rows between checks
				for r := 1; r < R; r++ {
					if r%every == 0 && a.Stopped() {
						return
					}
					row := x[r*K+lo : r*K+hi]
					for j := range s {
						s[j] += A(row[j])
					}
				}
				for j := range s {
					out[lo+j] = T(s[j])
				}
			})
			return func() { l.Run(K, max(1, grainElems/max(1, R)), 0) }
		}
	case p.isRows() && p.outN < 8 && p.redN >= 2*blockElems:
		// Few long rows: split each row into fixed blocks, sum the blocks in
		// parallel, then add the partials in block order.
		blocks := (p.redN + blockElems - 1) / blockElems
		var z A
		k.scratch = blocks * int(sizeOf(z))
		k.bind = func(a *args) func() {
			parts := as[A](a.scratch)[:blocks]
			row := 0
			l := a.Loop(func(lo, hi, _ int) {
				x := as[T](a.In(0))
				base := row * p.redN
				for b := lo; b < hi; b++ {
					start := b * blockElems
					parts[b] = rowSum(x, base+start, min(blockElems, p.redN-start), 1, nil)
				}
			})
			return func() {
				out := as[T](a.Out())
				for row = 0; row < p.outN; row++ {
					// 8 blocks (128K elements) between checks
					l.Run(blocks, 1, 8)
					if a.Stopped() {
						return
					}
					var s A
					for _, v := range parts {
						s += v
					}
					out[row] = T(s)
				}
			}
		}
	default:
		k.bind = func(a *args) func() {
			stopped := a.Stopped
			l := a.Loop(func(lo, hi, _ int) {
				x, out := as[T](a.In(0)), as[T](a.Out())
				work := 0 // elements since the last check
				for o := lo; o < hi; o++ {
					if work += p.redN; work >= checkElems {
						if work = 0; a.Stopped() {
							return
						}
					}
					var s A
					p.runs(p.base(o), stopped, func(off, n, stride, _ int) { s += rowSum(x, off, n, stride, stopped) })
					out[o] = T(s)
				}
			})
			return func() { l.Run(p.outN, max(1, grainElems/max(1, p.redN)), 0) }
		}
	}
	return k
}

// selectKernel computes Max (isMax) or Min.
func selectKernel[T elem](p *redPlan, isMax bool) *kernel {
	k := &kernel{}
	if p.isCols() && p.outN >= 64 {
		K, R := p.keptDims[0], p.redDims[0]
		k.bind = func(a *args) func() {
			l := a.Loop(func(lo, hi, _ int) {
				x, out := as[T](a.In(0)), as[T](a.Out())
				s := out[lo:hi]
				copy(s, x[lo:hi])
				every := max(1, checkElems/(hi-lo)) // rows between checks
				for r := 1; r < R; r++ {
					if r%every == 0 && a.Stopped() {
						return
					}
					row := x[r*K+lo : r*K+hi]
					for j, v := range row {
						if beats(v, s[j], isMax) {
							s[j] = v
						}
					}
				}
			})
			return func() { l.Run(K, max(1, grainElems/max(1, R)), 0) }
		}
		return k
	}
	k.bind = func(a *args) func() {
		stopped := a.Stopped
		l := a.Loop(func(lo, hi, _ int) {
			x, out := as[T](a.In(0)), as[T](a.Out())
			work := 0 // elements since the last check
			for o := lo; o < hi; o++ {
				if work += p.redN; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				base := p.base(o)
				best := x[base]
				p.runs(base, stopped, func(off, n, stride, _ int) {
					if stride == 1 && n > 0 && vecOf[T]() != nil {
						// Floats: SIMD, a long run in blocks of longRun.
						// The builtin max and min have the semantics of
						// simd's (NaN wins, -0 < +0), so the extreme of the
						// blocks' extremes is the run's.
						v, _ := vectorExtreme(x[off:off+min(longRun, n)], isMax)
						for b := longRun; b < n; b += longRun {
							if stopped() {
								return
							}
							w, _ := vectorExtreme(x[off+b:off+min(b+longRun, n)], isMax)
							if isMax {
								v = max(v, w)
							} else {
								v = min(v, w)
							}
						}
						if beats(v, best, isMax) {
							best = v
						}
						return
					}
					for i := 0; i < n; {
						if i > 0 && stopped() {
							return
						}
						for e := min(i+checkElems, n); i < e; i++ {
							if v := x[off+i*stride]; beats(v, best, isMax) {
								best = v
							}
						}
					}
				})
				out[o] = best
			}
		})
		return func() { l.Run(p.outN, max(1, grainElems/max(1, p.redN)), 0) }
	}
	return k
}

// argKernel computes ArgMax or ArgMin: the first index whose value no
// later value beats (a NaN counts as the best).
func argKernel[T elem](p *redPlan, isMax bool) *kernel {
	return &kernel{bind: func(a *args) func() {
		stopped := a.Stopped
		l := a.Loop(func(lo, hi, _ int) {
			x, out := as[T](a.In(0)), as[int64](a.Out())
			work := 0 // elements since the last check
			for o := lo; o < hi; o++ {
				if work += p.redN; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				base := p.base(o)
				best, idx := x[base], 0
				p.runs(base, stopped, func(off, n, stride, r int) {
					for i := 0; i < n; {
						if i > 0 && stopped() {
							return
						}
						for e := min(i+checkElems, n); i < e; i++ {
							if v := x[off+i*stride]; beats(v, best, isMax) {
								best, idx = v, r+i
							}
						}
					}
				})
				out[o] = int64(idx)
			}
		})
		return func() { l.Run(p.outN, max(1, grainElems/max(1, p.redN)), 0) }
	}}
}

// foldKernel folds the reduced elements of each output in row-major order
// into an accumulator of type A starting from init, one output per
// iteration of the parallel loop (so the result does not depend on the
// thread count), and stores out(acc) in the output element. It is Prod's
// and Any's and All's kernel: a product is not worth the blocked
// strategies of Sum, and Any and All stop at the first deciding element.
func foldKernel[T elem, A any, O elem](p *redPlan, init A, fold func(acc A, x []T, off, n, stride int) (A, bool), out func(A) O) *kernel {
	return &kernel{bind: func(a *args) func() {
		stopped := a.Stopped
		l := a.Loop(func(lo, hi, _ int) {
			x, y := as[T](a.In(0)), as[O](a.Out())
			work := 0 // elements since the last check
			for o := lo; o < hi; o++ {
				if work += p.redN; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				acc, done := init, false
				if p.redN > 0 {
					p.runs(p.base(o), stopped, func(off, n, stride, _ int) {
						// a long run in pieces, with a check between
						for i := 0; i < n && !done; i += checkElems {
							if i > 0 && stopped() {
								done = true // cut short: the caller sees stopped too
								return
							}
							acc, done = fold(acc, x, off+i*stride, min(checkElems, n-i), stride)
						}
					})
				}
				y[o] = out(acc)
			}
		})
		return func() { l.Run(p.outN, max(1, grainElems/max(1, p.redN)), 0) }
	}}
}

// prodKernel multiplies in A (float64 for floats, as the reference does;
// int64 for integers, wrapping when stored). Columns ([R, K] -> [K])
// multiply whole rows into a vector of accumulators, in the reference's
// order; contiguous runs use four accumulators (integers are exact in any
// order; a float64 product differs from the reference's order by a few
// float64 ulps, far below float32's or the suite's float64 tolerance).
func prodKernel[T elem, A acc](p *redPlan) *kernel {
	if p.isCols() && p.outN >= 64 {
		K, R := p.keptDims[0], p.redDims[0]
		var z A
		k := &kernel{scratch: K * int(sizeOf(z))}
		k.bind = func(a *args) func() {
			accs := as[A](a.scratch)
			l := a.Loop(func(lo, hi, _ int) {
				x, out := as[T](a.In(0)), as[T](a.Out())
				s := accs[lo:hi]
				for j := range s {
					s[j] = A(x[lo+j])
				}
				every := max(1, checkElems/(hi-lo)) // rows between checks
				for r := 1; r < R; r++ {
					if r%every == 0 && a.Stopped() {
						return
					}
					row := x[r*K+lo : r*K+hi]
					for j := range s {
						s[j] *= A(row[j])
					}
				}
				for j := range s {
					out[lo+j] = T(s[j])
				}
			})
			return func() { l.Run(K, max(1, grainElems/max(1, R)), 0) }
		}
		return k
	}
	return foldKernel(p, A(1), func(s A, x []T, off, n, stride int) (A, bool) {
		if stride == 1 {
			x = x[off : off+n]
			s0, s1, s2, s3 := s, A(1), A(1), A(1)
			i := 0
			for ; i+4 <= n; i += 4 {
				s0 *= A(x[i])
				s1 *= A(x[i+1])
				s2 *= A(x[i+2])
				s3 *= A(x[i+3])
			}
			for ; i < n; i++ {
				s0 *= A(x[i])
			}
			return (s0 * s1) * (s2 * s3), false
		}
		for i := 0; i < n; i++ {
			s *= A(x[off+i*stride])
		}
		return s, false
	}, func(s A) T { return T(s) })
}

// logicKernel is Any (all false) or All: whether some element is nonzero
// (NaN is), or every one; the result is a bool byte.
func logicKernel[T elem](p *redPlan, all bool) *kernel {
	return foldKernel(p, all, func(s bool, x []T, off, n, stride int) (bool, bool) {
		for i := 0; i < n; i++ {
			if nz := x[off+i*stride] != 0; nz != all {
				return nz, true
			}
		}
		return s, false
	}, func(s bool) uint8 { return u8(s) })
}

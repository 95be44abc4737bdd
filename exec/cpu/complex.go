package cpu

import (
	"errors"
	"fmt"
	"math/cmplx"
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/gemm"
	"github.com/loomgraph/loom/internal/stop"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The complex numbers' kernels: elementwise ops by their complex128
// element functions (complex64 elements are widened, computed and
// rounded, as the reference does), Sum and Prod, and MatMul as one real
// product of the interleaved operands.

// cplx is the complex element types.
type cplx interface{ complex64 | complex128 }

// cfn is an elementwise op's complex element function(s): one of u
// (complex to complex), b (two complex operands), toReal (complex to its
// parts' real dtype: Abs, Real, Imag, Angle), test (complex operands, a
// bool result: Equal, NotEqual) or make (two real parts to complex).
type cfn struct {
	u      func(complex128) complex128
	b      func(x, y complex128) complex128
	toReal func(complex128) float64
	test   func(x, y complex128) bool
	make   func(re, im float64) complex128
}

// withComplex is e's entry with the complex kernels of c added: a node
// whose result or last operand is complex takes them, any other e's.
func withComplex(e entry, c cfn) entry {
	inner := e.micro
	en := elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		if out.IsComplex() || (len(in) > 0 && in[len(in)-1].IsComplex()) {
			return complexMicro(c, out, in, st)
		}
		if inner == nil {
			return nil, errNoKernel
		}
		return inner(out, in, st)
	})
	en.math = e.math
	return en
}

// complexOnly is the entry of an op that admits only complex operands
// (Conj, Real, Imag, Angle) or makes complex (Complex).
func complexOnly(c cfn) entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		return complexMicro(c, out, in, st)
	})
}

func complexMicro(c cfn, out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
	switch {
	case c.u != nil && len(st) == 1 && out == in[0] && out == tensor.Complex64:
		return cUnary[complex64](c.u, st[0]), nil
	case c.u != nil && len(st) == 1 && out == in[0] && out == tensor.Complex128:
		return cUnary[complex128](c.u, st[0]), nil
	case c.b != nil && len(st) == 2 && out == tensor.Complex64 && in[0] == out && in[1] == out:
		return cBinary[complex64](c.b, st), nil
	case c.b != nil && len(st) == 2 && out == tensor.Complex128 && in[0] == out && in[1] == out:
		return cBinary[complex128](c.b, st), nil
	case c.toReal != nil && len(st) == 1 && in[0] == tensor.Complex64 && out == tensor.Float32:
		return cToReal[complex64, float32](c.toReal, st[0]), nil
	case c.toReal != nil && len(st) == 1 && in[0] == tensor.Complex128 && out == tensor.Float64:
		return cToReal[complex128, float64](c.toReal, st[0]), nil
	case c.test != nil && len(st) == 2 && out == tensor.Bool && in[0] == tensor.Complex64 && in[1] == in[0]:
		return cTest[complex64](c.test, st), nil
	case c.test != nil && len(st) == 2 && out == tensor.Bool && in[0] == tensor.Complex128 && in[1] == in[0]:
		return cTest[complex128](c.test, st), nil
	case c.make != nil && len(st) == 2 && out == tensor.Complex64 && in[0] == tensor.Float32 && in[1] == in[0]:
		return cMake[float32, complex64](c.make, st), nil
	case c.make != nil && len(st) == 2 && out == tensor.Complex128 && in[0] == tensor.Float64 && in[1] == in[0]:
		return cMake[float64, complex128](c.make, st), nil
	}
	return nil, errNoKernel
}

// The micro-ops: operand k's element i is at i*st[k] (a stride of 1 for a
// vector, 0 for a scalar).

func cUnary[C cplx](f func(complex128) complex128, s int) microFn {
	return func(m int, d, x, _, _ unsafe.Pointer) {
		dv, xv := view[C](d, m), view[C](x, max(1, s*m))
		for i := range dv {
			dv[i] = C(f(complex128(xv[i*s])))
		}
	}
}

func cBinary[C cplx](f func(x, y complex128) complex128, st []int) microFn {
	sx, sy := st[0], st[1]
	return func(m int, d, x, y, _ unsafe.Pointer) {
		dv, xv, yv := view[C](d, m), view[C](x, max(1, sx*m)), view[C](y, max(1, sy*m))
		for i := range dv {
			dv[i] = C(f(complex128(xv[i*sx]), complex128(yv[i*sy])))
		}
	}
}

func cToReal[C cplx, R float](f func(complex128) float64, s int) microFn {
	return func(m int, d, x, _, _ unsafe.Pointer) {
		dv, xv := view[R](d, m), view[C](x, max(1, s*m))
		for i := range dv {
			dv[i] = R(f(complex128(xv[i*s])))
		}
	}
}

func cTest[C cplx](f func(x, y complex128) bool, st []int) microFn {
	sx, sy := st[0], st[1]
	return func(m int, d, x, y, _ unsafe.Pointer) {
		dv, xv, yv := view[uint8](d, m), view[C](x, max(1, sx*m)), view[C](y, max(1, sy*m))
		for i := range dv {
			dv[i] = u8(f(complex128(xv[i*sx]), complex128(yv[i*sy])))
		}
	}
}

func cMake[R float, C cplx](f func(re, im float64) complex128, st []int) microFn {
	sx, sy := st[0], st[1]
	return func(m int, d, x, y, _ unsafe.Pointer) {
		dv, xv, yv := view[C](d, m), view[R](x, max(1, sx*m)), view[R](y, max(1, sy*m))
		for i := range dv {
			dv[i] = C(f(float64(xv[i*sx]), float64(yv[i*sy])))
		}
	}
}

// The element functions of the table's complex entries.
var (
	cAdd   = cfn{b: func(x, y complex128) complex128 { return x + y }}
	cSub   = cfn{b: func(x, y complex128) complex128 { return x - y }}
	cMul   = cfn{b: func(x, y complex128) complex128 { return x * y }}
	cDiv   = cfn{b: func(x, y complex128) complex128 { return x / y }}
	cNeg   = cfn{u: func(x complex128) complex128 { return -x }}
	cAbs   = cfn{toReal: cmplx.Abs}
	cExp   = cfn{u: cmplx.Exp}
	cLog   = cfn{u: cmplx.Log}
	cSqrt  = cfn{u: cmplx.Sqrt}
	cEq    = cfn{test: func(x, y complex128) bool { return x == y }}
	cNe    = cfn{test: func(x, y complex128) bool { return x != y }}
	cConj  = cfn{u: cmplx.Conj}
	cReal  = cfn{toReal: func(x complex128) float64 { return real(x) }}
	cImag  = cfn{toReal: func(x complex128) float64 { return imag(x) }}
	cAngle = cfn{toReal: cmplx.Phase}
	cMake2 = cfn{make: func(re, im float64) complex128 { return complex(re, im) }}
	cRecip = cfn{u: func(x complex128) complex128 { return 1 / x }}
	cPow   = cfn{b: cmplx.Pow}
)

// prepareComplexReduce is Sum and Prod of complex elements: each output
// element accumulates its reduced elements in complex128, in row-major
// order (the reference's), the outputs spread over the workers.
func prepareComplexReduce(n *graph.Node, p *redPlan) (*kernel, error) {
	prod := n.Op() == ops.OpProd
	if n.Op() != ops.OpSum && !prod {
		return nil, fmt.Errorf("no %s kernel for %v", n.Op(), n.Input(0).DType())
	}
	if n.DType() == tensor.Complex64 {
		return complexReduce[complex64](p, prod), nil
	}
	return complexReduce[complex128](p, prod), nil
}

func complexReduce[C cplx](p *redPlan, prod bool) *kernel {
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			x, y := as[C](a.In(0)), as[C](a.Out())
			for o := lo; o < hi; o++ {
				var s complex128
				if prod {
					s = 1
				}
				p.runs(p.base(o), a.Stopped, func(off, n, stride, _ int) {
					for i := 0; i < n; i++ {
						if prod {
							s *= complex128(x[off+i*stride])
						} else {
							s += complex128(x[off+i*stride])
						}
					}
				})
				y[o] = C(s)
			}
		})
		return func() {
			if p.outN == 0 {
				return
			}
			l.Run(p.outN, max(1, blockElems/max(1, p.redN)), 0)
		}
	}}
}

// errComplexFusion is why the CPU runs no fused group with a complex
// value: its fused evaluator and reductions are written for real types.
var errComplexFusion = errors.New("complex values are not fused (each complex op runs as its own kernel)")

// complexMatMul runs C = op(A)·op(B) of complex matrices as one real
// product: A's rows, complex elements interleaved (re, im), are real rows
// of 2k; B becomes the real 2k x 2n matrix of 2x2 blocks [re im; -im re],
// so the real product's row i holds C's row i interleaved: one gemm of
// 8mnk FLOPs, the complex product's own count, at the real gemm's rate.
// A transposed A is first copied untransposed; the expansion of B is
// O(kn), the product O(mnk).
func complexMatMul[T float32 | float64](p *mmPlan, plan func(threads int) gemmPlan[T]) *kernel {
	m, n, k := p.m, p.n, p.k
	mk, kn, mn := m*k, k*n, m*n
	// Distinct operand blocks (batch broadcasting repeats them).
	uniq := func(offs []int) (map[int]int, []int) {
		at := map[int]int{}
		var list []int
		for _, o := range offs {
			if _, ok := at[o]; !ok {
				at[o] = len(list)
				list = append(list, o)
			}
		}
		return at, list
	}
	aAt, aList := uniq(p.aOff)
	bAt, bList := uniq(p.bOff)
	return &kernel{bind: func(a *args) func() {
		g := plan(a.Threads())
		tasks := g.Tasks()
		ws := make([][]T, a.Threads())
		for i := range ws {
			ws[i] = make([]T, g.WorkspaceFloats())
		}
		bx := make([]T, len(bList)*4*kn)
		var ax []T
		if p.transA {
			ax = make([]T, len(aList)*2*mk)
		}
		every := max(1, (1<<20)/max(1, 4*mn*k/max(1, tasks)))
		// Expansion: B's blocks (and A's, transposed), one item per row.
		expand := a.Loop(func(lo, hi, _ int) {
			x, y := as[T](a.In(0)), as[T](a.In(1)) // (re, im) pairs
			for w := lo; w < hi; w++ {
				if w < len(bList)*k {
					bi, l := w/k, w%k
					expandRow(bx[bi*4*kn:], y[2*bList[bi]:], l, n, p.ldb, p.transB)
					continue
				}
				r := w - len(bList)*k
				ai, i := r/m, r%m
				row := ax[ai*2*mk+i*2*k : ai*2*mk+(i+1)*2*k]
				src := x[2*aList[ai]:]
				for l := 0; l < k; l++ {
					q := 2 * (l*p.lda + i)
					row[2*l], row[2*l+1] = src[q], src[q+1]
				}
			}
		})
		l := a.Loop(func(lo, hi, part int) {
			x, z := as[T](a.In(0)), as[T](a.Out())
			done := a.Done()
			for w := lo; w < hi; w++ {
				if (w-lo)%every == every-1 && stop.Done(done) {
					return
				}
				b, t := w/tasks, w%tasks
				bb := bx[bAt[p.bOff[b]]*4*kn:][:4*kn]
				var ab []T
				lda := 2 * p.lda
				if p.transA {
					ab, lda = ax[aAt[p.aOff[b]]*2*mk:][:2*mk], 2*k
				} else {
					ab = x[2*p.aOff[b] : 2*(p.aOff[b]+mk)]
				}
				if !g.RunUntil(done, t, 1, ab, lda, bb, 2*n, 0, z[2*b*mn:2*(b+1)*mn], 2*n, ws[part]) {
					return
				}
			}
		})
		rows := len(bList) * k
		if p.transA {
			rows += len(aList) * m
		}
		items := len(p.aOff) * tasks
		return func() {
			if mn == 0 {
				return
			}
			if k == 0 {
				clear(a.Out())
				return
			}
			expand.Run(rows, 16, 0)
			if a.Stopped() {
				return
			}
			l.Run(items, 1, 0)
		}
	}}
}

// expandRow writes rows 2l and 2l+1 of B's real expansion (2n wide) from
// row l of op(B) (b holds (re, im) pairs): element j = re + i*im becomes [re im] in row 2l and
// [-im re] in row 2l+1, columns 2j and 2j+1.
func expandRow[T float32 | float64](dst []T, b []T, l, n, ldb int, trans bool) {
	r0, r1 := dst[2*l*2*n:][:2*n], dst[(2*l+1)*2*n:][:2*n]
	for j := 0; j < n; j++ {
		q := 2 * (l*ldb + j)
		if trans {
			q = 2 * (j*ldb + l)
		}
		re, im := b[q], b[q+1]
		r0[2*j], r0[2*j+1] = re, im
		r1[2*j], r1[2*j+1] = -im, re
	}
}

// prepareComplexMatMul is MatMul's kernel for complex64 (float32 gemm)
// and complex128 (float64 gemm).
func prepareComplexMatMul(p *mmPlan, dt tensor.DType) (*kernel, error) {
	m, n, k := p.m, p.n, p.k
	switch dt {
	case tensor.Complex64:
		return complexMatMul(p, func(threads int) gemmPlan[float32] {
			return gemm.NewPlan32(false, false, m, 2*n, 2*k, threads)
		}), nil
	case tensor.Complex128:
		return complexMatMul(p, func(threads int) gemmPlan[float64] {
			return gemm.NewPlan64(false, false, m, 2*n, 2*k, threads)
		}), nil
	}
	return nil, fmt.Errorf("no MatMul kernel for %v", dt)
}

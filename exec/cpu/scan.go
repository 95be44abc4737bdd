package cpu

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The scans (Cumsum, Cumprod, Cummax, LogCumSumExp) view the operand as
// [outer, A, inner] with the scanned axis in the middle. A work item is
// one outer index and a run of up to scanLanes consecutive inner indices:
// the item walks the axis in scan order and folds each step's run of
// elements into one accumulator per lane, so a scan along an outer axis
// reads whole contiguous runs, and a scan along the last axis (inner = 1)
// is one row per item. Items are independent and each is sequential, so
// the result does not depend on the thread count. Floats accumulate in
// float64 (float32 too, as the reference does, rounding each output
// once), integers in int64 (wrapping when stored).

// scanLanes is the most inner indices one work item carries.
const scanLanes = 256

// scanGeom is a scan's [outer, A, inner] view.
type scanGeom struct{ outer, A, inner int }

func scanGeomOf(s tensor.Shape, axis int) scanGeom {
	g := scanGeom{outer: 1, A: s[axis], inner: 1}
	for _, d := range s[:axis] {
		g.outer *= d
	}
	for _, d := range s[axis+1:] {
		g.inner *= d
	}
	return g
}

func prepareScan(n *graph.Node) (*kernel, error) {
	a := n.Attr().(opdef.ScanAttr)
	g := scanGeomOf(n.Shape(), a.Axis)
	op := n.Op()
	switch n.DType() {
	case tensor.Float32:
		return scanFloat[float32](op, g, a)
	case tensor.Float64:
		return scanFloat[float64](op, g, a)
	case tensor.Int32:
		return scanInt[int32](op, g, a, math.MinInt32)
	case tensor.Int64:
		return scanInt[int64](op, g, a, math.MinInt64)
	case tensor.Int8:
		return scanInt[int8](op, g, a, math.MinInt8)
	case tensor.Int16:
		return scanInt[int16](op, g, a, math.MinInt16)
	case tensor.Uint8:
		return scanInt[uint8](op, g, a, 0)
	}
	return nil, fmt.Errorf("%w: %s of %v", errUnsupported, op, n.DType())
}

func scanFloat[T float](op graph.Op, g scanGeom, a opdef.ScanAttr) (*kernel, error) {
	switch op {
	case ops.OpCumsum:
		return scanKernel[T](g, a, scanAdd, 0.0, nil), nil
	case ops.OpCumprod:
		return scanKernel[T](g, a, scanMul, 1.0, nil), nil
	case ops.OpCummax:
		// NaN propagates: once the running value is NaN it stays. A later
		// equal value replaces the maximum, as in torch.cummax (-0, +0).
		return scanKernel[T](g, a, scanMax, math.Inf(-1), nil), nil
	case ops.OpLogCumSumExp:
		return scanKernel[T](g, a, scanFunc, math.Inf(-1), logAddExp), nil
	}
	return nil, fmt.Errorf("%w: %s of floats", errUnsupported, op)
}

func scanInt[T int8 | int16 | int32 | int64 | uint8](op graph.Op, g scanGeom, a opdef.ScanAttr, lo int64) (*kernel, error) {
	switch op {
	case ops.OpCumsum:
		return scanKernel[T](g, a, scanAdd, int64(0), nil), nil
	case ops.OpCumprod:
		return scanKernel[T](g, a, scanMul, int64(1), nil), nil
	case ops.OpCummax:
		return scanKernel[T](g, a, scanMax, lo, nil), nil
	}
	return nil, fmt.Errorf("%w: %s of integers", errUnsupported, op)
}

// logAddExp is log(e^s + e^v) with the larger exponent factored out (the
// running maximum): NaN propagates, -Inf is the identity, +Inf absorbs.
func logAddExp(s, v float64) float64 {
	if s != s || v != v {
		return math.NaN()
	}
	m, l := s, v
	if v > s {
		m, l = v, s
	}
	if math.IsInf(m, 0) {
		return m
	}
	return m + math.Log1p(math.Exp(l-m))
}

// scanFold is a scan's combination: the three common ones have their own
// loops (scanRun); scanFunc calls a function.
type scanFold uint8

const (
	scanAdd scanFold = iota
	scanMul
	scanMax // NaN propagates
	scanFunc
)

// scanRun folds m elements of x, from p0 in steps of stride, into the
// accumulator s, writing each position of y before (excl) or after
// folding its element in, and returns the accumulator.
func scanRun[T elem, A acc](k scanFold, comb func(s, v A) A, excl bool, s A, x, y []T, p0, stride, m int) A {
	p := p0
	switch {
	case k == scanAdd && excl:
		for range m {
			y[p] = T(s)
			s += A(x[p])
			p += stride
		}
	case k == scanAdd:
		for range m {
			s += A(x[p])
			y[p] = T(s)
			p += stride
		}
	case k == scanMul && excl:
		for range m {
			y[p] = T(s)
			s *= A(x[p])
			p += stride
		}
	case k == scanMul:
		for range m {
			s *= A(x[p])
			y[p] = T(s)
			p += stride
		}
	case k == scanMax:
		for range m {
			if excl {
				y[p] = T(s)
			}
			if v := A(x[p]); v >= s || v != v {
				s = v
			}
			if !excl {
				y[p] = T(s)
			}
			p += stride
		}
	default:
		for range m {
			if excl {
				y[p] = T(s)
			}
			s = comb(s, A(x[p]))
			if !excl {
				y[p] = T(s)
			}
			p += stride
		}
	}
	return s
}

// scanLanesStep folds one step of the axis, a run of len(s) contiguous
// elements, into the lanes' accumulators s.
func scanLanesStep[T elem, A acc](k scanFold, comb func(s, v A) A, excl bool, s []A, xs, ys []T) {
	switch {
	case k == scanAdd && excl:
		for j, v := range xs[:len(s)] {
			ys[j] = T(s[j])
			s[j] += A(v)
		}
	case k == scanAdd:
		for j, v := range xs[:len(s)] {
			s[j] += A(v)
			ys[j] = T(s[j])
		}
	case k == scanMul && excl:
		for j, v := range xs[:len(s)] {
			ys[j] = T(s[j])
			s[j] *= A(v)
		}
	case k == scanMul:
		for j, v := range xs[:len(s)] {
			s[j] *= A(v)
			ys[j] = T(s[j])
		}
	default:
		for j, v := range xs[:len(s)] {
			if excl {
				ys[j] = T(s[j])
			}
			if k == scanMax {
				if w := A(v); w >= s[j] || w != w {
					s[j] = w
				}
			} else {
				s[j] = comb(s[j], A(v))
			}
			if !excl {
				ys[j] = T(s[j])
			}
		}
	}
}

// scanKernel scans every line with fold k (or comb), starting from ident,
// writing each position before (Exclusive) or after folding its element
// in.
func scanKernel[T elem, A acc](g scanGeom, sa opdef.ScanAttr, k scanFold, ident A, comb func(s, v A) A) *kernel {
	lanes := min(max(g.inner, 1), scanLanes)
	chunks := (g.inner + lanes - 1) / lanes
	items := g.outer * chunks
	return &kernel{bind: func(a *args) func() {
		accs := make([][]A, a.Threads())
		for i := range accs {
			accs[i] = make([]A, lanes)
		}
		l := a.Loop(func(lo, hi, part int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			s := accs[part]
			work := 0
			for it := lo; it < hi; it++ {
				o, c := it/chunks, it%chunks
				j0 := c * lanes
				m := min(lanes, g.inner-j0)
				if work += m * g.A; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				base := o*g.A*g.inner + j0
				if m == 1 {
					// A line: one accumulator, a long one in pieces with a
					// check between.
					p0, stride := base, g.inner
					if sa.Reverse {
						p0, stride = base+(g.A-1)*g.inner, -g.inner
					}
					acc := ident
					for i := 0; i < g.A; i += checkElems {
						if i > 0 && a.Stopped() {
							return
						}
						n := min(checkElems, g.A-i)
						acc = scanRun(k, comb, sa.Exclusive, acc, x, y, p0+i*stride, stride, n)
					}
					continue
				}
				s := s[:m]
				for j := range s {
					s[j] = ident
				}
				every := max(1, checkElems/m) // steps between checks
				for step := 0; step < g.A; step++ {
					if step > 0 && step%every == 0 && a.Stopped() {
						return
					}
					i := step
					if sa.Reverse {
						i = g.A - 1 - step
					}
					p := base + i*g.inner
					scanLanesStep(k, comb, sa.Exclusive, s, x[p:p+m], y[p:p+m])
				}
			}
		})
		return func() { l.Run(items, max(1, grainElems/max(1, g.A*lanes)), 0) }
	}}
}

// prepareScanGrad prepares CumprodGrad and CummaxGrad (float32, float64):
// each line (an outer and an inner index) on its own, in scan order, in
// float64, as the reference computes (see ops/scan.go's refScanGrad).
func prepareScanGrad(n *graph.Node) (*kernel, error) {
	a := n.Attr().(opdef.ScanAttr)
	g := scanGeomOf(n.Shape(), a.Axis)
	cumprod := n.Op() == ops.OpCumprodGrad
	switch n.DType() {
	case tensor.Float32:
		return scanGradKernel[float32](g, a, cumprod), nil
	case tensor.Float64:
		return scanGradKernel[float64](g, a, cumprod), nil
	}
	return nil, fmt.Errorf("%w: %s of %v", errUnsupported, n.Op(), n.DType())
}

func scanGradKernel[T float](g scanGeom, sa opdef.ScanAttr, cumprod bool) *kernel {
	lines := g.outer * g.inner
	L := g.A
	return &kernel{bind: func(a *args) func() {
		bufs := make([][]float64, a.Threads())
		if cumprod {
			for i := range bufs {
				bufs[i] = make([]float64, L)
			}
		}
		l := a.Loop(func(lo, hi, part int) {
			x, gr, y := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			work := 0
			for line := lo; line < hi; line++ {
				if work += L; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				if L == 0 {
					continue
				}
				base := (line/g.inner)*L*g.inner + line%g.inner
				// pos is the flat position of scan step k.
				pos := func(k int) int {
					if sa.Reverse {
						k = L - 1 - k
					}
					return base + k*g.inner
				}
				if cumprod {
					s := bufs[part]
					if sa.Exclusive {
						s[L-1] = 0
						if L >= 2 {
							s[L-2] = float64(gr[pos(L-1)])
						}
						for i := L - 3; i >= 0; i-- {
							q := pos(i + 1)
							s[i] = float64(gr[q]) + float64(x[q])*s[i+1]
						}
					} else {
						s[L-1] = float64(gr[pos(L-1)])
						for i := L - 2; i >= 0; i-- {
							s[i] = float64(gr[pos(i)]) + float64(x[pos(i+1)])*s[i+1]
						}
					}
					p := 1.0
					for i := 0; i < L; i++ {
						q := pos(i)
						y[q] = T(p * s[i])
						p *= float64(x[q])
					}
					continue
				}
				// Cummax: the cotangents of a run of steps with the same
				// maximum are summed in order, then stored at its index;
				// every other position gets 0.
				var best T
				at := -1
				var seg float64
				for k := 0; k < L; k++ {
					q := pos(k)
					if sa.Exclusive && at >= 0 {
						seg += float64(gr[q])
					}
					if v := x[q]; at < 0 || v != v || (best == best && v >= best) {
						if at >= 0 {
							y[pos(at)] = T(seg)
						}
						best, at, seg = v, k, 0
					} else {
						y[q] = 0
					}
					if !sa.Exclusive {
						seg += float64(gr[q])
					}
				}
				y[pos(at)] = T(seg)
			}
		})
		return func() { l.Run(lines, max(1, grainElems/max(1, 4*L)), 0) }
	}}
}

package cpu

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// prepareSoftmax views the operand as [outer, A, inner] with the axis in
// the middle and normalises each of the outer*inner lines of length A in
// one pass for the max, one for the sum of exponentials and one for the
// result, in float64.
func prepareSoftmax(n *graph.Node) (*kernel, error) {
	axis := n.Attr().(opdef.AxisAttr).Axis
	s := n.Shape()
	outer, inner := 1, 1
	for _, d := range s[:axis] {
		outer *= d
	}
	for _, d := range s[axis+1:] {
		inner *= d
	}
	log := n.Op() == ops.OpLogSoftmax
	switch n.DType() {
	case tensor.Float32:
		return softmaxKernel[float32](outer, s[axis], inner, log), nil
	case tensor.Float64:
		return softmaxKernel[float64](outer, s[axis], inner, log), nil
	}
	return nil, fmt.Errorf("no %s kernel for %v", n.Op(), n.DType())
}

func softmaxKernel[T float](outer, A, inner int, log bool) *kernel {
	lines := outer * inner
	return &kernel{bind: func(a *args) func() {
		stopped := a.Stopped
		l := a.Loop(func(lo, hi, _ int) {
			x, y := as[T](a.In(0)), as[T](a.Out())
			work := 0 // elements since the last check
			for line := lo; line < hi; line++ {
				if work += A; work >= checkElems {
					if work = 0; a.Stopped() {
						return
					}
				}
				if inner == 1 {
					softmaxRow(y[line*A:(line+1)*A], x[line*A:(line+1)*A], log, stopped)
					continue
				}
				// A strided line: three passes in element order, each
				// checked every checkElems elements (the same arithmetic
				// in the same order).
				base := (line/inner)*A*inner + line%inner
				m := math.Inf(-1)
			max:
				for i := 0; i < A; {
					if i > 0 && a.Stopped() {
						return
					}
					for e := min(i+checkElems, A); i < e; i++ {
						v := float64(x[base+i*inner])
						if v > m || v != v {
							m = v
							if v != v {
								break max
							}
						}
					}
				}
				var sum float64
				for i := 0; i < A; {
					if i > 0 && a.Stopped() {
						return
					}
					for e := min(i+checkElems, A); i < e; i++ {
						sum += math.Exp(float64(x[base+i*inner]) - m)
					}
				}
				if log {
					ls := math.Log(sum)
					for i := 0; i < A; {
						if i > 0 && a.Stopped() {
							return
						}
						for e := min(i+checkElems, A); i < e; i++ {
							y[base+i*inner] = T(float64(x[base+i*inner]) - m - ls)
						}
					}
					continue
				}
				inv := 1 / sum
				for i := 0; i < A; {
					if i > 0 && a.Stopped() {
						return
					}
					for e := min(i+checkElems, A); i < e; i++ {
						y[base+i*inner] = T(math.Exp(float64(x[base+i*inner])-m) * inv)
					}
				}
			}
		})
		return func() { l.Run(lines, max(1, grainElems/(8*max(1, A))), 0) }
	}}
}

// softmaxRow normalises one contiguous row with the vector kernels: the
// maximum m, y = exp(x - m) with its sum s taken in float64, then y = y/s
// (softmax) or y = (x - m) - log(s) (log-softmax; subtracting in two steps
// keeps the precision of x - m, which is exact for the largest elements).
// NaN and infinities give NaN as the reference does. y must not be x.
//
// A row longer than longRun goes in blocks of longRun, with a call of
// stopped (returning early when true) between blocks: the maximum is the
// same, the sum adds the blocks' sums in order.
func softmaxRow[T float](y, x []T, log bool, stopped func() bool) {
	if len(x) == 0 {
		return
	}
	v := vecOf[T]()
	if len(x) <= longRun {
		m := v.rmax(x)
		v.subs(y, x, m)
		v.exp(y, y)
		s := v.sum(y)
		if log {
			v.subs(y, x, m)
			v.subs(y, y, T(math.Log(s)))
		} else {
			v.muls(y, y, T(1/s))
		}
		return
	}
	n := len(x)
	// each pass over the blocks [b, e); false when stopped
	blocks := func(f func(b, e int)) bool {
		for b := 0; b < n; b += longRun {
			if b > 0 && stopped() {
				return false
			}
			f(b, min(b+longRun, n))
		}
		return true
	}
	m := T(math.Inf(-1)) // the maximum of nothing
	var s float64
	if !blocks(func(b, e int) { m = max(m, v.rmax(x[b:e])) }) ||
		!blocks(func(b, e int) {
			v.subs(y[b:e], x[b:e], m)
			v.exp(y[b:e], y[b:e])
			s += v.sum(y[b:e])
		}) {
		return
	}
	ls, inv := T(math.Log(s)), T(1/s)
	blocks(func(b, e int) {
		if log {
			v.subs(y[b:e], x[b:e], m)
			v.subs(y[b:e], y[b:e], ls)
		} else {
			v.muls(y[b:e], y[b:e], inv)
		}
	})
}

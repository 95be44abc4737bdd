package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/fft"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The Fourier transforms (ops/fft.go) on internal/fft. The plans are
// looked up once, when the kernel is prepared (Compile); each bind
// allocates one scratch buffer per thread, so a run allocates nothing.
// A multi-axis transform is one pass per axis: the first reads the
// operand, the others work in place on the result; each pass runs its
// independent lines (or blocks of columns) in parallel.

type cplxPlan[C complex64 | complex128] interface {
	AxisRange(dst, src []C, outer, inner, lo, hi int, work []C)
	AxisWorkLen(inner int) int
	Len() int
}

type realPlan[C complex64 | complex128, R float32 | float64] interface {
	AxisForward(dst []C, src []R, outer, inner, lo, hi int, work []C)
	AxisInverse(dst []R, src []C, outer, inner, lo, hi int, work []C)
	AxisWorkLen(inner int) int
	Len() int
}

// fftPass is one axis of a transform: geometry [outer, n, inner].
type fftPass struct {
	outer, n, inner int
	axis            int
}

func passOf(s tensor.Shape, axis int) fftPass {
	return fftPass{outer: s[:axis].Size(), n: s[axis], inner: s[axis+1:].Size(), axis: axis}
}

func (p fftPass) items() int { return fft.AxisItems(p.outer, p.inner) }

// grain is how many items one part of a parallel loop takes at least.
func (p fftPass) grain() int {
	per := p.n * min(p.inner, 8)
	return max(1, grainElems/max(per, 1))
}

func prepareFFT(n *graph.Node) (*kernel, error) {
	a, ok := n.Attr().(opdef.FFTAttr)
	if !ok {
		return nil, fmt.Errorf("%w: %v with attribute %T", errUnsupported, n.Op(), n.Attr())
	}
	x := n.Input(0)
	switch n.Op() {
	case ops.OpFFT:
		total := 1
		for _, ax := range a.Axes {
			total *= x.Shape()[ax]
		}
		s := opdef.FFTScale(a.Norm, a.Inverse, total)
		switch x.DType() {
		case tensor.Complex64:
			return c2cKernel(x.Shape(), a, func(m int) cplxPlan[complex64] { return fft.NewPlan64(m, a.Inverse) }, complex64(complex(s, 0)), s), nil
		case tensor.Complex128:
			return c2cKernel(x.Shape(), a, func(m int) cplxPlan[complex128] { return fft.NewPlan128(m, a.Inverse) }, complex(s, 0), s), nil
		}
	case ops.OpRFFT:
		total := 1
		for _, ax := range a.Axes {
			total *= x.Shape()[ax]
		}
		s := opdef.FFTScale(a.Norm, false, total)
		switch x.DType() {
		case tensor.Float32:
			return r2cKernel(x.Shape(), n.Shape(), a,
				func(m int) cplxPlan[complex64] { return fft.NewPlan64(m, false) },
				func(m int) realPlan[complex64, float32] { return fft.NewRealPlan64(m) }, complex64(complex(s, 0)), s), nil
		case tensor.Float64:
			return r2cKernel(x.Shape(), n.Shape(), a,
				func(m int) cplxPlan[complex128] { return fft.NewPlan128(m, false) },
				func(m int) realPlan[complex128, float64] { return fft.NewRealPlan128(m) }, complex(s, 0), s), nil
		}
	case ops.OpIRFFT:
		total := 1
		for _, ax := range a.Axes {
			total *= n.Shape()[ax]
		}
		s := opdef.FFTScale(a.Norm, true, total)
		switch x.DType() {
		case tensor.Complex64:
			return c2rKernel(x.Shape(), n.Shape(), a,
				func(m int) cplxPlan[complex64] { return fft.NewPlan64(m, true) },
				func(m int) realPlan[complex64, float32] { return fft.NewRealPlan64(m) }, float32(s)), nil
		case tensor.Complex128:
			return c2rKernel(x.Shape(), n.Shape(), a,
				func(m int) cplxPlan[complex128] { return fft.NewPlan128(m, true) },
				func(m int) realPlan[complex128, float64] { return fft.NewRealPlan128(m) }, s), nil
		}
	}
	return nil, fmt.Errorf("%w: %v of %v", errUnsupported, n.Op(), x.DType())
}

// fftWork returns one scratch buffer per part of at least size elements.
func fftWork[C any](parts, size int) [][]C {
	w := make([][]C, parts)
	for i := range w {
		w[i] = make([]C, size)
	}
	return w
}

// runPasses runs step(lo, hi, part) over each pass's items in parallel, one
// pass after the other; it returns false when the run was cancelled.
type passLoop struct {
	l     *loop
	items int
	grain int
}

func bindPass(a *args, p fftPass, step func(lo, hi, part int)) passLoop {
	l := a.Loop(func(lo, hi, part int) {
		for i := lo; i < hi; i++ {
			if a.Stopped() {
				return
			}
			step(i, i+1, part)
		}
	})
	return passLoop{l: l, items: p.items(), grain: p.grain()}
}

func (p passLoop) run() { p.l.Run(p.items, p.grain, 0) }

func scaleC[C complex64 | complex128](y []C, s C) {
	for i := range y {
		y[i] *= s
	}
}

func scaleR[R float32 | float64](y []R, s R) {
	for i := range y {
		y[i] *= s
	}
}

func c2cKernel[C complex64 | complex128](s tensor.Shape, a opdef.FFTAttr, plan func(int) cplxPlan[C], sc C, s64 float64) *kernel {
	passes := make([]fftPass, len(a.Axes))
	plans := make([]cplxPlan[C], len(a.Axes))
	wl := 0
	for i, ax := range a.Axes {
		passes[i] = passOf(s, ax)
		plans[i] = plan(s[ax])
		wl = max(wl, plans[i].AxisWorkLen(passes[i].inner))
	}
	return &kernel{bind: func(ar *args) func() {
		work := fftWork[C](ar.Threads(), wl)
		loops := make([]passLoop, len(passes))
		for i := range passes {
			p, pl, first := passes[i], plans[i], i == 0
			loops[i] = bindPass(ar, p, func(lo, hi, part int) {
				y := as[C](ar.Out())
				x := y
				if first {
					x = as[C](ar.In(0))
				}
				pl.AxisRange(y, x, p.outer, p.inner, lo, hi, work[part])
			})
		}
		return func() {
			for _, l := range loops {
				l.run()
			}
			if s64 != 1 {
				scaleC(as[C](ar.Out())[:s.Size()], sc)
			}
		}
	}}
}

// complexPasses returns the passes and plans of the complex transforms
// along axes of an array of shape s, and the largest work length of any of
// them and of wl (a real pass's).
func complexPasses[C complex64 | complex128](s tensor.Shape, axes []int, plan func(int) cplxPlan[C], wl int) ([]fftPass, []cplxPlan[C], int) {
	var passes []fftPass
	var plans []cplxPlan[C]
	for _, ax := range axes {
		p := passOf(s, ax)
		pl := plan(s[ax])
		passes, plans = append(passes, p), append(plans, pl)
		wl = max(wl, pl.AxisWorkLen(p.inner))
	}
	return passes, plans, wl
}

func r2cKernel[C complex64 | complex128, R float32 | float64](s, ys tensor.Shape, a opdef.FFTAttr, plan func(int) cplxPlan[C], rplan func(int) realPlan[C, R], sc C, s64 float64) *kernel {
	ra := a.Axes[len(a.Axes)-1]
	rp := passOf(s, ra)
	rpl := rplan(s[ra])
	passes, plans, wl := complexPasses(ys, a.Axes[:len(a.Axes)-1], plan, rpl.AxisWorkLen(rp.inner))
	return &kernel{bind: func(ar *args) func() {
		work := fftWork[C](ar.Threads(), wl)
		loops := []passLoop{bindPass(ar, rp, func(lo, hi, part int) {
			rpl.AxisForward(as[C](ar.Out()), as[R](ar.In(0)), rp.outer, rp.inner, lo, hi, work[part])
		})}
		for i := range passes {
			p, pl := passes[i], plans[i]
			loops = append(loops, bindPass(ar, p, func(lo, hi, part int) {
				y := as[C](ar.Out())
				pl.AxisRange(y, y, p.outer, p.inner, lo, hi, work[part])
			}))
		}
		return func() {
			for _, l := range loops {
				l.run()
			}
			if s64 != 1 {
				scaleC(as[C](ar.Out())[:ys.Size()], sc)
			}
		}
	}}
}

func c2rKernel[C complex64 | complex128, R float32 | float64](s, ys tensor.Shape, a opdef.FFTAttr, plan func(int) cplxPlan[C], rplan func(int) realPlan[C, R], sc R) *kernel {
	ra := a.Axes[len(a.Axes)-1]
	rp := passOf(ys, ra)
	rpl := rplan(ys[ra])
	passes, plans, wl := complexPasses(s, a.Axes[:len(a.Axes)-1], plan, rpl.AxisWorkLen(rp.inner))
	var z C
	k := &kernel{}
	if len(passes) > 0 {
		// The complex axes' results: the c2r pass must not write the
		// operand.
		k.scratch = s.Size() * sizeofC(z)
	}
	k.bind = func(ar *args) func() {
		work := fftWork[C](ar.Threads(), wl)
		src := func() []C { return as[C](ar.In(0)) }
		if len(passes) > 0 {
			src = func() []C { return as[C](ar.scratch) }
		}
		var loops []passLoop
		for i := range passes {
			p, pl, first := passes[i], plans[i], i == 0
			loops = append(loops, bindPass(ar, p, func(lo, hi, part int) {
				t := as[C](ar.scratch)
				x := t
				if first {
					x = as[C](ar.In(0))
				}
				pl.AxisRange(t, x, p.outer, p.inner, lo, hi, work[part])
			}))
		}
		loops = append(loops, bindPass(ar, rp, func(lo, hi, part int) {
			rpl.AxisInverse(as[R](ar.Out()), src(), rp.outer, rp.inner, lo, hi, work[part])
		}))
		return func() {
			for _, l := range loops {
				l.run()
			}
			if sc != 1 {
				scaleR(as[R](ar.Out())[:ys.Size()], sc)
			}
		}
	}
	return k
}

func sizeofC[C complex64 | complex128](z C) int {
	if _, ok := any(z).(complex64); ok {
		return 8
	}
	return 16
}

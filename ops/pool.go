package ops

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Pooling over the spatial dims of a channels-first x [N, C, S...] (1 to
// 3 spatial dims), as PyTorch's max_pool1d/2d/3d and avg_pool1d/2d/3d
// (torch 1.13), with an opdef.PoolAttr: Kernel, Stride, Dilation (MaxPool
// only), the padding PadLo/PadHi before and after each spatial dim (at
// most half the kernel, as PyTorch requires), Ceil (ceil_mode) and
// CountIncludePad (AvgPool). The result's spatial size is
// opdef.PoolOutSize.
//
// MaxPool's window maximum is PyTorch's: the taps are visited in
// row-major order starting from -Inf and the first in-bounds tap, and a
// tap replaces the maximum when it is greater or NaN. So the first of
// equal maxima wins, a NaN in the window is the maximum (the last NaN is
// the arg-max), a window of -Inf keeps its first in-bounds tap, and the
// padding (-Inf) is never selected. A window with no in-bounds tap (only
// possible with dilation) is -Inf and has no arg-max (its gradient is
// dropped, as in PyTorch, which points it outside the input).
//
// AvgPool's divisor is PyTorch's: with CountIncludePad, the window's taps
// inside the padded input (a ceil-mode window overhanging the trailing
// padding counts only up to it); without, the in-bounds taps only.
//
// The gradients are primitives that are closed under differentiation:
// MaxPool(x)' = MaxPoolGrad(x, g) (g added at each window's arg-max);
// MaxPoolGrad is linear in g with transpose MaxPoolSelect(x, h) (h read
// at each window's arg-max), and both are piecewise constant in x (no
// gradient flows to x, as PyTorch). AvgPool and AvgPoolGrad are a linear
// pair, each the other's transpose.

// Op codes of the pooling ops.
var OpMaxPool, OpMaxPoolGrad, OpMaxPoolSelect, OpAvgPool, OpAvgPoolGrad graph.Op

func init() {
	// The cost is one compare or add per tap of every window (the
	// window count is the pooled shape's size).
	taps := func(pooled func(n *graph.Node) tensor.Shape) func(n *graph.Node) float64 {
		return func(n *graph.Node) float64 {
			a, ok := n.Attr().(opdef.PoolAttr)
			if !ok || !n.Valid() {
				return 0
			}
			k := 1
			for _, v := range a.Kernel {
				k *= v
			}
			return float64(pooled(n).Size() * k)
		}
	}
	self := func(n *graph.Node) tensor.Shape { return n.Shape() }
	operand := func(i int) func(n *graph.Node) tensor.Shape {
		return func(n *graph.Node) tensor.Shape { return n.Input(i).Shape() }
	}
	OpMaxPool = define(&opdef.Def{Name: "MaxPool", Doc: "the maximum of each window over the spatial dims of x [N, C, S...] (PoolAttr; -Inf padding, dilation, ceil mode); first maximum wins, NaN propagates",
		Arity: 1, Kind: opdef.Normalisation, DType: sameDType(numeric), Shape: shPool(poolMax), Cost: taps(self), Ref: refPool,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return Apply(OpMaxPoolGrad, n.Attr(), n.Input(0), g) })
		}})
	OpMaxPoolGrad = define(&opdef.Def{Name: "MaxPoolGrad", Doc: "MaxPool's gradient: the cotangent g (MaxPool's shape) added at each window's arg-max of x, zero elsewhere",
		Arity: 2, Kind: opdef.Normalisation, DType: sameDType(floats), Shape: shPool(poolMaxGrad), Cost: taps(operand(1)), Ref: refPool,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, nil, func() *graph.Node { return Apply(OpMaxPoolSelect, n.Attr(), n.Input(0), g) })
		}})
	OpMaxPoolSelect = define(&opdef.Def{Name: "MaxPoolSelect", Doc: "h (x's shape) read at each window's arg-max of x: MaxPoolGrad's transpose in its cotangent (0 for a window without one)",
		Arity: 2, Kind: opdef.Normalisation, DType: sameDType(floats), Shape: shPool(poolMaxSelect), Cost: taps(self), Ref: refPool,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, nil, func() *graph.Node { return Apply(OpMaxPoolGrad, n.Attr(), n.Input(0), g) })
		}})
	OpAvgPool = define(&opdef.Def{Name: "AvgPool", Doc: "the mean of each window over the spatial dims of x [N, C, S...] (PoolAttr; zero padding, ceil mode, count_include_pad as PyTorch)",
		Arity: 1, Kind: opdef.Normalisation, DType: sameDType(floats), Shape: shPool(poolAvg), Cost: taps(self), Ref: refPool,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.PoolAttr)
				a.Size = append([]int(nil), n.Input(0).Shape()[2:]...)
				return Apply(OpAvgPoolGrad, a, g)
			})
		}})
	OpAvgPoolGrad = define(&opdef.Def{Name: "AvgPoolGrad", Doc: "AvgPool's gradient (its transpose): each window's cotangent over its divisor, spread over the window (PoolAttr.Size: the input's spatial size)",
		Arity: 1, Kind: opdef.Normalisation, DType: sameDType(floats), Shape: shPool(poolAvgGrad), Cost: taps(operand(0)), Ref: refPool,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.PoolAttr)
				a.Size = nil
				return Apply(OpAvgPool, a, g)
			})
		}})
}

// poolKind says which pooling op a rule checks.
type poolKind int

const (
	poolMax poolKind = iota
	poolMaxGrad
	poolMaxSelect
	poolAvg
	poolAvgGrad
)

func (k poolKind) max() bool { return k <= poolMaxSelect }

// checkPoolAttr validates a pooling op's attribute for x's spatial rank
// d: every list has d entries, kernel, stride and dilation are >= 1,
// padding is in [0, kernel/2] (PyTorch's limit), dilation is 1 and
// count_include_pad unset where they do not apply, and Size is set only
// for AvgPoolGrad.
func checkPoolAttr(k poolKind, attr graph.Attr, d int) (opdef.PoolAttr, error) {
	a, ok := attr.(opdef.PoolAttr)
	if !ok {
		return a, argErr("needs a PoolAttr attribute, got %T", attr)
	}
	if d < 1 || d > 3 {
		return a, shapeErr("needs x of rank 3 to 5 ([N, C] and 1 to 3 spatial dims), got rank %d", d+2)
	}
	for _, l := range []struct {
		name string
		v    []int
		min  int
	}{{"kernel", a.Kernel, 1}, {"stride", a.Stride, 1}, {"dilation", a.Dilation, 1}, {"low padding", a.PadLo, 0}, {"high padding", a.PadHi, 0}} {
		if len(l.v) != d {
			return a, argErr("the %s %s has %d entries for %d spatial dims", l.name, intList(l.v), len(l.v), d)
		}
		for _, v := range l.v {
			if v < l.min {
				return a, argErr("the %s %s must be >= %d", l.name, intList(l.v), l.min)
			}
		}
	}
	for i := range d {
		if a.PadLo[i] > a.Kernel[i]/2 || a.PadHi[i] > a.Kernel[i]/2 {
			return a, argErr("the padding %s/%s must be at most half the kernel %s (PyTorch's rule)", intList(a.PadLo), intList(a.PadHi), intList(a.Kernel))
		}
		if !k.max() && a.Dilation[i] != 1 {
			return a, argErr("AvgPool has no dilation, got %s", intList(a.Dilation))
		}
	}
	if k.max() && a.CountIncludePad {
		return a, argErr("count_include_pad applies to AvgPool only")
	}
	if (k == poolAvgGrad) != (a.Size != nil) {
		if a.Size == nil {
			return a, argErr("needs the input's spatial size (Size)")
		}
		return a, argErr("takes no Size, got %s", intList(a.Size))
	}
	if a.Size != nil && len(a.Size) != d {
		return a, argErr("the size %s has %d entries for %d spatial dims", intList(a.Size), len(a.Size), d)
	}
	return a, nil
}

// pooledShape is x's shape [N, C, S...] with the spatial dims pooled, or
// an error when a window does not fit.
func pooledShape(a opdef.PoolAttr, x tensor.Shape) (tensor.Shape, error) {
	out := x.Clone()
	for i, s := range x[2:] {
		o := opdef.PoolOutSize(s, a.Kernel[i], a.Stride[i], a.Dilation[i], a.PadLo[i], a.PadHi[i], a.Ceil)
		// (PoolOutSize divides a negative numerator truncating toward
		// zero, so a window longer than the padded input by less than the
		// stride gives 1: the span is compared here.)
		if o < 1 || a.Dilation[i]*(a.Kernel[i]-1)+1 > s+a.PadLo[i]+a.PadHi[i] {
			return nil, shapeErr("the window (kernel %s, dilation %s) does not fit spatial dim %d of length %d padded by %d/%d: the result would be empty",
				intList(a.Kernel), intList(a.Dilation), i, s, a.PadLo[i], a.PadHi[i])
		}
		out[2+i] = o
	}
	return out, nil
}

// shPool is the shape rule of the pooling op of kind k.
func shPool(k poolKind) opdef.ShapeRule {
	return func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		x := in[0]
		if k == poolAvgGrad {
			// the operand is the cotangent; x's shape is [N, C, Size...]
			a, err := checkPoolAttr(k, attr, len(x)-2)
			if err != nil {
				return nil, err
			}
			x = append(tensor.Shape{x[0], x[1]}, a.Size...)
			if err := validShape(x); err != nil {
				return nil, shapeErr("the size %s: %v", intList(a.Size), err)
			}
			y, err := pooledShape(a, x)
			if err != nil {
				return nil, err
			}
			if !y.Equal(in[0]) {
				return nil, shapeErr("the cotangent has shape %v; pooling an input of spatial size %s gives %v", in[0], intList(a.Size), y)
			}
			return x, nil
		}
		a, err := checkPoolAttr(k, attr, len(x)-2)
		if err != nil {
			return nil, err
		}
		y, err := pooledShape(a, x)
		if err != nil {
			return nil, err
		}
		switch k {
		case poolMaxGrad:
			if !in[1].Equal(y) {
				return nil, shapeErr("the cotangent has shape %v; MaxPool of x %v gives %v", in[1], x, y)
			}
			return x.Clone(), nil
		case poolMaxSelect:
			if !in[1].Equal(x) {
				return nil, shapeErr("h has shape %v; it needs x's shape %v", in[1], x)
			}
		}
		return y, nil
	}
}

// ---- builders ----

// MaxPool returns the maximum of each window of x [N, C, S...] over its 1
// to 3 spatial dims (len(kernel) of them): torch.nn.functional.max_pool1d,
// max_pool2d, max_pool3d. The stride defaults to the kernel (as PyTorch);
// options: Stride, Padding or PaddingLoHi (-Inf padding, at most half the
// kernel), Dilation, CeilMode. The first maximum of a window (row-major)
// is the one selected; a NaN in the window makes it NaN. Integer and
// float dtypes (an integer window without input taps, possible only with
// dilation, is the dtype's minimum; torch 1.13 has no integer max_pool,
// and jax.lax.reduce_window with max gives the same; the gradient is for
// floats). Its
// gradient routes each cotangent to its window's maximum, adding where
// windows overlap.
func MaxPool(x *graph.Node, kernel []int, opts ...WindowOption) *graph.Node {
	return pool("MaxPool", OpMaxPool, x, kernel, opts)
}

// AvgPool returns the mean of each window of x [N, C, S...] over its 1 to
// 3 spatial dims: torch.nn.functional.avg_pool1d, avg_pool2d, avg_pool3d
// with count_include_pad=True. The stride defaults to the kernel; options:
// Stride, Padding or PaddingLoHi (zeros, at most half the kernel),
// CeilMode, ExcludePad (count_include_pad=False: divide by the number of
// input elements in the window). The divisor is PyTorch's: with the
// padding counted, a ceil-mode window overhanging the padded input counts
// only its part inside it. Float dtypes.
func AvgPool(x *graph.Node, kernel []int, opts ...WindowOption) *graph.Node {
	return pool("AvgPool", OpAvgPool, x, kernel, opts)
}

func pool(name string, op graph.Op, x *graph.Node, kernel []int, opts []WindowOption) *graph.Node {
	if _, bad := graph.Operands(name, x); bad != nil {
		return bad
	}
	d := len(kernel)
	if d < 1 || d > 3 {
		return fail(graph.ErrInvalid, name, []*graph.Node{x}, "the kernel %s must have 1 to 3 entries (one per spatial dim)", intList(kernel))
	}
	if x.Rank() != d+2 {
		return fail(graph.ErrShape, name, []*graph.Node{x}, "a kernel %s of %d spatial dims needs x of rank %d ([N, C, S...]), got %v", intList(kernel), d, d+2, x.Shape())
	}
	a, err := poolSettings(name, d, kernel, op == OpMaxPool, opts)
	if err != nil {
		return fail(graph.ErrInvalid, name, []*graph.Node{x}, "%v", err)
	}
	return Apply(op, a, x)
}

// GlobalAvgPool is the mean of x [N, C, S...] over its spatial dims:
// [N, C] (torch's adaptive_avg_pool to size 1, flattened).
func GlobalAvgPool(x *graph.Node) *graph.Node {
	axes, bad := spatialAxes("GlobalAvgPool", x)
	if bad != nil {
		return bad
	}
	return Mean(x, axes...)
}

// GlobalMaxPool is the maximum of x [N, C, S...] over its spatial dims:
// [N, C] (torch's adaptive_max_pool to size 1, flattened). NaN
// propagates; the gradient goes to the first maximum (Max's rule).
func GlobalMaxPool(x *graph.Node) *graph.Node {
	axes, bad := spatialAxes("GlobalMaxPool", x)
	if bad != nil {
		return bad
	}
	return Max(x, axes...)
}

func spatialAxes(name string, x *graph.Node) ([]int, *graph.Node) {
	if _, bad := graph.Operands(name, x); bad != nil {
		return nil, bad
	}
	if x.Rank() < 3 {
		return nil, fail(graph.ErrShape, name, []*graph.Node{x}, "needs x [N, C, S...] with at least one spatial dim, got %v", x.Shape())
	}
	axes := make([]int, x.Rank()-2)
	for i := range axes {
		axes[i] = i + 2
	}
	return axes, nil
}

// adaptiveWindow is PyTorch's window i of o over a length s: [floor(i*s/o),
// ceil((i+1)*s/o)).
func adaptiveWindow(i, o, s int) (int, int) { return i * s / o, ((i+1)*s + o - 1) / o }

func adaptiveArgs(name string, x *graph.Node, size []int) *graph.Node {
	if _, bad := graph.Operands(name, x); bad != nil {
		return bad
	}
	d := len(size)
	if d < 1 || d > 3 || x.Rank() != d+2 {
		return fail(graph.ErrShape, name, []*graph.Node{x}, "an output size %s needs 1 to 3 entries and x of rank len(size)+2 ([N, C, S...]), got x %v", intList(size), x.Shape())
	}
	for i, o := range size {
		if o < 1 || x.Shape()[2+i] < 1 {
			return fail(graph.ErrShape, name, []*graph.Node{x}, "the output size %s must be >= 1 and x's spatial dims non-empty, got x %v", intList(size), x.Shape())
		}
	}
	return nil
}

// evenWindows is the pooling attribute of adaptive windows over spatial
// dims sp into size when every dim is a multiple of its size (equal,
// disjoint windows: kernel = stride = s/o, no padding), and false
// otherwise.
func evenWindows(sp tensor.Shape, size []int) (opdef.PoolAttr, bool) {
	kernel := make([]int, len(size))
	for i, o := range size {
		if sp[i]%o != 0 {
			return opdef.PoolAttr{}, false
		}
		kernel[i] = sp[i] / o
	}
	return opdef.PoolAttr{Kernel: kernel, Stride: kernel, Dilation: ones(len(size)),
		PadLo: make([]int, len(size)), PadHi: make([]int, len(size))}, true
}

// AdaptiveAvgPool averages x [N, C, S...] into [N, C, size...] with
// PyTorch's windows (adaptive_avg_pool1d/2d/3d): output i of a dim of
// length s averages [floor(i*s/o), ceil((i+1)*s/o)). When every s is a
// multiple of its o the windows are equal and disjoint, and it is one
// AvgPool (kernel = stride = s/o); otherwise it is separable: each
// spatial dim is contracted with a constant [s, o] averaging matrix by a
// MatMul (the windows of a dim are 1-D, and the mean over a box is the
// mean of means).
func AdaptiveAvgPool(x *graph.Node, size ...int) *graph.Node {
	if bad := adaptiveArgs("AdaptiveAvgPool", x, size); bad != nil {
		return bad
	}
	sp := x.Shape()[2:]
	if a, even := evenWindows(sp, size); even {
		a.CountIncludePad = true
		return Apply(OpAvgPool, a, x)
	}
	y := x
	r := x.Rank()
	for i, o := range size {
		s := sp[i]
		if s == o {
			continue
		}
		m := make([]float64, s*o) // [s, o]
		for j := range o {
			lo, hi := adaptiveWindow(j, o, s)
			for k := lo; k < hi; k++ {
				m[k*o+j] = 1 / float64(hi-lo)
			}
		}
		t, err := tensor.FromFloat64s(x.DType(), m, s, o)
		if err != nil {
			return fail(graph.ErrInvalid, "AdaptiveAvgPool", []*graph.Node{x}, "%v", err)
		}
		// move axis 2+i last, contract, move it back
		y = MoveAxis(MatMul(MoveAxis(y, 2+i, r-1), x.Graph().Const(t)), r-1, 2+i)
	}
	return y
}

// AdaptiveMaxPool takes the maximum of x [N, C, S...] over PyTorch's
// adaptive windows into [N, C, size...] (adaptive_max_pool1d/2d/3d's
// values). When every s is a multiple of its o it is one MaxPool;
// otherwise it is separable: per spatial dim, a Gather of each window's
// positions (the shorter windows padded by repeating their last position,
// which leaves a maximum unchanged) and a Max over them; the maximum of a
// box is the maximum of the maxima of its rows, and the first maximum in
// row-major order is the one the gradient reaches, as in MaxPool. A NaN
// in a window makes it NaN.
func AdaptiveMaxPool(x *graph.Node, size ...int) *graph.Node {
	if bad := adaptiveArgs("AdaptiveMaxPool", x, size); bad != nil {
		return bad
	}
	sp := x.Shape()[2:]
	if a, even := evenWindows(sp, size); even {
		return Apply(OpMaxPool, a, x)
	}
	// The last dim first, so that the first maximum of a box in row-major
	// order is the one the outer Max picks (its first row holding the
	// maximum, that row's first column holding it).
	y := x
	for i := len(size) - 1; i >= 0; i-- {
		s, o := sp[i], size[i]
		if s == o {
			continue
		}
		w := 0
		for j := range o {
			lo, hi := adaptiveWindow(j, o, s)
			w = max(w, hi-lo)
		}
		idx := make([]float64, o*w)
		for j := range o {
			lo, hi := adaptiveWindow(j, o, s)
			for k := range w {
				idx[j*w+k] = float64(min(lo+k, hi-1))
			}
		}
		t, err := tensor.FromFloat64s(tensor.Int32, idx, o*w)
		if err != nil {
			return fail(graph.ErrInvalid, "AdaptiveMaxPool", []*graph.Node{x}, "%v", err)
		}
		ax := 2 + i
		gs := y.Shape().Clone()
		gs[ax] = o
		gs = append(gs[:ax+1], append(tensor.Shape{w}, gs[ax+1:]...)...)
		y = Max(Reshape(Gather(y, x.Graph().Const(t), ax), gs...), ax+1)
	}
	return y
}

func ones(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// ---- the reference ----

// poolWindows calls f for every window of every plane of a pooling with
// attribute a over x's shape [N, C, S...]: the plane p, the window's
// row-major index w within the plane, the flat in-plane positions of its
// in-bounds taps in row-major tap order (reused between calls), and
// PyTorch's AvgPool divisor.
func poolWindows(a opdef.PoolAttr, x tensor.Shape, f func(p, w int, taps []int, div float64)) {
	sp := x[2:]
	d := len(sp)
	y, err := pooledShape(a, x)
	if err != nil {
		return
	}
	out := y[2:]
	planes := x[0] * x[1]
	windows := tensor.Shape(out).Size()
	kn := tensor.Shape(a.Kernel).Size()
	taps := make([]int, 0, kn)
	o, k := make([]int, d), make([]int, d)
	for p := range planes {
		for w := range windows {
			for i, r := d-1, w; i >= 0; i-- {
				o[i], r = r%out[i], r/out[i]
			}
			taps = taps[:0]
			for t := range kn {
				for i, r := d-1, t; i >= 0; i-- {
					k[i], r = r%a.Kernel[i], r/a.Kernel[i]
				}
				pos, inside := 0, true
				for i := range d {
					c := o[i]*a.Stride[i] - a.PadLo[i] + k[i]*a.Dilation[i]
					inside = inside && c >= 0 && c < sp[i]
					pos = pos*sp[i] + c
				}
				if inside {
					taps = append(taps, pos)
				}
			}
			div := float64(len(taps))
			if a.CountIncludePad {
				div = 1
				for i := range d {
					start := o[i]*a.Stride[i] - a.PadLo[i]
					div *= float64(min(start+a.Kernel[i], sp[i]+a.PadHi[i]) - start)
				}
			}
			f(p, w, taps, div)
		}
	}
}

// argMaxOf is PyTorch's window maximum over x's values at the taps: the
// position of the first tap greater than every earlier one or NaN,
// starting from -Inf at the first tap; -1 for no taps.
func argMaxOf(x []float64, taps []int) int {
	if len(taps) == 0 {
		return -1
	}
	m, at := math.Inf(-1), taps[0]
	for _, t := range taps {
		if v := x[t]; v > m || v != v {
			m, at = v, t
		}
	}
	return at
}

// refPool is the float64 reference of every pooling op, a direct loop
// over the windows (poolWindows).
func refPool(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.PoolAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	xs := in[0].Shape // the pooled input's shape
	if n.Op() == OpAvgPoolGrad {
		xs = n.Shape()
	}
	plane := tensor.Shape(xs[2:]).Size()
	y, err := pooledShape(a, xs)
	if err != nil {
		return nil, err
	}
	yplane := tensor.Shape(y[2:]).Size()
	poolWindows(a, xs, func(p, w int, taps []int, div float64) {
		wi := p*yplane + w
		switch n.Op() {
		case OpMaxPool, OpMaxPoolGrad, OpMaxPoolSelect:
			if n.DType().IsInt() { // MaxPool: the first maximum, the dtype's minimum for no taps
				lo, _ := n.DType().IntRange()
				x := in[0].I[p*plane : (p+1)*plane]
				out.I[wi] = lo
				for j, t := range taps {
					if j == 0 || x[t] > out.I[wi] {
						out.I[wi] = x[t]
					}
				}
				return
			}
			x := in[0].F[p*plane : (p+1)*plane]
			at := argMaxOf(x, taps)
			switch {
			case n.Op() == OpMaxPool && at < 0:
				out.F[wi] = math.Inf(-1)
			case n.Op() == OpMaxPool:
				out.F[wi] = x[at]
			case at < 0:
			case n.Op() == OpMaxPoolGrad:
				out.F[p*plane+at] += in[1].F[wi]
			default:
				out.F[wi] = in[1].F[p*plane+at]
			}
		case OpAvgPool:
			var s float64
			for _, t := range taps {
				s += in[0].F[p*plane+t]
			}
			out.F[wi] = s / div
		case OpAvgPoolGrad:
			g := in[0].F[wi] / div
			for _, t := range taps {
				out.F[p*plane+t] += g
			}
		default:
			panic(fmt.Sprintf("refPool: %v", n.Op()))
		}
	})
	return out, nil
}

// poolSettings resolves a pool's window options (ops/window.go) into its
// attribute: the stride defaults to the kernel (PyTorch), dilation to 1,
// padding to none; AvgPool counts the padding unless ExcludePad.
func poolSettings(op string, d int, kernel []int, isMax bool, opts []WindowOption) (opdef.PoolAttr, error) {
	var given Window // only to see whether a stride was given
	for _, o := range opts {
		if o != nil {
			o(&given)
		}
	}
	w, err := resolveWindow(op, d, opts)
	if err != nil {
		return opdef.PoolAttr{}, err
	}
	a := opdef.PoolAttr{Kernel: append([]int(nil), kernel...), Stride: w.Stride, Dilation: w.Dilation,
		PadLo: w.PadLo, PadHi: w.PadHi, Ceil: w.Ceil, CountIncludePad: !isMax && !w.ExcludePad}
	if given.Stride == nil {
		a.Stride = append([]int(nil), kernel...)
	}
	return a, nil
}

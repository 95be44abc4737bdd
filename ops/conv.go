package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The convolutions: three primitives, channels first, 1 to 3 spatial
// dims, all with a ConvAttr, closed under differentiation.
//
//   - Conv(x [N, C, S...], w [O, C/G, K...]) -> y [N, O, Y...], Y =
//     ConvOutSize(S, K, stride, dilation, lo, hi): PyTorch's convNd
//     (cross-correlation, no flipped kernel).
//   - ConvTranspose(dy [N, O, Y...], w [O, C/G, K...]) -> dx [N, C, S...]
//     with S = attr.Size: the transpose (input gradient) of Conv with the
//     same attribute; PyTorch's conv_transposeNd is this op.
//   - ConvFilterGrad(x [N, C, S...], dy [N, O, Y...]) -> dw [O, C/G, K...]
//     with K = attr.Size: the filter gradient of Conv.
//
// Each is bilinear in its two operands, so each one's gradient with
// respect to either operand is one of the three.

// Op codes of the convolutions.
var OpConv, OpConvTranspose, OpConvFilterGrad graph.Op

func init() {
	OpConv = define(&opdef.Def{Name: "Conv", Doc: "N-d convolution (cross-correlation) of x [N, C, S...] with filters w [O, C/G, K...], channels first (ConvAttr: stride, dilation, padding, groups)",
		Arity: 2, Kind: opdef.Contraction, DType: dtConv, Shape: shConv, Ref: refConv, Cost: convCost,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a := n.Attr().(opdef.ConvAttr)
			x, w := n.Input(0), n.Input(1)
			return each(need,
				func() *graph.Node { return Apply(OpConvTranspose, withSize(a, x.Shape()[2:]), g, w) },
				func() *graph.Node { return Apply(OpConvFilterGrad, withSize(a, w.Shape()[2:]), x, g) })
		}})
	OpConvTranspose = define(&opdef.Def{Name: "ConvTranspose", Doc: "the transpose of Conv in its input: dy [N, O, Y...] and w [O, C/G, K...] to [N, C, Size...] (ConvAttr)",
		Arity: 2, Kind: opdef.Contraction, DType: dtConv, Shape: shConvTranspose, Ref: refConv, Cost: convCost,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a := n.Attr().(opdef.ConvAttr)
			dy, w := n.Input(0), n.Input(1)
			return each(need,
				func() *graph.Node { return Apply(OpConv, withSize(a, nil), g, w) },
				func() *graph.Node { return Apply(OpConvFilterGrad, withSize(a, w.Shape()[2:]), g, dy) })
		}})
	OpConvFilterGrad = define(&opdef.Def{Name: "ConvFilterGrad", Doc: "the filter gradient of Conv: x [N, C, S...] and dy [N, O, Y...] to [O, C/G, Size...] (ConvAttr)",
		Arity: 2, Kind: opdef.Contraction, DType: dtConv, Shape: shConvFilterGrad, Ref: refConv, Cost: convCost,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a := n.Attr().(opdef.ConvAttr)
			x, dy := n.Input(0), n.Input(1)
			return each(need,
				func() *graph.Node { return Apply(OpConvTranspose, withSize(a, x.Shape()[2:]), dy, g) },
				func() *graph.Node { return Apply(OpConv, withSize(a, nil), x, g) })
		}})
}

// withSize is a copy of a with Size set (nil for Conv).
func withSize(a opdef.ConvAttr, size []int) opdef.ConvAttr {
	b := opdef.CloneAttr(a).(opdef.ConvAttr)
	b.Size = nil
	if size != nil {
		b.Size = append([]int{}, size...)
	}
	return b
}

// ---- rules ----

// dtConv: two operands of one float dtype (the shape rule checks the
// attribute).
var dtConv = sameDType(floats)

// convAttrOf checks attr against spatial spatial dims: lengths, ranges,
// and whether Size is wanted.
func convAttrOf(attr graph.Attr, spatial int, wantSize bool) (opdef.ConvAttr, error) {
	a, ok := attr.(opdef.ConvAttr)
	if !ok {
		return a, argErr("needs a ConvAttr attribute, got %T", attr)
	}
	if spatial < 1 || spatial > 3 {
		return a, shapeErr("operands need rank 3 to 5 ([N, C] and 1 to 3 spatial dims), got rank %d", spatial+2)
	}
	for _, f := range []struct {
		name string
		v    []int
		min  int
	}{{"stride", a.Stride, 1}, {"dilation", a.Dilation, 1}, {"padding (low)", a.PadLo, 0}, {"padding (high)", a.PadHi, 0}} {
		if len(f.v) != spatial {
			return a, argErr("%s has %d values for %d spatial dims", f.name, len(f.v), spatial)
		}
		for _, v := range f.v {
			if v < f.min {
				return a, argErr("%s %s: every value must be >= %d", f.name, intList(f.v), f.min)
			}
		}
	}
	if a.Groups < 1 {
		return a, argErr("groups = %d: must be >= 1", a.Groups)
	}
	switch {
	case !wantSize && a.Size != nil:
		return a, argErr("Conv takes no size, got %s", intList(a.Size))
	case wantSize && len(a.Size) != spatial:
		return a, argErr("size has %d values for %d spatial dims", len(a.Size), spatial)
	}
	for _, v := range a.Size {
		if v < 1 {
			return a, argErr("size %s: every value must be >= 1", intList(a.Size))
		}
	}
	return a, nil
}

// convOut is the convolution's result size over the spatial dims, or an
// error when a window does not fit.
func convOut(a opdef.ConvAttr, s, k []int) ([]int, error) {
	y := make([]int, len(s))
	for i := range s {
		y[i] = opdef.ConvOutSize(s[i], k[i], a.Stride[i], a.Dilation[i], a.PadLo[i], a.PadHi[i])
		if y[i] < 1 {
			return nil, shapeErr("spatial dim %d: the window (%d taps, dilation %d, span %d) does not fit the padded input (%d + %d + %d)",
				i, k[i], a.Dilation[i], a.Dilation[i]*(k[i]-1)+1, a.PadLo[i], s[i], a.PadHi[i])
		}
	}
	return y, nil
}

// checkChannels checks the filter w [O, C/G, K...] against C input
// channels and G groups.
func checkChannels(a opdef.ConvAttr, c int, w []int) error {
	o, cg := w[0], w[1]
	switch {
	case c < 1 || o < 1 || cg < 1:
		return shapeErr("channel counts must be >= 1 (input channels %d, filter %v)", c, w)
	case c%a.Groups != 0 || o%a.Groups != 0:
		return shapeErr("groups = %d must divide the input channels %d and the output channels %d", a.Groups, c, o)
	case cg*a.Groups != c:
		return shapeErr("the filter %v has %d input channels per group; %d channels in %d groups need %d", w, cg, c, a.Groups, c/a.Groups)
	}
	for i, k := range w[2:] {
		if k < 1 {
			return shapeErr("the filter %v has size %d in spatial dim %d; it needs >= 1", w, k, i)
		}
	}
	return nil
}

func shConv(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	x, w := in[0], in[1]
	if len(x) != len(w) {
		return nil, shapeErr("x %v and the filter %v need the same rank ([N, C, S...] and [O, C/groups, K...])", x, w)
	}
	a, err := convAttrOf(attr, len(x)-2, false)
	if err != nil {
		return nil, err
	}
	if err := checkChannels(a, x[1], w); err != nil {
		return nil, err
	}
	y, err := convOut(a, x[2:], w[2:])
	if err != nil {
		return nil, err
	}
	return append(tensor.Shape{x[0], w[0]}, y...), nil
}

func shConvTranspose(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	dy, w := in[0], in[1]
	if len(dy) != len(w) {
		return nil, shapeErr("dy %v and the filter %v need the same rank ([N, O, Y...] and [O, C/groups, K...])", dy, w)
	}
	a, err := convAttrOf(attr, len(dy)-2, true)
	if err != nil {
		return nil, err
	}
	if dy[1] != w[0] {
		return nil, shapeErr("dy has %d channels but the filter %v has %d output channels", dy[1], w, w[0])
	}
	c := w[1] * a.Groups
	if err := checkChannels(a, c, w); err != nil {
		return nil, err
	}
	y, err := convOut(a, a.Size, w[2:])
	if err != nil {
		return nil, err
	}
	if !tensor.Shape(y).Equal(dy[2:]) {
		return nil, shapeErr("dy's spatial size %v is not the convolution's result size %v for an input of size %s", dy[2:], y, intList(a.Size))
	}
	return append(tensor.Shape{dy[0], c}, a.Size...), nil
}

func shConvFilterGrad(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	x, dy := in[0], in[1]
	if len(x) != len(dy) {
		return nil, shapeErr("x %v and dy %v need the same rank", x, dy)
	}
	a, err := convAttrOf(attr, len(x)-2, true)
	if err != nil {
		return nil, err
	}
	if x[0] != dy[0] {
		return nil, shapeErr("x %v and dy %v have different batch sizes", x, dy)
	}
	w := append(tensor.Shape{dy[1], x[1] / max(a.Groups, 1)}, a.Size...)
	if err := checkChannels(a, x[1], w); err != nil {
		return nil, err
	}
	y, err := convOut(a, x[2:], a.Size)
	if err != nil {
		return nil, err
	}
	if !tensor.Shape(y).Equal(dy[2:]) {
		return nil, shapeErr("dy's spatial size %v is not the convolution's result size %v for x %v and a filter of size %s", dy[2:], y, x, intList(a.Size))
	}
	return w, nil
}

// convCost is 2 FLOPs per multiply-add of the convolution the node
// belongs to: N·O·prod(Y)·(C/G)·prod(K) of them, the same for all three.
func convCost(n *graph.Node) float64 {
	g, ok := convGeometry(n)
	if !ok {
		return 0
	}
	return 2 * float64(g.n) * float64(g.o) * float64(prod(g.y)) * float64(g.c/g.groups) * float64(prod(g.k))
}

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// convGeom is a convolution's sizes: x [n, c, s...], w [o, c/groups,
// k...], y [n, o, y...].
type convGeom struct {
	n, c, o, groups int
	s, k, y         []int
	a               opdef.ConvAttr
}

// convGeometry reads the geometry of a well-formed Conv, ConvTranspose or
// ConvFilterGrad node.
func convGeometry(n *graph.Node) (convGeom, bool) {
	a, ok := n.Attr().(opdef.ConvAttr)
	if !n.Valid() || !ok || len(n.Inputs()) != 2 {
		return convGeom{}, false
	}
	g := convGeom{groups: a.Groups, a: a}
	in0, in1, out := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	switch n.Op() {
	case OpConv: // x, w -> y
		g.n, g.c, g.o, g.s, g.k, g.y = in0[0], in0[1], in1[0], in0[2:], in1[2:], out[2:]
	case OpConvTranspose: // dy, w -> dx
		g.n, g.c, g.o, g.s, g.k, g.y = out[0], out[1], in1[0], out[2:], in1[2:], in0[2:]
	case OpConvFilterGrad: // x, dy -> dw
		g.n, g.c, g.o, g.s, g.k, g.y = in0[0], in0[1], in1[1], in0[2:], out[2:], in1[2:]
	default:
		return convGeom{}, false
	}
	return g, true
}

// refConv evaluates any of the three by the definition, in float64: for
// every batch n, group, output channel o, channel c of the group, output
// position p and tap t whose input position q = p·stride - lo + t·dilation
// lies inside x, the product x[n, c, q]·w[o, c, t] contributes to y[n, o,
// p] (Conv), dx[n, c, q] (ConvTranspose, from dy and w) or dw[o, c, t]
// (ConvFilterGrad, from x and dy).
func refConv(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	g, _ := convGeometry(n)
	out := opdef.NewValue(n.DType(), n.Shape())
	sp := len(g.s)
	cg, og := g.c/g.groups, g.o/g.groups
	sv, kv, yv := prod(g.s), prod(g.k), prod(g.y)
	pi, ti := make([]int, sp), make([]int, sp)
	// tap maps (output position p, tap t) to the flat input position, or -1.
	tap := func(p, t int) int {
		opdef.Index(g.y, p, pi)
		opdef.Index(g.k, t, ti)
		q := 0
		for d := 0; d < sp; d++ {
			qd := pi[d]*g.a.Stride[d] - g.a.PadLo[d] + ti[d]*g.a.Dilation[d]
			if qd < 0 || qd >= g.s[d] {
				return -1
			}
			q = q*g.s[d] + qd
		}
		return q
	}
	for b := 0; b < g.n; b++ {
		for gr := 0; gr < g.groups; gr++ {
			for oo := 0; oo < og; oo++ {
				o := gr*og + oo
				for cc := 0; cc < cg; cc++ {
					c := gr*cg + cc
					for p := 0; p < yv; p++ {
						for t := 0; t < kv; t++ {
							q := tap(p, t)
							if q < 0 {
								continue
							}
							xi := (b*g.c+c)*sv + q
							wi := (o*cg+cc)*kv + t
							yi := (b*g.o+o)*yv + p
							switch n.Op() {
							case OpConv:
								out.F[yi] += in[0].F[xi] * in[1].F[wi]
							case OpConvTranspose:
								out.F[xi] += in[0].F[yi] * in[1].F[wi]
							default:
								out.F[wi] += in[0].F[xi] * in[1].F[yi]
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

// ---- builders ----

// convWindow resolves the options of the convolution builder named op
// for the filter w, checking ranks first.
func convWindow(op string, x, w *graph.Node, opts []WindowOption) (opdef.ConvAttr, Window, *graph.Node) {
	operands := []*graph.Node{x, w}
	if _, bad := graph.Operands(op, x, w); bad != nil {
		return opdef.ConvAttr{}, Window{}, bad
	}
	if w.Rank() < 3 || w.Rank() > 5 || x.Rank() != w.Rank() {
		return opdef.ConvAttr{}, Window{}, fail(graph.ErrShape, op, operands,
			"x [N, C, S...] and the filter [O, C/groups, K...] need the same rank, 3 to 5 (1 to 3 spatial dims)")
	}
	sp := w.Rank() - 2
	win, err := resolveWindow(op, sp, opts)
	if err != nil {
		return opdef.ConvAttr{}, Window{}, fail(graph.ErrInvalid, op, operands, "%v", err)
	}
	win.SamePads(w.Shape()[2:])
	a := opdef.ConvAttr{Stride: win.Stride, Dilation: win.Dilation, PadLo: win.PadLo, PadHi: win.PadHi, Groups: win.Groups}
	return a, win, nil
}

// Conv is the N-d convolution of PyTorch's convNd (a cross-correlation):
// x [N, C, S...] with filters w [O, C/groups, K...], 1 to 3 spatial dims
// (from w's rank), to [N, O, Y...] with Y = floor((S + lo + hi -
// dilation·(K-1) - 1) / stride) + 1. Options: Stride, Dilation, Padding,
// PaddingLoHi, Same, Valid, Groups. Float dtypes.
func Conv(x, w *graph.Node, opts ...WindowOption) *graph.Node {
	a, _, bad := convWindow("Conv", x, w, opts)
	if bad != nil {
		return bad
	}
	return Apply(OpConv, a, x, w)
}

// ConvTranspose is PyTorch's conv_transposeNd: x [N, Cin, S...] with w
// [Cin, Cout/groups, K...] to [N, Cout, Z...], Z = (S-1)·stride - lo - hi
// + dilation·(K-1) + outputPadding + 1, the input gradient of the
// convolution with those settings: padding removes from the result,
// OutputPadding (each below max(stride, dilation)) adds to its high side.
// Options: Stride, Dilation, Padding, PaddingLoHi, Valid, Groups,
// OutputPadding.
func ConvTranspose(x, w *graph.Node, opts ...WindowOption) *graph.Node {
	a, win, bad := convWindow("ConvTranspose", x, w, opts)
	if bad != nil {
		return bad
	}
	operands := []*graph.Node{x, w}
	sp := w.Rank() - 2
	s, k := x.Shape()[2:], w.Shape()[2:]
	a.Size = make([]int, sp)
	a.PadHi = append([]int{}, a.PadHi...)
	for i := 0; i < sp; i++ {
		st, d, op := a.Stride[i], a.Dilation[i], win.OutputPadding[i]
		if op >= max(st, d) {
			return fail(graph.ErrInvalid, "ConvTranspose", operands, "output padding %s must be smaller than max(stride, dilation) in every dim (stride %s, dilation %s)",
				intList(win.OutputPadding), intList(a.Stride), intList(a.Dilation))
		}
		a.Size[i] = (s[i]-1)*st - a.PadLo[i] - a.PadHi[i] + d*(k[i]-1) + op + 1
		if a.Size[i] < 1 {
			return fail(graph.ErrShape, "ConvTranspose", operands, "the result would have size %d in spatial dim %d (input %v, filter %v, padding %s/%s)",
				a.Size[i], i, x.Shape(), w.Shape(), intList(a.PadLo), intList(a.PadHi))
		}
		// The convolution of the result size must give back s: whole
		// strides of output padding come off its high padding.
		a.PadHi[i] -= op / st * st
		if a.PadHi[i] < 0 {
			return fail(graph.ErrInvalid, "ConvTranspose", operands, "output padding %d with stride %d needs high padding of at least %d in spatial dim %d",
				op, st, op/st*st, i)
		}
	}
	return Apply(OpConvTranspose, a, x, w)
}

// ConvBias is Conv(x, w, opts...) plus b [O] added to every output
// channel (broadcast over N and the spatial dims): a composite.
func ConvBias(x, w, b *graph.Node, opts ...WindowOption) *graph.Node {
	if _, bad := graph.Operands("ConvBias", x, w, b); bad != nil {
		return bad
	}
	y := Conv(x, w, opts...)
	if !y.Valid() {
		return y
	}
	if b.Rank() != 1 || b.Shape()[0] != y.Shape()[1] {
		return fail(graph.ErrShape, "ConvBias", []*graph.Node{x, w, b}, "the bias needs shape [%d] (one per output channel), got %v", y.Shape()[1], b.Shape())
	}
	s := make([]int, y.Rank()-1)
	for i := range s {
		s[i] = 1
	}
	s[0] = y.Shape()[1]
	return Add(y, Reshape(b, s...))
}

package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestConvShapes: the builders' result shapes, from torch 1.13
// (F.conv1d/2d/3d and F.conv_transpose2d on zeros of these shapes, at
// /usr/bin/python3).
func TestConvShapes(t *testing.T) {
	f32 := tensor.Float32
	for name, c := range map[string]struct {
		f    func(g *graph.Graph) *graph.Node
		want tensor.Shape
	}{
		"conv2d-groups": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(g.Input("x", f32, 2, 4, 9, 8), g.Input("w", f32, 6, 2, 3, 2), ops.Stride(2, 1), ops.Padding(1, 0), ops.Dilation(1, 3), ops.Groups(2))
		}, tensor.Shape{2, 6, 5, 5}},
		"conv2d-same": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(g.Input("x", f32, 2, 4, 9, 8), g.Input("w", f32, 6, 4, 4, 3), ops.Same, ops.Dilation(1, 2))
		}, tensor.Shape{2, 6, 9, 8}},
		"conv3d": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(g.Input("x", f32, 1, 2, 5, 6, 7), g.Input("w", f32, 3, 2, 2, 3, 1), ops.Stride(1, 2, 3))
		}, tensor.Shape{1, 3, 4, 2, 3}},
		"transpose-outpad": {func(g *graph.Graph) *graph.Node {
			return ops.ConvTranspose(g.Input("x", f32, 2, 4, 5, 7), g.Input("w", f32, 4, 3, 3, 2), ops.Stride(2, 3), ops.Padding(1, 0), ops.OutputPadding(1, 2))
		}, tensor.Shape{2, 3, 10, 22}},
		"transpose-dilated-outpad": {func(g *graph.Graph) *graph.Node {
			return ops.ConvTranspose(g.Input("x", f32, 2, 4, 5, 7), g.Input("w", f32, 4, 3, 3, 3), ops.Padding(1), ops.OutputPadding(1), ops.Dilation(2))
		}, tensor.Shape{2, 3, 8, 10}},
		"transpose-groups": {func(g *graph.Graph) *graph.Node {
			return ops.ConvTranspose(g.Input("x", f32, 1, 4, 3, 3), g.Input("w", f32, 4, 2, 3, 3), ops.Stride(2), ops.Groups(2))
		}, tensor.Shape{1, 4, 7, 7}},
		"bias": {func(g *graph.Graph) *graph.Node {
			return ops.ConvBias(g.Input("x", f32, 2, 3, 8), g.Input("w", f32, 5, 3, 3), g.Input("b", f32, 5), ops.Valid)
		}, tensor.Shape{2, 5, 6}},
	} {
		n := c.f(graph.New())
		if !n.Valid() {
			t.Errorf("%s: %v", name, n.Err())
			continue
		}
		if !n.Shape().Equal(c.want) {
			t.Errorf("%s: shape %v, want %v", name, n.Shape(), c.want)
		}
	}
}

// TestConvErrors: bad operands and options are build errors naming the
// op and the shapes.
func TestConvErrors(t *testing.T) {
	f32, f64, i32 := tensor.Float32, tensor.Float64, tensor.Int32
	in := func(g *graph.Graph, name string, dt tensor.DType, shape ...int) *graph.Node {
		return g.Input(name, dt, shape...)
	}
	for name, c := range map[string]struct {
		f    func(g *graph.Graph) *graph.Node
		kind error
		op   string
		msg  string
	}{
		"rank": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 2, 3, 8, 8), in(g, "w", f32, 4, 3, 3))
		}, graph.ErrShape, "Conv", "same rank"},
		"rank2":    {func(g *graph.Graph) *graph.Node { return ops.Conv(in(g, "x", f32, 2, 3), in(g, "w", f32, 4, 3)) }, graph.ErrShape, "Conv", "3 to 5"},
		"channels": {func(g *graph.Graph) *graph.Node { return ops.Conv(in(g, "x", f32, 2, 3, 8), in(g, "w", f32, 4, 2, 3)) }, graph.ErrShape, "Conv", "[4,2,3]"},
		"groups": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 2, 4, 8), in(g, "w", f32, 3, 2, 3), ops.Groups(2))
		}, graph.ErrShape, "Conv", "groups = 2"},
		"too-big": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.Dilation(2))
		}, graph.ErrShape, "Conv", "does not fit"},
		// Short by less than the stride: 4 - 5 = -1, which a truncating
		// division by 2 would have rounded up to an output of 1.
		"too-big-strided": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 5), ops.Stride(2))
		}, graph.ErrShape, "Conv", "does not fit"},
		"dtype": {func(g *graph.Graph) *graph.Node { return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f64, 1, 1, 3)) }, graph.ErrDType, "Conv", "f64"},
		"int":   {func(g *graph.Graph) *graph.Node { return ops.Conv(in(g, "x", i32, 1, 1, 4), in(g, "w", i32, 1, 1, 3)) }, graph.ErrDType, "Conv", "float"},
		"stride0": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.Stride(0))
		}, graph.ErrInvalid, "Conv", "Stride(0)"},
		"stride-count": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4, 4), in(g, "w", f32, 1, 1, 3, 3), ops.Stride(1, 2, 3))
		}, graph.ErrInvalid, "Conv", "3 values for 2 spatial dims"},
		"ceil-on-conv": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.CeilMode)
		}, graph.ErrInvalid, "Conv", "CeilMode"},
		"same-strided": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.Same, ops.Stride(2))
		}, graph.ErrInvalid, "Conv", "stride 1"},
		"nil-option": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), nil)
		}, graph.ErrInvalid, "Conv", "nil"},
		"outpad": {func(g *graph.Graph) *graph.Node {
			return ops.ConvTranspose(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.Stride(2), ops.OutputPadding(2))
		}, graph.ErrInvalid, "ConvTranspose", "smaller than max(stride, dilation)"},
		"outpad-on-conv": {func(g *graph.Graph) *graph.Node {
			return ops.Conv(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.OutputPadding(1))
		}, graph.ErrInvalid, "Conv", "OutputPadding"},
		"same-transpose": {func(g *graph.Graph) *graph.Node {
			return ops.ConvTranspose(in(g, "x", f32, 1, 1, 4), in(g, "w", f32, 1, 1, 3), ops.Same)
		}, graph.ErrInvalid, "ConvTranspose", "Same"},
		"transpose-channels": {func(g *graph.Graph) *graph.Node {
			return ops.ConvTranspose(in(g, "x", f32, 1, 2, 4), in(g, "w", f32, 3, 1, 3))
		}, graph.ErrShape, "ConvTranspose", "[3,1,3]"},
		"bias-shape": {func(g *graph.Graph) *graph.Node {
			return ops.ConvBias(in(g, "x", f32, 1, 2, 4), in(g, "w", f32, 3, 2, 3), in(g, "b", f32, 2))
		}, graph.ErrShape, "ConvBias", "[3]"},
	} {
		n := c.f(graph.New())
		var ge *graph.Error
		if n.Valid() || !errors.Is(n.Err(), c.kind) || !errors.As(n.Err(), &ge) || ge.Op != c.op || !strings.Contains(n.Err().Error(), c.msg) {
			t.Errorf("%s: got %v (err %v), want a %v error of %s saying %q", name, n, n.Err(), c.kind, c.op, c.msg)
		}
	}
}

// TestConvPrimitiveErrors: the primitives' rules check the attribute and
// the operands' agreement (what autodiff and the passes build).
func TestConvPrimitiveErrors(t *testing.T) {
	f32 := tensor.Float32
	one := []int{1}
	a := opdef.ConvAttr{Stride: one, Dilation: one, PadLo: []int{0}, PadHi: []int{0}, Groups: 1}
	withSize := func(s ...int) opdef.ConvAttr { b := a; b.Size = s; return b }
	for name, c := range map[string]struct {
		op   graph.Op
		attr graph.Attr
		in   [][]int
		msg  string
	}{
		"conv-size":      {ops.OpConv, withSize(4), [][]int{{1, 1, 4}, {1, 1, 3}}, "takes no size"},
		"conv-noattr":    {ops.OpConv, nil, [][]int{{1, 1, 4}, {1, 1, 3}}, "ConvAttr"},
		"conv-stride":    {ops.OpConv, opdef.ConvAttr{Stride: []int{1, 1}, Dilation: one, PadLo: []int{0}, PadHi: []int{0}, Groups: 1}, [][]int{{1, 1, 4}, {1, 1, 3}}, "2 values for 1 spatial"},
		"conv-groups0":   {ops.OpConv, opdef.ConvAttr{Stride: one, Dilation: one, PadLo: []int{0}, PadHi: []int{0}}, [][]int{{1, 1, 4}, {1, 1, 3}}, "groups = 0"},
		"t-nosize":       {ops.OpConvTranspose, a, [][]int{{1, 1, 2}, {1, 1, 3}}, "size has 0 values"},
		"t-mismatch":     {ops.OpConvTranspose, withSize(5), [][]int{{1, 1, 2}, {1, 1, 3}}, "not the convolution's result size [3]"},
		"fg-batch":       {ops.OpConvFilterGrad, withSize(3), [][]int{{2, 1, 5}, {1, 1, 3}}, "batch sizes"},
		"fg-mismatch":    {ops.OpConvFilterGrad, withSize(2), [][]int{{1, 1, 5}, {1, 1, 3}}, "result size [4]"},
		"fg-rank":        {ops.OpConvFilterGrad, withSize(3), [][]int{{1, 1, 5}, {1, 1, 3, 1}}, "same rank"},
		"conv-neg-pad":   {ops.OpConv, opdef.ConvAttr{Stride: one, Dilation: one, PadLo: []int{-1}, PadHi: []int{0}, Groups: 1}, [][]int{{1, 1, 4}, {1, 1, 3}}, ">= 0"},
		"t-neg-size":     {ops.OpConvTranspose, withSize(-1), [][]int{{1, 1, 2}, {1, 1, 3}}, ">= 1"},
		"conv-zero-kern": {ops.OpConv, a, [][]int{{1, 1, 4}, {1, 1, 0}}, "needs >= 1"},
	} {
		g := graph.New()
		n := ops.Apply(c.op, c.attr, g.Input("a", f32, c.in[0]...), g.Input("b", f32, c.in[1]...))
		if n.Valid() || !strings.Contains(n.Err().Error(), c.msg) {
			t.Errorf("%s: got %v (err %v), want an error saying %q", name, n, n.Err(), c.msg)
		}
	}
}

// TestConvReference: the float64 reference evaluator of Conv, and its
// transposes checked by the adjoint identity <Conv(x, w), dy> =
// <x, ConvTranspose(dy, w)> = <w, ConvFilterGrad(x, dy)>.
func TestConvReference(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 1, 2, 5)
	w := g.Input("w", tensor.Float64, 2, 2, 2)
	y := ops.Conv(x, w, ops.Stride(2), ops.Padding(1))
	xv := opdef.NewValue(tensor.Float64, x.Shape())
	for i := range xv.F {
		xv.F[i] = float64(i + 1)
	}
	wv := &opdef.Value{DType: tensor.Float64, Shape: w.Shape(), F: []float64{1, -1, 0.5, 2, 0, 1, 1, 0}}
	yv, err := opdef.Evaluate(y, []*opdef.Value{xv, wv})
	if err != nil {
		t.Fatal(err)
	}
	// torch.nn.functional.conv1d(arange(1, 11).reshape(1, 2, 5), w,
	// stride=2, padding=1) with torch 1.13 at /usr/bin/python3.
	want := []float64{11, 18.5, 23.5, 1, 10, 14}
	for i := range want {
		if yv.F[i] != want[i] {
			t.Fatalf("Conv reference = %v, want %v", yv.F, want)
		}
	}

	// Adjoint identities on a 2-D grouped, strided, dilated, padded case.
	g = graph.New()
	x = g.Input("x", tensor.Float64, 2, 4, 7, 6)
	w = g.Input("w", tensor.Float64, 6, 2, 3, 2)
	y = ops.Conv(x, w, ops.Stride(2, 1), ops.Dilation(1, 2), ops.PaddingLoHi([]int{1, 0}, []int{2, 1}), ops.Groups(2))
	a := y.Attr().(opdef.ConvAttr)
	dy := g.Input("dy", tensor.Float64, y.Shape()...)
	ta, fa := a, a
	ta.Size, fa.Size = []int{7, 6}, []int{3, 2}
	dx := ops.Apply(ops.OpConvTranspose, ta, dy, w)
	dw := ops.Apply(ops.OpConvFilterGrad, fa, x, dy)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	fill := func(s tensor.Shape, seed int) *opdef.Value {
		v := opdef.NewValue(tensor.Float64, s)
		for i := range v.F {
			v.F[i] = float64((i*7+seed)%11) - 5
		}
		return v
	}
	xv, wv, dyv := fill(x.Shape(), 1), fill(w.Shape(), 2), fill(dy.Shape(), 3)
	yv, _ = opdef.Evaluate(y, []*opdef.Value{xv, wv})
	dxv, _ := opdef.Evaluate(dx, []*opdef.Value{dyv, wv})
	dwv, _ := opdef.Evaluate(dw, []*opdef.Value{xv, dyv})
	dot := func(a, b *opdef.Value) float64 {
		s := 0.0
		for i := range a.F {
			s += a.F[i] * b.F[i]
		}
		return s
	}
	// Integers: the sums are exact.
	s1, s2, s3 := dot(yv, dyv), dot(xv, dxv), dot(wv, dwv)
	if s1 != s2 || s1 != s3 || s1 == 0 {
		t.Errorf("adjoint identity fails: <y,dy> = %v, <x,dx> = %v, <w,dw> = %v", s1, s2, s3)
	}
}

// TestConvGradientShapes: each primitive's gradient rule builds the other
// two with the operands' shapes.
func TestConvGradientShapes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 4, 9, 8)
	w := g.Input("w", tensor.Float32, 6, 2, 3, 2)
	y := ops.Conv(x, w, ops.Stride(2, 1), ops.Padding(1, 0), ops.Groups(2))
	d := opdef.Lookup(ops.OpConv)
	gr := d.Grad(y, ops.OnesLike(y), []bool{true, true})
	if !gr[0].Shape().Equal(x.Shape()) || !gr[1].Shape().Equal(w.Shape()) || gr[0].Op() != ops.OpConvTranspose || gr[1].Op() != ops.OpConvFilterGrad {
		t.Fatalf("Conv's gradients: %v %v", gr[0], gr[1])
	}
	for _, n := range gr {
		dd := opdef.Lookup(n.Op())
		gg := dd.Grad(n, ops.OnesLike(n), []bool{true, true})
		for i, in := range n.Inputs() {
			if !gg[i].Valid() || !gg[i].Shape().Equal(in.Shape()) {
				t.Errorf("%s's gradient %d: %v (err %v), want shape %v", dd.Name, i, gg[i], gg[i].Err(), in.Shape())
			}
		}
	}
}

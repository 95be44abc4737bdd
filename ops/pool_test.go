package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func init() {
	builders["MaxPool"] = func(xs ...*graph.Node) *graph.Node { return ops.MaxPool(xs[0], []int{2}) }
	builders["AvgPool"] = func(xs ...*graph.Node) *graph.Node { return ops.AvgPool(xs[0], []int{2}) }
	a := opdef.PoolAttr{Kernel: []int{2}, Stride: []int{2}, Dilation: []int{1}, PadLo: []int{0}, PadHi: []int{0}}
	builders["MaxPoolGrad"] = func(xs ...*graph.Node) *graph.Node { return ops.Apply(ops.OpMaxPoolGrad, a, xs...) }
	builders["MaxPoolSelect"] = func(xs ...*graph.Node) *graph.Node { return ops.Apply(ops.OpMaxPoolSelect, a, xs...) }
	b := a
	b.Size, b.CountIncludePad = []int{4}, true
	builders["AvgPoolGrad"] = func(xs ...*graph.Node) *graph.Node { return ops.Apply(ops.OpAvgPoolGrad, b, xs...) }
	type c = struct {
		n int
		f func(xs ...*graph.Node) *graph.Node
	}
	composites["AdaptiveAvgPool"] = c{1, func(xs ...*graph.Node) *graph.Node { return ops.AdaptiveAvgPool(xs[0], 2) }}
	composites["AdaptiveMaxPool"] = c{1, func(xs ...*graph.Node) *graph.Node { return ops.AdaptiveMaxPool(xs[0], 2) }}
	composites["GlobalAvgPool"] = c{1, un(ops.GlobalAvgPool)}
	composites["GlobalMaxPool"] = c{1, un(ops.GlobalMaxPool)}
}

// TestPoolShapes: the builders' result shapes, from torch 1.13
// (F.max_pool*/avg_pool*/adaptive_* on zeros of these shapes, at
// /usr/bin/python3).
func TestPoolShapes(t *testing.T) {
	f32 := tensor.Float32
	for name, c := range map[string]struct {
		f    func(x *graph.Node) *graph.Node
		in   []int
		want tensor.Shape
	}{
		// F.max_pool2d(zeros(2,3,28,28), 2).shape
		"max2d-cnn": {func(x *graph.Node) *graph.Node { return ops.MaxPool(x, []int{2, 2}) }, []int{2, 3, 28, 28}, tensor.Shape{2, 3, 14, 14}},
		// F.max_pool2d(zeros(2,3,7,7), 2, ceil_mode=True).shape
		"max2d-ceil": {func(x *graph.Node) *graph.Node { return ops.MaxPool(x, []int{2, 2}, ops.CeilMode) }, []int{2, 3, 7, 7}, tensor.Shape{2, 3, 4, 4}},
		// F.max_pool1d(zeros(1,1,10), 3, 3, 1, dilation=2, ceil_mode=True).shape
		"max1d-dil": {func(x *graph.Node) *graph.Node {
			return ops.MaxPool(x, []int{3}, ops.Stride(3), ops.Padding(1), ops.Dilation(2), ops.CeilMode)
		}, []int{1, 1, 10}, tensor.Shape{1, 1, 4}},
		// F.avg_pool3d(zeros(1,2,5,6,7), (2,3,2), (1,2,3), (1,1,0), ceil_mode=True).shape
		"avg3d": {func(x *graph.Node) *graph.Node {
			return ops.AvgPool(x, []int{2, 3, 2}, ops.Stride(1, 2, 3), ops.Padding(1, 1, 0), ops.CeilMode)
		}, []int{1, 2, 5, 6, 7}, tensor.Shape{1, 2, 6, 4, 3}},
		"adaptive-avg":  {func(x *graph.Node) *graph.Node { return ops.AdaptiveAvgPool(x, 3, 4) }, []int{2, 3, 5, 7}, tensor.Shape{2, 3, 3, 4}},
		"adaptive-max":  {func(x *graph.Node) *graph.Node { return ops.AdaptiveMaxPool(x, 2, 3, 1) }, []int{2, 1, 5, 7, 3}, tensor.Shape{2, 1, 2, 3, 1}},
		"adaptive-even": {func(x *graph.Node) *graph.Node { return ops.AdaptiveAvgPool(x, 7) }, []int{2, 3, 14}, tensor.Shape{2, 3, 7}},
		"global-avg":    {ops.GlobalAvgPool, []int{2, 3, 5, 7}, tensor.Shape{2, 3}},
		"global-max":    {ops.GlobalMaxPool, []int{2, 3, 5}, tensor.Shape{2, 3}},
	} {
		g := graph.New()
		n := c.f(g.Input("x", f32, c.in...))
		if !n.Valid() {
			t.Errorf("%s: %v", name, n.Err())
			continue
		}
		if !n.Shape().Equal(c.want) {
			t.Errorf("%s: shape %v, want %v", name, n.Shape(), c.want)
		}
	}
}

// TestPoolErrors: bad operands and options are build errors naming the
// op, the shapes and the call site (this file).
func TestPoolErrors(t *testing.T) {
	f32, i32 := tensor.Float32, tensor.Int32
	for name, c := range map[string]struct {
		f    func(g *graph.Graph) *graph.Node
		kind error
		op   string
		msg  string
	}{
		"rank":     {func(g *graph.Graph) *graph.Node { return ops.MaxPool(g.Input("x", f32, 2, 8, 8), []int{2, 2}) }, graph.ErrShape, "MaxPool", "[2,8,8]"},
		"kernel0":  {func(g *graph.Graph) *graph.Node { return ops.MaxPool(g.Input("x", f32, 2, 1, 8), []int{0}) }, graph.ErrInvalid, "MaxPool", "kernel [0] must be >= 1"},
		"nokernel": {func(g *graph.Graph) *graph.Node { return ops.AvgPool(g.Input("x", f32, 2, 1, 8), nil) }, graph.ErrInvalid, "AvgPool", "1 to 3 entries"},
		"int":      {func(g *graph.Graph) *graph.Node { return ops.AvgPool(g.Input("x", i32, 2, 1, 8), []int{2}) }, graph.ErrDType, "AvgPool", "float"},
		"pad": {func(g *graph.Graph) *graph.Node {
			return ops.MaxPool(g.Input("x", f32, 2, 1, 8), []int{3}, ops.Padding(2))
		}, graph.ErrInvalid, "MaxPool", "at most half the kernel"},
		"too-small": {func(g *graph.Graph) *graph.Node {
			return ops.MaxPool(g.Input("x", f32, 2, 1, 4, 1), []int{2, 2})
		}, graph.ErrShape, "MaxPool", "does not fit spatial dim 1 of length 1"},
		"dilation-avg": {func(g *graph.Graph) *graph.Node {
			return ops.AvgPool(g.Input("x", f32, 2, 1, 8), []int{2}, ops.Dilation(2))
		}, graph.ErrInvalid, "AvgPool", "Dilation"},
		"exclude-max": {func(g *graph.Graph) *graph.Node {
			return ops.MaxPool(g.Input("x", f32, 2, 1, 8), []int{2}, ops.ExcludePad)
		}, graph.ErrInvalid, "MaxPool", "ExcludePad"},
		"groups": {func(g *graph.Graph) *graph.Node {
			return ops.MaxPool(g.Input("x", f32, 2, 1, 8), []int{2}, ops.Groups(2))
		}, graph.ErrInvalid, "MaxPool", "Groups"},
		"stride-count": {func(g *graph.Graph) *graph.Node {
			return ops.AvgPool(g.Input("x", f32, 2, 1, 8, 8), []int{2, 2}, ops.Stride(1, 2, 3))
		}, graph.ErrInvalid, "AvgPool", "3 values for 2 spatial dims"},
		"adaptive-size": {func(g *graph.Graph) *graph.Node { return ops.AdaptiveAvgPool(g.Input("x", f32, 2, 1, 8), 0) }, graph.ErrShape, "AdaptiveAvgPool", ">= 1"},
		"adaptive-rank": {func(g *graph.Graph) *graph.Node { return ops.AdaptiveMaxPool(g.Input("x", f32, 2, 1, 8), 2, 2) }, graph.ErrShape, "AdaptiveMaxPool", "[2,1,8]"},
		"global-rank":   {func(g *graph.Graph) *graph.Node { return ops.GlobalMaxPool(g.Input("x", f32, 2, 8)) }, graph.ErrShape, "GlobalMaxPool", "[2,8]"},
	} {
		n := c.f(graph.New())
		var ge *graph.Error
		if n.Valid() || !errors.Is(n.Err(), c.kind) || !errors.As(n.Err(), &ge) || ge.Op != c.op ||
			!strings.Contains(n.Err().Error(), c.msg) || !strings.Contains(n.Err().Error(), "pool_test.go") {
			t.Errorf("%s: got %v (err %v), want a %v error of %s at pool_test.go saying %q", name, n, n.Err(), c.kind, c.op, c.msg)
		}
	}
}

// TestPoolPrimitiveErrors: the primitives' rules check the attribute and
// the operands' agreement (what autodiff and the passes build).
func TestPoolPrimitiveErrors(t *testing.T) {
	one := []int{1}
	a := opdef.PoolAttr{Kernel: []int{2}, Stride: []int{2}, Dilation: one, PadLo: []int{0}, PadHi: []int{0}}
	with := func(f func(b *opdef.PoolAttr)) opdef.PoolAttr {
		b := a
		f(&b)
		return b
	}
	for name, c := range map[string]struct {
		op   graph.Op
		attr graph.Attr
		in   [][]int
		msg  string
	}{
		"noattr":        {ops.OpMaxPool, nil, [][]int{{1, 1, 4}}, "PoolAttr"},
		"counts":        {ops.OpMaxPool, with(func(b *opdef.PoolAttr) { b.Stride = []int{1, 1} }), [][]int{{1, 1, 4}}, "2 entries for 1 spatial"},
		"size-on-max":   {ops.OpMaxPool, with(func(b *opdef.PoolAttr) { b.Size = []int{4} }), [][]int{{1, 1, 4}}, "takes no Size"},
		"include-max":   {ops.OpMaxPool, with(func(b *opdef.PoolAttr) { b.CountIncludePad = true }), [][]int{{1, 1, 4}}, "count_include_pad"},
		"grad-g":        {ops.OpMaxPoolGrad, a, [][]int{{1, 1, 4}, {1, 1, 3}}, "cotangent has shape [1,1,3]"},
		"select-h":      {ops.OpMaxPoolSelect, a, [][]int{{1, 1, 4}, {1, 1, 2}}, "h has shape [1,1,2]"},
		"avggrad-nosz":  {ops.OpAvgPoolGrad, a, [][]int{{1, 1, 2}}, "needs the input's spatial size"},
		"avggrad-match": {ops.OpAvgPoolGrad, with(func(b *opdef.PoolAttr) { b.Size = []int{7} }), [][]int{{1, 1, 2}}, "gives [1,1,3]"},
		"avg-dilation":  {ops.OpAvgPool, with(func(b *opdef.PoolAttr) { b.Dilation = []int{2} }), [][]int{{1, 1, 8}}, "no dilation"},
	} {
		g := graph.New()
		var xs []*graph.Node
		for i, s := range c.in {
			xs = append(xs, g.Input(fmt.Sprint("x", i), tensor.Float32, s...))
		}
		n := ops.Apply(c.op, c.attr, xs...)
		if n.Valid() || !strings.Contains(n.Err().Error(), c.msg) || !strings.Contains(n.Err().Error(), c.op.String()) {
			t.Errorf("%s: got %v (err %v), want an error saying %q", name, n, n.Err(), c.msg)
		}
	}
}

// ExampleMaxPool: a 2x2 max pooling and its gradient; values by hand
// (ties go to the first maximum in row-major order, as PyTorch).
func ExampleMaxPool() {
	g := graph.New()
	x := g.Const(mustNew([]float32{
		1, 3, 2, 2,
		3, 0, 1, 2,
		5, 6, 0, 0,
		7, 8, 0, -1}, 1, 1, 4, 4))
	y := ops.MaxPool(x, []int{2, 2})
	dx := ops.Apply(ops.OpMaxPoolGrad, y.Attr(), x, ops.OnesLike(y))
	out, err := compute([]*graph.Node{y, dx, ops.AvgPool(x, []int{2, 2})}, exec.Feeds{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Float64s())
	}
	// Output:
	// [3 2 8 0]
	// [0 1 1 0 0 0 0 0 0 0 1 0 0 1 0 0]
	// [1.75 1.75 6.5 -0.25]
}

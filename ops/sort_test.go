package ops_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Sort and ArgSort are stable with NaN last (numpy.sort); descending
// puts NaN first and keeps ties in index order (torch.sort with
// descending=True, stable=True); TopK orders ties by index (as
// jax.lax.top_k; torch 1.13's topk gives [1 3] here). Values by hand.
func ExampleSort() {
	g := graph.New()
	x := g.Const(mustNew([]float32{3, float32(math.NaN()), 1, 3, 2}, 5))
	v, i := ops.TopK(x, 2, 0, true)
	out, err := compute([]*graph.Node{ops.Sort(x, 0, false), ops.ArgSort(x, 0, false), ops.ArgSort(x, 0, true), v, i}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o)
	}
	// Output:
	// f32[5] [  1   2   3   3 NaN]
	// i64[5] [2 4 0 3 1]
	// i64[5] [1 0 3 4 2]
	// f32[2] [NaN   3]
	// i64[2] [1 0]
}

// SearchSorted is numpy.searchsorted: left of equal elements, or right.
func ExampleSearchSorted() {
	g := graph.New()
	s := g.Const(mustNew([]float32{1, 2, 2, 5}, 4))
	v := g.Const(mustNew([]float32{2, 3, 6}, 3))
	out, err := compute([]*graph.Node{ops.SearchSorted(s, v, false), ops.SearchSorted(s, v, true)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// i64[3] [1 3 4]
	// i64[3] [3 3 4]
}

// TestSortErrors: bad arguments are build errors naming the op.
func TestSortErrors(t *testing.T) {
	in := func(g *graph.Graph, dt tensor.DType, shape ...int) *graph.Node { return g.Input("x", dt, shape...) }
	f32, f64, b8 := tensor.Float32, tensor.Float64, tensor.Bool
	for name, c := range map[string]struct {
		f    func(g *graph.Graph) *graph.Node
		kind error
		op   string
		msg  string
	}{
		"axis":      {func(g *graph.Graph) *graph.Node { return ops.Sort(in(g, f32, 2, 3), 2, false) }, graph.ErrShape, "Sort", "axis 2"},
		"scalar":    {func(g *graph.Graph) *graph.Node { return ops.ArgSort(in(g, f32), 0, false) }, graph.ErrShape, "ArgSort", "scalar"},
		"bool":      {func(g *graph.Graph) *graph.Node { return ops.Sort(in(g, b8, 3), 0, false) }, graph.ErrDType, "Sort", "bool"},
		"k-large":   {func(g *graph.Graph) *graph.Node { _, i := ops.TopK(in(g, f32, 2, 3), 4, 1, true); return i }, graph.ErrShape, "TopK", "k = 4"},
		"k-neg":     {func(g *graph.Graph) *graph.Node { v, _ := ops.TopK(in(g, f32, 2, 3), -1, 1, true); return v }, graph.ErrShape, "TopK", "k = -1"},
		"topk-axis": {func(g *graph.Graph) *graph.Node { v, _ := ops.TopK(in(g, f32, 2, 3), 1, -3, true); return v }, graph.ErrShape, "TopK", "axis -3"},
		"ss-dtypes": {func(g *graph.Graph) *graph.Node {
			return ops.SearchSorted(in(g, f32, 4), g.Input("v", f64, 2), false)
		}, graph.ErrDType, "SearchSorted", "mixed"},
		"ss-rows": {func(g *graph.Graph) *graph.Node {
			return ops.SearchSorted(in(g, f32, 2, 4), g.Input("v", f32, 3, 2), true)
		}, graph.ErrShape, "SearchSorted", "[2,4]"},
		"ss-scalar": {func(g *graph.Graph) *graph.Node {
			return ops.SearchSorted(in(g, f32), g.Input("v", f32, 3), true)
		}, graph.ErrShape, "SearchSorted", "scalar"},
	} {
		n := c.f(graph.New())
		var ge *graph.Error
		if n.Valid() || !errors.Is(n.Err(), c.kind) || !errors.As(n.Err(), &ge) || ge.Op != c.op || !strings.Contains(n.Err().Error(), c.msg) {
			t.Errorf("%s: got %v (err %v), want a %v error of %s saying %q", name, n, n.Err(), c.kind, c.op, c.msg)
		}
	}
}

// TestSortAttrs: CSE compares the attributes by value; their text is
// complete.
func TestSortAttrs(t *testing.T) {
	if !opdef.EqualAttrs(opdef.SortAttr{Axis: 1, Descending: true}, opdef.SortAttr{Axis: 1, Descending: true}) ||
		opdef.EqualAttrs(opdef.SortAttr{Axis: 1}, opdef.SortAttr{Axis: 1, Descending: true}) ||
		opdef.EqualAttrs(opdef.TopKAttr{K: 1}, opdef.TopKAttr{K: 2}) ||
		opdef.EqualAttrs(opdef.SearchSortedAttr{Right: true}, opdef.SearchSortedAttr{}) {
		t.Error("sorting attributes are not compared by value")
	}
	for a, want := range map[fmt.Stringer]string{
		opdef.SortAttr{Axis: 1, Descending: true}:    "axis=1 descending",
		opdef.TopKAttr{K: 3, Axis: 0, Largest: true}: "k=3 axis=0 largest",
		opdef.SearchSortedAttr{Right: true}:          "right",
	} {
		if a.String() != want {
			t.Errorf("%#v.String() = %q, want %q", a, a.String(), want)
		}
	}
}

package exectest

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// counts is n repeat counts 0, 1, 2, 0, 1, 2, ...: 300 of them add up
// to 300 (100 cycles of 0+1+2).
func counts(n int) []int {
	c := make([]int, n)
	for i := range c {
		c[i] = i % 3
	}
	return c
}

// creationMovementCases are the cases of Slice's negative steps and of
// the creation and movement composites (ops/creation.go,
// ops/rearrange.go): golden values worked out by hand from NumPy's
// definitions, and random operands in every dtype against Eval.
func creationMovementCases() []Case {
	f32, f64, i32 := tensor.Float32, tensor.Float64, tensor.Int32
	one := func(name, source string, want *tensor.Tensor, build func(g *graph.Graph) *graph.Node) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			return []*graph.Node{build(g)}, nil
		}}
	}
	fed := func(name, source string, in, want *tensor.Tensor, f func(x *graph.Node) *graph.Node) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, in)
			return []*graph.Node{f(ns[0])}, feeds
		}}
	}
	v3 := Tensor(f32, []float64{1, 2, 3})                 // [1 2 3]
	m23 := Tensor(f64, []float64{1, 2, 3, 4, 5, 6}, 2, 3) // [[1 2 3] [4 5 6]]
	pw := func(lo, hi int) ops.PadWidth { return ops.PadWidth{Low: lo, High: hi} }
	cs := []Case{
		one("iota-axis1", "hand: each element of a [2,3] Iota along axis 1 is its column index",
			Tensor(i32, []float64{0, 1, 2, 0, 1, 2}, 2, 3), func(g *graph.Graph) *graph.Node { return ops.Iota(g, i32, 1, 2, 3) }),
		one("iota-axis0", "hand: each element of a [3,1,2] Iota along axis 0 is its index along the first axis",
			Tensor(tensor.Int64, []float64{0, 0, 1, 1, 2, 2}, 3, 1, 2), func(g *graph.Graph) *graph.Node { return ops.Iota(g, tensor.Int64, 0, 3, 1, 2) }),
		one("arange-int", "hand: numpy.arange(2, 11, 3) has ceil(9/3) = 3 elements 2, 5, 8",
			Tensor(i32, []float64{2, 5, 8}), func(g *graph.Graph) *graph.Node { return ops.Arange(g, i32, 2, 11, 3) }),
		one("arange-float-neg", "hand: numpy.arange(1, -0.5, -0.5) has ceil(-1.5/-0.5) = 3 elements 1, 0.5, 0",
			Tensor(f32, []float64{1, 0.5, 0}), func(g *graph.Graph) *graph.Node { return ops.Arange(g, f32, 1, -0.5, -0.5) }),
		one("linspace", "hand: numpy.linspace(-1, 1, 5) steps by 2/4 = 0.5 and ends exactly at 1",
			Tensor(f64, []float64{-1, -0.5, 0, 0.5, 1}), func(g *graph.Graph) *graph.Node { return ops.Linspace(g, f64, -1, 1, 5, true) }),
		one("eye", "hand: numpy.eye(2, 3, k=1) has ones at (0,1) and (1,2)",
			Tensor(f32, []float64{0, 1, 0, 0, 0, 1}, 2, 3), func(g *graph.Graph) *graph.Node { return ops.Eye(g, f32, 2, 3, 1) }),
		fed("tril", "hand: numpy.tril([[1,2,3],[4,5,6]], 0) zeroes (0,1), (0,2) and (1,2)",
			m23, Tensor(f64, []float64{1, 0, 0, 4, 5, 0}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Tril(x, 0) }),
		fed("triu", "hand: numpy.triu([[1,2,3],[4,5,6]], -1) keeps everything (j - i >= -1 for all)",
			m23, Tensor(f64, []float64{1, 2, 3, 4, 5, 6}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Triu(x, -1) }),
		fed("slice-negative-step", "hand: [1 2 3 4 5 6] (flattened) [4:0:-2] is elements 4 and 2: 5, 3",
			m23, Tensor(f64, []float64{5, 3}), func(x *graph.Node) *graph.Node { return ops.Slice(ops.Reshape(x, 6), ops.RS(4, 0, -2)) }),
		fed("flip", "hand: numpy.flip([[1,2,3],[4,5,6]]) reverses both axes",
			m23, Tensor(f64, []float64{6, 5, 4, 3, 2, 1}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Flip(x) }),
		fed("roll", "hand: numpy.roll([[1,2,3],[4,5,6]], 1, axis=1) moves the last column first",
			m23, Tensor(f64, []float64{3, 1, 2, 6, 4, 5}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Roll(x, 1, 1) }),
		fed("tile", "hand: numpy.tile([1,2,3], (2,1)) is two rows of [1 2 3]",
			v3, Tensor(f32, []float64{1, 2, 3, 1, 2, 3}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Tile(x, 2, 1) }),
		fed("repeat-each", "hand: numpy.repeat([1,2,3], [2,0,3]) is 1 1 3 3 3",
			v3, Tensor(f32, []float64{1, 1, 3, 3, 3}), func(x *graph.Node) *graph.Node { return ops.Repeat(x, []int{2, 0, 3}, 0) }),
		fed("sum-runs", "hand: runs of 2, 0 and 1 of [1 2 3] sum to 1+2, 0 and 3",
			v3, Tensor(f32, []float64{3, 0, 3}), func(x *graph.Node) *graph.Node { return ops.SumRuns(x, []int{2, 0, 1}, 0) }),
		fed("sum-runs-int8-wraps", "hand: 100+100+27 = 227 wraps in int8 to 227-256 = -29; the empty run is 0",
			Tensor(tensor.Int8, []float64{100, 100, 27}), Tensor(tensor.Int8, []float64{-29, 0}), func(x *graph.Node) *graph.Node { return ops.SumRuns(x, []int{3, 0}, 0) }),
		fed("diagonal", "hand: numpy.diagonal([[1,2,3],[4,5,6]], 1) is (0,1) and (1,2): 2, 6",
			m23, Tensor(f64, []float64{2, 6}), func(x *graph.Node) *graph.Node { return ops.Diagonal(x, 1, 0, 1) }),
		fed("trace", "hand: numpy.trace([[1,2,3],[4,5,6]]) = 1 + 5 = 6",
			m23, Tensor(f64, []float64{6}, []int{}...), func(x *graph.Node) *graph.Node { return ops.Trace(x, 0, 0, 1) }),
		fed("pad-constant", "hand: numpy.pad([1,2,3], (2,1), constant_values=9)",
			v3, Tensor(f32, []float64{9, 9, 1, 2, 3, 9}), func(x *graph.Node) *graph.Node { return ops.PadConstant(x, 9, pw(2, 1)) }),
		fed("pad-reflect-wide", "hand: numpy.pad([1,2,3], (5,4), 'reflect'): the period 1 2 3 2 continued both ways",
			v3, Tensor(f32, []float64{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}), func(x *graph.Node) *graph.Node { return ops.PadReflect(x, pw(5, 4)) }),
		fed("pad-edge", "hand: numpy.pad([1,2,3], (2,3), 'edge')",
			v3, Tensor(f32, []float64{1, 1, 1, 2, 3, 3, 3, 3}), func(x *graph.Node) *graph.Node { return ops.PadEdge(x, pw(2, 3)) }),
		fed("pad-wrap-wide", "hand: numpy.pad([1,2,3], (4,5), 'wrap'): the period 1 2 3 continued both ways",
			v3, Tensor(f32, []float64{3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2}), func(x *graph.Node) *graph.Node { return ops.PadWrap(x, pw(4, 5)) }),
	}

	// Large index arrays (no feeds), against Eval: Iota's kernels in
	// several parts, and fused with the arithmetic after them.
	for _, c := range []struct {
		name string
		f    func(g *graph.Graph) *graph.Node
	}{
		{"Iota/large-i64", func(g *graph.Graph) *graph.Node { return ops.Iota(g, tensor.Int64, 1, 300, 257) }},
		{"Iota/large-i32", func(g *graph.Graph) *graph.Node { return ops.Iota(g, i32, 0, 70000, 3) }},
		{"Arange/large-f32", func(g *graph.Graph) *graph.Node { return ops.Arange(g, f32, -3, 5000, 0.25) }},
		{"Linspace/large-f64", func(g *graph.Graph) *graph.Node { return ops.Linspace(g, f64, -1, 7, 100001, true) }},
		{"Eye/large", func(g *graph.Graph) *graph.Node { return ops.Eye(g, f64, 300, 257, -3) }},
	} {
		c := c
		cs = append(cs, Case{Name: c.name, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			return []*graph.Node{c.f(g)}, nil
		}})
	}

	// Random operands in every dtype, against Eval: the kernels of the
	// primitives the composites become, negative slice steps among them.
	type mv struct {
		name    string
		shape   tensor.Shape
		f       func(x *graph.Node) *graph.Node
		compute bool // uses Where or Sum: not for the storage and bool dtypes
	}
	mvs := []mv{
		{"Slice/negative-steps", tensor.Shape{10, 6}, func(x *graph.Node) *graph.Node { return ops.Slice(x, ops.RS(8, 1, -3), ops.RS(-1, ops.End, -2)) }, false},
		{"Slice/negative-rank4", tensor.Shape{2, 3, 4, 5}, func(x *graph.Node) *graph.Node {
			return ops.Slice(x, ops.RS(-1, ops.End, -1), ops.All, ops.RS(3, 0, -2), ops.R(1, 4))
		}, false},
		{"Flip/large", tensor.Shape{300, 200}, func(x *graph.Node) *graph.Node { return ops.Flip(x) }, false},
		{"Flip/inner", tensor.Shape{300, 200}, func(x *graph.Node) *graph.Node { return ops.Flip(x, 1) }, false},
		{"Roll", tensor.Shape{4, 5}, func(x *graph.Node) *graph.Node { return ops.RollAxes(x, []int{1, -2}, []int{0, 1}) }, false},
		{"Tile", tensor.Shape{2, 3}, func(x *graph.Node) *graph.Node { return ops.Tile(x, 3, 1, 2) }, false},
		{"Repeat", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.Repeat(x, []int{1, 3, 3, 0}, 1) }, false},
		{"Stack", tensor.Shape{2, 3}, func(x *graph.Node) *graph.Node { return ops.Stack(-1, x, ops.Flip(x), x) }, false},
		{"MoveAxis", tensor.Shape{2, 3, 4}, func(x *graph.Node) *graph.Node { return ops.MoveAxis(x, 2, 0) }, false},
		{"Diagonal", tensor.Shape{3, 4, 5}, func(x *graph.Node) *graph.Node { return ops.Diagonal(x, -1, 2, 0) }, false},
		{"PadReflect", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.PadReflect(x, pw(4, 2), pw(1, 6)) }, false},
		{"PadReflect/narrow", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.PadReflect(x, pw(2, 1), pw(0, 3)) }, false},
		{"PadWrap/narrow", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.PadWrap(x, pw(3, 1), pw(4, 2)) }, false},
		{"PadEdge", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.PadEdge(x, pw(0, 2), pw(3, 1)) }, false},
		{"PadWrap", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.PadWrap(x, pw(5, 1), pw(2, 9)) }, false},
		{"Repeat/large-axis0", tensor.Shape{300, 200}, func(x *graph.Node) *graph.Node { return ops.Repeat(x, counts(300), 0) }, false},
		{"Repeat/large-axis1", tensor.Shape{300, 200}, func(x *graph.Node) *graph.Node { return ops.Repeat(x, counts(200), 1) }, false},
		{"SumRuns", tensor.Shape{3, 7, 2}, func(x *graph.Node) *graph.Node { return ops.SumRuns(x, []int{2, 0, 4, 1}, 1) }, true},
		{"SumRuns/large", tensor.Shape{300, 200}, func(x *graph.Node) *graph.Node { return ops.SumRuns(x, counts(300), 0) }, true},
		{"Tril", tensor.Shape{2, 3, 4}, func(x *graph.Node) *graph.Node { return ops.Tril(x, 1) }, true},
		{"PadConstant", tensor.Shape{3, 4}, func(x *graph.Node) *graph.Node { return ops.PadConstant(x, 1, pw(1, 2)) }, true},
		{"Trace", tensor.Shape{2, 4, 4}, func(x *graph.Node) *graph.Node { return ops.Trace(x, 1, 1, 2) }, true},
	}
	for mi, m := range mvs {
		for _, dt := range []tensor.DType{f32, f64, i32, tensor.Bool, tensor.Float16, tensor.Int8, tensor.Int16, tensor.Uint8} {
			if m.compute && (dt == tensor.Bool || dt == tensor.Float16) {
				continue
			}
			// The small integers' kernels differ from int32's only in the
			// element type: the small shapes suffice.
			if (dt == tensor.Int8 || dt == tensor.Int16 || dt == tensor.Uint8) && strings.Contains(m.name, "/large") {
				continue
			}
			m, dt, mi := m, dt, mi
			cs = append(cs, Case{
				Name: fmt.Sprintf("%s/%s", m.name, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, m.shape, -10, 10, uint64(500+mi)))
					return []*graph.Node{m.f(ns[0])}, feeds
				},
			})
		}
	}
	return cs
}

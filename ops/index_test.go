package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func ids(vals []int64, shape ...int) *tensor.Tensor {
	t, err := tensor.New(vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// An embedding is a Gather of table rows by token ids (numpy.take along
// axis 0); its gradient adds the rows' cotangents back at the ids
// (IndexAdd), so a repeated id accumulates. TakeAlongAxis picks one
// element per position (torch.gather), ScatterAdd is its transpose, and
// SegmentSum adds rows by segment id (jax.ops.segment_sum).
func ExampleGather() {
	g := graph.New()
	table := g.Const(mustNew([]float32{1, 2, 3, 4, 5, 6}, 3, 2)) // 3 tokens, 2 features
	tok := g.Const(ids([]int64{2, 0, -1}, 3))                    // -1 is the last row
	emb := ops.Gather(table, tok, 0)
	x := g.Const(mustNew([]float32{10, 30, 20, 60, 40, 50}, 2, 3))
	best := ops.TakeAlongAxis(x, ops.ExpandDims(ops.ArgMax(x, 1), 1), 1)
	acc := ops.ScatterAdd(ops.ZerosLike(table), g.Const(ids([]int64{0, 1, 0, 0, 2, 1}, 3, 2)), table, 0)
	seg := ops.SegmentSum(table, g.Const(ids([]int64{1, 1, 0}, 3)), 2)
	out, err := compute([]*graph.Node{emb, best, acc, seg}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o.Float64s())
	}
	// Output:
	// [5 6 1 2 5 6]
	// [30 60]
	// [4 4 0 8 5 0]
	// [5 6 4 6]
}

// TestIndexBuildErrors: bad operands are build errors naming the op, the
// operands and the call site.
func TestIndexBuildErrors(t *testing.T) {
	f32 := tensor.Float32
	cases := []struct {
		name, want string
		kind       error
		build      func(g *graph.Graph)
	}{
		{"float-indices", "the indices must be i32 or i64, got float32", graph.ErrDType, func(g *graph.Graph) {
			ops.Gather(g.Input("x", f32, 3), g.Input("i", f32, 2), 0)
		}},
		{"axis", "axis 2 is out of range", graph.ErrShape, func(g *graph.Graph) {
			ops.Gather(g.Input("x", f32, 3, 2), g.Input("i", tensor.Int32, 2), 2)
		}},
		{"const-out-of-range", "index 3 (element 1 of the indices) is outside axis 0 of length 3 (valid: -3..2)", graph.ErrShape, func(g *graph.Graph) {
			ops.Gather(g.Input("x", f32, 3), g.Const(ids([]int64{0, 3}, 2)), 0)
		}},
		{"const-negative", "index -4", graph.ErrShape, func(g *graph.Graph) {
			ops.IndexAdd(g.Input("x", f32, 3), g.Const(ids([]int64{-4}, 1)), g.Input("s", f32, 1), 0)
		}},
		{"take-rank", "the indices rank 1", graph.ErrShape, func(g *graph.Graph) {
			ops.TakeAlongAxis(g.Input("x", f32, 3, 2), g.Input("i", tensor.Int64, 2), 1)
		}},
		{"take-broadcast", "do not broadcast but along axis 1", graph.ErrShape, func(g *graph.Graph) {
			ops.TakeAlongAxis(g.Input("x", f32, 3, 2), g.Input("i", tensor.Int64, 2, 4), 1)
		}},
		{"scatter-updates", "the updates [3] do not broadcast to the indices' shape [2]", graph.ErrShape, func(g *graph.Graph) {
			ops.Scatter(g.Input("x", f32, 4), g.Input("i", tensor.Int64, 2), g.Input("u", f32, 3), 0)
		}},
		{"scatter-add-shape", "they must agree but along axis 0", graph.ErrShape, func(g *graph.Graph) {
			ops.ScatterAdd(g.Input("x", f32, 4, 3), g.Input("i", tensor.Int64, 2, 2), g.Input("u", f32, 2, 2), 0)
		}},
		{"scatter-add-bool", "ScatterAdd(b8[2]", graph.ErrDType, func(g *graph.Graph) {
			ops.ScatterAdd(g.Input("x", tensor.Bool, 2), g.Input("i", tensor.Int64, 2), g.Input("u", tensor.Bool, 2), 0)
		}},
		{"index-add-2d", "the index has shape [1,2]; it must be 1-D", graph.ErrShape, func(g *graph.Graph) {
			ops.IndexAdd(g.Input("x", f32, 4), g.Input("i", tensor.Int64, 1, 2), g.Input("s", f32, 2), 0)
		}},
		{"index-add-source", "the source has shape [3]", graph.ErrShape, func(g *graph.Graph) {
			ops.IndexAdd(g.Input("x", f32, 4), g.Input("i", tensor.Int64, 2), g.Input("s", f32, 3), 0)
		}},
		{"segment-ids", "the segment ids have shape [2]; x [3,2] needs [3]", graph.ErrShape, func(g *graph.Graph) {
			ops.SegmentSum(g.Input("x", f32, 3, 2), g.Input("i", tensor.Int32, 2), 4)
		}},
		{"segment-const", "index 4 (element 0 of the indices) is outside axis 0 of length 4", graph.ErrShape, func(g *graph.Graph) {
			ops.SegmentSum(g.Input("x", f32, 1), g.Const(ids([]int64{4}, 1)), 4)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			c.build(g)
			err := g.Err()
			if err == nil {
				t.Fatal("no error")
			}
			var ge *graph.Error
			if !errors.As(err, &ge) || !errors.Is(err, c.kind) {
				t.Fatalf("%v: not a graph.Error of kind %v", err, c.kind)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, "index_test.go") {
				t.Fatalf("error %q does not name %q and the call site", msg, c.want)
			}
		})
	}
}

// TestIndexShapes: the result shapes of numpy.take, take_along_axis with
// broadcasting, and the scatters (hand, from NumPy's and PyTorch's rules).
func TestIndexShapes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 5, 3)
	cases := []struct {
		n    *graph.Node
		want tensor.Shape
	}{
		{ops.Gather(x, g.Input("a", tensor.Int32, 4, 6), 1), tensor.Shape{2, 4, 6, 3}},        // x.shape[:1] + [4,6] + x.shape[2:]
		{ops.Gather(x, g.Input("b", tensor.Int64), 0), tensor.Shape{5, 3}},                    // a scalar index drops the axis
		{ops.TakeAlongAxis(x, g.Input("c", tensor.Int64, 1, 7, 1), 1), tensor.Shape{2, 7, 3}}, // broadcast but along the axis
		{ops.Scatter(x, g.Input("d", tensor.Int64, 2, 2, 3), ops.Scalar(x, 1), 1), tensor.Shape{2, 5, 3}},
		{ops.SegmentSum(x, g.Input("e", tensor.Int32, 2), 4), tensor.Shape{4, 5, 3}},
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if !c.n.Shape().Equal(c.want) {
			t.Errorf("case %d: shape %v, want %v", i, c.n.Shape(), c.want)
		}
	}
}

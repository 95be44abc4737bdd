package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the indexing ops (ops/index.go): the
// indices are constants with duplicates and negative entries, so the
// checks see accumulation (Gather <-> IndexAdd, TakeAlongAxis <->
// ScatterAdd are transposes) and Scatter's masking of overwritten
// positions.
func init() {
	u := uniform(-1, 1)
	ix := func(like *graph.Node, dt tensor.DType, vals []int64, shape ...int) *graph.Node {
		t, err := tensor.New(vals, shape...)
		if err != nil {
			panic(err)
		}
		if dt == tensor.Int32 {
			return ops.Cast(like.Graph().Const(t), tensor.Int32)
		}
		return like.Graph().Const(t)
	}
	gradCases["Gather"] = []gradCase{
		{"axis0-duplicates", op1(tensor.Shape{4, 3}, u), func(x []*graph.Node) *graph.Node {
			return ops.Gather(x[0], ix(x[0], tensor.Int64, []int64{3, 0, 3, -1, 1, 3}, 2, 3), 0)
		}},
		{"axis1-i32", op1(tensor.Shape{2, 4, 2}, u), func(x []*graph.Node) *graph.Node {
			return ops.Gather(x[0], ix(x[0], tensor.Int32, []int64{1, -3, 2}, 3), 1)
		}},
		{"twice", op1(tensor.Shape{5}, u), func(x []*graph.Node) *graph.Node {
			// x[idx] * x[idx2]: both products route back through IndexAdd.
			g := ops.Gather(x[0], ix(x[0], tensor.Int64, []int64{0, 4, 4, 2}, 4), 0)
			return ops.Mul(g, ops.Gather(x[0], ix(x[0], tensor.Int64, []int64{4, 4, -5, 1}, 4), 0))
		}},
	}
	gradCases["TakeAlongAxis"] = []gradCase{
		{"axis1-duplicates", op1(tensor.Shape{3, 4}, u), func(x []*graph.Node) *graph.Node {
			return ops.TakeAlongAxis(x[0], ix(x[0], tensor.Int64, []int64{0, 0, 3, 1, -1, 2, 2, 2, 0, 1, 1, 3, 3, -4, 0}, 3, 5), 1)
		}},
		{"axis0-broadcast", op1(tensor.Shape{3, 2}, u), func(x []*graph.Node) *graph.Node {
			return ops.TakeAlongAxis(x[0], ix(x[0], tensor.Int32, []int64{2, 0, 2, -1}, 4, 1), 0)
		}},
	}
	gradCases["Scatter"] = []gradCase{
		{"axis0", []operand{{tensor.Shape{3, 4}, u}, {tensor.Shape{2, 4}, u}}, func(x []*graph.Node) *graph.Node {
			// Unique per column: (2,0),(0,1),(1,2),(2,3) then (0,0),(2,1),(0,2),(1,3).
			return ops.Scatter(x[0], ix(x[0], tensor.Int64, []int64{2, 0, 1, -1, 0, 2, 0, 1}, 2, 4), x[1], 0)
		}},
		{"axis1-scalar-update", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{}, u}}, func(x []*graph.Node) *graph.Node {
			return ops.Scatter(x[0], ix(x[0], tensor.Int32, []int64{1, 2}, 2, 1), x[1], 1)
		}},
	}
	gradCases["ScatterAdd"] = []gradCase{
		{"axis0-duplicates", []operand{{tensor.Shape{3, 2}, u}, {tensor.Shape{5, 2}, u}}, func(x []*graph.Node) *graph.Node {
			return ops.ScatterAdd(x[0], ix(x[0], tensor.Int64, []int64{0, 1, 2, 1, 0, 1, -1, 1, 0, 0}, 5, 2), x[1], 0)
		}},
		{"axis1-i32", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 4}, u}}, func(x []*graph.Node) *graph.Node {
			return ops.ScatterAdd(x[0], ix(x[0], tensor.Int32, []int64{2, 2, 0, -1, 1, 1, 1, 0}, 2, 4), x[1], 1)
		}},
	}
	gradCases["IndexAdd"] = []gradCase{
		{"axis0-duplicates", []operand{{tensor.Shape{4, 3}, u}, {tensor.Shape{5, 3}, u}}, func(x []*graph.Node) *graph.Node {
			return ops.IndexAdd(x[0], ix(x[0], tensor.Int64, []int64{0, 2, 0, -1, 2}, 5), x[1], 0)
		}},
		{"axis1-i32", []operand{{tensor.Shape{2, 3}, u}, {tensor.Shape{2, 2}, u}}, func(x []*graph.Node) *graph.Node {
			return ops.IndexAdd(x[0], ix(x[0], tensor.Int32, []int64{1, 1}, 2), x[1], 1)
		}},
	}
	gradCases["composites/indexing"] = []gradCase{
		{"SegmentSum", op1(tensor.Shape{6, 2}, u), func(x []*graph.Node) *graph.Node {
			return ops.SegmentSum(x[0], ix(x[0], tensor.Int64, []int64{2, 0, 2, 3, -4, 2}, 6), 4)
		}},
		{"embedding-then-index-add", op1(tensor.Shape{4, 3}, u), func(x []*graph.Node) *graph.Node {
			// The gradient of Gather is IndexAdd and IndexAdd's is Gather:
			// an IndexAdd of a gather into x itself runs both rules.
			idx := ix(x[0], tensor.Int64, []int64{3, 1, 3}, 3)
			return ops.IndexAdd(x[0], idx, ops.Mul(ops.Gather(x[0], idx, 0), ops.Gather(x[0], idx, 0)), 0)
		}},
	}
}

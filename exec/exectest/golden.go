package exectest

import (
	"math"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// goldenCases have expected values worked out by hand; each Source says
// how.
func goldenCases() []Case {
	f32, f64, i32, i64, b8 := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64, tensor.Bool
	nan := math.NaN()
	one := func(name, source string, want *tensor.Tensor, build func(g *graph.Graph) ([]*graph.Node, exec.Feeds)) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: build}
	}
	unaryIn := func(t *tensor.Tensor, f func(*graph.Node) *graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, t)
			return []*graph.Node{f(ns[0])}, feeds
		}
	}
	binaryIn := func(a, b *tensor.Tensor, f func(a, b *graph.Node) *graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, a, b)
			return []*graph.Node{f(ns[0], ns[1])}, feeds
		}
	}
	m23 := func(dt tensor.DType) *tensor.Tensor { return Tensor(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3) }
	return []Case{
		one("add-row-broadcast", "hand: [[1,2,3],[4,5,6]] + [10,20,30] adds the row to each row",
			Tensor(f32, []float64{11, 22, 33, 14, 25, 36}, 2, 3),
			binaryIn(m23(f32), Tensor(f32, []float64{10, 20, 30}), ops.Add)),
		one("mul-outer", "hand: [[1],[2]] * [[3,4,5]] is the outer product",
			Tensor(f64, []float64{3, 4, 5, 6, 8, 10}, 2, 3),
			binaryIn(Tensor(f64, []float64{1, 2}, 2, 1), Tensor(f64, []float64{3, 4, 5}, 1, 3), ops.Mul)),
		one("matmul-2x2", "hand: [[1,2],[3,4]]x[[5,6],[7,8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]]",
			Tensor(f32, []float64{19, 22, 43, 50}, 2, 2),
			binaryIn(Tensor(f32, []float64{1, 2, 3, 4}, 2, 2), Tensor(f32, []float64{5, 6, 7, 8}, 2, 2), ops.MatMul)),
		one("matmul-vec-vec", "hand: [1,2,3].[4,5,6] = 4+10+18 = 32, a scalar",
			Tensor(f64, []float64{32}, []int{}...),
			binaryIn(Tensor(f64, []float64{1, 2, 3}), Tensor(f64, []float64{4, 5, 6}), ops.MatMul)),
		one("matmul-batch-broadcast", "hand: [2,1,2] x [2,1]: batch 0 [1,2].[1,1]=3, batch 1 [3,4].[1,1]=7",
			Tensor(f32, []float64{3, 7}, 2, 1, 1),
			binaryIn(Tensor(f32, []float64{1, 2, 3, 4}, 2, 1, 2), Tensor(f32, []float64{1, 1}, 2, 1), ops.MatMul)),
		one("sum-axis1", "hand: row sums of [[1,2,3],[4,5,6]] are 6 and 15",
			Tensor(f32, []float64{6, 15}, 2),
			unaryIn(m23(f32), func(x *graph.Node) *graph.Node { return ops.Sum(x, 1) })),
		one("max-axis0-keepdims", "hand: column maxima of [[1,2,3],[4,5,6]] are the second row, kept as [1,3]",
			Tensor(f64, []float64{4, 5, 6}, 1, 3),
			unaryIn(m23(f64), func(x *graph.Node) *graph.Node { return ops.MaxKeepDims(x, 0) })),
		one("mean-all", "hand: (1+2+3+4+5+6)/6 = 3.5",
			Tensor(f64, []float64{3.5}, []int{}...),
			unaryIn(m23(f64), func(x *graph.Node) *graph.Node { return ops.Mean(x) })),
		one("argmax-ties-nan", "hand: ties go to the first index (row 0: 3 at 1 and 2 -> 1); a NaN is the largest (row 1 -> 2)",
			Tensor(i64, []float64{1, 2}, 2),
			unaryIn(Tensor(f32, []float64{1, 3, 3, 5, 9, nan}, 2, 3), func(x *graph.Node) *graph.Node { return ops.ArgMax(x, 1) })),
		one("argmax-flat", "hand: the largest of [[1,7],[9,2]] is at row-major index 2",
			Tensor(i64, []float64{2}, []int{}...),
			unaryIn(Tensor(i32, []float64{1, 7, 9, 2}, 2, 2), func(x *graph.Node) *graph.Node { return ops.ArgMax(x) })),
		one("max-nan", "hand: NaN propagates through Max",
			Tensor(f64, []float64{nan, 5}, 2),
			unaryIn(Tensor(f64, []float64{1, nan, 2, 5, 4, 3}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Max(x, 1) })),
		one("softmax-1e4", "math: softmax([1e4, 1e4-1, 1e4-2]) = e^[0,-1,-2]/(1+e^-1+e^-2), computed in Python float64",
			Tensor(f32, []float64{0.6652409557748218, 0.24472847105479764, 0.09003057317038046}, 3),
			unaryIn(Tensor(f32, []float64{1e4, 1e4 - 1, 1e4 - 2}), func(x *graph.Node) *graph.Node { return ops.Softmax(x, 0) })),
		one("logsoftmax-1e4", "math: [0,-1,-2] - log(1+e^-1+e^-2), computed in Python float64",
			Tensor(f64, []float64{-0.4076059644443804, -1.4076059644443804, -2.4076059644443806}, 3),
			unaryIn(Tensor(f64, []float64{-1e4, -1e4 - 1, -1e4 - 2}), func(x *graph.Node) *graph.Node { return ops.LogSoftmax(x, 0) })),
		one("sigmoid-tails", "math: sigmoid(-100) = e^-100/(1+e^-100) = 3.7200759760208356e-44 (Python); sigmoid(100) = 1; sigmoid(0) = 0.5",
			Tensor(f64, []float64{3.7200759760208356e-44, 1, 0.5}, 3),
			unaryIn(Tensor(f64, []float64{-100, 100, 0}), ops.Sigmoid)),
		one("int-floor-div", "hand: Python floor division 7//2=3, -7//2=-4, 7//-2=-4; loom defines x//0 = 0",
			Tensor(i32, []float64{3, -4, -4, 0}, 4),
			binaryIn(Tensor(i32, []float64{7, -7, 7, 5}), Tensor(i32, []float64{2, 2, -2, 0}), ops.Div)),
		one("int-pow", "hand: 2^3=8, 3^0=1, (-2)^3=-8, 2^-1 truncates to 0, (-1)^-3=-1",
			Tensor(i64, []float64{8, 1, -8, 0, -1}, 5),
			binaryIn(Tensor(i64, []float64{2, 3, -2, 2, -1}), Tensor(i64, []float64{3, 0, 3, -1, -3}), ops.Pow)),
		one("cast-saturate", "hand: float to int32 truncates toward zero (1.9->1, -1.9->-1), NaN->0, 3e9 saturates at 2147483647",
			Tensor(i32, []float64{1, -1, 0, 2147483647, -2147483648}, 5),
			unaryIn(Tensor(f32, []float64{1.9, -1.9, nan, 3e9, -3e9}), func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Int32) })),
		one("cast-to-bool", "hand: nonzero (and NaN) is true",
			Tensor(b8, []float64{0, 1, 1, 1}, 4),
			unaryIn(Tensor(f64, []float64{0, -0.5, 2, nan}), func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Bool) })),
		one("transpose", "hand: the transpose of [[1,2,3],[4,5,6]]",
			Tensor(i64, []float64{1, 4, 2, 5, 3, 6}, 3, 2),
			unaryIn(m23(i64), func(x *graph.Node) *graph.Node { return ops.Transpose(x) })),
		one("slice-step", "hand: [0..9][1:8:3] = [1,4,7]",
			Tensor(f32, []float64{1, 4, 7}, 3),
			unaryIn(Tensor(f32, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), func(x *graph.Node) *graph.Node { return ops.Slice(x, ops.RS(1, 8, 3)) })),
		one("concat", "hand: [[1,2,3],[4,5,6]] joined with [[7],[8]] along axis 1",
			Tensor(f32, []float64{1, 2, 3, 7, 4, 5, 6, 8}, 2, 4),
			binaryIn(m23(f32), Tensor(f32, []float64{7, 8}, 2, 1), func(a, b *graph.Node) *graph.Node { return ops.Concat(1, a, b) })),
		one("where", "hand: picks a=[1,2,3] where [true,false,true], else the scalar 0",
			Tensor(f32, []float64{1, 0, 3}, 3),
			func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(b8, []float64{1, 0, 1}), Tensor(f32, []float64{1, 2, 3}))
				return []*graph.Node{ops.Where(ns[0], ns[1], ops.Scalar(ns[1], 0))}, feeds
			}),
		one("maximum-nan-relu", "hand: maximum propagates NaN; relu(-0.5)=0, relu(2)=2",
			Tensor(f64, []float64{nan, 2, 0}, 3),
			unaryIn(Tensor(f64, []float64{nan, 2, -0.5}), ops.Relu)),
		one("reshape-rank0-output", "hand: sum of [2,3] ones reshaped to a [1,1,1,1] tensor",
			Tensor(f32, []float64{6}, 1, 1, 1, 1),
			unaryIn(Tensor(f32, []float64{1, 1, 1, 1, 1, 1}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Reshape(ops.Sum(x), 1, 1, 1, 1) })),
		{
			Name:   "golden/const-and-variable",
			Source: "hand: x*w + c with x=[1,2], w=[3,4] (a Variable), c=10 (a Const): [13, 18]",
			Want:   []*tensor.Tensor{Tensor(f32, []float64{13, 18}, 2)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(f32, []float64{1, 2}))
				w := g.Variable("w", Tensor(f32, []float64{3, 4}))
				c := g.Const(Tensor(f32, []float64{10}, []int{}...))
				return []*graph.Node{ops.Add(ops.Mul(ns[0], w), c)}, feeds
			},
		},
		{
			Name:   "golden/output-is-input",
			Source: "hand: an output that is an Input (and one listed twice) is copied through",
			Want:   []*tensor.Tensor{Tensor(f32, []float64{1, 2}, 2), Tensor(f32, []float64{1, 2}, 2), Tensor(f32, []float64{2, 4}, 2), Tensor(f32, []float64{2, 4}, 2)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(f32, []float64{1, 2}))
				y := ops.Add(ns[0], ns[0])
				return []*graph.Node{ns[0], ns[0], y, y}, feeds
			},
		},
	}
}

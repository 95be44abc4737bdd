package exectest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// sortCases are the cases of Sort, ArgSort, TopK and SearchSorted
// (ops/sort.go): goldens worked out by hand (stability, NaN and -0, descending, batches, k = n, equal values
// in SearchSorted), and cases in every dtype against Eval (the
// comparison sort of ops/sort.go's reference) on lines with many ties,
// short (insertion) and long (radix, and on CUDA longer than one block).
func sortCases() []Case {
	return append(sortGoldens(), sortRandomCases()...)
}

func sortGoldens() []Case {
	f32, f64, i32, i64 := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64
	nan, inf, negz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	gold := func(name, source string, in []*tensor.Tensor, f func(x []*graph.Node) []*graph.Node, want ...*tensor.Tensor) Case {
		return Case{Name: "golden/" + name, Source: source, Want: want, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, in...)
			return f(ns), feeds
		}}
	}
	one := func(t *tensor.Tensor) []*tensor.Tensor { return []*tensor.Tensor{t} }
	return []Case{
		gold("sort-ties", "hand: [3,1,2,1,3,0] sorted is [0,1,1,2,3,3], argsort [5,1,3,2,0,4] (equal 1s and 3s keep index order); descending argsort [0,4,2,1,3,5], values [3,3,2,1,1,0]",
			one(Tensor(f32, []float64{3, 1, 2, 1, 3, 0})),
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sort(x[0], 0, false), ops.ArgSort(x[0], 0, false), ops.ArgSort(x[0], -1, true), ops.Sort(x[0], 0, true)}
			},
			Tensor(f32, []float64{0, 1, 1, 2, 3, 3}), Tensor(i64, []float64{5, 1, 3, 2, 0, 4}),
			Tensor(i64, []float64{0, 4, 2, 1, 3, 5}), Tensor(f32, []float64{3, 3, 2, 1, 1, 0})),
		gold("sort-nan", "hand: numpy.sort([2,NaN,-1,NaN,0.5]) = [-1,0.5,2,NaN,NaN], argsort [2,4,0,1,3]; descending (torch.sort descending=True, stable=True) puts NaN first: [1,3,0,4,2]",
			one(Tensor(f64, []float64{2, nan, -1, nan, 0.5})),
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sort(x[0], 0, false), ops.ArgSort(x[0], 0, false), ops.ArgSort(x[0], 0, true), ops.Sort(x[0], 0, true)}
			},
			Tensor(f64, []float64{-1, 0.5, 2, nan, nan}), Tensor(i64, []float64{2, 4, 0, 1, 3}),
			Tensor(i64, []float64{1, 3, 0, 4, 2}), Tensor(f64, []float64{nan, nan, 2, 0.5, -1})),
		gold("sort-signed-zero", "hand: [0,-0,-1,-0,0]: -0 equals +0, so the zeros keep their input order: sorted [-1,0,-0,-0,0], whose reciprocals are [-1,Inf,-Inf,-Inf,Inf]; descending [0,-0,-0,0,-1]",
			one(Tensor(f32, []float64{0, negz, -1, negz, 0})),
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Reciprocal(ops.Sort(x[0], 0, false)), ops.Reciprocal(ops.Sort(x[0], 0, true)), ops.ArgSort(x[0], 0, false)}
			},
			Tensor(f32, []float64{-1, inf, -inf, -inf, inf}), Tensor(f32, []float64{inf, -inf, -inf, inf, -1}), Tensor(i64, []float64{2, 0, 1, 3, 4})),
		gold("sort-axis0", "hand: the columns of [[3,1],[1,1],[2,0]] sorted: [1,2,3] and [0,1,1]; their argsorts [1,2,0] and [2,0,1] (the equal 1s in order)",
			one(Tensor(i32, []float64{3, 1, 1, 1, 2, 0}, 3, 2)),
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Sort(x[0], 0, false), ops.ArgSort(x[0], 0, false)}
			},
			Tensor(i32, []float64{1, 0, 2, 1, 3, 1}, 3, 2), Tensor(i64, []float64{1, 2, 2, 0, 0, 1}, 3, 2)),
		gold("topk-ties-nan", "hand: the 3 largest of [1,3,3,NaN,2,3] are NaN (index 3), then the 3s at 1 and 2 (lower index first, as jax.lax.top_k; torch 1.13's topk picks indices 5 and 1); smallest 3: 1 (0), 2 (4), 3 (1); k = n: [NaN,3,3,3,2,1] at [3,1,2,5,4,0]",
			one(Tensor(f32, []float64{1, 3, 3, nan, 2, 3})),
			func(x []*graph.Node) []*graph.Node {
				v, i := ops.TopK(x[0], 3, 0, true)
				sv, si := ops.TopK(x[0], 3, 0, false)
				nv, ni := ops.TopK(x[0], 6, 0, true)
				return []*graph.Node{v, i, sv, si, nv, ni}
			},
			Tensor(f32, []float64{nan, 3, 3}), Tensor(i64, []float64{3, 1, 2}),
			Tensor(f32, []float64{1, 2, 3}), Tensor(i64, []float64{0, 4, 1}),
			Tensor(f32, []float64{nan, 3, 3, 3, 2, 1}), Tensor(i64, []float64{3, 1, 2, 5, 4, 0})),
		gold("topk-batch", "hand: rows [5,7,7,1] and [0,-2,9,9]: the 2 largest are 7,7 at 1,2 and 9,9 at 2,3; the 2 smallest 1,5 at 3,0 and -2,0 at 1,0",
			one(Tensor(i32, []float64{5, 7, 7, 1, 0, -2, 9, 9}, 2, 4)),
			func(x []*graph.Node) []*graph.Node {
				v, i := ops.TopK(x[0], 2, 1, true)
				sv, si := ops.TopK(x[0], 2, -1, false)
				return []*graph.Node{v, i, sv, si}
			},
			Tensor(i32, []float64{7, 7, 9, 9}, 2, 2), Tensor(i64, []float64{1, 2, 2, 3}, 2, 2),
			Tensor(i32, []float64{1, 5, -2, 0}, 2, 2), Tensor(i64, []float64{3, 0, 1, 0}, 2, 2)),
		gold("searchsorted-equal", "hand: numpy.searchsorted([1,2,2,2,5], [0,2,3,5,6]) = [0,1,4,4,5]; side='right' [0,4,4,5,5]",
			[]*tensor.Tensor{Tensor(f32, []float64{1, 2, 2, 2, 5}), Tensor(f32, []float64{0, 2, 3, 5, 6})},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.SearchSorted(x[0], x[1], false), ops.SearchSorted(x[0], x[1], true)}
			},
			Tensor(i64, []float64{0, 1, 4, 4, 5}), Tensor(i64, []float64{0, 4, 4, 5, 5})),
		gold("searchsorted-nan", "hand: numpy.searchsorted([1,3,NaN], [NaN,3,Inf]) = [2,1,2] (NaN sorts last); side='right' [3,2,2]",
			[]*tensor.Tensor{Tensor(f64, []float64{1, 3, nan}), Tensor(f64, []float64{nan, 3, inf})},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.SearchSorted(x[0], x[1], false), ops.SearchSorted(x[0], x[1], true)}
			},
			Tensor(i64, []float64{2, 1, 2}), Tensor(i64, []float64{3, 2, 2})),
		gold("searchsorted-batch", "hand: torch.searchsorted([[1,3,5],[2,4,6]], [[3,6],[1,4]]) = [[1,3],[0,1]]; right=True [[2,3],[0,2]]",
			[]*tensor.Tensor{Tensor(i32, []float64{1, 3, 5, 2, 4, 6}, 2, 3), Tensor(i32, []float64{3, 6, 1, 4}, 2, 2)},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.SearchSorted(x[0], x[1], false), ops.SearchSorted(x[0], x[1], true)}
			},
			Tensor(i64, []float64{1, 3, 0, 1}, 2, 2), Tensor(i64, []float64{2, 3, 0, 2}, 2, 2)),
		gold("searchsorted-1d-2d", "hand: numpy.searchsorted([10,20,30], [[15,30],[5,35]]) = [[1,2],[0,3]]",
			[]*tensor.Tensor{Tensor(i64, []float64{10, 20, 30}), Tensor(i64, []float64{15, 30, 5, 35}, 2, 2)},
			func(x []*graph.Node) []*graph.Node { return []*graph.Node{ops.SearchSorted(x[0], x[1], false)} },
			Tensor(i64, []float64{1, 2, 0, 3}, 2, 2)),
		gold("sort-gradient", "hand: Sort's gradient is a ScatterAdd into zeros at ArgSort's indices: the cotangents [10,20,30] of sorted([5,7,3]) = [3,5,7] go back to positions 2,0,1: [20,30,10]",
			[]*tensor.Tensor{Tensor(f32, []float64{5, 7, 3}), Tensor(f32, []float64{10, 20, 30})},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.ScatterAdd(ops.ZerosLike(x[0]), ops.ArgSort(x[0], 0, false), x[1], 0)}
			},
			Tensor(f32, []float64{20, 30, 10})),
	}
}

// tiesTensor is a tensor of small integers (as values of dt): lines of
// 70 have many equal elements.
func tiesTensor(dt tensor.DType, shape tensor.Shape, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x50f7))
	vals := make([]float64, shape.Size())
	for i := range vals {
		vals[i] = float64(r.IntN(40) - 20)
		if dt == tensor.Uint8 {
			vals[i] += 20
		}
		if dt.IsFloat() && i%7 == 3 {
			vals[i] += 0.25
		}
	}
	return Tensor(dt, vals, shape...)
}

func sortRandomCases() []Case {
	var cs []Case
	dts := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64, tensor.Int8, tensor.Int16, tensor.Uint8}
	layouts := []struct {
		shape   tensor.Shape
		axis, k int
	}{
		{tensor.Shape{3, 70}, 1, 5},    // radix, TopK by heap
		{tensor.Shape{70, 3}, 0, 20},   // along an outer axis; TopK by sort
		{tensor.Shape{2, 3, 9}, -1, 9}, // insertion; k = n
	}
	for _, dt := range dts {
		for li, l := range layouts {
			dt, l, seed := dt, l, uint64(1400+li)
			cs = append(cs, Case{Name: fmt.Sprintf("sort/%v/axis%d/%s", l.shape, l.axis, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, tiesTensor(dt, l.shape, seed))
					x := ns[0]
					v, i := ops.TopK(x, l.k, l.axis, true)
					sv, si := ops.TopK(x, l.k, l.axis, false)
					return []*graph.Node{ops.Sort(x, l.axis, false), ops.Sort(x, l.axis, true),
						ops.ArgSort(x, l.axis, false), ops.ArgSort(x, l.axis, true), v, i, sv, si}, feeds
				}})
		}
		// SearchSorted of every dtype: a sorted row with runs of equal
		// elements, values on and between them.
		cs = append(cs, Case{Name: "searchsorted/" + dt.Short(), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			s := Tensor(dt, []float64{1, 3, 3, 3, 7, 8, 8, 20, 21, 21, 30, 40}, 2, 6)
			ns, feeds := Inputs(g, s, tiesTensor(dt, tensor.Shape{2, 11}, 77))
			sorted := ops.Sort(ns[0], 1, false)
			v := ops.Add(ns[1], ops.Scalar(ns[1], 20))
			return []*graph.Node{ops.SearchSorted(sorted, v, false), ops.SearchSorted(sorted, v, true),
				ops.SearchSorted(ops.Reshape(ns[0], 12), v, true)}, feeds
		}})
	}
	// Long lines: several radix passes, and on CUDA more than one block.
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Int64} {
		dt := dt
		cs = append(cs, Case{Name: "sort/long/" + dt.Short(), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			x := Rand(dt, tensor.Shape{2, 3000}, -1e4, 1e4, 31)
			ns, feeds := Inputs(g, x)
			v, i := ops.TopK(ns[0], 10, 1, true)
			return []*graph.Node{ops.Sort(ns[0], 1, false), ops.ArgSort(ns[0], 1, true), v, i}, feeds
		}})
	}
	return cs
}

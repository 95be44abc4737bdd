package exectest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The cases of the indexing ops (ops/index.go, issue 14): golden values by
// hand from NumPy's and PyTorch's definitions, and random operands in
// every dtype against Eval, with duplicate and negative indices, small
// and large (several parts on the CPU, several blocks on CUDA).

// indices returns a tensor of dtype dt (i32 or i64) and the given shape
// holding random indices in -d..d-1 (negative ones wrap once).
func indices(dt tensor.DType, shape tensor.Shape, d int, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x1d))
	v := make([]float64, shape.Size())
	for i := range v {
		v[i] = float64(r.IntN(2*d) - d)
	}
	return Tensor(dt, v, shape...)
}

// uniqueIndices is like indices, with the indices of each line along axis
// distinct (a prefix of a random permutation of 0..d-1, half of them
// written negative): Scatter's precondition.
func uniqueIndices(dt tensor.DType, shape tensor.Shape, axis, d int, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x1e))
	outer, n, inner := 1, shape[axis], 1
	for _, s := range shape[:axis] {
		outer *= s
	}
	for _, s := range shape[axis+1:] {
		inner *= s
	}
	v := make([]float64, shape.Size())
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			perm := r.Perm(d)
			for j := 0; j < n; j++ {
				x := perm[j]
				if r.IntN(2) == 0 {
					x -= d
				}
				v[(o*n+j)*inner+i] = float64(x)
			}
		}
	}
	return Tensor(dt, v, shape...)
}

func indexCases() []Case {
	f32, f64, i8, i32, i64 := tensor.Float32, tensor.Float64, tensor.Int8, tensor.Int32, tensor.Int64
	fed := func(name, source string, want *tensor.Tensor, in []*tensor.Tensor, f func(ns []*graph.Node) *graph.Node) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, in...)
			return []*graph.Node{f(ns)}, feeds
		}}
	}
	m23 := Tensor(f32, []float64{1, 2, 3, 4, 5, 6}, 2, 3) // [[1 2 3] [4 5 6]]
	cs := []Case{
		fed("gather-axis1-negative", "hand: numpy.take([[1,2,3],[4,5,6]], [2,-1,0], axis=1): columns 2, 2 (-1 wraps to 2) and 0",
			Tensor(f32, []float64{3, 3, 1, 6, 6, 4}, 2, 3), []*tensor.Tensor{m23, Tensor(i64, []float64{2, -1, 0}, 3)},
			func(ns []*graph.Node) *graph.Node { return ops.Gather(ns[0], ns[1], 1) }),
		fed("gather-embedding-2d-ids", "hand: numpy.take([[1,2],[3,4],[5,6]], [[1,0],[1,1]], axis=0): rows 1,0 and 1,1, shape [2,2,2]",
			Tensor(f64, []float64{3, 4, 1, 2, 3, 4, 3, 4}, 2, 2, 2),
			[]*tensor.Tensor{Tensor(f64, []float64{1, 2, 3, 4, 5, 6}, 3, 2), Tensor(i32, []float64{1, 0, 1, 1}, 2, 2)},
			func(ns []*graph.Node) *graph.Node { return ops.Gather(ns[0], ns[1], 0) }),
		fed("take-along-axis", "hand: numpy.take_along_axis([[10,30,20],[60,40,50]], [[1],[0]], axis=1) is each row's element 1 and 0: 30, 60",
			Tensor(f32, []float64{30, 60}, 2, 1),
			[]*tensor.Tensor{Tensor(f32, []float64{10, 30, 20, 60, 40, 50}, 2, 3), Tensor(i64, []float64{1, 0}, 2, 1)},
			func(ns []*graph.Node) *graph.Node { return ops.TakeAlongAxis(ns[0], ns[1], 1) }),
		fed("take-along-axis-broadcast", "hand: numpy.take_along_axis([[10,30,20],[60,40,50]], [[2,-3]], axis=1): the one index row serves both rows: x[r,2], x[r,0]",
			Tensor(f32, []float64{20, 10, 50, 60}, 2, 2),
			[]*tensor.Tensor{Tensor(f32, []float64{10, 30, 20, 60, 40, 50}, 2, 3), Tensor(i32, []float64{2, -3}, 1, 2)},
			func(ns []*graph.Node) *graph.Node { return ops.TakeAlongAxis(ns[0], ns[1], 1) }),
		fed("scatter-axis0", "hand: torch.scatter([[1,2,3],[4,5,6]], 0, [[1,0,1]], [[10,20,30]]): (1,0)=10, (0,1)=20, (1,2)=30",
			Tensor(f32, []float64{1, 20, 3, 10, 5, 30}, 2, 3),
			[]*tensor.Tensor{m23, Tensor(i64, []float64{1, 0, -1}, 1, 3), Tensor(f32, []float64{10, 20, 30}, 1, 3)},
			func(ns []*graph.Node) *graph.Node { return ops.Scatter(ns[0], ns[1], ns[2], 0) }),
		fed("scatter-add-duplicates", "hand: [1,1,1] plus [1,2,3,4,5] at [0,2,0,0,-1]: element 0 gets 1+1+3+4 = 9, element 2 gets 1+2+5 = 8",
			Tensor(f64, []float64{9, 1, 8}, 3),
			[]*tensor.Tensor{Tensor(f64, []float64{1, 1, 1}, 3), Tensor(i32, []float64{0, 2, 0, 0, -1}, 5), Tensor(f64, []float64{1, 2, 3, 4, 5}, 5)},
			func(ns []*graph.Node) *graph.Node { return ops.ScatterAdd(ns[0], ns[1], ns[2], 0) }),
		fed("index-add-rows", "hand: torch.index_add(zeros(3,2), 0, [2,0,2], [[1,2],[3,4],[5,6]]): row 0 = [3,4], row 2 = [1+5, 2+6]",
			Tensor(f32, []float64{3, 4, 0, 0, 6, 8}, 3, 2),
			[]*tensor.Tensor{Tensor(f32, []float64{0, 0, 0, 0, 0, 0}, 3, 2), Tensor(i32, []float64{2, 0, 2}, 3), Tensor(f32, []float64{1, 2, 3, 4, 5, 6}, 3, 2)},
			func(ns []*graph.Node) *graph.Node { return ops.IndexAdd(ns[0], ns[1], ns[2], 0) }),
		fed("index-add-int8-wraps", "hand: 100 + 100 + 100 = 300 wraps in int8 to 300-256 = 44",
			Tensor(i8, []float64{44}, 1),
			[]*tensor.Tensor{Tensor(i8, []float64{100}, 1), Tensor(i64, []float64{0, -1}, 2), Tensor(i8, []float64{100, 100}, 2)},
			func(ns []*graph.Node) *graph.Node { return ops.IndexAdd(ns[0], ns[1], ns[2], 0) }),
		fed("segment-sum", "hand: jax.ops.segment_sum([1,2,3,4], [1,0,1,3], 4): segment 0 = 2, 1 = 1+3, 2 empty = 0, 3 = 4",
			Tensor(f32, []float64{2, 4, 0, 4}, 4),
			[]*tensor.Tensor{Tensor(f32, []float64{1, 2, 3, 4}, 4), Tensor(i32, []float64{1, 0, 1, 3}, 4)},
			func(ns []*graph.Node) *graph.Node { return ops.SegmentSum(ns[0], ns[1], 4) }),
	}

	// Scatters into a broadcast constant (a gradient's zeros, Full): the
	// CPU fills the result itself and skips the broadcast when nothing
	// else reads it; here once alone, once with the broadcast also an
	// output and also added to.
	into := func(name string, dt tensor.DType, f func(g *graph.Graph, ns []*graph.Node) []*graph.Node) {
		rows := []*tensor.Tensor{indices(i64, tensor.Shape{40}, 6, 77), Rand(dt, tensor.Shape{40, 5}, -10, 10, 78)}
		lines := []*tensor.Tensor{uniqueIndices(i32, tensor.Shape{2, 3}, 1, 5, 79), Rand(dt, tensor.Shape{2, 3}, -10, 10, 80)}
		in := rows
		if strings.HasPrefix(name, "Scatter") {
			in = lines
		}
		cs = append(cs, Case{Name: "into/" + name, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, in...)
			return f(g, ns), feeds
		}})
	}
	into("IndexAdd-zeros-f32", f32, func(g *graph.Graph, ns []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.IndexAdd(ops.Full(g, f32, 0, 6, 5), ns[0], ns[1], 0)}
	})
	into("IndexAdd-full-i16", tensor.Int16, func(g *graph.Graph, ns []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.IndexAdd(ops.Full(g, tensor.Int16, -3, 6, 5), ns[0], ns[1], 0)}
	})
	into("ScatterAdd-full-shared-f64", f64, func(g *graph.Graph, ns []*graph.Node) []*graph.Node {
		full := ops.Full(g, f64, 2.5, 2, 5)
		return []*graph.Node{ops.ScatterAdd(full, ns[0], ns[1], 1), ops.Add(full, full)}
	})
	into("Scatter-full-i8", tensor.Int8, func(g *graph.Graph, ns []*graph.Node) []*graph.Node {
		full := ops.Full(g, tensor.Int8, 7, 2, 5)
		return []*graph.Node{ops.Scatter(full, ns[0], ns[1], 1), full}
	})

	// Operand 0 dies at the scatter and may be updated in place, but not
	// when the updates are the same buffer (the same value, or two views
	// of one: the plain mode keeps two equal Reshapes apart).
	cs = append(cs, Case{Name: "into/same-buffer", Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		ns, feeds := Inputs(g, Rand(f32, tensor.Shape{2, 3}, -2, 2, 81), indices(i64, tensor.Shape{2, 3}, 2, 82), indices(i32, tensor.Shape{6}, 6, 83))
		u := ops.Exp(ns[0])
		flat := ops.Exp(ops.Neg(ns[0]))
		// (Negated, so that the scatters' results are arena values.)
		return []*graph.Node{
			ops.Neg(ops.ScatterAdd(u, ns[1], u, 0)),
			ops.Neg(ops.IndexAdd(ops.Reshape(flat, 6), ns[2], ops.Reshape(flat, 6), 0)),
		}, feeds
	}})

	// Random operands against Eval, in every dtype each op admits, with
	// indices in i32 and i64 alternately.
	type ix struct {
		name   string
		x, idx tensor.Shape
		axis   int
		op     string // "Gather", "Take", "Scatter", "ScatterAdd", "IndexAdd"
	}
	ixs := []ix{
		{"Gather/axis0-rows", tensor.Shape{7, 5}, tensor.Shape{4, 3}, 0, "Gather"},
		{"Gather/axis1-elems", tensor.Shape{3, 6}, tensor.Shape{9}, 1, "Gather"},
		{"Gather/axis1-blocks", tensor.Shape{2, 5, 3}, tensor.Shape{2, 2}, 1, "Gather"},
		{"Gather/large", tensor.Shape{500, 64}, tensor.Shape{3000}, 0, "Gather"},
		{"Gather/large-elems", tensor.Shape{40, 500}, tensor.Shape{700}, 1, "Gather"},
		{"TakeAlongAxis/axis1", tensor.Shape{3, 5, 2}, tensor.Shape{3, 7, 2}, 1, "Take"},
		{"TakeAlongAxis/axis0", tensor.Shape{4, 3}, tensor.Shape{2, 3}, 0, "Take"},
		{"TakeAlongAxis/large", tensor.Shape{300, 200}, tensor.Shape{300, 150}, 1, "Take"},
		{"Scatter/axis1", tensor.Shape{3, 6, 2}, tensor.Shape{3, 4, 2}, 1, "Scatter"},
		{"Scatter/large", tensor.Shape{200, 300}, tensor.Shape{200, 250}, 1, "Scatter"},
		{"ScatterAdd/axis1", tensor.Shape{3, 4, 2}, tensor.Shape{3, 9, 2}, 1, "ScatterAdd"},
		{"ScatterAdd/axis0", tensor.Shape{5, 3}, tensor.Shape{8, 3}, 0, "ScatterAdd"},
		{"ScatterAdd/large-few", tensor.Shape{7}, tensor.Shape{60000}, 0, "ScatterAdd"},
		{"ScatterAdd/large-lines", tensor.Shape{64, 50, 16}, tensor.Shape{64, 80, 16}, 1, "ScatterAdd"},
		{"IndexAdd/axis0", tensor.Shape{4, 3}, tensor.Shape{9}, 0, "IndexAdd"},
		{"IndexAdd/axis1", tensor.Shape{2, 5, 3}, tensor.Shape{6}, 1, "IndexAdd"},
		{"IndexAdd/large-rows", tensor.Shape{300, 128}, tensor.Shape{2000}, 0, "IndexAdd"},
		{"IndexAdd/large-few", tensor.Shape{3, 40}, tensor.Shape{5000}, 1, "IndexAdd"},
	}
	// The first case of each op runs in every dtype; the others (the same
	// loops on other element types) in float32 and int32 only, which
	// keeps the emulated CUDA run short (every case is a module).
	all := []tensor.DType{f32, f64, i32, i64, tensor.Int8, tensor.Int16, tensor.Uint8, tensor.Bool, tensor.Float16, tensor.BFloat16}
	swept := map[string]bool{}
	for k, c := range ixs {
		dts := []tensor.DType{f32, i32}
		if !swept[c.op] {
			swept[c.op], dts = true, all
		}
		for di, dt := range dts {
			adds := c.op == "ScatterAdd" || c.op == "IndexAdd"
			if adds && (dt == tensor.Bool || dt.IsStorage()) {
				continue
			}
			idt := i32
			if (k+di)%2 == 0 {
				idt = i64
			}
			c, dt, seed := c, dt, uint64(900+31*k+di)
			var tol float64
			if adds && dt == f32 && strings.Contains(c.name, "/large") {
				// float32 sums of up to 8600 terms in [-10,10) added in
				// float32 against the float64 reference: rounding grows
				// with the partial sums.
				tol = 2e-4
			}
			cs = append(cs, Case{Name: fmt.Sprintf("%s/%s-%s", c.name, dt.Short(), idt.Short()), Tol: tol,
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					x := Rand(dt, c.x, -10, 10, seed)
					d := c.x[c.axis]
					var idx *tensor.Tensor
					if c.op == "Scatter" {
						idx = uniqueIndices(idt, c.idx, c.axis, d, seed)
					} else {
						idx = indices(idt, c.idx, d, seed)
					}
					ins := []*tensor.Tensor{x, idx}
					switch c.op {
					case "Scatter", "ScatterAdd":
						ins = append(ins, Rand(dt, c.idx, -10, 10, seed+1))
					case "IndexAdd":
						s := c.x.Clone()
						s[c.axis] = c.idx[0]
						ins = append(ins, Rand(dt, s, -10, 10, seed+1))
					}
					ns, feeds := Inputs(g, ins...)
					var out *graph.Node
					switch c.op {
					case "Gather":
						out = ops.Gather(ns[0], ns[1], c.axis)
					case "Take":
						out = ops.TakeAlongAxis(ns[0], ns[1], c.axis)
					case "Scatter":
						out = ops.Scatter(ns[0], ns[1], ns[2], c.axis)
					case "ScatterAdd":
						out = ops.ScatterAdd(ns[0], ns[1], ns[2], c.axis)
					case "IndexAdd":
						out = ops.IndexAdd(ns[0], ns[1], ns[2], c.axis)
					}
					return []*graph.Node{out}, feeds
				}})
		}
	}
	return cs
}

// indexRunErrors checks the run errors of out-of-range indices: every
// indexing op fed an index outside its axis fails the run with an error
// wrapping exec.ErrIndexOutOfRange that names the op, the bad index and
// where the node was built (the backends' tests check the site itself); the Variable the program updates keeps its value, and a
// good run afterwards works.
func indexRunErrors(t *testing.T, be exec.Backend) {
	f32, i32, i64 := tensor.Float32, tensor.Int32, tensor.Int64
	type tc struct {
		name string
		idt  tensor.DType
		bad  []float64 // the bad feed of the 4 indices, for axis 0 of length 3
		want []string
		f    func(x, idx, w *graph.Node) *graph.Node
	}
	cs := []tc{
		{"Gather", i64, []float64{0, 1, 3, 2}, []string{"Gather", "index 3 (element 2 of the indices)", "length 3"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.Gather(w, idx, 0) }},
		{"Gather-negative", i32, []float64{0, -4, 1, 2}, []string{"Gather", "index -4 (element 1 of the indices)", "valid: -3..2"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.Gather(w, idx, 0) }},
		{"TakeAlongAxis", i32, []float64{0, 1, 2, 7}, []string{"TakeAlongAxis", "index 7 (element 3 of the indices)"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.TakeAlongAxis(w, ops.Reshape(idx, 4), 0) }},
		{"Scatter", i64, []float64{0, 1, 2, -9}, []string{"Scatter", "index -9"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.Scatter(w, ops.Reshape(idx, 4), x, 0) }},
		{"ScatterAdd", i32, []float64{5, 1, 2, 0}, []string{"ScatterAdd", "index 5 (element 0 of the indices)"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.ScatterAdd(w, ops.Reshape(idx, 4), x, 0) }},
		{"IndexAdd", i64, []float64{1, 1, 1, 1 << 40}, []string{"IndexAdd", "index 1099511627776"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.IndexAdd(w, ops.Reshape(idx, 4), x, 0) }},
		{"SegmentSum", i32, []float64{0, 0, 3, 1}, []string{"IndexAdd", "index 3 (element 2 of the indices)"},
			func(x, idx, w *graph.Node) *graph.Node { return ops.SegmentSum(x, ops.Reshape(idx, 4), 3) }},
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", f32, 4)
			idx := g.Input("idx", c.idt, 4)
			w := g.Variable("w", Tensor(f32, []float64{1, 2, 4}, 3))
			y := c.f(x, idx, w)
			s := ops.Sum(y)
			prog, err := exec.Compile(be, []*graph.Node{s}, exec.Update(w, ops.Add(w, ops.Scalar(w, 1))), exec.IgnoreUnusedFeeds())
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			xv := Tensor(f32, []float64{1, 1, 1, 1}, 4)
			_, err = prog.Run(context.Background(), exec.Feeds{x: xv, idx: Tensor(c.idt, c.bad, 4)})
			if err == nil {
				t.Fatalf("Run with indices %v succeeded", c.bad)
			}
			if !errors.Is(err, exec.ErrIndexOutOfRange) {
				t.Errorf("error %q does not wrap exec.ErrIndexOutOfRange", err)
			}
			for _, want := range append(c.want, "built at") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			wv, err := prog.Read(w)
			if err != nil {
				t.Fatal(err)
			}
			if err := Compare(wv, Tensor(f32, []float64{1, 2, 4}, 3), 0); err != nil {
				t.Errorf("the variable changed in the failed run: %v", err)
			}
			// Indices 0, -1 (2), 1, 0 are good: the run succeeds and w
			// advances by 1 (hand).
			if _, err := prog.Run(context.Background(), exec.Feeds{x: xv, idx: Tensor(c.idt, []float64{0, -1, 1, 0}, 4)}); err != nil {
				t.Fatalf("good run after the error: %v", err)
			}
			wv, err = prog.Read(w)
			if err != nil {
				t.Fatal(err)
			}
			if err := Compare(wv, Tensor(f32, []float64{2, 3, 5}, 3), 0); err != nil {
				t.Errorf("after a good run: %v", err)
			}
		})
	}
}

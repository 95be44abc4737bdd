package exec_test

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// randomGraph builds a graph from fuzz bytes: a few inputs of broadcast-
// compatible shapes, then one op per pair of bytes (elementwise ops with
// broadcasting, reductions, matrix products, reshapes, transposes,
// softmax, Where), all kept finite. It returns the outputs and feeds.
func randomGraph(data []byte) (*graph.Graph, []*graph.Node, exec.Feeds) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	dt := tensor.Float32
	if next()%4 == 0 {
		dt = tensor.Float64
	}
	R, C := 1+next()%5, 1+next()%6
	g := graph.New()
	feeds := exec.Feeds{}
	input := func(name string, shape ...int) *graph.Node {
		n := g.Input(name, dt, shape...)
		feeds[n] = exectest.Rand(dt, tensor.Shape(shape), -2, 2, uint64(len(feeds)+1))
		return n
	}
	pool := []*graph.Node{input("a", R, C), input("b", C), input("c", R, 1), input("s"), input("m", C, R)}
	pick := func() *graph.Node { return pool[next()%len(pool)] }
	bounded := func(x *graph.Node) *graph.Node { return ops.Tanh(x) } // keeps Exp and Pow finite
	for steps := 0; len(data) > 0 && steps < 40; steps++ {
		op := next() % 20
		x, y := pick(), pick()
		var n *graph.Node
		switch op {
		case 0:
			n = ops.Add(x, y)
		case 1:
			n = ops.Sub(x, y)
		case 2:
			n = ops.Mul(x, y)
		case 3:
			n = ops.Div(x, ops.Add(ops.Abs(y), ops.Scalar(y, 1)))
		case 4:
			n = ops.Maximum(x, y)
		case 5:
			n = ops.Minimum(x, ops.Scalar(x, 0.5))
		case 6:
			n = ops.Exp(bounded(x))
		case 7:
			n = ops.Sigmoid(x)
		case 8:
			n = ops.Log(ops.Add(ops.Abs(x), ops.Scalar(x, 1)))
		case 9:
			n = ops.Relu(ops.Neg(x))
		case 10:
			n = ops.SumKeepDims(x, x.Rank()-1)
		case 11:
			if x.Rank() > 0 {
				n = ops.MaxKeepDims(x, 0)
			}
		case 12:
			if x.Rank() == 2 && y.Rank() == 2 && x.Shape()[1] == y.Shape()[0] {
				n = ops.MatMul(x, y)
			} else if x.Rank() == 2 {
				n = ops.Transpose(x)
			}
		case 13:
			if x.Rank() >= 1 {
				n = ops.Softmax(x, -1)
			}
		case 14:
			n = ops.Where(ops.Greater(x, ops.Scalar(x, 0)), x, y)
		case 15:
			n = ops.Sqrt(ops.Abs(x))
		case 16:
			n = ops.Mul(x, ops.Scalar(x, 1)) // simplifiable
		case 17:
			n = ops.Pow(bounded(x), ops.Scalar(x, 2))
		case 18:
			if x.Rank() == 2 {
				n = ops.Reshape(ops.Transpose(x), x.Shape()[0], x.Shape()[1])
			}
		case 19:
			n = ops.Cast(ops.Cast(x, tensor.Float64), dt)
		}
		if n == nil {
			continue
		}
		if !n.Valid() {
			return nil, nil, nil // shapes that do not fit: a user error, not ours
		}
		pool = append(pool, n)
	}
	k := len(pool)
	outs := []*graph.Node{pool[k-1]}
	if k > 6 {
		outs = append(outs, pool[k-2], ops.Sum(pool[k-3]))
	}
	return g, outs, feeds
}

// FuzzOptimize checks the compiler's contract on random graphs: graph.Verify
// holds after every pass, and the optimised program computes what the
// unoptimised one does, within 2e-5 relative for float32 (fused reductions
// may add in a different order; both accumulate in float64) and 1e-12 for
// float64.
func FuzzOptimize(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 3, 4, 0, 1, 2, 3, 6, 4, 10, 5, 13, 6},
		{1, 4, 5, 2, 0, 3, 1, 7, 2, 14, 0, 16, 1, 12, 4, 11, 3, 17, 2, 19, 1},
		{4, 2, 2, 12, 0, 4, 12, 13, 5, 10, 6, 6, 7, 9, 8, 15, 9, 18, 2},
		{3, 1, 0, 6, 6, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11},
		{8, 0, 5, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 14, 14, 16, 16},
	} {
		f.Add(seed)
	}
	be, err := cpu.New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g, outs, feeds := randomGraph(data)
		if g == nil {
			return
		}
		opt, err := exec.Compile(be, outs, exec.VerifyEachPass(), exec.IgnoreUnusedFeeds())
		if err != nil {
			t.Fatalf("compile: %v\n%s", err, graph.Format(g))
		}
		defer opt.Close()
		plain, err := exec.Compile(be, outs, exec.DisablePasses(optionalPasses...), exec.IgnoreUnusedFeeds())
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		got, err := opt.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		want, err := plain.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if err := exectest.Compare(got[i], want[i], 0); err != nil {
				t.Errorf("output %d: %v\ngraph:\n%s\noptimised plan:\n%s", i, err, graph.Format(g), opt.Plan().Format())
			}
		}
	})
}

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

// linalgCases are the cases of the linear-algebra ops (ops/linalg.go):
// one golden case against NumPy (with the sign conventions of
// internal/opdef/linalg.go applied to NumPy's vectors), and one case per
// dtype running every op, batched and broadcast, against Eval (textbook
// float64 algorithms). Few on purpose: the sweeps over sizes are the CPU
// package's (exec/cpu/linalg_test.go).
func linalgCases() []Case {
	f64 := tensor.Float64
	spd := Tensor(f64, []float64{4, 1, 2, 1, 3, 0.5, 2, 0.5, 5}, 3, 3)
	b23 := Tensor(f64, []float64{1, 2, 3, 4, 5, 6}, 2, 3)
	rhs := Tensor(f64, []float64{1, 2, 3}, 3)
	cs := []Case{{
		Name: "linalg/golden-numpy",
		Source: "numpy 1.x (/usr/bin/python3, OpenBLAS LAPACK): np.linalg.cholesky(a), det(a), slogdet(a), solve(a, [1,2,3]), eigh(a) " +
			"with every eigenvector negated (the largest component made positive), svd(b, full_matrices=False) with both singular " +
			"pairs negated, qr(b.T) with column 0 of q and row 0 of r negated (r's diagonal made non-negative), lstsq(b.T, [1,2,4])[0]; " +
			"a = [[4,1,2],[1,3,.5],[2,.5,5]], b = [[1,2,3],[4,5,6]]",
		Tol: 1e-12,
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			x, feeds := Inputs(g, spd, b23, rhs, Tensor(f64, []float64{1, 2, 4}, 3))
			s, l := ops.SLogDet(x[0])
			w, v := ops.Eigh(x[0])
			u, sv, vh := ops.SVD(x[1])
			q, r := ops.QR(ops.Transpose(x[1], 1, 0))
			return []*graph.Node{ops.Cholesky(x[0]), ops.Det(x[0]), s, l, ops.Solve(x[0], x[2]), w, v, u, sv, vh, q, r,
				ops.LstSq(ops.Transpose(x[1], 1, 0), x[3])}, feeds
		},
		Want: []*tensor.Tensor{
			Tensor(f64, []float64{2, 0, 0, 0.5, 1.6583123951777, 0, 1, 0, 2}, 3, 3),
			Tensor(f64, []float64{44.000000000000014}, []int{}...),
			Tensor(f64, []float64{1}, []int{}...), Tensor(f64, []float64{3.7841896339182615}, []int{}...),
			Tensor(f64, []float64{-0.2215909090909091, 0.6363636363636364, 0.625}, 3),
			Tensor(f64, []float64{2.0965216172967187, 3.0722239520050754, 6.831254430698205}, 3),
			Tensor(f64, []float64{0.7167430662893416, 0.3257672733027812, 0.616567158200162,
				-0.5748726248246245, 0.7765018813719533, 0.25800444463819483,
				-0.3947161539048013, -0.5393704773814453, 0.7438270269195071}, 3, 3),
			Tensor(f64, []float64{0.38631770311861147, 0.9223657800770585, 0.9223657800770585, -0.38631770311861147}, 2, 2),
			Tensor(f64, []float64{9.508032000695724, 0.7728696356734844}, 2),
			Tensor(f64, []float64{0.4286671335486261, 0.5663069188480352, 0.7039467041474442,
				-0.8059639085892976, -0.11238241409659372, 0.58119908039611}, 2, 3),
			Tensor(f64, []float64{0.2672612419124243, 0.8728715609439696, 0.5345224838248488, 0.21821789023599236,
				0.8017837257372732, -0.4364357804719846}, 3, 2),
			Tensor(f64, []float64{3.7416573867739413, 8.55235974119758, 0, 1.963961012123933}, 2, 2),
			Tensor(f64, []float64{1.722222222222221, -0.22222222222222177}, 2),
		},
	}}
	for _, dt := range floatTypes {
		r := rand.New(rand.NewPCG(16, uint64(dt)))
		rnd := func(shape ...int) *tensor.Tensor {
			v := make([]float64, tensor.Shape(shape).Size())
			for i := range v {
				v[i] = r.Float64()*2 - 1
			}
			return Tensor(dt, v, shape...)
		}
		tol := 1e-4
		if dt == tensor.Float64 {
			tol = 1e-9
		}
		cs = append(cs, Case{Name: fmt.Sprintf("linalg/all/%s", dt.Short()), Tol: tol,
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				x, feeds := Inputs(g, rnd(2, 4, 4), rnd(4, 2), rnd(2, 5, 3), rnd(3, 5))
				a, b := x[0], x[1]
				// Well-conditioned: a + 3I, and a·aᵀ + 4I for the
				// positive-definite ops.
				eye := ops.Eye(g, dt, 4, 4, 0)
				well := ops.Add(a, ops.Mul(eye, ops.Scalar(a, 3)))
				pd := ops.Add(ops.MatMulT(a, a, false, true), ops.Mul(eye, ops.Scalar(a, 4)))
				s, l := ops.SLogDet(well)
				w, v := ops.Eigh(pd)
				q, rr := ops.QR(x[2])
				u, sv, vh := ops.SVD(x[3])
				return []*graph.Node{ops.Cholesky(pd), ops.Solve(well, b), ops.Inv(well), ops.Det(well), s, l,
					ops.TriangularSolve(pd, b, ops.Triangular{Upper: true, Transpose: true}), w, v, q, rr, u, sv, vh,
					ops.LstSq(x[2], ops.Slice(ops.Transpose(x[3], 1, 0), ops.All, ops.R(0, 2)))}, feeds
			}})
	}
	return cs
}

// linalgRunErrors checks the run errors of the linear-algebra ops: a
// batch whose matrix 1 is singular (Solve, Inv, TriangularSolve) or not
// positive definite (Cholesky) fails the run with an error wrapping
// exec.ErrSingular or exec.ErrNotPositiveDefinite that names the op, the
// matrix and where the node was built; the Variable the program updates
// keeps its value, and a good run afterwards works.
func linalgRunErrors(t *testing.T, be exec.Backend) {
	f32 := tensor.Float32
	cs := []struct {
		name string
		want error
		text string
		f    func(a, b *graph.Node) *graph.Node
	}{
		{"Solve", exec.ErrSingular, "zero pivot at column 1", func(a, b *graph.Node) *graph.Node { return ops.Solve(a, b) }},
		{"Inv", exec.ErrSingular, "zero pivot at column 1", func(a, b *graph.Node) *graph.Node { return ops.Inv(a) }},
		{"TriangularSolve", exec.ErrSingular, "zero pivot at column 1", func(a, b *graph.Node) *graph.Node {
			return ops.TriangularSolve(a, b, ops.Triangular{})
		}},
		{"Cholesky", exec.ErrNotPositiveDefinite, "leading minor of order 2", func(a, b *graph.Node) *graph.Node { return ops.Cholesky(a) }},
	}
	// Matrix 0 is [[2,0],[1,2]] (fine for all four); matrix 1 is
	// [[1,0],[1,0]]: its LU and its lower triangle have a zero pivot at
	// column 1, and its Cholesky pivot 2 is 0 - 0² = 0 (hand). The good
	// feed repeats matrix 0.
	bad := Tensor(f32, []float64{2, 0, 1, 2, 1, 0, 1, 0}, 2, 2, 2)
	good := Tensor(f32, []float64{2, 0, 1, 2, 2, 0, 1, 2}, 2, 2, 2)
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			a := g.Input("a", f32, 2, 2, 2)
			b := g.Input("b", f32, 2, 1)
			w := g.Variable("w", Tensor(f32, []float64{1}, 1))
			y := c.f(a, b)
			prog, err := exec.Compile(be, []*graph.Node{y}, exec.Update(w, ops.Add(w, ops.Scalar(w, 1))), exec.IgnoreUnusedFeeds())
			if err != nil {
				t.Fatal(err)
			}
			defer prog.Close()
			feeds := exec.Feeds{a: bad, b: Tensor(f32, []float64{1, 1}, 2, 1)}
			_, err = prog.Run(context.Background(), feeds)
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v does not wrap %v", err, c.want)
			}
			for _, want := range []string{c.name, "matrix 1 of the batch", c.text, "built at"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if wv, err := prog.Read(w); err != nil || Compare(wv, Tensor(f32, []float64{1}, 1), 0) != nil {
				t.Errorf("the variable changed in the failed run: %v %v", wv, err)
			}
			feeds[a] = good
			if _, err := prog.Run(context.Background(), feeds); err != nil {
				t.Fatalf("good run after the error: %v", err)
			}
			if wv, err := prog.Read(w); err != nil || Compare(wv, Tensor(f32, []float64{2}, 1), 0) != nil {
				t.Errorf("after a good run: %v %v", wv, err)
			}
		})
	}
}

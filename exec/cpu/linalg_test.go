package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// laData is a batch of random matrices with entries in [-1, 1), plus
// diag on the diagonal (square ones), seeded.
func laData(dt tensor.DType, shape tensor.Shape, diag float64, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 7))
	v := make([]float64, shape.Size())
	for i := range v {
		v[i] = r.Float64()*2 - 1
	}
	m, n := shape[len(shape)-2], shape[len(shape)-1]
	if m == n {
		for b := 0; b < shape.Size()/(m*n+1)+1 && b*m*n < len(v); b++ {
			for i := range n {
				v[b*m*n+i*n+i] += diag
			}
		}
	}
	t, _ := tensor.FromFloat64s(dt, v, shape...)
	return t
}

func closeTo(got, want *tensor.Tensor, tol float64) error {
	if !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("shape %v, want %v", got.Shape(), want.Shape())
	}
	for i := range got.Shape().Size() {
		g, w := got.Float64(i), want.Float64(i)
		if math.IsInf(w, 0) && g == w {
			continue
		}
		if !(math.Abs(g-w) <= tol*(1+math.Abs(w))) {
			return fmt.Errorf("element %d: %v, want %v (reference)", i, g, w)
		}
	}
	return nil
}

// Every op against its float64 reference (textbook algorithms sharing no
// code with the kernels), in both dtypes, sizes across the recursion's
// leaf (16) and several levels, batched and broadcast, at 1 and 3
// threads.
func TestLinalgAgainstReference(t *testing.T) {
	sizes := []int{0, 1, 3, 16, 17, 40, 130}
	for _, threads := range []int{1, 3} {
		if raceEnabled && threads == 1 {
			continue // one thread has no races to find; make test's -race run is long enough
		}
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			tol := 1e-9
			if dt == tensor.Float32 {
				tol = 2e-5
			}
			for si, n := range sizes {
				if threads == 3 && n > 40 {
					continue
				}
				t.Run(fmt.Sprintf("%d/%s/%d", threads, dt.Short(), n), func(t *testing.T) {
					g := graph.New()
					batch := 2
					x := g.Input("x", dt, batch, n, n)
					spd := g.Input("spd", dt, batch, n, n)
					rhs := g.Input("b", dt, 1, n, 3)
					tall := g.Input("tall", dt, batch, n+3, n)
					wide := g.Input("wide", dt, n, n+2)
					tb := g.Input("tb", dt, n+3, 2)
					outs := []*graph.Node{ops.Cholesky(spd), ops.Solve(x, rhs), ops.Inv(x), ops.Det(x)}
					s, l := ops.SLogDet(x)
					outs = append(outs, s, l)
					for _, tt := range []ops.Triangular{{}, {Upper: true}, {Transpose: true}, {Upper: true, Transpose: true, UnitDiagonal: true}} {
						outs = append(outs, ops.TriangularSolve(spd, rhs, tt))
					}
					for _, m := range []*graph.Node{tall, wide} {
						q, r := ops.QR(m)
						u, sv, vh := ops.SVD(m)
						outs = append(outs, q, r, u, sv, vh)
					}
					w, v := ops.Eigh(spd)
					outs = append(outs, w, v, ops.LstSq(tall, tb))
					if err := g.Err(); err != nil {
						t.Fatal(err)
					}
					xs := laData(dt, tensor.Shape{batch, n, n}, 3, uint64(si))
					// spd: x·xᵀ + n·I, made in float64 then rounded.
					sv64 := make([]float64, batch*n*n)
					for b := range batch {
						for i := range n {
							for j := range n {
								s := 0.0
								for k := range n {
									s += xs.Float64(b*n*n+i*n+k) * xs.Float64(b*n*n+j*n+k)
								}
								if i == j {
									s += float64(n)
								}
								sv64[b*n*n+i*n+j] = s
							}
						}
					}
					spdT, _ := tensor.FromFloat64s(dt, sv64, batch, n, n)
					feeds := exec.Feeds{x: xs, spd: spdT, rhs: laData(dt, tensor.Shape{1, n, 3}, 0, 9),
						tall: laData(dt, tensor.Shape{batch, n + 3, n}, 0, 10), wide: laData(dt, tensor.Shape{n, n + 2}, 0, 11),
						tb: laData(dt, tensor.Shape{n + 3, 2}, 0, 12)}
					want, err := exectest.Eval(outs, feeds)
					if err != nil {
						t.Fatal(err)
					}
					p, err := exec.Compile(be, outs)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					got, err := p.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					for i := range outs {
						tl := tol
						if outs[i].Op() != ops.OpReshape && n > 0 {
							tl *= float64(n) // condition grows with n
						}
						if err := closeTo(got[i], want[i], tl); err != nil {
							t.Errorf("output %d (%s of %v): %v", i, packedName(outs[i]), outs[i].Type(), err)
						}
					}
				})
			}
		}
	}
}

// packedName names the linear-algebra op behind a builder's output.
func packedName(n *graph.Node) string {
	for n.Valid() && len(n.Inputs()) > 0 {
		switch n.Op() {
		case ops.OpSlice, ops.OpReshape:
			n = n.Input(0)
			continue
		}
		break
	}
	return n.Op().String()
}

// Singular and indefinite matrices: run errors naming the op, the matrix
// and the call site; the program stays usable.
func TestLinalgRunErrors(t *testing.T) {
	be, err := cpu.New(cpu.Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3, 2, 2)
	b := g.Input("b", tensor.Float64, 2, 1)
	cases := []struct {
		out  *graph.Node
		want error
		text string
	}{
		{ops.Solve(x, b), exec.ErrSingular, "Solve: singular matrix: matrix 1 of the batch has a zero pivot at column 1"},
		{ops.Inv(x), exec.ErrSingular, "Inv"},
		{ops.TriangularSolve(x, b, ops.Triangular{}), exec.ErrSingular, "matrix 2 of the batch has a zero pivot at column 0"},
		{ops.Cholesky(x), exec.ErrNotPositiveDefinite, "matrix 1 of the batch, leading minor of order 2"},
	}
	// matrix 0: I; matrix 1: rank 1 (and not positive definite); matrix
	// 2: lower-triangular with a zero diagonal element but invertible.
	xv, _ := tensor.New([]float64{1, 0, 0, 1, 1, 2, 2, 4, 0, 1, 1, 0}, 3, 2, 2)
	bv, _ := tensor.New([]float64{1, 1}, 2, 1)
	for _, c := range cases {
		p, err := exec.Compile(be, []*graph.Node{c.out}, exec.IgnoreUnusedFeeds())
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Run(context.Background(), exec.Feeds{x: xv, b: bv})
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) || !strings.Contains(err.Error(), "linalg_test.go") {
			t.Errorf("%v: %v, want %v with %q and the call site", c.out.Op(), err, c.want, c.text)
		}
		p.Close()
	}
	// NumPy's values where it gives no error: det 0, slogdet (0, -inf).
	s, l := ops.SLogDet(x)
	p, err := exec.Compile(be, []*graph.Node{ops.Det(x), s, l})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	out, err := p.Run(context.Background(), exec.Feeds{x: xv})
	if err != nil {
		t.Fatal(err)
	}
	// By hand: det(I) = 1, det([[1,2],[2,4]]) = 0, det([[0,1],[1,0]]) = -1.
	want := []string{"f64[3] [ 1  0 -1]", "f64[3] [ 1  0 -1]", "f64[3] [   0 -Inf    0]"}
	for i, o := range out {
		if o.String() != want[i] {
			t.Errorf("output %d: %s, want %s", i, o, want[i])
		}
	}
}

// A bound kernel allocates nothing when it runs.
func TestLinalgAllocs(t *testing.T) {
	be, err := cpu.New(cpu.Threads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float64, 64, 64)
	b := g.Input("b", tensor.Float64, 64, 2)
	q, _ := ops.QR(x)
	w, _ := ops.Eigh(x)
	_, s, _ := ops.SVD(x)
	outs := []*graph.Node{ops.Cholesky(x), ops.Solve(x, b), ops.Inv(x), ops.Det(x), q, w, s, ops.LstSq(x, b)}
	for _, o := range outs {
		p, err := exec.Compile(be, []*graph.Node{o})
		if err != nil {
			t.Fatal(err)
		}
		spd := laData(tensor.Float64, tensor.Shape{64, 64}, 70, 1)
		feeds := exec.Feeds{x: spd, b: laData(tensor.Float64, tensor.Shape{64, 2}, 0, 2)}
		outT := []*tensor.Tensor{tensor.Zeros(o.DType(), o.Shape()...)}
		if _, ok := feeds[b]; ok && len(o.Inputs()) < 2 && !strings.Contains(packedName(o), "LstSq") {
			delete(feeds, b)
		}
		run := func() {
			if err := p.RunInto(context.Background(), feeds, outT); err != nil {
				t.Fatal(err)
			}
		}
		run()
		if n := testing.AllocsPerRun(3, run); n > 2 {
			t.Errorf("%s: %v allocations per run", packedName(o), n)
		}
		p.Close()
	}
}

// A decomposition's outputs share one factorisation: however many of its
// outputs (and however many times the builder is called), the program
// runs one QR, one SVD and one SLogDet kernel.
func TestLinalgOneFactorisation(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float64, 4, 3)
	q, r := ops.QR(x)
	q2, _ := ops.QR(x)
	u, s, vh := ops.SVD(x)
	sq := ops.MatMulT(x, x, true, false)
	sg, l := ops.SLogDet(sq)
	p, err := exec.Compile(be, []*graph.Node{q, r, q2, u, s, vh, sg, l})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	count := map[graph.Op]int{}
	for _, st := range p.Plan().Steps {
		if st.Kind == exec.KernelStep {
			count[st.Node.Op()]++
		}
	}
	for _, op := range []graph.Op{ops.OpQR, ops.OpSVD, ops.OpSLogDet} {
		if count[op] != 1 {
			t.Errorf("%v: %d kernels, want 1", op, count[op])
		}
	}
}

// A long factorisation stops soon after its Run is cancelled: the
// recursions check between splits of 256 columns or more.
func TestLinalgCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("a factorisation of about a second")
	}
	be, err := cpu.New(cpu.Threads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	const n = 3072
	g := graph.New()
	x := g.Input("x", tensor.Float64, n, n)
	b := g.Input("b", tensor.Float64, n, 1)
	y := ops.Solve(x, b)
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{x: laData(tensor.Float64, tensor.Shape{n, n}, 3, 1), b: laData(tensor.Float64, tensor.Shape{n, 1}, 0, 2)}
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float64, n, 1)}
	t0 := time.Now()
	if err := p.RunInto(context.Background(), feeds, out); err != nil {
		t.Fatal(err)
	}
	full := time.Since(t0)
	ctx, cancel := context.WithTimeout(context.Background(), full/10)
	defer cancel()
	t0 = time.Now()
	err = p.RunInto(ctx, feeds, out)
	took := time.Since(t0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run = %v, want the deadline's error", err)
	}
	t.Logf("full run %v; cancelled after %v, returned after %v", full, full/10, took)
	if took > full/10+max(full/4, 100*time.Millisecond) {
		t.Errorf("returned %v after the start, cancelled at %v: too late (full run %v)", took, full/10, full)
	}
}

// Eigh on degenerate spectra (the QL iteration's deflation paths): the
// identity, zeros, a diagonal with repeats, a matrix of ones (eigenvalues
// 0 (n-1 times) and n), and a tridiagonal one with a zero coupling:
// A·V = V·diag(w), VᵀV = I, and the eigenvalues by hand.
func TestLinalgEighDegenerate(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	const n = 6
	mk := func(f func(i, j int) float64) []float64 {
		a := make([]float64, n*n)
		for i := range n {
			for j := range n {
				a[i*n+j] = f(i, j)
			}
		}
		return a
	}
	eye := func(i, j int) float64 {
		if i == j {
			return 1
		}
		return 0
	}
	cases := []struct {
		name string
		a    []float64
		w    []float64 // by hand
	}{
		{"identity", mk(eye), []float64{1, 1, 1, 1, 1, 1}},
		{"zeros", mk(func(i, j int) float64 { return 0 }), []float64{0, 0, 0, 0, 0, 0}},
		{"diag-repeats", mk(func(i, j int) float64 { return eye(i, j) * float64([]int{3, -1, 3, 2, -1, 3}[i]) }), []float64{-1, -1, 2, 3, 3, 3}},
		{"ones", mk(func(i, j int) float64 { return 1 }), []float64{0, 0, 0, 0, 0, 6}},
		// two blocks [[2,1],[1,2]] (1, 3) and a 4×4 path graph's
		// Laplacian-like [[1,-1,0,0],...]: eigenvalues 2-2cos(kπ/4)·…
		// computed as 0, 2-√2, 2, 2+√2 (hand: the path P4's Laplacian).
		{"split-tridiagonal", mk(func(i, j int) float64 {
			p := [][]float64{{2, 1, 0, 0, 0, 0}, {1, 2, 0, 0, 0, 0}, {0, 0, 1, -1, 0, 0}, {0, 0, -1, 2, -1, 0}, {0, 0, 0, -1, 2, -1}, {0, 0, 0, 0, -1, 1}}
			return p[i][j]
		}), []float64{0, 1, 2 - math.Sqrt2, 2, 3, 2 + math.Sqrt2}},
	}
	for _, c := range cases {
		g := graph.New()
		x := g.Input("x", tensor.Float64, n, n)
		w, v := ops.Eigh(x)
		p, err := exec.Compile(be, []*graph.Node{w, v})
		if err != nil {
			t.Fatal(err)
		}
		at, _ := tensor.New(c.a, n, n)
		out, err := p.Run(context.Background(), exec.Feeds{x: at})
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := append([]float64(nil), c.w...)
		slices.Sort(want)
		for i := range n {
			if math.Abs(out[0].Float64(i)-want[i]) > 1e-13 {
				t.Errorf("%s: w = %v, want %v", c.name, out[0], want)
				break
			}
		}
		vv := out[1]
		for i := range n {
			for j := range n {
				av, vw, vtv := 0.0, vv.Float64(i*n+j)*out[0].Float64(j), 0.0
				for k := range n {
					av += c.a[i*n+k] * vv.Float64(k*n+j)
					vtv += vv.Float64(k*n+i) * vv.Float64(k*n+j)
				}
				if math.Abs(av-vw) > 1e-13 || math.Abs(vtv-eye(i, j)) > 1e-13 {
					t.Fatalf("%s: (A·V)[%d,%d] = %v, (V·W) %v, (VᵀV) %v", c.name, i, j, av, vw, vtv)
				}
			}
		}
	}
}

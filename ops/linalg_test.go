package ops_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// refOf evaluates the packed op node n (whose operands are Inputs) with
// the reference evaluator on the given tensors.
func refOf(t *testing.T, n *graph.Node, in ...*tensor.Tensor) ([]float64, error) {
	t.Helper()
	if !n.Valid() {
		t.Fatalf("invalid node: %v", n.Graph().Err())
	}
	vs := make([]*opdef.Value, len(in))
	for i, x := range in {
		vs[i] = opdef.FromTensor(x)
	}
	v, err := opdef.Evaluate(n, vs)
	if err != nil {
		return nil, err
	}
	return v.F, nil
}

func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) || math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			t.Fatalf("%s: element %d = %v, want %v\ngot  %v\nwant %v", what, i, got[i], want[i], got, want)
		}
	}
}

// The reference evaluators against NumPy 1.x (numpy.linalg, OpenBLAS's
// LAPACK, run with /usr/bin/python3), with the sign conventions of
// internal/opdef/linalg.go applied to NumPy's vectors by hand where they
// differ (noted).
func TestLinalgReferenceGoldens(t *testing.T) {
	spd := mustNew64([]float64{4, 1, 2, 1, 3, 0.5, 2, 0.5, 5}, 3, 3)
	b23 := mustNew64([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b32 := mustNew64([]float64{1, 4, 2, 5, 3, 6}, 3, 2)
	g := graph.New()
	x33 := g.Input("a", tensor.Float64, 3, 3)
	x23 := g.Input("b", tensor.Float64, 2, 3)
	x32 := g.Input("c", tensor.Float64, 3, 2)
	v3 := g.Input("v", tensor.Float64, 3, 1)
	rhs := mustNew64([]float64{1, 2, 3}, 3, 1)

	got, err := refOf(t, ops.Cholesky(x33), spd)
	if err != nil {
		t.Fatal(err)
	}
	// np.linalg.cholesky(a)
	near(t, "Cholesky", got, []float64{2, 0, 0, 0.5, 1.6583123951777, 0, 1, 0, 2}, 1e-13)

	got, _ = refOf(t, ops.Det(x33), spd)
	near(t, "Det", got, []float64{44.000000000000014}, 1e-13) // np.linalg.det(a)
	s, la := ops.SLogDet(x33)
	got, _ = refOf(t, s.Input(0).Input(0), spd)
	_ = la
	near(t, "SLogDet", got, []float64{1, 3.7841896339182615}, 1e-13) // np.linalg.slogdet(a)

	got, _ = refOf(t, ops.Solve(x33, v3), spd, rhs)
	near(t, "Solve", got, []float64{-0.2215909090909091, 0.6363636363636364, 0.625}, 1e-13) // np.linalg.solve(a, [1,2,3])

	w, _ := ops.Eigh(x33)
	got, _ = refOf(t, packedOf(w), spd)
	// np.linalg.eigh(a): w, then v with every column negated (each has
	// its largest component negative in NumPy's output).
	near(t, "Eigh", got, []float64{2.0965216172967187, 3.0722239520050754, 6.831254430698205,
		0.7167430662893416, 0.3257672733027812, 0.616567158200162,
		-0.5748726248246245, 0.7765018813719533, 0.25800444463819483,
		-0.3947161539048013, -0.5393704773814453, 0.7438270269195071}, 1e-12)

	u, _, _ := ops.SVD(x23)
	got, _ = refOf(t, packedOf(u), b23)
	// np.linalg.svd(b, full_matrices=False), both columns of u (and rows
	// of vh) negated; the packed row width is n = 3.
	near(t, "SVD", got, []float64{0.38631770311861147, 0.9223657800770585, 0,
		0.9223657800770585, -0.38631770311861147, 0,
		9.508032000695724, 0.7728696356734844, 0,
		0.4286671335486261, 0.5663069188480352, 0.7039467041474442,
		-0.8059639085892976, -0.11238241409659372, 0.58119908039611}, 1e-12)

	q, _ := ops.QR(x32)
	got, _ = refOf(t, packedOf(q), b32)
	// np.linalg.qr(b.T): column 0 of q and row 0 of r negated (R[0,0] < 0
	// in NumPy's).
	near(t, "QR", got, []float64{0.2672612419124243, 0.8728715609439696,
		0.5345224838248488, 0.21821789023599236,
		0.8017837257372732, -0.4364357804719846,
		3.7416573867739413, 8.55235974119758,
		0, 1.963961012123933}, 1e-12)

	got, _ = refOf(t, ops.LstSq(x32, v3), b32, mustNew64([]float64{1, 2, 4}, 3, 1))
	near(t, "LstSq", got, []float64{1.722222222222221, -0.22222222222222177}, 1e-12) // np.linalg.lstsq(b.T, [1,2,4])[0]
}

// packedOf is the packed op node behind a builder's slice.
func packedOf(n *graph.Node) *graph.Node {
	for n.Valid() && opdef.Lookup(n.Op()).Kind != opdef.Linalg {
		n = n.Input(0)
	}
	return n
}

// Random sizes: the references satisfy the defining identities.
func TestLinalgReferenceIdentities(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randm := func(m, n int) []float64 {
		x := make([]float64, m*n)
		for i := range x {
			x[i] = r.Float64()*2 - 1
		}
		return x
	}
	matmul := func(a, b []float64, m, k, n int) []float64 {
		c := make([]float64, m*n)
		for i := range m {
			for j := range n {
				for l := range k {
					c[i*n+j] += a[i*k+l] * b[l*n+j]
				}
			}
		}
		return c
	}
	tr := func(a []float64, m, n int) []float64 {
		c := make([]float64, m*n)
		for i := range m {
			for j := range n {
				c[j*m+i] = a[i*n+j]
			}
		}
		return c
	}
	eye := func(n int) []float64 {
		c := make([]float64, n*n)
		for i := range n {
			c[i*n+i] = 1
		}
		return c
	}
	for _, sz := range [][2]int{{1, 1}, {5, 5}, {7, 4}, {4, 7}, {12, 12}} {
		m, n := sz[0], sz[1]
		k := min(m, n)
		a := randm(m, n)
		g := graph.New()
		x := g.Input("a", tensor.Float64, m, n)
		at := mustNew64(a, m, n)
		// QR
		p, err := refOf(t, packedOf(first(ops.QR(x))), at)
		if err != nil {
			t.Fatal(err)
		}
		q, rr := make([]float64, m*k), p[m*n:]
		for i := range m {
			copy(q[i*k:], p[i*n:i*n+k])
		}
		near(t, "Q·R", matmul(q, rr, m, k, n), a, 1e-12)
		near(t, "QᵀQ", matmul(tr(q, m, k), q, k, m, k), eye(k), 1e-12)
		for i := range k {
			if rr[i*n+i] < 0 {
				t.Fatalf("R[%d,%d] = %v < 0", i, i, rr[i*n+i])
			}
		}
		// SVD
		p, _ = refOf(t, packedOf(first3(ops.SVD(x))), at)
		u, s, vh := make([]float64, m*k), p[m*n:m*n+k], p[(m+1)*n:]
		for i := range m {
			copy(u[i*k:], p[i*n:i*n+k])
		}
		us := append([]float64(nil), u...)
		for i := range m {
			for j := range k {
				us[i*k+j] *= s[j]
			}
		}
		near(t, "U·S·Vh", matmul(us, vh, m, k, n), a, 1e-12)
		near(t, "UᵀU", matmul(tr(u, m, k), u, k, m, k), eye(k), 1e-12)
		for j := 1; j < k; j++ {
			if s[j] > s[j-1] {
				t.Fatalf("singular values not descending: %v", s)
			}
		}
		if m != n {
			continue
		}
		// Eigh of a symmetric matrix built from a's lower triangle.
		sy := make([]float64, n*n)
		for i := range n {
			for j := range n {
				sy[i*n+j] = a[max(i, j)*n+min(i, j)]
			}
		}
		p, _ = refOf(t, packedOf(first(ops.Eigh(x))), at)
		w, v := p[:n], p[n:]
		vw := append([]float64(nil), v...)
		for i := range n {
			for j := range n {
				vw[i*n+j] *= w[j]
			}
		}
		near(t, "A·V = V·W", matmul(sy, v, n, n, n), vw, 1e-11)
		// Inv
		p, _ = refOf(t, ops.Inv(x), at)
		near(t, "A·Inv(A)", matmul(a, p, n, n, n), eye(n), 1e-10)
		// Cholesky of A·Aᵀ + n·I.
		spd := matmul(a, tr(a, n, n), n, n, n)
		for i := range n {
			spd[i*n+i] += float64(n)
		}
		p, _ = refOf(t, ops.Cholesky(x), mustNew64(spd, n, n))
		near(t, "L·Lᵀ", matmul(p, tr(p, n, n), n, n, n), spd, 1e-12)
		// TriangularSolve, every flag combination.
		bm := randm(n, 3)
		y := g.Input("y", tensor.Float64, n, 3)
		for _, tt := range []ops.Triangular{{}, {Upper: true}, {Transpose: true}, {Upper: true, Transpose: true, UnitDiagonal: true}, {UnitDiagonal: true}} {
			p, err = refOf(t, ops.TriangularSolve(x, y, tt), mustNew64(spd, n, n), mustNew64(bm, n, 3))
			if err != nil {
				t.Fatal(err)
			}
			tri := make([]float64, n*n)
			for i := range n {
				for j := range n {
					if (tt.Upper && j >= i) || (!tt.Upper && j <= i) {
						tri[i*n+j] = spd[i*n+j]
					}
					if i == j && tt.UnitDiagonal {
						tri[i*n+j] = 1
					}
				}
			}
			if tt.Transpose {
				tri = tr(tri, n, n)
			}
			near(t, "op(A)·X "+tt.String(), matmul(tri, p, n, n, 3), bm, 1e-10)
		}
	}
}

func first(a, _ *graph.Node) *graph.Node     { return a }
func first3(a, _, _ *graph.Node) *graph.Node { return a }

// Singular and indefinite matrices: errors naming the op and the matrix
// of the batch, or NumPy's 0 and -Inf.
func TestLinalgReferenceSingular(t *testing.T) {
	g := graph.New()
	x := g.Input("a", tensor.Float64, 2, 2, 2)
	v := g.Input("v", tensor.Float64, 2, 1)
	sing := mustNew64([]float64{1, 0, 0, 1, 1, 2, 2, 4}, 2, 2, 2) // matrix 1 has rank 1
	_, err := refOf(t, ops.Solve(x, v), sing, mustNew64([]float64{1, 1}, 2, 1))
	if !errors.Is(err, opdef.ErrSingular) || !strings.Contains(err.Error(), "Solve") || !strings.Contains(err.Error(), "matrix 1 ") {
		t.Errorf("Solve: %v", err)
	}
	_, err = refOf(t, ops.Inv(x), sing)
	if !errors.Is(err, opdef.ErrSingular) {
		t.Errorf("Inv: %v", err)
	}
	_, err = refOf(t, ops.Cholesky(x), mustNew64([]float64{1, 0, 0, 1, 1, 2, 2, 1}, 2, 2, 2))
	if !errors.Is(err, opdef.ErrNotPositiveDefinite) || !strings.Contains(err.Error(), "order 2") {
		t.Errorf("Cholesky: %v", err)
	}
	got, _ := refOf(t, ops.Det(x), sing)
	near(t, "Det", got, []float64{1, 0}, 0) // by hand
	s, _ := ops.SLogDet(x)
	got, _ = refOf(t, packedOf(s), sing)
	near(t, "SLogDet", got, []float64{1, 0, 0, math.Inf(-1)}, 0) // NumPy: (0, -inf)
}

// Bad shapes and dtypes are build errors naming the op.
func TestLinalgBuildErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(g *graph.Graph) *graph.Node
		want string
	}{
		{"rank", func(g *graph.Graph) *graph.Node { return ops.Cholesky(g.Input("a", tensor.Float32, 3)) }, "at least 2 axes"},
		{"square", func(g *graph.Graph) *graph.Node { return ops.Inv(g.Input("a", tensor.Float32, 2, 3)) }, "square"},
		{"rows", func(g *graph.Graph) *graph.Node {
			return ops.Solve(g.Input("a", tensor.Float32, 3, 3), g.Input("b", tensor.Float32, 2, 1))
		}, "B has 2 rows"},
		{"batch", func(g *graph.Graph) *graph.Node {
			return ops.Solve(g.Input("a", tensor.Float32, 2, 3, 3), g.Input("b", tensor.Float32, 4, 3, 1))
		}, "do not broadcast"},
		{"dtype", func(g *graph.Graph) *graph.Node { return ops.Det(g.Input("a", tensor.Int32, 3, 3)) }, "float"},
		{"mixed", func(g *graph.Graph) *graph.Node {
			return ops.LstSq(g.Input("a", tensor.Float32, 3, 2), g.Input("b", tensor.Float64, 3, 1))
		}, "LstSq"},
	} {
		g := graph.New()
		n := c.f(g)
		if n.Valid() || g.Err() == nil || !strings.Contains(g.Err().Error(), c.want) || !strings.Contains(g.Err().Error(), "linalg_test.go") {
			t.Errorf("%s: %v, want an error with %q and the call site", c.name, g.Err(), c.want)
		}
	}
	// Batch dims broadcast, and a 1-D right-hand side is a vector.
	g := graph.New()
	x := ops.Solve(g.Input("a", tensor.Float32, 2, 1, 3, 3), g.Input("b", tensor.Float32, 5, 3, 2))
	if !x.Shape().Equal(tensor.Shape{2, 5, 3, 2}) {
		t.Errorf("Solve broadcast: %v", x.Type())
	}
	if y := ops.LstSq(g.Input("c", tensor.Float64, 4, 3), g.Input("d", tensor.Float64, 4)); !y.Shape().Equal(tensor.Shape{3}) {
		t.Errorf("LstSq vector: %v", y.Type())
	}
	q, r := ops.QR(g.Input("e", tensor.Float32, 3, 5))
	u, s, vh := ops.SVD(g.Input("f", tensor.Float32, 6, 2, 4))
	w, v := ops.Eigh(g.Input("h", tensor.Float64, 4, 4))
	for i, c := range []struct {
		n    *graph.Node
		want tensor.Shape
	}{{q, tensor.Shape{3, 3}}, {r, tensor.Shape{3, 5}}, {u, tensor.Shape{6, 2, 2}}, {s, tensor.Shape{6, 2}}, {vh, tensor.Shape{6, 2, 4}}, {w, tensor.Shape{4}}, {v, tensor.Shape{4, 4}}} {
		if !c.n.Shape().Equal(c.want) {
			t.Errorf("output %d: %v, want %v", i, c.n.Type(), c.want)
		}
	}
	if g.Err() != nil {
		t.Fatal(g.Err())
	}
}

func mustNew64(v []float64, shape ...int) *tensor.Tensor {
	t, err := tensor.New(v, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// The linear-algebra builders, for TestNilEverywhere's table (added here
// so that the shared table stays as it is).
func init() {
	builders["Cholesky"] = un(ops.Cholesky)
	builders["TriangularSolve"] = bin(func(a, b *graph.Node) *graph.Node { return ops.TriangularSolve(a, b, ops.Triangular{}) })
	builders["Solve"] = bin(ops.Solve)
	builders["Inv"] = un(ops.Inv)
	builders["Det"] = un(ops.Det)
	builders["SLogDet"] = un(func(a *graph.Node) *graph.Node { s, _ := ops.SLogDet(a); return s })
	builders["QR"] = un(func(a *graph.Node) *graph.Node { q, _ := ops.QR(a); return q })
	builders["Eigh"] = un(func(a *graph.Node) *graph.Node { w, _ := ops.Eigh(a); return w })
	builders["SVD"] = un(func(a *graph.Node) *graph.Node { _, s, _ := ops.SVD(a); return s })
	builders["LstSq"] = bin(ops.LstSq)
}

package matconv_test

import (
	"context"
	"math"
	"math/cmplx"
	"testing"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu" // the "cpu" backend
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/interop/matconv"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/mat"
)

// filled returns an r×c Dense of deterministic values in [-1, 1).
func filled(r, c int, seed uint64) *mat.Dense {
	data := make([]float64, r*c)
	x := seed
	for i := range data {
		x = x*6364136223846793005 + 1442695040888963407 // a 64-bit LCG
		data[i] = float64(x>>11)/(1<<53)*2 - 1
	}
	return mat.NewDense(r, c, data)
}

// closeTo reports whether got matches the float64 reference want within
// tol relative to want's largest element.
func closeTo(t *testing.T, name string, got, want mat.Matrix, tol float64) {
	t.Helper()
	gr, gc := got.Dims()
	wr, wc := want.Dims()
	if gr != wr || gc != wc {
		t.Fatalf("%s: %d×%d, want %d×%d", name, gr, gc, wr, wc)
	}
	scale := mat.Norm(want, math.Inf(1)) // the largest row sum bounds every element
	for i := 0; i < wr; i++ {
		for j := 0; j < wc; j++ {
			if d := math.Abs(got.At(i, j) - want.At(i, j)); !(d <= tol*scale) {
				t.Fatalf("%s[%d,%d] = %v, gonum says %v (|diff| %g > %g)", name, i, j, got.At(i, j), want.At(i, j), d, tol*scale)
			}
		}
	}
}

// TestRoundTripMatMul feeds gonum matrices to a loom Program without
// copying them, has RunInto write the results straight into gonum
// matrices, and compares with gonum's own mat.Mul (the float64
// reference).
func TestRoundTripMatMul(t *testing.T) {
	be, err := exec.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for _, sz := range []struct{ m, k, n int }{{3, 4, 2}, {37, 53, 29}, {128, 96, 70}} {
		g := graph.New()
		a := g.Input("a", tensor.Float64, sz.m, sz.k)
		b := g.Input("b", tensor.Float64, sz.k, sz.n)
		ab := ops.MatMul(a, b)
		gram := ops.MatMul(ops.Transpose(a), a) // AᵀA, [k,k]
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		prog, err := exec.Compile(be, []*graph.Node{ab, gram})
		if err != nil {
			t.Fatal(err)
		}

		A, B := filled(sz.m, sz.k, 1), filled(sz.k, sz.n, 2)
		ta, err := matconv.FromDense(A)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := matconv.FromDense(B)
		if err != nil {
			t.Fatal(err)
		}
		// The outputs are gonum matrices; the tensors RunInto writes are
		// their memory.
		AB, G := mat.NewDense(sz.m, sz.n, nil), mat.NewDense(sz.k, sz.k, nil)
		tab, _ := matconv.FromDense(AB)
		tg, _ := matconv.FromDense(G)
		if !matconv.Shares(ta, A) || !matconv.Shares(tab, AB) {
			t.Fatal("FromDense copied")
		}
		feeds := exec.Feeds{a: ta, b: tb}
		if err := prog.RunInto(context.Background(), feeds, []*tensor.Tensor{tab, tg}); err != nil {
			t.Fatal(err)
		}
		var wantAB, wantG mat.Dense
		wantAB.Mul(A, B)
		wantG.Mul(A.T(), A)
		// Both sides sum k products in float64 in different orders: the
		// difference is a few ulps of the largest row sum.
		closeTo(t, "AB", AB, &wantAB, 1e-13)
		closeTo(t, "AᵀA", G, &wantG, 1e-13)

		// A change through gonum reaches the next Run through the same
		// feed tensor: nothing was copied on the way in.
		A.Scale(2, A)
		if err := prog.RunInto(context.Background(), feeds, []*tensor.Tensor{tab, tg}); err != nil {
			t.Fatal(err)
		}
		wantAB.Mul(A, B)
		closeTo(t, "2A·B", AB, &wantAB, 1e-13)

		// Run's own output tensors convert without a copy too, and the
		// Gram matrix converts to a SymDense that gonum factorises.
		outs, err := prog.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		d, err := matconv.ToDense(outs[0])
		if err != nil {
			t.Fatal(err)
		}
		if !matconv.Shares(outs[0], d) {
			t.Fatal("ToDense copied Run's float64 output")
		}
		closeTo(t, "Run's AB", d, &wantAB, 1e-13)
		s, err := matconv.ToSymDenseUpper(outs[1])
		if err != nil {
			t.Fatal(err)
		}
		if sz.m >= sz.k { // AᵀA is positive definite when A has full column rank
			var ch mat.Cholesky
			if !ch.Factorize(s) {
				t.Fatalf("%v: gonum's Cholesky found loom's AᵀA not positive definite", sz)
			}
		}
		prog.Close()
	}
}

// TestRoundTripComplex multiplies gonum CDense matrices in loom and
// compares with a triple loop over complex128 (the reference).
func TestRoundTripComplex(t *testing.T) {
	be, err := exec.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	const m, k, n = 5, 7, 3
	A, B := mat.NewCDense(m, k, nil), mat.NewCDense(k, n, nil)
	re, im := filled(m+k, k+n, 3), filled(m+k, k+n, 4)
	for i := 0; i < m; i++ {
		for j := 0; j < k; j++ {
			A.Set(i, j, complex(re.At(i, j), im.At(i, j)))
		}
	}
	for i := 0; i < k; i++ {
		for j := 0; j < n; j++ {
			B.Set(i, j, complex(re.At(m+i, k+j), im.At(m+i, k+j)))
		}
	}

	g := graph.New()
	a := g.Input("a", tensor.Complex128, m, k)
	b := g.Input("b", tensor.Complex128, k, n)
	prog, err := exec.Compile(be, []*graph.Node{ops.MatMul(a, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	ta, _ := matconv.FromCDense(A)
	tb, _ := matconv.FromCDense(B)
	AB := mat.NewCDense(m, n, nil)
	tab, _ := matconv.FromCDense(AB)
	if !matconv.Shares(ta, A) || !matconv.Shares(tab, AB) {
		t.Fatal("FromCDense copied")
	}
	if err := prog.RunInto(context.Background(), exec.Feeds{a: ta, b: tb}, []*tensor.Tensor{tab}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var want complex128
			for p := 0; p < k; p++ {
				want += A.At(i, p) * B.At(p, j)
			}
			if d := cmplx.Abs(AB.At(i, j) - want); d > 1e-14*k {
				t.Fatalf("AB[%d,%d] = %v, the loop says %v", i, j, AB.At(i, j), want)
			}
		}
	}
}

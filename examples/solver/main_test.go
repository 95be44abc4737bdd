package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// reference evaluates with exectest.Eval (float64; the loops run by the
// ops' reference evaluators), the independent check of the programs.
func reference(outputs []*graph.Node, feeds exec.Feeds) ([]*tensor.Tensor, error) {
	return exectest.Eval(outputs, feeds)
}

// smallConfig: systems of 24 unknowns, 50 anomalies (milliseconds).
func smallConfig() config {
	c := defaultConfig()
	c.n, c.anoms, c.device = 24, 50, "cpu"
	return c
}

// checkResults asserts what the theory of the two methods says, with
// slack for floating point where it has a say (exact values in the
// comments are exectest.Eval's, float64, seed 1, n 24, m 50).
func checkResults(t *testing.T, c config, res *results) {
	t.Helper()
	if len(res.cg) != 5 || len(res.kepler) != 6 {
		t.Fatalf("%d CG and %d Newton results, want 5 and 6", len(res.cg), len(res.kepler))
	}
	for _, r := range res.cg {
		// The recomputed residual may exceed the recurrence's by rounding:
		// 10·tol. Against LU: the error is at most κ times the residual
		// (κ ≤ 10⁵ here), loosely 1e-5.
		if !(r.resid <= 10*c.tol) || !(r.vsLU < 1e-5) {
			t.Errorf("%s: residual %.3g, distance to LU %.3g; want <= %g and < 1e-5", r.name, r.resid, r.vsLU, 10*c.tol)
		}
	}
	// k distinct eigenvalues: k iterations (Eval: 3, residual 2.9e-15).
	if it := res.cg[0].iters; it != 3 {
		t.Errorf("%s: %d iterations, want 3", res.cg[0].name, it)
	}
	// The iterations grow with the condition number (Eval: 24, 40, 69).
	if a, b, d := res.cg[1].iters, res.cg[2].iters, res.cg[3].iters; !(a < b && b < d) {
		t.Errorf("iterations for κ = 10, 10³, 10⁵: %d, %d, %d; want increasing", a, b, d)
	}
	// The Laplacian has n distinct eigenvalues: n iterations (Eval: 24);
	// ±2 for rounding on a backend.
	if it := res.cg[4].iters; it < c.n-2 || it > c.n+2 {
		t.Errorf("%s: %d iterations, want n = %d ± 2", res.cg[4].name, it, c.n)
	}
	// Newton: e = 0 is solved by the start E = M, so no iteration runs;
	// every solve converges, and quadratically: at most 5 iterations up
	// to e = 0.5 (Eval: 0, 2, 3, 4 for e = 0, 0.01, 0.1, 0.5; 7 for 0.9
	// and 0.99).
	for i, r := range res.kepler {
		if !(r.resid <= c.ntol) {
			t.Errorf("Kepler e = %g: max |f| %.3g after %d iterations, want <= %g", r.e, r.resid, r.iters, c.ntol)
		}
		if r.e <= 0.5 && r.iters > 5 {
			t.Errorf("Kepler e = %g: %d iterations, want <= 5", r.e, r.iters)
		}
		if i > 0 && r.e <= 0.5 && r.iters < res.kepler[i-1].iters {
			t.Errorf("Kepler: e = %g took %d iterations, fewer than e = %g's %d", r.e, r.iters, res.kepler[i-1].e, res.kepler[i-1].iters)
		}
	}
	if k := res.kepler[0]; k.iters != 0 || k.resid != 0 {
		t.Errorf("Kepler e = 0: %d iterations, max |f| %g; want 0 and 0", k.iters, k.resid)
	}
	if k := res.kepler[4]; k.iters <= res.kepler[1].iters {
		t.Errorf("Kepler: e = 0.9 took %d iterations, e = 0.01 %d; want more for the larger eccentricity", k.iters, res.kepler[1].iters)
	}
}

// TestReference runs both solvers on exectest.Eval.
func TestReference(t *testing.T) {
	c := smallConfig()
	var out bytes.Buffer
	res, err := solveAll(&out, c, reference)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	checkResults(t, c, res)
}

// TestMaxIter: the bound stops a loop whose condition still holds: CG
// with maxiter 2 on the 3-eigenvalue system stops after 2 iterations
// with a residual well above the tolerance.
func TestMaxIter(t *testing.T) {
	c := smallConfig()
	c.maxIter = 2
	res, err := solveAll(io.Discard, c, reference)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.cg[0]; r.iters != 2 || !(r.resid > 1e-3) {
		t.Errorf("maxiter 2: %d iterations, residual %.3g; want 2 and > 1e-3", r.iters, r.resid)
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags([]string{"-n", "50", "-tol", "1e-6", "-m", "7", "-maxiter", "9"}, io.Discard)
	if err != nil || c.n != 50 || c.tol != 1e-6 || c.anoms != 7 || c.maxIter != 9 {
		t.Fatalf("flags: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-n", "2"}, {"-tol", "0"}, {"-m", "0"}, {"-maxiter", "-1"}, {"x"}} {
		if _, err := parseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := parseFlags([]string{"-ntol", "-1"}, io.Discard); err == nil || !strings.Contains(err.Error(), "ntol") {
		t.Errorf("-ntol -1: %v", err)
	}
}

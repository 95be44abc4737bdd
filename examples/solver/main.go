// Command solver runs two iterative solvers whose loops are in the
// graph, as ops.While: how many iterations each solve takes is decided
// at run time by the data, not when the program is built.
//
// The conjugate-gradient method solves symmetric positive definite
// systems a·x = b of one size with one compiled program, stopping when
// the residual is small enough; on a matrix with k distinct eigenvalues
// it stops after k iterations (exact arithmetic would need exactly k),
// on the 1-D Laplacian (n distinct eigenvalues) after n, on matrices
// with eigenvalues spread from 1 to κ after a number that grows with √κ
// (in floating point the search directions lose their conjugacy, so an
// ill-conditioned system may take more than n). Each solution is
// checked against the direct solve (ops.Solve, LU).
//
// Newton's method solves Kepler's equation E - e·sin E = M for many mean
// anomalies M at once; the derivative comes from autodiff inside the
// loop's body. Small eccentricities need few iterations, e = 0 none.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

type config struct {
	n       int     // the systems' size
	tol     float64 // CG: stop at ‖r‖ <= tol·‖b‖
	anoms   int     // Kepler: mean anomalies per solve
	ntol    float64 // Kepler: stop at max |f(E)| <= ntol
	seed    uint64
	device  string
	maxIter int // the loops' bound (0: 10n for CG, 50 for Newton)
}

func defaultConfig() config {
	return config{n: 128, tol: 1e-10, anoms: 1000, ntol: 1e-12, seed: 1}
}

func main() {
	report.Main("solver", parseFlags, func(w io.Writer, c config, _ bool) error {
		_, err := run(w, c)
		return err
	})
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := defaultConfig()
	fs := flag.NewFlagSet("solver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.n, "n", c.n, "size of the linear systems")
	fs.Float64Var(&c.tol, "tol", c.tol, "conjugate gradient: relative residual to reach")
	fs.IntVar(&c.anoms, "m", c.anoms, "Kepler's equation: mean anomalies solved at once")
	fs.Float64Var(&c.ntol, "ntol", c.ntol, "Kepler's equation: max |E - e sin E - M| to reach")
	fs.IntVar(&c.maxIter, "maxiter", 0, "bound on the iterations (0: 10n for CG, 50 for Newton)")
	fs.Uint64Var(&c.seed, "seed", c.seed, "random seed (matrices, right-hand sides, anomalies)")
	fs.StringVar(&c.device, "device", "", device.Usage)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return c, c.check()
}

func (c config) check() error {
	if c.n < 3 || c.anoms < 1 || c.maxIter < 0 || !(c.tol > 0) || !(c.ntol > 0) {
		return fmt.Errorf("bad settings: n %d (want >= 3), m %d, maxiter %d, tol %v, ntol %v", c.n, c.anoms, c.maxIter, c.tol, c.ntol)
	}
	return nil
}

// evaluator computes outputs from feeds: a compiled program's Run, or
// exectest.Eval (the float64 reference) in the tests.
type evaluator func(outputs []*graph.Node, feeds exec.Feeds) ([]*tensor.Tensor, error)

// compiled returns an evaluator that compiles each distinct output list
// once for be and runs it.
func compiled(be exec.Backend) (evaluator, func()) {
	progs := map[*graph.Node]*exec.Program{}
	eval := func(outputs []*graph.Node, feeds exec.Feeds) ([]*tensor.Tensor, error) {
		p := progs[outputs[0]]
		if p == nil {
			var err error
			if p, err = exec.Compile(be, outputs); err != nil {
				return nil, err
			}
			progs[outputs[0]] = p
		}
		return p.Run(context.Background(), feeds)
	}
	closeAll := func() {
		for _, p := range progs {
			p.Close()
		}
	}
	return eval, closeAll
}

// cgResult is one conjugate-gradient solve.
type cgResult struct {
	name   string
	iters  int
	resid  float64 // ‖b - a·x‖/‖b‖
	vsLU   float64 // max |x - x_LU| / max |x_LU|
	cond   float64 // the matrix's condition number (known by construction)
	expect string  // what theory says about the iterations
}

// keplerResult is one Newton solve of Kepler's equation.
type keplerResult struct {
	e     float64
	iters int
	resid float64 // max |E - e sin E - M|
}

type results struct {
	cg     []cgResult
	kepler []keplerResult
}

func run(w io.Writer, c config) (*results, error) {
	be, err := device.Open(c.device)
	if err != nil {
		return nil, err
	}
	eval, closeAll := compiled(be)
	defer closeAll()
	fmt.Fprintf(w, "on %s\n", be.Device())
	return solveAll(w, c, eval)
}

// solveAll builds both solvers once and runs them on every problem.
func solveAll(w io.Writer, c config, eval evaluator) (*results, error) {
	res := &results{}
	n := c.n
	maxCG, maxNewton := 10*n, 50
	if c.maxIter > 0 {
		maxCG, maxNewton = c.maxIter, c.maxIter
	}
	g := graph.New()
	a := g.Input("a", tensor.Float64, n, n)
	b := g.Input("b", tensor.Float64, n)
	tol := g.Input("tol", tensor.Float64)
	x, iters, resid := conjugateGradient(a, b, tol, maxCG)
	xLU := ops.Solve(a, b)
	errLU := ops.Div(ops.Max(ops.Abs(ops.Sub(x, xLU))), ops.Max(ops.Abs(xLU)))
	cgOut := []*graph.Node{iters, resid, errLU}

	fmt.Fprintf(w, "conjugate gradient (ops.While), n = %d, stop at ‖r‖ <= %g‖b‖ or %d iterations; one compiled program for every system\n", n, c.tol, maxCG)
	fmt.Fprintf(w, "  %-34s %10s %11s %10s %11s  %s\n", "system", "cond", "iterations", "residual", "vs LU", "iterations in theory")
	r := rand.New(rand.NewPCG(c.seed, 0xc9))
	for _, p := range problems(n, c.tol, r) {
		out, err := eval(cgOut, exec.Feeds{a: p.a, b: p.b, tol: scalar(c.tol)})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		cr := cgResult{name: p.name, iters: int(intOf(out[0])), resid: floatOf(out[1]), vsLU: floatOf(out[2]), cond: p.cond, expect: p.expect}
		res.cg = append(res.cg, cr)
		fmt.Fprintf(w, "  %-34s %10.3g %11d %10.2e %11.2e  %s\n", cr.name, cr.cond, cr.iters, cr.resid, cr.vsLU, cr.expect)
	}

	// Kepler's equation for c.anoms mean anomalies in [0, 2π) at a time,
	// all of one eccentricity per solve.
	m := g.Input("M", tensor.Float64, c.anoms)
	e := g.Input("e", tensor.Float64, c.anoms)
	ntol := g.Input("ntol", tensor.Float64)
	E, kIters, kResid := kepler(m, e, ntol, maxNewton)
	kOut := []*graph.Node{kIters, kResid, E}
	ms := make([]float64, c.anoms)
	for i := range ms {
		ms[i] = 2 * math.Pi * r.Float64()
	}
	mt := vec(ms)
	fmt.Fprintf(w, "Newton's method (ops.While, f' by autodiff in the body) on Kepler's equation E - e·sin E = M, %d mean anomalies at once, stop at max |f| <= %g\n", c.anoms, c.ntol)
	fmt.Fprintf(w, "  %6s %11s %10s\n", "e", "iterations", "max |f|")
	for _, ecc := range []float64{0, 0.01, 0.1, 0.5, 0.9, 0.99} {
		es := make([]float64, c.anoms)
		for i := range es {
			es[i] = ecc
		}
		out, err := eval(kOut, exec.Feeds{m: mt, e: vec(es), ntol: scalar(c.ntol)})
		if err != nil {
			return nil, fmt.Errorf("Kepler, e = %g: %w", ecc, err)
		}
		kr := keplerResult{e: ecc, iters: int(intOf(out[0])), resid: floatOf(out[1])}
		res.kepler = append(res.kepler, kr)
		fmt.Fprintf(w, "  %6g %11d %10.2e\n", kr.e, kr.iters, kr.resid)
	}
	return res, nil
}

// problem is one linear system.
type problem struct {
	name   string
	a, b   *tensor.Tensor
	cond   float64
	expect string
}

// problems returns the systems: a·x = b with a = Q·diag(λ)·Qᵀ for a
// random orthogonal Q and chosen eigenvalues λ (three distinct values;
// log-spaced from 1 to κ for κ = 10, 10³, 10⁵), and the 1-D Laplacian
// tridiag(-1, 2, -1); b random normal. Each comes with its condition
// number and what theory says about CG's iterations for it.
func problems(n int, tol float64, r *rand.Rand) []problem {
	q := orthogonal(n, r)
	rhs := func() *tensor.Tensor {
		b := make([]float64, n)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		return vec(b)
	}
	var ps []problem
	three := make([]float64, n)
	for i := range three {
		three[i] = []float64{1, 2, 5}[i%3]
	}
	ps = append(ps, problem{"3 distinct eigenvalues", spectral(q, three), rhs(), 5, "3 (exact arithmetic)"})
	for _, kappa := range []float64{10, 1e3, 1e5} {
		lam := make([]float64, n)
		for i := range lam {
			lam[i] = math.Pow(kappa, float64(i)/float64(n-1))
		}
		// The classical bound: the error's a-norm falls by at least
		// 2((√κ-1)/(√κ+1))^k after k iterations, so k ≈ √κ/2·ln(2/tol).
		bound := math.Ceil(0.5 * math.Sqrt(kappa) * math.Log(2/tol))
		ps = append(ps, problem{fmt.Sprintf("eigenvalues log-spaced 1..%g", kappa), spectral(q, lam), rhs(), kappa,
			fmt.Sprintf("√κ bound %g", bound)})
	}
	lap := make([]float64, n*n)
	for i := 0; i < n; i++ {
		lap[i*n+i] = 2
		if i > 0 {
			lap[i*n+i-1] = -1
		}
		if i+1 < n {
			lap[i*n+i+1] = -1
		}
	}
	// The Laplacian's eigenvalues are 2 - 2cos(kπ/(n+1)), k = 1..n.
	lmin, lmax := 2-2*math.Cos(math.Pi/float64(n+1)), 2-2*math.Cos(float64(n)*math.Pi/float64(n+1))
	ps = append(ps, problem{"1-D Laplacian tridiag(-1,2,-1)", mat(lap, n), rhs(), lmax / lmin, fmt.Sprintf("n = %d (exact arithmetic)", n)})
	return ps
}

// orthogonal returns a random n×n orthogonal matrix (row-major): modified
// Gram-Schmidt on normal vectors.
func orthogonal(n int, r *rand.Rand) []float64 {
	q := make([]float64, n*n)
	for i := range q {
		q[i] = r.NormFloat64()
	}
	for i := 0; i < n; i++ {
		row := q[i*n : (i+1)*n]
		for j := 0; j < i; j++ {
			prev := q[j*n : (j+1)*n]
			var d float64
			for k := range row {
				d += row[k] * prev[k]
			}
			for k := range row {
				row[k] -= d * prev[k]
			}
		}
		var s float64
		for _, v := range row {
			s += v * v
		}
		s = math.Sqrt(s)
		for k := range row {
			row[k] /= s
		}
	}
	return q
}

// spectral returns Qᵀ·diag(lam)·Q for the orthogonal q (rows q_k): the
// symmetric matrix with eigenvalues lam and eigenvectors q's rows.
func spectral(q, lam []float64) *tensor.Tensor {
	n := len(lam)
	a := make([]float64, n*n)
	for k, l := range lam {
		qk := q[k*n : (k+1)*n]
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				a[i*n+j] += l * qk[i] * qk[j]
			}
		}
	}
	return mat(a, n)
}

func mat(a []float64, n int) *tensor.Tensor {
	t, err := tensor.New(a, n, n)
	if err != nil {
		panic(err) // the sizes are ours
	}
	return t
}

func vec(v []float64) *tensor.Tensor {
	t, err := tensor.New(v, len(v))
	if err != nil {
		panic(err)
	}
	return t
}

func scalar(v float64) *tensor.Tensor { return tensor.Scalar(v) }

func floatOf(t *tensor.Tensor) float64 {
	v, _ := tensor.Values[float64](t)
	return v[0]
}

func intOf(t *tensor.Tensor) int32 {
	v, _ := tensor.Values[int32](t)
	return v[0]
}

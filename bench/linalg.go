package bench

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/blas"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// The linear-algebra workloads of issue 16: Cholesky and Solve of an n×n
// float64 matrix in loom (one thread) against NumPy on OpenBLAS's LAPACK
// (linalg_numpy.py, the twin, with OPENBLAS_NUM_THREADS=1), timed in
// alternating rounds by cmd/linalg.

// LinalgMatrix is the workloads' n×n symmetric positive-definite matrix,
// in closed form so that the Python twin builds the same one:
// M[i,j] = sin(0.37·i + 1.3·j + 0.1·i·j mod 7), A = M·Mᵀ/n + I, and the
// right-hand side b[i] = cos(0.5·i).
func LinalgMatrix(n int) (a, b []float64) {
	m := make([]float64, n*n)
	for i := range n {
		for j := range n {
			m[i*n+j] = math.Sin(0.37*float64(i) + 1.3*float64(j) + 0.1*float64((i*j)%7))
		}
	}
	a = make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			s := 0.0
			for k := range n {
				s += m[i*n+k] * m[j*n+k]
			}
			s /= float64(n)
			if i == j {
				s++
			}
			a[i*n+j], a[j*n+i] = s, s
		}
	}
	b = make([]float64, n)
	for i := range b {
		b[i] = math.Cos(0.5 * float64(i))
	}
	return a, b
}

// LinalgLoom is one compiled loom workload ("cholesky" or "solve").
type LinalgLoom struct {
	prog  *exec.Program
	feeds exec.Feeds
	out   []*tensor.Tensor
	be    exec.Backend
}

// NewLinalgLoom compiles workload op at size n on a one-thread CPU
// backend.
func NewLinalgLoom(op string, n int) (*LinalgLoom, error) {
	be, err := cpu.New(cpu.Threads(1))
	if err != nil {
		return nil, err
	}
	g := graph.New()
	x := g.Input("a", tensor.Float64, n, n)
	av, bv := LinalgMatrix(n)
	at, _ := tensor.New(av, n, n)
	feeds := exec.Feeds{x: at}
	var y *graph.Node
	switch op {
	case "cholesky":
		y = ops.Cholesky(x)
	case "solve":
		b := g.Input("b", tensor.Float64, n)
		feeds[b], _ = tensor.New(bv, n)
		y = ops.Solve(x, b)
	default:
		return nil, fmt.Errorf("unknown linalg workload %q", op)
	}
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		return nil, err
	}
	return &LinalgLoom{prog: p, feeds: feeds, out: []*tensor.Tensor{tensor.Zeros(y.DType(), y.Shape()...)}, be: be}, nil
}

// Time runs the workload reps times and returns the mean time of one.
func (l *LinalgLoom) Time(reps int) (time.Duration, error) {
	start := time.Now()
	for range reps {
		if err := l.prog.RunInto(context.Background(), l.feeds, l.out); err != nil {
			return 0, err
		}
	}
	return time.Since(start) / time.Duration(reps), nil
}

// Checksum is the sum of the last result's elements (the twin prints
// NumPy's).
func (l *LinalgLoom) Checksum() float64 {
	s := 0.0
	for i := range l.out[0].Shape().Size() {
		s += l.out[0].Float64(i)
	}
	return s
}

// Close releases the program and the backend.
func (l *LinalgLoom) Close() {
	l.prog.Close()
	l.be.Close()
}

// GonumLinalg times gonum's pure-Go LAPACK on the same workload (Dpotrf;
// Dgetrf and Dgetrs), the alternative the CPU kernels were measured
// against: it returns the mean time of one call over reps.
func GonumLinalg(op string, n, reps int) time.Duration {
	av, bv := LinalgMatrix(n)
	w := make([]float64, n*n)
	x := make([]float64, n)
	ipiv := make([]int, n)
	var impl lapackgonum.Implementation
	start := time.Now()
	for range reps {
		copy(w, av)
		if op == "cholesky" {
			impl.Dpotrf(blas.Lower, n, w, n)
			continue
		}
		copy(x, bv)
		impl.Dgetrf(n, n, w, n, ipiv)
		impl.Dgetrs(blas.NoTrans, n, 1, w, n, ipiv, x, 1)
	}
	return time.Since(start) / time.Duration(reps)
}

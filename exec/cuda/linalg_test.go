//go:build linux

package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// spdTensor is a symmetric positive-definite batch: X·Xᵀ + n·I of a random
// X, computed here in float64.
func spdTensor(dt tensor.DType, batch, n int, seed uint64) *tensor.Tensor {
	x := exectest.Rand(tensor.Float64, tensor.Shape{batch, n, n}, -1, 1, seed)
	v := make([]float64, batch*n*n)
	for b := range batch {
		for i := range n {
			for j := range n {
				s := 0.0
				for k := range n {
					s += x.Float64(b*n*n+i*n+k) * x.Float64(b*n*n+j*n+k)
				}
				if i == j {
					s += float64(n)
				}
				v[b*n*n+i*n+j] = s
			}
		}
	}
	return exectest.Tensor(dt, v, batch, n, n)
}

func refCases() []refCase {
	in := func(g *graph.Graph, t *tensor.Tensor) (*graph.Node, exec.Feeds) {
		x := g.Input(fmt.Sprintf("x%d", g.Len()), t.DType(), t.Shape()...)
		return x, exec.Feeds{x: t}
	}
	rnd := func(dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
		return exectest.Rand(dt, tensor.Shape(shape), -1, 1, seed)
	}
	unary := func(name string, op graph.Op, mk func(dt tensor.DType) *tensor.Tensor) refCase {
		return refCase{name, func(g *graph.Graph, dt tensor.DType) (*graph.Node, exec.Feeds) {
			x, f := in(g, mk(dt))
			return ops.Apply(op, nil, x), f
		}}
	}
	binary := func(name string, op graph.Op, attr graph.Attr, a, b func(dt tensor.DType) *tensor.Tensor) refCase {
		return refCase{name, func(g *graph.Graph, dt tensor.DType) (*graph.Node, exec.Feeds) {
			x, f := in(g, a(dt))
			y, f2 := in(g, b(dt))
			for k, v := range f2 {
				f[k] = v
			}
			return ops.Apply(op, attr, x, y), f
		}}
	}
	// A well-conditioned square batch: random plus 3·I.
	wellCond := func(seed uint64, batch, n int) func(dt tensor.DType) *tensor.Tensor {
		return func(dt tensor.DType) *tensor.Tensor {
			t := rnd(tensor.Float64, seed, batch, n, n)
			v := make([]float64, batch*n*n)
			for i := range v {
				v[i] = t.Float64(i)
				if (i%(n*n))/n == i%n {
					v[i] += 3
				}
			}
			return exectest.Tensor(dt, v, batch, n, n)
		}
	}
	r := func(seed uint64, shape ...int) func(dt tensor.DType) *tensor.Tensor {
		return func(dt tensor.DType) *tensor.Tensor { return rnd(dt, seed, shape...) }
	}
	cs := []refCase{
		// Batches of small matrices take the batched factorisations, the
		// others a call per matrix.
		unary("Cholesky 3x5x5", ops.OpCholesky, func(dt tensor.DType) *tensor.Tensor { return spdTensor(dt, 3, 5, 1) }),
		unary("Cholesky 2x34x34", ops.OpCholesky, func(dt tensor.DType) *tensor.Tensor { return spdTensor(dt, 2, 34, 21) }),
		unary("Inv 2x4x4", ops.OpInv, wellCond(2, 2, 4)),
		unary("Inv 1x6x6", ops.OpInv, wellCond(22, 1, 6)),
		unary("Det 2x33x33", ops.OpDet, wellCond(23, 2, 33)),
		binary("Solve one", ops.OpSolve, nil, wellCond(24, 1, 5), r(25, 1, 5, 3)),
		unary("Det 3x4x4", ops.OpDet, r(3, 3, 4, 4)),
		unary("SLogDet 3x4x4", ops.OpSLogDet, r(4, 3, 4, 4)),
		unary("QR tall 2x5x3", ops.OpQR, r(5, 2, 5, 3)),
		unary("QR wide 3x5", ops.OpQR, r(6, 3, 5)),
		unary("Eigh 2x5x5", ops.OpEigh, r(7, 2, 5, 5)),
		unary("SVD tall 2x5x3", ops.OpSVD, r(8, 2, 5, 3)),
		unary("SVD wide 3x6", ops.OpSVD, r(9, 3, 6)),
		// Batches of small matrices take the batched Jacobi solvers
		// (above), single ones the others.
		unary("Eigh 4x4", ops.OpEigh, r(26, 4, 4)),
		unary("SVD tall 4x3", ops.OpSVD, r(27, 4, 3)),
		unary("SVD wide 2x3x5", ops.OpSVD, r(28, 2, 3, 5)),
		binary("LstSq one", ops.OpLstSq, nil, r(29, 6, 3), r(30, 6, 2)),
		binary("Solve broadcast", ops.OpSolve, nil, wellCond(10, 2, 4), r(11, 3, 1, 4, 2)),
		binary("LstSq tall", ops.OpLstSq, nil, r(12, 2, 6, 3), r(13, 2, 6, 2)),
		binary("LstSq wide broadcast", ops.OpLstSq, nil, r(14, 3, 5), r(15, 2, 3, 2)),
		// Empty matrices and batches.
		unary("Det 2x0x0", ops.OpDet, r(18, 2, 0, 0)),
		unary("SLogDet 0x3x3", ops.OpSLogDet, r(18, 0, 3, 3)),
		unary("QR 2x0x3", ops.OpQR, r(19, 2, 0, 3)),
		unary("SVD 3x0", ops.OpSVD, r(19, 3, 0)),
		binary("Solve 3x3 by 3x0", ops.OpSolve, nil, wellCond(20, 1, 3), r(20, 3, 0)),
	}
	for _, tri := range []opdef.TriangularAttr{{}, {Upper: true}, {Transpose: true}, {Upper: true, Transpose: true, UnitDiagonal: true}} {
		cs = append(cs, binary("TriangularSolve "+tri.String(), ops.OpTriangularSolve, tri, wellCond(16, 2, 4), r(17, 2, 4, 3)))
	}
	return cs
}

// TestLinalgMatchesReference runs each linear-algebra op on the device
// (the emulator's cuSOLVER without a GPU) and compares it with the
// float64 references of the declarations.
func TestLinalgMatchesReference(t *testing.T) {
	b := open(t)
	defer b.Close()
	checkAgainstReference(t, b, tensor.Float64, 1e-9, refCases())
	checkAgainstReference(t, b, tensor.Float32, 2e-4, refCases())
}

// TestLinalgErrors: a matrix that is not positive definite (Cholesky) or
// singular (Solve, Inv, TriangularSolve) is a run error naming the op, the
// matrix of the batch and the call site.
func TestLinalgErrors(t *testing.T) {
	b := open(t)
	defer b.Close()
	// Batches of two n×n matrices, the second bad: its leading 2×2 block
	// is [[1 2] [2 1]] (a leading minor of order 2 of 1 - 4 = -3, by
	// hand), [[1 2] [2 4]] (singular: a zero pivot at column 1, by hand)
	// or has a zero at diagonal position 1; the rest is the identity. n =
	// 2 takes the batched factorisations, n = 34 a call per matrix.
	for _, n := range []int{2, 34} {
		batch := func(block [4]float64) *tensor.Tensor {
			v := make([]float64, 2*n*n)
			for i := range n {
				v[i*n+i] = 2
				v[n*n+i*n+i] = 1
			}
			v[n*n], v[n*n+1], v[n*n+n], v[n*n+n+1] = block[0], block[1], block[2], block[3]
			return exectest.Tensor(tensor.Float64, v, 2, n, n)
		}
		rhs := exectest.Rand(tensor.Float64, tensor.Shape{2, n, 1}, -1, 1, 3)
		for _, c := range []struct {
			name   string
			a      *tensor.Tensor
			build  func(a, r *graph.Node) *graph.Node
			target error
		}{
			{"Cholesky", batch([4]float64{1, 2, 2, 1}), func(a, _ *graph.Node) *graph.Node { return ops.Cholesky(a) }, exec.ErrNotPositiveDefinite},
			{"Solve", batch([4]float64{1, 2, 2, 4}), func(a, r *graph.Node) *graph.Node { return ops.Solve(a, r) }, exec.ErrSingular},
			{"Inv", batch([4]float64{1, 2, 2, 4}), func(a, _ *graph.Node) *graph.Node { return ops.Inv(a) }, exec.ErrSingular},
			{"TriangularSolve", batch([4]float64{1, 0, 5, 0}), func(a, r *graph.Node) *graph.Node { return ops.TriangularSolve(a, r, ops.Triangular{}) }, exec.ErrSingular},
		} {
			t.Run(fmt.Sprintf("%s n=%d", c.name, n), func(t *testing.T) {
				g := graph.New()
				a := g.Input("a", tensor.Float64, 2, n, n)
				r := g.Input("r", tensor.Float64, 2, n, 1)
				out := c.build(a, r)
				p, err := exec.Compile(b, []*graph.Node{out}, exec.IgnoreUnusedFeeds())
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				_, err = p.Run(context.Background(), exec.Feeds{a: c.a, r: rhs})
				if !errors.Is(err, c.target) {
					t.Fatalf("error %v, want %v", err, c.target)
				}
				msg := err.Error()
				if !strings.Contains(msg, c.name) || !strings.Contains(msg, "matrix 1 of the batch") || !strings.Contains(msg, "linalg_test.go") {
					t.Errorf("error %q does not name the op, the matrix and the call site", msg)
				}
				// A good input runs afterwards.
				if _, err := p.Run(context.Background(), exec.Feeds{a: batch([4]float64{3, 1, 1, 3}), r: rhs}); err != nil {
					t.Errorf("a good input after a bad one: %v", err)
				}
			})
		}
	}
}

// TestLinalgNonFinite: Eigh (its lower triangle), SVD and LstSq fail the
// run on NaN or Inf, with the words of the CPU backend; NaN above Eigh's
// diagonal is not read.
func TestLinalgNonFinite(t *testing.T) {
	b := open(t)
	defer b.Close()
	nan := math.NaN()
	for _, c := range []struct {
		name  string
		a     []float64 // two 2×2 matrices
		build func(a, r *graph.Node) *graph.Node
		fails bool
	}{
		{"Eigh", []float64{1, 0, 0, 1, 1, 0, nan, 1}, func(a, _ *graph.Node) *graph.Node { return ops.Apply(ops.OpEigh, nil, a) }, true},
		{"Eigh", []float64{1, 0, 0, 1, 1, nan, 0, 1}, func(a, _ *graph.Node) *graph.Node { return ops.Apply(ops.OpEigh, nil, a) }, false},
		{"SVD", []float64{1, 0, 0, 1, 1, math.Inf(1), 0, 1}, func(a, _ *graph.Node) *graph.Node { return ops.Apply(ops.OpSVD, nil, a) }, true},
		{"LstSq", []float64{1, 0, 0, 1, nan, 0, 0, 1}, func(a, r *graph.Node) *graph.Node { return ops.LstSq(a, r) }, true},
	} {
		g := graph.New()
		a := g.Input("a", tensor.Float64, 2, 2, 2)
		r := g.Input("r", tensor.Float64, 2, 2, 1)
		p, err := exec.Compile(b, []*graph.Node{c.build(a, r)}, exec.IgnoreUnusedFeeds())
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.Run(context.Background(), exec.Feeds{a: exectest.Tensor(tensor.Float64, c.a, 2, 2, 2), r: exectest.Tensor(tensor.Float64, []float64{1, 2, 3, 4}, 2, 2, 1)})
		p.Close()
		switch {
		case !c.fails && err != nil:
			t.Errorf("%s %v: %v", c.name, c.a, err)
		case c.fails && (err == nil || !strings.Contains(err.Error(), c.name+": the iteration did not converge for matrix 1 of the batch") || !strings.Contains(err.Error(), "linalg_test.go")):
			t.Errorf("%s %v: error %v, want one naming the op, matrix 1 and the call site", c.name, c.a, err)
		}
	}
}

// TestNVRTCCompilesLinalgKernels compiles the generated helper kernels of
// every case of refCases with a real NVRTC (no GPU needed): the
// emulator's host compiler accepts more than CUDA C.
func TestNVRTCCompilesLinalgKernels(t *testing.T) {
	n := realNVRTC(t)
	funcs := map[string]string{}
	for _, c := range refCases() {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
			g := graph.New()
			out, _ := c.build(g, dt)
			s, err := newLinalgStep(&Backend{}, out)
			if err != nil {
				t.Fatalf("%s %v: %v", c.name, dt, err)
			}
			for _, f := range s.funcs() {
				funcs[f.Name] = f.Source
			}
		}
	}
	var src strings.Builder
	src.WriteString(cudagen.Prelude())
	for _, f := range funcs {
		src.WriteString("\n" + f)
	}
	res, err := n.Compile(src.String(), "loom_linalg.cu", nvrtcOptions(checkArch(n)))
	if err != nil {
		t.Fatalf("NVRTC rejects the linear-algebra kernels: %v", err)
	}
	for name := range funcs {
		if !strings.Contains(string(res.PTX), ".entry "+name) {
			t.Errorf("PTX lacks the entry %s", name)
		}
	}
	if strings.Contains(res.Log, "warning") {
		t.Errorf("NVRTC warns:\n%s", res.Log)
	}
	t.Logf("%d kernels compile", len(funcs))
}

// TestLinalgRunAllocations: a program of cuSOLVER and cuBLAS steps (an
// LU solve, a Cholesky factor, an SVD and a triangular solve) allocates
// nothing on the Go heap per run: the plans and workspaces are made at
// setup, the calls go through purego.SyscallN.
func TestLinalgRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := open(t)
	defer b.Close()
	g := graph.New()
	a := g.Input("a", tensor.Float64, 2, 4, 4)
	r := g.Input("r", tensor.Float64, 2, 4, 3)
	outs := []*graph.Node{ops.Solve(a, r), ops.Cholesky(a), ops.Apply(ops.OpSVD, nil, r), ops.TriangularSolve(a, r, ops.Triangular{Upper: true})}
	p, err := exec.Compile(b, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{a: spdTensor(tensor.Float64, 2, 4, 5), r: exectest.Rand(tensor.Float64, tensor.Shape{2, 4, 3}, -1, 1, 6)}
	res := make([]*tensor.Tensor, len(outs))
	for i, o := range outs {
		res[i] = tensor.Zeros(o.DType(), o.Shape()...)
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(10, func() {
		if err := p.RunInto(ctx, feeds, res); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per run", allocs)
	}
}

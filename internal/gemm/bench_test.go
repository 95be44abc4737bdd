package gemm

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

type benchShape struct {
	name           string
	transA, transB bool
	m, n, k        int
}

// The MLP 784-256-10 at batch 64: forward products and the backward ones
// with transposes (dW1 = Xᵀ·dH, dW2 = Hᵀ·dY, dH = dY·W2ᵀ).
var mlpShapes = []benchShape{
	{"fwd1_64x784x256", false, false, 64, 256, 784},
	{"fwd2_64x256x10", false, false, 64, 10, 256},
	{"dW1_TN_784x64x256", true, false, 784, 256, 64},
	{"dW2_TN_256x64x10", true, false, 256, 10, 64},
	{"dH_NT_64x10x256", false, true, 64, 256, 10},
}

// Matrix-vector shapes (batch-1 inference, a column vector).
var vecShapes = []benchShape{
	{"vec_1x784x256", false, false, 1, 256, 784},
	{"vec_256x784x1", false, false, 256, 1, 784},
}

func benchShapes() []benchShape {
	var s []benchShape
	for _, n := range []int{64, 256, 512, 1024, 2048} {
		s = append(s, benchShape{fmt.Sprint("n=", n), false, false, n, n, n})
	}
	s = append(s, mlpShapes...)
	return append(s, vecShapes...)
}

func randSlice[T float](n int) []T {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	s := make([]T, n)
	for i := range s {
		s[i] = T(rng.Float64()*2 - 1)
	}
	return s
}

func operands[T float](sh benchShape) (a []T, lda int, b []T, ldb int, c []T, ldc int) {
	lda, ldb = sh.k, sh.n
	if sh.transA {
		lda = sh.m
	}
	if sh.transB {
		ldb = sh.k
	}
	return randSlice[T](sh.m * sh.k), lda, randSlice[T](sh.k * sh.n), ldb, randSlice[T](sh.m * sh.n), sh.n
}

func gflops(b *testing.B, sh benchShape) {
	b.ReportMetric(2*float64(sh.m)*float64(sh.n)*float64(sh.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSgemm: one thread, through a Plan and a workspace made once (as
// the executor does).
func BenchmarkSgemm(b *testing.B) {
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			a, lda, bb, ldb, c, ldc := operands[float32](sh)
			p := NewPlan32(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1)
			ws := make([]float32, p.WorkspaceFloats())
			for b.Loop() {
				for t := 0; t < p.Tasks(); t++ {
					p.Run(t, 1, a, lda, bb, ldb, 0, c, ldc, ws)
				}
			}
			gflops(b, sh)
		})
	}
}

func BenchmarkDgemm(b *testing.B) {
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			a, lda, bb, ldb, c, ldc := operands[float64](sh)
			p := NewPlan64(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1)
			ws := make([]float64, p.WorkspaceFloats())
			for b.Loop() {
				for t := 0; t < p.Tasks(); t++ {
					p.Run(t, 1, a, lda, bb, ldb, 0, c, ldc, ws)
				}
			}
			gflops(b, sh)
		})
	}
}

// BenchmarkSgemmThreads2: two goroutines (the machine has two cores).
func BenchmarkSgemmThreads2(b *testing.B) {
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			a, lda, bb, ldb, c, ldc := operands[float32](sh)
			for b.Loop() {
				SgemmThreads(sh.transA, sh.transB, sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, ldc, 2)
			}
			gflops(b, sh)
		})
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// BenchmarkGonumSgemm / BenchmarkGonumDgemm: gonum's pure-Go BLAS on the
// same shapes, for comparison (gonum runs on all cores for large products).
func BenchmarkGonumSgemm(b *testing.B) {
	var impl gonum.Implementation
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			a, lda, bb, ldb, c, ldc := operands[float32](sh)
			for b.Loop() {
				impl.Sgemm(trans(sh.transA), trans(sh.transB), sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, ldc)
			}
			gflops(b, sh)
		})
	}
}

func BenchmarkGonumDgemm(b *testing.B) {
	var impl gonum.Implementation
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			a, lda, bb, ldb, c, ldc := operands[float64](sh)
			for b.Loop() {
				impl.Dgemm(trans(sh.transA), trans(sh.transB), sh.m, sh.n, sh.k, 1, a, lda, bb, ldb, 0, c, ldc)
			}
			gflops(b, sh)
		})
	}
}

// BenchmarkSgemmPool2: the executor's way — a Plan for 2 threads, two
// persistent workers with their own workspaces, tasks handed out through
// an atomic counter.
func BenchmarkSgemmPool2(b *testing.B) {
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			a, lda, bb, ldb, c, ldc := operands[float32](sh)
			p := NewPlan32(sh.transA, sh.transB, sh.m, sh.n, sh.k, 2)
			start := make(chan *atomic.Int64)
			done := make(chan struct{})
			work := func(ws []float32, next *atomic.Int64) {
				for {
					t := int(next.Add(1)) - 1
					if t >= p.Tasks() {
						return
					}
					p.Run(t, 1, a, lda, bb, ldb, 0, c, ldc, ws)
				}
			}
			go func() {
				ws := make([]float32, p.WorkspaceFloats())
				for next := range start {
					work(ws, next)
					done <- struct{}{}
				}
			}()
			ws := make([]float32, p.WorkspaceFloats())
			for b.Loop() {
				var next atomic.Int64
				start <- &next
				work(ws, &next)
				<-done
			}
			close(start)
			b.ReportMetric(float64(p.Tasks()), "tasks")
			gflops(b, sh)
		})
	}
}

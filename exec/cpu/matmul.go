package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/gemm"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/stop"
	"github.com/loomgraph/loom/tensor"
)

// mmPlan is a batched matrix product with broadcast batch dimensions:
// batch index i of the result reads a at aOff[i] and b at bOff[i].
type mmPlan struct {
	m, n, k        int
	transA, transB bool
	lda, ldb       int
	aOff, bOff     []int
}

func newMMPlan(n *graph.Node) *mmPlan {
	as, bs, out := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	r := len(out)
	ta, tb := opdef.MatMulFlags(n)
	_, k := opdef.MatMulDims(n)
	// Leading dimensions are at least 1, as BLAS requires, even for empty
	// operands.
	p := &mmPlan{m: out[r-2], n: out[r-1], k: k, transA: ta, transB: tb, lda: max(1, as[len(as)-1]), ldb: max(1, bs[len(bs)-1])}
	p.aOff, p.bOff = opdef.MatMulBatchOffsets(n)
	return p
}

// gemmPlan is what the kernel needs of internal/gemm's plans.
type gemmPlan[T float32 | float64] interface {
	Tasks() int
	WorkspaceFloats() int
	RunUntil(done <-chan struct{}, t int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, ws []T) bool
}

// prepareMatMul runs products on internal/gemm (packed, cache-blocked,
// with AVX-512 or AVX2 micro-kernels): each product splits into
// independent tasks (tiles of the result), and the batch-by-task work
// items are spread over the worker pool, each worker with its own packing
// workspace; nothing is allocated per run, and results do not depend on
// the thread count.
func prepareMatMul(n *graph.Node) (*kernel, error) {
	p := newMMPlan(n)
	if n.DType().IsComplex() {
		return prepareComplexMatMul(p, n.DType())
	}
	switch n.DType() {
	case tensor.Float32:
		return mmKernel[float32](p, func(threads int) gemmPlan[float32] {
			return gemm.NewPlan32(p.transA, p.transB, p.m, p.n, p.k, threads)
		}), nil
	case tensor.Float64:
		return mmKernel[float64](p, func(threads int) gemmPlan[float64] {
			return gemm.NewPlan64(p.transA, p.transB, p.m, p.n, p.k, threads)
		}), nil
	}
	return nil, fmt.Errorf("no MatMul kernel for %v", n.DType())
}

func mmKernel[T float32 | float64](p *mmPlan, plan func(threads int) gemmPlan[T]) *kernel {
	mk, kn, mn := p.m*p.k, p.k*p.n, p.m*p.n
	return &kernel{bind: func(a *args) func() {
		g := plan(a.Threads())
		tasks := g.Tasks()
		wsLen := g.WorkspaceFloats()
		ws := make([][]T, a.Threads())
		for i := range ws {
			ws[i] = make([]T, wsLen)
		}
		// Cancellation: a task checks between its blocks (internal/gemm);
		// tasks of small products are checked every ~1M multiply-adds.
		every := max(1, (1<<20)/max(1, mn*p.k/tasks))
		l := a.Loop(func(lo, hi, part int) {
			x, y, z := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			done := a.Done()
			for w := lo; w < hi; w++ {
				if (w-lo)%every == every-1 && stop.Done(done) {
					return
				}
				b, t := w/tasks, w%tasks
				if !g.RunUntil(done, t, 1, x[p.aOff[b]:p.aOff[b]+mk], p.lda, y[p.bOff[b]:p.bOff[b]+kn], p.ldb, 0, z[b*mn:(b+1)*mn], p.n, ws[part]) {
					return
				}
			}
		})
		items := len(p.aOff) * tasks
		return func() {
			if mn == 0 {
				return
			}
			l.Run(items, 1, 0)
		}
	}}
}

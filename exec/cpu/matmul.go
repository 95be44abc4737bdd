package cpu

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func init() { kernels[ops.OpMatMul] = prepareMatMul }

var blasImpl gonum.Implementation

// mmPlan is a batched matrix product with broadcast batch dimensions:
// batch index i of the result reads a at aOff[i] and b at bOff[i].
type mmPlan struct {
	m, n, k    int
	transA     bool
	transB     bool
	lda, ldb   int
	aOff, bOff []int
}

func newMMPlan(n *graph.Node) *mmPlan {
	as, bs, out := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	r := len(out)
	ta, tb := ops.MatMulFlags(n)
	_, k := ops.MatMulDims(n)
	p := &mmPlan{m: out[r-2], n: out[r-1], k: k, transA: ta, transB: tb, lda: as[len(as)-1], ldb: bs[len(bs)-1]}
	batch := out[:r-2]
	nb := batch.Size()
	p.aOff, p.bOff = make([]int, nb), make([]int, nb)
	strides := func(s tensor.Shape) []int {
		// element stride of each batch dim of an operand, aligned to the
		// result's batch dims; 0 where the operand broadcasts.
		mat := s[len(s)-2] * s[len(s)-1]
		bdims := s[:len(s)-2]
		st := make([]int, len(batch))
		acc := mat
		for i := len(bdims) - 1; i >= 0; i-- {
			j := len(batch) - len(bdims) + i
			if bdims[i] == batch[j] && bdims[i] != 1 {
				st[j] = acc
			}
			acc *= bdims[i]
		}
		return st
	}
	sa, sb := strides(as), strides(bs)
	for i := 0; i < nb; i++ {
		q := i
		for d := len(batch) - 1; d >= 0; d-- {
			idx := q % batch[d]
			q /= batch[d]
			p.aOff[i] += idx * sa[d]
			p.bOff[i] += idx * sb[d]
		}
	}
	return p
}

func prepareMatMul(n *graph.Node) (*kernel, error) {
	p := newMMPlan(n)
	switch n.DType() {
	case tensor.Float32:
		return mmKernel(p, func(a, b, c []float32) {
			blasImpl.Sgemm(trans(p.transA), trans(p.transB), p.m, p.n, p.k, 1, a, p.lda, b, p.ldb, 0, c, p.n)
		}), nil
	case tensor.Float64:
		return mmKernel(p, func(a, b, c []float64) {
			blasImpl.Dgemm(trans(p.transA), trans(p.transB), p.m, p.n, p.k, 1, a, p.lda, b, p.ldb, 0, c, p.n)
		}), nil
	}
	return nil, fmt.Errorf("no MatMul kernel for %v", n.DType())
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

func mmKernel[T float32 | float64](p *mmPlan, gemm func(a, b, c []T)) *kernel {
	mk, kn, mn := p.m*p.k, p.k*p.n, p.m*p.n
	return &kernel{bind: func(a *args) func() {
		return func() {
			x, y, z := as[T](a.In(0)), as[T](a.In(1)), as[T](a.Out())
			if mn == 0 {
				return
			}
			if p.k == 0 {
				clear(z)
				return
			}
			for i := range p.aOff {
				gemm(x[p.aOff[i]:p.aOff[i]+mk], y[p.bOff[i]:p.bOff[i]+kn], z[i*mn:(i+1)*mn])
			}
		}
	}}
}

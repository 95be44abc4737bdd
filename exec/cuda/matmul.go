//go:build linux

package cuda

import (
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// mmPlan is a (batched) row-major MatMul as cuBLAS calls. A row-major
// C[m,n] = op(A)·op(B) is the column-major product Cᵀ = op(B)ᵀ·op(A)ᵀ, and
// a row-major matrix read column-major is its transpose, so the call is
// gemm(transB, transA, n, m, k, B, ldb, A, lda, C, n) with the row-major
// leading dimensions. Complex products are cuBLAS's Cgemm and Zgemm
// (plain transposes: MatMul's flags never conjugate).
type mmPlan struct {
	dt             tensor.DType // float32, float64, complex64 or complex128
	m, n, k        int
	transA, transB bool
	lda, ldb       int
	esize          int64
	aOff, bOff     []int64 // element offsets of each batch's matrices
	// strided: the offsets are arithmetic (one strided-batched call).
	strided          bool
	strideA, strideB int64
}

func newMMPlan(n *graph.Node) *mmPlan {
	as, bs, out := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	r := len(out)
	ta, tb := opdef.MatMulFlags(n)
	_, k := opdef.MatMulDims(n)
	p := &mmPlan{
		dt: n.DType(), m: out[r-2], n: out[r-1], k: k, transA: ta, transB: tb,
		lda: max(1, as[len(as)-1]), ldb: max(1, bs[len(bs)-1]), esize: int64(n.DType().Size()),
	}
	ao, bo := opdef.MatMulBatchOffsets(n)
	p.aOff, p.bOff = make([]int64, len(ao)), make([]int64, len(bo))
	for i := range ao {
		p.aOff[i], p.bOff[i] = int64(ao[i]), int64(bo[i])
	}
	p.strided = true
	if len(ao) > 1 {
		p.strideA, p.strideB = p.aOff[1]-p.aOff[0], p.bOff[1]-p.bOff[0]
	}
	for i := range p.aOff {
		if p.aOff[i] != int64(i)*p.strideA || p.bOff[i] != int64(i)*p.strideB {
			p.strided = false
			break
		}
	}
	return p
}

// run enqueues the product on the handle's stream.
func (p *mmPlan) run(blas *cu.CUBLAS, h cu.Handle, d *cu.Driver, s cu.Stream, a, b, c cu.DevicePtr) error {
	nb := len(p.aOff)
	if p.m == 0 || p.n == 0 || nb == 0 {
		return nil
	}
	cStride := int64(p.m * p.n)
	if p.k == 0 {
		// An empty inner dimension: the product is zero.
		return d.MemsetD8Async(c, 0, cStride*int64(nb)*p.esize, s)
	}
	if p.strided && nb > 1 {
		switch p.dt {
		case tensor.Float64:
			return blas.DgemmStridedBatched(h, p.transB, p.transA, p.n, p.m, p.k, 1, b, p.ldb, p.strideB, a, p.lda, p.strideA, 0, c, p.n, cStride, nb)
		case tensor.Complex64:
			return blas.CgemmStridedBatched(h, p.transB, p.transA, p.n, p.m, p.k, 1, b, p.ldb, p.strideB, a, p.lda, p.strideA, 0, c, p.n, cStride, nb)
		case tensor.Complex128:
			return blas.ZgemmStridedBatched(h, p.transB, p.transA, p.n, p.m, p.k, 1, b, p.ldb, p.strideB, a, p.lda, p.strideA, 0, c, p.n, cStride, nb)
		}
		return blas.SgemmStridedBatched(h, p.transB, p.transA, p.n, p.m, p.k, 1, b, p.ldb, p.strideB, a, p.lda, p.strideA, 0, c, p.n, cStride, nb)
	}
	for i := 0; i < nb; i++ {
		ai := a + cu.DevicePtr(p.aOff[i]*p.esize)
		bi := b + cu.DevicePtr(p.bOff[i]*p.esize)
		ci := c + cu.DevicePtr(int64(i)*cStride*p.esize)
		var err error
		switch p.dt {
		case tensor.Float64:
			err = blas.Dgemm(h, p.transB, p.transA, p.n, p.m, p.k, 1, bi, p.ldb, ai, p.lda, 0, ci, p.n)
		case tensor.Complex64:
			err = blas.Cgemm(h, p.transB, p.transA, p.n, p.m, p.k, 1, bi, p.ldb, ai, p.lda, 0, ci, p.n)
		case tensor.Complex128:
			err = blas.Zgemm(h, p.transB, p.transA, p.n, p.m, p.k, 1, bi, p.ldb, ai, p.lda, 0, ci, p.n)
		default:
			err = blas.Sgemm(h, p.transB, p.transA, p.n, p.m, p.k, 1, bi, p.ldb, ai, p.lda, 0, ci, p.n)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

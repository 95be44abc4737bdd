package opdef

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The matrix product's layout helpers, which the backends use to run a
// (batched, broadcast, transposed) MatMul node.

// MatMulFlags returns the transposition flags of a MatMul node.
func MatMulFlags(n *graph.Node) (transA, transB bool) {
	if a, ok := n.Attr().(MatMulAttr); ok {
		return a.TransA, a.TransB
	}
	return false, false
}

// MatMulDims returns the row count m and inner dimension k of a MatMul
// node's product (after transposition); 0, 0 for a node that is not a
// valid MatMul (nil included).
func MatMulDims(n *graph.Node) (m, k int) {
	if !isMatMul(n) {
		return 0, 0
	}
	a := n.Input(0).Shape()
	ta, _ := MatMulFlags(n)
	if ta {
		return a[len(a)-1], a[len(a)-2]
	}
	return a[len(a)-2], a[len(a)-1]
}

// isMatMul reports whether n is a MatMul node whose operands and result
// agree with the op's rules, so that its dims can be read without checks.
func isMatMul(n *graph.Node) bool {
	if !n.Valid() || len(n.Inputs()) != 2 {
		return false
	}
	d := Lookup(n.Op())
	if d == nil || d.Kind != Contraction {
		return false
	}
	_, s, err := d.Infer(n.Inputs(), n.Attr())
	return err == nil && s.Equal(n.Shape())
}

// MatMulBatchOffsets returns, for each matrix product of a (batched)
// MatMul node in row-major order of the result's batch dimensions, the
// element offsets of the operands' matrices: batch dimensions where an
// operand has size 1 (or that it lacks) broadcast, offset 0. It returns
// nil slices for a node that is not a valid MatMul (nil included), and
// empty ones when the result has no elements. Otherwise the slices have
// one entry per product, and there are at most as many products as result
// elements.
func MatMulBatchOffsets(n *graph.Node) (aOff, bOff []int) {
	if !isMatMul(n) {
		return nil, nil
	}
	as, bs, out := n.Input(0).Shape(), n.Input(1).Shape(), n.Shape()
	if out.Size() == 0 {
		// Nothing to compute: no products, however many batch entries
		// (a [1<<40,0,3] result has no bytes but 1<<40 empty products).
		return []int{}, []int{}
	}
	batch := out[:len(out)-2]
	nb := batch.Size()
	aOff, bOff = make([]int, nb), make([]int, nb)
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
			aOff[i] += idx * sa[d]
			bOff[i] += idx * sb[d]
		}
	}
	return aOff, bOff
}

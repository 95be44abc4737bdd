package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func defineMatMul() {
	define(&Def{Op: OpMatMul, Name: "MatMul", Arity: 2, Kind: Contraction, DType: sameDType(floats), Shape: shMatMul, Differentiable: true,
		FLOPs: func(n *graph.Node) float64 {
			_, k := MatMulDims(n)
			return 2 * float64(k) * float64(n.Shape().Size())
		}})
}

// MatMulAttr is the optional attribute of MatMul: the product uses the
// transpose of its first (TransA) or second (TransB) operand's last two
// axes, without materialising it. The builder MatMul makes plain products;
// the compiler folds Transposes into these flags, and gradients use them.
type MatMulAttr struct{ TransA, TransB bool }

func (a MatMulAttr) String() string {
	switch {
	case a.TransA && a.TransB:
		return "transA transB"
	case a.TransA:
		return "transA"
	case a.TransB:
		return "transB"
	}
	return ""
}

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
	if !n.Valid() || n.Op() != OpMatMul || len(n.Inputs()) != 2 {
		return false
	}
	_, s, err := table[OpMatMul].Infer(n.Inputs(), n.Attr())
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

func shMatMul(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, b := in[0], in[1]
	if len(a) < 2 || len(b) < 2 {
		return nil, shapeErr("the primitive needs rank >= 2 operands")
	}
	var flags MatMulAttr
	if attr != nil {
		f, ok := attr.(MatMulAttr)
		if !ok {
			return nil, argErr("MatMul's attribute must be a MatMulAttr")
		}
		flags = f
	}
	m, k1 := a[len(a)-2], a[len(a)-1]
	if flags.TransA {
		m, k1 = k1, m
	}
	k2, n := b[len(b)-2], b[len(b)-1]
	if flags.TransB {
		k2, n = n, k2
	}
	if k1 != k2 {
		return nil, shapeErr("inner dimensions %d and %d differ", k1, k2)
	}
	batch, err := BroadcastShapes(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return nil, shapeErr("batch dimensions %v and %v do not broadcast", a[:len(a)-2], b[:len(b)-2])
	}
	return append(batch, m, n), nil
}

// MatMul is NumPy's matmul: for 2-D operands the matrix product
// [m,k]x[k,n] -> [m,n]; higher ranks are stacks of matrices whose leading
// (batch) dimensions broadcast; a 1-D first operand is a row vector and a
// 1-D second operand a column vector, and the added dimension is removed
// from the result. Float dtypes only; scalars are an error (use Mul).
func MatMul(a, b *graph.Node) *graph.Node {
	operands := []*graph.Node{a, b}
	if _, bad := graph.Operands("MatMul", a, b); bad != nil {
		return bad
	}
	if a.Rank() == 0 || b.Rank() == 0 {
		return fail(graph.ErrShape, "MatMul", operands, "operands must have rank >= 1; for a scalar factor use ops.Mul")
	}
	dt, err := promote(a.DType(), b.DType())
	if err == nil {
		err = floats.check("", []tensor.DType{dt})
	}
	if err != nil {
		return fail(graph.ErrDType, "MatMul", operands, "%v", err)
	}
	// Check the inner dimensions here, so the message shows the user's
	// shapes rather than the reshaped ones.
	ka := a.Shape()[a.Rank()-1]
	kb := b.Shape()[0]
	if b.Rank() >= 2 {
		kb = b.Shape()[b.Rank()-2]
	}
	if ka != kb {
		return fail(graph.ErrShape, "MatMul", operands, "inner dimensions %d and %d differ", ka, kb)
	}
	if a.Rank() >= 2 && b.Rank() >= 2 {
		if _, err := BroadcastShapes(a.Shape()[:a.Rank()-2], b.Shape()[:b.Rank()-2]); err != nil {
			return fail(graph.ErrShape, "MatMul", operands, "batch dimensions %v and %v do not broadcast", a.Shape()[:a.Rank()-2], b.Shape()[:b.Rank()-2])
		}
	}
	a, b = castTo(a, dt), castTo(b, dt)
	vecA, vecB := a.Rank() == 1, b.Rank() == 1
	if vecA {
		a = Reshape(a, 1, a.Shape()[0])
	}
	if vecB {
		b = Reshape(b, b.Shape()[0], 1)
	}
	out := Apply(OpMatMul, nil, a, b)
	if !out.Valid() || (!vecA && !vecB) {
		return out
	}
	s := append(tensor.Shape{}, out.Shape()...)
	switch {
	case vecA && vecB:
		s = s[:len(s)-2]
	case vecA:
		s = append(s[:len(s)-2], s[len(s)-1])
	default:
		s = s[:len(s)-1]
	}
	return Reshape(out, s...)
}

// MatMulT is the primitive matrix product of rank >= 2 operands with
// transposition flags: op(a)·op(b), where op transposes the last two axes
// when its flag is set. Batch dimensions broadcast as in MatMul.
func MatMulT(a, b *graph.Node, transA, transB bool) *graph.Node {
	var attr graph.Attr
	if transA || transB {
		attr = MatMulAttr{TransA: transA, TransB: transB}
	}
	return Apply(OpMatMul, attr, a, b)
}

package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func defineMatMul() {
	define(&Def{Op: OpMatMul, Name: "MatMul", Arity: 2, Kind: Contraction, DType: sameDType(floats), Shape: shMatMul, Differentiable: true,
		FLOPs: func(n *graph.Node) float64 {
			a := n.Input(0).Shape()
			k := a[len(a)-1]
			return 2 * float64(k) * float64(n.Shape().Size())
		}})
}

func shMatMul(in []tensor.Shape, _ graph.Attr) (tensor.Shape, error) {
	a, b := in[0], in[1]
	if len(a) < 2 || len(b) < 2 {
		return nil, shapeErr("the primitive needs rank >= 2 operands")
	}
	m, k1 := a[len(a)-2], a[len(a)-1]
	k2, n := b[len(b)-2], b[len(b)-1]
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

package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// OpMatMul is the code of the matrix product.
var OpMatMul graph.Op

func init() {
	OpMatMul = define(&opdef.Def{Name: "MatMul", Doc: "(batched, broadcast) matrix product, optionally of transposed operands", Arity: 2, Kind: opdef.Contraction,
		DType: sameDType(opdef.FloatsOrComplex), Shape: shMatMul, Ref: refMatMul,
		Cost: func(n *graph.Node) float64 {
			_, k := opdef.MatMulDims(n)
			return 2 * float64(k) * float64(n.Shape().Size())
		},
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			// C = op(A)·op(B): d op(A) = g·op(B)ᵀ and d op(B) = op(A)ᵀ·g,
			// each built as one product with flags (no Transpose nodes).
			// Complex: d op(A) = g·conj(op(B))ᵀ, d op(B) = conj(op(A))ᵀ·g.
			a, b := cj(n.Input(0)), cj(n.Input(1))
			ta, tb := opdef.MatMulFlags(n)
			sumTo := func(c, like *graph.Node) *graph.Node { return SumTo(c, like.Shape()) }
			return each(need,
				func() *graph.Node {
					if ta { // dA = (g·op(B)ᵀ)ᵀ = op(B)·gᵀ
						return sumTo(MatMulT(b, g, tb, true), a)
					}
					return sumTo(MatMulT(g, b, false, !tb), a)
				},
				func() *graph.Node {
					if tb { // dB = (op(A)ᵀ·g)ᵀ = gᵀ·op(A)
						return sumTo(MatMulT(g, a, true, ta), b)
					}
					return sumTo(MatMulT(a, g, !ta, false), b)
				})
		}})
}

// refMatMul is the product by its definition: every output element the
// sum over k of a[..., i, l] * b[..., l, j] (transposed as the flags say,
// batch dimensions broadcast), in complex128 (exact for real operands: the
// imaginary parts stay 0).
func refMatMul(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a, b := in[0], in[1]
	ta, tb := opdef.MatMulFlags(n)
	out := opdef.NewValue(n.DType(), n.Shape())
	r := len(out.Shape)
	_, k := opdef.MatMulDims(n)
	at := func(v *opdef.Value, idx []int) complex128 { // broadcast read
		off := len(idx) - len(v.Shape)
		p := 0
		for d, m := range v.Shape {
			i := idx[off+d]
			if m == 1 {
				i = 0
			}
			p = p*m + i
		}
		return v.Complex(p)
	}
	idx := make([]int, r)
	ai, bi := make([]int, r), make([]int, r)
	for p := 0; p < out.Len(); p++ {
		opdef.Index(out.Shape, p, idx)
		i, j := idx[r-2], idx[r-1]
		copy(ai, idx)
		copy(bi, idx)
		var s complex128
		for l := 0; l < k; l++ {
			ai[r-2], ai[r-1] = i, l
			if ta {
				ai[r-2], ai[r-1] = l, i
			}
			bi[r-2], bi[r-1] = l, j
			if tb {
				bi[r-2], bi[r-1] = j, l
			}
			s += at(a, ai) * at(b, bi)
		}
		out.SetComplex(p, s)
	}
	return out, nil
}

func shMatMul(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, b := in[0], in[1]
	if len(a) < 2 || len(b) < 2 {
		return nil, shapeErr("the primitive needs rank >= 2 operands")
	}
	var flags opdef.MatMulAttr
	if attr != nil {
		f, ok := attr.(opdef.MatMulAttr)
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
		err = opdef.FloatsOrComplex.Check([]tensor.DType{dt})
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
		attr = opdef.MatMulAttr{TransA: transA, TransB: transB}
	}
	return Apply(OpMatMul, attr, a, b)
}

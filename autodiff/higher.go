package autodiff

import (
	"errors"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// MaxJacobianRows is the largest number of elements of y that Jacobian
// (and so Hessian, for x) accepts: each element costs a reverse sweep.
const MaxJacobianRows = 1 << 16

// Jacobian returns the Jacobian of y with respect to x: a node of shape
// y.Shape() followed by x.Shape(), whose element [i..., j...] is
// dy[i...]/dx[j...]. It is built from one reverse sweep per element of y
// (each a VJP with a one-hot cotangent), so it suits small outputs: y may
// have at most MaxJacobianRows elements.
func Jacobian(y, x *graph.Node) *graph.Node {
	if bad := check("Jacobian", []*graph.Node{y}, []*graph.Node{x}); bad != nil {
		return bad
	}
	g := y.Graph()
	ny := y.Shape().Size()
	shape := append(append([]int{}, y.Shape()...), x.Shape()...)
	if err := graph.CheckType(x.DType(), shape); err != nil {
		return failf(errors.Unwrap(err), "Jacobian", []*graph.Node{y, x}, "the Jacobian %v", err)
	}
	if ny == 0 || x.Shape().Size() == 0 {
		return ops.Full(g, x.DType(), 0, shape...)
	}
	if ny > MaxJacobianRows {
		return failf(graph.ErrShape, "Jacobian", []*graph.Node{y, x},
			"y has %d elements, more than MaxJacobianRows (%d): each is a reverse sweep; use VJP with the cotangents you need", ny, MaxJacobianRows)
	}
	// The one-hot cotangents are a 1 padded with zeros: no constant of
	// y's size is stored per row.
	one := ops.Reshape(ops.Scalar(y, 1), 1)
	rows := make([]*graph.Node, ny)
	for i := range rows {
		onehot := ops.Reshape(ops.Pad(one, ops.PadWidth{Low: i, High: ny - 1 - i}), y.Shape()...)
		gi := walk("Jacobian", []*graph.Node{y}, []*graph.Node{x}, []*graph.Node{onehot})[0]
		if !gi.Valid() {
			return gi
		}
		rows[i] = ops.Reshape(gi, append([]int{1}, x.Shape()...)...)
	}
	return ops.Reshape(ops.Concat(0, rows...), shape...)
}

// Hessian returns the matrix of second derivatives of the scalar y with
// respect to x, of shape x.Shape() followed by x.Shape(): the Jacobian of
// Grad(y, x). For large x prefer HVP, which never builds it.
func Hessian(y, x *graph.Node) *graph.Node {
	gr := Grad(y, x)[0]
	if !gr.Valid() {
		return gr
	}
	return Jacobian(gr, x)
}

// HVP returns the Hessian-vector product H·v of the scalar y with respect
// to x, for v of x's shape, without building H: it is the gradient of
// sum(Grad(y, x) * v) (reverse over reverse), one extra reverse sweep.
func HVP(y, x, v *graph.Node) *graph.Node {
	if _, bad := graph.Operands("HVP", y, x, v); bad != nil {
		return bad
	}
	if v.DType() != x.DType() || !v.Shape().Equal(x.Shape()) {
		return failf(graph.ErrShape, "HVP", []*graph.Node{y, x, v}, "v is %s, x is %s: they must match", v.Type(), x.Type())
	}
	gr := Grad(y, x)[0]
	if !gr.Valid() {
		return gr
	}
	return Grad(ops.Sum(ops.Mul(gr, v)), x)[0]
}

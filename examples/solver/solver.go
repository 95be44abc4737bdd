package main

import (
	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// conjugateGradient solves a·x = b for a symmetric positive definite
// matrix a [n,n] by the conjugate-gradient method (Hestenes and Stiefel),
// one ops.While whose trip count is decided by the data: it stops when
// the residual's norm is at most tol·‖b‖ (tol a scalar node) or after
// maxIter iterations. It returns x, the iterations run (int32 scalar)
// and the relative residual ‖b - a·x‖/‖b‖ recomputed from x (not the
// recurrence's, which drifts from it in floating point).
//
// The loop carries x, the residual r, the search direction p, r·r and the
// iteration count; a and the threshold are captured from the enclosing
// graph (read by the bodies without being carried).
func conjugateGradient(a, b, tol *graph.Node, maxIter int) (x, iters, resid *graph.Node) {
	g := b.Graph()
	rs0 := ops.Sum(ops.Mul(b, b))
	thresh := ops.Mul(ops.Mul(tol, tol), rs0) // stop when r·r <= tol²·b·b
	out := ops.While(
		func(c []*graph.Node) *graph.Node {
			rs, k := c[3], c[4]
			return ops.And(ops.Greater(rs, thresh), ops.Less(k, ops.Scalar(k, float64(maxIter))))
		},
		func(c []*graph.Node) []*graph.Node {
			x, r, p, rs, k := c[0], c[1], c[2], c[3], c[4]
			ap := ops.MatMul(a, p)
			alpha := ops.Div(rs, ops.Sum(ops.Mul(p, ap)))
			x = ops.Add(x, ops.Mul(alpha, p))
			r = ops.Sub(r, ops.Mul(alpha, ap))
			rsNext := ops.Sum(ops.Mul(r, r))
			p = ops.Add(r, ops.Mul(ops.Div(rsNext, rs), p))
			return []*graph.Node{x, r, p, rsNext, ops.Add(k, ops.Scalar(k, 1))}
		},
		ops.ZerosLike(b), b, b, rs0, ops.Full(g, tensor.Int32, 0))
	x, iters = out[0], out[4]
	r := ops.Sub(b, ops.MatMul(a, x))
	resid = ops.Sqrt(ops.Div(ops.Sum(ops.Mul(r, r)), rs0))
	return x, iters, resid
}

// kepler solves Kepler's equation E - e·sin E = M for the eccentric
// anomaly E of every (mean anomaly M, eccentricity e) pair (vectors of
// one length) by Newton's method, all elements at once: E ← E - f(E)/f'(E)
// with f'(E) from autodiff inside the loop's body (f is elementwise, so
// the gradient of Σf is f' at every element). One ops.While runs until
// max |f(E)| <= tol (a scalar node) or maxIter iterations: how many it
// takes depends on the eccentricities (none when every e is 0, where E =
// M at once). It starts from E = M where e < 0.8 and from π elsewhere
// (a start from which Newton's method converges for every e < 1). It
// returns E, the iterations (int32 scalar) and the final max |f(E)|.
func kepler(m, e, tol *graph.Node, maxIter int) (ecc, iters, resid *graph.Node) {
	g := m.Graph()
	f := func(E *graph.Node) *graph.Node { return ops.Sub(ops.Sub(E, ops.Mul(e, ops.Sin(E))), m) }
	worst := func(E *graph.Node) *graph.Node { return ops.Max(ops.Abs(f(E))) }
	e0 := ops.Where(ops.Less(e, ops.Scalar(e, 0.8)), m, ops.Add(ops.ZerosLike(m), ops.Scalar(m, 3.141592653589793)))
	out := ops.While(
		func(c []*graph.Node) *graph.Node {
			E, k := c[0], c[1]
			return ops.And(ops.Greater(worst(E), tol), ops.Less(k, ops.Scalar(k, float64(maxIter))))
		},
		func(c []*graph.Node) []*graph.Node {
			E, k := c[0], c[1]
			fe := f(E)
			df := autodiff.Grad(ops.Sum(fe), E)[0] // 1 - e·cos E
			return []*graph.Node{ops.Sub(E, ops.Div(fe, df)), ops.Add(k, ops.Scalar(k, 1))}
		},
		e0, ops.Full(g, tensor.Int32, 0))
	return out[0], out[1], worst(out[0])
}

package autodiff

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Grad returns the gradient of the scalar y with respect to each of xs:
// nodes of y's graph with exactly the shapes and dtypes of xs. An x may be
// an Input, a Variable or any intermediate node (then the gradient is the
// total derivative through it). An x that y does not depend on gets a zero
// gradient of its shape.
//
// y must be a float scalar; for other outputs use VJP. Errors are build
// errors, recorded on the graph like any builder's: the returned nodes are
// then invalid.
func Grad(y *graph.Node, xs ...*graph.Node) []*graph.Node {
	if bad := check("Grad", []*graph.Node{y}, xs); bad != nil {
		return repeat(bad, len(xs))
	}
	if y.Rank() != 0 {
		return repeat(failf(graph.ErrShape, "Grad", append([]*graph.Node{y}, xs...),
			"y must be a scalar, got %s; for a non-scalar output use autodiff.VJP with a cotangent of its shape (or reduce it with ops.Sum)", y.Type()), len(xs))
	}
	return walk("Grad", []*graph.Node{y}, xs, []*graph.Node{ops.Scalar(y, 1)})
}

// VJP returns the vector-Jacobian products: for each x, the sum over i of
// cotangents[i] contracted with the Jacobian of ys[i] with respect to x,
// which is the gradient of sum_i sum(ys[i] * cotangents[i]). Each
// cotangent must have its y's shape and dtype.
func VJP(ys, xs, cotangents []*graph.Node) []*graph.Node {
	if bad := check("VJP", ys, xs); bad != nil {
		return repeat(bad, len(xs))
	}
	operands := append(append(append([]*graph.Node{}, ys...), xs...), cotangents...)
	if len(cotangents) != len(ys) {
		return repeat(failf(graph.ErrInvalid, "VJP", operands, "%d cotangents for %d outputs", len(cotangents), len(ys)), len(xs))
	}
	if _, bad := graph.Operands("VJP", operands...); bad != nil {
		return repeat(bad, len(xs))
	}
	for i, c := range cotangents {
		if c.DType() != ys[i].DType() || !c.Shape().Equal(ys[i].Shape()) {
			return repeat(failf(graph.ErrShape, "VJP", operands, "cotangent %d is %s, output %d is %s", i, c.Type(), i, ys[i].Type()), len(xs))
		}
	}
	return walk("VJP", ys, xs, cotangents)
}

// check validates the operands shared by Grad and VJP.
func check(op string, ys, xs []*graph.Node) *graph.Node {
	operands := append(append([]*graph.Node{}, ys...), xs...)
	if len(ys) == 0 {
		return failf(graph.ErrInvalid, op, operands, "no outputs to differentiate")
	}
	if _, bad := graph.Operands(op, operands...); bad != nil {
		return bad
	}
	for i, y := range ys {
		if y.DType().IsComplex() {
			return failf(graph.ErrDType, op, operands, "output %d has dtype %v: only real (float32 and float64) outputs can be differentiated; take ops.Real, ops.Imag or ops.Abs of it", i, y.DType())
		}
		if !y.DType().IsFloat() || y.DType().IsStorage() {
			return failf(graph.ErrDType, op, operands, "output %d has dtype %v: only float32 and float64 outputs can be differentiated", i, y.DType())
		}
	}
	for i, x := range xs {
		if !differentiable(x.DType()) {
			return failf(graph.ErrDType, op, operands, "x %d (%s) has dtype %v: gradients exist only with respect to float32, float64, complex64 or complex128 values", i, x, x.DType())
		}
	}
	return nil
}

var failf = graph.Failf

// differentiable reports whether gradients flow through values of dtype
// dt: the compute floats and the complex types. The cotangent of a complex
// z = x+iy is dL/dx + i dL/dy for the real loss L (PyTorch's and JAX's
// convention; docs/ARCHITECTURE.md "Complex numbers").
func differentiable(dt tensor.DType) bool {
	return (dt.IsFloat() && !dt.IsStorage()) || dt.IsComplex()
}

func repeat(n *graph.Node, k int) []*graph.Node {
	out := make([]*graph.Node, k)
	for i := range out {
		out[i] = n
	}
	return out
}

// walk is the reverse-mode sweep. Only nodes on a path from some x to
// some y are visited, and each rule is asked only for the cotangents of
// operands on such a path: the gradient graph computes nothing that the
// requested gradients do not need.
func walk(op string, ys, xs, seeds []*graph.Node) []*graph.Node {
	g := ys[0].Graph()
	nodes := g.Nodes()
	top := 0
	for _, y := range ys {
		top = max(top, y.ID())
	}
	// fromX: reachable forward from an x (within [0, top]).
	fromX := make([]bool, top+1)
	isX := map[*graph.Node]bool{}
	for _, x := range xs {
		isX[x] = true
		if x.ID() <= top {
			fromX[x.ID()] = true
		}
	}
	for id := 0; id <= top; id++ {
		if fromX[id] {
			continue
		}
		if n := nodes[id]; n.Op() == ops.OpTupleGet && !differentiable(n.DType()) {
			// An integer or bool result of a control-flow op (a trip
			// counter, a flag): it gets no cotangent, as JAX's float0,
			// and is not on a path even when the op depends on an x.
			continue
		}
		for _, in := range nodes[id].Inputs() {
			if fromX[in.ID()] {
				fromX[id] = true
				break
			}
		}
	}
	// onPath: fromX and an ancestor of some y.
	onPath := make([]bool, top+1)
	for _, y := range ys {
		if fromX[y.ID()] {
			onPath[y.ID()] = true
		}
	}
	for id := top; id >= 0; id-- {
		if !onPath[id] {
			continue
		}
		for _, in := range nodes[id].Inputs() {
			if fromX[in.ID()] {
				onPath[in.ID()] = true
			}
		}
	}
	ct := make(map[*graph.Node]*graph.Node)
	add := func(n, c *graph.Node) {
		if old := ct[n]; old != nil {
			ct[n] = ops.Add(old, c)
		} else {
			ct[n] = c
		}
	}
	for i, y := range ys {
		if onPath[y.ID()] && seeds[i] != nil {
			add(y, seeds[i])
		}
	}
	// The cotangents of a tuple's results (a control-flow node's), from
	// its TupleGet users: TupleGet has no rule of its own; the tuple
	// node's TupleGrad gets them all at once. A TupleGet's ID is above its
	// tuple's, so they are all in when the sweep reaches the tuple.
	tupleCts := make(map[*graph.Node][]*graph.Node)
	for id := top; id >= 0; id-- {
		n := nodes[id]
		if !onPath[id] || n.Op().IsLeaf() {
			continue
		}
		if n.Op() == ops.OpTupleGet {
			if c := ct[n]; c != nil {
				t := n.Input(0)
				a, ok := n.Attr().(opdef.TupleAttr)
				ca, cok := t.Attr().(*opdef.ControlAttr)
				if !ok || !cok || a.Index < 0 || a.Index >= len(ca.Outs) {
					return repeat(failf(graph.ErrInvalid, op, append(append([]*graph.Node{}, ys...), xs...),
						"TupleGet (%s built at %s) does not read a control-flow op's result", n.Type(), n.Site()), len(xs))
				}
				dys := tupleCts[t]
				if dys == nil {
					dys = make([]*graph.Node, len(ca.Outs))
					tupleCts[t] = dys
				}
				if dys[a.Index] != nil {
					dys[a.Index] = ops.Add(dys[a.Index], c)
				} else {
					dys[a.Index] = c
				}
			}
			continue
		}
		def := opdef.Lookup(n.Op())
		tuple := def != nil && def.TupleGrad != nil
		c := ct[n]
		if tuple {
			if tupleCts[n] == nil {
				continue
			}
		} else if c == nil {
			continue
		}
		need := make([]bool, len(n.Inputs()))
		any := false
		for i, in := range n.Inputs() {
			need[i] = onPath[in.ID()]
			any = any || need[i]
		}
		if !any {
			continue
		}
		operands := append(append([]*graph.Node{}, ys...), xs...)
		if def == nil || !def.Differentiable() {
			return repeat(failf(graph.ErrInvalid, op, operands,
				"%s (%s built at %s) is not differentiable, and the path from x to y goes through it", n.Op(), n.Type(), n.Site()), len(xs))
		}
		// A node made with graph.Add need not obey its op's rules, which
		// the gradient rules rely on: check it first.
		if dt, s, err := def.Infer(n.Inputs(), n.Attr()); err != nil || dt != n.DType() || !s.Equal(n.Shape()) {
			msg := fmt.Sprintf("the op's rules give %s", tensor.TypeString(dt, s))
			if err != nil {
				msg = err.Error()
			}
			return repeat(failf(graph.ErrInvalid, op, operands,
				"%s (%s built at %s) does not obey its op's rules: %s", n.Op(), n.Type(), n.Site(), msg), len(xs))
		}
		var cts []*graph.Node
		if tuple {
			cts = def.TupleGrad(n, tupleCts[n], need)
		} else {
			cts = def.Grad(n, c, need)
		}
		if err := g.Err(); err != nil {
			return repeat(g.Fail(err), len(xs))
		}
		for i, in := range n.Inputs() {
			if !need[i] || i >= len(cts) || cts[i] == nil {
				continue
			}
			ci := cts[i]
			if !ci.Valid() {
				return repeat(ci, len(xs))
			}
			if ci.Graph() != g {
				return repeat(failf(graph.ErrInvalid, op, operands,
					"the gradient rule of %s (built at %s) gave a node of another graph for operand %d", n.Op(), n.Site(), i), len(xs))
			}
			if !differentiable(in.DType()) {
				// A gradient would have to flow into a discrete value.
				return repeat(failf(graph.ErrInvalid, op, operands,
					"%s (%s built at %s) is not differentiable: its %v result is on the path from x to y (through %s)",
					in.Op(), in.Type(), in.Site(), in.DType(), n.Op()), len(xs))
			}
			if ci.DType() != in.DType() || !ci.Shape().Equal(in.Shape()) {
				return repeat(failf(graph.ErrShape, op, operands,
					"the gradient rule of %s (built at %s) gave %s for operand %d of type %s", n.Op(), n.Site(), ci.Type(), i, in.Type()), len(xs))
			}
			add(in, ci)
		}
	}
	out := make([]*graph.Node, len(xs))
	for i, x := range xs {
		if c := ct[x]; c != nil {
			out[i] = c
		} else {
			out[i] = ops.ZerosLike(x)
		}
	}
	return out
}

// The control-flow ops' gradient rules (ops/control_grad.go)
// differentiate their bodies with this sweep: opdef.VJP is how they reach
// it (autodiff imports ops, so ops cannot import autodiff).
func init() {
	opdef.VJP = bodyVJP
}

// bodyVJP is opdef.VJP: the VJPs of ys (nodes of one graph, a body's or
// a scratch graph's) with respect to xs for the cotangents cts, a nil
// cotangent counting as zero; an x that no y depends on gets zeros.
func bodyVJP(ys, xs, cts []*graph.Node) []*graph.Node {
	if len(ys) == 0 || len(cts) != len(ys) {
		bad := failf(graph.ErrInvalid, "VJP", append(append([]*graph.Node{}, ys...), xs...), "%d cotangents for %d outputs", len(cts), len(ys))
		return repeat(bad, len(xs))
	}
	return walk("VJP", ys, xs, cts)
}

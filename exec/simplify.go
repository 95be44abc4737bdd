package exec

import (
	"slices"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Rule is one algebraic rewrite of the simplify pass. Apply gets the node
// being rewritten (for its attribute, shape and dtype) and its operands
// already in the new graph, and returns the replacement, or nil when the
// rule does not match. A replacement always has the node's dtype and
// shape and, unless FastMath is set, the same value for every input (up
// to the sign of a zero).
type Rule struct {
	Name     string
	Op       graph.Op
	FastMath bool
	Apply    func(n *graph.Node, in []*graph.Node) *graph.Node
}

// Rules returns the simplifier's rewrites, in the order they are tried:
// a copy, so changing it changes no compilation.
func Rules() []Rule { return slices.Clone(rules) }

// rules are the simplifier's rewrites, one line each.
var rules = []Rule{
	{"x*1 -> x", ops.OpMul, false, withConst(1, func(n, x, _ *graph.Node) *graph.Node { return like(n, x) })},
	{"x*-1 -> -x", ops.OpMul, false, withConst(-1, func(n, x, _ *graph.Node) *graph.Node { return like(n, ops.Neg(x)) })},
	{"x*0 -> 0 (integers)", ops.OpMul, false, ints(withConst(0, func(n, _, z *graph.Node) *graph.Node { return like(n, z) }))},
	{"x+0 -> x", ops.OpAdd, false, withConst(0, func(n, x, _ *graph.Node) *graph.Node { return like(n, x) })},
	{"x-0 -> x", ops.OpSub, false, rhsConst(0, func(n, x *graph.Node) *graph.Node { return like(n, x) })},
	{"x/1 -> x", ops.OpDiv, false, rhsConst(1, func(n, x *graph.Node) *graph.Node { return like(n, x) })},
	{"x-x -> 0 (integers)", ops.OpSub, false, ints(func(n *graph.Node, in []*graph.Node) *graph.Node { return ifSame(in[0], in[1], zeros(in[0], n)) })},
	{"x**1 -> x", ops.OpPow, false, rhsConst(1, func(n, x *graph.Node) *graph.Node { return like(n, x) })},
	{"x**2 -> x*x", ops.OpPow, false, floats(rhsConst(2, func(n, x *graph.Node) *graph.Node { return like(n, ops.Mul(x, x)) }))},
	{"--x -> x", ops.OpNeg, false, inner(ops.OpNeg, func(n, x *graph.Node) *graph.Node { return x })},
	{"exp(log x) -> x", ops.OpExp, true, inner(ops.OpLog, func(n, x *graph.Node) *graph.Node { return x })},
	{"log(exp x) -> x", ops.OpLog, true, inner(ops.OpExp, func(n, x *graph.Node) *graph.Node { return x })},
	{"T(T(x)) -> T(x)", ops.OpTranspose, false, inner(ops.OpTranspose, composeTranspose)},
	{"R(R(x)) -> R(x)", ops.OpReshape, false, inner(ops.OpReshape, func(n, x *graph.Node) *graph.Node { return ops.Reshape(x, n.Shape()...) })},
	{"B(B(x)) -> B(x)", ops.OpBroadcastTo, false, inner(ops.OpBroadcastTo, func(n, x *graph.Node) *graph.Node { return ops.BroadcastTo(x, n.Shape()...) })},
	{"f(B(x), y) -> f(x, y)", 0, false, unbroadcastOperands},
	{"Cast(Cast(x)) -> Cast(x) when the inner cast is exact", ops.OpCast, false, castCast},
	{"StopGradient(x) -> x", ops.OpStopGradient, false, func(n *graph.Node, in []*graph.Node) *graph.Node { return in[0] }},
	{"CustomGrad(x, ...) -> x", ops.OpCustomGrad, false, func(n *graph.Node, in []*graph.Node) *graph.Node { return in[0] }},
	{"Where(c, x, x) -> x", ops.OpWhere, false, func(n *graph.Node, in []*graph.Node) *graph.Node {
		return ifSame(in[1], in[2], func() *graph.Node { return like(n, in[1]) })
	}},
	{"MatMul(T(a), T(b)) -> MatMul with transposition flags", ops.OpMatMul, false, foldMatMulTranspose},
	{"Sum over length-1 axes -> Reshape", ops.OpSum, false, reduceOfOnes},
	{"Max over length-1 axes -> Reshape", ops.OpMax, false, reduceOfOnes},
	{"Min over length-1 axes -> Reshape", ops.OpMin, false, reduceOfOnes},
}

// constValue reports whether x (or the operand of a BroadcastTo x) is a
// constant whose every element equals v.
func constValue(x *graph.Node, v float64) bool {
	if x.Op() == ops.OpBroadcastTo {
		x = x.Input(0)
	}
	if x.Op() != graph.OpConst {
		return false
	}
	t := x.Value()
	n := t.Size()
	if n == 0 || n > 1<<16 {
		return false
	}
	for i := 0; i < n; i++ {
		if t.Complex128(i) != complex(v, 0) { // a complex constant's imaginary part counts too
			return false
		}
	}
	return true
}

// like gives x the shape of n (broadcasting it if n is larger).
func like(n, x *graph.Node) *graph.Node {
	if x.Shape().Equal(n.Shape()) || !x.Valid() {
		return x
	}
	return ops.BroadcastTo(x, n.Shape()...)
}

// zeros builds, in like's graph, zeros of n's type.
func zeros(like, n *graph.Node) func() *graph.Node {
	return func() *graph.Node { return ops.Full(like.Graph(), n.DType(), 0, n.Shape()...) }
}

// ifSame builds r when a and b are the same node, else returns nil.
func ifSame(a, b *graph.Node, r func() *graph.Node) *graph.Node {
	if a != b {
		return nil
	}
	return r()
}

// withConst matches a commutative binary op with a constant v on either
// side: f(n, other, constant).
func withConst(v float64, f func(n, other, c *graph.Node) *graph.Node) func(*graph.Node, []*graph.Node) *graph.Node {
	return func(n *graph.Node, in []*graph.Node) *graph.Node {
		for i := 0; i < 2; i++ {
			if constValue(in[i], v) {
				return f(n, in[1-i], in[i])
			}
		}
		return nil
	}
}

// rhsConst matches a binary op whose right operand is the constant v.
func rhsConst(v float64, f func(n, x *graph.Node) *graph.Node) func(*graph.Node, []*graph.Node) *graph.Node {
	return func(n *graph.Node, in []*graph.Node) *graph.Node {
		if constValue(in[1], v) {
			return f(n, in[0])
		}
		return nil
	}
}

// inner matches a unary node whose operand is an op: f(n, that op's operand).
func inner(op graph.Op, f func(n, x *graph.Node) *graph.Node) func(*graph.Node, []*graph.Node) *graph.Node {
	return func(n *graph.Node, in []*graph.Node) *graph.Node {
		if in[0].Op() != op {
			return nil
		}
		if op == ops.OpTranspose {
			return f(n, in[0])
		}
		return f(n, in[0].Input(0))
	}
}

func ints(f func(*graph.Node, []*graph.Node) *graph.Node) func(*graph.Node, []*graph.Node) *graph.Node {
	return func(n *graph.Node, in []*graph.Node) *graph.Node {
		if !n.DType().IsInt() {
			return nil
		}
		return f(n, in)
	}
}

func floats(f func(*graph.Node, []*graph.Node) *graph.Node) func(*graph.Node, []*graph.Node) *graph.Node {
	return func(n *graph.Node, in []*graph.Node) *graph.Node {
		if !n.DType().IsFloat() {
			return nil
		}
		return f(n, in)
	}
}

// composeTranspose folds Transpose(Transpose(x, p), q) into one
// Transpose(x, p∘q) (the identity disappears in the builder).
func composeTranspose(n, t *graph.Node) *graph.Node {
	p := t.Attr().(opdef.PermAttr).Perm
	q := n.Attr().(opdef.PermAttr).Perm
	perm := make([]int, len(q))
	for i, qi := range q {
		perm[i] = p[qi]
	}
	return ops.Transpose(t.Input(0), perm...)
}

// unbroadcastOperands drops an explicit BroadcastTo feeding an elementwise
// op when the op's own broadcasting gives the same result shape.
func unbroadcastOperands(n *graph.Node, in []*graph.Node) *graph.Node {
	d := opdef.Lookup(n.Op())
	if d == nil || d.Kind != opdef.Elementwise || len(in) < 2 {
		return nil
	}
	changed := false
	repl := append([]*graph.Node(nil), in...)
	for i, x := range in {
		if x.Op() != ops.OpBroadcastTo {
			continue
		}
		trial := append([]*graph.Node(nil), repl...)
		trial[i] = x.Input(0)
		shapes := make([]tensor.Shape, len(trial))
		for k, t := range trial {
			shapes[k] = t.Shape()
		}
		if s, err := ops.BroadcastShapes(shapes...); err == nil && s.Equal(n.Shape()) {
			repl = trial
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return ops.Apply(n.Op(), n.Attr(), repl...)
}

// exactCast reports whether every value of dtype from is exactly
// representable in to.
func exactCast(from, to tensor.DType) bool {
	switch from {
	case tensor.Bool:
		return true
	case tensor.Int32:
		return to == tensor.Int64 || to == tensor.Float64
	case tensor.Float16, tensor.BFloat16:
		return to == tensor.Float32 || to == tensor.Float64 || to == from
	case tensor.Float32:
		return to == tensor.Float64
	}
	return false
}

func castCast(n *graph.Node, in []*graph.Node) *graph.Node {
	c := in[0]
	if c.Op() != ops.OpCast {
		return nil
	}
	x := c.Input(0)
	if !exactCast(x.DType(), c.DType()) {
		return nil
	}
	return ops.Cast(x, n.DType())
}

// reduceOfOnes turns a reduction whose axes all have length 1 into a
// Reshape (the values do not change).
func reduceOfOnes(n *graph.Node, in []*graph.Node) *graph.Node {
	for _, ax := range n.Attr().(opdef.AxesAttr).Axes {
		if in[0].Shape()[ax] != 1 {
			return nil
		}
	}
	return ops.Reshape(in[0], n.Shape()...)
}

// simplify applies the rules bottom-up: each node is rewritten after its
// operands, and a replacement is itself simplified again (up to a bound),
// so chains like ---x collapse in one pass.
func simplify(c *compilation) error {
	return c.rewrite(func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, _ func(*graph.Node) *graph.Node) *graph.Node {
		return simplifyNode(c.cfg.fastMath, n, ins, 4)
	})
}

func simplifyNode(fastMath bool, n *graph.Node, ins []*graph.Node, depth int) *graph.Node {
	for _, r := range rules {
		if (r.Op != 0 && r.Op != n.Op()) || (r.FastMath && !fastMath) {
			continue
		}
		m := r.Apply(n, ins)
		if m == nil || !m.Valid() {
			continue
		}
		if m.DType() != n.DType() || !m.Shape().Equal(n.Shape()) {
			panic("exec: simplify: rule " + r.Name + " changed the type of " + n.String() + " to " + m.Type())
		}
		if depth > 0 && !m.Op().IsLeaf() && (len(m.Inputs()) > 0) {
			if again := simplifyNode(fastMath, m, m.Inputs(), depth-1); again != nil {
				return again
			}
		}
		return m
	}
	return nil
}

// swapsLastTwo reports whether x is a Transpose that only exchanges the
// last two axes.
func swapsLastTwo(x *graph.Node) bool {
	if x.Op() != ops.OpTranspose {
		return false
	}
	p := x.Attr().(opdef.PermAttr).Perm
	r := len(p)
	for i := 0; i < r-2; i++ {
		if p[i] != i {
			return false
		}
	}
	return r >= 2 && p[r-2] == r-1 && p[r-1] == r-2
}

// foldMatMulTranspose turns a product of transposed operands into a
// product with transposition flags: the kernel reads the operand in the
// other order instead of a Transpose kernel copying it.
func foldMatMulTranspose(n *graph.Node, in []*graph.Node) *graph.Node {
	ta, tb := opdef.MatMulFlags(n)
	a, b := in[0], in[1]
	changed := false
	if swapsLastTwo(a) {
		a, ta, changed = a.Input(0), !ta, true
	}
	if swapsLastTwo(b) {
		b, tb, changed = b.Input(0), !tb, true
	}
	if !changed {
		return nil
	}
	return ops.MatMulT(a, b, ta, tb)
}

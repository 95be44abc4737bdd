package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The reverse-mode rules, one per differentiable primitive, written with
// the builders so that gradients are ordinary nodes (optimised, run on any
// backend, differentiable again). Conventions, as in JAX and PyTorch where
// they agree:
//   - a broadcast operand's cotangent is summed back to its shape (SumTo);
//   - Relu'(0) = 0 and Abs'(0) = Sign(0) = 0;
//   - Maximum and Minimum give a tie to the first operand; Max and Min
//     give it to the first extremal element in row-major order over the
//     reduced axes (the element ArgMax picks);
//   - Pow's derivative in the exponent uses log(a) with log(0) taken as 0
//     (so 0^b has a finite exponent gradient), and in the base b*a^(b-1)
//     with 0 where b == 0.

// each builds the cotangents of the needed operands only.
func each(need []bool, fs ...func() *graph.Node) []*graph.Node {
	out := make([]*graph.Node, len(fs))
	for i, f := range fs {
		if need[i] && f != nil {
			out[i] = f()
		}
	}
	return out
}

func zero(like *graph.Node) *graph.Node { return Scalar(like, 0) }

// keepShape is x's shape with the reduced axes of a set to 1.
func keepShape(x *graph.Node, a AxesAttr) []int {
	s := append([]int{}, x.Shape()...)
	for _, ax := range a.Axes {
		s[ax] = 1
	}
	return s
}

// reducedIota is an Int64 value of x's shape with the kept axes set to 1,
// holding each position's row-major index over the reduced axes: the
// numbering ArgMax uses. It is the broadcast sum of one arange per reduced
// axis times that axis's stride, so building it allocates nothing in
// proportion to x (the compiler folds it when it is small).
func reducedIota(x *graph.Node, a AxesAttr) *graph.Node {
	g := x.Graph()
	var idx *graph.Node
	stride := 1
	for k := len(a.Axes) - 1; k >= 0; k-- {
		ax := a.Axes[k]
		d := x.Shape()[ax]
		shape := make([]int, x.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[ax] = d
		term := arange(g, tensor.Int64, d)
		if stride != 1 {
			term = Mul(term, intConst(g, tensor.Int64, stride))
		}
		term = Reshape(term, shape...)
		if idx == nil {
			idx = term
		} else {
			idx = Add(term, idx)
		}
		stride *= d
	}
	if idx == nil { // no reduced axes: every position is index 0
		return intConst(g, tensor.Int64, 0)
	}
	return idx
}

// selectGrad routes dy to the element ArgMax (or ArgMin) picks.
func selectGrad(n, g *graph.Node, arg graph.Op) *graph.Node {
	x := n.Input(0)
	a := n.Attr().(AxesAttr)
	idx := Reshape(Apply(arg, AxesAttr{Axes: a.Axes}, x), keepShape(x, a)...)
	mask := Equal(reducedIota(x, a), idx)
	return Where(mask, Reshape(g, keepShape(x, a)...), zero(g))
}

// guardGrad wraps a rule so that a call with arguments it cannot use (a
// node of another op or breaking its op's rules, an invalid cotangent or
// one of another type, need of the wrong length) returns invalid
// cotangents carrying the error, recorded on n's graph, instead of
// panicking: the rules themselves assume well-formed nodes.
func guardGrad(d *Def, r GradRule) GradRule {
	return func(n, dy *graph.Node, need []bool) []*graph.Node {
		bad := func(format string, args ...any) []*graph.Node {
			e := fail(graph.ErrInvalid, d.Name+" gradient", []*graph.Node{n, dy}, format, args...)
			out := make([]*graph.Node, len(n.Inputs()))
			for i := range out {
				out[i] = e
			}
			return out
		}
		switch {
		case !n.Valid() || n.Op() != d.Op:
			return bad("the node is not a valid %s node", d.Name)
		case !dy.Valid() || dy.Graph() != n.Graph() || dy.DType() != n.DType() || !dy.Shape().Equal(n.Shape()):
			return bad("the cotangent %s does not match the node's type %s", graph.TypeOf(dy), n.Type())
		case len(need) != len(n.Inputs()):
			return bad("need has %d entries for %d operands", len(need), len(n.Inputs()))
		}
		if dt, s, err := d.Infer(n.Inputs(), n.Attr()); err != nil || dt != n.DType() || !s.Equal(n.Shape()) {
			return bad("the node does not obey the op's rules")
		}
		return r(n, dy, need)
	}
}

func attachGradients() {
	set := func(op graph.Op, r GradRule) { table[op].Grad = guardGrad(table[op], r) }
	in := func(n *graph.Node, i int) *graph.Node { return n.Input(i) }
	sumTo := func(c, like *graph.Node) *graph.Node { return SumTo(c, like.Shape()) }

	set(OpAdd, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return sumTo(g, in(n, 0)) }, func() *graph.Node { return sumTo(g, in(n, 1)) })
	})
	set(OpSub, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return sumTo(g, in(n, 0)) }, func() *graph.Node { return sumTo(Neg(g), in(n, 1)) })
	})
	set(OpMul, func(n, g *graph.Node, need []bool) []*graph.Node {
		a, b := in(n, 0), in(n, 1)
		return each(need, func() *graph.Node { return sumTo(Mul(g, b), a) }, func() *graph.Node { return sumTo(Mul(g, a), b) })
	})
	set(OpDiv, func(n, g *graph.Node, need []bool) []*graph.Node {
		a, b := in(n, 0), in(n, 1)
		return each(need,
			func() *graph.Node { return sumTo(Div(g, b), a) },
			func() *graph.Node { return sumTo(Neg(Mul(g, Div(n, b))), b) }) // -g*a/b^2 = -g*(a/b)/b
	})
	set(OpPow, func(n, g *graph.Node, need []bool) []*graph.Node {
		a, b := in(n, 0), in(n, 1)
		return each(need,
			func() *graph.Node {
				d := Mul(b, Pow(a, Sub(b, Scalar(b, 1))))
				return sumTo(Mul(g, Where(Equal(b, zero(b)), zero(d), d)), a)
			},
			func() *graph.Node {
				safe := Where(Equal(a, zero(a)), Scalar(a, 1), a)
				return sumTo(Mul(g, Mul(n, Log(safe))), b)
			})
	})
	set(OpMaximum, func(n, g *graph.Node, need []bool) []*graph.Node {
		a, b := in(n, 0), in(n, 1)
		return each(need,
			func() *graph.Node { return sumTo(Where(GreaterEqual(a, b), g, zero(g)), a) },
			func() *graph.Node { return sumTo(Where(Less(a, b), g, zero(g)), b) })
	})
	set(OpMinimum, func(n, g *graph.Node, need []bool) []*graph.Node {
		a, b := in(n, 0), in(n, 1)
		return each(need,
			func() *graph.Node { return sumTo(Where(LessEqual(a, b), g, zero(g)), a) },
			func() *graph.Node { return sumTo(Where(Greater(a, b), g, zero(g)), b) })
	})
	unary := func(op graph.Op, f func(n, x, g *graph.Node) *graph.Node) {
		set(op, func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return f(n, in(n, 0), g) })
		})
	}
	unary(OpNeg, func(n, x, g *graph.Node) *graph.Node { return Neg(g) })
	unary(OpAbs, func(n, x, g *graph.Node) *graph.Node { return Mul(g, Sign(x)) })
	unary(OpSign, func(n, x, g *graph.Node) *graph.Node { return ZerosLike(x) })
	unary(OpExp, func(n, x, g *graph.Node) *graph.Node { return Mul(g, n) })
	unary(OpLog, func(n, x, g *graph.Node) *graph.Node { return Div(g, x) })
	unary(OpSqrt, func(n, x, g *graph.Node) *graph.Node { return Div(g, Mul(n, Scalar(n, 2))) })
	unary(OpTanh, func(n, x, g *graph.Node) *graph.Node { return Mul(g, Sub(Scalar(n, 1), Mul(n, n))) })
	unary(OpSigmoid, func(n, x, g *graph.Node) *graph.Node { return Mul(g, Mul(n, Sub(Scalar(n, 1), n))) })
	unary(OpRelu, func(n, x, g *graph.Node) *graph.Node { return Where(Greater(x, zero(x)), g, zero(g)) })
	unary(OpSin, func(n, x, g *graph.Node) *graph.Node { return Mul(g, Cos(x)) })
	unary(OpCos, func(n, x, g *graph.Node) *graph.Node { return Neg(Mul(g, Sin(x))) })
	unary(OpCast, func(n, x, g *graph.Node) *graph.Node { return Cast(g, x.DType()) })
	set(OpStopGradient, func(n, g *graph.Node, need []bool) []*graph.Node { return []*graph.Node{nil} })
	set(OpWhere, func(n, g *graph.Node, need []bool) []*graph.Node {
		c, a, b := in(n, 0), in(n, 1), in(n, 2)
		return each(need, nil,
			func() *graph.Node { return sumTo(Where(c, g, zero(g)), a) },
			func() *graph.Node { return sumTo(Where(c, zero(g), g), b) })
	})
	set(OpMatMul, func(n, g *graph.Node, need []bool) []*graph.Node {
		// C = op(A)·op(B): d op(A) = g·op(B)ᵀ and d op(B) = op(A)ᵀ·g, each
		// built as one product with flags (no Transpose nodes).
		a, b := in(n, 0), in(n, 1)
		ta, tb := MatMulFlags(n)
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
	})
	set(OpSum, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			x := in(n, 0)
			return BroadcastTo(Reshape(g, keepShape(x, n.Attr().(AxesAttr))...), x.Shape()...)
		})
	})
	set(OpMax, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return selectGrad(n, g, OpArgMax) })
	})
	set(OpMin, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return selectGrad(n, g, OpArgMin) })
	})
	set(OpReshape, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return Reshape(g, in(n, 0).Shape()...) })
	})
	set(OpTranspose, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return Transpose(g, InversePerm(n.Attr().(PermAttr).Perm)...) })
	})
	set(OpBroadcastTo, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node { return sumTo(g, in(n, 0)) })
	})
	set(OpConcat, func(n, g *graph.Node, need []bool) []*graph.Node {
		axis := n.Attr().(AxisAttr).Axis
		out := make([]*graph.Node, len(n.Inputs()))
		off := 0
		for i, x := range n.Inputs() {
			d := x.Shape()[axis]
			if need[i] {
				rs := make([]Range, axis+1)
				for k := range rs {
					rs[k] = All
				}
				rs[axis] = R(off, off+d)
				out[i] = Slice(g, rs...)
			}
			off += d
		}
		return out
	})
	set(OpSlice, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			x := in(n, 0)
			if n.Shape().Size() == 0 {
				return ZerosLike(x)
			}
			rs := n.Attr().(SliceAttr).Ranges
			ws := make([]PadWidth, len(rs))
			for i, r := range rs {
				last := r.Start + (n.Shape()[i]-1)*r.Step
				ws[i] = PadWidth{Low: r.Start, High: x.Shape()[i] - 1 - last, Interior: r.Step - 1}
			}
			return Pad(g, ws...)
		})
	})
	set(OpPad, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			x := in(n, 0)
			ws := n.Attr().(PadAttr).Widths
			rs := make([]Range, len(ws))
			for i, w := range ws {
				// The operand's elements sit at Low, Low+Interior+1, ...:
				// d of them (Interior plays no part when d <= 1, and may
				// then be as large as an int holds).
				d := x.Shape()[i]
				switch d {
				case 0:
					rs[i] = R(w.Low, w.Low)
				case 1:
					rs[i] = R(w.Low, w.Low+1)
				default:
					rs[i] = RS(w.Low, w.Low+(d-1)*(w.Interior+1)+1, w.Interior+1)
				}
			}
			return Slice(g, rs...)
		})
	})
	set(OpSoftmax, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			axis := n.Attr().(AxisAttr).Axis
			return Mul(n, Sub(g, SumKeepDims(Mul(g, n), axis)))
		})
	})
	set(OpLogSoftmax, func(n, g *graph.Node, need []bool) []*graph.Node {
		return each(need, func() *graph.Node {
			axis := n.Attr().(AxisAttr).Axis
			return Sub(g, Mul(Exp(n), SumKeepDims(g, axis)))
		})
	})
	set(OpCustomGrad, func(n, g *graph.Node, need []bool) []*graph.Node {
		a := n.Attr().(CustomAttr)
		cts := a.Rule(g)
		out := make([]*graph.Node, len(n.Inputs()))
		for i := 1; i < len(out) && i-1 < len(cts); i++ {
			if need[i] {
				out[i] = cts[i-1]
			}
		}
		return out
	})
}

package ops

import (
	"errors"
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func defineElementwise() {
	binary := func(op graph.Op, name string, s dtypeSet) {
		define(&Def{Op: op, Name: name, Arity: 2, Kind: Elementwise, DType: sameDType(s), Shape: shBroadcast, Differentiable: true})
	}
	binary(OpAdd, "Add", numeric)
	binary(OpSub, "Sub", numeric)
	binary(OpMul, "Mul", numeric)
	binary(OpDiv, "Div", numeric)
	binary(OpPow, "Pow", numeric)
	binary(OpMaximum, "Maximum", numeric)
	binary(OpMinimum, "Minimum", numeric)

	compare := func(op graph.Op, name string, s dtypeSet) {
		define(&Def{Op: op, Name: name, Arity: 2, Kind: Elementwise, DType: toBool(s), Shape: shBroadcast})
	}
	compare(OpEqual, "Equal", compute)
	compare(OpNotEqual, "NotEqual", compute)
	compare(OpLess, "Less", numeric)
	compare(OpLessEqual, "LessEqual", numeric)
	compare(OpGreater, "Greater", numeric)
	compare(OpGreaterEqual, "GreaterEqual", numeric)
	define(&Def{Op: OpAnd, Name: "And", Arity: 2, Kind: Elementwise, DType: sameDType(bools), Shape: shBroadcast})
	define(&Def{Op: OpOr, Name: "Or", Arity: 2, Kind: Elementwise, DType: sameDType(bools), Shape: shBroadcast})
	define(&Def{Op: OpNot, Name: "Not", Arity: 1, Kind: Elementwise, DType: sameDType(bools), Shape: shSame})

	unary := func(op graph.Op, name string, s dtypeSet, diff bool, flops float64) {
		d := &Def{Op: op, Name: name, Arity: 1, Kind: Elementwise, DType: sameDType(s), Shape: shSame, Differentiable: diff}
		if flops != 1 {
			d.FLOPs = perElement(flops)
		}
		define(d)
	}
	unary(OpNeg, "Neg", numeric, true, 1)
	unary(OpAbs, "Abs", numeric, true, 1)
	unary(OpSign, "Sign", numeric, true, 1)
	// Transcendentals count as several FLOPs, as PyTorch's and tinygrad's
	// estimates do; the exact figure only scales the GFLOP/s column.
	unary(OpExp, "Exp", floats, true, 8)
	unary(OpLog, "Log", floats, true, 8)
	unary(OpSqrt, "Sqrt", floats, true, 1)
	unary(OpTanh, "Tanh", floats, true, 8)
	unary(OpSigmoid, "Sigmoid", floats, true, 8)
	unary(OpRelu, "Relu", numeric, true, 1)
	unary(OpSin, "Sin", floats, true, 8)
	unary(OpCos, "Cos", floats, true, 8)

	define(&Def{Op: OpWhere, Name: "Where", Arity: 3, Kind: Elementwise, DType: dtWhere, Shape: shBroadcast, Differentiable: true})
	define(&Def{Op: OpCast, Name: "Cast", Arity: 1, Kind: Elementwise, DType: dtCast, Shape: shCast, Differentiable: true})
	define(&Def{Op: OpStopGradient, Name: "StopGradient", Arity: 1, Kind: Elementwise, DType: sameDType(anyType), Shape: shSame, Differentiable: true})
}

func perElement(k float64) func(n *graph.Node) float64 {
	return func(n *graph.Node) float64 { return k * float64(n.Shape().Size()) }
}

// binary builds an elementwise op of two operands, promoting their dtypes
// within a kind first (int32 with int64 gives int64; float32 with float64
// gives float64; kinds never mix).
func binary(op graph.Op, a, b *graph.Node) *graph.Node {
	d := table[op]
	if _, bad := graph.Operands(d.Name, a, b); bad != nil {
		return bad
	}
	if a.DType() != b.DType() {
		dt, err := promote(a.DType(), b.DType())
		if err != nil {
			return fail(graph.ErrDType, d.Name, []*graph.Node{a, b}, "%v", err)
		}
		a, b = castTo(a, dt), castTo(b, dt)
	}
	return Apply(op, nil, a, b)
}

func castTo(x *graph.Node, dt tensor.DType) *graph.Node {
	if x.DType() == dt {
		return x
	}
	return Cast(x, dt)
}

// Add returns a + b elementwise, with NumPy broadcasting.
func Add(a, b *graph.Node) *graph.Node { return binary(OpAdd, a, b) }

// Sub returns a - b.
func Sub(a, b *graph.Node) *graph.Node { return binary(OpSub, a, b) }

// Mul returns a * b.
func Mul(a, b *graph.Node) *graph.Node { return binary(OpMul, a, b) }

// Div returns a / b. For integers it is floor division (Python's //), and
// x / 0 is 0 (integer division by zero has no value; loom does not trap).
func Div(a, b *graph.Node) *graph.Node { return binary(OpDiv, a, b) }

// Pow returns a raised to b. For integers a negative exponent gives 0
// unless a is 1 or -1 (the truncated reciprocal).
func Pow(a, b *graph.Node) *graph.Node { return binary(OpPow, a, b) }

// Maximum returns the elementwise maximum; NaN propagates.
func Maximum(a, b *graph.Node) *graph.Node { return binary(OpMaximum, a, b) }

// Minimum returns the elementwise minimum; NaN propagates.
func Minimum(a, b *graph.Node) *graph.Node { return binary(OpMinimum, a, b) }

// Equal returns a == b as Bool.
func Equal(a, b *graph.Node) *graph.Node { return binary(OpEqual, a, b) }

// NotEqual returns a != b as Bool.
func NotEqual(a, b *graph.Node) *graph.Node { return binary(OpNotEqual, a, b) }

// Less returns a < b as Bool.
func Less(a, b *graph.Node) *graph.Node { return binary(OpLess, a, b) }

// LessEqual returns a <= b as Bool.
func LessEqual(a, b *graph.Node) *graph.Node { return binary(OpLessEqual, a, b) }

// Greater returns a > b as Bool.
func Greater(a, b *graph.Node) *graph.Node { return binary(OpGreater, a, b) }

// GreaterEqual returns a >= b as Bool.
func GreaterEqual(a, b *graph.Node) *graph.Node { return binary(OpGreaterEqual, a, b) }

// And returns the logical and of two Bool operands.
func And(a, b *graph.Node) *graph.Node { return Apply(OpAnd, nil, a, b) }

// Or returns the logical or of two Bool operands.
func Or(a, b *graph.Node) *graph.Node { return Apply(OpOr, nil, a, b) }

// Not returns the logical negation of a Bool operand.
func Not(x *graph.Node) *graph.Node { return Apply(OpNot, nil, x) }

// Neg returns -x.
func Neg(x *graph.Node) *graph.Node { return Apply(OpNeg, nil, x) }

// Abs returns |x|.
func Abs(x *graph.Node) *graph.Node { return Apply(OpAbs, nil, x) }

// Sign returns -1, 0 or 1 by the sign of x (NaN stays NaN).
func Sign(x *graph.Node) *graph.Node { return Apply(OpSign, nil, x) }

// Exp returns e**x.
func Exp(x *graph.Node) *graph.Node { return Apply(OpExp, nil, x) }

// Log returns the natural logarithm.
func Log(x *graph.Node) *graph.Node { return Apply(OpLog, nil, x) }

// Sqrt returns the square root.
func Sqrt(x *graph.Node) *graph.Node { return Apply(OpSqrt, nil, x) }

// Tanh returns the hyperbolic tangent.
func Tanh(x *graph.Node) *graph.Node { return Apply(OpTanh, nil, x) }

// Sigmoid returns 1/(1+e**-x), computed without overflow for large |x|.
func Sigmoid(x *graph.Node) *graph.Node { return Apply(OpSigmoid, nil, x) }

// Relu returns max(x, 0).
func Relu(x *graph.Node) *graph.Node { return Apply(OpRelu, nil, x) }

// Sin returns the sine.
func Sin(x *graph.Node) *graph.Node { return Apply(OpSin, nil, x) }

// Cos returns the cosine.
func Cos(x *graph.Node) *graph.Node { return Apply(OpCos, nil, x) }

// Where returns a where cond is true and b elsewhere; the three operands
// broadcast together. a and b are promoted within their kind.
func Where(cond, a, b *graph.Node) *graph.Node {
	if _, bad := graph.Operands("Where", cond, a, b); bad != nil {
		return bad
	}
	if a.DType() != b.DType() {
		dt, err := promote(a.DType(), b.DType())
		if err != nil {
			return fail(graph.ErrDType, "Where", []*graph.Node{cond, a, b}, "%v", err)
		}
		a, b = castTo(a, dt), castTo(b, dt)
	}
	return Apply(OpWhere, nil, cond, a, b)
}

// Cast converts x to dtype dt: floats to integers truncate toward zero and
// saturate (NaN gives 0); anything to Bool is x != 0; Bool to numbers is
// 0 or 1. Casting to x's own dtype returns x.
func Cast(x *graph.Node, dt tensor.DType) *graph.Node {
	if x.Valid() && x.DType() == dt {
		return x
	}
	return Apply(OpCast, CastAttr{To: dt}, x)
}

// StopGradient returns x unchanged in value; reverse-mode differentiation
// treats it as a constant.
func StopGradient(x *graph.Node) *graph.Node { return Apply(OpStopGradient, nil, x) }

// Scalar returns a rank-0 constant of like's dtype holding v, in like's
// graph: ops.Mul(x, ops.Scalar(x, 2)) doubles x whatever x's float type.
// v must be representable: an integer for integer dtypes, 0 or 1 for Bool.
func Scalar(like *graph.Node, v float64) *graph.Node {
	g, bad := graph.Operands("Scalar", like)
	if bad != nil {
		return bad
	}
	dt := like.DType()
	if err := representable(dt, v); err != nil {
		return fail(graph.ErrDType, "Scalar", []*graph.Node{like}, "%v", err)
	}
	t, err := tensor.FromFloat64s(dt, []float64{v}, []int{}...)
	if err != nil {
		return fail(graph.ErrDType, "Scalar", []*graph.Node{like}, "%v", err)
	}
	return g.Add(graph.Spec{Op: graph.OpConst, DType: dt, Shape: tensor.Shape{}, Value: t})
}

// representable reports whether v can be stored in dtype dt as it is.
func representable(dt tensor.DType, v float64) error {
	switch {
	case !dt.Valid():
		return fmt.Errorf("invalid dtype %v", dt)
	case dt.IsInt() && (v != math.Trunc(v) || math.IsInf(v, 0) || math.Abs(v) > float64(math.MaxInt64)):
		return fmt.Errorf("%v is not an integer; ops.Cast the operand to a float dtype first", v)
	case dt == tensor.Int32 && (v > math.MaxInt32 || v < math.MinInt32):
		return fmt.Errorf("%v overflows int32", v)
	case dt == tensor.Bool && v != 0 && v != 1:
		return fmt.Errorf("%v is not a bool (0 or 1)", v)
	}
	return nil
}

// Full returns a value of dtype dt and the given shape with every element
// v, in g: a scalar constant broadcast to the shape (no large constant is
// stored). v must be representable in dt, as for Scalar.
func Full(g *graph.Graph, dt tensor.DType, v float64, shape ...int) *graph.Node {
	if g == nil {
		return graph.Invalid(graph.NewError(graph.ErrInvalid, "Full", nil, "nil graph"))
	}
	if err := g.Err(); err != nil {
		return g.Fail(err)
	}
	if err := graph.CheckType(dt, shape); err != nil {
		return g.Fail(graph.NewError(errors.Unwrap(err), "Full", nil, "%v", err))
	}
	if err := representable(dt, v); err != nil {
		return g.Fail(graph.NewError(graph.ErrDType, "Full", nil, "%v", err))
	}
	t, err := tensor.FromFloat64s(dt, []float64{v}, []int{}...)
	if err != nil {
		return g.Fail(graph.NewError(graph.ErrInvalid, "Full", nil, "%v", err))
	}
	c := g.ConstShared(t, "")
	if len(shape) == 0 {
		return c
	}
	return BroadcastTo(c, shape...)
}

// ZerosLike returns a constant of x's dtype and shape filled with zeros.
func ZerosLike(x *graph.Node) *graph.Node {
	g, bad := graph.Operands("ZerosLike", x)
	if bad != nil {
		return bad
	}
	return Full(g, x.DType(), 0, x.Shape()...)
}

// OnesLike returns a constant of x's dtype and shape filled with ones.
func OnesLike(x *graph.Node) *graph.Node {
	g, bad := graph.Operands("OnesLike", x)
	if bad != nil {
		return bad
	}
	return Full(g, x.DType(), 1, x.Shape()...)
}

// Square returns x*x.
func Square(x *graph.Node) *graph.Node { return Mul(x, x) }

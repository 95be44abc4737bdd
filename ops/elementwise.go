package ops

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/scalar"
	"github.com/loomgraph/loom/tensor"
)

// The elementwise ops. Each declaration gives its element functions in
// float64 (F64) and, where integers are admitted, in int64 (I64): the
// reference the conformance suite checks every backend against and
// constant folding computes with.

// Op codes of the elementwise ops.
var (
	OpAdd, OpSub, OpMul, OpDiv, OpPow, OpMaximum, OpMinimum          graph.Op
	OpEqual, OpNotEqual, OpLess, OpLessEqual                         graph.Op
	OpGreater, OpGreaterEqual, OpAnd, OpOr, OpNot                    graph.Op
	OpNeg, OpAbs, OpSign, OpExp, OpLog, OpSqrt, OpTanh               graph.Op
	OpSigmoid, OpRelu, OpSin, OpCos, OpWhere, OpCast, OpStopGradient graph.Op
)

func init() {
	in := func(n *graph.Node, i int) *graph.Node { return n.Input(i) }
	sumTo := func(c, like *graph.Node) *graph.Node { return SumTo(c, like.Shape()) }
	unaryGrad := func(f func(n, x, g *graph.Node) *graph.Node) opdef.GradRule {
		return func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return f(n, in(n, 0), g) })
		}
	}
	// arith declares a binary op of the numeric dtypes; c, where not nil,
	// is its complex element function and the op admits complex too.
	arith := func(name, doc string, f func(a, b float64) float64, i func(a, b int64) int64, c func(a, b complex128) complex128, grad opdef.GradRule, commutative bool, dom ...[]opdef.Interval) graph.Op {
		d := &opdef.Def{Name: name, Doc: doc, Arity: 2, Kind: opdef.Elementwise, DType: sameDType(numeric), Shape: shBroadcast,
			Grad: grad, Commutative: commutative, Domain: []opdef.Interval{{Lo: -2, Hi: 2}},
			F64: func(x []float64) float64 { return f(x[0], x[1]) },
			I64: func(x []int64) int64 { return i(x[0], x[1]) }}
		if c != nil {
			d.DType = sameDType(opdef.NumericOrComplex)
			d.C128 = func(x []complex128) complex128 { return c(x[0], x[1]) }
		}
		if len(dom) == 2 {
			d.Domain, d.IntDomain = dom[0], dom[1]
		}
		return define(d)
	}
	iv := func(lo, hi float64) opdef.Interval { return opdef.Interval{Lo: lo, Hi: hi} }

	OpAdd = arith("Add", "a + b", func(a, b float64) float64 { return a + b }, func(a, b int64) int64 { return a + b }, func(a, b complex128) complex128 { return a + b },
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return sumTo(g, in(n, 0)) }, func() *graph.Node { return sumTo(g, in(n, 1)) })
		}, true)
	OpSub = arith("Sub", "a - b", func(a, b float64) float64 { return a - b }, func(a, b int64) int64 { return a - b }, func(a, b complex128) complex128 { return a - b },
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return sumTo(g, in(n, 0)) }, func() *graph.Node { return sumTo(Neg(g), in(n, 1)) })
		}, false)
	OpMul = arith("Mul", "a * b", func(a, b float64) float64 { return a * b }, func(a, b int64) int64 { return a * b }, func(a, b complex128) complex128 { return a * b },
		func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := in(n, 0), in(n, 1)
			return each(need, func() *graph.Node { return sumTo(Mul(g, cj(b)), a) }, func() *graph.Node { return sumTo(Mul(g, cj(a)), b) })
		}, true)
	OpDiv = arith("Div", "a / b; floor division for integers, x/0 = 0", func(a, b float64) float64 { return a / b }, scalar.FloorDivInt, func(a, b complex128) complex128 { return a / b },
		func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := in(n, 0), in(n, 1)
			return each(need,
				func() *graph.Node { return sumTo(Div(g, cj(b)), a) },
				func() *graph.Node { return sumTo(Neg(Mul(g, cj(Div(n, b)))), b) }) // -g*a/b^2 = -g*(a/b)/b
		}, false, []opdef.Interval{iv(-2, 2), {Lo: 0.5, Hi: 2, Signed: true}}, []opdef.Interval{iv(-50, 50), iv(1, 7)})
	OpPow = arith("Pow", "a ** b; integers: a negative exponent truncates; complex: the principal value exp(b log a)", math.Pow, scalar.PowInt, cmplx.Pow,
		func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := in(n, 0), in(n, 1)
			return each(need,
				func() *graph.Node {
					d := Mul(b, Pow(a, Sub(b, Scalar(b, 1))))
					return sumTo(Mul(g, cj(Where(Equal(b, zero(b)), zero(d), d))), a)
				},
				func() *graph.Node {
					safe := Where(Equal(a, zero(a)), Scalar(a, 1), a)
					return sumTo(Mul(g, cj(Mul(n, Log(safe)))), b)
				})
		}, false, []opdef.Interval{iv(0.5, 2), iv(-2, 2)}, []opdef.Interval{iv(-3, 4), iv(0, 5)})
	OpMaximum = arith("Maximum", "the larger of a and b; NaN propagates",
		func(a, b float64) float64 { return opdef.NaNOr(func() float64 { return math.Max(a, b) }, a, b) }, func(a, b int64) int64 { return max(a, b) }, nil,
		func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := in(n, 0), in(n, 1)
			return each(need,
				func() *graph.Node { return sumTo(Where(GreaterEqual(a, b), g, zero(g)), a) },
				func() *graph.Node { return sumTo(Where(Less(a, b), g, zero(g)), b) })
		}, true, []opdef.Interval{iv(-2, 2)}, []opdef.Interval{iv(-5, 5)})
	OpMinimum = arith("Minimum", "the smaller of a and b; NaN propagates",
		func(a, b float64) float64 { return opdef.NaNOr(func() float64 { return math.Min(a, b) }, a, b) }, func(a, b int64) int64 { return min(a, b) }, nil,
		func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := in(n, 0), in(n, 1)
			return each(need,
				func() *graph.Node { return sumTo(Where(LessEqual(a, b), g, zero(g)), a) },
				func() *graph.Node { return sumTo(Where(Greater(a, b), g, zero(g)), b) })
		}, true, []opdef.Interval{iv(-2, 2)}, []opdef.Interval{iv(-5, 5)})

	compare := func(name, doc string, s opdef.DTypeSet, f func(a, b float64) bool, i func(a, b int64) bool, commutative bool) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 2, Kind: opdef.Elementwise, DType: toBool(s), Shape: shBroadcast, Commutative: commutative,
			F64: func(x []float64) float64 { return opdef.Bool(f(x[0], x[1])) },
			I64: func(x []int64) int64 { return int64(opdef.Bool(i(x[0], x[1]))) }})
	}
	OpEqual = compare("Equal", "a == b (complex: both parts equal)", opdef.ComputeOrComplex, func(a, b float64) bool { return a == b }, func(a, b int64) bool { return a == b }, true)
	OpNotEqual = compare("NotEqual", "a != b", opdef.ComputeOrComplex, func(a, b float64) bool { return a != b }, func(a, b int64) bool { return a != b }, true)
	opdef.Lookup(OpEqual).C128 = func(x []complex128) complex128 { return complex(opdef.Bool(x[0] == x[1]), 0) }
	opdef.Lookup(OpNotEqual).C128 = func(x []complex128) complex128 { return complex(opdef.Bool(x[0] != x[1]), 0) }
	OpLess = compare("Less", "a < b", numeric, func(a, b float64) bool { return a < b }, func(a, b int64) bool { return a < b }, false)
	OpLessEqual = compare("LessEqual", "a <= b", numeric, func(a, b float64) bool { return a <= b }, func(a, b int64) bool { return a <= b }, false)
	OpGreater = compare("Greater", "a > b", numeric, func(a, b float64) bool { return a > b }, func(a, b int64) bool { return a > b }, false)
	OpGreaterEqual = compare("GreaterEqual", "a >= b", numeric, func(a, b float64) bool { return a >= b }, func(a, b int64) bool { return a >= b }, false)

	declareBitwise() // And, Or, Not, Xor, LeftShift, RightShift (bitwise.go)

	// unary declares a one-operand op of the set s; i is nil for float-only
	// ops.
	unary := func(name, doc string, s opdef.DTypeSet, flops float64, f func(float64) float64, i func(int64) int64, grad func(n, x, g *graph.Node) *graph.Node, dom ...opdef.Interval) graph.Op {
		d := &opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Elementwise, DType: sameDType(s), Shape: shSame, FLOPs: flops, Domain: dom,
			F64: func(x []float64) float64 { return f(x[0]) }}
		if i != nil {
			d.I64 = func(x []int64) int64 { return i(x[0]) }
		}
		if grad != nil {
			d.Grad = unaryGrad(grad)
		}
		return define(d)
	}
	// Transcendentals count as several FLOPs, as PyTorch's and tinygrad's
	// estimates do; the exact figure only scales the GFLOP/s column.
	// withComplex makes op admit complex (of the set s) with the
	// element function c.
	withComplex := func(op graph.Op, s opdef.DTypeSet, c func(complex128) complex128) {
		d := opdef.Lookup(op)
		d.DType, d.C128 = sameDType(s), func(x []complex128) complex128 { return c(x[0]) }
	}
	OpNeg = unary("Neg", "-x", numeric, 1, func(x float64) float64 { return -x }, func(x int64) int64 { return -x },
		func(n, x, g *graph.Node) *graph.Node { return Neg(g) })
	withComplex(OpNeg, opdef.NumericOrComplex, func(z complex128) complex128 { return -z })
	OpAbs = unary("Abs", "|x|; of a complex x, the real magnitude", numeric, 1, math.Abs, scalar.AbsInt, func(n, x, g *graph.Node) *graph.Node {
		if x.DType().IsComplex() { // dz = g*z/|z|, 0 at 0
			zero := ZerosLike(x)
			return Where(Equal(x, zero), zero, Mul(Cast(g, x.DType()), Div(x, Cast(n, x.DType()))))
		}
		return Mul(g, Sign(x))
	})
	opdef.Lookup(OpAbs).DType = dtToReal(opdef.NumericOrComplex)
	opdef.Lookup(OpAbs).C128 = func(x []complex128) complex128 { return complex(cmplx.Abs(x[0]), 0) }
	OpSign = unary("Sign", "-1, 0 or 1 by the sign of x (NaN and -0 stay)", numeric, 1, scalar.Sign[float64], scalar.Sign[int64],
		func(n, x, g *graph.Node) *graph.Node { return ZerosLike(x) })
	OpExp = unary("Exp", "e ** x", floats, 8, math.Exp, nil, func(n, x, g *graph.Node) *graph.Node { return Mul(g, cj(n)) }, iv(-5, 5))
	OpLog = unary("Log", "natural logarithm (complex: the principal branch, imaginary part in (-pi, pi])", floats, 8, math.Log, nil, func(n, x, g *graph.Node) *graph.Node { return Div(g, cj(x)) }, iv(0.05, 10))
	OpSqrt = unary("Sqrt", "square root (complex: the principal root, real part >= 0)", floats, 1, math.Sqrt, nil, func(n, x, g *graph.Node) *graph.Node { return Div(g, cj(Mul(n, Scalar(n, 2)))) }, iv(0.05, 10))
	withComplex(OpExp, opdef.FloatsOrComplex, cmplx.Exp)
	withComplex(OpLog, opdef.FloatsOrComplex, cmplx.Log)
	withComplex(OpSqrt, opdef.FloatsOrComplex, cmplx.Sqrt)
	OpTanh = unary("Tanh", "hyperbolic tangent", floats, 8, math.Tanh, nil,
		func(n, x, g *graph.Node) *graph.Node { return Mul(g, Sub(Scalar(n, 1), Mul(n, n))) }, iv(-4, 4))
	OpSigmoid = unary("Sigmoid", "1 / (1 + e ** -x), without overflow", floats, 8, scalar.Sigmoid, nil,
		func(n, x, g *graph.Node) *graph.Node { return Mul(g, Mul(n, Sub(Scalar(n, 1), n))) }, iv(-8, 8))
	OpRelu = unary("Relu", "max(x, 0); NaN propagates", numeric, 1, func(x float64) float64 {
		if math.IsNaN(x) {
			return x
		}
		return math.Max(x, 0)
	}, func(x int64) int64 { return max(x, 0) }, func(n, x, g *graph.Node) *graph.Node { return Where(Greater(x, zero(x)), g, zero(g)) })
	OpSin = unary("Sin", "sine", floats, 8, math.Sin, nil, func(n, x, g *graph.Node) *graph.Node { return Mul(g, Cos(x)) }, iv(-7, 7))
	OpCos = unary("Cos", "cosine", floats, 8, math.Cos, nil, func(n, x, g *graph.Node) *graph.Node { return Neg(Mul(g, Sin(x))) }, iv(-7, 7))

	OpWhere = define(&opdef.Def{Name: "Where", Doc: "a where cond, else b", Arity: 3, Kind: opdef.Elementwise, DType: dtWhere, Shape: shBroadcast,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			c, a, b := in(n, 0), in(n, 1), in(n, 2)
			return each(need, nil,
				func() *graph.Node { return sumTo(Where(c, g, zero(g)), a) },
				func() *graph.Node { return sumTo(Where(c, zero(g), g), b) })
		},
		F64: func(x []float64) float64 {
			if x[0] != 0 {
				return x[1]
			}
			return x[2]
		},
		I64: func(x []int64) int64 {
			if x[0] != 0 {
				return x[1]
			}
			return x[2]
		},
		C128: func(x []complex128) complex128 {
			if x[0] != 0 {
				return x[1]
			}
			return x[2]
		}})
	OpCast = define(&opdef.Def{Name: "Cast", Doc: "conversion to another dtype: truncating and saturating to integers, NaN to 0, x != 0 to bool (complex: either part); complex to a number keeps the real part", Arity: 1, Kind: opdef.Elementwise,
		DType: dtCast, Shape: shCast, Ref: refCast,
		Grad: unaryGrad(func(n, x, g *graph.Node) *graph.Node { return Cast(g, x.DType()) })})
	OpStopGradient = define(&opdef.Def{Name: "StopGradient", Doc: "x; no gradient flows through it", Arity: 1, Kind: opdef.Elementwise, DType: sameDType(anyType), Shape: shSame,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node { return []*graph.Node{nil} },
		F64:  func(x []float64) float64 { return x[0] },
		I64:  func(x []int64) int64 { return x[0] },
		C128: func(x []complex128) complex128 { return x[0] }})
}

func dtWhere(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	if err := noAttr(attr); err != nil {
		return 0, err
	}
	if in[0] != tensor.Bool {
		return 0, dtypeErr("condition must be bool, got %v; compare with ops.NotEqual(x, ops.Scalar(x, 0))", in[0])
	}
	if in[1] != in[2] {
		return 0, mixedErr(in[1], in[2])
	}
	if err := opdef.ComputeOrComplex.Check(in[1:]); err != nil {
		return 0, err
	}
	return in[1], nil
}

func dtCast(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, ok := attr.(opdef.CastAttr)
	if !ok {
		return 0, argErr("needs a CastAttr attribute, got %T", attr)
	}
	if !a.To.Valid() {
		return 0, dtypeErr("invalid target dtype %v", a.To)
	}
	return a.To, nil
}

func shCast(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	if _, ok := attr.(opdef.CastAttr); !ok {
		return nil, argErr("needs a CastAttr attribute, got %T", attr)
	}
	return in[0].Clone(), nil
}

// refCast converts as the backends do: floats to integers truncate toward
// zero and saturate at the target's range (NaN gives 0), integers to
// narrower integers wrap, anything to bool is x != 0 (a complex x: either
// part non-zero), bools are 0 or 1; a complex number to another real dtype
// converts its real part (the imaginary part is dropped, as NumPy does with
// a ComplexWarning), a real number to complex is x+0i.
func refCast(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x, to := in[0], n.DType()
	out := opdef.NewValue(to, x.Shape)
	for p := 0; p < x.Len(); p++ {
		switch {
		case to.IsComplex():
			out.C[p] = x.Complex(p) // rounds in Round
		case to == tensor.Bool && x.DType.IsComplex():
			out.F[p] = opdef.Bool(x.Complex(p) != 0)
		case to == tensor.Bool:
			out.F[p] = opdef.Bool(x.Float(p) != 0)
		case to.IsInt() && x.DType.IsInt():
			out.I[p] = x.I[p] // wraps in Round
		case to.IsInt():
			out.I[p] = tensor.FloatToIntType(math.Trunc(x.Float(p)), to)
		default:
			out.F[p] = x.Float(p)
		}
	}
	return out, nil
}

// binary builds an elementwise op of two operands, promoting their dtypes
// within a kind first (int32 with int64 gives int64; float32 with float64
// gives float64; kinds never mix).
func binary(op graph.Op, a, b *graph.Node) *graph.Node {
	d := opdef.Lookup(op)
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
// saturate (NaN gives 0); anything to Bool is x != 0 (a complex x is true
// when either part is non-zero, as NumPy's astype and Python's bool;
// PyTorch 1.13 looks at the real part only); Bool to numbers is
// 0 or 1; a real number to complex is x+0i; complex to any other real dtype
// keeps the real part and drops the imaginary part (as NumPy's astype, which
// warns), then converts it as from float (use Abs, Real or Imag to say
// which real number is meant). Casting to x's own dtype returns x.
func Cast(x *graph.Node, dt tensor.DType) *graph.Node {
	if x.Valid() && x.DType() == dt {
		return x
	}
	return Apply(OpCast, opdef.CastAttr{To: dt}, x)
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

func loOf(dt tensor.DType) int64 { lo, _ := dt.IntRange(); return lo }
func hiOf(dt tensor.DType) int64 { _, hi := dt.IntRange(); return hi }

// representable reports whether v can be stored in dtype dt as it is.
func representable(dt tensor.DType, v float64) error {
	switch {
	case !dt.Valid():
		return fmt.Errorf("invalid dtype %v", dt)
	case dt.IsInt() && (v != math.Trunc(v) || math.IsInf(v, 0) || math.Abs(v) > float64(math.MaxInt64)):
		return fmt.Errorf("%v is not an integer; ops.Cast the operand to a float dtype first", v)
	case dt.IsInt() && dt != tensor.Int64 && (v > float64(hiOf(dt)) || v < float64(loOf(dt))):
		return fmt.Errorf("%v overflows %v", v, dt)
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

package ops

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/scalar"
)

// The Array API's elementwise math (and the activations of PyTorch's
// torch.nn.functional): rounding, remainders, logarithms and exponentials
// near zero, trigonometric and hyperbolic functions and their inverses,
// the error and gamma functions, activations, and the float
// classification tests. Semantics follow NumPy's ufuncs (special values
// -0, ±Inf and NaN included) unless a doc comment says otherwise.

// Op codes of the elementwise math ops.
var (
	OpFloor, OpCeil, OpRound, OpTrunc                        graph.Op
	OpRemainder, OpFmod, OpFloorDiv, OpAtan2                 graph.Op
	OpLog1p, OpExpm1, OpLog2, OpLog10, OpRsqrt, OpReciprocal graph.Op
	OpExp2                                                   graph.Op
	OpTan, OpAsin, OpAcos, OpAtan                            graph.Op
	OpSinh, OpCosh, OpAsinh, OpAcosh, OpAtanh                graph.Op
	OpErf, OpErfc, OpLgamma, OpDigamma, OpTrigamma           graph.Op
	OpSoftplus, OpGelu, OpGeluTanh, OpSilu                   graph.Op
	OpIsNaN, OpIsInf, OpIsFinite                             graph.Op
)

func init() {
	iv := func(lo, hi float64) opdef.Interval { return opdef.Interval{Lo: lo, Hi: hi} }
	// fn declares a float op of one operand: element function f, FLOPs,
	// test domain, and derivative rule d (dy/dx from the node n and its
	// operand x, multiplied by the cotangent g here).
	fn := func(name, doc string, flops float64, f func(float64) float64, dom opdef.Interval, d func(n, x *graph.Node) *graph.Node) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Elementwise, DType: sameDType(floats), Shape: shSame,
			FLOPs: flops, Domain: []opdef.Interval{dom},
			F64: func(x []float64) float64 { return f(x[0]) },
			Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
				return each(need, func() *graph.Node { return Mul(g, d(n, n.Input(0))) })
			}})
	}
	// rounding declares a rounding op: identity on integers, gradient 0
	// (as JAX and PyTorch: the function is piecewise constant).
	rounding := func(name, doc string, f func(float64) float64) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Elementwise, DType: sameDType(numeric), Shape: shSame,
			Domain: []opdef.Interval{iv(-5, 5)},
			F64:    func(x []float64) float64 { return f(x[0]) },
			I64:    func(x []int64) int64 { return x[0] },
			Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
				return each(need, func() *graph.Node { return ZerosLike(n.Input(0)) })
			}})
	}
	OpFloor = rounding("Floor", "the largest integer <= x", math.Floor)
	OpCeil = rounding("Ceil", "the smallest integer >= x", math.Ceil)
	OpRound = rounding("Round", "x rounded to the nearest integer, ties to even", math.RoundToEven)
	OpTrunc = rounding("Trunc", "x rounded toward zero", math.Trunc)

	divisor := []opdef.Interval{iv(-5, 5), {Lo: 0.5, Hi: 3, Signed: true}}
	intDivisor := []opdef.Interval{iv(-50, 50), iv(-7, 7)}
	OpRemainder = define(&opdef.Def{Name: "Remainder", Doc: "a - floor(a/b)*b: the sign of b (NumPy's mod, Python's %); integers: x%0 = 0",
		Arity: 2, Kind: opdef.Elementwise, DType: sameDType(numeric), Shape: shBroadcast, FLOPs: 4, Domain: divisor, IntDomain: intDivisor,
		F64: func(x []float64) float64 { return scalar.Remainder(x[0], x[1]) },
		I64: func(x []int64) int64 { return scalar.RemainderInt(x[0], x[1]) },
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := n.Input(0), n.Input(1)
			return each(need,
				func() *graph.Node { return SumTo(g, a.Shape()) },
				func() *graph.Node { return SumTo(Neg(Mul(g, FloorDiv(a, b))), b.Shape()) })
		}})
	OpFmod = define(&opdef.Def{Name: "Fmod", Doc: "C's fmod: a - trunc(a/b)*b, the sign of a; integers: x%0 = 0",
		Arity: 2, Kind: opdef.Elementwise, DType: sameDType(numeric), Shape: shBroadcast, FLOPs: 4, Domain: divisor, IntDomain: intDivisor,
		F64: func(x []float64) float64 { return math.Mod(x[0], x[1]) },
		I64: func(x []int64) int64 { return scalar.FmodInt(x[0], x[1]) },
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := n.Input(0), n.Input(1)
			return each(need,
				func() *graph.Node { return SumTo(g, a.Shape()) },
				func() *graph.Node { return SumTo(Neg(Mul(g, Trunc(Div(a, b)))), b.Shape()) })
		}})
	OpFloorDiv = define(&opdef.Def{Name: "FloorDiv", Doc: "floor(a/b) as NumPy's floor_divide (floats too); integers: x//0 = 0",
		Arity: 2, Kind: opdef.Elementwise, DType: sameDType(numeric), Shape: shBroadcast, FLOPs: 4, Domain: divisor, IntDomain: intDivisor,
		F64: func(x []float64) float64 { return scalar.FloorDiv(x[0], x[1]) },
		I64: func(x []int64) int64 { return scalar.FloorDivInt(x[0], x[1]) },
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need,
				func() *graph.Node { return ZerosLike(n.Input(0)) },
				func() *graph.Node { return ZerosLike(n.Input(1)) })
		}})
	OpAtan2 = define(&opdef.Def{Name: "Atan2", Doc: "the angle of the point (b, a): atan(a/b) in the right quadrant, in [-pi, pi]",
		Arity: 2, Kind: opdef.Elementwise, DType: sameDType(floats), Shape: shBroadcast, FLOPs: 8,
		Domain: []opdef.Interval{iv(-3, 3), {Lo: 0.2, Hi: 3, Signed: true}},
		F64:    func(x []float64) float64 { return math.Atan2(x[0], x[1]) },
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a, b := n.Input(0), n.Input(1)
			r := Add(Mul(a, a), Mul(b, b))
			return each(need,
				func() *graph.Node { return SumTo(Div(Mul(g, b), r), a.Shape()) },
				func() *graph.Node { return SumTo(Neg(Div(Mul(g, a), r)), b.Shape()) })
		}})

	one := func(x *graph.Node) *graph.Node { return Scalar(x, 1) }
	OpLog1p = fn("Log1p", "log(1 + x), accurate for small x", 8, math.Log1p, iv(-0.9, 5),
		func(n, x *graph.Node) *graph.Node { return Reciprocal(Add(x, one(x))) })
	OpExpm1 = fn("Expm1", "e ** x - 1, accurate for small x", 8, math.Expm1, iv(-3, 3),
		func(n, x *graph.Node) *graph.Node { return Add(n, one(n)) })
	OpLog2 = fn("Log2", "base-2 logarithm", 8, math.Log2, iv(0.05, 10),
		func(n, x *graph.Node) *graph.Node { return Reciprocal(Mul(x, Scalar(x, math.Ln2))) })
	OpLog10 = fn("Log10", "base-10 logarithm", 8, math.Log10, iv(0.05, 10),
		func(n, x *graph.Node) *graph.Node { return Reciprocal(Mul(x, Scalar(x, math.Ln10))) })
	OpExp2 = fn("Exp2", "2 ** x", 8, math.Exp2, iv(-5, 5),
		func(n, x *graph.Node) *graph.Node { return Mul(n, Scalar(n, math.Ln2)) })
	OpRsqrt = fn("Rsqrt", "1 / sqrt(x)", 2, func(x float64) float64 { return 1 / math.Sqrt(x) }, iv(0.05, 10),
		func(n, x *graph.Node) *graph.Node { return Mul(Scalar(n, -0.5), Mul(n, Mul(n, n))) })
	OpReciprocal = define(&opdef.Def{Name: "Reciprocal", Doc: "1 / x", Arity: 1, Kind: opdef.Elementwise, DType: sameDType(opdef.FloatsOrComplex), Shape: shSame,
		Domain: []opdef.Interval{{Lo: 0.2, Hi: 3, Signed: true}},
		F64:    func(x []float64) float64 { return 1 / x[0] },
		C128:   func(x []complex128) complex128 { return 1 / x[0] },
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return Neg(Mul(g, cj(Mul(n, n)))) })
		}})
	OpTan = fn("Tan", "tangent", 8, math.Tan, iv(-1.3, 1.3),
		func(n, x *graph.Node) *graph.Node { return Add(one(n), Mul(n, n)) })
	OpAsin = fn("Asin", "inverse sine, in [-pi/2, pi/2]", 8, math.Asin, iv(-0.95, 0.95),
		func(n, x *graph.Node) *graph.Node { return Rsqrt(Sub(one(x), Mul(x, x))) })
	OpAcos = fn("Acos", "inverse cosine, in [0, pi]", 8, math.Acos, iv(-0.95, 0.95),
		func(n, x *graph.Node) *graph.Node { return Neg(Rsqrt(Sub(one(x), Mul(x, x)))) })
	OpAtan = fn("Atan", "inverse tangent, in [-pi/2, pi/2]", 8, math.Atan, iv(-5, 5),
		func(n, x *graph.Node) *graph.Node { return Reciprocal(Add(one(x), Mul(x, x))) })
	OpSinh = fn("Sinh", "hyperbolic sine", 8, math.Sinh, iv(-4, 4),
		func(n, x *graph.Node) *graph.Node { return Cosh(x) })
	OpCosh = fn("Cosh", "hyperbolic cosine", 8, math.Cosh, iv(-4, 4),
		func(n, x *graph.Node) *graph.Node { return Sinh(x) })
	OpAsinh = fn("Asinh", "inverse hyperbolic sine", 8, math.Asinh, iv(-5, 5),
		func(n, x *graph.Node) *graph.Node { return Rsqrt(Add(Mul(x, x), one(x))) })
	OpAcosh = fn("Acosh", "inverse hyperbolic cosine, x >= 1", 8, math.Acosh, iv(1.05, 6),
		func(n, x *graph.Node) *graph.Node { return Rsqrt(Sub(Mul(x, x), one(x))) })
	OpAtanh = fn("Atanh", "inverse hyperbolic tangent, |x| < 1", 8, math.Atanh, iv(-0.95, 0.95),
		func(n, x *graph.Node) *graph.Node { return Reciprocal(Sub(one(x), Mul(x, x))) })
	// d/dx erf x = 2/sqrt(pi) e^(-x²)
	gauss := func(x *graph.Node) *graph.Node { return Mul(Scalar(x, 2/math.SqrtPi), Exp(Neg(Mul(x, x)))) }
	OpErf = fn("Erf", "the error function", 8, math.Erf, iv(-3, 3), func(n, x *graph.Node) *graph.Node { return gauss(x) })
	OpErfc = fn("Erfc", "1 - erf(x), accurate for large x", 8, math.Erfc, iv(-3, 3), func(n, x *graph.Node) *graph.Node { return Neg(gauss(x)) })
	OpLgamma = fn("Lgamma", "log |gamma(x)|", 16, scalar.Lgamma, iv(0.1, 8), func(n, x *graph.Node) *graph.Node { return Digamma(x) })
	OpDigamma = fn("Digamma", "the derivative of lgamma (psi)", 16, scalar.Digamma, iv(0.2, 8), func(n, x *graph.Node) *graph.Node { return Trigamma(x) })
	OpTrigamma = define(&opdef.Def{Name: "Trigamma", Doc: "the derivative of digamma; not differentiable itself", Arity: 1, Kind: opdef.Elementwise,
		DType: sameDType(floats), Shape: shSame, FLOPs: 16, Domain: []opdef.Interval{iv(0.2, 8)},
		F64: func(x []float64) float64 { return scalar.Trigamma(x[0]) }})

	OpSoftplus = fn("Softplus", "log(1 + e ** x), computed as max(x, 0) + log1p(e ** -|x|)", 16, scalar.Softplus, iv(-6, 6),
		func(n, x *graph.Node) *graph.Node { return Sigmoid(x) })
	// Gelu' = Φ(x) + x φ(x), with Φ the normal CDF and φ its density.
	OpGelu = fn("Gelu", "x Φ(x) = x/2 (1 + erf(x/√2)) (exact GELU)", 16, scalar.Gelu, iv(-4, 4),
		func(n, x *graph.Node) *graph.Node {
			cdf := Mul(Scalar(x, 0.5), Add(one(x), Erf(Mul(x, Scalar(x, 1/math.Sqrt2)))))
			pdf := Mul(Scalar(x, 1/math.Sqrt(2*math.Pi)), Exp(Mul(Scalar(x, -0.5), Mul(x, x))))
			return Add(cdf, Mul(x, pdf))
		})
	OpGeluTanh = fn("GeluTanh", "x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))) (GELU's tanh approximation)", 16, scalar.GeluTanh, iv(-4, 4),
		func(n, x *graph.Node) *graph.Node {
			x2 := Mul(x, x)
			t := Tanh(Mul(Scalar(x, scalar.GeluC), Add(x, Mul(Scalar(x, 0.044715), Mul(x2, x)))))
			du := Mul(Scalar(x, scalar.GeluC), Add(one(x), Mul(Scalar(x, 3*0.044715), x2)))
			return Add(Mul(Scalar(x, 0.5), Add(one(x), t)), Mul(Mul(Scalar(x, 0.5), x), Mul(Sub(one(t), Mul(t, t)), du)))
		})
	OpSilu = fn("Silu", "x sigmoid(x) (the swish activation)", 10, scalar.Silu, iv(-6, 6),
		func(n, x *graph.Node) *graph.Node {
			s := Sigmoid(x)
			return Mul(s, Add(one(x), Mul(x, Sub(one(s), s))))
		})

	class := func(name, doc string, f func(float64) bool, integer bool) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Elementwise, DType: toBool(numeric), Shape: shSame,
			F64: func(x []float64) float64 { return opdef.Bool(f(x[0])) },
			I64: func(x []int64) int64 { return int64(opdef.Bool(integer)) }})
	}
	OpIsNaN = class("IsNaN", "x is NaN (never, for integers)", math.IsNaN, false)
	OpIsInf = class("IsInf", "x is +Inf or -Inf (never, for integers)", scalar.IsInf, false)
	OpIsFinite = class("IsFinite", "x is neither NaN nor ±Inf (always, for integers)", scalar.IsFinite, true)
}

// Floor returns the largest integer not greater than x, elementwise
// (numpy.floor; integers are returned as they are). Its gradient is 0.
func Floor(x *graph.Node) *graph.Node { return Apply(OpFloor, nil, x) }

// Ceil returns the smallest integer not less than x (numpy.ceil).
func Ceil(x *graph.Node) *graph.Node { return Apply(OpCeil, nil, x) }

// Round rounds to the nearest integer, halves to even (numpy.round with
// decimals=0: Round(0.5) = 0, Round(1.5) = 2, Round(-2.5) = -2).
func Round(x *graph.Node) *graph.Node { return Apply(OpRound, nil, x) }

// Trunc rounds toward zero (numpy.trunc).
func Trunc(x *graph.Node) *graph.Node { return Apply(OpTrunc, nil, x) }

// Remainder returns a - FloorDiv(a, b)*b, whose sign is the divisor's
// (numpy.remainder, Python's %): Remainder(-1, 3) = 2, Remainder(1, -3) =
// -2. For floats Remainder(x, 0) is NaN; for integers it is 0 (NumPy
// warns and gives 0). Operands broadcast and promote as in Add.
func Remainder(a, b *graph.Node) *graph.Node { return binary(OpRemainder, a, b) }

// Fmod returns C's fmod: a - Trunc(a/b)*b, whose sign is the dividend's
// (numpy.fmod): Fmod(-1, 3) = -1. For floats Fmod(x, 0) is NaN; for
// integers it is 0.
func Fmod(a, b *graph.Node) *graph.Node { return binary(OpFmod, a, b) }

// FloorDiv returns Floor(a/b) (numpy.floor_divide, Python's //), for
// floats computed from Fmod as NumPy does so that FloorDiv(a, b)*b +
// Remainder(a, b) is a; integers: as Div, with x // 0 = 0. Its gradient
// is 0.
func FloorDiv(a, b *graph.Node) *graph.Node { return binary(OpFloorDiv, a, b) }

// Atan2 returns the angle in radians, in [-π, π], of the point (b, a):
// numpy.arctan2(a, b), with its signed-zero and infinity cases.
func Atan2(a, b *graph.Node) *graph.Node { return binary(OpAtan2, a, b) }

// Log1p returns log(1+x), accurate for |x| much below 1 (numpy.log1p).
func Log1p(x *graph.Node) *graph.Node { return Apply(OpLog1p, nil, x) }

// Expm1 returns e**x - 1, accurate for |x| much below 1 (numpy.expm1).
func Expm1(x *graph.Node) *graph.Node { return Apply(OpExpm1, nil, x) }

// Log2 returns the base-2 logarithm (numpy.log2).
func Log2(x *graph.Node) *graph.Node { return Apply(OpLog2, nil, x) }

// Exp2 returns 2**x (numpy.exp2): +Inf when the result overflows, 0
// when it underflows, NaN for NaN.
func Exp2(x *graph.Node) *graph.Node { return Apply(OpExp2, nil, x) }

// Log10 returns the base-10 logarithm (numpy.log10).
func Log10(x *graph.Node) *graph.Node { return Apply(OpLog10, nil, x) }

// Rsqrt returns 1/√x (torch.rsqrt).
func Rsqrt(x *graph.Node) *graph.Node { return Apply(OpRsqrt, nil, x) }

// Reciprocal returns 1/x (numpy.reciprocal; floats only, as integer
// reciprocals truncate to 0 for |x| > 1).
func Reciprocal(x *graph.Node) *graph.Node { return Apply(OpReciprocal, nil, x) }

// Tan returns the tangent (numpy.tan).
func Tan(x *graph.Node) *graph.Node { return Apply(OpTan, nil, x) }

// Asin returns the inverse sine, in [-π/2, π/2]; NaN outside [-1, 1]
// (numpy.arcsin).
func Asin(x *graph.Node) *graph.Node { return Apply(OpAsin, nil, x) }

// Acos returns the inverse cosine, in [0, π]; NaN outside [-1, 1]
// (numpy.arccos).
func Acos(x *graph.Node) *graph.Node { return Apply(OpAcos, nil, x) }

// Atan returns the inverse tangent, in [-π/2, π/2] (numpy.arctan).
func Atan(x *graph.Node) *graph.Node { return Apply(OpAtan, nil, x) }

// Sinh returns the hyperbolic sine (numpy.sinh).
func Sinh(x *graph.Node) *graph.Node { return Apply(OpSinh, nil, x) }

// Cosh returns the hyperbolic cosine (numpy.cosh).
func Cosh(x *graph.Node) *graph.Node { return Apply(OpCosh, nil, x) }

// Asinh returns the inverse hyperbolic sine (numpy.arcsinh).
func Asinh(x *graph.Node) *graph.Node { return Apply(OpAsinh, nil, x) }

// Acosh returns the inverse hyperbolic cosine; NaN below 1
// (numpy.arccosh).
func Acosh(x *graph.Node) *graph.Node { return Apply(OpAcosh, nil, x) }

// Atanh returns the inverse hyperbolic tangent: ±Inf at ±1, NaN beyond
// (numpy.arctanh).
func Atanh(x *graph.Node) *graph.Node { return Apply(OpAtanh, nil, x) }

// Erf returns the error function 2/√π ∫₀ˣ e^(-t²) dt (scipy.special.erf,
// math.erf).
func Erf(x *graph.Node) *graph.Node { return Apply(OpErf, nil, x) }

// Erfc returns 1 - Erf(x), accurate where Erf(x) is close to 1
// (scipy.special.erfc).
func Erfc(x *graph.Node) *graph.Node { return Apply(OpErfc, nil, x) }

// Lgamma returns log|Γ(x)| (scipy.special.gammaln, math.lgamma): +Inf at
// the poles 0, -1, -2, .... Its gradient is Digamma.
func Lgamma(x *graph.Node) *graph.Node { return Apply(OpLgamma, nil, x) }

// Digamma returns ψ(x) = d/dx log Γ(x) (scipy.special.digamma): NaN at
// the poles 0, -1, -2, ... (SciPy gives ±Inf at 0 and NaN at the
// negative integers; loom gives NaN at every pole). Its gradient is
// Trigamma.
func Digamma(x *graph.Node) *graph.Node { return Apply(OpDigamma, nil, x) }

// Trigamma returns ψ'(x), the derivative of Digamma
// (scipy.special.polygamma(1, x)): NaN at the poles. It is not
// differentiable in loom (Lgamma can be differentiated twice).
func Trigamma(x *graph.Node) *graph.Node { return Apply(OpTrigamma, nil, x) }

// Softplus returns log(1 + e**x) (torch.nn.functional.softplus with
// beta 1), computed as max(x, 0) + log1p(e**-|x|) so that it neither
// overflows nor loses precision for large |x|. Its gradient is Sigmoid.
func Softplus(x *graph.Node) *graph.Node { return Apply(OpSoftplus, nil, x) }

// Gelu returns the exact GELU x·Φ(x) = x/2·(1 + erf(x/√2))
// (torch.nn.functional.gelu).
func Gelu(x *graph.Node) *graph.Node { return Apply(OpGelu, nil, x) }

// GeluTanh returns GELU's tanh approximation x/2·(1 +
// tanh(√(2/π)·(x + 0.044715·x³))) (torch.nn.functional.gelu with
// approximate="tanh"), computed as the equal x·sigmoid(2√(2/π)·(x +
// 0.044715·x³)), which keeps its relative accuracy for negative x where
// 1 + tanh cancels.
func GeluTanh(x *graph.Node) *graph.Node { return Apply(OpGeluTanh, nil, x) }

// Silu returns x·sigmoid(x), the swish activation
// (torch.nn.functional.silu).
func Silu(x *graph.Node) *graph.Node { return Apply(OpSilu, nil, x) }

// IsNaN reports, elementwise as Bool, whether x is NaN (numpy.isnan;
// false for integers).
func IsNaN(x *graph.Node) *graph.Node { return Apply(OpIsNaN, nil, x) }

// IsInf reports whether x is +Inf or -Inf (numpy.isinf; false for
// integers).
func IsInf(x *graph.Node) *graph.Node { return Apply(OpIsInf, nil, x) }

// IsFinite reports whether x is neither NaN nor infinite (numpy.isfinite;
// true for integers).
func IsFinite(x *graph.Node) *graph.Node { return Apply(OpIsFinite, nil, x) }

// Clip limits x to [lo, hi] elementwise: Minimum(Maximum(x, lo), hi)
// (numpy.clip, with lo and hi broadcasting against x; NaN in x
// propagates). At a bound the gradient flows to x, as torch.clamp's.
func Clip(x, lo, hi *graph.Node) *graph.Node { return Minimum(Maximum(x, lo), hi) }

// LeakyRelu returns x where x > 0 and alpha·x elsewhere
// (torch.nn.functional.leaky_relu with negative_slope alpha); its
// gradient at 0 is alpha, as PyTorch's.
func LeakyRelu(x *graph.Node, alpha float64) *graph.Node {
	if _, bad := graph.Operands("LeakyRelu", x); bad != nil {
		return bad
	}
	return Where(Greater(x, Scalar(x, 0)), x, Mul(x, Scalar(x, alpha)))
}

// Elu returns x where x > 0 and alpha·(e**x - 1) elsewhere
// (torch.nn.functional.elu); its gradient at 0 is alpha.
func Elu(x *graph.Node, alpha float64) *graph.Node {
	if _, bad := graph.Operands("Elu", x); bad != nil {
		return bad
	}
	return Where(Greater(x, Scalar(x, 0)), x, Mul(Expm1(x), Scalar(x, alpha)))
}

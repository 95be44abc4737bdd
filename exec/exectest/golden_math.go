package exectest

import (
	"math"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// mathGoldenCases: the Array API's math (ops/math.go) where the
// generated cases, drawn from the test domains, do not reach: special
// values (NaN, ±Inf, the sign of zero), ties, negative and zero divisors,
// integer wrapping, and the composites Clip, LeakyRelu and Elu, which
// are no ops of their own. Compare does not see the sign of a zero, so
// the cases about -0 take the Reciprocal of the result: -Inf for -0,
// +Inf for +0.
func mathGoldenCases() []Case {
	f32, f64, i32, i64, b8 := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64, tensor.Bool
	nan, inf := math.NaN(), math.Inf(1)
	negz := math.Copysign(0, -1)
	one := func(name, source string, want *tensor.Tensor, build func(g *graph.Graph) ([]*graph.Node, exec.Feeds)) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: build}
	}
	un := func(t *tensor.Tensor, f func(*graph.Node) *graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, t)
			return []*graph.Node{f(ns[0])}, feeds
		}
	}
	bin := func(a, b *tensor.Tensor, f func(a, b *graph.Node) *graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, a, b)
			return []*graph.Node{f(ns[0], ns[1])}, feeds
		}
	}
	vec := func(dt tensor.DType, v ...float64) *tensor.Tensor { return Tensor(dt, v, len(v)) }
	recip := func(f func(*graph.Node) *graph.Node) func(*graph.Node) *graph.Node {
		return func(x *graph.Node) *graph.Node { return ops.Reciprocal(f(x)) }
	}
	recip2 := func(f func(a, b *graph.Node) *graph.Node) func(a, b *graph.Node) *graph.Node {
		return func(a, b *graph.Node) *graph.Node { return ops.Reciprocal(f(a, b)) }
	}

	// Rounding: halves, -0.4 (rounds to -0) and the specials.
	roundIn := []float64{-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.4, 2.7, nan, inf, -inf}
	var cs []Case
	for _, dt := range []tensor.DType{f32, f64} {
		cs = append(cs,
			one("floor-"+dt.Short(), "hand: floor of [-2.5,-1.5,-0.5,0.5,1.5,2.5,-0.4,2.7,NaN,Inf,-Inf]; NaN and ±Inf stay",
				vec(dt, -3, -2, -1, 0, 1, 2, -1, 2, nan, inf, -inf), un(vec(dt, roundIn...), ops.Floor)),
			one("ceil-"+dt.Short(), "hand: ceil of the same",
				vec(dt, -2, -1, 0, 1, 2, 3, 0, 3, nan, inf, -inf), un(vec(dt, roundIn...), ops.Ceil)),
			one("round-"+dt.Short(), "hand: halves to even (numpy.round: -2.5 -> -2, -1.5 -> -2, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2)",
				vec(dt, -2, -2, 0, 0, 2, 2, 0, 3, nan, inf, -inf), un(vec(dt, roundIn...), ops.Round)),
			one("trunc-"+dt.Short(), "hand: toward zero",
				vec(dt, -2, -1, 0, 0, 1, 2, 0, 2, nan, inf, -inf), un(vec(dt, roundIn...), ops.Trunc)),
		)
	}
	cs = append(cs,
		one("round-signed-zero", "NumPy: round(-0.5) = round(-0.4) = -0.0, round(0.5) = 0.0, so 1/round(x) is [-Inf, -Inf, +Inf]",
			vec(f32, -inf, -inf, inf), un(vec(f32, -0.5, -0.4, 0.5), recip(ops.Round))),
		one("ceil-trunc-signed-zero", "NumPy: ceil(-0.5) = trunc(-0.7) = -0.0: 1/x = -Inf; floor(0.5) = +0: +Inf",
			vec(f64, -inf, -inf, inf), un(vec(f64, -0.5, -0.7, 0.5), func(x *graph.Node) *graph.Node {
				return ops.Reciprocal(ops.Concat(0, ops.Slice(ops.Ceil(x), ops.R(0, 1)), ops.Slice(ops.Trunc(x), ops.R(1, 2)), ops.Slice(ops.Floor(x), ops.R(2, 3))))
			})),
		one("round-int", "hand: rounding keeps integers as they are",
			vec(i32, -7, 0, 2147483647, -2147483648), un(vec(i32, -7, 0, 2147483647, -2147483648), func(x *graph.Node) *graph.Node {
				return ops.Round(ops.Floor(ops.Ceil(ops.Trunc(x))))
			})),
	)

	// Remainders: Python's divmod and math.fmod (float64 printed by
	// Python 3) of a = [7.5,-7.5,7.5,-7.5,6,1,-1,1] by
	// b = [2,2,-2,-2,-3,0.1,inf,-0.1], and x/0.
	da := vec(f64, 7.5, -7.5, 7.5, -7.5, 6, 1, -1, 1, 1, -1)
	db := vec(f64, 2, 2, -2, -2, -3, 0.1, inf, -0.1, 0, 0)
	cs = append(cs,
		one("remainder-f64", "Python divmod(a, b)[1]: the divisor's sign; remainder(-1, inf) = inf (NumPy); x mod 0 = NaN",
			vec(f64, 1.5, 0.5, -0.5, -1.5, 0, 0.09999999999999995, inf, -5.551115123125783e-17, nan, nan), bin(da, db, ops.Remainder)),
		one("floordiv-f64", "Python divmod(a, b)[0]: 1 // 0.1 = 9 (0.1 is above 1/10), 1 // -0.1 = -10; NumPy floor_divide(±1, 0) = ±inf",
			vec(f64, 3, -4, -4, 3, -2, 9, -1, -10, inf, -inf), bin(da, db, ops.FloorDiv)),
		one("fmod-f64", "Python math.fmod(a, b): the dividend's sign; fmod(x, 0) = NaN",
			vec(f64, 1.5, -1.5, 1.5, -1.5, 0, 0.09999999999999995, -1, 0.09999999999999995, nan, nan), bin(da, db, ops.Fmod)),
		one("remainder-f32", "Python divmod of [7.5,-7.5,7.5,-7.5] by [2,2,-2,-2] (exact in float32)",
			vec(f32, 1.5, 0.5, -0.5, -1.5), bin(vec(f32, 7.5, -7.5, 7.5, -7.5), vec(f32, 2, 2, -2, -2), ops.Remainder)),
		one("floordiv-f32", "Python divmod of the same",
			vec(f32, 3, -4, -4, 3), bin(vec(f32, 7.5, -7.5, 7.5, -7.5), vec(f32, 2, 2, -2, -2), ops.FloorDiv)),
		one("remainder-signed-zero", "NumPy: remainder(6, -3) = -0.0 (the divisor's sign), remainder(-6, 3) = +0.0, floor_divide(-0.0, 3) = -0.0; 1/x",
			vec(f64, -inf, inf, -inf), bin(vec(f64, 6, -6, negz), vec(f64, -3, 3, 3), func(a, b *graph.Node) *graph.Node {
				r := ops.Remainder(a, b)
				return ops.Reciprocal(ops.Concat(0, ops.Slice(r, ops.R(0, 2)), ops.Slice(ops.FloorDiv(a, b), ops.R(2, 3))))
			})),
		one("fmod-signed-zero", "C: fmod(-6, 3) = -0.0 (the dividend's sign); 1/x = -Inf",
			vec(f32, -inf), bin(vec(f32, -6), vec(f32, 3), recip2(ops.Fmod))),
	)
	// Integers: Python's // and % (C's % for Fmod); loom's x//0 = x%0 = 0;
	// MinInt // -1 wraps to MinInt; -2^31 = 3·(-715827883) + 1.
	ia := []float64{7, -7, 7, -7, 5, -2147483648, -2147483648}
	ib := []float64{2, 2, -2, -2, 0, -1, 3}
	cs = append(cs,
		one("remainder-i32", "Python: 7%2=1, -7%2=1, 7%-2=-1, -7%-2=-1; x%0=0 (loom); MinInt%-1=0; -2^31 % 3 = 1",
			vec(i32, 1, 1, -1, -1, 0, 0, 1), bin(vec(i32, ia...), vec(i32, ib...), ops.Remainder)),
		one("fmod-i32", "C's %: the dividend's sign, 7%-2=1, -7%2=-1; x%0=0, MinInt%-1=0 (loom); -2^31 % 3 = -2",
			vec(i32, 1, -1, 1, -1, 0, 0, -2), bin(vec(i32, ia...), vec(i32, ib...), ops.Fmod)),
		one("floordiv-i32", "Python //: 7//2=3, -7//2=-4, 7//-2=-4, -7//-2=3; x//0=0 (loom); MinInt//-1 wraps to MinInt; -2^31//3 = -715827883",
			vec(i32, 3, -4, -4, 3, 0, -2147483648, -715827883), bin(vec(i32, ia...), vec(i32, ib...), ops.FloorDiv)),
		one("remainder-i64-wrap", "hand: MinInt64 % -1 = 0, MinInt64 // -1 wraps to MinInt64 (as a sum with the remainder: MinInt64 + 0); Python: 9 // -4 = -3 and 9 % -4 = -3, sum -6",
			vec(i64, math.MinInt64, -6), bin(vec(i64, math.MinInt64, 9), vec(i64, -1, -4), func(a, b *graph.Node) *graph.Node {
				return ops.Add(ops.FloorDiv(a, b), ops.Mul(ops.Remainder(a, b), ops.Scalar(a, 1)))
			})),
	)

	// Atan2's signed zeros and infinities (C99 Annex F, as numpy.arctan2;
	// values by Python's math.atan2).
	cs = append(cs, one("atan2-specials", "Python math.atan2: (0,-0)=pi, (-0,-0)=-pi, (0,0)=0, (1,-inf)=pi, (inf,inf)=pi/4, (-1,0)=-pi/2, (NaN,1)=NaN",
		vec(f64, math.Pi, -math.Pi, 0, math.Pi, math.Pi/4, -math.Pi/2, nan),
		bin(vec(f64, 0, negz, 0, 1, inf, -1, nan), vec(f64, negz, negz, 0, -inf, inf, 0, 1), ops.Atan2)))

	// Logarithms and exponentials near their edges.
	cs = append(cs,
		one("log1p-expm1", "Python: log1p(1e-10) = 9.999999999500001e-11, expm1(1e-10) = 1.00000000005e-10 (relative checks: both scaled by 1e10); log1p(-1) = -inf; expm1(-inf) = -1, expm1(-1) = -0.6321205588285577",
			vec(f64, 0.9999999999500001, 1.00000000005, -inf, -1, -0.6321205588285577),
			un(vec(f64, 1e-10, -1, -inf, -1), func(x *graph.Node) *graph.Node {
				scale := ops.Scalar(x, 1e10)
				s := func(lo, hi int) *graph.Node { return ops.Slice(x, ops.R(lo, hi)) }
				return ops.Concat(0, ops.Mul(ops.Log1p(s(0, 1)), scale), ops.Mul(ops.Expm1(s(0, 1)), scale), ops.Log1p(s(1, 2)), ops.Expm1(s(2, 4)))
			})),
		one("log2-log10-rsqrt-reciprocal", "hand: log2 [8, 0, -1] = [3, -inf, NaN]; log10 [1000, 0.01] = [3, -2]; rsqrt [4, 0] = [0.5, inf]; 1/-0 = -inf",
			vec(f32, 3, -inf, nan, 3, -2, 0.5, inf, -inf),
			un(vec(f32, 8, 0, -1, 1000, 0.01, 4, 0, negz), func(x *graph.Node) *graph.Node {
				s := func(lo, hi int) *graph.Node { return ops.Slice(x, ops.R(lo, hi)) }
				return ops.Concat(0, ops.Log2(s(0, 3)), ops.Log10(s(3, 5)), ops.Rsqrt(s(5, 7)), ops.Reciprocal(s(7, 8)))
			})),
		one("trig-hyperbolic", "Python math: tan(1), asin(2)=NaN (domain), acos(1)=0, atan(inf)=pi/2, sinh(1), cosh(1), asinh(-2), acosh(2), acosh(0.5)=NaN, atanh(0.5), atanh(1)=inf, atanh(-1)=-inf",
			vec(f64, 1.5574077246549023, nan, 0, math.Pi/2, 1.1752011936438014, 1.5430806348152437, -1.4436354751788103, 1.3169578969248166, nan, 0.5493061443340548, inf, -inf),
			un(vec(f64, 1, 2, 1, inf, 1, 1, -2, 2, 0.5, 0.5, 1, -1), func(x *graph.Node) *graph.Node {
				s := func(lo, hi int) *graph.Node { return ops.Slice(x, ops.R(lo, hi)) }
				return ops.Concat(0, ops.Tan(s(0, 1)), ops.Asin(s(1, 2)), ops.Acos(s(2, 3)), ops.Atan(s(3, 4)), ops.Sinh(s(4, 5)), ops.Cosh(s(5, 6)),
					ops.Asinh(s(6, 7)), ops.Acosh(s(7, 9)), ops.Atanh(s(9, 12)))
			})),
		one("erf-erfc", "Python math: erf(inf) = 1, erf(-inf) = -1, erfc(-1.5) = 1.9661051464753108, erfc(-inf) = 2, erfc(inf) = 0; erfc(10) = 2.088487583762545e-45 (checked as erfc(10)·1e45)",
			vec(f64, 1, -1, 1.9661051464753108, 2, 0, 2.088487583762545),
			un(vec(f64, inf, -inf, -1.5, -inf, inf, 10), func(x *graph.Node) *graph.Node {
				s := func(lo, hi int) *graph.Node { return ops.Slice(x, ops.R(lo, hi)) }
				return ops.Concat(0, ops.Erf(s(0, 2)), ops.Erfc(s(2, 5)), ops.Mul(ops.Erfc(s(5, 6)), ops.Scalar(x, 1e45)))
			})),
		one("gamma-family", "lgamma: Python math.lgamma(-0.5) = 1.265512123484645, lgamma(0) = lgamma(-1) = lgamma(-inf) = inf; digamma(1) = -γ, ψ(-1/2) = 2 - γ - 2 ln 2, NaN at the poles 0 and -1; trigamma(1) = π²/6, NaN at -2",
			vec(f64, 1.265512123484645, inf, inf, inf, -0.5772156649015329, 2-0.5772156649015329-2*math.Ln2, nan, nan, math.Pi*math.Pi/6, nan),
			un(vec(f64, -0.5, 0, -1, -inf, 1, -0.5, 0, -1, 1, -2), func(x *graph.Node) *graph.Node {
				s := func(lo, hi int) *graph.Node { return ops.Slice(x, ops.R(lo, hi)) }
				return ops.Concat(0, ops.Lgamma(s(0, 4)), ops.Digamma(s(4, 8)), ops.Trigamma(s(8, 10)))
			})),
	)

	// Activations in their tails.
	for _, dt := range []tensor.DType{f32, f64} {
		cs = append(cs,
			one("softplus-tails-"+dt.Short(), "hand: softplus(-1000) = log1p(e^-1000) = 0, softplus(1000) = 1000 (no overflow), softplus(0) = ln 2; Python: softplus(-3) = log1p(e^-3) = 0.04858735157374206, softplus(3) = 3.048587351573742; NaN stays",
				vec(dt, 0, 1000, math.Ln2, 0.04858735157374206, 3.048587351573742, nan), un(vec(dt, -1000, 1000, 0, -3, 3, nan), ops.Softplus)),
			one("silu-gelu-"+dt.Short(), "Python: silu(-3) = -3/(1+e^3) = -0.14227761953270035, silu(-1000) = 0, silu(1000) = 1000; gelu(1) = 0.8413447460685429, gelu(-3) = -0.00404969409489031; gelu_tanh(1) = 0.8411919906082768, gelu_tanh(-1000) = 0",
				vec(dt, -0.14227761953270035, 0, 1000, 0.8413447460685429, -0.00404969409489031, 0.8411919906082768, 0),
				un(vec(dt, -3, -1000, 1000, 1, -3, 1, -1000), func(x *graph.Node) *graph.Node {
					s := func(lo, hi int) *graph.Node { return ops.Slice(x, ops.R(lo, hi)) }
					return ops.Concat(0, ops.Silu(s(0, 3)), ops.Gelu(s(3, 5)), ops.GeluTanh(s(5, 7)))
				})),
		)
	}

	// Classification.
	cls := []float64{0, negz, 1, nan, inf, -inf, 3e38, -1e-40}
	for _, dt := range []tensor.DType{f32, f64} {
		cs = append(cs,
			one("isnan-"+dt.Short(), "hand: only the NaN", vec(b8, 0, 0, 0, 1, 0, 0, 0, 0), un(vec(dt, cls...), ops.IsNaN)),
			one("isinf-"+dt.Short(), "hand: +Inf and -Inf (3e38 is finite in float32)", vec(b8, 0, 0, 0, 0, 1, 1, 0, 0), un(vec(dt, cls...), ops.IsInf)),
			one("isfinite-"+dt.Short(), "hand: all but NaN and ±Inf (a subnormal is finite)", vec(b8, 1, 1, 1, 0, 0, 0, 1, 1), un(vec(dt, cls...), ops.IsFinite)),
		)
	}
	for _, dt := range []tensor.DType{i32, i64} {
		x := vec(dt, 0, -5, 2147483647)
		cs = append(cs, one("classify-"+dt.Short(), "hand: integers are never NaN nor infinite: [isnan, isinf, isfinite] of [0, -5, 2^31-1]",
			vec(b8, 0, 0, 0, 0, 0, 0, 1, 1, 1), un(x, func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.IsNaN(x), ops.IsInf(x), ops.IsFinite(x))
			})))
	}

	// The composites.
	cs = append(cs,
		one("clip", "hand: clip([-2, 0.5, 3, NaN, -1, 1], -1, 1) = [-1, 0.5, 1, NaN, -1, 1]: NaN propagates (numpy.clip)",
			vec(f32, -1, 0.5, 1, nan, -1, 1), un(vec(f32, -2, 0.5, 3, nan, -1, 1), func(x *graph.Node) *graph.Node {
				return ops.Clip(x, ops.Scalar(x, -1), ops.Scalar(x, 1))
			})),
		one("clip-broadcast", "hand: rows of [[-3,0,3],[5,-5,1]] clipped to lo = [-1,0,1] and hi = [[0],[2]] (broadcast): [[-1,0,0],[2,0,1]]",
			Tensor(f64, []float64{-1, 0, 0, 2, 0, 1}, 2, 3), func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(f64, []float64{-3, 0, 3, 5, -5, 1}, 2, 3), vec(f64, -1, 0, 1), Tensor(f64, []float64{0, 2}, 2, 1))
				return []*graph.Node{ops.Clip(ns[0], ns[1], ns[2])}, feeds
			}),
		one("clip-int", "hand: clip of int32 [-7, 3, 9] to [0, 5] = [0, 3, 5]",
			vec(i32, 0, 3, 5), un(vec(i32, -7, 3, 9), func(x *graph.Node) *graph.Node {
				return ops.Clip(x, ops.Scalar(x, 0), ops.Scalar(x, 5))
			})),
		one("leaky-relu", "hand: leaky_relu([-2, -0.5, 0, 3, NaN], 0.1) = [-0.2, -0.05, 0, 3, NaN]",
			vec(f64, -0.2, -0.05, 0, 3, nan), un(vec(f64, -2, -0.5, 0, 3, nan), func(x *graph.Node) *graph.Node { return ops.LeakyRelu(x, 0.1) })),
		one("elu", "Python: elu(x, 1.5) = 1.5*(e^x - 1) for x <= 0: [-1 -> -0.9481808382428365, -inf -> -1.5, 0 -> 0], x for x > 0: 2 -> 2; NaN stays",
			vec(f32, -0.9481808382428365, -1.5, 0, 2, nan), un(vec(f32, -1, -inf, 0, 2, nan), func(x *graph.Node) *graph.Node { return ops.Elu(x, 1.5) })),
	)
	return cs
}

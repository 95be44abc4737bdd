package ops_test

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestMathGoldens checks the math ops' declared semantics (their float64
// and int64 references, which the conformance suite then holds every
// backend to) against values from NumPy's documentation and hand
// calculation, special values included.
func TestMathGoldens(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	negZero := math.Copysign(0, -1)
	un := func(f func(*graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0]) }
	}
	bin := func(f func(a, b *graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
		return func(xs ...*graph.Node) *graph.Node { return f(xs[0], xs[1]) }
	}
	cases := []struct {
		name string
		dt   tensor.DType
		f    func(xs ...*graph.Node) *graph.Node
		in   [][]float64
		want []float64
	}{
		// numpy.round: halves to even.
		{"Round", tensor.Float64, un(ops.Round), [][]float64{{0.5, 1.5, 2.5, -2.5, -0.4, 3.7}}, []float64{0, 2, 2, -2, negZero, 4}},
		{"Floor", tensor.Float64, un(ops.Floor), [][]float64{{-1.5, 1.5, negZero, inf}}, []float64{-2, 1, negZero, inf}},
		{"Ceil", tensor.Float64, un(ops.Ceil), [][]float64{{-1.5, 1.5, -0.2}}, []float64{-1, 2, negZero}},
		{"Trunc", tensor.Float64, un(ops.Trunc), [][]float64{{-1.7, 1.7}}, []float64{-1, 1}},
		{"Floor/int", tensor.Int32, un(ops.Floor), [][]float64{{-3, 4}}, []float64{-3, 4}},
		// numpy.remainder: the divisor's sign; a zero remainder is signed as b.
		{"Remainder", tensor.Float64, bin(ops.Remainder), [][]float64{{-1, 1, 5.5, 6, -6, 1}, {3, -3, 2, 3, 3, 0}}, []float64{2, -2, 1.5, 0, 0, nan}},
		{"Remainder/int", tensor.Int64, bin(ops.Remainder), [][]float64{{-1, 1, 7, -7, 5}, {3, -3, 2, 2, 0}}, []float64{2, -2, 1, 1, 0}},
		// numpy.fmod: the dividend's sign.
		{"Fmod", tensor.Float64, bin(ops.Fmod), [][]float64{{-1, 1, 5.5, -5.5}, {3, -3, 2, 2}}, []float64{-1, 1, 1.5, -1.5}},
		{"Fmod/int", tensor.Int32, bin(ops.Fmod), [][]float64{{-7, 7, 5}, {2, -2, 0}}, []float64{-1, 1, 0}},
		// numpy.floor_divide: -7 // 2 = -4, 7. // -2. = -4., 1 // 0 = inf.
		{"FloorDiv", tensor.Float64, bin(ops.FloorDiv), [][]float64{{-7, 7, 1, -1, 0.3}, {2, -2, 0, 0, 0.1}}, []float64{-4, -4, inf, -inf, 2}},
		{"FloorDiv/int", tensor.Int64, bin(ops.FloorDiv), [][]float64{{-7, 7, 1}, {2, -2, 0}}, []float64{-4, -4, 0}},
		// numpy.arctan2(1, -1) = 3π/4; (0, -0) = π (signed zeros).
		{"Atan2", tensor.Float64, bin(ops.Atan2), [][]float64{{1, -1, 0, 0}, {-1, -1, negZero, 1}}, []float64{3 * math.Pi / 4, -3 * math.Pi / 4, math.Pi, 0}},
		{"Log1p", tensor.Float64, un(ops.Log1p), [][]float64{{1e-10, -1}}, []float64{1e-10 - 5e-21, -inf}},
		{"Expm1", tensor.Float64, un(ops.Expm1), [][]float64{{1e-10}}, []float64{1e-10 + 5e-21}},
		{"Log2", tensor.Float64, un(ops.Log2), [][]float64{{8, 0.5, 0}}, []float64{3, -1, -inf}},
		{"Log10", tensor.Float64, un(ops.Log10), [][]float64{{1000, 0.01}}, []float64{3, -2}},
		{"Rsqrt", tensor.Float64, un(ops.Rsqrt), [][]float64{{4, 0.25, 0}}, []float64{0.5, 2, inf}},
		{"Reciprocal", tensor.Float64, un(ops.Reciprocal), [][]float64{{4, -0.5, negZero}}, []float64{0.25, -2, -inf}},
		// π/4 for tan, asin 1 = π/2, acos -1 = π, atan 1 = π/4.
		{"Tan", tensor.Float64, un(ops.Tan), [][]float64{{math.Pi / 4}}, []float64{math.Tan(math.Pi / 4)}},
		{"Asin", tensor.Float64, un(ops.Asin), [][]float64{{1, 2}}, []float64{math.Pi / 2, nan}},
		{"Acos", tensor.Float64, un(ops.Acos), [][]float64{{-1}}, []float64{math.Pi}},
		{"Atan", tensor.Float64, un(ops.Atan), [][]float64{{1, inf}}, []float64{math.Pi / 4, math.Pi / 2}},
		// sinh 1 = (e - 1/e)/2, cosh 0 = 1, asinh, acosh 1 = 0, atanh 1 = inf.
		{"Sinh", tensor.Float64, un(ops.Sinh), [][]float64{{1}}, []float64{(math.E - 1/math.E) / 2}},
		{"Cosh", tensor.Float64, un(ops.Cosh), [][]float64{{0}}, []float64{1}},
		{"Asinh", tensor.Float64, un(ops.Asinh), [][]float64{{0}}, []float64{0}},
		{"Acosh", tensor.Float64, un(ops.Acosh), [][]float64{{1, 0.5}}, []float64{0, nan}},
		{"Atanh", tensor.Float64, un(ops.Atanh), [][]float64{{1, 0.5}}, []float64{inf, 0.5493061443340549}}, // atanh(0.5) = ln(3)/2
		// erf(1) = 0.8427007929497149 (A&S 7.1); erfc(10) = 2.088487583762545e-45.
		{"Erf", tensor.Float64, un(ops.Erf), [][]float64{{1, -inf}}, []float64{0.8427007929497149, -1}},
		{"Erfc", tensor.Float64, un(ops.Erfc), [][]float64{{10}}, []float64{2.088487583762545e-45}},
		// lgamma(1/2) = ln √π; ψ(1) = -γ; ψ(1/2) = -γ - 2 ln 2; ψ'(1) = π²/6;
		// ψ'(1/2) = π²/2; ψ(-1/2) = ψ(3/2) + π cot(-π/2)... = 2 - γ - 2ln2 (DLMF 5.4).
		{"Lgamma", tensor.Float64, un(ops.Lgamma), [][]float64{{0.5, 1, 0}}, []float64{0.5723649429247001, 0, inf}},
		{"Digamma", tensor.Float64, un(ops.Digamma), [][]float64{{1, 0.5, -0.5, 0, -2}}, []float64{-0.5772156649015329, -1.9635100260214235, 0.03648997397857652, nan, nan}},
		{"Trigamma", tensor.Float64, un(ops.Trigamma), [][]float64{{1, 0.5}}, []float64{math.Pi * math.Pi / 6, math.Pi * math.Pi / 2}},
		// softplus(0) = ln 2; large |x| neither overflows nor loses e^-100.
		{"Softplus", tensor.Float64, un(ops.Softplus), [][]float64{{0, 1000, -100}}, []float64{math.Ln2, 1000, 3.720075976020836e-44}},
		// gelu(1) = Φ(1) = 0.8413447460685429; tanh form 0.8411919906082768.
		{"Gelu", tensor.Float64, un(ops.Gelu), [][]float64{{1, 0}}, []float64{0.8413447460685429, 0}},
		{"GeluTanh", tensor.Float64, un(ops.GeluTanh), [][]float64{{1}}, []float64{0.8411919906082768}},
		// silu(1) = sigmoid(1) = 0.7310585786300049.
		{"Silu", tensor.Float64, un(ops.Silu), [][]float64{{1, -1000}}, []float64{0.7310585786300049, negZero}},
		{"IsNaN", tensor.Float64, un(ops.IsNaN), [][]float64{{nan, inf, 1}}, []float64{1, 0, 0}},
		{"IsInf", tensor.Float64, un(ops.IsInf), [][]float64{{nan, -inf, 1}}, []float64{0, 1, 0}},
		{"IsFinite", tensor.Float64, un(ops.IsFinite), [][]float64{{nan, -inf, 1}}, []float64{0, 0, 1}},
		{"IsFinite/int", tensor.Int32, un(ops.IsFinite), [][]float64{{7}}, []float64{1}},
		{"IsNaN/int", tensor.Int32, un(ops.IsNaN), [][]float64{{7}}, []float64{0}},
		{"Clip", tensor.Float64, func(xs ...*graph.Node) *graph.Node {
			return ops.Clip(xs[0], ops.Scalar(xs[0], -1), ops.Scalar(xs[0], 2))
		}, [][]float64{{-3, 0.5, 5, nan}}, []float64{-1, 0.5, 2, nan}},
		{"LeakyRelu", tensor.Float64, func(xs ...*graph.Node) *graph.Node { return ops.LeakyRelu(xs[0], 0.1) }, [][]float64{{-2, 3}}, []float64{-0.2, 3}},
		// elu(-1) = e^-1 - 1.
		{"Elu", tensor.Float64, func(xs ...*graph.Node) *graph.Node { return ops.Elu(xs[0], 1) }, [][]float64{{-1, 2}}, []float64{1/math.E - 1, 2}},
	}
	for _, c := range cases {
		g := graph.New()
		ts := make([]*tensor.Tensor, len(c.in))
		for i, v := range c.in {
			ts[i] = exectest.Tensor(c.dt, v)
		}
		xs, feeds := exectest.Inputs(g, ts...)
		y := c.f(xs...)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := exectest.Eval([]*graph.Node{y}, feeds)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i, w := range c.want {
			v := got[0].Float64(i)
			ok := v == w && math.Signbit(v) == math.Signbit(w) || math.IsNaN(v) && math.IsNaN(w) ||
				math.Abs(v-w) <= 1e-14*math.Abs(w) && w != 0 // float64 references; digamma's recurrence sums up to ten terms
			if !ok {
				t.Errorf("%s element %d: got %v, want %v", c.name, i, v, w)
			}
		}
	}
}

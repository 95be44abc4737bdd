package exectest

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// poolCases are the cases of the pooling ops (ops/pool.go): goldens from
// PyTorch 1.13 (values and gradients of max_pool, avg_pool and the
// adaptive pools, with ties, NaN, padding, dilation, ceil mode and
// count_include_pad both ways, in 1-D, 2-D and 3-D), and a sweep of every
// pooling primitive in float32 and float64 over the same options against
// Eval (ops/pool.go's float64 reference).
func poolCases() []Case {
	return append(append(poolGoldenCases(), poolSweepCases()...), poolIntCases()...)
}

// poolIntCases run MaxPool in the integer dtypes (values over the whole
// dtype, so windows hold its extremes) against Eval: the 2x2 loop, and
// the general one with padding, dilation and ceil mode, including a
// window with no input tap (the dtype's minimum).
func poolIntCases() []Case {
	var cs []Case
	for _, dt := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8} {
		lo, hi := dt.IntRange()
		flo, fhi := float64(lo), float64(hi)+1
		if dt == tensor.Int64 {
			flo, fhi = -1e15, 1e15 // exactly representable in the float64 the inputs are drawn in
		}
		for i, c := range []struct {
			name   string
			shape  []int
			kernel []int
			opts   []ops.WindowOption
		}{
			{"2d-cnn-odd", []int{2, 3, 7, 9}, []int{2, 2}, nil},
			{"1d-dil-pad-ceil", []int{2, 2, 9}, []int{3}, []ops.WindowOption{ops.Stride(2), ops.Padding(1), ops.Dilation(3), ops.CeilMode}},
			// [2] padded by 1: the window's taps -1 and 2 both miss
			{"1d-no-taps", []int{1, 2, 2}, []int{2}, []ops.WindowOption{ops.Stride(1), ops.Padding(1), ops.Dilation(3)}},
		} {
			cs = append(cs, Case{
				Name: fmt.Sprintf("pool/max-int/%s/%s", c.name, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, c.shape, flo, fhi, uint64(1600+i)))
					return []*graph.Node{ops.MaxPool(ns[0], c.kernel, c.opts...)}, feeds
				},
			})
		}
	}
	return cs
}

// poolInput is the goldens' input: element i is (i*mul) % mod - 5 (so
// windows hold equal values), with NaN at the positions nan.
func poolInput(n, mod, mul int, nan ...int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*mul)%mod - 5)
	}
	for _, i := range nan {
		v[i] = math.NaN()
	}
	return v
}

// poolGolden is one golden: y = f(x) and dx, the gradient of
// sum(y * g) with g = 1, 2, 3, ... (row-major), both computed by torch
// in float64 from the same input (poolGoldenSource).
type poolGolden struct {
	yShape []int
	y, dx  []float64
}

// poolGoldenSource is the script that printed poolGoldens (run with
// /usr/bin/python3, torch 1.13.1, float64): each case's torch call is in
// its Source.
const poolGoldenSource = `import torch, math; F = torch.nn.functional
def case(name, shape, fn, nan_at=(), mod=11, mul=7):
    n = math.prod(shape); v = [float((i*mul) % mod - 5) for i in range(n)]
    for i in nan_at: v[i] = float('nan')
    x = torch.tensor(v, dtype=torch.float64).reshape(shape).requires_grad_()
    y = fn(x); print(name, list(y.shape), y.flatten().tolist())
    y.backward(torch.arange(1, y.numel()+1, dtype=torch.float64).reshape(y.shape)); print(name, x.grad.flatten().tolist())`

var nan = math.NaN()

var poolGoldens = map[string]poolGolden{
	"max1d-no-taps": {yShape: []int{1, 1, 1},
		y:  []float64{math.Inf(-1)},
		dx: []float64{0.0, 0.0}},
	"max2d": {yShape: []int{1, 2, 2, 2},
		y:  []float64{2.0, 5.0, 3.0, 5.0, nan, 2.0, 5.0, 3.0},
		dx: []float64{0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 6.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 8.0}},
	"max2d-s1-pad-ceil": {yShape: []int{1, 1, 3, 3},
		y:  []float64{4.0, 5.0, 5.0, 4.0, 4.0, 5.0, 3.0, 4.0, 2.0},
		dx: []float64{0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 8.0, 0.0, 0.0, 7.0, 0.0, 0.0, 9.0, 0.0}},
	"max1d-dil": {yShape: []int{2, 1, 4},
		y:  []float64{5.0, 5.0, 5.0, 0.0, 2.0, 5.0, 5.0, 5.0},
		dx: []float64{0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 21.0, 0.0, 0.0, 0.0}},
	"max3d": {yShape: []int{1, 1, 4, 2, 5},
		y:  []float64{1.0, 2.0, 4.0, 5.0, 5.0, 2.0, 3.0, 5.0, 5.0, 1.0, 3.0, 4.0, 4.0, 5.0, 5.0, 4.0, 5.0, 5.0, 5.0, 3.0, 5.0, 5.0, 4.0, 4.0, 4.0, 4.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 2.0, 4.0, 4.0, 0.0, 2.0, 3.0, 5.0, 5.0},
		dx: []float64{0.0, 2.0, 0.0, 38.0, 1.0, 0.0, 16.0, 0.0, 0.0, 7.0, 0.0, 0.0, 6.0, 0.0, 54.0, 10.0, 0.0, 35.0, 0.0, 0.0, 11.0, 0.0, 0.0, 0.0, 0.0, 72.0, 0.0, 0.0, 42.0, 0.0, 0.0, 20.0, 0.0, 0.0, 33.0, 0.0, 106.0, 0.0, 0.0, 118.0, 36.0, 0.0, 38.0, 0.0, 0.0, 37.0, 0.0, 138.0}},
	"avg2d-incl-ceil": {yShape: []int{1, 1, 3, 4},
		y:  []float64{0.1111111111111111, 0.4444444444444444, 0.0, -1.3333333333333333, 0.0, 0.1111111111111111, -0.5555555555555556, 0.16666666666666666, -0.1111111111111111, 0.1111111111111111, -0.3333333333333333, 0.3333333333333333},
		dx: []float64{0.1111111111111111, 0.3333333333333333, 0.2222222222222222, 0.5555555555555556, 0.3333333333333333, 1.0, 0.6666666666666667, 1.5555555555555554, 0.8888888888888888, 2.0, 1.1111111111111112, 3.1111111111111107, 0.5555555555555556, 1.2222222222222223, 0.6666666666666666, 1.4444444444444444, 0.7777777777777778, 2.111111111111111, 1.5555555555555556, 3.3333333333333335, 1.7777777777777777, 3.7777777777777777, 2.0, 5.333333333333334, 1.0, 2.111111111111111, 1.1111111111111112, 2.3333333333333335, 1.2222222222222223, 3.2222222222222223}},
	"avg2d-excl-ceil": {yShape: []int{1, 1, 3, 4},
		y:  []float64{0.25, 0.6666666666666666, 0.0, -4.0, 0.0, 0.1111111111111111, -0.5555555555555556, 0.3333333333333333, -0.25, 0.16666666666666666, -0.5, 1.0},
		dx: []float64{0.25, 0.5833333333333333, 0.3333333333333333, 0.8333333333333333, 0.5, 2.5, 1.0833333333333335, 2.083333333333333, 1.0, 2.2777777777777777, 1.2777777777777777, 5.944444444444445, 0.8333333333333334, 1.5, 0.6666666666666666, 1.4444444444444444, 0.7777777777777778, 3.444444444444444, 3.0833333333333335, 5.416666666666667, 2.3333333333333335, 4.944444444444445, 2.611111111111111, 11.277777777777779, 2.25, 3.916666666666667, 1.6666666666666667, 3.5, 1.8333333333333333, 7.833333333333333}},
	"avg1d-overhang": {yShape: []int{1, 2, 3},
		y:  []float64{-1.5, 1.5, 1.0, 0.5, -2.0, 3.0},
		dx: []float64{0.5, 0.5, 1.0, 1.0, 3.0, 2.0, 2.0, 2.5, 2.5, 6.0}},
	"avg3d-pad": {yShape: []int{1, 1, 4, 2, 2},
		y:  []float64{-0.4166666666666667, 0.5833333333333334, -0.25, -0.16666666666666666, -0.3333333333333333, 0.75, 0.0, -0.75, 0.6666666666666666, -0.08333333333333333, 0.08333333333333333, -0.6666666666666666, 0.5833333333333334, -0.25, -0.16666666666666666, -0.08333333333333333},
		dx: []float64{0.5, 0.5, 0.6666666666666666, 0.6666666666666666, 1.3333333333333335, 1.3333333333333335, 1.6666666666666665, 1.6666666666666665, 0.8333333333333334, 0.8333333333333334, 1.0, 1.0, 1.1666666666666667, 1.1666666666666667, 1.3333333333333335, 1.3333333333333335, 2.6666666666666665, 2.6666666666666665, 3.0, 3.0, 1.5, 1.5, 1.6666666666666665, 1.6666666666666665, 1.8333333333333333, 1.8333333333333333, 2.0, 2.0, 4.0, 4.0, 4.333333333333333, 4.333333333333333, 2.1666666666666665, 2.1666666666666665, 2.333333333333333, 2.333333333333333}},
	"avg3d-pad-excl": {yShape: []int{1, 1, 4, 2, 2},
		y:  []float64{-1.25, 1.75, -0.75, -0.5, -0.5, 1.125, 0.0, -1.125, 1.0, -0.125, 0.125, -1.0, 1.75, -0.75, -0.5, -0.25},
		dx: []float64{0.875, 0.875, 1.25, 1.25, 2.5, 2.5, 3.25, 3.25, 1.625, 1.625, 2.0, 2.0, 1.75, 1.75, 2.0, 2.0, 4.0, 4.0, 4.5, 4.5, 2.25, 2.25, 2.5, 2.5, 4.375, 4.375, 4.75, 4.75, 9.5, 9.5, 10.25, 10.25, 5.125, 5.125, 5.5, 5.5}},
	"adaptive-avg": {yShape: []int{1, 2, 3, 4},
		y:  []float64{-1.75, 0.5, -0.16666666666666666, 0.25, -0.6666666666666666, -0.5555555555555556, 0.0, -0.5, -0.5, -1.0, 0.16666666666666666, -1.25, 1.25, -0.16666666666666666, 1.0, 0.5, 0.5, 0.0, 0.5555555555555556, 0.6666666666666666, -0.25, 0.16666666666666666, -0.5, 1.75},
		dx: []float64{0.25, 0.5833333333333333, 0.3333333333333333, 0.8333333333333333, 0.5, 1.5, 1.0, 1.0833333333333335, 2.083333333333333, 1.0, 2.2777777777777777, 1.2777777777777777, 3.6111111111111107, 2.333333333333333, 0.8333333333333334, 1.5, 0.6666666666666666, 1.4444444444444444, 0.7777777777777778, 2.111111111111111, 1.3333333333333333, 3.0833333333333335, 5.416666666666667, 2.3333333333333335, 4.944444444444445, 2.611111111111111, 6.944444444444445, 4.333333333333333, 2.25, 3.916666666666667, 1.6666666666666667, 3.5, 1.8333333333333333, 4.833333333333333, 3.0, 3.25, 5.583333333333334, 2.3333333333333335, 4.833333333333334, 2.5, 6.5, 4.0, 6.083333333333334, 10.416666666666668, 4.333333333333334, 8.944444444444445, 4.611111111111111, 11.944444444444445, 7.333333333333334, 2.8333333333333335, 4.833333333333334, 2.0, 4.111111111111111, 2.111111111111111, 5.444444444444445, 3.3333333333333335, 8.083333333333334, 13.75, 5.666666666666666, 11.61111111111111, 5.944444444444445, 15.277777777777779, 9.333333333333334, 5.25, 8.916666666666666, 3.6666666666666665, 7.5, 3.8333333333333335, 9.833333333333334, 6.0}},
	"adaptive-max": {yShape: []int{1, 2, 3, 4},
		y:  []float64{4.0, 6.0, 7.0, 7.0, 5.0, 6.0, 7.0, 4.0, 5.0, 7.0, 7.0, 4.0, 6.0, 7.0, 4.0, 5.0, 7.0, 7.0, 5.0, 6.0, 7.0, 7.0, 5.0, 6.0},
		dx: []float64{0.0, 0.0, 0.0, 0.0, 0.0, 7.0, 0.0, 1.0, 0.0, 0.0, 8.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 7.0, 0.0, 8.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 21.0, 0.0, 12.0, 0.0, 0.0, 13.0, 0.0, 0.0, 0.0, 0.0, 16.0, 0.0, 0.0, 32.0, 0.0, 15.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 19.0, 0.0, 0.0, 60.0, 0.0, 0.0, 0.0, 0.0, 44.0, 0.0, 0.0, 0.0, 0.0, 23.0, 0.0, 0.0}},
	"adaptive-avg1d": {yShape: []int{1, 1, 3},
		y:  []float64{-1.5, 1.5, -1.0},
		dx: []float64{0.5, 0.5, 1.0, 1.0, 1.5, 1.5}},
}

func poolGoldenCases() []Case {
	f32, f64 := tensor.Float32, tensor.Float64
	type gc struct {
		name, torch string
		dt          tensor.DType
		shape       []int
		mod, mul    int
		nan         []int
		f           func(x *graph.Node) *graph.Node
	}
	gcs := []gc{
		{"max2d", "F.max_pool2d(x, 2), NaN at 21 (ties: the first maximum; NaN wins)", f32, []int{1, 2, 4, 4}, 11, 7, []int{21},
			func(x *graph.Node) *graph.Node { return ops.MaxPool(x, []int{2, 2}) }},
		{"max2d-s1-pad-ceil", "F.max_pool2d(x, 3, 2, 1, ceil_mode=True)", f64, []int{1, 1, 5, 5}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.MaxPool(x, []int{3, 3}, ops.Stride(2), ops.Padding(1), ops.CeilMode)
			}},
		{"max1d-dil", "F.max_pool1d(x, 3, 2, 1, dilation=2, ceil_mode=True), NaN at 13 and 15 (the last NaN gets the gradient)", f32, []int{2, 1, 9}, 11, 7, []int{13, 15},
			func(x *graph.Node) *graph.Node {
				return ops.MaxPool(x, []int{3}, ops.Stride(2), ops.Padding(1), ops.Dilation(2), ops.CeilMode)
			}},
		{"max1d-no-taps", "F.max_pool1d(x, 2, 1, 1, dilation=3): x has 2 elements, the window's taps -1 and 2 miss it: -Inf, no gradient", f32, []int{1, 1, 2}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.MaxPool(x, []int{2}, ops.Stride(1), ops.Padding(1), ops.Dilation(3))
			}},
		{"max3d", "F.max_pool3d(x, 2, (1,2,1), (1,0,1), ceil_mode=True)", f64, []int{1, 1, 3, 4, 4}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.MaxPool(x, []int{2, 2, 2}, ops.Stride(1, 2, 1), ops.Padding(1, 0, 1), ops.CeilMode)
			}},
		{"avg2d-incl-ceil", "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=True)", f64, []int{1, 1, 5, 6}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.AvgPool(x, []int{3, 3}, ops.Stride(2), ops.Padding(1), ops.CeilMode)
			}},
		{"avg2d-excl-ceil", "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)", f32, []int{1, 1, 5, 6}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.AvgPool(x, []int{3, 3}, ops.Stride(2), ops.Padding(1), ops.CeilMode, ops.ExcludePad)
			}},
		{"avg1d-overhang", "F.avg_pool1d(x, 2, 2, ceil_mode=True): the last window overhangs the input, divisor 1", f64, []int{1, 2, 5}, 11, 7, nil,
			func(x *graph.Node) *graph.Node { return ops.AvgPool(x, []int{2}, ops.CeilMode) }},
		{"avg3d-pad", "F.avg_pool3d(x, (2,3,2), (1,2,2), (1,1,0), count_include_pad=True)", f32, []int{1, 1, 3, 3, 4}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.AvgPool(x, []int{2, 3, 2}, ops.Stride(1, 2, 2), ops.Padding(1, 1, 0))
			}},
		{"avg3d-pad-excl", "F.avg_pool3d(x, (2,3,2), (1,2,2), (1,1,0), count_include_pad=False)", f64, []int{1, 1, 3, 3, 4}, 11, 7, nil,
			func(x *graph.Node) *graph.Node {
				return ops.AvgPool(x, []int{2, 3, 2}, ops.Stride(1, 2, 2), ops.Padding(1, 1, 0), ops.ExcludePad)
			}},
		{"adaptive-avg", "F.adaptive_avg_pool2d(x, (3,4))", f64, []int{1, 2, 5, 7}, 11, 7, nil,
			func(x *graph.Node) *graph.Node { return ops.AdaptiveAvgPool(x, 3, 4) }},
		{"adaptive-avg1d", "F.adaptive_avg_pool1d(x, 3): divisible, one AvgPool", f32, []int{1, 1, 6}, 11, 7, nil,
			func(x *graph.Node) *graph.Node { return ops.AdaptiveAvgPool(x, 3) }},
		{"adaptive-max", "F.adaptive_max_pool2d(x, (3,4)), x[i] = (5i) % 13 - 5", f32, []int{1, 2, 5, 7}, 13, 5, nil,
			func(x *graph.Node) *graph.Node { return ops.AdaptiveMaxPool(x, 3, 4) }},
	}
	var cs []Case
	// The sign of a zero maximum is the first zero's: 1/y shows it.
	negz := math.Copysign(0, -1)
	for _, dt := range floatTypes {
		cs = append(cs, Case{
			Name:   "pool/golden/max2d-signed-zero/" + dt.Short(),
			Source: "torch 1.13: 1/F.max_pool2d(tensor([-0.,0.,0.,-0.,0.,-0.,-0.,-0.]).reshape(1,1,2,4), 2) = [-inf, inf], indices [0, 2]",
			Want:   []*tensor.Tensor{Tensor(dt, []float64{math.Inf(-1), math.Inf(1)}, 1, 1, 1, 2)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(dt, []float64{negz, 0, 0, negz, 0, negz, negz, negz}, 1, 1, 2, 4))
				y := ops.MaxPool(ns[0], []int{2, 2})
				return []*graph.Node{ops.Div(ops.OnesLike(y), y)}, feeds
			},
		})
	}
	for _, c := range gcs {
		gold := poolGoldens[c.name]
		n := tensor.Shape(c.shape).Size()
		gv := make([]float64, tensor.Shape(gold.yShape).Size())
		for i := range gv {
			gv[i] = float64(i + 1)
		}
		cs = append(cs, Case{
			Name:   "pool/golden/" + c.name,
			Source: "torch 1.13: " + c.torch + "; values and x.grad for the cotangent 1, 2, 3, ... (poolGoldenSource)",
			Want:   []*tensor.Tensor{Tensor(c.dt, gold.y, gold.yShape...), Tensor(c.dt, gold.dx, c.shape...)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(c.dt, poolInput(n, c.mod, c.mul, c.nan...), c.shape...), Tensor(c.dt, gv, gold.yShape...))
				y := c.f(ns[0])
				return []*graph.Node{y, autodiff.VJP([]*graph.Node{y}, ns[:1], ns[1:])[0]}, feeds
			},
		})
	}
	return cs
}

// poolSweepCases run the five primitives on inputs on a grid of halves
// (ties in most windows) with a NaN or two, in float32 and float64,
// against Eval.
func poolSweepCases() []Case {
	type sweep struct {
		name   string
		shape  []int
		kernel []int
		opts   []ops.WindowOption
		nan    bool
		dil    bool // Dilation set: no AvgPool
	}
	sweeps := []sweep{
		{"1d", []int{2, 3, 11}, []int{3}, []ops.WindowOption{ops.Stride(2), ops.Padding(1)}, true, false},
		{"1d-dil-ceil", []int{1, 2, 10}, []int{3}, []ops.WindowOption{ops.Stride(3), ops.Dilation(2), ops.CeilMode}, false, true},
		{"2d-cnn", []int{2, 3, 8, 8}, []int{2, 2}, nil, true, false},
		{"2d-cnn-odd", []int{2, 3, 7, 9}, []int{2, 2}, nil, true, false},
		{"2d-cnn-ceil", []int{2, 3, 7, 9}, []int{2, 2}, []ops.WindowOption{ops.CeilMode}, false, false},
		{"2d-overlap", []int{1, 2, 9, 8}, []int{3, 2}, []ops.WindowOption{ops.Stride(2, 1), ops.Padding(1, 1)}, true, false},
		{"2d-lohi", []int{1, 1, 6, 7}, []int{3, 3}, []ops.WindowOption{ops.Stride(2), ops.PaddingLoHi([]int{1, 0}, []int{0, 1}), ops.CeilMode}, false, false},
		{"2d-planes", []int{4, 16, 12, 12}, []int{2, 2}, []ops.WindowOption{ops.Stride(2)}, false, false},
		{"3d", []int{1, 2, 4, 5, 6}, []int{2, 3, 2}, []ops.WindowOption{ops.Stride(2, 2, 1), ops.Padding(1, 1, 0), ops.CeilMode}, true, false},
		{"3d-cnn", []int{2, 2, 2, 6, 6}, []int{1, 2, 2}, nil, false, false},
	}
	var cs []Case
	for si, s := range sweeps {
		for _, dt := range floatTypes {
			seed := uint64(1500 + si)
			input := func() *tensor.Tensor {
				x := Rand(tensor.Float64, s.shape, -3, 3, seed)
				for k := 0; k < x.Size(); k++ {
					v := math.Floor(2*x.Float64(k)) / 2
					if s.nan && (k%37 == 5 || k%37 == 6) {
						v = math.NaN() // two NaN neighbours: the last one gets the gradient
					}
					x.SetFloat64(k, v)
				}
				t, err := tensor.FromFloat64s(dt, mustValues(x), s.shape...)
				if err != nil {
					panic(err)
				}
				return t
			}
			for _, avg := range []bool{false, true} {
				if avg && s.dil {
					continue
				}
				for _, excl := range []bool{false, true} {
					if excl && !avg {
						continue
					}
					kind := "max"
					if avg {
						kind = "avg"
						if excl {
							kind = "avg-excl"
						}
					}
					cs = append(cs, Case{
						Name: fmt.Sprintf("pool/%s/%s/%s", kind, s.name, dt.Short()),
						Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
							opts := s.opts
							if excl {
								opts = append(append([]ops.WindowOption(nil), opts...), ops.ExcludePad)
							}
							if !avg {
								y := ops.MaxPool(g.Input("x", dt, s.shape...), s.kernel, opts...)
								x := y.Input(0)
								gy := g.Input("g", dt, y.Shape()...)
								h := g.Input("h", dt, s.shape...)
								return []*graph.Node{y, ops.Apply(ops.OpMaxPoolGrad, y.Attr(), x, gy), ops.Apply(ops.OpMaxPoolSelect, y.Attr(), x, h)},
									exec.Feeds{x: input(), gy: Rand(dt, y.Shape(), -1, 1, seed+1), h: Rand(dt, s.shape, -1, 1, seed+2)}
							}
							y := ops.AvgPool(g.Input("x", dt, s.shape...), s.kernel, opts...)
							x := y.Input(0)
							gy := g.Input("g", dt, y.Shape()...)
							a := y.Attr().(opdef.PoolAttr)
							a.Size = s.shape[2:]
							return []*graph.Node{y, ops.Apply(ops.OpAvgPoolGrad, a, gy)},
								exec.Feeds{x: input(), gy: Rand(dt, y.Shape(), -1, 1, seed+1)}
						},
					})
				}
			}
		}
	}
	return cs
}

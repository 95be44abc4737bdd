package exectest

import (
	"fmt"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// convCases are the cases of the convolutions (ops/conv.go): goldens from
// torch 1.13 (CPU, float64) and cases against Eval in both float dtypes.
func convCases() []Case {
	return append(convGoldens(), convRandomCases()...)
}

// convSeq is the deterministic operand of the goldens: element i is
// ((7i + 5seed) mod 13 - 6) / 4, exact in float32; the script that made
// the goldens builds the same tensors.
func convSeq(dt tensor.DType, seed int, shape ...int) *tensor.Tensor {
	n := 1
	for _, s := range shape {
		n *= s
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = float64((i*7+seed*5)%13-6) / 4
	}
	return Tensor(dt, v, shape...)
}

// The goldens are torch 1.13's, computed in float64 by this script at
// /usr/bin/python3 (seq is convSeq; the gradients are those of
// sum(y * seq(...)), i.e. autodiff.VJP with that cotangent):
//
//	# Golden values for exec/exectest/conv_cases.go (torch 1.13, float64).
//	import torch, torch.nn.functional as F
//	torch.set_default_dtype(torch.float64)
//	def seq(seed, *shape):
//	    n = 1
//	    for s in shape: n *= s
//	    return torch.tensor([((i*7 + seed*5) % 13 - 6) / 4.0 for i in range(n)]).reshape(shape)
//	def out(name, t):
//	    print(name, "=", "[]float64{" + ", ".join("%.17g" % v for v in t.flatten().tolist()) + "}", "//", list(t.shape))
//	# 1. conv1d + bias, stride 2, padding 1
//	x, w, b = seq(1, 2, 3, 7), seq(2, 4, 3, 3), seq(3, 4)
//	out("conv1d", F.conv1d(x, w, b, stride=2, padding=1))
//	# 2. conv2d groups 2, stride (2,1), dilation (1,2), padding lo (1,0) hi (2,1); grads of sum(y*r)
//	x, w = seq(4, 1, 4, 5, 4).requires_grad_(), seq(5, 4, 2, 3, 2).requires_grad_()
//	y = F.conv2d(F.pad(x, (0, 1, 1, 2)), w, stride=(2, 1), dilation=(1, 2), groups=2)
//	r = seq(6, *y.shape)
//	(y*r).sum().backward()
//	out("conv2d", y); out("conv2d_dx", x.grad); out("conv2d_dw", w.grad)
//	# 3. conv3d padding (1,0,1)
//	x, w = seq(7, 1, 2, 3, 4, 3), seq(8, 2, 2, 2, 3, 2)
//	out("conv3d", F.conv3d(x, w, padding=(1, 0, 1)))
//	# 4. depthwise conv2d, groups 3, padding 1, with grads
//	x, w = seq(9, 2, 3, 4, 4).requires_grad_(), seq(10, 3, 1, 3, 3).requires_grad_()
//	y = F.conv2d(x, w, padding=1, groups=3)
//	r = seq(11, *y.shape)
//	(y*r).sum().backward()
//	out("depthwise", y); out("depthwise_dx", x.grad); out("depthwise_dw", w.grad)
//	# 5. conv_transpose2d stride 2, padding (1,0), output_padding (1,1), groups 2
//	x, w = seq(12, 1, 4, 3, 2), seq(13, 4, 2, 3, 2)
//	out("transpose2d", F.conv_transpose2d(x, w, stride=2, padding=(1, 0), output_padding=(1, 1), groups=2))
//	# 6. conv_transpose1d dilation 2, padding 1, output_padding 1 (>= stride 1)
//	x, w = seq(14, 2, 2, 4), seq(15, 2, 3, 3)
//	out("transpose1d", F.conv_transpose1d(x, w, padding=1, output_padding=1, dilation=2))
func convGoldens() []Case {
	f32, f64 := tensor.Float32, tensor.Float64
	gold := func(name string, in []*tensor.Tensor, f func(x []*graph.Node) []*graph.Node, want ...*tensor.Tensor) Case {
		return Case{Name: "golden/" + name, Source: "torch 1.13 (see the script above convGoldens)", Want: want, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, in...)
			return f(ns), feeds
		}}
	}
	vjp := func(y *graph.Node, r *tensor.Tensor, xs ...*graph.Node) []*graph.Node {
		return append([]*graph.Node{y}, autodiff.VJP([]*graph.Node{y}, xs, []*graph.Node{y.Graph().Const(r)})...)
	}
	return []Case{
		gold("conv1d-bias", []*tensor.Tensor{convSeq(f32, 1, 2, 3, 7), convSeq(f32, 2, 4, 3, 3), convSeq(f32, 3, 4)},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.ConvBias(x[0], x[1], x[2], ops.Stride(2), ops.Padding(1))}
			},
			Tensor(f32, []float64{-0.125, -3.375, -6.5, -4.1875, 0.375, -0.6875, -1.6875, -0.6875, -2.375, -2.0625, -2.5625, -2.0625, -2.6875, 2.25, 3.875, 5.5, -3.75, -5.3125, -5.1875, -2.875, 1.875, 4.25, 4.875, 2.5, 1, 3.25, 2.75, -0.25, 5.8125, 3.875, 3.875, 1.875}, 2, 4, 4)),
		gold("conv2d-groups-asym", []*tensor.Tensor{convSeq(f64, 4, 1, 4, 5, 4), convSeq(f64, 5, 4, 2, 3, 2)},
			func(x []*graph.Node) []*graph.Node {
				y := ops.Conv(x[0], x[1], ops.Stride(2, 1), ops.Dilation(1, 2), ops.PaddingLoHi([]int{1, 0}, []int{2, 1}), ops.Groups(2))
				return vjp(y, convSeq(f64, 6, 1, 4, 3, 3), x[0], x[1])
			},
			Tensor(f64, []float64{-0.25, 2.0625, -1.9375, 2.5, -0.3125, -0.625, -3.625, 0.0625, -0.875, -2.125, 0.875, 0.3125, 0.1875, -1.1875, 1.375, 1.125, -1, -0.1875, -1.125, 0.125, -1.3125, 0.375, 5.3125, 1.125, 2, -2.6875, 2.1875, -1.5, -1.1875, 0.0625, 0.3125, -1.4375, -0.625, 1.75, -2.25, -0.4375}, 1, 4, 3, 3),
			Tensor(f64, []float64{0.75, -1.875, 1.75, -0.8125, 2.375, -1.25, 0.0625, -1.0625, -2.25, 0, 1.125, 0.75, -1.1875, -2.375, 2.0625, 2.875, -0.375, 1.875, -0.3125, -2.5625, -0.375, -0.375, -0.125, 0.6875, -1.75, -0.125, 1.5, 1.6875, -0.375, -0.375, 2.8125, 0.375, -0.125, 1.5, 3.3125, -2.1875, -0.375, 2.0625, 0.0625, -2.375, -2.5625, 0.4375, -0.375, -0.375, 2.875, -0.875, 0.3125, -1.1875, 0.75, -1.125, 1.0625, -2.25, -1.0625, 2.5, -2.5, 2.375, -0.8125, 1.375, -2.375, 0.75, 2.125, -0.375, -0.375, 0.4375, 1.4375, 0.5, -1, 1.8125, -0.5, 0.25, -0.25, 0.75, 0.25, -1.5, 1.6875, 0, 0.125, -0.75, 0.6875, 0.25}, 1, 4, 5, 4),
			Tensor(f64, []float64{-1.6875, 0.5625, -3.75, -0.6875, -1.9375, -3, 1.125, 1, 1.125, 2.4375, -2.3125, 0.1875, 3.125, 2.3125, 3.0625, 1.9375, -5.25, -2.875, 0.0625, 0.1875, 3.1875, 3.25, 1.5, 0.1875, -3.4375, -2.875, -0.1875, 1.9375, 3.75, 2.3125, -0.1875, 0.5625, -7.25, -5.0625, 2.1875, 0.375, -3.0625, -3, -7.75, -0.6875, 0.0625, 0.5625, 0.8125, 0.3125, 1.5625, -0.5625, -5.75, -3.9375}, 4, 2, 3, 2)),
		gold("conv3d", []*tensor.Tensor{convSeq(f32, 7, 1, 2, 3, 4, 3), convSeq(f32, 8, 2, 2, 2, 3, 2)},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Conv(x[0], x[1], ops.Padding(1, 0, 1))}
			},
			Tensor(f32, []float64{-1.625, -0.4375, 4.875, -0.5625, 1, 5.75, -3.5625, -1.0625, 3.4375, -3, -0.8125, 1.6875, 2.9375, -0.5, 4.9375, 0.625, -1.8125, 2.125, -3, -0.9375, 0.125, 4.625, -0.5, 2.0625, 2.875, -1.5625, 3.4375, -1.875, -0.25, -0.375, -0.25, 0, 3.0625, -1, -0.125, -0.3125, 1.0625, 0.8125, -1.5625, -0.5625, 2.4375, 1.125, -1.5, 1.5625, -2.4375, -1.0625, 0.375, 1, 2.4375, 1.3125, 1.125, -1.5, 0, -0.875, -1.0625, 1.1875, 3.0625, -1.375, 3.25, -2.0625, -0.625, -0.5, -0.75, -0.75}, 1, 2, 4, 2, 4)),
		gold("depthwise", []*tensor.Tensor{convSeq(f32, 9, 2, 3, 4, 4), convSeq(f32, 10, 3, 1, 3, 3)},
			func(x []*graph.Node) []*graph.Node {
				y := ops.Conv(x[0], x[1], ops.Padding(1), ops.Groups(3))
				return vjp(y, convSeq(f32, 11, 2, 3, 4, 4), x[0], x[1])
			},
			Tensor(f32, []float64{0.875, 0.4375, 1.6875, 0.5625, -2.25, -0.3125, -3.625, 0.0625, -2.5, 2.6875, -5.5, 3.5, -3.25, 2.875, 1, 1.25, -3.1875, 1.125, -2.0625, 0.6875, -2, -0.9375, 4.9375, 0.5, 2.75, -0.1875, 1.625, -2.4375, 2.3125, -3.125, 1.125, -0.375, 0.1875, 1.1875, 0.875, 0.125, 0.875, -4.125, 1.1875, -2.125, -1.5625, 1.6875, -1.125, 0.75, 0.6875, 0.8125, -0.1875, 0.5625, 2.5625, -2.9375, 4, -3.1875, 2.875, -0.875, 5.5625, -0.125, -2.25, -0.3125, -3.625, 0.0625, -3.25, 3.0625, -4.5, 1.5, 1.125, -0.75, -2.3125, -0.4375, -4.3125, 0.75, -0.6875, -0.625, -2, -0.9375, 4.9375, 0.5, 0.875, 0.1875, 2, -3.1875, -0.1875, 0.8125, 0.5, 0, -0.75, 3.0625, -0.5625, 1.5, 0.875, -4.125, 1.1875, -2.125, -3, 4, -3.5, 2}, 2, 3, 4, 4),
			Tensor(f32, []float64{3.0625, -2.4375, 1.375, -1.625, -2.875, 0.875, -5.6875, 4.375, -3.5, 5.5, -2.6875, 2.5, 0.5625, -0.1875, 1.0625, 0, 3, -4, 3.5, -2, -1.0625, -0.4375, 0.5625, -2.8125, 0.0625, 0.3125, 1.3125, 1.9375, -0.125, 2.1875, -1, 3.0625, 0.625, 0.3125, 0.9375, 0.1875, -1.5, 0.5625, -3.0625, 0.75, -1.875, -0.125, 1.125, -0.875, 0.125, 3.125, -2.875, 3, 3.3125, -3.0625, 4.8125, -2.4375, 1.8125, 0.3125, -0.5625, -0.25, -2.875, 0.875, -5.6875, 4.375, -2.375, 2.9375, -0.6875, 0.875, 0.1875, 0.9375, 0.3125, 0.625, 1.875, -3.625, 3.875, -3.5, -1.0625, -0.4375, 0.5625, -2.8125, -1.25, 1.9375, -1.25, 3.3125, -2, 3.5, -4, 3, 2.125, -1.1875, 4.125, -0.875, -1.5, 0.5625, -3.0625, 0.75, 0, -0.5, -0.8125, 0.1875}, 2, 3, 4, 4),
			Tensor(f32, []float64{-7.8125, 10.375, -5.125, -6.1875, -1.75, 1.3125, 4.4375, -9.1875, 13, -7.5625, 12.875, -8.125, -2.875, -5.1875, -0.25, 3.0625, -9.125, 10, -8.75, 14, -6.875, -7.4375, -2.0625, -2.375, 1.875, -8, 3.125}, 3, 1, 3, 3)),
		gold("transpose2d-outpad-groups", []*tensor.Tensor{convSeq(f64, 12, 1, 4, 3, 2), convSeq(f64, 13, 4, 2, 3, 2)},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.ConvTranspose(x[0], x[1], ops.Stride(2), ops.Padding(1, 0), ops.OutputPadding(1, 1), ops.Groups(2))}
			},
			Tensor(f64, []float64{-0.3125, -1.3125, 1.1875, -0.1875, 0, -1, -2.9375, 2, -0.6875, 0, -0.5625, -1.5, 0.9375, -0.375, 0, -1.5, 1.5625, 1.5, -1.0625, 0, -1.625, 2.375, 0.6875, -0.5625, 0, -1.75, 2.25, 0.625, -0.625, 0, 1, 0, 0.25, -1.125, 0, 2, 0.0625, 0.5, -2.1875, 0, 1.125, 0.1875, 0.375, -0.9375, 0, -0.1875, 2.875, 0.75, -1.8125, 0, -2, 2, 0.5, -0.75, 0, -2.125, 1.875, 0.4375, -0.8125, 0, 1.875, 0.4375, -0.75, -1.75, 0, 0, -0.375, 0.4375, 0.9375, 0, 1.5, 0.125, -1.125, -2.0625, 0, 0.0625, -0.1875, 1.3125, -3.75, 0, 1.125, -0.1875, -1.5, 2.5, 0, 0.9375, -0.375, -1.625, 2.375, 0, 0.5625, -0.875, 0.5625, -0.4375, 0, 1, -1.8125, 1, -0.9375, 0, 0.5625, -0.8125, 0.5625, -0.375, 0, 1, -1.6875, -0.625, 2.4375, 0, 0.5625, -0.75, -1.875, 2.125, 0, 0.375, -0.9375, -2, 2, 0}, 1, 4, 6, 5)),
		gold("transpose1d-dilated-outpad", []*tensor.Tensor{convSeq(f32, 14, 2, 2, 4), convSeq(f32, 15, 2, 3, 3)},
			func(x []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.ConvTranspose(x[0], x[1], ops.Padding(1), ops.OutputPadding(1), ops.Dilation(2))}
			},
			Tensor(f32, []float64{0.875, 0.125, -1.5, -0.625, 2.6875, 0.375, -2.625, 0.5625, -0.5, 2.125, 0.375, -2.625, -0.25, 0.5, -3.8125, 0.5, 1.6875, 0.5625, -3.875, 0.75, 0.375, -0.875, 0.125, 0.125, -0.125, -0.875, 2.375, -0.625, 0.375, 1, -1.25, 2.375, -0.625, -0.75, 0, 0.8125, 0.25, 0.625, 0.8125, 0.4375, 1, 0.625}, 2, 3, 7)),
	}
}

// convRandomCases run the three ops in both float dtypes against Eval:
// Conv, and its gradients through autodiff (ConvTranspose and
// ConvFilterGrad), on geometries that reach every CPU path (im2col blocks,
// the 1×1 window, depthwise loops) in 1 to 3 spatial dims.
func convRandomCases() []Case {
	geoms := []struct {
		name string
		x, w []int
		opts []ops.WindowOption
	}{
		{"1d-strided-dilated", []int{2, 4, 13}, []int{6, 2, 3}, []ops.WindowOption{ops.Stride(2), ops.Dilation(2), ops.PaddingLoHi([]int{2}, []int{1}), ops.Groups(2)}},
		{"2d", []int{2, 3, 9, 8}, []int{4, 3, 3, 3}, []ops.WindowOption{ops.Padding(1), ops.Stride(1, 2)}},
		{"2d-depthwise", []int{2, 4, 7, 7}, []int{8, 1, 3, 3}, []ops.WindowOption{ops.Groups(4), ops.Same}},
		{"2d-1x1", []int{2, 6, 5, 5}, []int{4, 6, 1, 1}, nil},
		{"3d", []int{1, 2, 4, 5, 5}, []int{3, 2, 2, 2, 3}, []ops.WindowOption{ops.Padding(1, 0, 1), ops.Stride(1, 1, 2)}},
		// Many channels at stride 1 (the CPU's shifted products).
		{"2d-wide", []int{4, 16, 8, 7}, []int{16, 16, 3, 3}, []ops.WindowOption{ops.PaddingLoHi([]int{1, 0}, []int{1, 2})}},
	}
	var cs []Case
	for gi, gm := range geoms {
		for _, dt := range floatTypes {
			gm, dt, seed := gm, dt, uint64(1500+10*gi)
			cs = append(cs, Case{Name: fmt.Sprintf("conv/%s/%s", gm.name, dt.Short()), Tol: tolFor(dt),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, gm.x, -1, 1, seed), Rand(dt, gm.w, -1, 1, seed+1))
					y := ops.Conv(ns[0], ns[1], gm.opts...)
					r := g.Const(Rand(dt, y.Shape(), -1, 1, seed+2))
					gr := autodiff.VJP([]*graph.Node{y}, ns, []*graph.Node{r})
					// ConvTranspose's builder on y: PyTorch's conv_transpose
					// with the filter read as [C_in, C_out/G, K...].
					t := ops.ConvTranspose(y, ns[1], gm.opts[:0]...)
					return append([]*graph.Node{y, t}, gr...), feeds
				}})
		}
	}
	return cs
}

// tolFor is the tolerance of sums of a few hundred products of values in
// [-1, 1].
func tolFor(dt tensor.DType) float64 {
	if dt == tensor.Float32 {
		return 1e-4
	}
	return 1e-11
}

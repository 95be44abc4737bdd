package cpu_test

import (
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkMaxPool runs MaxPool 2x2 (stride 2) and its gradient,
// MaxPoolGrad, in float32 at a CNN's sizes (the first and second pooling
// of an MNIST CNN, and the three of bench's cnn/train-step/b64: 28, 14
// and 7 pixels, the last with windows that do not tile the plane), on 1
// and 2 threads. Bytes: x and y read or written
// (forward); x, g and dx (gradient). PyTorch's twin (torch 1.13 CPU,
// /usr/bin/python3; median of 30 calls after 5 warm-ups), per thread
// count t and shape s, with x = torch.rand(s)*2-1:
//
//	torch.set_num_threads(t)
//	F.max_pool2d(x, 2)                                  # no grad: forward
//	F.max_pool2d(x, 2, return_indices=True)             # training's forward
//	torch.ops.aten.max_pool2d_with_indices_backward(g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx)
//
// PyTorch keeps the arg-max indices from its forward; MaxPoolGrad
// recomputes them from x, so it reads x again where PyTorch reads int64
// indices.
func BenchmarkMaxPool(b *testing.B) {
	for _, threads := range []int{1, 2} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range [][]int{{64, 32, 28, 28}, {128, 32, 28, 28}, {64, 64, 14, 14}, {128, 64, 14, 14}, {64, 16, 28, 28}, {64, 32, 14, 14}, {64, 64, 7, 7}, {64, 8, 28, 28}, {64, 16, 14, 14}} {
			for _, grad := range []bool{false, true} {
				name := "fwd"
				if grad {
					name = "grad"
				}
				b.Run(fmt.Sprintf("%s/%dx%dx%dx%d/t%d", name, s[0], s[1], s[2], s[3], threads), func(b *testing.B) {
					g := graph.New()
					x := g.Input("x", tensor.Float32, s...)
					y := ops.MaxPool(x, []int{2, 2})
					feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, s, -1, 1, 1)}
					xb := int64(tensor.Shape(s).Size() * 4)
					if !grad {
						benchRun(b, be, []*graph.Node{y}, feeds, xb+xb/4)
						return
					}
					gy := g.Input("g", tensor.Float32, y.Shape()...)
					feeds[gy] = exectest.Rand(tensor.Float32, y.Shape(), -1, 1, 2)
					benchRun(b, be, []*graph.Node{ops.Apply(ops.OpMaxPoolGrad, y.Attr(), x, gy)}, feeds, 2*xb+xb/4)
				})
			}
		}
		be.Close()
	}
}

// BenchmarkMaxPoolDilated runs the two large dilated pools of ONNX's
// pytorch-converted backend tests (test_MaxPool2d_stride_padding_dilation:
// 1x1x1000x1000, window 60x80, dilation, stride 10, padding 20;
// test_MaxPool1d_stride_padding_dilation: 1x1x220000, window 200,
// dilation and stride 10, padding 100) in float32, on the sliding path
// (poolslide.go) and on the direct window scan, side by side, on 1 and 2
// threads. Bytes: x read and y written.
func BenchmarkMaxPoolDilated(b *testing.B) {
	cases := []struct {
		name          string
		shape, k, pad []int
	}{
		{"2d-1000x1000-k60x80", []int{1, 1, 1000, 1000}, []int{60, 80}, []int{20, 20}},
		{"1d-220000-k200", []int{1, 1, 220000}, []int{200}, []int{100}},
	}
	for _, threads := range []int{1, 2} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range cases {
			for _, slide := range []bool{true, false} {
				path := "slide"
				if !slide {
					path = "direct"
				}
				b.Run(fmt.Sprintf("%s/%s/t%d", c.name, path, threads), func(b *testing.B) {
					defer cpu.SetSlidePool(slide)()
					g := graph.New()
					x := g.Input("x", tensor.Float32, c.shape...)
					tens := make([]int, len(c.k))
					for i := range tens {
						tens[i] = 10
					}
					y := ops.MaxPool(x, c.k, ops.Stride(tens...), ops.Dilation(tens...), ops.Padding(c.pad...))
					feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, c.shape, -1, 1, 1)}
					benchRun(b, be, []*graph.Node{y}, feeds, int64(tensor.Shape(c.shape).Size()+y.Shape().Size())*4)
				})
			}
		}
		be.Close()
	}
}

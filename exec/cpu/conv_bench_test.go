package cpu_test

import (
	"fmt"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// BenchmarkConv times the convolutions at the shapes of a ResNet stage
// (float32, batch 32, 56×56, 64 channels): the 3×3 convolution (stride 1,
// padding 1) forward, and forward plus both gradients (input and
// filter), the depthwise 3×3 and the 1×1 pointwise convolution, at 1 and
// 2 threads. GFLOP/s counts 2 per multiply-add of each convolution (a
// forward and backward is three of them). PyTorch's numbers at the same
// shapes come from exec/cpu/testdata/conv_torch.py. The mnist cases are
// the two convolutions of examples/onnx's CNN at batch 64, with their
// bias and ReLU (the shapes of the onnxruntime comparison,
// bench/cmd/onnxrt): few input channels, the direct kernel
// (convdirect.go) on AVX-512.
func BenchmarkConv(b *testing.B) {
	cases := []struct {
		name     string
		x        []int // nil: the ResNet stage's [32, 64, 56, 56]
		w        []int
		opts     []ops.WindowOption
		backward bool
		biasRelu bool // Relu(ConvBias(x, w, b)): an epilogue the direct kernel runs in cache
	}{
		{"conv3x3/fwd", nil, []int{64, 64, 3, 3}, []ops.WindowOption{ops.Padding(1)}, false, false},
		{"conv3x3/fwdbwd", nil, []int{64, 64, 3, 3}, []ops.WindowOption{ops.Padding(1)}, true, false},
		{"conv3x3-bias-relu/fwd", nil, []int{64, 64, 3, 3}, []ops.WindowOption{ops.Padding(1)}, false, true},
		{"depthwise3x3/fwd", nil, []int{64, 1, 3, 3}, []ops.WindowOption{ops.Padding(1), ops.Groups(64)}, false, false},
		{"depthwise3x3/fwdbwd", nil, []int{64, 1, 3, 3}, []ops.WindowOption{ops.Padding(1), ops.Groups(64)}, true, false},
		{"pointwise1x1/fwd", nil, []int{64, 64, 1, 1}, nil, false, false},
		{"pointwise1x1/fwdbwd", nil, []int{64, 64, 1, 1}, nil, true, false},
		{"mnist-1to8-bias-relu/fwd", []int{64, 1, 28, 28}, []int{8, 1, 3, 3}, []ops.WindowOption{ops.Padding(1)}, false, true},
		{"mnist-8to16-bias-relu/fwd", []int{64, 8, 14, 14}, []int{16, 8, 3, 3}, []ops.WindowOption{ops.Padding(1)}, false, true},
	}
	for _, threads := range []int{1, 2} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			b.Fatal(err)
		}
		defer be.Close()
		for _, c := range cases {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				g := graph.New()
				xs := c.x
				if xs == nil {
					xs = []int{32, 64, 56, 56}
				}
				x := g.Input("x", tensor.Float32, xs...)
				w := g.Input("w", tensor.Float32, c.w...)
				y := ops.Conv(x, w, c.opts...)
				feeds := exec.Feeds{
					x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 1),
					w: exectest.Rand(tensor.Float32, w.Shape(), -0.1, 0.1, 2),
				}
				if c.biasRelu {
					bias := g.Input("b", tensor.Float32, c.w[0])
					feeds[bias] = exectest.Rand(tensor.Float32, bias.Shape(), -1, 1, 4)
					y = ops.Relu(ops.ConvBias(x, w, bias, c.opts...))
				}
				outs := []*graph.Node{y}
				macs := float64(y.Shape().Size()) * float64(c.w[1]*c.w[2]*c.w[3])
				flops := 2 * macs
				if c.backward {
					dy := g.Input("dy", tensor.Float32, y.Shape()...)
					feeds[dy] = exectest.Rand(tensor.Float32, y.Shape(), -1, 1, 3)
					outs = append(outs, autodiff.VJP([]*graph.Node{y}, []*graph.Node{x, w}, []*graph.Node{dy})...)
					flops *= 3
				}
				b.ReportAllocs()
				benchRun(b, be, outs, feeds, 0)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

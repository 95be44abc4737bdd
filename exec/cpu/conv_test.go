package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// convShape is one convolution geometry of the sweep below.
type convShape struct {
	x, w []int // x [N, C, S...], w [O, C/G, K...]
	opts []ops.WindowOption
	what string
}

// convSweep covers every path of the kernels: the implicit im2col with
// one and several chunks of positions and row blocks (filter gradient),
// the 1×1 identity window, the depthwise loops (with a channel
// multiplier), strides, dilations, asymmetric padding, groups, 1 to 3
// spatial dims.
var convSweep = []convShape{
	{[]int{2, 3, 11}, []int{4, 3, 3}, []ops.WindowOption{ops.Padding(1)}, "1d"},
	{[]int{1, 4, 17}, []int{6, 2, 4}, []ops.WindowOption{ops.Stride(3), ops.Dilation(2), ops.PaddingLoHi([]int{2}, []int{0}), ops.Groups(2)}, "1d strided dilated grouped"},
	{[]int{2, 3, 7, 6}, []int{5, 3, 3, 2}, []ops.WindowOption{ops.Stride(2, 1), ops.PaddingLoHi([]int{1, 0}, []int{2, 1})}, "2d asymmetric"},
	{[]int{1, 6, 9, 9}, []int{6, 2, 3, 3}, []ops.WindowOption{ops.Groups(3), ops.Dilation(2), ops.Padding(2)}, "2d groups"},
	{[]int{2, 4, 8, 7}, []int{4, 1, 3, 3}, []ops.WindowOption{ops.Groups(4), ops.Padding(1)}, "depthwise"},
	{[]int{1, 3, 9, 8}, []int{6, 1, 3, 2}, []ops.WindowOption{ops.Groups(3), ops.Stride(2), ops.Padding(1, 2)}, "depthwise multiplier strided"},
	{[]int{2, 8, 5, 6}, []int{12, 8, 1, 1}, nil, "1x1"},
	{[]int{1, 8, 5, 6}, []int{12, 4, 1, 1}, []ops.WindowOption{ops.Groups(2)}, "1x1 grouped"},
	{[]int{1, 4, 9, 9}, []int{5, 4, 1, 1}, []ops.WindowOption{ops.Stride(2)}, "1x1 strided"},
	{[]int{1, 2, 5, 6, 4}, []int{3, 2, 2, 3, 2}, []ops.WindowOption{ops.Stride(1, 2, 1), ops.Padding(1, 0, 1)}, "3d"},
	{[]int{1, 2, 4, 5, 6}, []int{2, 1, 3, 3, 3}, []ops.WindowOption{ops.Groups(2), ops.Padding(1)}, "3d depthwise"},
	// Many positions (several chunks) and many rows (several row blocks).
	{[]int{2, 20, 40, 40}, []int{8, 20, 3, 3}, []ops.WindowOption{ops.Padding(1)}, "2d large"},
	{[]int{1, 160, 30, 30}, []int{4, 160, 1, 1}, nil, "1x1 large"},
	{[]int{1, 3, 3000}, []int{2, 3, 5}, []ops.WindowOption{ops.Stride(2), ops.Padding(3)}, "1d long"},
	// Filter gradient: two row blocks (576 rows) and three batch slices.
	{[]int{3, 64, 10, 9}, []int{5, 64, 3, 3}, []ops.WindowOption{ops.Padding(1)}, "2d wide"},
	{[]int{3, 8, 6, 6}, []int{4, 4, 3, 3}, []ops.WindowOption{ops.Groups(2), ops.Stride(2)}, "2d grouped batch slices"},
	// Shifted products (stride 1, >= 16 channels per group, N·G >= 4).
	{[]int{2, 32, 12, 30}, []int{6, 16, 3, 3}, []ops.WindowOption{ops.Groups(2), ops.PaddingLoHi([]int{1, 0}, []int{2, 1})}, "2d shifted grouped"},
	{[]int{4, 16, 5, 20, 40}, []int{3, 16, 2, 2, 3}, []ops.WindowOption{ops.Dilation(1, 2, 1), ops.Padding(1)}, "3d shifted dilated"},
	{[]int{4, 16, 130}, []int{5, 16, 5}, []ops.WindowOption{ops.Same}, "1d shifted"},
	{[]int{4, 32, 9, 10}, []int{8, 32, 3, 3}, []ops.WindowOption{ops.Padding(1)}, "2d shifted 32 channels"},
	// ... and transposed (>= 16 output channels per group).
	{[]int{2, 32, 10, 12}, []int{32, 16, 3, 3}, []ops.WindowOption{ops.Groups(2), ops.PaddingLoHi([]int{1, 0}, []int{2, 1})}, "2d shifted both ways"},
	{[]int{4, 16, 100}, []int{16, 16, 5}, []ops.WindowOption{ops.Dilation(2), ops.Padding(3)}, "1d shifted both ways dilated"},
	{[]int{2, 6, 20, 17}, []int{6, 1, 3, 5}, []ops.WindowOption{ops.Groups(6), ops.Dilation(2, 1), ops.PaddingLoHi([]int{2, 1}, []int{1, 2})}, "depthwise shifted both ways"},
	// Column products on the padded layout (stride 1, < 16 channels and
	// >= 8 outputs per group): a CNN's first layer, grouped and dilated,
	// and one of two chunks of positions and three batch slices.
	{[]int{3, 1, 28, 28}, []int{16, 1, 3, 3}, []ops.WindowOption{ops.Padding(1)}, "2d few channels"},
	{[]int{2, 6, 9, 11}, []int{24, 3, 3, 2}, []ops.WindowOption{ops.Groups(2), ops.Dilation(1, 2), ops.PaddingLoHi([]int{1, 0}, []int{2, 1})}, "2d few channels grouped dilated"},
	{[]int{3, 2, 40000}, []int{8, 2, 5}, []ops.WindowOption{ops.Padding(2)}, "1d few channels long"},
	// A kernel wider than the input, the padding making up the rest: taps
	// with no input position (ONNX's pytorch-converted test_Conv1d_pad2size1
	// panicked slicing their empty range).
	{[]int{1, 4, 1}, []int{4, 4, 5}, []ops.WindowOption{ops.Padding(2)}, "1d kernel wider than input"},
	{[]int{1, 2, 2, 1}, []int{3, 2, 3, 5}, []ops.WindowOption{ops.Padding(1, 2)}, "2d kernel wider than input"},
}

// TestConvAgainstReference runs Conv and its two gradients on every
// sweep geometry, in float32 and float64, at 1 and 3 threads, against the
// float64 reference (exectest.Eval).
func TestConvAgainstReference(t *testing.T) {
	for _, threads := range []int{1, 3} {
		if raceEnabled && threads == 1 {
			continue // one thread has no races to find; make test's -race run is long enough
		}
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		for i, c := range convSweep {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
				t.Run(fmt.Sprintf("%s/%s/threads%d", c.what, dt.Short(), threads), func(t *testing.T) {
					g := graph.New()
					x := g.Input("x", dt, c.x...)
					w := g.Input("w", dt, c.w...)
					y := ops.Conv(x, w, c.opts...)
					if !y.Valid() {
						t.Fatal(y.Err())
					}
					dy := g.Input("dy", dt, y.Shape()...)
					a := y.Attr().(opdef.ConvAttr)
					ta, fa := a, a
					ta.Size, fa.Size = c.x[2:], c.w[2:]
					dx := ops.Apply(ops.OpConvTranspose, ta, dy, w)
					dw := ops.Apply(ops.OpConvFilterGrad, fa, x, dy)
					feeds := exec.Feeds{
						x:  exectest.Rand(dt, x.Shape(), -1, 1, uint64(10*i+1)),
						w:  exectest.Rand(dt, w.Shape(), -1, 1, uint64(10*i+2)),
						dy: exectest.Rand(dt, dy.Shape(), -1, 1, uint64(10*i+3)),
					}
					outs := []*graph.Node{y, dx, dw}
					want, err := exectest.Eval(outs, feeds)
					if err != nil {
						t.Fatal(err)
					}
					p, err := exec.Compile(be, outs)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					got, err := p.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					tol := 1e-10
					if dt == tensor.Float32 {
						tol = 1e-4
					}
					for k, name := range []string{"Conv", "ConvTranspose", "ConvFilterGrad"} {
						if err := exectest.Compare(got[k], want[k], tol); err != nil {
							t.Errorf("%s: %v", name, err)
						}
					}
				})
			}
		}
	}
}

// TestConvCancel: a cancelled Run stops inside each convolution kernel
// (they check the context between work items and internal/gemm between
// its blocks) well before the kernel would end.
func TestConvCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("a few large convolutions")
	}
	be, err := cpu.New(cpu.Threads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	dt := tensor.Float32
	g := graph.New()
	x := g.Input("x", dt, 48, 64, 40, 40)
	w := g.Input("w", dt, 64, 64, 3, 3)
	y := ops.Conv(x, w, ops.Padding(1))
	dy := g.Input("dy", dt, y.Shape()...)
	a := y.Attr().(opdef.ConvAttr)
	ta, fa := a, a
	ta.Size, fa.Size = []int{40, 40}, []int{3, 3}
	feeds := exec.Feeds{x: exectest.Rand(dt, x.Shape(), -1, 1, 1), w: exectest.Rand(dt, w.Shape(), -1, 1, 2), dy: exectest.Rand(dt, dy.Shape(), -1, 1, 3)}
	for _, n := range []*graph.Node{y, ops.Apply(ops.OpConvTranspose, ta, dy, w), ops.Apply(ops.OpConvFilterGrad, fa, x, dy)} {
		t.Run(opdef.Lookup(n.Op()).Name, func(t *testing.T) {
			p, err := exec.Compile(be, []*graph.Node{n}, exec.IgnoreUnusedFeeds())
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			out := []*tensor.Tensor{tensor.Zeros(dt, n.Shape()...)}
			start := time.Now()
			if err := p.RunInto(context.Background(), feeds, out); err != nil {
				t.Fatal(err)
			}
			full := time.Since(start)
			ctx, cancel := context.WithTimeout(context.Background(), full/20)
			defer cancel()
			start = time.Now()
			err = p.RunInto(ctx, feeds, out)
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("cancelled run: %v, want the deadline's error", err)
			}
			if took > full/2 {
				t.Errorf("cancelled after %v, the run stopped after %v (a full run takes %v)", full/20, took, full)
			}
		})
	}
}

package cpu

import (
	"context"
	"fmt"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/gemm"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestEpilogue: a convolution's bias and ReLU (one fused step) run as the
// convolution kernel's epilogue where planEpilogues allows it, and the
// results are the bits of the same program run step by step
// (epiloguesOff), and within float32 rounding of the float64 reference
// (exectest.Eval). Where the result has another reader the fused step
// keeps its own kernel. The shapes take the direct kernel (convdirect.go:
// few input channels, 8 or more outputs) with whole images per item
// (batch 8) and with row blocks (batch 1). A per-channel bias and ReLU in
// place runs inside the shifted products (inKernel: chanEpilogueOf), with
// the same bits; other fused programs (the bias first, a bias along
// another axis, a result written to the output) run through the fused
// evaluator.
func TestEpilogue(t *testing.T) {
	cases := []struct {
		name     string
		batch    int
		groups   int
		build    func(x, w, b *graph.Node) []*graph.Node
		epis     int // epilogues planned on a machine with the direct kernel
		inKernel int // of which the kernel applies itself
	}{
		{"in place, then pooled", 8, 1, func(x, w, b *graph.Node) []*graph.Node {
			return []*graph.Node{ops.MaxPool(ops.Relu(ops.ConvBias(x, w, b, ops.Padding(1))), []int{2, 2})}
		}, 1, 1},
		{"in place, row blocks", 1, 1, func(x, w, b *graph.Node) []*graph.Node {
			return []*graph.Node{ops.MaxPool(ops.Relu(ops.ConvBias(x, w, b, ops.Padding(1))), []int{2, 2})}
		}, 1, 1},
		{"in place, 3 groups", 2, 3, func(x, w, b *graph.Node) []*graph.Node {
			return []*graph.Node{ops.MaxPool(ops.Relu(ops.ConvBias(x, w, b, ops.Padding(1), ops.Groups(3))), []int{2, 2})}
		}, 1, 1},
		{"in place, bias first", 8, 1, func(x, w, b *graph.Node) []*graph.Node {
			c := ops.Conv(x, w, ops.Padding(1))
			return []*graph.Node{ops.MaxPool(ops.Relu(ops.Add(ops.Reshape(b, 12, 1, 1), c)), []int{2, 2})}
		}, 1, 0},
		{"in place, bias along the width", 1, 1, func(x, w, b *graph.Node) []*graph.Node {
			c := ops.Conv(x, w, ops.Padding(1))
			return []*graph.Node{ops.MaxPool(ops.Relu(ops.Add(c, b)), []int{2, 2})}
		}, 1, 0},
		{"into the output", 8, 1, func(x, w, b *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Relu(ops.ConvBias(x, w, b, ops.Padding(1)))}
		}, 1, 0},
		{"result read twice", 8, 1, func(x, w, b *graph.Node) []*graph.Node {
			c := ops.Conv(x, w, ops.Padding(1))
			return []*graph.Node{ops.Relu(ops.Add(c, ops.Reshape(b, 12, 1, 1))), ops.Sum(c)}
		}, 0, 0},
	}
	for _, c := range cases {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads%d", c.name, threads), func(t *testing.T) {
				g := graph.New()
				x := g.Input("x", tensor.Float32, c.batch, 3, 13, 21)
				w := g.Input("w", tensor.Float32, 12*c.groups, 3/c.groups, 3, 3)
				bn := 12 * c.groups // one bias per output channel
				if c.name == "in place, bias along the width" {
					bn = 21
				}
				b := g.Input("b", tensor.Float32, bn)
				outs := c.build(x, w, b)
				feeds := exec.Feeds{
					x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 1),
					w: exectest.Rand(tensor.Float32, w.Shape(), -1, 1, 2),
					b: exectest.Rand(tensor.Float32, b.Shape(), -1, 1, 3),
				}
				be, err := New(Threads(threads))
				if err != nil {
					t.Fatal(err)
				}
				defer be.Close()
				run := func(off bool) ([]*tensor.Tensor, int, int) {
					epiloguesOff = off
					defer func() { epiloguesOff = false }()
					p, err := exec.Compile(be, outs)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					ex, err := be.Lower(p.Plan()) // the same lowering as the Program's
					if err != nil {
						t.Fatal(err)
					}
					got, err := p.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					inKernel := 0
					for _, ep := range ex.(*executable).epi {
						if ep.inKernel {
							inKernel++
						}
					}
					return got, len(ex.(*executable).epi), inKernel
				}
				got, epis, inKernel := run(false)
				plain, none, _ := run(true)
				want, wantIn := c.epis, c.inKernel
				if !gemm.ShiftAvailable[float32]() {
					want, wantIn = 0, 0 // the column-matrix kernels take no epilogue
				}
				if epis != want || inKernel != wantIn || none != 0 {
					t.Errorf("%d epilogues planned, %d in the kernel (%d with epiloguesOff), want %d and %d", epis, inKernel, none, want, wantIn)
				}
				ref, err := exectest.Eval(outs, feeds)
				if err != nil {
					t.Fatal(err)
				}
				for k := range outs {
					a, p := got[k].Float64s(), plain[k].Float64s()
					for i := range a {
						if a[i] != p[i] {
							t.Fatalf("output %d element %d: %v with the epilogue, %v step by step", k, i, a[i], p[i])
						}
					}
					if err := exectest.Compare(got[k], ref[k], 1e-4); err != nil {
						t.Errorf("output %d: %v", k, err)
					}
				}
			})
		}
	}
}

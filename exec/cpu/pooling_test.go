package cpu_test

import (
	"context"
	"math"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// poolGraph builds every pooling kernel, the 2x2 fast paths and the
// general loops, on x [8, 6, 12, 10] with ties (a grid of halves) and a
// few NaN.
func poolGraph() ([]*graph.Node, exec.Feeds) {
	g := graph.New()
	s := []int{8, 6, 12, 10}
	x := g.Input("x", tensor.Float32, s...)
	xt := exectest.Rand(tensor.Float32, s, -3, 3, 9)
	for k := 0; k < xt.Size(); k++ {
		v := math.Floor(2*xt.Float64(k)) / 2
		if k%101 == 7 {
			v = math.NaN()
		}
		xt.SetFloat64(k, v)
	}
	var outs []*graph.Node
	feeds := exec.Feeds{x: xt}
	for i, opts := range [][]ops.WindowOption{nil, {ops.Stride(2, 1), ops.Padding(1), ops.CeilMode}} {
		k := []int{2, 2}
		if i == 1 {
			k = []int{3, 2}
		}
		y := ops.MaxPool(x, k, opts...)
		gy := g.Input("g"+string(rune('0'+i)), tensor.Float32, y.Shape()...)
		feeds[gy] = exectest.Rand(tensor.Float32, y.Shape(), -1, 1, uint64(10+i))
		avg := ops.AvgPool(x, k, opts...)
		a := avg.Attr().(opdef.PoolAttr)
		a.Size = s[2:]
		outs = append(outs, y, ops.Apply(ops.OpMaxPoolGrad, y.Attr(), x, gy), ops.Apply(ops.OpMaxPoolSelect, y.Attr(), x, x),
			avg, ops.Apply(ops.OpAvgPoolGrad, a, gy))
	}
	// One large plane (the forward kernels split its rows between
	// threads), one long 1-D signal (one row, split into column blocks),
	// and a 3-D pooling with a depth-1 window on the 2x2 fast
	// path, whose row ranges cross depth slices.
	xb := g.Input("xb", tensor.Float32, 1, 1, 301, 203)
	feeds[xb] = exectest.Rand(tensor.Float32, xb.Shape(), -3, 3, 12)
	x3 := g.Input("x3", tensor.Float32, 2, 3, 5, 13, 10)
	feeds[x3] = exectest.Rand(tensor.Float32, x3.Shape(), -3, 3, 13)
	outs = append(outs, ops.MaxPool(xb, []int{2, 2}), ops.MaxPool(xb, []int{6, 8}, ops.Stride(3, 2), ops.Dilation(2, 3), ops.Padding(2)),
		ops.AvgPool(xb, []int{3, 3}, ops.Stride(2, 2)), ops.MaxPool(x3, []int{1, 2, 2}, ops.Stride(1, 2, 2)))
	x1 := g.Input("x1", tensor.Float32, 1, 2, 5000)
	feeds[x1] = exectest.Rand(tensor.Float32, x1.Shape(), -3, 3, 14)
	m1 := ops.MaxPool(x1, []int{20}, ops.Stride(2), ops.Dilation(3), ops.Padding(5))
	outs = append(outs, m1, ops.Apply(ops.OpMaxPoolSelect, m1.Attr(), x1, x1), ops.AvgPool(x1, []int{7}, ops.Stride(3)))
	return outs, feeds
}

// TestPoolThreadsAndAllocs: the pooling kernels give the same bits on 1,
// 2 and 3 threads (each output row has one writer; the gradients add in
// the windows' order), and a run allocates nothing.
func TestPoolThreadsAndAllocs(t *testing.T) {
	var first []*tensor.Tensor
	for _, threads := range []int{1, 2, 3} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		outs, feeds := poolGraph()
		p, err := exec.Compile(be, outs)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		res := make([]*tensor.Tensor, len(outs))
		for k, o := range outs {
			res[k] = tensor.Zeros(o.DType(), o.Shape()...)
		}
		ctx := context.Background()
		if err := p.RunInto(ctx, feeds, res); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(5, func() {
			if err := p.RunInto(ctx, feeds, res); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%d threads: %v allocations per run, want 0", threads, n)
		}
		if first == nil {
			first = res
			continue
		}
		for k := range res {
			a, b := first[k].Float64s(), res[k].Float64s()
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(a[i] != a[i] && b[i] != b[i]) {
					t.Errorf("output %d (%v) element %d: %v on 1 thread, %v on %d", k, outs[k].Op(), i, a[i], b[i], threads)
					break
				}
			}
		}
	}
}

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
	return outs, feeds
}

// TestPoolThreadsAndAllocs: the pooling kernels give the same bits on 1
// and 2 threads (each plane has one writer; the gradients add in the
// windows' order), and a run allocates nothing.
func TestPoolThreadsAndAllocs(t *testing.T) {
	var first []*tensor.Tensor
	for _, threads := range []int{1, 2} {
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
					t.Errorf("output %d (%v) element %d: %v on 1 thread, %v on 2", k, outs[k].Op(), i, a[i], b[i])
					break
				}
			}
		}
	}
}

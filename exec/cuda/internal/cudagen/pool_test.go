package cudagen

import (
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func isPoolOp(op graph.Op) bool {
	switch op {
	case ops.OpMaxPool, ops.OpMaxPoolGrad, ops.OpMaxPoolSelect, ops.OpAvgPool, ops.OpAvgPoolGrad:
		return true
	}
	return false
}

// poolTestNodes are TestSupports's nodes of a pooling op in dtype dt: a
// 1-D, a 2-D and a 3-D pooling with padding and ceil mode.
func poolTestNodes(op graph.Op, dt tensor.DType, in func(dt tensor.DType, shape ...int) *graph.Node) []*graph.Node {
	var ns []*graph.Node
	for _, s := range [][]int{{2, 3, 7}, {2, 3, 6, 5}, {1, 2, 4, 5, 3}} {
		d := len(s) - 2
		a := opdef.PoolAttr{Kernel: fill(d, 2), Stride: fill(d, 2), Dilation: fill(d, 1), PadLo: fill(d, 1), PadHi: fill(d, 1), Ceil: true}
		x := in(dt, s...)
		y := ops.Apply(ops.OpMaxPool, a, x)
		if !y.Valid() {
			continue
		}
		switch op {
		case ops.OpMaxPool:
			ns = append(ns, y)
		case ops.OpMaxPoolGrad:
			ns = append(ns, ops.Apply(op, a, x, in(dt, y.Shape()...)))
		case ops.OpMaxPoolSelect:
			ns = append(ns, ops.Apply(op, a, x, in(dt, s...)))
		case ops.OpAvgPool:
			a.CountIncludePad = true
			ns = append(ns, ops.Apply(op, a, x))
		case ops.OpAvgPoolGrad:
			a.Size = s[2:]
			ns = append(ns, ops.Apply(op, a, in(dt, y.Shape()...)))
		}
	}
	return ns
}

func fill(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestPoolLaunches: one grid-stride launch per pooling node, a thread per
// result element, and the gradients gather (no atomics in the source).
func TestPoolLaunches(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 64, 32, 28, 28)
	a := opdef.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, Dilation: []int{1, 1}, PadLo: []int{0, 0}, PadHi: []int{0, 0}}
	y := ops.Apply(ops.OpMaxPool, a, x)
	dx := ops.Apply(ops.OpMaxPoolGrad, a, x, g.Input("g", tensor.Float32, y.Shape()...))
	one := func(grid uint32, args string) launchWant {
		return launchWant{[3]uint32{grid, 1, 1}, [3]uint32{256, 1, 1}, 0, args}
	}
	// 64·32·14·14 windows in blocks of 256; the gradient's 64·32·28·28
	// threads capped at 32 blocks per multiprocessor (132·32).
	checkLaunches(t, y, h100, 0, one(1568, "[in0 out]"))
	checkLaunches(t, dx, h100, 0, one(132*32, "[in0 in1 out]"))
	for _, n := range []*graph.Node{y, dx} {
		k, err := Generate(n, h100)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range k.Funcs {
			if strings.Contains(f.Source, "atomic") {
				t.Errorf("%v uses atomics:\n%s", n.Op(), f.Source)
			}
		}
	}
}

package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestScanCancelChecks: the scans, Prod and All check for cancellation
// inside one long line (every 64K elements or so), and a cancel at the
// middle check stops the kernel with an error naming it.
func TestScanCancelChecks(t *testing.T) {
	be, err := cpu.New(cpu.Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	var checks atomic.Int64
	var onCheck atomic.Pointer[func(int64)]
	defer cpu.SetCheckHook(func() {
		k := checks.Add(1)
		if f := onCheck.Load(); f != nil {
			(*f)(k)
		}
	})()
	const n = 1 << 21 // elements: 32 checks of 64K
	for _, c := range []struct {
		kind  string
		shape tensor.Shape
		f     func(x *graph.Node) *graph.Node
	}{
		{"Cumsum", tensor.Shape{1, n}, func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 1) }},
		{"Cumprod", tensor.Shape{n}, func(x *graph.Node) *graph.Node { return ops.Cumprod(x, 0, ops.Reverse) }},
		{"LogCumSumExp", tensor.Shape{n / 8}, func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0) }},
		{"Cummax", tensor.Shape{n / 256, 256}, func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0, ops.Exclusive) }},
		{"Prod", tensor.Shape{n}, func(x *graph.Node) *graph.Node { return ops.Prod(x) }},
		{"All", tensor.Shape{n}, func(x *graph.Node) *graph.Node { return ops.AllOf(x) }},
	} {
		t.Run(fmt.Sprint(c.kind, c.shape), func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.Float32, c.shape...)
			y := c.f(x)
			p, err := exec.Compile(be, []*graph.Node{y})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, c.shape, 0.99, 1.01, 1)}
			steps := int64(len(p.Plan().Steps))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			checks.Store(0)
			if _, err := p.Run(ctx, feeds); err != nil {
				t.Fatal(err)
			}
			k := checks.Load() - (1 + steps) // Run checks before the first step and after each
			work := int64(c.shape.Size())
			if want := work/(1<<16) - 2; k < want {
				t.Fatalf("%d checks in the kernel for %d elements, want at least %d", k, work, want)
			}
			// Cancel at the middle check.
			checks.Store(0)
			at := (1+steps)/2 + k/2
			f := func(i int64) {
				if i == at {
					cancel()
				}
			}
			onCheck.Store(&f)
			defer onCheck.Store(nil)
			_, err = p.Run(ctx, feeds)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "("+c.kind+" ") {
				t.Fatalf("Run = %v, want an error wrapping context.Canceled in the %s kernel", err, c.kind)
			}
			if after := checks.Load() - at; after > 8 {
				t.Errorf("%d checks after the cancel, want a few", after)
			}
		})
	}
}

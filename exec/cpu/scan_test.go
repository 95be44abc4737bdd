package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
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
	checks, onCheck := hookChecks(t)
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

// TestCummaxSignedZeros: as torch.cummax, a later equal value replaces the
// running maximum, so the sign of a zero follows the last zero seen (the
// conformance suite's comparison does not see the sign of zero). Hand:
// [-1, -0, +0, -0] gives itself, along a row and down two columns (the
// kernel's two loops).
func TestCummaxSignedZeros(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	nz := math.Copysign(0, -1)
	line := []float64{-1, nz, 0, nz}
	cols := []float64{-1, -1, nz, nz, 0, 0, nz, nz}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, c := range []struct {
			shape tensor.Shape
			axis  int
			vals  []float64
		}{{tensor.Shape{1, 4}, 1, line}, {tensor.Shape{4, 2}, 0, cols}} {
			g := graph.New()
			x := g.Input("x", dt, c.shape...)
			p, err := exec.Compile(be, []*graph.Node{ops.Cummax(x, c.axis)})
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Run(context.Background(), exec.Feeds{x: exectest.Tensor(dt, c.vals, c.shape...)})
			p.Close()
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.vals {
				if v := out[0].Float64(i); v != w || math.Signbit(v) != math.Signbit(w) {
					t.Errorf("%v %v: element %d is %v, want %v", dt, c.shape, i, v, w)
				}
			}
		}
	}
}

package cpu_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Cancellation inside kernels (issue 12, defect 19): a Run returns soon
// after its context is done, whatever kernel is running, because kernels
// check the context between pieces of bounded work.
//
// TestCancelChecks (deterministic, every kernel family): counts the checks
// a kernel makes (there must be one per bounded piece of its work), cancels
// at the middle one and checks that the kernel stops there, and that the
// results of a cancellable run are bit-identical to an uncancellable one.
// TestCancelLongKernels (wall clock): kernels that would run for a second
// or more stop within a bound of a cancel 100 ms in (they ran to the end
// before the checks). TestConformanceInSubRanges: every kernel is correct
// when its loops run piece by piece. TestCancelKeepsVariables: a cancelled
// Run leaves the variables and the program intact.
// TestRunIntoCancellableAllocations: checking allocates nothing.
// TestHugeArena: an arena too large for the machine is an error.

var noFuse = []exec.Option{exec.DisablePasses("fuse")}

// ramp returns a float32 tensor of the given shape holding (i%61)·0.03:
// varied values (so exp and pow take their general paths), filled fast.
func ramp(t testing.TB, shape ...int) *tensor.Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%61) * 0.03
	}
	x, err := tensor.New(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func full(t testing.TB, dt tensor.DType, v float64, shape ...int) *tensor.Tensor {
	x, err := tensor.Full(dt, v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// kernelSteps returns the ops of the plan's kernel steps (copies count as
// "copy").
func kernelSteps(p *exec.Program) []string {
	var ks []string
	for _, s := range p.Plan().Steps {
		switch s.Kind {
		case exec.KernelStep:
			ks = append(ks, s.Node.Op().String())
		case exec.CopyStep:
			ks = append(ks, "copy")
		}
	}
	return ks
}

// checkCase is a graph whose one kernel does work elements (or
// multiply-adds) of work; the kernel must check for cancellation at least
// once per `per` of them.
type checkCase struct {
	name  string
	kind  string // the kernel: an op name, or "copy"
	work  int
	per   int
	opts  []exec.Option
	build func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds)
}

// Spacing of the checks, with slack for part boundaries: stepped loops
// check every 128K elements, serial loops every 64K, the passes of a long
// SIMD reduction every 4M elements (a few ms each).
const (
	perStep = 1 << 18
	perLoop = 1 << 17
	perSIMD = 1 << 23
	// Copying and clearing loops (work in bytes) step by 32 MB, a few ms;
	// the cases with this spacing run with steps of 1 MB so that their
	// 16 MB operands show their checks.
	perCopy = 1 << 21
)

func checkCases() []checkCase {
	unary := func(f func(*graph.Node) *graph.Node, n int) func(testing.TB, *graph.Graph) (*graph.Node, exec.Feeds) {
		return func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, n)
			return f(x), exec.Feeds{x: ramp(t, n)}
		}
	}
	shaped := func(f func(*graph.Node) *graph.Node, shape ...int) func(testing.TB, *graph.Graph) (*graph.Node, exec.Feeds) {
		return func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, shape...)
			return f(x), exec.Feeds{x: ramp(t, shape...)}
		}
	}
	scalarIn := func(f func(s *graph.Node) *graph.Node) func(testing.TB, *graph.Graph) (*graph.Node, exec.Feeds) {
		return func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			s := g.Input("s", tensor.Float32)
			return f(s), exec.Feeds{s: full(t, tensor.Float32, 0.5)}
		}
	}
	const n = 1 << 22
	return []checkCase{
		// elementwise
		{"Add", "Add", n, perStep, noFuse, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, n/1024, 1024), g.Input("y", tensor.Float32, 1024)
			return ops.Add(x, y), exec.Feeds{x: ramp(t, n/1024, 1024), y: ramp(t, 1024)}
		}},
		{"Exp", "Exp", n, perStep, noFuse, unary(ops.Exp, n)},
		{"Pow", "Pow", n, perStep, noFuse, unary(func(x *graph.Node) *graph.Node { return ops.Pow(x, ops.Scalar(x, 1.37)) }, n)},
		{"Less", "Less", n, perStep, noFuse, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, n/1024, 1, 2), g.Input("y", tensor.Float32, 512, 2)
			return ops.Less(x, y), exec.Feeds{x: ramp(t, n/1024, 1, 2), y: ramp(t, 512, 2)}
		}},
		{"Where", "Where", n, perStep, noFuse, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			c, x := g.Input("c", tensor.Bool, n), g.Input("x", tensor.Float32, n)
			return ops.Where(c, x, ops.Scalar(x, 2)), exec.Feeds{c: full(t, tensor.Bool, 1, n), x: ramp(t, n)}
		}},
		{"And", "And", n, perStep, noFuse, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Bool, n), g.Input("y", tensor.Bool, n)
			return ops.And(x, y), exec.Feeds{x: full(t, tensor.Bool, 1, n), y: full(t, tensor.Bool, 1, n)}
		}},
		{"Cast f32 to f16", "Cast", n, perStep, noFuse, unary(func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Float16) }, n)},
		{"Cast f32 to i64", "Cast", n, perStep, noFuse, unary(func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Int64) }, n)},
		// fused
		{"Fused", "Fused", n, perLoop, nil, unary(func(x *graph.Node) *graph.Node {
			return ops.Exp(ops.Mul(ops.Sin(x), ops.Scalar(x, 0.5)))
		}, n)},
		{"Fused Sum all", "Fused", 4 * n, perLoop, nil, scalarIn(func(s *graph.Node) *graph.Node {
			return ops.Sum(ops.Exp(ops.BroadcastTo(s, 4*n)))
		})},
		{"Fused Max rows", "Fused", 4 * n, perLoop, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, 1<<14)
			return ops.Max(ops.Exp(ops.BroadcastTo(x, 1<<10, 1<<14)), 1), exec.Feeds{x: ramp(t, 1<<14)}
		}},
		{"Fused Sum short rows", "Fused", 4 * n, perLoop, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, 256)
			return ops.Sum(ops.Exp(ops.BroadcastTo(x, 1<<16, 256)), 1), exec.Feeds{x: ramp(t, 256)}
		}},
		{"Fused Sum cols", "Fused", 4 * n, perLoop, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, 1<<12)
			return ops.Sum(ops.Exp(ops.BroadcastTo(x, 1<<12, 1<<12)), 0), exec.Feeds{x: ramp(t, 1<<12)}
		}},
		// reductions
		{"Sum all", "Sum", 4 * n, perStep, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Sum(x) }, 4*n)},
		{"Sum all int", "Sum", n, perStep, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Int32, n)
			return ops.Sum(x), exec.Feeds{x: full(t, tensor.Int32, 3, n)}
		}},
		{"Max all", "Max", 4 * n, perSIMD, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Max(x) }, 4*n)},
		{"Min all", "Min", 4 * n, perSIMD, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Min(x) }, 4*n)},
		{"ArgMax all", "ArgMax", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.ArgMax(x, 0) }, n)},
		{"Sum rows", "Sum", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Sum(x, 1) }, 1<<8, 1<<14)},
		{"Sum cols", "Sum", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Sum(x, 0) }, 1<<11, 1<<11)},
		{"Max cols", "Max", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Max(x, 0) }, 1<<11, 1<<11)},
		{"Sum strided", "Sum", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Sum(x, 0) }, n/32, 32)},
		{"Sum strided int", "Sum", n, perLoop, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Int64, n/2, 2)
			return ops.Sum(x, 0), exec.Feeds{x: full(t, tensor.Int64, 3, n/2, 2)}
		}},
		{"Min strided", "Min", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Min(x, 0) }, n/32, 32)},
		{"ArgMax strided", "ArgMax", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.ArgMax(x, 0) }, n/32, 32)},
		{"Sum middle axis", "Sum", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Sum(x, 1) }, 16, 1<<10, 1<<8)},
		// softmax
		{"Softmax one long row", "Softmax", 4 * n, perSIMD, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Softmax(x, 0) }, 4*n)},
		{"LogSoftmax one long row", "LogSoftmax", 4 * n, perSIMD, nil, shaped(func(x *graph.Node) *graph.Node { return ops.LogSoftmax(x, 0) }, 4*n)},
		{"Softmax rows", "Softmax", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Softmax(x, 1) }, 1<<8, 1<<14)},
		{"LogSoftmax strided", "LogSoftmax", n, perLoop, nil, shaped(func(x *graph.Node) *graph.Node { return ops.LogSoftmax(x, 0) }, n/4, 4)},
		// movement
		{"Transpose", "Transpose", n, perStep, nil, shaped(func(x *graph.Node) *graph.Node { return ops.Transpose(x, 1, 0) }, 1<<11, 1<<11)},
		{"BroadcastTo", "BroadcastTo", n, perStep, nil, shaped(func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 1<<12, 1<<10) }, 1<<10)},
		{"Slice", "Slice", n, perStep, nil, shaped(func(x *graph.Node) *graph.Node {
			return ops.Slice(x, ops.RS(0, ops.End, 1), ops.RS(0, ops.End, 2))
		}, 1<<11, 1<<12)},
		{"Concat axis 0", "Concat", 4 * n, perCopy, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, n/2), g.Input("y", tensor.Float32, n/2)
			return ops.Concat(0, x, y), exec.Feeds{x: ramp(t, n/2), y: ramp(t, n/2)}
		}},
		{"Concat axis 1", "Concat", 4 * n, perCopy, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, 1<<11, 1<<9), g.Input("y", tensor.Float32, 1<<11, 3<<9)
			return ops.Concat(1, x, y), exec.Feeds{x: ramp(t, 1<<11, 1<<9), y: ramp(t, 1<<11, 3<<9)}
		}},
		// the zeroing of 12n bytes, then the scatter of n elements
		{"Pad", "Pad", 12 * n, perCopy, nil, shaped(func(x *graph.Node) *graph.Node {
			return ops.Pad(x, ops.PadWidth{Low: n / 2, High: n / 2, Interior: 1})
		}, n)},
		{"Pad scatter", "Pad", n, perStep, nil, shaped(func(x *graph.Node) *graph.Node {
			return ops.Pad(x, ops.PadWidth{Low: 1, High: 1})
		}, n)},
		{"copy of an input", "copy", 4 * 4 * n, perCopy, nil, shaped(func(x *graph.Node) *graph.Node { return x }, 4*n)},
		// matrix products: many small ones (the tasks of a large one check
		// between their blocks: internal/gemm's TestRunUntil)
		{"MatMul batch", "MatMul", 4096 * 32 * 32 * 32, 1 << 21, nil, func(t testing.TB, g *graph.Graph) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, 4096, 32, 32), g.Input("y", tensor.Float32, 4096, 32, 32)
			return ops.MatMul(x, y), exec.Feeds{x: ramp(t, 4096, 32, 32), y: ramp(t, 4096, 32, 32)}
		}},
	}
}

// TestCancelChecks: for every kernel family, a cancellable Run checks its
// context at least once per bounded piece of work (the check counts below
// are 0 without checks inside kernels), gives bit-identical results to an
// uncancellable one (the parts of stepped loops then run in sub-ranges;
// sub-ranges of 997 iterations are checked too), and a cancel at the
// middle check stops the kernel at once: the Run fails
// with an error wrapping context.Canceled that names the step, after only
// the few checks that unwind the kernel's loops; the program then runs
// again correctly.
func TestCancelChecks(t *testing.T) {
	be, err := cpu.New(cpu.Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	checks, onCheck := hookChecks(t)
	for _, c := range checkCases() {
		t.Run(c.name, func(t *testing.T) {
			if c.per == perCopy {
				defer cpu.SetCopyStep(1 << 20)()
			}
			g := graph.New()
			y, feeds := c.build(t, g)
			p, err := exec.Compile(be, []*graph.Node{y}, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if ks := kernelSteps(p); len(ks) != 1 || ks[0] != c.kind {
				t.Fatalf("kernels %v, want one %s", ks, c.kind)
			}
			steps := len(p.Plan().Steps)
			want, err := p.Run(context.Background(), feeds)
			if err != nil {
				t.Fatal(err)
			}
			// Stepped loops cut into sub-ranges of 997 iterations (the
			// results must not depend on the cut).
			restore := cpu.SetForcedStep(997)
			got, err := p.Run(context.Background(), feeds)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[0].Bytes(), want[0].Bytes()) {
				t.Errorf("results differ when the loops run in sub-ranges of 997")
			}
			// Run checks before the first step and after each.
			runChecks := int64(1 + steps)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			checks.Store(0)
			got, err = p.Run(ctx, feeds)
			if err != nil {
				t.Fatal(err)
			}
			n := checks.Load() - runChecks
			if min := int64(c.work / c.per); n < min {
				t.Errorf("%d checks in the kernel, want at least %d (one per %d of its %d elements of work)", n, min, c.per, c.work)
			}
			if !bytes.Equal(got[0].Bytes(), want[0].Bytes()) {
				t.Errorf("the result of a cancellable run differs from an uncancellable one")
			}

			// Cancel at the middle check of the kernel. Only the checks that
			// begin once cancel() has returned count as "after": while it
			// runs (slowly under the race detector) the other goroutine
			// may legitimately check many times, for many small products.
			at := runChecks/2 + n/2 // Run's first check, then half the kernel's
			checks.Store(0)
			var cancelled atomic.Bool
			var after int64
			var afterMu sync.Mutex
			f := func(k int64) {
				if cancelled.Load() {
					afterMu.Lock()
					after++
					afterMu.Unlock()
				}
				if k == at {
					cancel()
					cancelled.Store(true)
				}
			}
			onCheck.Store(&f)
			_, err = p.Run(ctx, feeds)
			onCheck.Store(nil)
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped at step") {
				t.Fatalf("Run cancelled in its kernel = %v, want an error wrapping context.Canceled naming the step", err)
			}
			// After the cancel, each of the 2 goroutines unwinds its loops
			// (a check per loop level), then Run checks once.
			if after > 8 {
				t.Errorf("%d checks after the cancel (of %d in the kernel): the kernel went on", after, n)
			}
			t.Logf("%d checks in the kernel (%d elements of work each), %d after the cancel", n, c.work/max(1, int(n)), after)
			again, err := p.Run(context.Background(), feeds)
			if err != nil {
				t.Fatalf("Run after a cancelled run: %v", err)
			}
			if !bytes.Equal(again[0].Bytes(), want[0].Bytes()) {
				t.Errorf("the result after a cancelled run differs")
			}
		})
	}
}

// longCase is a graph whose one long kernel runs for about a second or
// more on this machine; build(div) builds it with 1/div of the work, for
// an estimate of the full kernel's time (compute-bound kernels scale
// linearly; memory-bound ones do not, as a smaller problem fits in cache:
// they are estimated from a full run, estDiv 1).
type longCase struct {
	name    string
	kind    string // the kernel's op
	threads int
	estDiv  int
	timeout bool // cancel by a deadline (context.WithTimeout) instead
	opts    []exec.Option
	build   func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds)
}

func longCases() []longCase {
	// The reductions read a materialised input, 2^26 float32 (256 MB)
	// shared by the cases, as [2, 2^15, 2^10] reduced over axis 1: each
	// result element reads 2^15 elements 4 KB apart (a TLB miss each,
	// ~12 ns an element).
	var big *tensor.Tensor
	reduce := func(f func(x *graph.Node) *graph.Node) func(testing.TB, *graph.Graph, int) (*graph.Node, exec.Feeds) {
		return func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			if big == nil {
				big = ramp(t, 2, 1<<15, 1<<10)
			}
			x := g.Input("x", tensor.Float32, 2, 1<<15, 1<<10)
			return f(x), exec.Feeds{x: big}
		}
	}
	fusedSin := func(shape []int, from []int, axes ...int) func(testing.TB, *graph.Graph, int) (*graph.Node, exec.Feeds) {
		return func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			s := append([]int(nil), shape...)
			s[0] /= div
			x := g.Input("x", tensor.Float32, from...)
			v := full(t, tensor.Float32, 0.5, from...)
			return ops.Sum(ops.Sin(ops.BroadcastTo(x, s...)), axes...), exec.Feeds{x: v}
		}
	}
	return []longCase{
		// Pow at ~35 ns an element, 2^26 elements (a 256 MB result).
		{"Pow", "Pow", 1, 32, false, noFuse, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, (1<<16)/div, 1), g.Input("y", tensor.Float32, 1, 1<<10)
			return ops.Pow(x, y), exec.Feeds{x: ramp(t, (1<<16)/div, 1), y: ramp(t, 1, 1<<10)}
		}},
		// Broadcasting in runs of 2 elements: ~8 ns an element, 2^28
		// elements (a 256 MB bool result).
		{"Less", "Less", 1, 32, false, noFuse, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			x, y := g.Input("x", tensor.Float32, (1<<17)/div, 1, 2), g.Input("y", tensor.Float32, 1, 1<<10, 2)
			return ops.Less(x, y), exec.Feeds{x: ramp(t, (1<<17)/div, 1, 2), y: ramp(t, 1, 1<<10, 2)}
		}},
		{"Where", "Where", 1, 32, false, noFuse, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			c, x := g.Input("c", tensor.Bool, (1<<17)/div, 1, 2), g.Input("x", tensor.Bool, 1, 1<<10, 2)
			y := g.Input("y", tensor.Bool, (1<<17)/div, 1, 2)
			return ops.Where(c, x, y), exec.Feeds{c: full(t, tensor.Bool, 1, (1<<17)/div, 1, 2), x: full(t, tensor.Bool, 1, 1, 1<<10, 2), y: full(t, tensor.Bool, 0, (1<<17)/div, 1, 2)}
		}},
		{"BroadcastTo", "BroadcastTo", 1, 32, false, noFuse, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Bool, (1<<17)/div, 1, 2)
			return ops.BroadcastTo(x, (1<<17)/div, 1<<10, 2), exec.Feeds{x: full(t, tensor.Bool, 1, (1<<17)/div, 1, 2)}
		}},
		// Fused: 8 Pows of a broadcast row (~270 ns an element), 2^23
		// elements.
		{"Fused", "Fused", 2, 32, false, nil, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, 1024)
			y := ops.BroadcastTo(x, (1<<13)/div, 1024)
			for i := 0; i < 8; i++ {
				y = ops.Pow(y, ops.Scalar(y, 1.01))
			}
			return y, exec.Feeds{x: ramp(t, 1024)}
		}},
		// Fused reductions of Sin of a broadcast (~6 ns an element) over
		// 2^28 (all) or 2^27 (rows, cols) elements that never exist: the
		// defect's case. The broadcast operand is a row, not a scalar: the
		// Sin of a scalar operand is computed once.
		{"Fused Sum all", "Fused", 2, 32, false, nil, fusedSin([]int{1 << 18, 1 << 10}, []int{1 << 10})},
		{"Fused Sum all, deadline", "Fused", 2, 32, true, nil, fusedSin([]int{1 << 18, 1 << 10}, []int{1 << 10})},
		{"Fused Sum rows", "Fused", 2, 32, false, nil, fusedSin([]int{1 << 11, 1 << 16}, []int{1 << 16}, 1)},
		{"Fused Sum cols", "Fused", 2, 32, false, nil, fusedSin([]int{1 << 15, 1 << 12}, []int{1 << 12}, 0)},
		// Plain reductions: strided layouts of 256 MB, 4 to 10 ns an element.
		{"Sum", "Sum", 1, 1, false, nil, reduce(func(x *graph.Node) *graph.Node { return ops.Sum(x, 1) })},
		{"Max", "Max", 1, 1, false, nil, reduce(func(x *graph.Node) *graph.Node { return ops.Max(x, 1) })},
		{"ArgMax", "ArgMax", 1, 1, false, nil, reduce(func(x *graph.Node) *graph.Node { return ops.ArgMax(x, 1) })},
		// Softmax along the long axis of [2^23, 4]: scalar exp, ~20 ns an
		// element (128 MB).
		{"Softmax strided", "Softmax", 1, 32, false, nil, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			x := g.Input("x", tensor.Float32, (1<<23)/div, 4)
			return ops.Softmax(x, 0), exec.Feeds{x: ramp(t, (1<<23)/div, 4)}
		}},
		// 4096×8192 by 8192×4096 float32: 2^37 multiply-adds (320 MB).
		{"MatMul", "MatMul", 2, 32, false, nil, func(t testing.TB, g *graph.Graph, div int) (*graph.Node, exec.Feeds) {
			k := 8192 / div
			x, y := g.Input("x", tensor.Float32, 4096, k), g.Input("y", tensor.Float32, k, 4096)
			return ops.MatMul(x, y), exec.Feeds{x: ramp(t, 4096, k), y: ramp(t, k, 4096)}
		}},
	}
}

// TestCancelLongKernels: a Run whose one kernel would take about a second
// or more returns soon after its context is cancelled 100 ms in (the
// target is 50 ms; the bound, 500 ms or less, allows for this shared
// machine), with an error that wraps context.Canceled (or
// DeadlineExceeded) and names the kernel. Each case first estimates the
// full kernel's time (est) and requires it to be long enough that, without
// checks inside the kernel, the Run would overrun the bound twice over:
// the memory-bound reductions, whose time varies most between machines
// (TLB and huge pages), cancel at est/5 when est is under 500 ms.
func TestCancelLongKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("about 5 s of long kernels")
	}
	const (
		maxBound = 500 * time.Millisecond
		minBound = 100 * time.Millisecond
	)
	for _, c := range longCases() {
		t.Run(c.name, func(t *testing.T) {
			be, err := cpu.New(cpu.Threads(c.threads))
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			// compile returns the program and its feeds, with the result
			// allocated (RunInto: the kernel starts at once).
			compile := func(div int) (*exec.Program, exec.Feeds, []*tensor.Tensor) {
				g := graph.New()
				y, feeds := c.build(t, g, div)
				p, err := exec.Compile(be, []*graph.Node{y}, c.opts...)
				if err != nil {
					t.Fatal(err)
				}
				if ks := kernelSteps(p); len(ks) != 1 || ks[0] != c.kind {
					t.Fatalf("kernels %v, want one %s", ks, c.kind)
				}
				return p, feeds, []*tensor.Tensor{tensor.Zeros(y.DType(), y.Shape()...)}
			}
			cancelAfter, bound := 100*time.Millisecond, maxBound
			if c.estDiv == 1 && raceEnabled {
				// The full run takes many seconds with the race detector;
				// the kernel is slower still than without, where the
				// estimate is checked.
			} else {
				small, feeds, out := compile(c.estDiv)
				t0 := time.Now()
				if err := small.RunInto(context.Background(), feeds, out); err != nil {
					t.Fatal(err)
				}
				est := time.Since(t0) * time.Duration(c.estDiv)
				small.Close()
				// Without checks in the kernel a Run would end
				// est-cancelAfter after the cancel: the bound must be well
				// below that.
				cancelAfter = min(cancelAfter, est/5)
				bound = min(maxBound, (est-cancelAfter)/2)
				t.Logf("the whole kernel takes about %v", est)
				if bound < minBound {
					t.Fatalf("the kernel would take about %v: too short to show that it stops early", est)
				}
			}

			p, feeds, out := compile(1)
			defer p.Close()
			var ctx context.Context
			var cancelled atomic.Int64 // when the context was done (unix ns)
			if c.timeout {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(context.Background(), cancelAfter)
				defer cancel()
				deadline, _ := ctx.Deadline()
				cancelled.Store(deadline.UnixNano())
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(context.Background())
				defer cancel()
				time.AfterFunc(cancelAfter, func() {
					cancelled.Store(time.Now().UnixNano())
					cancel()
				})
			}
			start := time.Now()
			err = p.RunInto(ctx, feeds, out)
			end := time.Now()
			if err == nil {
				t.Fatalf("Run succeeded in %v despite the cancel after %v", end.Sub(start), cancelAfter)
			}
			want := context.Canceled
			if c.timeout {
				want = context.DeadlineExceeded
			}
			if !errors.Is(err, want) || !strings.Contains(err.Error(), "("+c.kind+" ") {
				t.Fatalf("Run = %v, want an error wrapping %v in the %s kernel", err, want, c.kind)
			}
			late := end.Sub(time.Unix(0, cancelled.Load()))
			t.Logf("returned %v after the cancel at %v (bound %v)", late, cancelAfter, bound)
			if late > bound {
				t.Errorf("Run returned %v after the cancel, want at most %v (the target is 50 ms)", late, bound)
			}
		})
	}
}

// TestConformanceInSubRanges runs the conformance suite with every stepped
// loop cut into sub-ranges of 3 iterations and SIMD reductions in blocks
// of 64 elements: kernels must be correct when their parts run piece by
// piece (as cancellable Runs run them) and in the blocked paths of long
// rows.
func TestConformanceInSubRanges(t *testing.T) {
	if raceEnabled {
		// the sub-ranges cut each part's iterations on its own goroutine:
		// no concurrency the conformance suite does not have (64 s of the race run)
		t.Skip("TestConformanceSampled runs the kernels under the race detector")
	}
	defer cpu.SetForcedStep(3)()
	defer cpu.SetLongRun(64)()
	exectest.Run(t, func() (exec.Backend, error) { return cpu.New() })
}

// TestCancelKeepsVariables: a Run cancelled inside one of its kernels (at
// several points of the run) leaves the variables as they were, and the
// program then runs correctly: the same results, bit for bit, as a program
// never cancelled.
func TestCancelKeepsVariables(t *testing.T) {
	be, err := cpu.New(cpu.Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	const n = 1 << 21
	build := func() (*exec.Program, *graph.Node, exec.Feeds) {
		g := graph.New()
		w := g.Variable("w", ramp(t, n))
		x := g.Input("x", tensor.Float32, n)
		loss := ops.Sum(ops.Exp(ops.Mul(w, x)))
		p, err := exec.Compile(be, []*graph.Node{loss}, exec.Update(w, ops.Sub(w, ops.Mul(ops.Scalar(w, 0.1), ops.Sin(x)))))
		if err != nil {
			t.Fatal(err)
		}
		xv := ramp(t, n)
		return p, w, exec.Feeds{x: xv}
	}
	p, w, feeds := build()
	defer p.Close()
	w0, err := p.Read(w)
	if err != nil {
		t.Fatal(err)
	}
	var checks, at atomic.Int64
	var cancel atomic.Pointer[context.CancelFunc]
	defer cpu.SetCheckHook(func() {
		if checks.Add(1) == at.Load() {
			(*cancel.Load())()
		}
	})()
	// Count the checks of a whole run (on a copy of the program: this
	// one's variable must not move).
	{
		q, _, qfeeds := build()
		ctx, stop := context.WithCancel(context.Background())
		if _, err := q.Run(ctx, qfeeds); err != nil {
			t.Fatal(err)
		}
		stop()
		q.Close()
	}
	total := checks.Load()
	if total < 8 {
		t.Fatalf("%d checks in a run", total)
	}
	for _, k := range []int64{2, total / 4, total / 2, 3 * total / 4, total - 2} {
		ctx, stop := context.WithCancel(context.Background())
		cancel.Store(&stop)
		checks.Store(0)
		at.Store(k)
		_, err := p.Run(ctx, feeds)
		at.Store(0)
		stop()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled at check %d of %d: Run = %v", k, total, err)
		}
		wk, err := p.Read(w)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(wk.Bytes(), w0.Bytes()) {
			t.Fatalf("w changed by a Run cancelled at check %d of %d (%v)", k, total, err)
		}
	}
	got, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	q, qw, qfeeds := build()
	defer q.Close()
	want, err := q.Run(context.Background(), qfeeds)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[0].Bytes(), want[0].Bytes()) {
		t.Errorf("loss %v after cancelled runs, %v without", got[0], want[0])
	}
	gw, _ := p.Read(w)
	ww, _ := q.Read(qw)
	if !bytes.Equal(gw.Bytes(), ww.Bytes()) {
		t.Errorf("w after cancelled runs and one run differs from w after one run")
	}
	if bytes.Equal(gw.Bytes(), w0.Bytes()) {
		t.Errorf("w did not change in the run that completed")
	}
}

// TestRunIntoCancellableAllocations: a Run with a context that can be
// cancelled allocates nothing either (the kernels poll ctx.Done() with a
// non-blocking receive: no AfterFunc, no goroutine).
func TestRunIntoCancellableAllocations(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	p, feeds := mlpStep(t, be)
	defer p.Close()
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := p.RunInto(ctx, feeds, out); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := p.RunInto(ctx, feeds, out); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per training step with a cancellable context, want 0", a)
	}
}

// TestHugeArena: a program whose arena cannot be allocated (a 4 TiB
// intermediate) fails with an error, from Compile (sizes checked against
// the device's memory) or from Run, never a panic or the runtime's fatal
// out-of-memory error.
func TestHugeArena(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	c := g.Input("c", tensor.Float32)
	y := ops.Sum(ops.Softmax(ops.BroadcastTo(c, 1<<40), 0))
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Logf("Compile: %v", err)
		return
	}
	defer p.Close()
	_, err = p.Run(context.Background(), exec.Feeds{c: full(t, tensor.Float32, 1)})
	if err == nil || !strings.Contains(err.Error(), "arena") {
		t.Fatalf("Run = %v, want an error about the arena", err)
	}
	t.Logf("Run: %v", err)
}

// hookChecks installs, for the rest of the test, a cancellation-check
// hook that counts the checks and calls *onCheck (when set) with each
// check's number.
func hookChecks(t *testing.T) (checks *atomic.Int64, onCheck *atomic.Pointer[func(int64)]) {
	checks, onCheck = new(atomic.Int64), new(atomic.Pointer[func(int64)])
	t.Cleanup(cpu.SetCheckHook(func() {
		k := checks.Add(1)
		if f := onCheck.Load(); f != nil {
			(*f)(k)
		}
	}))
	return checks, onCheck
}

package cpu_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

// chain builds the 50-op elementwise benchmark graph over n float32
// elements laid out as [n/1024, 1024]: alternately a multiply by a scalar
// constant and an add of a broadcast [1024] row; with tanh, every third op
// is a Tanh instead.
func chain(n int, tanh bool) (*graph.Graph, *graph.Node, *graph.Node) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, n/1024, 1024)
	row := g.Const(exectest.Rand(tensor.Float32, tensor.Shape{1024}, -0.01, 0.01, 1))
	y := x
	for i := 0; i < 50; i++ {
		switch {
		case tanh && i%3 == 2:
			y = ops.Tanh(y)
		case i%2 == 0:
			y = ops.Mul(y, ops.Scalar(y, 0.999))
		default:
			y = ops.Add(y, row)
		}
	}
	return g, x, y
}

var sizes = []struct {
	name string
	n    int
}{{"1K", 1 << 10}, {"1M", 1 << 20}, {"16M", 1 << 24}}

// BenchmarkChain runs the 50-op chains fused and unfused (each op its own
// kernel, reading and writing memory), with RunInto so that only the
// program's own allocations count.
func BenchmarkChain(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	for _, kind := range []string{"muladd", "muladdtanh"} {
		for _, sz := range sizes {
			for _, mode := range []string{"fused", "unfused"} {
				b.Run(fmt.Sprintf("%s/%s/%s", kind, sz.name, mode), func(b *testing.B) {
					_, x, y := chain(sz.n, kind == "muladdtanh")
					var opts []exec.Option
					if mode == "unfused" {
						opts = append(opts, exec.DisablePasses("fuse"))
					}
					p, err := exec.Compile(be, []*graph.Node{y}, opts...)
					if err != nil {
						b.Fatal(err)
					}
					defer p.Close()
					feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 2)}
					out := []*tensor.Tensor{tensor.Zeros(tensor.Float32, y.Shape()...)}
					ctx := context.Background()
					if err := p.RunInto(ctx, feeds, out); err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.SetBytes(int64(4 * sz.n))
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := p.RunInto(ctx, feeds, out); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/50, "ns/op-step")
				})
			}
		}
	}
}

// BenchmarkOverhead measures the cost per kernel of 50 unfused Adds on 1K
// float32 elements (the arithmetic itself is about 1024 adds, ~0.3 µs).
func BenchmarkOverhead(b *testing.B) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1024)
	y := x
	for i := 0; i < 50; i++ {
		y = ops.Add(y, x)
	}
	p, err := exec.Compile(be, []*graph.Node{y}, exec.DisablePasses("fuse"))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	steps := len(p.Plan().Steps)
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{1024}, -1, 1, 3)}
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32, 1024)}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.RunInto(ctx, feeds, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/kernel")
}

// mlpStep builds the 784-256-10 MLP training step (batch 64, ReLU,
// softmax cross-entropy, SGD) used by the profiler and peer benchmarks.
func mlpStep(b testing.TB, be exec.Backend) (*exec.Program, exec.Feeds) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 64, 784)
	y := g.Input("y", tensor.Float32, 64, 10)
	w1 := g.Variable("w1", exectest.Rand(tensor.Float32, tensor.Shape{784, 256}, -0.05, 0.05, 1))
	b1 := g.Variable("b1", tensor.Zeros(tensor.Float32, 256))
	w2 := g.Variable("w2", exectest.Rand(tensor.Float32, tensor.Shape{256, 10}, -0.05, 0.05, 2))
	b2 := g.Variable("b2", tensor.Zeros(tensor.Float32, 10))
	h := ops.Relu(ops.Add(ops.MatMul(x, w1), b1))
	logits := ops.Add(ops.MatMul(h, w2), b2)
	loss := ops.Neg(ops.Mean(ops.Sum(ops.Mul(y, ops.LogSoftmax(logits, -1)), -1)))
	params := []*graph.Node{w1, b1, w2, b2}
	grads := autodiff.Grad(loss, params...)
	var opts []exec.Option
	for i, p := range params {
		opts = append(opts, exec.Update(p, ops.Sub(p, ops.Mul(ops.Scalar(p, 0.01), grads[i]))))
	}
	p, err := exec.Compile(be, []*graph.Node{loss}, opts...)
	if err != nil {
		b.Fatal(err)
	}
	labels := exectest.Rand(tensor.Float32, tensor.Shape{64, 10}, 0, 0.2, 4)
	return p, exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{64, 784}, 0, 1, 3), y: labels}
}

// BenchmarkProfiler measures the cost of recording: the MLP training step
// and the fused 50-op chain on 1M elements, with and without a Recorder
// in the context.
func BenchmarkProfiler(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	mlp, mlpFeeds := mlpStep(b, be)
	defer mlp.Close()
	_, x, y := chain(1<<20, false)
	ch, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		b.Fatal(err)
	}
	defer ch.Close()
	chFeeds := exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 2)}
	for _, w := range []struct {
		name  string
		p     *exec.Program
		feeds exec.Feeds
	}{{"mlp", mlp, mlpFeeds}, {"chain1M", ch, chFeeds}} {
		for _, on := range []bool{false, true} {
			name := w.name + "/off"
			if on {
				name = w.name + "/on"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				var rec *profile.Recorder
				if on {
					rec = profile.New()
					ctx = profile.NewContext(ctx, rec)
				}
				out, err := w.p.Run(ctx, w.feeds)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := w.p.RunInto(ctx, w.feeds, out); err != nil {
						b.Fatal(err)
					}
					if rec != nil && i%256 == 255 {
						rec.Reset() // keep the event list bounded
					}
				}
			})
		}
	}
}

// BenchmarkCancellable measures what checking for cancellation costs:
// representative kernels run with context.Background() (no checks: Done()
// is nil) and with a cancellable context that is never cancelled (the
// stepped loops run in sub-ranges and every check is a non-blocking
// receive). Compare with benchstat -col /ctx.
func BenchmarkCancellable(b *testing.B) {
	be, err := cpu.New()
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	type prog struct {
		name  string
		p     *exec.Program
		feeds exec.Feeds
	}
	var progs []prog
	add := func(name string, y, x *graph.Node, opts ...exec.Option) {
		p, err := exec.Compile(be, []*graph.Node{y}, opts...)
		if err != nil {
			b.Fatal(err)
		}
		progs = append(progs, prog{name, p, exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 2)}})
	}
	_, x, y := chain(1<<24, false)
	add("chain16M-fused", y, x)
	_, x, y = chain(1<<20, true)
	add("chain1M-unfused", y, x, exec.DisablePasses("fuse"))
	g := graph.New()
	x = g.Input("x", tensor.Float32, 1<<12, 1<<12)
	add("sum-all-16M", ops.Sum(x), x)
	add("sum-rows-16M", ops.Sum(x, 1), x)
	add("max-cols-16M", ops.Max(x, 0), x)
	add("argmax-rows-16M", ops.ArgMax(x, 1), x)
	add("softmax-rows-16M", ops.Softmax(x, 1), x, exec.DisablePasses("fuse"))
	add("transpose-16M", ops.Transpose(x, 1, 0), x)
	add("concat-16M", ops.Concat(0, x, x), x)
	add("exp-16M", ops.Exp(x), x, exec.DisablePasses("fuse"))
	m := g.Input("m", tensor.Float32, 1024, 1024)
	add("matmul-1024", ops.MatMul(m, m), m)
	mlp, mlpFeeds := mlpStep(b, be)
	progs = append(progs, prog{"mlp", mlp, mlpFeeds})
	for _, pr := range progs {
		defer pr.p.Close()
		for _, cancellable := range []bool{false, true} {
			name := pr.name + "/ctx=background"
			if cancellable {
				name = pr.name + "/ctx=cancellable"
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				if cancellable {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				out, err := pr.p.Run(ctx, pr.feeds)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if err := pr.p.RunInto(ctx, pr.feeds, out); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchRun compiles ys on be, runs it once (warm-up), then times RunInto
// with feeds into preallocated outputs, b.SetBytes(bytes) per iteration:
// the loop the one-op kernel benchmarks share.
func benchRun(b *testing.B, be exec.Backend, ys []*graph.Node, feeds exec.Feeds, bytes int64, opts ...exec.Option) {
	p, err := exec.Compile(be, ys, opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	out := make([]*tensor.Tensor, len(ys))
	for i, y := range ys {
		out[i] = tensor.Zeros(y.DType(), y.Shape()...)
	}
	ctx := context.Background()
	if err := p.RunInto(ctx, feeds, out); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for range b.N {
		if err := p.RunInto(ctx, feeds, out); err != nil {
			b.Fatal(err)
		}
	}
}

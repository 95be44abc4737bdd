package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// FFTWorkload is one of the FFT benchmarks of issue 16 (bench/cmd/fftpeers):
// its name (shared with fftw/fftw_bench.c and fft_bench.py), its input
// (complex64 from Uniform(1, 2n) as interleaved parts, or float32 from
// Uniform(2, n)) and the transform.
type FFTWorkload struct {
	Name  string
	Shape []int
	Real  bool
	Build func(x *graph.Node) *graph.Node
}

// FFTWorkloads are the four: complex64 FFTs of 2^20 and 1000
// points, a 4096x4096 complex64 2-D FFT, and a 1024x1024 real 2-D FFT.
var FFTWorkloads = []FFTWorkload{
	{"fft/c64/1d-1048576", []int{1 << 20}, false, func(x *graph.Node) *graph.Node { return ops.FFT(x) }},
	{"fft/c64/1d-1000", []int{1000}, false, func(x *graph.Node) *graph.Node { return ops.FFT(x) }},
	{"fft/c64/2d-4096x4096", []int{4096, 4096}, false, func(x *graph.Node) *graph.Node { return ops.FFT2(x) }},
	{"rfft2/f32/1024x1024", []int{1024, 1024}, true, func(x *graph.Node) *graph.Node { return ops.RFFT2(x) }},
}

// FFTInput is the workload's input tensor.
func (w FFTWorkload) FFTInput() *tensor.Tensor {
	n := 1
	for _, d := range w.Shape {
		n *= d
	}
	if w.Real {
		t, _ := tensor.New(Uniform(2, n, -1, 1), w.Shape...)
		return t
	}
	u := Uniform(1, 2*n, -1, 1)
	c := make([]complex64, n)
	for i := range c {
		c[i] = complex(u[2*i], u[2*i+1])
	}
	t, _ := tensor.New(c, w.Shape...)
	return t
}

// LoomFFT compiles the workload on the CPU backend with the given threads
// and returns a function running it once (RunInto a preallocated output)
// and a closer.
func (w FFTWorkload) LoomFFT(threads int) (run func() error, out *tensor.Tensor, closeFn func(), err error) {
	be, err := cpu.New(cpu.Threads(threads))
	if err != nil {
		return nil, nil, nil, err
	}
	g := graph.New()
	in := w.FFTInput()
	x := g.Input("x", in.DType(), w.Shape...)
	y := w.Build(x)
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		be.Close()
		return nil, nil, nil, fmt.Errorf("%s: %w", w.Name, err)
	}
	out = tensor.Zeros(y.DType(), y.Shape()...)
	outs := []*tensor.Tensor{out}
	feeds := exec.Feeds{x: in}
	ctx := context.Background()
	run = func() error { return p.RunInto(ctx, feeds, outs) }
	return run, out, func() { p.Close(); be.Close() }, nil
}

// TimeMedian calibrates the iterations of f to target and returns the
// median over rounds of the time per call.
func TimeMedian(f func() error, target time.Duration, rounds int) (time.Duration, error) {
	if err := f(); err != nil {
		return 0, err
	}
	iters := 1
	for {
		t0 := time.Now()
		for range iters {
			if err := f(); err != nil {
				return 0, err
			}
		}
		if time.Since(t0) > target || iters > 1<<24 {
			break
		}
		iters *= 2
	}
	ts := make([]time.Duration, rounds)
	for r := range ts {
		t0 := time.Now()
		for range iters {
			_ = f()
		}
		ts[r] = time.Since(t0) / time.Duration(iters)
	}
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			if ts[j] < ts[i] {
				ts[i], ts[j] = ts[j], ts[i]
			}
		}
	}
	return ts[len(ts)/2], nil
}

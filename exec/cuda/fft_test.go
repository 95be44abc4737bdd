//go:build linux

package cuda

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// randC is a tensor of complex dtype dt with parts uniform in [-1, 1).
func randC(dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 77))
	n := 1
	for _, v := range shape {
		n *= v
	}
	vals := make([]complex128, n)
	for i := range vals {
		vals[i] = complex(r.Float64()*2-1, r.Float64()*2-1)
	}
	t, err := tensor.FromComplex128s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// fftCase is one transform: op, attribute, operand shape.
type fftCase struct {
	op    graph.Op
	attr  opdef.FFTAttr
	shape []int
}

func (c fftCase) String() string {
	return fmt.Sprintf("%v %v %v", c.op, c.shape, c.attr)
}

func fftCases() []fftCase {
	F := func(norm string, inv bool, axes ...int) opdef.FFTAttr {
		return opdef.FFTAttr{Axes: axes, Inverse: inv, Norm: norm}
	}
	R := func(norm string, n int, axes ...int) opdef.FFTAttr {
		return opdef.FFTAttr{Axes: axes, Norm: norm, N: n}
	}
	return []fftCase{
		// In place along the innermost axes: no transpose.
		{ops.OpFFT, F("backward", false, 1), []int{3, 8}},
		{ops.OpFFT, F("backward", true, 1, 2), []int{2, 3, 5}},
		// Axes elsewhere: transposed in and out, scaled on the way out.
		{ops.OpFFT, F("ortho", true, 0), []int{5, 4, 3}},
		{ops.OpFFT, F("forward", false, 2, 0), []int{4, 3, 6}},
		{ops.OpFFT, F("backward", false, 1), []int{2, 7, 3}},
		// Four axes: a pass of three and one of one (cuFFT's largest rank
		// is 3), the outer one strided.
		{ops.OpFFT, F("backward", false, 0, 1, 2, 3), []int{2, 3, 2, 5}},
		{ops.OpRFFT, R("backward", 0, 1), []int{3, 10}},
		{ops.OpRFFT, R("ortho", 0, 2, 0), []int{6, 2, 4}},
		{ops.OpRFFT, R("forward", 0, 0, 1, 2, 3), []int{3, 2, 2, 6}},
		{ops.OpIRFFT, R("backward", 10, 1), []int{3, 6}},
		{ops.OpIRFFT, R("backward", 9, 1), []int{3, 5}},
		{ops.OpIRFFT, R("ortho", 6, 0, 1), []int{5, 4}},
		{ops.OpIRFFT, R("forward", 5, 1, 0), []int{3, 4}},
		{ops.OpIRFFT, R("backward", 4, 0, 1, 2, 3), []int{2, 3, 2, 3}},
	}
}

func (c fftCase) build(g *graph.Graph, cdt tensor.DType) (*graph.Node, exec.Feeds) {
	var t *tensor.Tensor
	if c.op == ops.OpRFFT {
		t = exectest.Rand(cdt.RealDType(), tensor.Shape(c.shape), -1, 1, uint64(len(c.shape)*7+c.shape[0]))
	} else {
		t = randC(cdt, uint64(len(c.shape)*7+c.shape[0]), c.shape...)
	}
	x := g.Input(fmt.Sprintf("x%d", g.Len()), t.DType(), t.Shape()...)
	return ops.Apply(c.op, c.attr, x), exec.Feeds{x: t}
}

// TestFFTMatchesReference runs the transforms on the device (the
// emulator's cuFFT without a GPU) against the float64 references of the
// declarations.
func TestFFTMatchesReference(t *testing.T) {
	b := open(t)
	defer b.Close()
	var cs []refCase
	for _, c := range fftCases() {
		cs = append(cs, refCase{c.String(), c.build})
	}
	checkAgainstReference(t, b, tensor.Complex128, 1e-9, cs)
	checkAgainstReference(t, b, tensor.Complex64, 1e-4, cs)
}

// TestFFTRunAllocations: transforms with and without transposes allocate
// nothing per run.
func TestFFTRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Complex64, 4, 6)
	outs := []*graph.Node{
		ops.Apply(ops.OpFFT, opdef.FFTAttr{Axes: []int{1}, Norm: "ortho"}, x),
		ops.Apply(ops.OpFFT, opdef.FFTAttr{Axes: []int{0}, Norm: "backward", Inverse: true}, x),
	}
	p, err := exec.Compile(b, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{x: randC(tensor.Complex64, 1, 4, 6)}
	res := []*tensor.Tensor{tensor.Zeros(tensor.Complex64, 4, 6), tensor.Zeros(tensor.Complex64, 4, 6)}
	allocs := testing.AllocsPerRun(10, func() {
		if err := p.RunInto(context.Background(), feeds, res); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per run", allocs)
	}
}

// TestNVRTCCompilesFFTKernels compiles the transposes and scalings of
// every case with a real NVRTC (no GPU needed).
func TestNVRTCCompilesFFTKernels(t *testing.T) {
	n := realNVRTC(t)
	funcs := map[string]string{}
	for _, c := range fftCases() {
		for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
			g := graph.New()
			out, _ := c.build(g, dt)
			s, err := newFFTStep(&Backend{}, out)
			if err != nil {
				t.Fatalf("%v %v: %v", c, dt, err)
			}
			for _, f := range s.funcs() {
				funcs[f.Name] = f.Source
			}
		}
	}
	var src strings.Builder
	src.WriteString(cudagen.Prelude())
	for _, f := range funcs {
		src.WriteString("\n" + f)
	}
	res, err := n.Compile(src.String(), "loom_fft.cu", nvrtcOptions(checkArch(n)))
	if err != nil {
		t.Fatalf("NVRTC rejects the FFT kernels: %v", err)
	}
	if strings.Contains(res.Log, "warning") {
		t.Errorf("NVRTC warns:\n%s", res.Log)
	}
	t.Logf("%d kernels compile", len(funcs))
}

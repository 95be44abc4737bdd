package cpu_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func fftData(dt tensor.DType, shape tensor.Shape, seed uint64) *tensor.Tensor {
	rng := rand.New(rand.NewPCG(seed, 17))
	t := tensor.Zeros(dt, shape...)
	for i := range t.Size() {
		if dt.IsComplex() {
			t.SetComplex128(i, complex(rng.Float64()*2-1, rng.Float64()*2-1))
		} else {
			t.SetFloat64(i, rng.Float64()*2-1)
		}
	}
	return t
}

// maxRelErr is max|got-want| / max|want|.
func maxRelErr(got, want *tensor.Tensor) float64 {
	var e, m float64
	for i := range want.Size() {
		e = max(e, cmplx.Abs(got.Complex128(i)-want.Complex128(i)))
		m = max(m, cmplx.Abs(want.Complex128(i)))
	}
	return e / max(m, 1e-300)
}

// TestFFTAgainstReference runs the three ops over several shapes, axes
// and norm modes, in both precisions and on 1 and 3 threads, against the
// float64 reference evaluator (ops/fft.go's own transform).
func TestFFTAgainstReference(t *testing.T) {
	type tc struct {
		shape tensor.Shape
		axes  []int
	}
	cases := []tc{
		{tensor.Shape{1}, []int{0}}, {tensor.Shape{8}, []int{0}}, {tensor.Shape{3, 7}, []int{1}},
		{tensor.Shape{6, 5}, []int{0}}, {tensor.Shape{4, 6, 10}, []int{0, 2}}, {tensor.Shape{4, 6, 10}, []int{2, 1}},
		{tensor.Shape{2, 9, 12}, []int{1}}, {tensor.Shape{2, 67, 3}, []int{0, 1, 2}}, {tensor.Shape{1000}, []int{0}},
		{tensor.Shape{16, 33}, []int{1, 0}},
	}
	for _, threads := range []int{1, 3} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		for ci, c := range cases {
			for _, cdt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
				rdt := cdt.RealDType()
				for _, norm := range []string{opdef.NormBackward, opdef.NormOrtho, opdef.NormForward} {
					name := fmt.Sprintf("%d/%s/%v/%v/%s", threads, cdt.Short(), c.shape, c.axes, norm)
					t.Run(name, func(t *testing.T) {
						g := graph.New()
						x := g.Input("x", cdt, c.shape...)
						r := g.Input("r", rdt, c.shape...)
						ra := c.axes[len(c.axes)-1]
						n := c.shape[ra]
						hs := c.shape.Clone()
						hs[ra] = n/2 + 1
						h := g.Input("h", cdt, hs...)
						outs := []*graph.Node{
							ops.Apply(ops.OpFFT, opdef.FFTAttr{Axes: c.axes, Norm: norm}, x),
							ops.Apply(ops.OpFFT, opdef.FFTAttr{Axes: c.axes, Norm: norm, Inverse: true}, x),
							ops.Apply(ops.OpRFFT, opdef.FFTAttr{Axes: c.axes, Norm: norm}, r),
							ops.Apply(ops.OpIRFFT, opdef.FFTAttr{Axes: c.axes, Norm: norm, N: n}, h),
						}
						if err := g.Err(); err != nil {
							t.Fatal(err)
						}
						feeds := exec.Feeds{x: fftData(cdt, c.shape, uint64(ci)), r: fftData(rdt, c.shape, uint64(ci+100)), h: fftData(cdt, hs, uint64(ci+200))}
						want, err := exectest.Eval(outs, feeds)
						if err != nil {
							t.Fatal(err)
						}
						p, err := exec.Compile(be, outs)
						if err != nil {
							t.Fatal(err)
						}
						defer p.Close()
						got, err := p.Run(context.Background(), feeds)
						if err != nil {
							t.Fatal(err)
						}
						// complex64: a few float32 ulps times log2 of the
						// length; complex128: near float64 rounding.
						tol := 1e-12
						if cdt == tensor.Complex64 {
							tol = 3e-6 * math.Log2(float64(c.shape.Size())+2)
						}
						for i := range outs {
							if e := maxRelErr(got[i], want[i]); e > tol {
								t.Errorf("output %d (%v %v): relative error %.3g > %.3g", i, outs[i].Op(), outs[i].Attr(), e, tol)
							}
						}
					})
				}
			}
		}
	}
}

func TestFFTAllocs(t *testing.T) {
	be, err := cpu.New(cpu.Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Complex64, 64, 96)
	r := g.Input("r", tensor.Float32, 64, 96)
	h := g.Input("h", tensor.Complex64, 64, 49)
	outs := []*graph.Node{
		ops.Apply(ops.OpFFT, opdef.FFTAttr{Axes: []int{0, 1}, Norm: "ortho"}, x),
		ops.Apply(ops.OpRFFT, opdef.FFTAttr{Axes: []int{0, 1}, Norm: "backward"}, r),
		ops.Apply(ops.OpIRFFT, opdef.FFTAttr{Axes: []int{0, 1}, Norm: "backward", N: 96}, h),
	}
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{x: fftData(tensor.Complex64, x.Shape(), 1), r: fftData(tensor.Float32, r.Shape(), 2), h: fftData(tensor.Complex64, h.Shape(), 3)}
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
		t.Errorf("%v allocations per run, want 0", n)
	}
}

package exectest

import (
	"fmt"
	"math/rand/v2"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// fftCases are the cases of the Fourier transforms FFT, RFFT and IRFFT
// (ops/fft.go): a NumPy golden, then a few cases per dtype against Eval
// (ops/fft.go's own float64 transform): two axes with a norm mode, a
// strided axis (not the last), a length with a large prime factor
// (Bluestein on the CPU), and the real transforms over one and two axes.
// Sweeps over lengths live in internal/fft and exec/cpu's tests.
func fftCases() []Case {
	c128 := tensor.Complex128
	x, err := tensor.FromComplex128s(c128, []complex128{1, 2 + 1i, -1, 0.5i, 3}, 5)
	if err != nil {
		panic(err)
	}
	want := func(vals ...complex128) *tensor.Tensor {
		t, err := tensor.FromComplex128s(c128, vals, len(vals))
		if err != nil {
			panic(err)
		}
		return t
	}
	cs := []Case{{
		Name:   "golden/fft",
		Source: "numpy: np.fft.fft(x) and np.fft.ifft(x, norm='ortho') of x = [1, 2+1j, -1, 0.5j, 3], printed with 17 digits",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, x)
			return []*graph.Node{ops.FFT(ns[0]), ops.IFFT(ns[0], ops.FFTNorm("ortho"))}, feeds
		},
		Want: []*tensor.Tensor{
			want(5+1.5i, 4.011265856398602+1.4433502657751003i, -2.2907884558096345-1.017779761190154i,
				-4.417415476689735-0.29123723318479333i, 2.6969380761007677-1.6343332714001528i),
			want(2.23606797749979+0.6708203932499369i, 1.2061073738537635-0.7308960585480709i,
				-1.9755282581475768-0.1302452501960311i, -1.0244717418524232-0.4551649464289373i, 1.7938926261462367+0.6454858619231024i),
		},
	}}
	rnd := func(dt tensor.DType, seed uint64, shape ...int) *tensor.Tensor {
		rng := rand.New(rand.NewPCG(seed, 16))
		t := tensor.Zeros(dt, shape...)
		for i := range t.Size() {
			t.SetComplex128(i, complex(rng.Float64()*2-1, rng.Float64()*2-1))
		}
		return t
	}
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		rdt := dt.RealDType()
		cs = append(cs,
			Case{Name: fmt.Sprintf("fft/%s/fft2-ortho-ifft2", dt.Short()), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, rnd(dt, 1, 4, 6))
				return []*graph.Node{ops.FFT2(ns[0], ops.FFTNorm("ortho")), ops.IFFT2(ns[0])}, feeds
			}},
			Case{Name: fmt.Sprintf("fft/%s/axis0-bluestein", dt.Short()), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, rnd(dt, 2, 5, 3), rnd(dt, 3, 2, 67))
				return []*graph.Node{ops.FFT(ns[0], ops.FFTAxes(0)), ops.IFFT(ns[1], ops.FFTNorm("forward"))}, feeds
			}},
			Case{Name: fmt.Sprintf("fft/%s/rfft-irfft", rdt.Short()), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, rnd(rdt, 4, 3, 10), rnd(dt, 5, 3, 6), rnd(rdt, 6, 4, 7), rnd(dt, 7, 4, 4))
				return []*graph.Node{ops.RFFT(ns[0]), ops.IRFFT(ns[1]), ops.RFFT2(ns[2], ops.FFTNorm("ortho")), ops.IRFFT2(ns[3], ops.FFTLengths(4, 7))}, feeds
			}},
		)
	}
	return cs
}

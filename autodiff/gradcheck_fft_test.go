package autodiff_test

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the Fourier transforms (ops/fft.go).
// The checks run on real float64 inputs: a complex operand is
// Complex(x0, x1), so that finite differences perturb its real and
// imaginary parts separately, and a complex result is seen through its
// real and imaginary parts (concatenated), so the weighted loss depends on
// both.
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	parts := func(y *graph.Node) *graph.Node { return ops.Concat(0, ops.Real(y), ops.Imag(y)) }
	cplxIn := func(dims ...int) []operand {
		return []operand{{s(dims...), uniform(-2, 2)}, {s(dims...), uniform(-2, 2)}}
	}
	add("FFT",
		gradCase{"fft2-ortho", cplxIn(3, 4), func(x []*graph.Node) *graph.Node {
			return parts(ops.FFT2(ops.Complex(x[0], x[1]), ops.FFTNorm("ortho")))
		}},
		gradCase{"ifft-axis0", cplxIn(5, 2), func(x []*graph.Node) *graph.Node {
			return parts(ops.IFFT(ops.Complex(x[0], x[1]), ops.FFTAxes(0)))
		}},
		gradCase{"fft-real-operand-padded", op1(s(2, 3), uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return parts(ops.FFT(x[0], ops.FFTLengths(5), ops.FFTNorm("forward")))
		}},
	)
	add("RFFT",
		gradCase{"even", op1(s(3, 6), uniform(-2, 2)), func(x []*graph.Node) *graph.Node { return parts(ops.RFFT(x[0])) }},
		gradCase{"rfft2-odd-ortho", op1(s(4, 5), uniform(-2, 2)), func(x []*graph.Node) *graph.Node {
			return parts(ops.RFFT2(x[0], ops.FFTNorm("ortho")))
		}},
	)
	add("IRFFT",
		gradCase{"even", cplxIn(3, 4), func(x []*graph.Node) *graph.Node { return ops.IRFFT(ops.Complex(x[0], x[1])) }},
		gradCase{"odd-forward", cplxIn(2, 4), func(x []*graph.Node) *graph.Node {
			return ops.IRFFT(ops.Complex(x[0], x[1]), ops.FFTLengths(7), ops.FFTNorm("forward"))
		}},
		gradCase{"irfft2", cplxIn(3, 3), func(x []*graph.Node) *graph.Node {
			return ops.IRFFT2(ops.Complex(x[0], x[1]), ops.FFTLengths(3, 4))
		}},
	)
}

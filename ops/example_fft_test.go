package ops_test

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// show4 prints a float64 tensor's shape and its values to 4 decimals
// (rounding errors of order 1e-16, and their signs, hidden).
func show4(t *tensor.Tensor) {
	v, err := tensor.Values[float64](t)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range v {
		if math.Abs(v[i]) < 5e-5 {
			v[i] = 0
		}
	}
	fmt.Printf("%s%v %.4f\n", t.DType().Short(), t.Shape(), v)
}

// RFFT of a real signal gives its n/2+1 non-negative frequencies, as
// numpy.fft.rfft: here 8 samples of 1 + cos(2πk/8) + 0.5·sin(2π·2k/8),
// whose spectrum is 8 at frequency 0, 4 at frequency 1 and -2i at
// frequency 2 (n times the mean, n/2 times each amplitude, by hand; NumPy
// 1.24 agrees). IRFFT with the length
// gives the signal back.
func ExampleRFFT() {
	g := graph.New()
	x := g.Const(mustNew64([]float64{2, 2.207106781186548, 1, -0.20710678118654746, 0, 0.7928932188134523, 1, 1.2071067811865475}, 8))
	X := ops.RFFT(x)
	out, err := compute([]*graph.Node{ops.Abs(X), ops.Imag(X), ops.IRFFT(X, ops.FFTLengths(8))}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		show4(o)
	}
	// Output:
	// f64[5] [8.0000 4.0000 2.0000 0.0000 0.0000]
	// f64[5] [0.0000 0.0000 -2.0000 0.0000 0.0000]
	// f64[8] [2.0000 2.2071 1.0000 -0.2071 0.0000 0.7929 1.0000 1.2071]
}

// FFTConvolve is scipy.signal.fftconvolve: [1 2 3] * [0 1 0.5] is
// [0 1 2.5 4 1.5] in "full" mode (by hand), its middle three in "same",
// and the one full overlap in "valid".
func ExampleFFTConvolve() {
	g := graph.New()
	a := g.Const(mustNew64([]float64{1, 2, 3}, 3))
	b := g.Const(mustNew64([]float64{0, 1, 0.5}, 3))
	out, err := compute([]*graph.Node{ops.FFTConvolve(a, b, "full"), ops.FFTConvolve(a, b, "same"), ops.FFTConvolve(a, b, "valid")}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		show4(o)
	}
	// Output:
	// f64[5] [0.0000 1.0000 2.5000 4.0000 1.5000]
	// f64[3] [1.0000 2.5000 4.0000]
	// f64[1] [2.5000]
}

package cpu

import (
	"context"
	"math"
	"math/cmplx"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestCastComplex: casts to a complex type give zero imaginary parts;
// casts from one keep the real part (then convert it as a real cast
// does); between the complex types each part rounds. Longer than one
// buffer chunk, so the chunked loops are covered.
func TestCastComplex(t *testing.T) {
	n := castChunk*2 + 7
	vals := make([]complex128, n)
	for i := range vals {
		vals[i] = complex(float64(i%11)*1.7-9, 1e300*float64(i%3-1)) // 1e300 overflows float32: Inf
	}
	for _, from := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		src, _ := tensor.FromComplex128s(from, vals)
		for _, to := range allDTypes {
			f := castFunc(from, to)
			if f == nil {
				t.Fatalf("no Cast from %v to %v", from, to)
			}
			dst := tensor.Zeros(to, n)
			f(dst.Bytes(), src.Bytes())
			for i := range vals {
				v := src.Complex128(i)
				w := tensor.Zeros(to, 1)
				if to.IsComplex() {
					w.SetComplex128(0, v) // rounds each part
				} else {
					w.SetFloat64(0, real(v)) // the real part, converted as SetFloat64 (= Cast) converts
				}
				if got, want := dst.Complex128(i), w.Complex128(0); got != want {
					t.Fatalf("Cast %v %v to %v = %v, want %v", from, v, to, got, want)
				}
			}
		}
	}
	for _, from := range allDTypes {
		if from.IsComplex() {
			continue
		}
		src, _ := tensor.FromFloat64s(from, []float64{-2.5, 0, 1, math.NaN(), 3e38})
		for _, to := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
			dst := tensor.Zeros(to, src.Size())
			castFunc(from, to)(dst.Bytes(), src.Bytes())
			for i := 0; i < src.Size(); i++ {
				w := tensor.Zeros(to.RealDType(), 1)
				w.SetFloat64(0, src.Float64(i))
				got := dst.Complex128(i)
				if re := real(got); (re != w.Float64(0) && !(re != re && w.Float64(0) != w.Float64(0))) || imag(got) != 0 {
					t.Errorf("Cast %v %v to %v = %v, want %v+0i", from, src.Float64(i), to, got, w.Float64(0))
				}
			}
		}
	}
}

// TestComplexConstantsOptimised: constants of complex values pass the
// optimising pipeline intact: a product by 1+2i is not the product by 1
// (simplify), folding computes in complex (constfold), and a chain of
// complex ops is not fused into real code (fuse).
func TestComplexConstantsOptimised(t *testing.T) {
	be, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Complex64, 3)
	c := g.Const(must(tensor.New([]complex64{1 + 2i, 1 + 2i, 1 + 2i}, 3)))
	one := g.Const(must(tensor.New([]complex64{1, 1, 1}, 3)))
	folded := ops.Exp(ops.Mul(c, ops.ComplexScalar(c, 1i))) // exp(-2+i), folded at compile time
	y := ops.Add(ops.Mul(ops.Mul(x, c), one), folded)
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	xv := must(tensor.New([]complex64{1, 1i, -2 + 0.5i}, 3))
	out, err := p.Run(context.Background(), exec.Feeds{x: xv})
	if err != nil {
		t.Fatal(err)
	}
	e := cmplx.Exp(-2 + 1i)
	for i, v := range []complex128{1, 1i, -2 + 0.5i} {
		want := v*(1+2i) + e // by hand: x*(1+2i)*1 + exp((1+2i)*i)
		if got := out[0].Complex128(i); cmplx.Abs(got-want) > 1e-5*cmplx.Abs(want) {
			t.Errorf("element %d: %v, want %v", i, got, want)
		}
	}
}

func must(t *tensor.Tensor, err error) *tensor.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

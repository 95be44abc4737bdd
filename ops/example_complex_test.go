package ops_test

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// Complex builds complex numbers from their parts (complex64 from float32
// parts); Real, Imag and Abs take them apart. Tensors print them NumPy
// style.
func ExampleComplex() {
	g := graph.New()
	re := g.Const(mustNew([]float32{3, 0, -1}, 3))
	im := g.Const(mustNew([]float32{4, 2, 0}, 3))
	z := ops.Complex(re, im)
	out, err := compute([]*graph.Node{z, ops.Mul(z, z), ops.Conj(z)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o)
	}
	// Output:
	// c64[3] [ 3+4j  0+2j -1+0j]
	// c64[3] [-7+24j  -4+0j   1-0j]
	// c64[3] [ 3-4j  0-2j -1-0j]
}

// Real and Imag return the parts of a complex tensor as floats; Angle
// its argument, here of 1.5+1.5i and -2-2i: pi/4 and -3pi/4.
func ExampleReal() {
	g := graph.New()
	z := ops.Complex(g.Const(mustNew([]float32{1.5, -2}, 2)), g.Const(mustNew([]float32{0.25, 3}, 2)))
	out, err := compute([]*graph.Node{ops.Real(z), ops.Imag(z), ops.Angle(ops.Complex(ops.Real(z), ops.Real(z)))}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		fmt.Println(o)
	}
	// Output:
	// f32[2] [1.5  -2]
	// f32[2] [0.25    3]
	// f32[2] [ 0.7853982 -2.3561945]
}

// Abs of a complex tensor is real: the magnitude sqrt(re² + im²) (3+4i,
// -5+12i and -2i have magnitudes 5, 13 and 2).
func ExampleAbs() {
	g := graph.New()
	z := ops.Complex(g.Const(mustNew([]float32{3, -5, 0}, 3)), g.Const(mustNew([]float32{4, 12, -2}, 3)))
	out, err := compute([]*graph.Node{ops.Abs(z)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0])
	// Output:
	// f32[3] [ 5 13  2]
}

package ops_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// compute computes outs on the CPU (what an Example shows a reader).
func compute(outs []*graph.Node, feeds exec.Feeds) ([]*tensor.Tensor, error) {
	be, err := exec.Open("cpu")
	if err != nil {
		return nil, err
	}
	defer be.Close()
	p, err := exec.Compile(be, outs)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.Run(context.Background(), feeds)
}

// Builders check their operands and give the result's type at once;
// nothing is computed until a Program runs. Broadcasting follows NumPy: a
// [2,1] column times a [3] row is a [2,3] outer product, and ops.Scalar
// makes a constant of its operand's dtype.
func ExampleAdd() {
	g := graph.New()
	col := g.Const(mustNew([]float32{1, 2}, 2, 1))
	row := g.Const(mustNew([]float32{10, 20, 30}, 3))
	outer := ops.Mul(col, row)
	shifted := ops.Add(outer, ops.Scalar(outer, 0.5))
	fmt.Println(outer.Type(), shifted.Type())
	out, err := compute([]*graph.Node{shifted}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out[0])
	// Output:
	// f32[2,3] f32[2,3]
	// f32[2,3]
	// [[10.5 20.5 30.5]
	//  [20.5 40.5 60.5]]
}

// MatMul multiplies the last two axes and broadcasts the leading (batch)
// axes; Transpose, Reshape and the reductions take axes, negative ones
// counting from the end.
func ExampleMatMul() {
	g := graph.New()
	a := g.Input("a", tensor.Float32, 4, 2, 3)
	b := g.Input("b", tensor.Float32, 3, 5)
	c := ops.MatMul(a, b)
	fmt.Println(c.Type())
	fmt.Println(ops.Transpose(c, 0, 2, 1).Type())
	fmt.Println(ops.Sum(c, -1).Type(), ops.Reshape(c, 8, 5).Type())
	// Output:
	// f32[4,2,5]
	// f32[4,5,2]
	// f32[4,2] f32[8,5]
}

// A mistake is a build error naming the call site, the op and the operand
// types. It is sticky: the graph keeps the first error, later builders
// return invalid nodes, and exec.Compile returns it too. Kinds are never
// mixed implicitly: float32 plus int32 asks for ops.Cast.
func Example_buildErrors() {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	y := g.Input("y", tensor.Float32, 4, 5)
	bad := ops.MatMul(x, y)
	fmt.Println(bad.Err())
	later := ops.Relu(x)
	fmt.Println(later.Valid(), errors.Is(g.Err(), graph.ErrShape), g.Err() == bad.Err())

	h := graph.New()
	f := h.Input("f", tensor.Float32, 3)
	i := h.Input("i", tensor.Int32, 3)
	fmt.Println(ops.Add(f, ops.Cast(i, tensor.Float32)).Type())
	fmt.Println(ops.Add(f, i).Err())
	// Output:
	// example_test.go:79: MatMul(f32[2,3], f32[4,5]): inner dimensions 3 and 4 differ
	// false true true
	// f32[3]
	// example_test.go:88: Add(f32[3], i32[3]): mixed dtypes float32 and int32: loom does not mix float and integer implicitly; use ops.Cast
}

func mustNew(data []float32, shape ...int) *tensor.Tensor {
	t, err := tensor.New(data, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

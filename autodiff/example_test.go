package autodiff_test

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func runOnCPU(outs []*graph.Node, feeds exec.Feeds) []*tensor.Tensor {
	be, _ := exec.Open("cpu")
	defer be.Close()
	p, err := exec.Compile(be, outs)
	if err != nil {
		panic(err)
	}
	defer p.Close()
	res, err := p.Run(context.Background(), feeds)
	if err != nil {
		panic(err)
	}
	return res
}

// Gradients are graph nodes, so they can be differentiated again.
func ExampleGrad() {
	g := graph.New()
	x := g.Input("x", tensor.Float64)
	y := ops.Mul(ops.Mul(x, x), x) // x³
	dy := autodiff.Grad(y, x)[0]   // 3x²
	d2y := autodiff.Grad(dy, x)[0] // 6x
	out := runOnCPU([]*graph.Node{y, dy, d2y}, exec.Feeds{x: tensor.Scalar(2.0)})
	fmt.Println(out[0].Float64(0), out[1].Float64(0), out[2].Float64(0))
	// Output: 8 12 12
}

// A straight-through estimator: the forward pass binarises x with Sign,
// whose true derivative is zero almost everywhere; the custom rule passes
// the gradient straight through where |x| <= 1 instead.
func ExampleGrad_customGradient() {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	binary := ops.CustomGradient("straight-through", ops.Sign(x), []*graph.Node{x},
		func(dy *graph.Node) []*graph.Node {
			inside := ops.LessEqual(ops.Abs(x), ops.Scalar(x, 1))
			return []*graph.Node{ops.Where(inside, dy, ops.Scalar(dy, 0))}
		})
	grad := autodiff.Grad(ops.Sum(binary), x)[0]
	xv, _ := tensor.New([]float32{-2, -0.5, 0.3, 1.5}, 4)
	out := runOnCPU([]*graph.Node{binary, grad}, exec.Feeds{x: xv})
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// f32[4] [-1 -1  1  1]
	// f32[4] [0 1 1 0]
}

// The Jacobian of y = x·sum(x) for x = [1 2 3]: dy_i/dx_j = δ_ij·sum(x) +
// x_i, so with sum(x) = 6 the rows are [7 1 1], [2 8 2], [3 3 9] (by hand).
// Its shape is y's shape followed by x's.
func ExampleJacobian() {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 3)
	y := ops.Mul(x, ops.Sum(x))
	j := autodiff.Jacobian(y, x)
	xv, _ := tensor.New([]float64{1, 2, 3})
	out := runOnCPU([]*graph.Node{j}, exec.Feeds{x: xv})
	fmt.Println(out[0])
	// Output:
	// f64[3,3]
	// [[7 1 1]
	//  [2 8 2]
	//  [3 3 9]]
}

// The Hessian of f(x) = sum(x³) + sum(x)² at x = [1 2]: the second
// derivatives are 6·x_i on the diagonal plus 2 everywhere, [[8 2] [2 14]]
// (by hand); HVP gives H·v without building H: H·[1 0] = [8 2].
func ExampleHessian() {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	f := ops.Add(ops.Sum(ops.Mul(ops.Mul(x, x), x)), ops.Square(ops.Sum(x)))
	h := autodiff.Hessian(f, x)
	v, _ := tensor.New([]float64{1, 0})
	hv := autodiff.HVP(f, x, g.Const(v))
	xv, _ := tensor.New([]float64{1, 2})
	out := runOnCPU([]*graph.Node{h, hv}, exec.Feeds{x: xv})
	fmt.Println(out[0])
	fmt.Println(out[1])
	// Output:
	// f64[2,2]
	// [[ 8  2]
	//  [ 2 14]]
	// f64[2] [8 2]
}

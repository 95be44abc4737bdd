package nn_test

import (
	"context"
	"fmt"
	"math"

	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// A classifier of two Linear layers with a BatchNorm and a ReLU between
// them, trained with Adam on eight points of two classes (the sign of
// x0·x1), then evaluated with the running statistics on a graph built by
// the same function.
func Example() {
	g := graph.New()
	m := nn.New(g, 1)
	model := func(x *graph.Node) *graph.Node {
		return m.Linear(ops.Relu(m.BatchNorm(m.Linear(x, 16))), 2)
	}
	x := g.Input("x", tensor.Float32, 8, 2)
	labels := g.Input("labels", tensor.Int32, 8)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(model(x), labels))
	upd, err := optim.Minimize(optim.Adam{LR: 0.05}, loss, m.Params()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	m.SetTraining(false)
	predict := ops.ArgMax(model(x), -1)

	be, _ := exec.Open("cpu")
	defer be.Close()
	step, err := exec.Compile(be, []*graph.Node{loss}, append(upd, m.Updates()...)...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer step.Close()
	eval, err := exec.Compile(be, []*graph.Node{predict}, exec.ShareVariables(step))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eval.Close()

	xv, _ := tensor.New([]float32{1, 1, -1, -1, 1, -1, -1, 1, 2, 0.5, -0.5, -2, 0.5, -2, -2, 0.5}, 8, 2)
	lv, _ := tensor.New([]int32{1, 1, 0, 0, 1, 1, 0, 0}, 8)
	feeds := exec.Feeds{x: xv, labels: lv}
	ctx := context.Background()
	var first, last float64
	for i := range 200 {
		out, err := step.Run(ctx, feeds)
		if err != nil {
			fmt.Println(err)
			return
		}
		if i == 0 {
			first = out[0].Float64(0)
		}
		last = out[0].Float64(0)
	}
	out, err := eval.Run(ctx, exec.Feeds{x: xv})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("parameters:", m.Names())
	fmt.Printf("loss %.2f, then below a tenth of it: %v\n", first, last < first/10)
	fmt.Println("predictions:", out[0])
	// Output:
	// parameters: [linear0/weight linear0/bias batchnorm0/weight batchnorm0/bias linear1/weight linear1/bias]
	// loss 0.87, then below a tenth of it: true
	// predictions: i64[8] [1 1 0 0 1 1 0 0]
}

// Scope names a group of layers; a transformer block here, whose
// Variables are listed with their shapes.
func ExampleModel_Scope() {
	g := graph.New()
	m := nn.New(g, 1)
	x := g.Input("x", tensor.Float32, 2, 5, 8) // [batch, time, width]
	b := m.Scope("block0")
	h := b.LayerNorm(x)
	x = ops.Add(x, b.MultiHeadAttention(h, h, h, 2, nil))
	x = ops.Add(x, b.Linear(ops.Gelu(b.Linear(b.LayerNorm(x), 32)), 8))
	for _, p := range m.Params() {
		fmt.Println(p.Name(), p.Shape())
	}
	fmt.Println(x.Shape(), g.Err())
	// Output:
	// block0/layernorm0/weight [8]
	// block0/layernorm0/bias [8]
	// block0/attention0/query/weight [8,8]
	// block0/attention0/query/bias [8]
	// block0/attention0/key/weight [8,8]
	// block0/attention0/key/bias [8]
	// block0/attention0/value/weight [8,8]
	// block0/attention0/value/bias [8]
	// block0/attention0/out/weight [8,8]
	// block0/attention0/out/bias [8]
	// block0/layernorm1/weight [8]
	// block0/layernorm1/bias [8]
	// block0/linear0/weight [8,32]
	// block0/linear0/bias [32]
	// block0/linear1/weight [32,8]
	// block0/linear1/bias [8]
	// [2,5,8] <nil>
}

// WithInit replaces PyTorch's default initialisers: GPT-2's N(0, 0.02)
// weights and zero biases.
func ExampleModel_WithInit() {
	g := graph.New()
	m := nn.New(g, 1).WithInit(nn.Normal(0.02), nn.Zeros)
	m.Linear(g.Input("x", tensor.Float32, 4, 512), 512)
	be, _ := exec.Open("cpu")
	defer be.Close()
	p, err := exec.Compile(be, m.Params())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	out, _ := p.Run(context.Background(), nil)
	var s2 float64
	for i := range out[0].Size() {
		s2 += out[0].Float64(i) * out[0].Float64(i)
	}
	fmt.Printf("weight std %.3f, bias %v\n", math.Sqrt(s2/float64(out[0].Size())), out[1].Float64(0))
	// Output:
	// weight std 0.020, bias 0
}

// A small convolutional classifier: Conv, BatchNorm and ReLU, the mean
// over the positions, then a Linear head, trained with Adam to tell
// 6×6 images with a vertical bar from ones with a horizontal bar.
func ExampleModel_Conv() {
	g := graph.New()
	m := nn.New(g, 2)
	model := func(x *graph.Node) *graph.Node {
		h := ops.Relu(m.BatchNorm(m.Conv(x, 4, []int{3, 3}, ops.Padding(1))))
		return m.Linear(ops.Mean(h, 2, 3), 2) // [N, 4] -> [N, 2]
	}
	x := g.Input("x", tensor.Float32, 4, 1, 6, 6)
	labels := g.Input("labels", tensor.Int32, 4)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(model(x), labels))
	upd, err := optim.Minimize(optim.Adam{LR: 0.05}, loss, m.Params()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	m.SetTraining(false)
	predict := ops.ArgMax(model(x), -1)

	be, _ := exec.Open("cpu")
	defer be.Close()
	step, err := exec.Compile(be, []*graph.Node{loss}, append(upd, m.Updates()...)...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer step.Close()
	eval, err := exec.Compile(be, []*graph.Node{predict}, exec.ShareVariables(step))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eval.Close()

	// images 0 and 2: a vertical bar (label 1); 1 and 3: a horizontal one
	xv := tensor.Zeros(tensor.Float32, 4, 1, 6, 6)
	for i, pos := range []int{1, 2, 4, 3} {
		for k := range 6 {
			if i%2 == 0 {
				xv.SetFloat64(i*36+k*6+pos, 1)
			} else {
				xv.SetFloat64(i*36+pos*6+k, 1)
			}
		}
	}
	lv, _ := tensor.New([]int32{1, 0, 1, 0}, 4)
	ctx := context.Background()
	for range 100 {
		if _, err := step.Run(ctx, exec.Feeds{x: xv, labels: lv}); err != nil {
			fmt.Println(err)
			return
		}
	}
	out, err := eval.Run(ctx, exec.Feeds{x: xv})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Names()[:4])
	fmt.Println("predictions:", out[0])
	// Output:
	// [conv0/weight conv0/bias batchnorm0/weight batchnorm0/bias]
	// predictions: i64[4] [1 0 1 0]
}

package exec_test

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Hand a value from one program to another without a trip through the
// host: the first program's output stays on the device (keep output 0),
// the second takes it as a device feed. On a GPU nothing but x and the
// final result crosses the bus; on the CPU nothing is copied at all.
func ExampleProgram_RunDevice() {
	be, _ := exec.Open("cpu") // or "cuda": the same code
	defer be.Close()

	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	encode, _ := exec.Compile(be, []*graph.Node{ops.Tanh(x)})
	defer encode.Close()

	h := g.Input("h", tensor.Float32, 3)
	decode, _ := exec.Compile(be, []*graph.Node{ops.Sum(ops.Mul(h, h))})
	defer decode.Close()

	xv, _ := tensor.New([]float32{0, 0, 0}, 3)
	_, dev, err := encode.RunDevice(context.Background(), exec.Feeds{x: xv}, nil, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	hv := dev[0] // tanh(x), on the device
	defer hv.Free()
	out, _, err := decode.RunDevice(context.Background(), nil, exec.DeviceFeeds{h: hv})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(hv.Type(), out[0])
	// Output:
	// f32[3] f32[] 0
}

// Set the device and the compile precision for everything that gets a
// context, as Python's `with device:` and precision contexts do.
func ExampleCompileContext() {
	be, _ := exec.Open("cpu")
	defer be.Close()
	ctx := exec.WithPrecision(exec.WithBackend(context.Background(), be), tensor.Float64)

	g := graph.New()
	x := g.Input("x", tensor.Float32) // a float32 graph...
	y := ops.Sub(ops.Add(x, g.Const(tensor.Scalar[float32](1))), x)
	p, err := exec.CompileContext(ctx, []*graph.Node{y}) // ...computed in float64
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	out, _ := p.Run(ctx, exec.Feeds{x: tensor.Scalar[float32](1e8)})
	fmt.Println(out[0], "(0 in float32: 1e8+1 rounds to 1e8)")
	// Output:
	// f32[] 1 (0 in float32: 1e8+1 rounds to 1e8)
}

// Report a device's memory and give loom's cached memory back to the
// driver (the operating system, for the CPU).
func ExampleDeviceMemory() {
	be, _ := exec.Open("cpu")
	defer be.Close()
	m, err := exec.DeviceMemory(be)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Free <= m.Total, m.InUse > 0)
	released, err := exec.ReleaseCache(be)
	fmt.Println(released >= 0, err)
	// Output:
	// true true
	// true <nil>
}

package bench

import (
	"fmt"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/nn"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	"github.com/loomgraph/loom/tensor"
)

// newConv builds the conv workload: y = ops.Conv(x, w) and its gradients
// by x and w for the upstream gradient gy (autodiff.VJP), as PyTorch's
// conv2d(x, w).backward(gy).
func newConv(g *graph.Graph, s Spec, in *loomInst) []*graph.Node {
	xd, wd, gyd := s.convData()
	c, y := s.InC, s.ConvOut()
	xs := []int{s.Batch, c, s.Size, s.Size}
	ws := []int{s.OutC, c / s.Groups, s.Kernel, s.Kernel}
	gs := []int{s.Batch, s.OutC, y, y}
	x := g.Input("x", tensor.Float32, xs...)
	w := g.Input("w", tensor.Float32, ws...)
	gy := g.Input("gy", tensor.Float32, gs...)
	out := ops.Conv(x, w, ops.Stride(s.Stride), ops.Padding(s.Pad), ops.Groups(s.Groups))
	grads := autodiff.VJP([]*graph.Node{out}, []*graph.Node{x, w}, []*graph.Node{gy})
	in.feeds = exec.Feeds{x: f32(xd, xs...), w: f32(wd, ws...), gy: f32(gyd, gs...)}
	return []*graph.Node{out, grads[0], grads[1]}
}

// cnnLogits is examples/cnn's model (its logits function): stages of
// m.Conv (3×3, padding 1), m.BatchNorm, ReLU and 2×2 max pooling, then
// m.Linear to the classes.
func cnnLogits(m *nn.Model, x *graph.Node, channels []int, classes int) *graph.Node {
	h := x
	for _, c := range channels {
		h = m.Conv(h, c, []int{3, 3}, ops.Padding(1))
		h = ops.MaxPool(ops.Relu(m.BatchNorm(h)), []int{2, 2})
	}
	return m.Linear(ops.Reshape(h, h.Shape()[0], -1), classes)
}

// newCNN builds one training step of examples/cnn's model with package nn
// in training mode (batch statistics, running statistics updated through
// m.Updates), softmax cross-entropy and Adam with the learning rate fed
// as a scalar Input; the initial parameters (nn's own initialisers) are
// replaced by cnnParams' after compiling (see setCNNParams).
func (e *Loom) newCNN(g *graph.Graph, s Spec, in *loomInst) ([]*graph.Node, []exec.Option, error) {
	m := nn.New(g, s.Seed)
	m.SetTraining(true)
	x := g.Input("x", tensor.Float32, s.Batch, s.Channels[0], s.Size, s.Size)
	y := g.Input("y", tensor.Int32, s.Batch)
	lr := g.Input("lr", tensor.Float32)
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(cnnLogits(m, x, s.Channels[1:], s.Classes), y))
	params := m.Params()
	want := s.cnnParams()
	if len(params) != len(want) {
		return nil, nil, fmt.Errorf("cnn: the model has %d parameters (%v), the workload %d", len(params), m.Names(), len(want))
	}
	in.params = params
	for i, p := range want {
		if !tensor.Shape(p.shape).Equal(params[i].Shape()) {
			return nil, nil, fmt.Errorf("cnn: parameter %d (%s) is %v, the workload's %s is %v", i, m.Names()[i], params[i].Shape(), p.name, p.shape)
		}
	}
	opts, err := optim.Minimize(optim.Adam{LR: s.LR, LRNode: lr}, loss, params...)
	if err != nil {
		return nil, nil, err
	}
	opts = append(opts, m.Updates()...)
	xd, yd := s.cnnData()
	yt, err := tensor.New(yd, s.Batch)
	if err != nil {
		return nil, nil, err
	}
	in.feeds = exec.Feeds{x: f32(xd, s.Batch, s.Channels[0], s.Size, s.Size), y: yt, lr: tensor.Scalar(float32(s.LR))}
	return []*graph.Node{loss}, opts, nil
}

// setCNNParams writes cnnParams' initial values into the compiled
// program's parameters.
func (in *loomInst) setCNNParams() error {
	for i, p := range in.spec.cnnParams() {
		if err := in.prog.Write(in.params[i], f32(p.init(), p.shape...)); err != nil {
			return err
		}
	}
	return nil
}

package bench

import "fmt"

// Kinds of the convolution workloads (issue 15).
const (
	KindConv = "conv" // a 2-D convolution, forward and backward (the gradients by the input and the filter)
	KindCNN  = "cnn"  // one training step of examples/cnn's model
)

// ConvSpec is the 2-D convolution of batch images of in channels,
// size×size, by out filters of k×k (groups groups: in/groups channels
// each), stride stride, padding pad on every side, forward and backward
// (what PyTorch's conv2d(x, w).backward(gy) computes: y, dx and dw).
func ConvSpec(batch, in, out, size, k, stride, pad, groups int) Spec {
	kind := fmt.Sprintf("%dx%d", k, k)
	if groups == in && groups == out && groups > 1 {
		kind = "dw" + kind // depthwise
	}
	name := fmt.Sprintf("conv2d/%s/%d-%d/%d/b%d", kind, in, out, size, batch)
	if stride != 1 {
		name += fmt.Sprintf("/s%d", stride)
	}
	if groups > 1 && kind[:2] != "dw" {
		name += fmt.Sprintf("/g%d", groups)
	}
	return Spec{Name: name, Kind: KindConv, Batch: batch, InC: in, OutC: out, Size: size, Kernel: k, Stride: stride, Pad: pad,
		Groups: groups, Seed: 800}
}

// ConvOut is the convolution's output size (PyTorch's rule, no dilation).
func (s Spec) ConvOut() int { return (s.Size+2*s.Pad-s.Kernel)/s.Stride + 1 }

// convFLOPs: the forward pass, the input gradient and the filter gradient
// each do batch·out·Y²·(in/groups)·k² multiply-adds (2 FLOPs each).
func (s Spec) convFLOPs() float64 {
	y := float64(s.ConvOut())
	return 3 * 2 * float64(s.Batch*s.OutC) * y * y * float64(s.InC/s.Groups*s.Kernel*s.Kernel)
}

// convData are the inputs: x [batch, in, size, size] Uniform(seed, -1, 1),
// w [out, in/groups, k, k] Uniform(seed+1, ±1/√(in/groups·k²)) (PyTorch's
// default bound), the upstream gradient gy [batch, out, Y, Y]
// Uniform(seed+2, -1, 1).
func (s Spec) convData() (x, w, gy []float32) {
	fanIn := s.InC / s.Groups * s.Kernel * s.Kernel
	a := initScale(fanIn)
	y := s.ConvOut()
	return Uniform(s.Seed, s.Batch*s.InC*s.Size*s.Size, -1, 1),
		Uniform(s.Seed+1, s.OutC*fanIn, -a, a),
		Uniform(s.Seed+2, s.Batch*s.OutC*y*y, -1, 1)
}

// CNNSpec is one training step of examples/cnn's model on a batch of
// MNIST-sized images: three stages of conv 3×3 (padding 1, with bias),
// BatchNorm (training mode: batch statistics, running statistics
// updated), ReLU and 2×2 max pooling, with 16, 32 and 64 channels
// (28 → 14 → 7 → 3), then a linear layer 576 → 10, softmax cross-entropy
// and Adam (lr fed as a scalar input, as the example's schedule does).
func CNNSpec(batch int) Spec {
	return Spec{Name: fmt.Sprintf("cnn/train-step/b%d", batch), Kind: KindCNN, Batch: batch, Channels: []int{1, 16, 32, 64},
		Size: 28, Classes: 10, LR: 1e-3, Seed: 900}
}

// cnnParam is one parameter of the cnn workload, in creation order:
// per stage l a conv weight [out, in, 3, 3] (Uniform(seed+10+2l, ±1/√(9in)))
// and bias [out] (Uniform(seed+11+2l), same bound), a BatchNorm gain
// (ones) and bias (zeros); then the linear weight [in, classes] laid out
// [in, out] (Uniform(seed+50, ±1/√in)) and bias (Uniform(seed+51)).
type cnnParam struct {
	name  string
	shape []int
	seed  uint64  // 0: ones (gain) or zeros (bias), see gain
	bound float64 // of the uniform initialisation
	gain  bool
}

// cnnFeatures is the size of the flattened features after the last stage.
func (s Spec) cnnFeatures() int {
	side := s.Size
	for range s.Channels[1:] {
		side /= 2
	}
	return s.Channels[len(s.Channels)-1] * side * side
}

func (s Spec) cnnParams() []cnnParam {
	var ps []cnnParam
	for l := 0; l+1 < len(s.Channels); l++ {
		in, out := s.Channels[l], s.Channels[l+1]
		a := initScale(9 * in)
		ps = append(ps,
			cnnParam{name: fmt.Sprintf("conv%d/weight", l), shape: []int{out, in, 3, 3}, seed: s.Seed + 10 + 2*uint64(l), bound: a},
			cnnParam{name: fmt.Sprintf("conv%d/bias", l), shape: []int{out}, seed: s.Seed + 11 + 2*uint64(l), bound: a},
			cnnParam{name: fmt.Sprintf("batchnorm%d/weight", l), shape: []int{out}, gain: true},
			cnnParam{name: fmt.Sprintf("batchnorm%d/bias", l), shape: []int{out}},
		)
	}
	f := s.cnnFeatures()
	a := initScale(f)
	return append(ps,
		cnnParam{name: "linear0/weight", shape: []int{f, s.Classes}, seed: s.Seed + 50, bound: a},
		cnnParam{name: "linear0/bias", shape: []int{s.Classes}, seed: s.Seed + 51, bound: a})
}

// cnnData are the inputs: images x [batch, 1, size, size]
// Uniform(seed, 0, 1), labels Classes(seed+1, batch, classes).
func (s Spec) cnnData() (x []float32, y []int32) {
	for _, c := range Classes(s.Seed+1, s.Batch, s.Classes) {
		y = append(y, int32(c))
	}
	return Uniform(s.Seed, s.Batch*s.Channels[0]*s.Size*s.Size, 0, 1), y
}

// cnnInit is the initial value of the parameter p.
func (p cnnParam) init() []float32 {
	n := 1
	for _, d := range p.shape {
		n *= d
	}
	switch {
	case p.seed != 0:
		return Uniform(p.seed, n, -p.bound, p.bound)
	case p.gain:
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return v
	}
	return make([]float32, n)
}

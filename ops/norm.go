package ops

import (
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The normalisations of layers: LayerNorm, GroupNorm, BatchNorm (the
// inference form, from given statistics) and BatchStats (the batch's
// statistics, for BatchNorm in training). All are composites of the
// reductions (Sum with fused elementwise producers) and elementwise ops,
// so their gradients are the primitives' rules and their kernels are the
// fused groups the compiler forms: a mean (one fused sum), a centred
// sum of squares (one fused sum reading x and the mean in place), and
// one fused elementwise pass for the result.

// LayerNorm normalises x over axes (default: the last) to mean 0 and
// variance 1, with the biased variance and eps added to it as
// torch.nn.functional.layer_norm: (x - mean) / sqrt(var + eps), then
// multiplies by gamma and adds beta where they are not nil. gamma and
// beta have the shape of x's normalised axes, in order (PyTorch's
// normalized_shape when the axes are the trailing ones).
func LayerNorm(x, gamma, beta *graph.Node, eps float64, axes ...int) *graph.Node {
	const name = "LayerNorm"
	nodes, bad := normOperands(name, x, gamma, beta)
	if bad != nil {
		return bad
	}
	if bad := checkEps(name, nodes, eps); bad != nil {
		return bad
	}
	if len(axes) == 0 {
		if x.Rank() == 0 {
			return fail(graph.ErrShape, name, nodes, "x must have at least one axis")
		}
		axes = []int{-1}
	}
	ax, err := normAxes(axes, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, name, nodes, "%v", err)
	}
	// The affine parameters' shape, and the shape that broadcasts them
	// over x: x's length on the normalised axes, 1 elsewhere.
	pshape, bshape := make([]int, len(ax)), make([]int, x.Rank())
	for i := range bshape {
		bshape[i] = 1
	}
	for i, a := range ax {
		pshape[i] = x.Shape()[a]
		bshape[a] = x.Shape()[a]
	}
	for _, p := range []*graph.Node{gamma, beta} {
		if p != nil && !p.Shape().Equal(pshape) {
			return fail(graph.ErrShape, name, nodes, "gamma and beta must have shape %v (x's lengths on axes %v), got %v", tensor.Shape(pshape), ax, p.Shape())
		}
	}
	y := normalised(x, ax, eps)
	return scaleShift(y, gamma, beta, bshape)
}

// GroupNorm normalises x [N, C, S...] over each of groups groups of C/groups
// channels and all the spatial positions, as
// torch.nn.functional.group_norm (biased variance, eps added to it), then
// scales and shifts each channel by gamma and beta [C] where they are not
// nil. C must be a multiple of groups.
func GroupNorm(x, gamma, beta *graph.Node, groups int, eps float64) *graph.Node {
	const name = "GroupNorm"
	nodes, bad := normOperands(name, x, gamma, beta)
	if bad != nil {
		return bad
	}
	if bad := checkEps(name, nodes, eps); bad != nil {
		return bad
	}
	if x.Rank() < 2 {
		return fail(graph.ErrShape, name, nodes, "x must be [N, C, ...], got rank %d", x.Rank())
	}
	n, c := x.Shape()[0], x.Shape()[1]
	if groups < 1 || c%groups != 0 {
		return fail(graph.ErrShape, name, nodes, "%d groups do not divide the %d channels", groups, c)
	}
	if bad := checkParams(name, nodes, c, gamma, beta); bad != nil {
		return bad
	}
	y := Reshape(normalised(Reshape(x, n, groups, -1), []int{2}, eps), x.Shape()...)
	return scaleShift(y, gamma, beta, channelShape(x))
}

// BatchNorm is batch normalisation's inference form, as
// torch.nn.functional.batch_norm with training=False: for x [N, C, S...]
// and the statistics mean and variance [C],
// (x - mean) / sqrt(variance + eps) · gamma + beta, gamma and beta [C]
// (nil: 1 and 0). It is computed as x·scale + shift with
// scale = gamma/sqrt(variance + eps) and shift = beta - mean·scale, per
// channel, so the pass over x is one multiply-add. In training, pass the
// batch's statistics from BatchStats: the gradient then flows through
// them, as PyTorch's training-mode batch_norm.
func BatchNorm(x, gamma, beta, mean, variance *graph.Node, eps float64) *graph.Node {
	const name = "BatchNorm"
	if _, bad := graph.Operands(name, x, mean, variance); bad != nil {
		return bad
	}
	nodes, bad := normOperands(name, x, gamma, beta, mean, variance)
	if bad != nil {
		return bad
	}
	if bad := checkEps(name, nodes, eps); bad != nil {
		return bad
	}
	if x.Rank() < 2 {
		return fail(graph.ErrShape, name, nodes, "x must be [N, C, ...], got rank %d", x.Rank())
	}
	c := x.Shape()[1]
	if bad := checkParams(name, nodes, c, gamma, beta, mean, variance); bad != nil {
		return bad
	}
	scale := Rsqrt(Add(variance, Scalar(variance, eps)))
	if gamma != nil {
		scale = Mul(scale, gamma)
	}
	shift := Neg(Mul(mean, scale))
	if beta != nil {
		shift = Add(beta, shift)
	}
	bs := channelShape(x)
	return Add(Mul(x, Reshape(scale, bs...)), Reshape(shift, bs...))
}

// BatchStats returns the mean and the biased variance [C] of x [N, C, S...]
// over every axis but 1 (the statistics torch's batch_norm normalises with
// in training; its running variance uses the unbiased one, var·m/(m-1)
// for m = N·S... elements per channel).
func BatchStats(x *graph.Node) (mean, variance *graph.Node) {
	const name = "BatchStats"
	if _, bad := graph.Operands(name, x); bad != nil {
		return bad, bad
	}
	if err := floats.Check([]tensor.DType{x.DType()}); err != nil {
		bad := fail(graph.ErrDType, name, []*graph.Node{x}, "%v", err)
		return bad, bad
	}
	if x.Rank() < 2 {
		bad := fail(graph.ErrShape, name, []*graph.Node{x}, "x must be [N, C, ...], got rank %d", x.Rank())
		return bad, bad
	}
	// Per (sample, channel) sums over the spatial positions (rows of
	// [N·C, S]), then over the samples (columns of [N, C]): both are
	// reductions the fused kernels take, where one over axes {0, 2, ...}
	// is neither rows nor columns and would make (x - mean)² a temporary.
	n, c := x.Shape()[0], x.Shape()[1]
	x3 := Reshape(x, n, c, -1)
	count := float64(x.Shape().Size() / max(1, c))
	if x.Shape().Size() == 0 {
		count = 0
	}
	m := Div(Sum(Sum(x3, 2), 0), Scalar(x, count))
	d := Sub(x3, Reshape(m, 1, c, 1))
	v := Div(Sum(Sum(Mul(d, d), 2), 0), Scalar(x, count))
	return m, v
}

// normalised is (x - mean)·rsqrt(var + eps) over axes (sorted,
// normalised). The centred x is computed once and read twice (by the
// variance and the result). Writing the result as x·r - mean·r instead,
// so that the centring fuses into the variance's reduction, measured
// 15% slower on the CPU (BenchmarkNorm, LayerNorm [256, 1024]): the fused
// kernels gather the per-row operands r and mean·r chunk by chunk.
func normalised(x *graph.Node, axes []int, eps float64) *graph.Node {
	m := MeanKeepDims(x, axes...)
	d := Sub(x, m)
	v := MeanKeepDims(Mul(d, d), axes...)
	return Mul(d, Rsqrt(Add(v, Scalar(v, eps))))
}

// scaleShift is y·gamma + beta with the parameters reshaped to bshape (either
// may be nil).
func scaleShift(y, gamma, beta *graph.Node, bshape []int) *graph.Node {
	if gamma != nil {
		y = Mul(y, Reshape(gamma, bshape...))
	}
	if beta != nil {
		y = Add(y, Reshape(beta, bshape...))
	}
	return y
}

// channelShape is [1, C, 1, ...] for x [N, C, S...].
func channelShape(x *graph.Node) []int {
	s := make([]int, x.Rank())
	for i := range s {
		s[i] = 1
	}
	s[1] = x.Shape()[1]
	return s
}

// normOperands checks x and the non-nil parameters (one graph, no error,
// x's float dtype for all) and returns the non-nil nodes for messages.
func normOperands(name string, x *graph.Node, params ...*graph.Node) ([]*graph.Node, *graph.Node) {
	nodes := []*graph.Node{x}
	for _, p := range params {
		if p != nil {
			nodes = append(nodes, p)
		}
	}
	if _, bad := graph.Operands(name, nodes...); bad != nil {
		return nil, bad
	}
	if err := floats.Check([]tensor.DType{x.DType()}); err != nil {
		return nil, fail(graph.ErrDType, name, nodes, "%v", err)
	}
	for _, p := range nodes[1:] {
		if p.DType() != x.DType() {
			return nil, fail(graph.ErrDType, name, nodes, "the parameters must have x's dtype %v, got %v", x.DType(), p.DType())
		}
	}
	return nodes, nil
}

func checkEps(name string, nodes []*graph.Node, eps float64) *graph.Node {
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return fail(graph.ErrInvalid, name, nodes, "eps %v must be finite and >= 0", eps)
	}
	return nil
}

// checkParams checks that every non-nil parameter has shape [c].
func checkParams(name string, nodes []*graph.Node, c int, params ...*graph.Node) *graph.Node {
	for _, p := range params {
		if p != nil && !p.Shape().Equal([]int{c}) {
			return fail(graph.ErrShape, name, nodes, "the per-channel parameters must have shape [%d] (x's axis 1), got %v", c, p.Shape())
		}
	}
	return nil
}

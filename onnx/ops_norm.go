package onnx

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The normalisations: BatchNormalization, InstanceNormalization,
// LayerNormalization, LRN, MeanVarianceNormalization; and Dropout, which
// in inference is the identity.

func init() {
	reg := func(name string, d opDef) {
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	reg("BatchNormalization", opDef{attrs: []string{"epsilon", "momentum", "spatial", "is_test", "consumed_inputs", "training_mode"}, fn: batchNormOp})
	reg("InstanceNormalization", opDef{attrs: []string{"epsilon"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, s, b := n.in(0), n.in(1), n.in(2)
		if x == nil || s == nil || b == nil {
			return nil, fmt.Errorf("inputs input, scale and B are required")
		}
		if x.Rank() < 3 {
			return nil, fmt.Errorf("the input %v must be [N, C, D...] with at least one spatial dim", x.Shape())
		}
		// One group per channel: each (n, c) normalised over its positions.
		return []*graph.Node{ops.GroupNorm(x, s, b, x.Shape()[1], n.attrFloat("epsilon", 1e-5))}, nil
	}})
	// LayerNormalization widens float16 itself: its Mean and InvStdDev
	// stay float32 (stash_type) where Y returns to X's type.
	reg("LayerNormalization", opDef{attrs: []string{"axis", "epsilon", "stash_type"}, storageOK: true, fn: layerNormOp})
	reg("LRN", opDef{attrs: []string{"alpha", "beta", "bias", "size"}, fn: lrnOp})
	reg("MeanVarianceNormalization", opDef{attrs: []string{"axes", "across_channels", "normalize_variance"}, fn: mvnOp})
	reg("Dropout", opDef{attrs: []string{"is_test", "ratio", "seed"}, storageOK: true, fn: dropoutOp})
}

// batchNormOp is inference-mode batch normalisation with the given
// statistics; training mode (training_mode=1 from opset 14, is_test=0
// before opset 7) normalises with the batch's mean and biased variance and
// outputs the running statistics input·momentum + batch·(1-momentum)
// (opset 14 on). The training outputs of opsets 6 to 13 (saved mean and
// variance) are refused.
func batchNormOp(n *onode) ([]*graph.Node, error) {
	x, s, b, mean, vr := n.in(0), n.in(1), n.in(2), n.in(3), n.in(4)
	if x == nil || s == nil || b == nil || mean == nil || vr == nil {
		return nil, fmt.Errorf("inputs X, scale, B, input_mean and input_var are required")
	}
	if n.attrInt("spatial", 1) != 1 {
		return nil, fmt.Errorf("%w: spatial=0 (statistics per position, not per channel)", ErrUnsupported)
	}
	eps := n.attrFloat("epsilon", 1e-5)
	training := false
	switch {
	case n.opset() < 7:
		training = n.attrInt("is_test", 0) == 0
	case n.opset() >= 14:
		training = n.attrInt("training_mode", 0) != 0
	default:
		// Opsets 7 to 13 train when the extra outputs are asked for,
		// which the importer refuses (only Y is returned).
	}
	if !training {
		return []*graph.Node{ops.BatchNorm(x, s, b, mean, vr, eps)}, nil
	}
	if n.opset() < 14 {
		return nil, fmt.Errorf("%w: training mode (is_test=0) before opset 7", ErrUnsupported)
	}
	bm, bv := ops.BatchStats(x)
	y := ops.BatchNorm(x, s, b, bm, bv, eps)
	mom := n.attrFloat("momentum", 0.9)
	run := func(in, batch *graph.Node) *graph.Node {
		return ops.Add(ops.Mul(in, scalarLike(in, mom)), ops.Mul(batch, scalarLike(batch, 1-mom)))
	}
	return []*graph.Node{y, run(mean, bm), run(vr, bv)}, nil
}

// layerNormOp is opset 17's LayerNormalization: X normalised over the
// axes from axis on, (X - mean)·InvStdDev·Scale + B with InvStdDev =
// 1/sqrt(var + epsilon) (biased variance); Mean and InvStdDev keep the
// normalised axes with length 1. The statistics are computed in
// stash_type, which must be 1 (float32), as the spec's function body
// does: a float64 X is normalised in float32 and cast back before Scale
// and B apply; a float16 or bfloat16 X is computed in float32 throughout
// and Y cast back, while Mean and InvStdDev stay float32.
func layerNormOp(n *onode) ([]*graph.Node, error) {
	x, scale := n.in(0), n.in(1)
	if x == nil || scale == nil {
		return nil, fmt.Errorf("inputs X and Scale are required")
	}
	if st := n.attrInt("stash_type", 1); st != 1 {
		return nil, fmt.Errorf("%w: stash_type %d (loom computes the statistics in float32, stash_type 1)", ErrUnsupported, st)
	}
	if !x.DType().IsFloat() {
		return nil, fmt.Errorf("X is %s; LayerNormalization takes floats", x.DType())
	}
	r := x.Rank()
	ax, err := n.axis(n.attrInt("axis", -1), r)
	if err != nil {
		return nil, err
	}
	bias := n.in(2)
	for _, p := range []*graph.Node{scale, bias} {
		if p == nil {
			continue
		}
		if _, err := ops.BroadcastShapes(p.Shape(), x.Shape()); err != nil || p.Rank() > r {
			return nil, fmt.Errorf("Scale and B (%v) must broadcast to X %v", p.Shape(), x.Shape())
		}
	}
	dt := x.DType()
	xs := x
	if dt != tensor.Float32 {
		xs = ops.Cast(x, tensor.Float32)
	}
	axes := make([]int, 0, r-ax)
	for i := ax; i < r; i++ {
		axes = append(axes, i)
	}
	mean := ops.MeanKeepDims(xs, axes...)
	d := ops.Sub(xs, mean)
	inv := ops.Rsqrt(ops.Add(ops.MeanKeepDims(ops.Mul(d, d), axes...), scalarLike(xs, n.attrFloat("epsilon", 1e-5))))
	y := ops.Mul(d, inv)
	// The affine step runs in float64 for float64, else in float32.
	wide := func(p *graph.Node) *graph.Node {
		if p == nil || p.DType() == y.DType() {
			return p
		}
		return ops.Cast(p, y.DType())
	}
	if dt == tensor.Float64 {
		y = ops.Cast(y, dt)
	}
	y = ops.Mul(y, wide(scale))
	if bias != nil {
		y = ops.Add(y, wide(bias))
	}
	if y.DType() != dt {
		y = ops.Cast(y, dt)
	}
	return []*graph.Node{y, mean, inv}, nil
}

// lrnOp is local response normalisation across channels:
// x / (bias + alpha/size · square_sum)^beta, square_sum the sum of x² over
// the channels c - floor((size-1)/2) .. c + ceil((size-1)/2). The sum
// over the channel window is an average pool (counting the zero padding)
// of x² viewed as [N, 1, C, rest].
func lrnOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	size := n.attrInt("size", 0)
	if size < 1 {
		return nil, fmt.Errorf("the size attribute is required and must be >= 1, got %d", size)
	}
	if x.Rank() < 2 {
		return nil, fmt.Errorf("X %v must be [N, C, D...]", x.Shape())
	}
	alpha, beta, bias := n.attrFloat("alpha", 1e-4), n.attrFloat("beta", 0.75), n.attrFloat("bias", 1)
	s := x.Shape()
	rest := 1
	for _, d := range s[2:] {
		rest *= d
	}
	sq := ops.Reshape(ops.Mul(x, x), s[0], 1, s[1], rest)
	lo, hi := (size-1)/2, size/2
	avg := ops.AvgPool(sq, []int{size, 1}, ops.Stride(1, 1), ops.PaddingLoHi([]int{lo, 0}, []int{hi, 0}))
	den := ops.Add(scalarLike(x, bias), ops.Mul(ops.Reshape(avg, s...), scalarLike(x, alpha)))
	return []*graph.Node{ops.Div(x, ops.Pow(den, scalarLike(x, beta)))}, nil
}

// mvnOp is MeanVarianceNormalization (opset 9 on): (X - E[X]) /
// (sqrt(E[X²] - E[X]²) + 1e-9) over axes (default [0, 2, 3]), the spec's
// function body. Opset 1's across_channels and normalize_variance
// attributes are refused unless they are the defaults of that form
// (normalize_variance=1, across_channels=0, the [0, 2, 3] axes).
func mvnOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	if n.attrInt("across_channels", 0) != 0 || n.attrInt("normalize_variance", 1) != 1 {
		return nil, fmt.Errorf("%w: across_channels=1 or normalize_variance=0 (opset 1)", ErrUnsupported)
	}
	as, ok := n.attrInts("axes")
	if !ok {
		as = []int{0, 2, 3}
	}
	axes, err := n.axes(as, x.Rank())
	if err != nil {
		return nil, err
	}
	mean := ops.MeanKeepDims(x, axes...)
	vr := ops.Sub(ops.MeanKeepDims(ops.Mul(x, x), axes...), ops.Mul(mean, mean))
	std := ops.Add(ops.Sqrt(vr), scalarLike(x, 1e-9))
	return []*graph.Node{ops.Div(ops.Sub(x, mean), std)}, nil
}

// dropoutOp is Dropout in inference: the identity, with a mask of all
// true (bool from opset 10, X's type before). Training (training_mode
// known true from opset 12, is_test=0 before opset 7) with a ratio above
// 0 is random and refused.
func dropoutOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	ratio := n.attrFloat("ratio", 0.5)
	training := false
	switch {
	case n.opset() < 7:
		training = n.attrInt("is_test", 0) == 0
	case n.opset() >= 12:
		// The ratio matters only in training.
		ratio = 0.5
		if n.has(2) {
			t, err := n.constant(2)
			if err != nil {
				return nil, err
			}
			if t.Size() != 1 {
				return nil, fmt.Errorf("training_mode %v must be a scalar", t.Shape())
			}
			training = t.Float64(0) != 0
		}
		if training && n.has(1) {
			r, err := n.constant(1)
			if err != nil {
				return nil, err
			}
			if r.Size() != 1 {
				return nil, fmt.Errorf("ratio %v must be a scalar", r.Shape())
			}
			ratio = r.Float64(0)
		}
	}
	if training && ratio != 0 {
		return nil, fmt.Errorf("%w: training mode with ratio %v drops random elements", ErrUnsupported, ratio)
	}
	outs := []*graph.Node{x}
	if len(n.p.Outputs) > 1 && n.p.Outputs[1] != "" {
		dt := tensor.Bool
		if n.opset() < 10 {
			dt = x.DType()
		}
		outs = append(outs, ops.Full(n.im.g, dt, 1, x.Shape()...))
	}
	return outs, nil
}

package optim

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// ClipGlobalNorm scales grads together so that their global L2 norm
// sqrt(Σ_i ‖grads[i]‖²) is at most maxNorm, in the graph (as
// torch.nn.utils.clip_grad_norm_ and optax.clip_by_global_norm): every
// gradient is multiplied by maxNorm / max(norm, maxNorm), so gradients
// whose norm is within the bound pass unchanged (the factor is exactly 1)
// and a zero gradient stays zero. It returns the clipped gradients, to
// pass to an Optimizer's Apply, and the norm before clipping (a scalar of
// the first gradient's dtype, for logging). The squares are summed in the
// first gradient's dtype; the gradients must be float nodes of one graph,
// and maxNorm positive and finite.
func ClipGlobalNorm(grads []*graph.Node, maxNorm float64) (clipped []*graph.Node, norm *graph.Node, err error) {
	if len(grads) == 0 {
		return nil, nil, fmt.Errorf("optim: ClipGlobalNorm: no gradients")
	}
	if !(maxNorm > 0) || math.IsInf(maxNorm, 0) {
		return nil, nil, fmt.Errorf("optim: ClipGlobalNorm: maxNorm must be positive and finite, got %v", maxNorm)
	}
	for i, g := range grads {
		if g == nil {
			return nil, nil, fmt.Errorf("optim: ClipGlobalNorm: gradient %d is nil", i)
		}
		if err := g.Err(); err != nil {
			return nil, nil, err
		}
		if !g.DType().IsFloat() {
			return nil, nil, fmt.Errorf("optim: ClipGlobalNorm: gradient %d is %s; gradients must be floats", i, g.Type())
		}
		if g.Graph() != grads[0].Graph() {
			return nil, nil, fmt.Errorf("optim: ClipGlobalNorm: gradient %d belongs to another graph than gradient 0", i)
		}
	}
	dt := grads[0].DType()
	var sq *graph.Node
	for _, g := range grads {
		s := ops.Cast(ops.Sum(ops.Square(g)), dt)
		if sq == nil {
			sq = s
		} else {
			sq = ops.Add(sq, s)
		}
	}
	norm = ops.Sqrt(sq)
	bound := ops.Scalar(norm, maxNorm)
	factor := ops.Div(bound, ops.Maximum(norm, bound))
	clipped = make([]*graph.Node, len(grads))
	for i, g := range grads {
		clipped[i] = ops.Mul(g, ops.Cast(factor, g.DType()))
	}
	if err := grads[0].Graph().Err(); err != nil {
		return nil, nil, err
	}
	return clipped, norm, nil
}

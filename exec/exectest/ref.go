package exectest

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Eval evaluates outputs with the ops' reference evaluators (each op's
// declaration holds one: see internal/opdef): naive float64 (int64 for
// integers) code written from each op's definition, index by index,
// sharing nothing with any backend. It is the "float64 reference" that
// golden values in the conformance suite come from. Integer results are
// exact; float32 results are computed in float64 and rounded once at the
// end of each op.
func Eval(outputs []*graph.Node, feeds map[*graph.Node]*tensor.Tensor) ([]*tensor.Tensor, error) {
	vals := map[*graph.Node]*opdef.Value{}
	for _, n := range graph.Ancestors(outputs...) {
		var v *opdef.Value
		switch n.Op() {
		case graph.OpInput:
			t := feeds[n]
			if t == nil {
				return nil, fmt.Errorf("exectest.Eval: no feed for %s", n)
			}
			v = opdef.FromTensor(t)
		case graph.OpConst, graph.OpVariable:
			v = opdef.FromTensor(n.Value())
		default:
			ins := make([]*opdef.Value, len(n.Inputs()))
			for i, in := range n.Inputs() {
				ins[i] = vals[in]
			}
			var err error
			if v, err = opdef.Evaluate(n, ins); err != nil {
				return nil, fmt.Errorf("exectest.Eval: %s: %w", n, err)
			}
		}
		vals[n] = v
	}
	out := make([]*tensor.Tensor, len(outputs))
	for i, n := range outputs {
		t, err := vals[n].Tensor()
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

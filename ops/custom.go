package ops

import (
	"sync/atomic"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

var customIDs atomic.Int64

// checkCustom: CustomGrad's attribute is a CustomAttr with a rule.
func checkCustom(attr graph.Attr) error {
	a, ok := attr.(opdef.CustomAttr)
	if !ok {
		return argErr("needs a CustomAttr attribute, got %T", attr)
	}
	if a.Rule == nil {
		return argErr("the CustomAttr has a nil rule")
	}
	return nil
}

// OpCustomGrad is the code of CustomGradient's nodes.
var OpCustomGrad graph.Op

func init() {
	OpCustomGrad = define(&opdef.Def{Name: "CustomGrad", Doc: "its first operand, with a user-given gradient rule", Arity: -1, Kind: opdef.Movement,
		DType: func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
			if err := checkCustom(attr); err != nil {
				return 0, err
			}
			if !in[0].IsFloat() {
				return 0, dtypeErr("the value must be float, got %v", in[0])
			}
			return in[0], nil
		},
		Shape: func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
			if err := checkCustom(attr); err != nil {
				return nil, err
			}
			return in[0].Clone(), nil
		},
		Cost: func(*graph.Node) float64 { return 0 },
		Ref: func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			out := opdef.NewValue(n.DType(), n.Shape())
			copy(out.F, in[0].F)
			return out, nil
		},
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a := n.Attr().(opdef.CustomAttr)
			cts := a.Rule(g)
			out := make([]*graph.Node, len(n.Inputs()))
			for i := 1; i < len(out) && i-1 < len(cts); i++ {
				if need[i] {
					out[i] = cts[i-1]
				}
			}
			return out
		},
	})
}

// CustomGradient returns value unchanged, but reverse-mode
// differentiation does not look inside the subgraph that computed it:
// given the cotangent dy of value, the gradient with respect to wrt[i] is
// rule(dy)[i] (nil for none), which must have wrt[i]'s shape and dtype.
// Use it for numerically stable or straight-through gradients. The rule
// is built with the ops builders, so it can be differentiated again.
//
// name labels the node in dumps and traces.
func CustomGradient(name string, value *graph.Node, wrt []*graph.Node, rule func(dy *graph.Node) []*graph.Node) *graph.Node {
	operands := append([]*graph.Node{value}, wrt...)
	if _, bad := graph.Operands("CustomGradient", operands...); bad != nil {
		return bad
	}
	if rule == nil {
		return fail(graph.ErrInvalid, "CustomGradient", operands, "nil rule")
	}
	if !value.DType().IsFloat() {
		return fail(graph.ErrDType, "CustomGradient", operands, "the value must be float, got %v", value.DType())
	}
	return Apply(OpCustomGrad, opdef.CustomAttr{ID: customIDs.Add(1), Name: name, Rule: rule}, operands...)
}

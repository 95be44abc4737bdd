package ops

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// FusedOp is one elementwise op inside a fused group. Args refer to the
// group's operands (Arg < 0: operand -Arg-1 of the Fused node) or to
// earlier ops of the group (Arg >= 0). Every op of a group computes over
// the group's whole domain (the Fused node's Domain shape); operands of
// smaller shape are read with NumPy broadcasting.
type FusedOp struct {
	Op    graph.Op
	Attr  graph.Attr
	Args  []int
	DType tensor.DType
}

// FusedReduce is an optional reduction applied to the group's last op.
type FusedReduce struct {
	Op       graph.Op // OpSum, OpMax or OpMin
	Axes     []int    // sorted, within the domain's rank
	KeepDims bool
}

// FusedAttr is the attribute of a Fused node: a small program of
// elementwise ops over one iteration domain, optionally followed by a
// reduction. The compiler's fusion pass builds it; backends run it as one
// kernel (the CPU in cache-sized chunks, CUDA as generated code).
type FusedAttr struct {
	Domain tensor.Shape
	Ops    []FusedOp
	Reduce *FusedReduce
	// Nodes are the IDs (in the graph before fusion) of the nodes the
	// group replaced, for the profiler; not part of the identity.
	Nodes []int
	// Sites are the call sites of the fused nodes, in op order.
	Sites []string
}

// String is canonical and complete (without Nodes and Sites, which do not
// change the value).
func (a *FusedAttr) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "domain=%v {", a.Domain)
	for i, o := range a.Ops {
		if i > 0 {
			b.WriteString("; ")
		}
		args := make([]string, len(o.Args))
		for k, r := range o.Args {
			if r < 0 {
				args[k] = fmt.Sprintf("in%d", -r-1)
			} else {
				args[k] = fmt.Sprintf("t%d", r)
			}
		}
		fmt.Fprintf(&b, "t%d=%s(%s)", i, o.Op, strings.Join(args, ","))
		if o.Attr != nil {
			if s := o.Attr.String(); s != "" {
				fmt.Fprintf(&b, "[%s]", s)
			}
		}
		b.WriteString(":" + o.DType.Short())
	}
	b.WriteString("}")
	if a.Reduce != nil {
		fmt.Fprintf(&b, " then %s%s", a.Reduce.Op, AxesAttr{Axes: a.Reduce.Axes, KeepDims: a.Reduce.KeepDims}.String()[4:])
	}
	return b.String()
}

// OpNames lists the ops of the group, reduction last.
func (a *FusedAttr) OpNames() []string {
	var names []string
	for _, o := range a.Ops {
		names = append(names, o.Op.String())
	}
	if a.Reduce != nil {
		names = append(names, a.Reduce.Op.String())
	}
	return names
}

func defineFused() {
	define(&Def{Op: OpFused, Name: "Fused", Arity: -1, Kind: Fusion,
		DType: func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
			a, ok := attr.(*FusedAttr)
			if !ok || len(a.Ops) == 0 {
				return 0, argErr("missing fused program")
			}
			dts := func(args []int) ([]tensor.DType, error) {
				out := make([]tensor.DType, len(args))
				for k, r := range args {
					switch {
					case r < 0 && -r-1 < len(in):
						out[k] = in[-r-1]
					case r >= 0 && r < len(a.Ops):
						out[k] = a.Ops[r].DType
					default:
						return nil, argErr("fused argument %d out of range", r)
					}
				}
				return out, nil
			}
			for i, o := range a.Ops {
				d := Lookup(o.Op)
				if d == nil || d.Kind != Elementwise {
					return 0, argErr("fused op %d (%v) is not elementwise", i, o.Op)
				}
				for _, r := range o.Args {
					if r >= i {
						return 0, argErr("fused op %d refers to a later op", i)
					}
				}
				ins, err := dts(o.Args)
				if err != nil {
					return 0, err
				}
				dt, err := d.DType(ins, o.Attr)
				if err != nil {
					return 0, err
				}
				if dt != o.DType {
					return 0, dtypeErr("fused op %d (%s) gives %v, recorded %v", i, d.Name, dt, o.DType)
				}
			}
			return a.Ops[len(a.Ops)-1].DType, nil
		},
		Shape: func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
			a, ok := attr.(*FusedAttr)
			if !ok {
				return nil, argErr("missing fused program")
			}
			for k, s := range in {
				if err := broadcastsTo(s, a.Domain); err != nil {
					return nil, shapeErr("fused operand %d: %v", k, err)
				}
			}
			if a.Reduce == nil {
				return a.Domain.Clone(), nil
			}
			return shReduce([]tensor.Shape{a.Domain}, AxesAttr{Axes: a.Reduce.Axes, KeepDims: a.Reduce.KeepDims})
		},
		FLOPs: func(n *graph.Node) float64 {
			a := n.Attr().(*FusedAttr)
			size := float64(a.Domain.Size())
			var f float64
			for _, o := range a.Ops {
				k := 1.0
				if d := Lookup(o.Op); d != nil && d.FLOPs != nil {
					// Per-element cost of the op: its estimate on one element.
					k = opCostPerElement(o.Op)
				}
				f += k * size
			}
			if a.Reduce != nil {
				f += size
			}
			return f
		},
	})
}

// opCostPerElement is the FLOP weight of an elementwise op (transcendentals
// count as 8, like the table's estimates).
func opCostPerElement(op graph.Op) float64 {
	switch op {
	case OpExp, OpLog, OpTanh, OpSigmoid, OpSin, OpCos:
		return 8
	}
	return 1
}

// Fused builds a Fused node from a program and its operands. The compiler
// calls it; users do not.
func Fused(attr *FusedAttr, operands ...*graph.Node) *graph.Node {
	return Apply(OpFused, attr, operands...)
}

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
	if a == nil {
		return "<nil program>"
	}
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
	if a == nil {
		return nil
	}
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
	define(&Def{Op: OpFused, Name: "Fused", Arity: -1, Kind: Fusion, DType: dtFused, Shape: shFused,
		FLOPs: func(n *graph.Node) float64 {
			a, ok := n.Attr().(*FusedAttr)
			if !ok || a == nil {
				return 0
			}
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

// fusedAttr returns attr as a non-nil *FusedAttr with at least one op.
func fusedAttr(attr graph.Attr) (*FusedAttr, error) {
	a, ok := attr.(*FusedAttr)
	switch {
	case !ok:
		return nil, argErr("needs a *FusedAttr attribute, got %T", attr)
	case a == nil:
		return nil, argErr("nil *FusedAttr")
	case len(a.Ops) == 0:
		return nil, argErr("the fused program has no ops")
	}
	return a, nil
}

// dtFused checks the whole program of a Fused node but the shapes: every
// op is an elementwise row of the table with its arity, its arguments name
// an operand of the node or an earlier op, its attribute and operand
// dtypes pass the row's rules and give the recorded dtype, and its values
// over the domain fit in memory; a trailing reduction is a Sum, Max or Min
// that admits the last op's dtype. The result has the last op's dtype.
func dtFused(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, err := fusedAttr(attr)
	if err != nil {
		return 0, err
	}
	if err := validShape(a.Domain); err != nil {
		return 0, shapeErr("fused domain: %v", err)
	}
	for i, o := range a.Ops {
		d := Lookup(o.Op)
		if d == nil || d.Kind != Elementwise {
			return 0, argErr("fused op %d (%v) is not an elementwise op", i, o.Op)
		}
		if len(o.Args) != d.Arity {
			return 0, argErr("fused op %d (%s) has %d arguments, the op takes %d", i, d.Name, len(o.Args), d.Arity)
		}
		ins := make([]tensor.DType, len(o.Args))
		for k, r := range o.Args {
			switch {
			case r >= 0 && r < i:
				ins[k] = a.Ops[r].DType
			case r >= 0:
				return 0, argErr("fused op %d (%s): argument %d refers to op %d, which does not come before it", i, d.Name, k, r)
			case -(r + 1) < len(in): // r+1 <= 0, so the negation cannot overflow
				ins[k] = in[-(r + 1)]
			default:
				return 0, argErr("fused op %d (%s): argument %d refers to operand %d of %d", i, d.Name, k, -(r + 1), len(in))
			}
		}
		dt, err := d.DType(ins, o.Attr)
		if err != nil {
			return 0, argErr("fused op %d (%s): %v", i, d.Name, err)
		}
		domain := make([]tensor.Shape, len(o.Args)) // every op computes over the domain
		for k := range domain {
			domain[k] = a.Domain
		}
		if _, err := d.Shape(domain, o.Attr); err != nil {
			return 0, argErr("fused op %d (%s): %v", i, d.Name, err)
		}
		if dt != o.DType {
			return 0, dtypeErr("fused op %d (%s) gives %v, recorded %v", i, d.Name, dt, o.DType)
		}
		if err := graph.CheckType(o.DType, a.Domain); err != nil {
			return 0, shapeErr("fused op %d (%s): %v", i, d.Name, err)
		}
	}
	out := a.Ops[len(a.Ops)-1].DType
	if r := a.Reduce; r != nil {
		switch r.Op {
		case OpSum, OpMax, OpMin:
		default:
			return 0, argErr("the fused reduction %v is not Sum, Max or Min", r.Op)
		}
		if _, err := table[r.Op].DType([]tensor.DType{out}, nil); err != nil {
			return 0, argErr("the fused reduction %v: %v", r.Op, err)
		}
	}
	return out, nil
}

// shFused checks the domain, the operands (each must broadcast to the
// domain) and the reduction's axes, and returns the result's shape.
func shFused(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, err := fusedAttr(attr)
	if err != nil {
		return nil, err
	}
	for k, s := range in {
		if err := broadcastsTo(s, a.Domain); err != nil {
			return nil, shapeErr("fused operand %d: %v", k, err)
		}
	}
	r := a.Reduce
	if r == nil {
		return a.Domain.Clone(), nil
	}
	rule := shReduce
	switch r.Op {
	case OpSum:
	case OpMax, OpMin:
		rule = shReduceNonEmpty
	default:
		return nil, argErr("the fused reduction %v is not Sum, Max or Min", r.Op)
	}
	return rule([]tensor.Shape{a.Domain}, AxesAttr{Axes: r.Axes, KeepDims: r.KeepDims})
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

// Fused builds a Fused node from a program and its operands, checking the
// whole program (see the Fused row's rules). The compiler's fusion pass
// calls it; a user may too, though there is no need: the compiler fuses
// on its own.
func Fused(attr *FusedAttr, operands ...*graph.Node) *graph.Node {
	return Apply(OpFused, attr, operands...)
}

package opdef

import (
	"fmt"
	"slices"
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

// FusedReduce is an optional reduction applied to the group's last op: an
// op whose declaration has FuseReduce (Sum, Prod, Max, Min).
type FusedReduce struct {
	Op       graph.Op
	Axes     []int // sorted, within the domain's rank
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

// EqualAttr compares two programs by value, without Nodes and Sites.
func (a *FusedAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(*FusedAttr)
	if !ok || (a == nil) != (c == nil) {
		return false
	}
	if a == nil {
		return true
	}
	if !slices.Equal(a.Domain, c.Domain) || len(a.Ops) != len(c.Ops) || (a.Reduce == nil) != (c.Reduce == nil) {
		return false
	}
	for i, o := range a.Ops {
		p := c.Ops[i]
		if o.Op != p.Op || o.DType != p.DType || !slices.Equal(o.Args, p.Args) || !EqualAttrs(o.Attr, p.Attr) {
			return false
		}
	}
	if r := a.Reduce; r != nil {
		s := c.Reduce
		return r.Op == s.Op && r.KeepDims == s.KeepDims && slices.Equal(r.Axes, s.Axes)
	}
	return true
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

// OpFused is the code of the compiler's fused groups.
var OpFused = Register(&Def{Name: "Fused", Doc: "a compiler-made group of elementwise ops, optionally ending in a reduction", Arity: -1, Kind: Fusion,
	DType: dtFused, Shape: shFused, Cost: fusedCost})

func fusedCost(n *graph.Node) float64 {
	a, ok := n.Attr().(*FusedAttr)
	if !ok || a == nil {
		return 0
	}
	size := float64(a.Domain.Size())
	var f float64
	for _, o := range a.Ops {
		k := 1.0
		if d := Lookup(o.Op); d != nil {
			k = d.FLOPsPerElement()
		}
		f += k * size
	}
	if a.Reduce != nil {
		f += size
	}
	return f
}

// fusedAttr returns attr as a non-nil *FusedAttr with at least one op.
func fusedAttr(attr graph.Attr) (*FusedAttr, error) {
	a, ok := attr.(*FusedAttr)
	switch {
	case !ok:
		return nil, ArgErr("needs a *FusedAttr attribute, got %T", attr)
	case a == nil:
		return nil, ArgErr("nil *FusedAttr")
	case len(a.Ops) == 0:
		return nil, ArgErr("the fused program has no ops")
	}
	return a, nil
}

// reduceDef returns the declaration of a fused group's reduction, or an
// error if the op may not end a group.
func reduceDef(op graph.Op) (*Def, error) {
	d := Lookup(op)
	if d == nil || !d.FuseReduce {
		return nil, ArgErr("the fused reduction %v is not one that may end a group (Sum, Prod, Max or Min)", op)
	}
	return d, nil
}

// dtFused checks the whole program of a Fused node but the shapes: every
// op is an elementwise op with its arity, its arguments name an operand of
// the node or an earlier op, its attribute and operand dtypes pass the
// op's rules and give the recorded dtype, and its values over the domain
// fit in memory; a trailing reduction may end a group and admits the last
// op's dtype. The result has the last op's dtype.
func dtFused(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, err := fusedAttr(attr)
	if err != nil {
		return 0, err
	}
	if err := ValidShape(a.Domain); err != nil {
		return 0, ShapeErr("fused domain: %v", err)
	}
	for i, o := range a.Ops {
		d := Lookup(o.Op)
		if d == nil || d.Kind != Elementwise {
			return 0, ArgErr("fused op %d (%v) is not an elementwise op", i, o.Op)
		}
		if len(o.Args) != d.Arity {
			return 0, ArgErr("fused op %d (%s) has %d arguments, the op takes %d", i, d.Name, len(o.Args), d.Arity)
		}
		ins := make([]tensor.DType, len(o.Args))
		for k, r := range o.Args {
			switch {
			case r >= 0 && r < i:
				ins[k] = a.Ops[r].DType
			case r >= 0:
				return 0, ArgErr("fused op %d (%s): argument %d refers to op %d, which does not come before it", i, d.Name, k, r)
			case -(r + 1) < len(in): // r+1 <= 0, so the negation cannot overflow
				ins[k] = in[-(r + 1)]
			default:
				return 0, ArgErr("fused op %d (%s): argument %d refers to operand %d of %d", i, d.Name, k, -(r + 1), len(in))
			}
		}
		dt, err := d.DType(ins, o.Attr)
		if err != nil {
			return 0, ArgErr("fused op %d (%s): %v", i, d.Name, err)
		}
		domain := make([]tensor.Shape, len(o.Args)) // every op computes over the domain
		for k := range domain {
			domain[k] = a.Domain
		}
		if _, err := d.Shape(domain, o.Attr); err != nil {
			return 0, ArgErr("fused op %d (%s): %v", i, d.Name, err)
		}
		if dt != o.DType {
			return 0, DTypeErr("fused op %d (%s) gives %v, recorded %v", i, d.Name, dt, o.DType)
		}
		if err := graph.CheckType(o.DType, a.Domain); err != nil {
			return 0, ShapeErr("fused op %d (%s): %v", i, d.Name, err)
		}
	}
	out := a.Ops[len(a.Ops)-1].DType
	if r := a.Reduce; r != nil {
		d, err := reduceDef(r.Op)
		if err != nil {
			return 0, err
		}
		if _, err := d.DType([]tensor.DType{out}, AxesAttr{Axes: r.Axes, KeepDims: r.KeepDims}); err != nil {
			return 0, ArgErr("the fused reduction %v: %v", r.Op, err)
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
		if err := BroadcastsTo(s, a.Domain); err != nil {
			return nil, ShapeErr("fused operand %d: %v", k, err)
		}
	}
	r := a.Reduce
	if r == nil {
		return a.Domain.Clone(), nil
	}
	d, err := reduceDef(r.Op)
	if err != nil {
		return nil, err
	}
	return d.Shape([]tensor.Shape{a.Domain}, AxesAttr{Axes: r.Axes, KeepDims: r.KeepDims})
}

// Fused builds a Fused node from a program and its operands, checking the
// whole program (see the Fused rules). The compiler's fusion pass calls
// it.
func Fused(attr *FusedAttr, operands ...*graph.Node) *graph.Node {
	return Apply(OpFused, attr, operands...)
}

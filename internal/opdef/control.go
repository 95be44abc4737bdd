package opdef

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Control flow (ops/control.go): Cond, While and Scan carry their
// functions as bodies, graphs made with graph.Sub whose Inputs are the
// parameters, and compute several results of different types. A node has
// one dtype and shape, so a control-flow node's value is a tuple: a uint8
// vector holding every result, each at a 64-byte-aligned offset
// (TupleLayout), and each result is read by a TupleGet node (an offset
// view). Users never see the tuple: the builders return the TupleGet
// nodes.
//
// Operands and parameters. Every body has one parameter per operand of
// the op (after Cond's predicate), in operand order, so body parameter i
// always stands for the same operand:
//
//	Cond:  operands [pred, xs..., captures...]; then and else: params [xs..., captures...] -> results
//	While: operands [carries..., captures...]; cond: params -> [pred (bool scalar)];
//	       body: params -> [carries...]
//	Scan:  operands [carries..., xs..., captures...]; body: params [carries..., x_t..., captures...]
//	       -> [carries..., y_t...], where x_t is xs[i][t] (one step: the leading axis dropped)
//	       and the results' ys are stacked along a new leading axis of length Length
//
// The captures are the outer nodes the bodies read (graph.Capture), the
// union over the op's bodies, so every body has a parameter for each.

// ControlKind says which control-flow op a ControlAttr belongs to.
type ControlKind uint8

const (
	CondKind ControlKind = iota + 1
	WhileKind
	ScanKind
)

func (k ControlKind) String() string {
	switch k {
	case CondKind:
		return "Cond"
	case WhileKind:
		return "While"
	case ScanKind:
		return "Scan"
	}
	return fmt.Sprintf("control(%d)", uint8(k))
}

// Body is one function of a control-flow op: a sealed body graph, its
// parameters (Inputs of Graph, one per operand: see above) and results
// (nodes of Graph).
type Body struct {
	Graph   *graph.Graph
	Params  []*graph.Node
	Results []*graph.Node
}

// Type is a dtype and a shape.
type Type struct {
	DType tensor.DType
	Shape tensor.Shape
}

func (t Type) String() string { return tensor.TypeString(t.DType, t.Shape) }

// TypeOf returns n's type.
func TypeOf(n *graph.Node) Type { return Type{n.DType(), n.Shape()} }

// Equal reports whether t and u are the same type.
func (t Type) Equal(u Type) bool { return t.DType == u.DType && t.Shape.Equal(u.Shape) }

// ControlAttr is the attribute of Cond, While and Scan. It is a pointer
// and immutable once built; two nodes share a computation only when they
// share the attribute (CSE compares it by identity).
type ControlAttr struct {
	Kind ControlKind
	// Bodies: Cond's then and else, While's cond and body, Scan's body.
	Bodies []*Body
	// Carries is the number of carried values of While and Scan (their
	// first operands); Xs the number of Scan's scanned operands (after
	// the carries). The other operands (after Cond's predicate and
	// operands) are captures.
	Carries, Xs int
	// Length is Scan's number of steps.
	Length int
	// Reverse runs Scan from step Length-1 down to 0 (ys are still
	// stacked by step index, as lax.scan(reverse=True)).
	Reverse bool
	// MaxTrips bounds While's iterations (0: unbounded). A While with a
	// bound stops when its condition is false or after MaxTrips
	// iterations, and is differentiable.
	MaxTrips int
	// Remat makes Scan's gradient recompute each step's body from the
	// saved carries instead of saving the body's intermediate values.
	Remat bool
	// Outs are the result types, in order: Cond's results; While's
	// carries; Scan's carries then its stacked ys.
	Outs []Type
	// Extends is the op this one repeats with extra results appended
	// (the residuals a gradient saves): same operands, the same first
	// len(Extends.Outs) results. The compiler then computes both once.
	Extends *ControlAttr

	id uint64
}

var controlIDs atomic.Uint64

// NewID gives a to-be-registered attribute its identity (String shows
// it). Builders call it once per attribute.
func (a *ControlAttr) NewID() { a.id = controlIDs.Add(1) }

// ID is the attribute's identity.
func (a *ControlAttr) ID() uint64 { return a.id }

func (a *ControlAttr) String() string {
	if a == nil {
		return "<nil control>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s#%d", a.Kind, a.id)
	switch a.Kind {
	case WhileKind:
		fmt.Fprintf(&b, " carries=%d", a.Carries)
		if a.MaxTrips > 0 {
			fmt.Fprintf(&b, " max=%d", a.MaxTrips)
		}
	case ScanKind:
		fmt.Fprintf(&b, " carries=%d xs=%d length=%d", a.Carries, a.Xs, a.Length)
		if a.Reverse {
			b.WriteString(" reverse")
		}
		if a.Remat {
			b.WriteString(" remat")
		}
	}
	if a.Extends != nil {
		fmt.Fprintf(&b, " extends=#%d", a.Extends.id)
	}
	outs := make([]string, len(a.Outs))
	for i, t := range a.Outs {
		outs[i] = t.String()
	}
	fmt.Fprintf(&b, " -> (%s)", strings.Join(outs, ", "))
	return b.String()
}

// EqualAttr is identity: bodies are not compared.
func (a *ControlAttr) EqualAttr(b graph.Attr) bool {
	o, ok := b.(*ControlAttr)
	return ok && o == a
}

// Fixed is the number of operands before the captures: Cond's predicate
// and operands, While's carries, Scan's carries and xs. It needs the
// node's operand count only for Cond.
func (a *ControlAttr) Fixed() int {
	switch a.Kind {
	case WhileKind:
		return a.Carries
	case ScanKind:
		return a.Carries + a.Xs
	}
	// Cond: the then body's params are [xs..., captures...]; its result
	// count does not tell how many are xs, so Cond keeps Carries = len(xs).
	return 1 + a.Carries
}

// ParamOffset is the operand number of body parameter 0: 1 for Cond (the
// predicate comes first), 0 otherwise.
func (a *ControlAttr) ParamOffset() int {
	if a.Kind == CondKind {
		return 1
	}
	return 0
}

// ParamType returns the type body parameter i has for an operand of type
// t: for Scan's xs, one step of it (the leading axis dropped).
func (a *ControlAttr) ParamType(i int, t Type) Type {
	if a.Kind == ScanKind && i >= a.Carries && i < a.Carries+a.Xs && len(t.Shape) > 0 {
		return Type{t.DType, t.Shape[1:].Clone()}
	}
	return t
}

// TupleAlign is the alignment of each result in a tuple.
const TupleAlign = 64

// TupleLayout returns the byte offset of each result in a tuple of the
// given types and the tuple's total size.
func TupleLayout(outs []Type) (offsets []int64, total int64) {
	offsets = make([]int64, len(outs))
	for i, t := range outs {
		total = (total + TupleAlign - 1) / TupleAlign * TupleAlign
		offsets[i] = total
		total += int64(t.Shape.Size() * t.DType.Size())
	}
	return offsets, total
}

// TupleAttr is the attribute of TupleGet: which result of a tuple, where
// it is, and its type.
type TupleAttr struct {
	Index  int
	Offset int64
	DType  tensor.DType
	Shape  tensor.Shape
}

func (a TupleAttr) String() string {
	return fmt.Sprintf("index=%d offset=%d %s", a.Index, a.Offset, tensor.TypeString(a.DType, a.Shape))
}

// EqualAttr compares by value.
func (a TupleAttr) EqualAttr(b graph.Attr) bool {
	o, ok := b.(TupleAttr)
	return ok && o.Index == a.Index && o.Offset == a.Offset && o.DType == a.DType && o.Shape.Equal(a.Shape)
}

// EvalBody evaluates body b with the reference evaluator, given a value
// for each parameter, and returns its results' values.
func EvalBody(b *Body, params []*Value) ([]*Value, error) {
	if len(params) != len(b.Params) {
		return nil, fmt.Errorf("%d values for %d parameters", len(params), len(b.Params))
	}
	vals := map[*graph.Node]*Value{}
	for i, p := range b.Params {
		vals[p] = params[i]
	}
	for _, n := range graph.Ancestors(b.Results...) {
		if vals[n] != nil {
			continue
		}
		switch n.Op() {
		case graph.OpInput:
			return nil, fmt.Errorf("body input %s is not a parameter", n)
		case graph.OpConst, graph.OpVariable:
			vals[n] = FromTensor(n.Value())
			continue
		}
		ins := make([]*Value, len(n.Inputs()))
		for i, in := range n.Inputs() {
			ins[i] = vals[in]
		}
		v, err := Evaluate(n, ins)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		vals[n] = v
	}
	out := make([]*Value, len(b.Results))
	for i, r := range b.Results {
		out[i] = vals[r]
	}
	return out, nil
}

// VJP is reverse-mode differentiation over a graph, for the gradient
// rules of the control-flow ops, which differentiate their bodies: the
// vector-Jacobian products of ys with respect to xs for the cotangents
// cts (a nil cotangent counts as zero), nodes of ys' graph. Package
// autodiff sets it at initialisation (it imports ops, so ops cannot call
// it directly).
var VJP func(ys, xs, cts []*graph.Node) []*graph.Node

package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Every op is declared once, beside its builder: a call to define in the
// file's init, with its name, arity, kind, dtype and shape rules, gradient
// rule (written with the builders, so gradients are graph nodes and
// higher-order derivatives work), cost and float64 reference. The
// declarations live in internal/opdef's table, which the compiler and the
// backends read; the op codes below are what a node's Op() returns.

// define registers d, its gradient rule guarded against malformed calls,
// and returns its op code.
func define(d *opdef.Def) graph.Op {
	if d.Grad != nil {
		d.Grad = guardGrad(d, d.Grad)
	}
	return opdef.Register(d)
}

// Apply builds a node of op from operands and an attribute, checking them
// with the op's rules, which validate the attribute completely, so no
// attribute makes Apply, graph.Verify or a later pass panic. The node
// keeps a copy of the attribute. Errors are recorded on the graph with the
// user's call site. It is the generic builder behind the named ones.
func Apply(op graph.Op, attr graph.Attr, inputs ...*graph.Node) *graph.Node {
	return opdef.Apply(op, attr, inputs...)
}

// fail records a build error on the graph of the operands.
var fail = graph.Failf

// The rule helpers the declarations share (see internal/opdef).
var (
	numeric = opdef.Numeric
	floats  = opdef.Floats
	bools   = opdef.Bools
	compute = opdef.Compute
	anyType = opdef.Any
)

func shapeErr(format string, args ...any) error { return opdef.ShapeErr(format, args...) }
func dtypeErr(format string, args ...any) error { return opdef.DTypeErr(format, args...) }
func argErr(format string, args ...any) error   { return opdef.ArgErr(format, args...) }

// Range selects indices Start, Start+Step, ... below Stop along one axis
// (Slice's argument). Negative Start and Stop count from the end (-1 is
// the last index); Stop may be End for "through the last index"; a zero
// Step means 1.
type Range = opdef.Range

// End as a Range's Stop means the axis length.
const End = opdef.End

// All selects a whole axis.
var All = Range{Start: 0, Stop: End, Step: 1}

// R is shorthand for Range{Start: start, Stop: stop, Step: 1}.
func R(start, stop int) Range { return Range{Start: start, Stop: stop, Step: 1} }

// RS is shorthand for Range{Start: start, Stop: stop, Step: step}.
func RS(start, stop, step int) Range { return Range{Start: start, Stop: stop, Step: step} }

// PadWidth pads one axis (Pad's argument): Low zeros before the first
// element, High after the last, and Interior between neighbouring
// elements.
type PadWidth = opdef.PadWidth

// BroadcastShapes returns the NumPy broadcast of the given shapes: align
// trailing dimensions; each pair must be equal or contain a 1.
func BroadcastShapes(shapes ...tensor.Shape) (tensor.Shape, error) {
	return opdef.BroadcastShapes(shapes...)
}

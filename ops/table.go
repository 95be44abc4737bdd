package ops

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The primitive op codes. Every code has exactly one row in the table
// (see Lookup); composites such as Mean, Square or SumTo are functions of
// these and have no row.
const (
	// Elementwise, two operands of one dtype, NumPy broadcasting.
	OpAdd graph.Op = graph.FirstOp + iota
	OpSub
	OpMul
	OpDiv
	OpPow
	OpMaximum
	OpMinimum
	// Elementwise comparisons and logic (Bool results).
	OpEqual
	OpNotEqual
	OpLess
	OpLessEqual
	OpGreater
	OpGreaterEqual
	OpAnd
	OpOr
	OpNot
	// Elementwise, one operand.
	OpNeg
	OpAbs
	OpSign
	OpExp
	OpLog
	OpSqrt
	OpTanh
	OpSigmoid
	OpRelu
	OpSin
	OpCos
	// Elementwise, other.
	OpWhere
	OpCast
	OpStopGradient
	// Contractions and reductions.
	OpMatMul
	OpSum
	OpMax
	OpMin
	OpArgMax
	OpArgMin
	// Data movement.
	OpReshape
	OpTranspose
	OpBroadcastTo
	OpConcat
	OpSlice
	OpPad
	// Normalisations along an axis.
	OpSoftmax
	OpLogSoftmax
	// Differentiation control.
	OpCustomGrad
	// Compiler-made: a fused group of elementwise ops (FusedAttr).
	OpFused

	opEnd
)

// NumOps is one more than the largest op code: backends size their
// kernel tables with it.
const NumOps = int(opEnd)

// Kind classifies primitives for the compiler and the backends.
type Kind uint8

const (
	// Elementwise: the result's element i depends only on element i of
	// each (broadcast) operand; the result has the broadcast shape.
	Elementwise Kind = iota + 1
	// Reduction: combines elements over a set of axes (AxesAttr).
	Reduction
	// Movement: copies or rearranges elements without arithmetic.
	Movement
	// Contraction: MatMul.
	Contraction
	// Normalisation: Softmax-like ops along one axis (AxisAttr).
	Normalisation
	// Fusion: a compiler-made group of elementwise ops (FusedAttr).
	Fusion
)

func (k Kind) String() string {
	switch k {
	case Elementwise:
		return "elementwise"
	case Reduction:
		return "reduction"
	case Movement:
		return "movement"
	case Contraction:
		return "contraction"
	case Normalisation:
		return "normalisation"
	case Fusion:
		return "fusion"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// DTypeRule derives the result dtype from the operand dtypes and the
// attribute, or returns an error (wrapping graph.ErrDType).
type DTypeRule func(in []tensor.DType, attr graph.Attr) (tensor.DType, error)

// ShapeRule derives the result shape from the operand shapes and the
// attribute, or returns an error (wrapping graph.ErrShape).
type ShapeRule func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error)

// GradRule returns the cotangent of each operand of n given the cotangent
// dy of n's result, built with the ops builders in n's graph (so gradients
// are graph nodes and can be differentiated again). need[i] says whether
// operand i's cotangent is wanted; a rule may skip the others. A nil
// entry means no gradient flows to that operand. Every returned cotangent
// has its operand's shape and dtype (broadcasts are summed back).
type GradRule func(n, dy *graph.Node, need []bool) []*graph.Node

// Def is one row of the op table.
type Def struct {
	Op    graph.Op
	Name  string
	Arity int // number of operands; -1 for variadic (at least one)
	Kind  Kind
	DType DTypeRule
	Shape ShapeRule
	// Grad is the reverse-mode rule. It is nil for ops that are not
	// differentiable (see Differentiable).
	Grad GradRule
	// Differentiable is false for ops whose result is piecewise constant
	// or discrete (comparisons, ArgMax, logic); asking for a gradient
	// through them is an error, not a silent zero.
	Differentiable bool
	// FLOPs estimates the floating-point operations of one evaluation,
	// for the profiler's GFLOP/s. Nil means one per result element.
	FLOPs func(n *graph.Node) float64
}

var table [NumOps]*Def

// init fills the table: the rows first, then the gradient rules, which
// are written with the builders and so may refer to any row.
func init() {
	defineElementwise()
	defineReductions()
	defineMatMul()
	defineMovement()
	defineNormalisations()
	defineCustom()
	defineFused()
	attachGradients()
}

func define(d *Def) {
	if table[d.Op] != nil {
		panic(fmt.Sprintf("ops: %s defined twice", d.Name))
	}
	table[d.Op] = d
	graph.RegisterOp(d.Op, graph.OpInfo{Name: d.Name, Check: d.check})
}

// Lookup returns the table row of op, or nil for a leaf or unknown op.
func Lookup(op graph.Op) *Def {
	if int(op) >= NumOps {
		return nil
	}
	return table[op]
}

// Defs returns every row of the table in op-code order.
func Defs() []*Def {
	var out []*Def
	for _, d := range table {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// Infer applies the row's dtype and shape rules to operand nodes.
// It never panics, whatever the operands and attribute: an operand that
// is nil or invalid, a wrong operand count or an attribute of the wrong
// type or with bad contents is an error.
func (d *Def) Infer(inputs []*graph.Node, attr graph.Attr) (tensor.DType, tensor.Shape, error) {
	if d == nil || d.DType == nil || d.Shape == nil {
		return 0, nil, fmt.Errorf("%w: Infer on a nil or incomplete table row", graph.ErrInvalid)
	}
	for i, in := range inputs {
		if !in.Valid() {
			return 0, nil, fmt.Errorf("%w: %s: operand %d is nil or invalid", graph.ErrInvalid, d.Name, i)
		}
	}
	if d.Arity >= 0 && len(inputs) != d.Arity {
		return 0, nil, fmt.Errorf("%w: %s takes %d operands, got %d", graph.ErrInvalid, d.Name, d.Arity, len(inputs))
	}
	if d.Arity < 0 && len(inputs) == 0 {
		return 0, nil, fmt.Errorf("%w: %s needs at least one operand", graph.ErrInvalid, d.Name)
	}
	dts := make([]tensor.DType, len(inputs))
	shapes := make([]tensor.Shape, len(inputs))
	for i, in := range inputs {
		dts[i], shapes[i] = in.DType(), in.Shape()
	}
	dt, err := d.DType(dts, attr)
	if err != nil {
		return 0, nil, err
	}
	s, err := d.Shape(shapes, attr)
	if err != nil {
		return 0, nil, err
	}
	return dt, s, nil
}

// check is the row's graph.Verify hook.
func (d *Def) check(n *graph.Node) error {
	if !n.Valid() {
		return fmt.Errorf("%w: %s: nil or invalid node", graph.ErrInvalid, d.Name)
	}
	dt, s, err := d.Infer(n.Inputs(), n.Attr())
	if err != nil {
		return err
	}
	if dt != n.DType() || !s.Equal(n.Shape()) {
		return fmt.Errorf("%s: rules give %s, node has %s", d.Name, tensor.TypeString(dt, s), n.Type())
	}
	return nil
}

// Apply builds a node of op from operands and an attribute, checking them
// with the table's rules, which validate the attribute completely (its
// type, ranges and consistency; a Fused program op by op), so no
// attribute makes Apply, graph.Verify or a later pass panic. The node
// keeps a copy of the attribute's slices. Errors are recorded on the graph
// with the user's call site. It is the generic builder behind the named
// ones.
func Apply(op graph.Op, attr graph.Attr, inputs ...*graph.Node) *graph.Node {
	d := Lookup(op)
	if d == nil {
		return graph.Invalid(fmt.Errorf("%w: ops.Apply: unknown op %v", graph.ErrInvalid, op))
	}
	g, bad := graph.Operands(d.Name, inputs...)
	if bad != nil {
		return bad
	}
	attr = cloneAttr(attr)
	dt, s, err := d.Infer(inputs, attr)
	if err != nil {
		return g.Fail(wrapRule(err, d.Name, inputs))
	}
	return g.Add(graph.Spec{Op: op, Attr: attr, Inputs: inputs, DType: dt, Shape: s})
}

// Rebuild builds a copy of node n in graph g with new operands (from g),
// keeping n's op, attribute, name and call site. The compiler's passes
// use it.
func Rebuild(g *graph.Graph, n *graph.Node, inputs []*graph.Node) *graph.Node {
	if !n.Valid() {
		return g.Fail(fmt.Errorf("%w: Rebuild of a nil or invalid node", graph.ErrInvalid))
	}
	switch n.Op() {
	case graph.OpInput, graph.OpConst, graph.OpVariable:
		return g.Add(graph.Spec{Op: n.Op(), DType: n.DType(), Shape: n.Shape(), Value: n.Value(), Name: n.Name(), Site: n.Site()})
	}
	d := Lookup(n.Op())
	if d == nil {
		return g.Fail(fmt.Errorf("%w: Rebuild: unknown op %v", graph.ErrInvalid, n.Op()))
	}
	dt, s, err := d.Infer(inputs, n.Attr())
	if err != nil {
		return g.Fail(wrapRule(err, d.Name, inputs))
	}
	return g.Add(graph.Spec{Op: n.Op(), Attr: n.Attr(), Inputs: inputs, DType: dt, Shape: s, Name: n.Name(), Site: n.Site()})
}

// ruleError is what a dtype or shape rule returns: a kind and a message
// that Apply turns into a graph.Error with the op, operands and site.
type ruleError struct {
	kind error
	msg  string
}

func (e *ruleError) Error() string { return e.msg }
func (e *ruleError) Unwrap() error { return e.kind }

func shapeErr(format string, args ...any) error {
	return &ruleError{graph.ErrShape, fmt.Sprintf(format, args...)}
}

func dtypeErr(format string, args ...any) error {
	return &ruleError{graph.ErrDType, fmt.Sprintf(format, args...)}
}

func argErr(format string, args ...any) error {
	return &ruleError{graph.ErrInvalid, fmt.Sprintf(format, args...)}
}

func wrapRule(err error, op string, inputs []*graph.Node) error {
	kind := graph.ErrInvalid
	msg := err.Error()
	if re, ok := err.(*ruleError); ok {
		kind = re.kind
	}
	return graph.NewError(kind, op, inputs, "%s", msg)
}

// fail records a build error on the graph of the operands.
var fail = graph.Failf

package graph

import (
	"fmt"
	"sync"

	"github.com/loomgraph/loom/tensor"
)

// Op identifies the operation a node performs. The leaf ops (Input, Const,
// Variable) are defined here; every other op is a row of the table in
// package ops, which registers its name and checker with RegisterOp.
type Op uint16

// The leaf ops. Codes from FirstOp on belong to package ops.
const (
	OpInvalid Op = iota
	OpInput
	OpConst
	OpVariable
	FirstOp
)

// OpInfo is what the graph package knows about an op defined elsewhere.
type OpInfo struct {
	Name string
	// Check re-derives the node's dtype and shape from its inputs and
	// attribute and reports a mismatch; Verify calls it. Nil means no check.
	Check func(n *Node) error
}

var (
	opMu    sync.RWMutex
	opInfos = map[Op]OpInfo{
		OpInvalid:  {Name: "Invalid"},
		OpInput:    {Name: "Input"},
		OpConst:    {Name: "Const"},
		OpVariable: {Name: "Variable"},
	}
)

// RegisterOp declares an op code. It panics if the code is taken: op codes
// are fixed at package initialisation, so a clash is a bug in loom.
func RegisterOp(op Op, info OpInfo) {
	opMu.Lock()
	defer opMu.Unlock()
	if op < FirstOp {
		panic(fmt.Sprintf("graph: op code %d is reserved", op))
	}
	if old, ok := opInfos[op]; ok {
		panic(fmt.Sprintf("graph: op code %d registered twice (%s and %s)", op, old.Name, info.Name))
	}
	opInfos[op] = info
}

func lookupOp(op Op) (OpInfo, bool) {
	opMu.RLock()
	defer opMu.RUnlock()
	info, ok := opInfos[op]
	return info, ok
}

// String returns the op's name, e.g. "MatMul".
func (o Op) String() string {
	if info, ok := lookupOp(o); ok {
		return info.Name
	}
	return fmt.Sprintf("op(%d)", uint16(o))
}

// IsLeaf reports whether o is Input, Const or Variable.
func (o Op) IsLeaf() bool { return o == OpInput || o == OpConst || o == OpVariable }

// Attr is an op's attribute (axes, permutation, target shape, ...). Its
// String is canonical and complete: two nodes with the same op, inputs and
// attribute string compute the same value (common-subexpression
// elimination relies on it).
type Attr interface {
	String() string
}

// Node is one value in a Graph: a leaf (Input, Const, Variable) or the
// result of an op applied to earlier nodes. Nodes are immutable once built.
type Node struct {
	g      *Graph
	id     int
	op     Op
	attr   Attr
	inputs []*Node
	dtype  tensor.DType
	shape  tensor.Shape
	name   string
	site   string
	value  *tensor.Tensor // Const value, Variable initial value
	err    error          // set on invalid nodes only
}

// Graph is a growing DAG of nodes. Building a graph is not safe for
// concurrent use; a built graph may be compiled and read concurrently.
//
// Build errors are sticky: the first is recorded and returned by Err;
// every later builder returns an invalid node and adds nothing.
//
// The zero Graph is an empty graph ready to use, like New's. Every method
// accepts a nil *Graph: the builders return an invalid node carrying an
// ErrInvalid error, Err returns that error, and the accessors return
// nothing (nil, 0).
type Graph struct {
	nodes []*Node
	err   error
	names map[string]*Node
	scope // a body's link to its enclosing graph (scope.go); zero for a top-level graph
}

// New returns an empty graph.
func New() *Graph { return &Graph{names: map[string]*Node{}} }

// errNilGraph is the error of a builder called on a nil *Graph.
func errNilGraph(op string) *Node {
	return Invalid(NewError(ErrInvalid, op, nil, "nil graph (use graph.New)"))
}

// Err returns the first build error, or nil.
func (g *Graph) Err() error {
	if g == nil {
		return fmt.Errorf("%w: nil graph", ErrInvalid)
	}
	return g.err
}

// Nodes returns the graph's nodes in creation order (which is a
// topological order). The caller must not modify the slice.
func (g *Graph) Nodes() []*Node {
	if g == nil {
		return nil
	}
	return g.nodes
}

// Len is the number of nodes.
func (g *Graph) Len() int {
	if g == nil {
		return 0
	}
	return len(g.nodes)
}

// Lookup returns the Input or Variable with the given name, or nil.
func (g *Graph) Lookup(name string) *Node {
	if g == nil {
		return nil
	}
	return g.names[name]
}

// Fail records err as the graph's build error if it has none yet and
// returns an invalid node carrying the graph's (first) error. Builders in
// other packages use it for their own checks. A nil err records a generic
// ErrInvalid error; on a nil *Graph, Fail returns a detached invalid node
// carrying err.
func (g *Graph) Fail(err error) *Node {
	if err == nil {
		err = fmt.Errorf("%w: build failed", ErrInvalid)
	}
	if g == nil {
		return Invalid(err)
	}
	if g.err == nil {
		g.err = err
	}
	return &Node{g: g, op: OpInvalid, err: g.err}
}

// Invalid returns an invalid node that belongs to no graph and carries
// err: what a builder returns when none of its operands has a graph. A nil
// err is replaced by a generic ErrInvalid error.
func Invalid(err error) *Node {
	if err == nil {
		err = fmt.Errorf("%w: invalid node", ErrInvalid)
	}
	return &Node{op: OpInvalid, err: err}
}

// Operands checks the operands of an op before it is built: none nil or
// invalid, all from one graph, and that graph without a build error. On
// success it returns the graph and a nil node; otherwise the invalid node
// the builder must return (the error is recorded on the graph when there
// is one).
func Operands(op string, operands ...*Node) (*Graph, *Node) {
	// The node goes into the innermost graph among the operands' (a body
	// may read nodes of the graphs around it: scope.go).
	var g *Graph
	for _, n := range operands {
		if n != nil && n.g != nil && (g == nil || n.g.depth > g.depth) {
			g = n.g
		}
	}
	fail := func(format string, args ...any) *Node {
		err := NewError(ErrInvalid, op, operands, format, args...)
		if g == nil {
			return Invalid(err)
		}
		return g.live().Fail(err)
	}
	if g == nil {
		for _, n := range operands {
			if n != nil && n.err != nil {
				return nil, fail("operand is invalid: %v", n.err)
			}
		}
		if len(operands) == 0 {
			return nil, fail("no operands")
		}
		return nil, fail("operands are nil")
	}
	if g.err != nil {
		return nil, &Node{g: g, op: OpInvalid, err: g.err}
	}
	if g.sealed {
		return nil, fail("a node of the body of %s (finished) is used outside that body: a body's nodes can only be used inside its function", g.owner)
	}
	for i, n := range operands {
		switch {
		case n == nil:
			return nil, fail("operand %d is nil", i)
		case n.g != g && g.within(n.g):
			// A node of an enclosing graph: Add captures it.
		case n.g != g:
			return nil, fail("operand %d belongs to another graph", i)
		case n.op == OpInvalid:
			return nil, fail("operand %d is invalid: %v", i, n.err)
		}
	}
	return g, nil
}

// Spec describes a node to add with Graph.Add.
type Spec struct {
	Op     Op
	Attr   Attr
	Inputs []*Node
	DType  tensor.DType
	Shape  tensor.Shape
	Value  *tensor.Tensor // Const and Variable only
	Name   string
	Site   string // "" records the caller's site
}

// Add appends a node as given. It is the low-level constructor behind the
// ops builders and the compiler's passes: it checks structure only, not
// the op's rules (Verify checks those): the op is registered, the inputs
// are valid nodes of this graph, the dtype is valid, the shape is valid
// and the value's byte size fits in an int (CheckType), a leaf has no
// inputs, a Const or Variable carries a value of its type, and an Input or
// Variable has a name unused in the graph. Users build nodes with the ops
// package instead.
func (g *Graph) Add(s Spec) *Node {
	if g == nil {
		return errNilGraph(s.Op.String())
	}
	if g.err != nil {
		return &Node{g: g, op: OpInvalid, err: g.err}
	}
	op := s.Op.String()
	if _, ok := lookupOp(s.Op); !ok || s.Op == OpInvalid {
		return g.Fail(NewError(ErrInvalid, op, s.Inputs, "unregistered op %d", uint16(s.Op)))
	}
	if g.sealed {
		return g.live().Fail(NewError(ErrInvalid, op, s.Inputs, "a node of the body of %s (finished) is used outside that body: a body's nodes can only be used inside its function", g.owner))
	}
	inputs := append([]*Node(nil), s.Inputs...)
	for i, in := range inputs {
		if in != nil && in.g != g && in.op != OpInvalid && g.within(in.g) {
			// A node of an enclosing graph becomes a parameter of this
			// body (a capture).
			if inputs[i] = g.Capture(in); !inputs[i].Valid() {
				return inputs[i]
			}
			in = inputs[i]
		}
		if in == nil || in.g != g || in.op == OpInvalid {
			return g.Fail(NewError(ErrInvalid, op, s.Inputs, "input %d is nil, invalid or from another graph", i))
		}
	}
	if te := checkType(s.DType, s.Shape); te != nil {
		return g.Fail(NewError(te.kind, op, s.Inputs, "%s", te.msg))
	}
	if s.Op.IsLeaf() {
		if len(s.Inputs) != 0 {
			return g.Fail(NewError(ErrInvalid, op, s.Inputs, "a leaf has no operands"))
		}
		if s.Op != OpInput {
			v := s.Value
			if v == nil || !v.DType().Valid() {
				return g.Fail(NewError(ErrInvalid, op, nil, "nil value"))
			}
			if v.DType() != s.DType || !v.Shape().Equal(s.Shape) {
				return g.Fail(NewError(ErrInvalid, op, nil, "value %s does not match the node type %s", v.Type(), tensor.TypeString(s.DType, s.Shape)))
			}
		}
		if s.Op != OpConst {
			if bad := g.leafName(op, s.Name); bad != nil {
				return bad
			}
		}
	}
	site := s.Site
	if site == "" {
		site = CallSite()
	}
	shape := s.Shape.Clone()
	if shape == nil {
		shape = tensor.Shape{}
	}
	n := &Node{
		g: g, id: len(g.nodes), op: s.Op, attr: s.Attr,
		inputs: inputs,
		dtype:  s.DType, shape: shape, name: s.Name, site: site, value: s.Value,
	}
	g.nodes = append(g.nodes, n)
	if s.Op == OpInput || s.Op == OpVariable {
		if g.names == nil {
			g.names = map[string]*Node{}
		}
		g.names[s.Name] = n
	}
	return n
}

// CheckType reports whether a value of dtype dt and shape s can exist: dt
// is valid, no dimension is negative, and the byte size fits in an int:
// the product of the non-zero dimensions times dt's size, so that element
// counts, strides and byte offsets cannot overflow, whatever the order of
// the dimensions and even when one of them is 0. The error wraps ErrDType
// or ErrShape (its message does not repeat the sentinel's); an overflow is
// reported as "too large".
func CheckType(dt tensor.DType, s tensor.Shape) error {
	if te := checkType(dt, s); te != nil {
		return te
	}
	return nil
}

// typeError is CheckType's error.
type typeError struct {
	kind error
	msg  string
}

func (e *typeError) Error() string { return e.msg }
func (e *typeError) Unwrap() error { return e.kind }

// checkType is CheckType with a concrete result (nil when the type is
// fine).
func checkType(dt tensor.DType, s tensor.Shape) *typeError {
	if !dt.Valid() {
		return &typeError{ErrDType, fmt.Sprintf("invalid dtype %v", dt)}
	}
	for i, d := range s {
		if d < 0 {
			return &typeError{ErrShape, fmt.Sprintf("dimension %d of shape %v is negative", i, s)}
		}
	}
	if _, err := tensor.ByteSize(dt, s); err != nil {
		return &typeError{ErrShape, fmt.Sprintf("%s is too large: its byte size overflows an int", tensor.TypeString(dt, s))}
	}
	return nil
}

func (g *Graph) leafName(op, name string) *Node {
	if name == "" {
		return g.Fail(NewError(ErrInvalid, op, nil, "empty name"))
	}
	if old := g.names[name]; old != nil {
		return g.Fail(NewError(ErrInvalid, op, nil, "name %q is already used by %s %s (built at %s)", name, old.op, old.Type(), old.site))
	}
	return nil
}

// Input declares a value fed at every Run: a name unique in the graph, an
// element type and dimensions (none for a scalar).
func (g *Graph) Input(name string, dt tensor.DType, shape ...int) *Node {
	if g == nil {
		return errNilGraph("Input")
	}
	if g.err != nil {
		return &Node{g: g, op: OpInvalid, err: g.err}
	}
	if bad := g.leafName("Input", name); bad != nil {
		return bad
	}
	if te := checkType(dt, shape); te != nil {
		return g.Fail(NewError(te.kind, "Input", nil, "%q: %s", name, te.msg))
	}
	return g.Add(Spec{Op: OpInput, DType: dt, Shape: shape, Name: name})
}

// Variable declares state that lives in a compiled Program, on its device,
// starting at a copy of initial. exec.Update replaces its value after each
// Run; Program.Read and Program.Write access it.
func (g *Graph) Variable(name string, initial *tensor.Tensor) *Node {
	if g == nil {
		return errNilGraph("Variable")
	}
	if g.err != nil {
		return &Node{g: g, op: OpInvalid, err: g.err}
	}
	if bad := g.leafName("Variable", name); bad != nil {
		return bad
	}
	if initial == nil || !initial.DType().Valid() {
		return g.Fail(NewError(ErrInvalid, "Variable", nil, "%q: nil initial value", name))
	}
	if te := checkType(initial.DType(), initial.Shape()); te != nil {
		return g.Fail(NewError(te.kind, "Variable", nil, "%q: %s", name, te.msg))
	}
	return g.Add(Spec{Op: OpVariable, DType: initial.DType(), Shape: initial.Shape(), Value: initial.Clone(), Name: name})
}

// Const adds a constant holding a copy of t.
func (g *Graph) Const(t *tensor.Tensor) *Node {
	if g == nil {
		return errNilGraph("Const")
	}
	if g.err != nil {
		return &Node{g: g, op: OpInvalid, err: g.err}
	}
	if t == nil || !t.DType().Valid() {
		return g.Fail(NewError(ErrInvalid, "Const", nil, "nil tensor"))
	}
	if te := checkType(t.DType(), t.Shape()); te != nil {
		return g.Fail(NewError(te.kind, "Const", nil, "%s", te.msg))
	}
	return g.Add(Spec{Op: OpConst, DType: t.DType(), Shape: t.Shape(), Value: t.Clone()})
}

// ConstShared adds a constant that uses t without copying it. The caller
// promises never to modify t; the compiler uses it for folded constants.
func (g *Graph) ConstShared(t *tensor.Tensor, site string) *Node {
	if g == nil {
		return errNilGraph("Const")
	}
	if g.err != nil {
		return &Node{g: g, op: OpInvalid, err: g.err}
	}
	if t == nil || !t.DType().Valid() {
		return g.Fail(NewError(ErrInvalid, "Const", nil, "nil tensor"))
	}
	return g.Add(Spec{Op: OpConst, DType: t.DType(), Shape: t.Shape(), Value: t, Site: site})
}

// Graph returns the graph the node belongs to (nil for a detached invalid node).
func (n *Node) Graph() *Graph {
	if n == nil {
		return nil
	}
	return n.g
}

// ID is the node's index in its graph; inputs always have smaller IDs.
func (n *Node) ID() int {
	if n == nil {
		return -1
	}
	return n.id
}

// Op returns the node's op.
func (n *Node) Op() Op {
	if n == nil {
		return OpInvalid
	}
	return n.op
}

// Attr returns the op's attribute, or nil.
func (n *Node) Attr() Attr {
	if n == nil {
		return nil
	}
	return n.attr
}

// Inputs returns the operands. The caller must not modify the slice.
func (n *Node) Inputs() []*Node {
	if n == nil {
		return nil
	}
	return n.inputs
}

// Input returns operand i, or nil when n is nil or has no operand i
// (i out of range).
func (n *Node) Input(i int) *Node {
	if n == nil || i < 0 || i >= len(n.inputs) {
		return nil
	}
	return n.inputs[i]
}

// DType returns the element type (Invalid for an invalid node).
func (n *Node) DType() tensor.DType {
	if n == nil {
		return tensor.Invalid
	}
	return n.dtype
}

// Shape returns the dimensions. The caller must not modify the result.
func (n *Node) Shape() tensor.Shape {
	if n == nil {
		return nil
	}
	return n.shape
}

// Rank is the number of dimensions.
func (n *Node) Rank() int { return len(n.Shape()) }

// Type returns "f32[2,3]".
func (n *Node) Type() string {
	if n == nil || n.op == OpInvalid {
		return "invalid"
	}
	return tensor.TypeString(n.dtype, n.shape)
}

// Name returns the name of an Input or Variable, or a label given to the
// node ("" if none).
func (n *Node) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// Site returns the user's call site where the node was built, "file.go:38".
func (n *Node) Site() string {
	if n == nil {
		return ""
	}
	return n.site
}

// Value returns a Const's value or a Variable's initial value (nil for
// other nodes). The caller must not modify it.
func (n *Node) Value() *tensor.Tensor {
	if n == nil {
		return nil
	}
	return n.value
}

// Err returns the error an invalid node carries, or nil for a valid node.
func (n *Node) Err() error {
	if n == nil {
		return fmt.Errorf("%w: nil node", ErrInvalid)
	}
	if n.op == OpInvalid {
		if n.err == nil {
			return fmt.Errorf("%w: invalid node", ErrInvalid)
		}
		return n.err
	}
	return nil
}

// Valid reports whether n is a usable node.
func (n *Node) Valid() bool { return n != nil && n.op != OpInvalid }

// String returns a short description: "%3 Add f32[2,3]".
func (n *Node) String() string {
	if n == nil {
		return "<nil node>"
	}
	if n.op == OpInvalid {
		return "<invalid node>"
	}
	s := fmt.Sprintf("%%%d %s %s", n.id, n.op, n.Type())
	if n.name != "" {
		s += fmt.Sprintf(" %q", n.name)
	}
	return s
}

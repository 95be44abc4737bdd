// Package opdef holds what the compiler and the backends need to know of
// every op: one Def per op (its name, arity, kind, dtype and shape rules,
// gradient rule, cost model and float64 reference evaluator), the
// attributes ops carry, the compiler's fused groups, and the helpers the
// rules share. Package ops declares the ops (each in one place, beside
// its builder) and registers them here; users see only ops' builders.
//
// Op codes are handed out by Register, in registration order, at package
// initialisation: they are stable within one binary, not across builds,
// and nothing persists them.
package opdef

import (
	"fmt"
	"sort"
	"sync"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Kind classifies ops for the compiler and the backends.
type Kind uint8

const (
	// Elementwise: result element i depends only on element i of each
	// (broadcast) operand; the result has the broadcast shape.
	Elementwise Kind = iota + 1
	// Reduction: combines elements over a set of axes (AxesAttr).
	Reduction
	// Movement: copies or rearranges elements without arithmetic.
	Movement
	// Contraction: MatMul.
	Contraction
	// Normalisation: ops along one axis: Softmax-like ones (AxisAttr) and
	// the scans (ScanAttr).
	Normalisation
	// Fusion: a compiler-made group of elementwise ops (FusedAttr).
	Fusion
	// Random: values drawn from a key (RandomAttr; ops/random.go).
	Random
	// Linalg: the linear-algebra ops on the last two axes, batched
	// (ops/linalg.go; the packed layouts are in linalg.go).
	Linalg
	// Control: Cond, While and Scan, whose attribute (*ControlAttr)
	// holds body graphs and whose result is a tuple (control.go).
	Control
	// Collective: AllReduce, AllGather, ReduceScatter, Broadcast and
	// Reduce (ops/collective.go), whose values come from every rank of a
	// communicator: never constant-folded, hoisted or fused, and run in
	// plan order on every rank.
	Collective
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
	case Random:
		return "random"
	case Linalg:
		return "linalg"
	case Control:
		return "control"
	case Collective:
		return "collective"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// DTypeRule derives the result dtype from the operand dtypes and the
// attribute, or returns an error (wrapping graph.ErrDType or another
// sentinel; see ShapeErr, DTypeErr, ArgErr). It must check the attribute
// completely and never panic.
type DTypeRule func(in []tensor.DType, attr graph.Attr) (tensor.DType, error)

// ShapeRule derives the result shape from the operand shapes and the
// attribute, or returns an error. Like DTypeRule, it never panics.
type ShapeRule func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error)

// GradRule returns the cotangent of each operand of n given the cotangent
// dy of n's result, built with the ops builders in n's graph (so gradients
// are graph nodes and can be differentiated again). need[i] says whether
// operand i's cotangent is wanted; a rule may skip the others. A nil entry
// means no gradient flows to that operand. Every returned cotangent has
// its operand's shape and dtype (broadcasts are summed back).
type GradRule func(n, dy *graph.Node, need []bool) []*graph.Node

// Def is the declaration of one op: everything about it that is not
// backend code.
type Def struct {
	Op    graph.Op // assigned by Register
	Name  string
	Doc   string // one line: the semantics, for the README's op table
	Arity int    // number of operands; -1 for variadic (at least one)
	Kind  Kind
	DType DTypeRule
	Shape ShapeRule
	// Grad is the reverse-mode rule; nil for an op that is not
	// differentiable (comparisons, ArgMax, logic): asking for a gradient
	// through it is an error, not a silent zero.
	Grad GradRule
	// TupleGrad is the reverse-mode rule of an op whose result is a tuple
	// (the control-flow ops): dys[i] is the cotangent of result i (nil
	// when none flows to it, which counts as zero). The walk collects the
	// cotangents of the op's TupleGet nodes and calls it once.
	TupleGrad func(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node

	// The cost model. FLOPs is the floating-point operations per result
	// element (0 counts as 1; transcendentals count several, as PyTorch's
	// and tinygrad's estimates do), unless Cost gives a node's total
	// (MatMul's 2mnk). Fusion and the profiler read it.
	FLOPs float64
	Cost  func(n *graph.Node) float64

	// The reference evaluator: the conformance suite's float64 oracle,
	// and what constant folding computes with. An elementwise op gives
	// its element function: F64 for float and bool operands (bools as 0
	// and 1), I64 for integer operands (exact; results wrap to the dtype
	// as two's complement), C128 for complex operands (the dtype rule
	// promotes real operands to complex first; a Where's bool condition
	// enters as 0 or 1; a complex-to-real op such as Abs or Equal returns
	// its real result as the real part). Other ops give Ref, which may
	// also replace the element functions of an elementwise op (Cast).
	F64  func(x []float64) float64
	I64  func(x []int64) int64
	C128 func(x []complex128) complex128
	Ref  func(n *graph.Node, in []*Value) (*Value, error)

	// Domain and IntDomain are where the conformance suite and the
	// gradient checks draw operand values, for float and for integer
	// operands: one Interval per operand, the last serving the rest; nil
	// means [-3, 3) and [-50, 50). Keep them inside the op's domain (Log:
	// x > 0) and clear of its poles, so that finite differences work.
	Domain, IntDomain []Interval

	// Commutative: swapping the two operands gives the same value (CSE
	// sorts them).
	Commutative bool
	// FuseReduce: the op may end a fused group as its trailing reduction
	// (Sum, Prod, Max, Min).
	FuseReduce bool
}

// Interval is a half-open range of values [Lo, Hi); Signed draws the
// negated range as often (a divisor: ±[0.5, 2)).
type Interval struct {
	Lo, Hi float64
	Signed bool
}

// SampleDomain returns where tests draw operand i's values for an operand
// of dtype dt (see Domain).
func (d *Def) SampleDomain(i int, dt tensor.DType) Interval {
	ds, def := d.Domain, Interval{Lo: -3, Hi: 3}
	if dt.IsInt() {
		ds, def = d.IntDomain, Interval{Lo: -50, Hi: 50}
	}
	if len(ds) == 0 {
		return def
	}
	return ds[min(i, len(ds)-1)]
}

// Differentiable reports whether the op has a gradient rule.
func (d *Def) Differentiable() bool { return d != nil && (d.Grad != nil || d.TupleGrad != nil) }

// FLOPsOf estimates the floating-point operations of one evaluation of
// node n, for the profiler's GFLOP/s.
func (d *Def) FLOPsOf(n *graph.Node) float64 {
	if d.Cost != nil {
		return d.Cost(n)
	}
	return d.FLOPsPerElement() * float64(n.Shape().Size())
}

// FLOPsPerElement is the op's FLOPs per result element (at least 1).
func (d *Def) FLOPsPerElement() float64 {
	if d.FLOPs <= 0 {
		return 1
	}
	return d.FLOPs
}

// BytesOf is the bytes node n reads and writes: its operands' and its
// result's (a lower bound: a broadcast operand is counted once).
func BytesOf(n *graph.Node) float64 {
	b := float64(n.Shape().Size() * n.DType().Size())
	for _, in := range n.Inputs() {
		b += float64(in.Shape().Size() * in.DType().Size())
	}
	return b
}

var (
	regMu  sync.RWMutex
	table  []*Def // by op code
	byName = map[string]*Def{}
)

// Register declares d, giving it the next op code, and returns the code.
// It panics on an incomplete declaration or a name used twice: ops are
// registered at package initialisation, so either is a bug in loom.
func Register(d *Def) graph.Op {
	if d == nil || d.Name == "" || d.DType == nil || d.Shape == nil || d.Kind == 0 {
		panic(fmt.Sprintf("opdef: incomplete declaration %+v", d))
	}
	regMu.Lock()
	defer regMu.Unlock()
	if byName[d.Name] != nil {
		panic(fmt.Sprintf("opdef: %s registered twice", d.Name))
	}
	if len(table) == 0 {
		table = make([]*Def, graph.FirstOp)
	}
	d.Op = graph.Op(len(table))
	table = append(table, d)
	byName[d.Name] = d
	graph.RegisterOp(d.Op, graph.OpInfo{Name: d.Name, Check: d.check})
	return d.Op
}

// Lookup returns the declaration of op, or nil for a leaf or unknown op.
func Lookup(op graph.Op) *Def {
	regMu.RLock()
	defer regMu.RUnlock()
	if int(op) >= len(table) {
		return nil
	}
	return table[op]
}

// ByName returns the declaration named name, or nil.
func ByName(name string) *Def {
	regMu.RLock()
	defer regMu.RUnlock()
	return byName[name]
}

// Defs returns every declaration in op-code order.
func Defs() []*Def {
	regMu.RLock()
	defer regMu.RUnlock()
	var out []*Def
	for _, d := range table {
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

// Names returns the names of every op, sorted.
func Names() []string {
	var names []string
	for _, d := range Defs() {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// NumOps is one more than the largest op code: backends size their
// kernel tables with it (after package initialisation).
func NumOps() int {
	regMu.RLock()
	defer regMu.RUnlock()
	return max(len(table), int(graph.FirstOp))
}

// Infer applies the declaration's dtype and shape rules to operand nodes.
// It never panics, whatever the operands and attribute: an operand that
// is nil or invalid, a wrong operand count or an attribute of the wrong
// type or with bad contents is an error.
func (d *Def) Infer(inputs []*graph.Node, attr graph.Attr) (tensor.DType, tensor.Shape, error) {
	if d == nil || d.DType == nil || d.Shape == nil {
		return 0, nil, fmt.Errorf("%w: Infer on a nil or incomplete declaration", graph.ErrInvalid)
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

// check is the declaration's graph.Verify hook.
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
// with the op's rules, which validate the attribute completely (its type,
// ranges and consistency; a Fused program op by op), so no attribute makes
// Apply, graph.Verify or a later pass panic. The node keeps a copy of the
// attribute (see CloneAttr). Errors are recorded on the graph with the
// user's call site.
func Apply(op graph.Op, attr graph.Attr, inputs ...*graph.Node) *graph.Node {
	d := Lookup(op)
	if d == nil {
		return graph.Invalid(fmt.Errorf("%w: Apply: unknown op %v", graph.ErrInvalid, op))
	}
	g, bad := graph.Operands(d.Name, inputs...)
	if bad != nil {
		return bad
	}
	attr = CloneAttr(attr)
	dt, s, err := d.Infer(inputs, attr)
	if err != nil {
		return g.Fail(WrapRule(err, d.Name, inputs))
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
		return g.Fail(WrapRule(err, d.Name, inputs))
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

// ShapeErr is a rule's error for shapes that do not fit the op.
func ShapeErr(format string, args ...any) error {
	return &ruleError{graph.ErrShape, fmt.Sprintf(format, args...)}
}

// DTypeErr is a rule's error for dtypes that do not fit the op.
func DTypeErr(format string, args ...any) error {
	return &ruleError{graph.ErrDType, fmt.Sprintf(format, args...)}
}

// ArgErr is a rule's error for a bad attribute.
func ArgErr(format string, args ...any) error {
	return &ruleError{graph.ErrInvalid, fmt.Sprintf(format, args...)}
}

// WrapRule turns a rule's error into a graph.Error for op and its
// operands, with the user's call site.
func WrapRule(err error, op string, inputs []*graph.Node) error {
	kind := graph.ErrInvalid
	msg := err.Error()
	if re, ok := err.(*ruleError); ok {
		kind = re.kind
	}
	return graph.NewError(kind, op, inputs, "%s", msg)
}

package ops

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Control flow: Cond, While and Scan, as jax.lax.cond, while_loop and
// scan. Their functions build bodies on a fresh scope (graph.Sub) with
// typed parameters; a body may also read nodes of the graphs around it
// (captured: they become operands of the op, and gradients flow to
// them). The op's value is a tuple (internal/opdef/control.go) and the
// builders return one TupleGet node per result.

// The control-flow ops' codes.
var OpCond, OpWhile, OpScan, OpTupleGet graph.Op

func init() {
	OpCond = define(&opdef.Def{Name: "Cond", Doc: "then(xs) if pred else else(xs): one branch runs, chosen at run time",
		Arity: -1, Kind: opdef.Control, DType: controlDType(opdef.CondKind), Shape: controlShape(opdef.CondKind),
		Ref: refCond, Cost: controlCost, TupleGrad: condGrad})
	OpWhile = define(&opdef.Def{Name: "While", Doc: "carry = body(carry) while cond(carry) (and fewer than the bound's iterations); differentiable only with a bound (WhileMax)",
		Arity: -1, Kind: opdef.Control, DType: controlDType(opdef.WhileKind), Shape: controlShape(opdef.WhileKind),
		Ref: refWhile, Cost: controlCost, TupleGrad: whileGrad})
	OpScan = define(&opdef.Def{Name: "Scan", Doc: "carry, y[t] = body(carry, x[t]) for t in 0..length-1: final carry and stacked ys",
		Arity: -1, Kind: opdef.Control, DType: controlDType(opdef.ScanKind), Shape: controlShape(opdef.ScanKind),
		Ref: refLoopScan, Cost: controlCost, TupleGrad: scanGrad})
	OpTupleGet = define(&opdef.Def{Name: "TupleGet", Doc: "result i of Cond, While or Scan (a view into the op's tuple)",
		Arity: 1, Kind: opdef.Movement, DType: tupleGetDType, Shape: tupleGetShape, Ref: refTupleGet})
}

// Cond returns then(operands) when the bool scalar pred is true and
// els(operands) otherwise; only the chosen branch runs. Both functions
// get parameters of the operands' types and must return results of the
// same types, in the same number. They may read other nodes of the
// enclosing graph directly (captures). As jax.lax.cond.
func Cond(pred *graph.Node, then, els func(xs []*graph.Node) []*graph.Node, operands ...*graph.Node) []*graph.Node {
	const op = "Cond"
	all := append([]*graph.Node{pred}, operands...)
	g, early := controlGraph(op, all)
	types := typesOf(operands)
	bodies, caps, err := buildBodies(op, g, early, []bodySpec{
		{"then", types, "x", then},
		{"else", types, "x", els},
	})
	if err != nil {
		return invalids(g, err, max(1, bodyResults(bodies, 0)))
	}
	if pred.DType() != tensor.Bool || pred.Rank() != 0 {
		return invalids(g, graph.NewError(graph.ErrDType, op, all, "the predicate must be a bool scalar, got %s", pred.Type()), len(bodies[0].Results))
	}
	tr, er := bodies[0].Results, bodies[1].Results
	if len(tr) != len(er) {
		return invalids(g, graph.NewError(graph.ErrInvalid, op, all, "then returns %d results and else %d", len(tr), len(er)), max(1, len(tr)))
	}
	outs := make([]opdef.Type, len(tr))
	for i := range tr {
		if !opdef.TypeOf(tr[i]).Equal(opdef.TypeOf(er[i])) {
			kind := graph.ErrShape
			if tr[i].DType() != er[i].DType() {
				kind = graph.ErrDType
			}
			return invalids(g, graph.NewError(kind, op, all, "result %d is %s from then and %s from else", i, tr[i].Type(), er[i].Type()), len(tr))
		}
		outs[i] = opdef.TypeOf(tr[i])
	}
	a := &opdef.ControlAttr{Kind: opdef.CondKind, Bodies: bodies, Carries: len(operands), Outs: outs}
	return applyControl(OpCond, a, append(all, caps...))
}

// While repeats carry = body(carry) while cond(carry) is true, starting
// from init, and returns the final carry (init itself when cond is false
// at once). cond returns a bool scalar; body returns values of the
// carries' types. Both may read nodes of the enclosing graph (captures).
// A While without a bound is not differentiable: use WhileMax. As
// jax.lax.while_loop.
func While(cond func(carry []*graph.Node) *graph.Node, body func(carry []*graph.Node) []*graph.Node, init ...*graph.Node) []*graph.Node {
	return while("While", 0, cond, body, init)
}

// WhileMax is While stopped after at most maxTrips iterations (as
// TensorFlow's while_loop(maximum_iterations)); it is differentiable (a
// bounded loop is differentiated as a Scan of maxTrips steps that stop
// changing the carry once cond is false).
func WhileMax(maxTrips int, cond func(carry []*graph.Node) *graph.Node, body func(carry []*graph.Node) []*graph.Node, init ...*graph.Node) []*graph.Node {
	return while("WhileMax", maxTrips, cond, body, init)
}

func while(op string, maxTrips int, cond func([]*graph.Node) *graph.Node, body func([]*graph.Node) []*graph.Node, init []*graph.Node) []*graph.Node {
	if len(init) == 0 {
		// Nothing to build the functions on (they would index an empty
		// carry): the result count is known, fail at once.
		return invalids(nil, graph.NewError(graph.ErrInvalid, op, nil, "no carried values"), 1)
	}
	g, early := controlGraph(op, init)
	if early == nil && maxTrips <= 0 && op == "WhileMax" {
		early = graph.NewError(graph.ErrInvalid, op, init, "the bound must be at least 1, got %d", maxTrips)
	}
	var condFn func([]*graph.Node) []*graph.Node
	if cond != nil {
		condFn = func(c []*graph.Node) []*graph.Node { return []*graph.Node{cond(c)} }
	}
	types := typesOf(init)
	bodies, caps, err := buildBodies(op, g, early, []bodySpec{
		{"cond", types, "c", condFn},
		{"body", types, "c", body},
	})
	n := max(1, len(init))
	if err != nil {
		return invalids(g, err, n)
	}
	if p := bodies[0].Results[0]; p.DType() != tensor.Bool || p.Rank() != 0 {
		return invalids(g, graph.NewError(graph.ErrDType, op, init, "cond must return a bool scalar, got %s", p.Type()), n)
	}
	if err := checkResults(op, init, "body", bodies[1].Results, types); err != nil {
		return invalids(g, err, n)
	}
	a := &opdef.ControlAttr{Kind: opdef.WhileKind, Bodies: bodies, Carries: len(init), MaxTrips: maxTrips, Outs: types}
	return applyControl(OpWhile, a, append(append([]*graph.Node{}, init...), caps...))
}

// LoopOption changes how the control-flow Scan runs or is differentiated
// (the cumulative scans, CumSum and the like, take ScanOption).
type LoopOption func(*opdef.ControlAttr)

// ScanReverse runs the steps from the last to the first (ys are still
// stacked by step index), as lax.scan(reverse=True).
func ScanReverse() LoopOption { return func(a *opdef.ControlAttr) { a.Reverse = true } }

// ScanRemat makes the gradient recompute each step's body from the saved
// carries instead of saving every intermediate value the gradient needs:
// less memory (one carry per step), more time (the body runs twice).
func ScanRemat() LoopOption { return func(a *opdef.ControlAttr) { a.Remat = true } }

// Scan runs body over the leading axis of xs: for t = 0 .. length-1,
// carry, y[t] = body(carry, x[t]) where x[t] is xs[i][t] for each of xs,
// starting from init. It returns the final carry and the ys stacked
// along a new leading axis of length length. Every x must have length
// rows; length < 0 takes it from xs[0]. body returns the new carry (of
// init's types) and the step's ys (any types, the same at every step).
// It may read nodes of the enclosing graph (captures). As jax.lax.scan.
func Scan(body func(carry, xs []*graph.Node) (next, ys []*graph.Node), init, xs []*graph.Node, length int, opts ...LoopOption) (carry, ys []*graph.Node) {
	const op = "Scan"
	fixed := append(append([]*graph.Node{}, init...), xs...)
	g, early := controlGraph(op, fixed)
	if early == nil && len(fixed) == 0 {
		early = graph.NewError(graph.ErrInvalid, op, nil, "neither carries nor xs: give at least one (a carry of zeros will do)")
	}
	if early == nil {
		if length < 0 && len(xs) > 0 && xs[0].Rank() > 0 {
			length = xs[0].Shape()[0]
		}
		if length < 0 {
			early = graph.NewError(graph.ErrInvalid, op, fixed, "a negative length needs an x to take it from")
		}
		for i, x := range xs {
			if early == nil && (x.Rank() == 0 || x.Shape()[0] != length) {
				early = graph.NewError(graph.ErrShape, op, fixed, "x %d is %s: its leading axis must be the length %d", i, x.Type(), length)
			}
		}
	}
	a := &opdef.ControlAttr{Kind: opdef.ScanKind, Carries: len(init), Xs: len(xs), Length: length}
	for _, o := range opts {
		if o != nil {
			o(a)
		}
	}
	types := typesOf(fixed)
	for i := range types {
		types[i] = a.ParamType(i, types[i])
	}
	var fn func([]*graph.Node) []*graph.Node
	nys := 0
	if body != nil {
		fn = func(p []*graph.Node) []*graph.Node {
			c, y := body(p[:len(init):len(init)], p[len(init):len(fixed):len(fixed)])
			nys = len(y)
			return append(append([]*graph.Node{}, c...), y...)
		}
	}
	bodies, caps, err := buildBodies(op, g, early, []bodySpec{{"body", types, "p", fn}})
	fails := func(err error) ([]*graph.Node, []*graph.Node) {
		bad := invalids(g, err, len(init)+max(nys, 1))
		return bad[:len(init)], bad[len(init):]
	}
	if err != nil {
		return fails(err)
	}
	res := bodies[0].Results
	if len(res) != len(init)+nys {
		return fails(graph.NewError(graph.ErrInvalid, op, fixed, "body returned %d carries for %d", len(res)-nys, len(init)))
	}
	if err := checkResults(op, fixed, "body", res[:len(init)], types[:len(init)]); err != nil {
		return fails(err)
	}
	a.Outs = append([]opdef.Type{}, types[:len(init)]...)
	for _, y := range res[len(init):] {
		a.Outs = append(a.Outs, opdef.Type{DType: y.DType(), Shape: append(tensor.Shape{length}, y.Shape()...)})
	}
	a.Bodies = bodies
	outs := applyControl(OpScan, a, append(fixed, caps...))
	return outs[:len(init):len(init)], outs[len(init):]
}

// bodySpec is one function of a control-flow op to build as a body.
type bodySpec struct {
	name   string       // "then", "cond", "body"
	params []opdef.Type // one per operand (the invalid Type for an invalid operand)
	prefix string       // the parameters' names: prefix0, prefix1, ...
	fn     func(params []*graph.Node) []*graph.Node
}

// controlGraph finds the graph of a control-flow op's operands and
// reports an error in them (an invalid or nil operand, or a graph
// already in error) without recording it, so that the bodies are still
// built (and the caller learns how many results to return).
func controlGraph(op string, operands []*graph.Node) (*graph.Graph, error) {
	var g *graph.Graph
	for _, n := range operands {
		if n != nil && n.Graph() != nil && (g == nil || n.Graph().Depth() > g.Depth()) {
			g = n.Graph()
		}
	}
	if g == nil {
		return nil, graph.NewError(graph.ErrInvalid, op, operands, "no valid operand")
	}
	if _, bad := graph.Operands(op, operands...); bad != nil {
		return g, bad.Err()
	}
	return g, nil
}

// buildBodies builds each spec's body in a fresh scope of g, gives every
// body a parameter for each capture of any of them (the union, in order
// of first capture), seals them, and returns the bodies and the captured
// outer nodes. With early set (an earlier error), the functions still run
// on invalid parameters, so the number of results is known, and early is
// returned.
func buildBodies(op string, g *graph.Graph, early error, specs []bodySpec) ([]*opdef.Body, []*graph.Node, error) {
	owner := fmt.Sprintf("%s (built at %s)", op, graph.CallSite())
	bodies := make([]*opdef.Body, len(specs))
	subs := make([]*graph.Graph, len(specs))
	var firstErr error
	setErr := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	if early != nil {
		setErr(early)
	}
	if g == nil {
		g = graph.New()
	}
	for k, s := range specs {
		sub := g.Sub(owner)
		subs[k] = sub
		if early != nil {
			sub.Fail(early)
		}
		params := make([]*graph.Node, len(s.params))
		for i, t := range s.params {
			params[i] = sub.Input(fmt.Sprintf("%s%d", s.prefix, i), t.DType, t.Shape...)
		}
		b := &opdef.Body{Graph: sub, Params: params}
		bodies[k] = b
		if s.fn == nil {
			setErr(graph.NewError(graph.ErrInvalid, op, nil, "the %s function is nil", s.name))
			continue
		}
		b.Results = s.fn(params)
		if err := g.Err(); err != nil {
			setErr(err)
		}
		if err := sub.Err(); err != nil {
			setErr(err)
		}
		for i, r := range b.Results {
			switch {
			case firstErr != nil:
			case !r.Valid():
				setErr(graph.NewError(graph.ErrInvalid, op, nil, "result %d of %s is invalid: %v", i, s.name, r.Err()))
			case r.Graph() != sub:
				if b.Results[i] = sub.Capture(r); !b.Results[i].Valid() {
					setErr(graph.NewError(graph.ErrInvalid, op, nil, "result %d of %s (%s) is not a node of the body or of a graph around it", i, s.name, r))
				}
			}
		}
	}
	if firstErr != nil {
		for _, s := range subs {
			s.Seal()
		}
		return bodies, nil, firstErr
	}
	// The union of the captures, then a parameter for each in every body.
	var caps []*graph.Node
	seen := map[*graph.Node]bool{}
	for _, s := range subs {
		outer, _ := s.Captures()
		for _, c := range outer {
			if !seen[c] {
				seen[c] = true
				caps = append(caps, c)
			}
		}
	}
	for k, s := range subs {
		for _, c := range caps {
			p := s.Capture(c)
			if !p.Valid() {
				setErr(p.Err())
				break
			}
			bodies[k].Params = append(bodies[k].Params, p)
		}
		s.Seal()
	}
	return bodies, caps, firstErr
}

// bodyResults is the number of results of body k (0 when not built).
func bodyResults(bodies []*opdef.Body, k int) int {
	if k < len(bodies) && bodies[k] != nil {
		return len(bodies[k].Results)
	}
	return 0
}

// checkResults checks that a body's results have the carries' types.
func checkResults(op string, operands []*graph.Node, name string, res []*graph.Node, types []opdef.Type) error {
	if len(res) != len(types) {
		return graph.NewError(graph.ErrInvalid, op, operands, "%s returns %d values for %d carries", name, len(res), len(types))
	}
	for i, r := range res {
		if t := opdef.TypeOf(r); !t.Equal(types[i]) {
			kind := graph.ErrShape
			if t.DType != types[i].DType {
				kind = graph.ErrDType
			}
			return graph.NewError(kind, op, operands, "%s returns %s for carry %d of type %s: a carry keeps its type", name, r.Type(), i, types[i])
		}
	}
	return nil
}

// typesOf returns the operands' types (the zero Type for an invalid one).
func typesOf(ns []*graph.Node) []opdef.Type {
	ts := make([]opdef.Type, len(ns))
	for i, n := range ns {
		if n.Valid() {
			ts[i] = opdef.TypeOf(n)
		}
	}
	return ts
}

// invalids records err on g (when it has no error yet) and returns k
// invalid nodes.
func invalids(g *graph.Graph, err error, k int) []*graph.Node {
	bad := g.Fail(err)
	out := make([]*graph.Node, max(k, 0))
	for i := range out {
		out[i] = bad
	}
	return out
}

// applyControl builds the control-flow node and a TupleGet per result.
func applyControl(op graph.Op, a *opdef.ControlAttr, operands []*graph.Node) []*graph.Node {
	a.NewID()
	n := Apply(op, a, operands...)
	return TupleGets(n)
}

// TupleGets returns a TupleGet node for each result of control-flow node
// n (invalid nodes, one per result, when n is invalid).
func TupleGets(n *graph.Node) []*graph.Node {
	a, ok := n.Attr().(*opdef.ControlAttr)
	if !n.Valid() || !ok {
		return []*graph.Node{n}
	}
	offs, _ := opdef.TupleLayout(a.Outs)
	out := make([]*graph.Node, len(a.Outs))
	for i, t := range a.Outs {
		out[i] = Apply(OpTupleGet, opdef.TupleAttr{Index: i, Offset: offs[i], DType: t.DType, Shape: t.Shape}, n)
	}
	return out
}

// controlAttr checks a control-flow op's attribute against its kind.
func controlAttr(kind opdef.ControlKind, attr graph.Attr) (*opdef.ControlAttr, error) {
	a, ok := attr.(*opdef.ControlAttr)
	if !ok || a == nil || a.Kind != kind {
		return nil, argErr("%s needs a *ControlAttr of its kind, got %T", kind, attr)
	}
	want := 2
	if kind == opdef.ScanKind {
		want = 1
	}
	if len(a.Bodies) != want {
		return nil, argErr("%s has %d bodies, want %d", kind, len(a.Bodies), want)
	}
	for i, b := range a.Bodies {
		if b == nil || b.Graph == nil {
			return nil, argErr("%s: body %d is nil", kind, i)
		}
		for _, r := range b.Results {
			if !r.Valid() || r.Graph() != b.Graph {
				return nil, argErr("%s: body %d has an invalid result", kind, i)
			}
		}
		for _, p := range b.Params {
			if !p.Valid() || p.Graph() != b.Graph || p.Op() != graph.OpInput {
				return nil, argErr("%s: body %d has a parameter that is not one of its Inputs", kind, i)
			}
		}
	}
	if a.Carries < 0 || a.Xs < 0 || a.Length < 0 || a.MaxTrips < 0 {
		return nil, argErr("%s: negative count in %s", kind, a)
	}
	return a, nil
}

// checkOperands checks the operands' types against the bodies'
// parameters, and the bodies' results against the result types.
func checkOperands(a *opdef.ControlAttr, ts []opdef.Type, dtypeOnly bool) error {
	// The dtype rule sees only dtypes and the shape rule only shapes:
	// each checks its half.
	same := func(t, u opdef.Type) bool {
		if dtypeOnly {
			return t.DType == u.DType
		}
		return t.Shape.Equal(u.Shape)
	}
	// show prints the half of a type the rule sees (the operand types are
	// in the error's operand list).
	show := func(t opdef.Type) string {
		if dtypeOnly {
			return t.DType.Short()
		}
		return t.Shape.String()
	}
	off := a.ParamOffset()
	if len(ts) < a.Fixed() {
		return argErr("%s takes at least %d operands, got %d", a.Kind, a.Fixed(), len(ts))
	}
	for k, b := range a.Bodies {
		if len(b.Params) != len(ts)-off {
			return argErr("%s: body %d has %d parameters for %d operands", a.Kind, k, len(b.Params), len(ts)-off)
		}
		for i, p := range b.Params {
			if want := a.ParamType(i, ts[off+i]); !same(opdef.TypeOf(p), want) {
				return argErr("%s: parameter %d of body %d is %s, its operand gives %s", a.Kind, i, k, show(opdef.TypeOf(p)), show(want))
			}
		}
	}
	var res [][]*graph.Node
	switch a.Kind {
	case opdef.CondKind:
		if (dtypeOnly && ts[0].DType != tensor.Bool) || (!dtypeOnly && len(ts[0].Shape) != 0) {
			return dtypeErr("Cond's predicate must be a bool scalar, got %s", show(ts[0]))
		}
		res = [][]*graph.Node{a.Bodies[0].Results, a.Bodies[1].Results}
	case opdef.WhileKind:
		c := a.Bodies[0].Results
		if len(c) != 1 || !same(opdef.TypeOf(c[0]), opdef.Type{DType: tensor.Bool, Shape: tensor.Shape{}}) {
			return argErr("While's cond must return one bool scalar")
		}
		if len(a.Outs) != a.Carries {
			return argErr("While has %d result types for %d carries", len(a.Outs), a.Carries)
		}
		for i := range a.Carries {
			if !same(a.Outs[i], ts[i]) {
				return argErr("While: carry %d is %s, its result %s", i, show(ts[i]), show(a.Outs[i]))
			}
		}
		res = [][]*graph.Node{a.Bodies[1].Results}
	case opdef.ScanKind:
		for i := a.Carries; i < a.Carries+a.Xs && !dtypeOnly; i++ {
			if len(ts[i].Shape) == 0 || ts[i].Shape[0] != a.Length {
				return shapeErr("Scan: x %d has shape %s, its leading axis must be the length %d", i-a.Carries, show(ts[i]), a.Length)
			}
		}
		for i := range a.Carries {
			if i >= len(a.Outs) || !same(a.Outs[i], ts[i]) {
				return argErr("Scan: carry %d is %s, its result differs", i, show(ts[i]))
			}
		}
		b := a.Bodies[0].Results
		if len(b) != len(a.Outs) {
			return argErr("Scan's body has %d results for %d result types", len(b), len(a.Outs))
		}
		for i, r := range b {
			want := a.Outs[i]
			if i >= a.Carries {
				if !dtypeOnly && (len(want.Shape) == 0 || want.Shape[0] != a.Length) {
					return argErr("Scan: ys %d is %s, not stacked over the length %d", i-a.Carries, show(want), a.Length)
				}
				if len(want.Shape) > 0 {
					want = opdef.Type{DType: want.DType, Shape: want.Shape[1:]}
				}
			}
			if !same(opdef.TypeOf(r), want) {
				return argErr("Scan: body result %d is %s, want %s", i, show(opdef.TypeOf(r)), show(want))
			}
		}
		return nil
	}
	for _, rs := range res {
		if len(rs) != len(a.Outs) {
			return argErr("%s: a body has %d results for %d result types", a.Kind, len(rs), len(a.Outs))
		}
		for i, r := range rs {
			if !same(opdef.TypeOf(r), a.Outs[i]) {
				return argErr("%s: body result %d is %s, the op's is %s", a.Kind, i, show(opdef.TypeOf(r)), show(a.Outs[i]))
			}
		}
	}
	return nil
}

func controlDType(kind opdef.ControlKind) opdef.DTypeRule {
	return func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		a, err := controlAttr(kind, attr)
		if err != nil {
			return 0, err
		}
		ts := make([]opdef.Type, len(in))
		for i, dt := range in {
			ts[i].DType = dt
		}
		if err := checkOperands(a, ts, true); err != nil {
			return 0, err
		}
		return tensor.Uint8, nil
	}
}

func controlShape(kind opdef.ControlKind) opdef.ShapeRule {
	return func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		a, err := controlAttr(kind, attr)
		if err != nil {
			return nil, err
		}
		ts := make([]opdef.Type, len(in))
		for i, s := range in {
			ts[i].Shape = s
		}
		if err := checkOperands(a, ts, false); err != nil {
			return nil, err
		}
		_, total := opdef.TupleLayout(a.Outs)
		return tensor.Shape{int(total)}, nil
	}
}

func tupleGetDType(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, ok := attr.(opdef.TupleAttr)
	if !ok {
		return 0, argErr("TupleGet needs a TupleAttr, got %T", attr)
	}
	if in[0] != tensor.Uint8 {
		return 0, dtypeErr("TupleGet reads a control-flow op's tuple (uint8), got %v", in[0])
	}
	if !a.DType.Valid() || a.Index < 0 || a.Offset < 0 || a.Offset%opdef.TupleAlign != 0 {
		return 0, argErr("bad TupleGet attribute %s", a)
	}
	return a.DType, nil
}

func tupleGetShape(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.TupleAttr)
	if !ok {
		return nil, argErr("TupleGet needs a TupleAttr, got %T", attr)
	}
	if err := graph.CheckType(a.DType, a.Shape); err != nil {
		return nil, argErr("bad TupleGet type: %v", err)
	}
	if len(in[0]) != 1 || a.Offset+int64(a.Shape.Size()*a.DType.Size()) > int64(in[0][0]) {
		return nil, shapeErr("TupleGet of %s at offset %d does not fit in a tuple of shape %v", tensor.TypeString(a.DType, a.Shape), a.Offset, in[0])
	}
	return a.Shape.Clone(), nil
}

// The reference evaluators run the bodies with opdef.EvalBody.

func refCond(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(*opdef.ControlAttr)
	b := a.Bodies[1]
	if in[0].Float(0) != 0 {
		b = a.Bodies[0]
	}
	res, err := opdef.EvalBody(b, in[1:])
	if err != nil {
		return nil, err
	}
	return tupleValue(n, res), nil
}

func refWhile(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(*opdef.ControlAttr)
	carry := append([]*opdef.Value{}, in[:a.Carries]...)
	caps := in[a.Carries:]
	for trip := 0; a.MaxTrips == 0 || trip < a.MaxTrips; trip++ {
		p, err := opdef.EvalBody(a.Bodies[0], append(append([]*opdef.Value{}, carry...), caps...))
		if err != nil {
			return nil, err
		}
		if p[0].Float(0) == 0 {
			break
		}
		next, err := opdef.EvalBody(a.Bodies[1], append(append([]*opdef.Value{}, carry...), caps...))
		if err != nil {
			return nil, err
		}
		carry = next
	}
	return tupleValue(n, carry), nil
}

func refLoopScan(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(*opdef.ControlAttr)
	c, nx := a.Carries, a.Xs
	carry := append([]*opdef.Value{}, in[:c]...)
	xs, caps := in[c:c+nx], in[c+nx:]
	ys := make([]*opdef.Value, len(a.Outs)-c)
	for j := range ys {
		ys[j] = opdef.NewValue(a.Outs[c+j].DType, a.Outs[c+j].Shape)
	}
	for k := range a.Length {
		t := k
		if a.Reverse {
			t = a.Length - 1 - k
		}
		params := append([]*opdef.Value{}, carry...)
		for _, x := range xs {
			params = append(params, stepOf(x, t, a.Length))
		}
		res, err := opdef.EvalBody(a.Bodies[0], append(params, caps...))
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", t, err)
		}
		carry = res[:c]
		for j, y := range res[c:] {
			m := y.Len()
			for q := range m {
				ys[j].Copy(t*m+q, y, q)
			}
		}
	}
	return tupleValue(n, append(carry, ys...)), nil
}

// stepOf returns step t of x, whose leading axis has length rows.
func stepOf(x *opdef.Value, t, length int) *opdef.Value {
	v := opdef.NewValue(x.DType, x.Shape[1:])
	m := v.Len()
	for q := range m {
		v.Copy(q, x, t*m+q)
	}
	_ = length
	return v
}

// tupleValue is the value of control-flow node n holding res.
func tupleValue(n *graph.Node, res []*opdef.Value) *opdef.Value {
	return &opdef.Value{DType: n.DType(), Shape: n.Shape(), Tuple: res}
}

func refTupleGet(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.TupleAttr)
	if a.Index >= len(in[0].Tuple) {
		return nil, fmt.Errorf("TupleGet %d of a tuple of %d", a.Index, len(in[0].Tuple))
	}
	v := *in[0].Tuple[a.Index]
	return &v, nil
}

// controlCost estimates a control-flow node's FLOPs: its bodies' (the
// larger branch of a Cond, one iteration of a While, every step of a
// Scan).
func controlCost(n *graph.Node) float64 {
	a, ok := n.Attr().(*opdef.ControlAttr)
	if !ok {
		return 0
	}
	cost := func(b *opdef.Body) float64 {
		var f float64
		for _, m := range graph.Ancestors(b.Results...) {
			if d := opdef.Lookup(m.Op()); d != nil {
				f += d.FLOPsOf(m)
			}
		}
		return f
	}
	switch a.Kind {
	case opdef.CondKind:
		return max(cost(a.Bodies[0]), cost(a.Bodies[1]))
	case opdef.WhileKind:
		return cost(a.Bodies[0]) + cost(a.Bodies[1])
	}
	return float64(a.Length) * cost(a.Bodies[0])
}

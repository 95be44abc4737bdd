package exec

import (
	"fmt"
	"maps"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Control flow (ops.Cond, ops.While, ops.Scan) in the compiler. A
// control-flow node's bodies are graphs of their own; the outer passes
// treat the node as one opaque kernel with a tuple result, except:
//
//   - constfold leaves it alone (a tuple is not a constant);
//   - loopcse replaces a node by another whose attribute Extends its
//     attribute with the same operands (a gradient's forward Scan that
//     also saves residuals): the TupleGets of the old read the new, whose
//     first results are laid out identically;
//   - hoist moves the loop-invariant nodes of While and Scan bodies out
//     of the loop, as new captures;
//   - precision converts the bodies too;
//   - schedule makes a TupleGet of an arena tuple a view (an AliasStep
//     with ViewOffset), and compiles every body with the same pipeline
//     into Plan.Bodies.

// controlAttr returns n's control-flow attribute, or nil.
func controlAttr(n *graph.Node) *opdef.ControlAttr {
	a, _ := n.Attr().(*opdef.ControlAttr)
	return a
}

// rebuildWith builds a copy of n in g with a new attribute and operands.
func rebuildWith(g *graph.Graph, n *graph.Node, attr graph.Attr, ins []*graph.Node) *graph.Node {
	d := opdef.Lookup(n.Op())
	dt, s, err := d.Infer(ins, attr)
	if err != nil {
		return g.Fail(opdef.WrapRule(err, d.Name, ins))
	}
	return g.Add(graph.Spec{Op: n.Op(), Attr: attr, Inputs: ins, DType: dt, Shape: s, Name: n.Name(), Site: n.Site()})
}

// describeControl names a control-flow node for messages: "Scan (built at
// model.go:12)".
func describeControl(n *graph.Node) string {
	return fmt.Sprintf("%s (built at %s)", n.Op(), n.Site())
}

// bodyNames are the names of a control-flow op's bodies, in attr order.
func bodyNames(k opdef.ControlKind) []string {
	switch k {
	case opdef.CondKind:
		return []string{"then", "else"}
	case opdef.WhileKind:
		return []string{"cond", "body"}
	}
	return []string{"body"}
}

// BodyName names body k of a control-flow kind ("then", "cond", "body"),
// for the backends' messages.
func BodyName(kind opdef.ControlKind, k int) string {
	if names := bodyNames(kind); k < len(names) {
		return names[k]
	}
	return fmt.Sprintf("body %d", k)
}

// ---- bodies ----

// compileBodies compiles every body of control-flow node n with the
// pipeline of the program (its options, but no updates, no precision
// change: the precision pass converted the bodies already, and no
// CheckNumerics checks inside: the checks see the loop's results).
func (c *compilation) compileBodies(n *graph.Node) ([]*BodyPlan, error) {
	a := controlAttr(n)
	out := make([]*BodyPlan, len(a.Bodies))
	for k := range a.Bodies {
		bp, err := c.compileBody(a, k)
		if err != nil {
			return nil, fmt.Errorf("the %s of %s: %w", BodyName(a.Kind, k), describeControl(n), err)
		}
		out[k] = bp
	}
	return out, nil
}

func (c *compilation) compileBody(a *opdef.ControlAttr, k int) (*BodyPlan, error) {
	b := a.Bodies[k]
	cfg := *c.cfg
	cfg.updates, cfg.share, cfg.rec = nil, nil, nil
	cfg.precision, cfg.numerics = 0, false
	cfg.disabled = maps.Clone(c.cfg.disabled)
	cfg.disabled["numerics"] = true
	cfg.disabled["precision"] = true
	sub := &compilation{cfg: &cfg, be: c.be, user: b.Graph, outs: b.Results, body: true}
	if len(b.Results) == 0 {
		return nil, fmt.Errorf("%w: a body without results", graph.ErrInvalid)
	}
	if err := sub.runPasses(); err != nil {
		return nil, err
	}
	c.collectives = c.collectives || sub.collectives
	if len(sub.plan.Vars) > 0 {
		v := sub.plan.Vars[0].Node
		return nil, fmt.Errorf("%w: Variable %q (built at %s) is a node of the body: create Variables in the outer graph (a body reads them as captures)", graph.ErrInvalid, v.Name(), v.Site())
	}
	params := make(map[*graph.Node]int, len(b.Params))
	for i, p := range b.Params {
		params[p] = i
	}
	bp := &BodyPlan{Plan: sub.plan, Params: make([]int, len(sub.plan.InputNodes))}
	for i, in := range sub.plan.InputNodes {
		j, ok := params[in]
		if !ok {
			return nil, fmt.Errorf("%w: the body reads %s, which is not one of its parameters (a bug in loom)", graph.ErrInvalid, in)
		}
		bp.Params[i] = j
	}
	return bp, nil
}

// isControl reports whether n is a control-flow node (Cond, While, Scan):
// constfold never folds one (its value is a tuple).
func isControl(n *graph.Node) bool {
	d := opdef.Lookup(n.Op())
	return d != nil && d.Kind == opdef.Control
}

// ---- loopcse ----

// loopcse replaces every control-flow node whose attribute another's
// Extends (transitively), with the same operands and result types, by the
// largest such extension: one loop computes both.
func loopcse(c *compilation) error {
	byAttr := map[*opdef.ControlAttr][]*graph.Node{}
	var loops []*graph.Node
	for _, n := range c.g.Nodes() {
		if a := controlAttr(n); a != nil {
			byAttr[a] = append(byAttr[a], n)
			loops = append(loops, n)
		}
	}
	best := map[*graph.Node]*graph.Node{}
	for _, n := range loops {
		a := controlAttr(n)
		for e := a.Extends; e != nil; e = e.Extends {
			for _, m := range byAttr[e] {
				if !sameOperands(m, n) || !prefixTypes(e.Outs, a.Outs) {
					continue
				}
				if cur := best[m]; cur == nil || len(controlAttr(cur).Outs) < len(a.Outs) {
					best[m] = n
				}
			}
		}
	}
	if len(best) == 0 {
		return nil
	}
	return c.rewrite(func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, visit func(*graph.Node) *graph.Node) *graph.Node {
		if m := best[n]; m != nil {
			return visit(m)
		}
		return nil
	})
}

func sameOperands(m, n *graph.Node) bool {
	a, b := m.Inputs(), n.Inputs()
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func prefixTypes(short, long []opdef.Type) bool {
	if len(short) > len(long) {
		return false
	}
	for i := range short {
		if !short[i].Equal(long[i]) {
			return false
		}
	}
	return true
}

// ---- hoist ----

// hoistable reports whether body node n may be computed once outside its
// loop when its operands are loop-invariant: not a leaf, not random (a
// key could be meant to give each iteration the same bits, but we keep
// the op where the user put it), not an op that can fail at run time (the
// indexing and linear-algebra ops: a While that runs no iteration must
// not fail on them), and not a control-flow op.
func hoistable(n *graph.Node) bool {
	if n.Op().IsLeaf() {
		return false
	}
	d := opdef.Lookup(n.Op())
	if d == nil {
		return false
	}
	switch d.Kind {
	case opdef.Random, opdef.Linalg, opdef.Control, opdef.Collective:
		return false
	}
	switch n.Op() {
	case ops.OpGather, ops.OpTakeAlongAxis, ops.OpScatter, ops.OpScatterAdd, ops.OpIndexAdd, ops.OpTupleGet, opdef.OpFused:
		return false
	}
	return true
}

// expansion reports whether n only repeats, views or reorders its
// operand's elements (BroadcastTo, Reshape, Transpose): hoisting it would
// store a value the body reads in place anyway (a broadcast operand, a
// view, MatMul's transposition flags once the body is simplified), so its
// operand is hoisted instead.
func expansion(n *graph.Node) bool {
	return n.Op() == ops.OpBroadcastTo || n.Op() == ops.OpReshape || n.Op() == ops.OpTranspose
}

// hoist moves the loop-invariant nodes of While and Scan bodies (those
// computed only from captures and constants, and hoistable) out of the
// loop: each becomes an outer node and a new capture of the loop. Cond's
// branches are left alone (only one of them runs).
func hoist(c *compilation) error {
	loops := false
	for _, n := range c.g.Nodes() {
		if a := controlAttr(n); a != nil && a.Kind != opdef.CondKind {
			loops = true
			break
		}
	}
	if !loops {
		return nil
	}
	return c.rewrite(func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, _ func(*graph.Node) *graph.Node) *graph.Node {
		a := controlAttr(n)
		if a == nil || a.Kind == opdef.CondKind {
			return nil
		}
		na, nins := hoistLoop(ng, n, a, ins)
		if na == nil {
			return nil
		}
		return rebuildWith(ng, n, na, nins)
	})
}

// hoistLoop returns the attribute and operands of loop n (of attribute a,
// operands ins in ng) with its invariant body nodes moved out, or nil
// when there is nothing to move.
func hoistLoop(ng *graph.Graph, n *graph.Node, a *opdef.ControlAttr, ins []*graph.Node) (*opdef.ControlAttr, []*graph.Node) {
	fixed := a.Fixed() // params below this vary per iteration
	off := a.ParamOffset()
	type bodyInfo struct {
		param    map[*graph.Node]int
		frontier []*graph.Node
		isFront  map[*graph.Node]bool
	}
	// Hoist out of the loops inside the bodies first: what leaves an
	// inner loop may be invariant here too.
	bodies := make([]*opdef.Body, len(a.Bodies))
	any := false
	for k, b := range a.Bodies {
		bodies[k] = hoistInner(ng, n, b)
		any = any || bodies[k] != b
	}
	infos := make([]bodyInfo, len(bodies))
	for k, b := range bodies {
		info := bodyInfo{param: map[*graph.Node]int{}, isFront: map[*graph.Node]bool{}}
		for i, p := range b.Params {
			info.param[p] = i
		}
		// stays: computed in the body (depends on a varying parameter, or
		// is not hoistable).
		stays := map[*graph.Node]bool{}
		// reads: the node reads a capture (one computed only from
		// constants is left to the body's constant folding).
		reads := map[*graph.Node]bool{}
		for _, m := range graph.Ancestors(b.Results...) {
			for _, in := range m.Inputs() {
				reads[m] = reads[m] || reads[in]
			}
			switch {
			case m.Op() == graph.OpInput:
				j, ok := info.param[m]
				stays[m] = !ok || j < fixed
				reads[m] = true
			case m.Op().IsLeaf():
				stays[m] = false
			case !hoistable(m):
				stays[m] = true
			default:
				for _, in := range m.Inputs() {
					if stays[in] {
						stays[m] = true
						break
					}
				}
			}
		}
		// The frontier: invariant non-leaf nodes a staying node (or a
		// result) reads; an expansion stays and its operand is hoisted.
		seen := map[*graph.Node]bool{}
		var need func(m *graph.Node)
		need = func(m *graph.Node) {
			if seen[m] || m.Op().IsLeaf() {
				return
			}
			seen[m] = true
			if !stays[m] && !expansion(m) && reads[m] {
				info.isFront[m] = true
				info.frontier = append(info.frontier, m)
				return
			}
			for _, in := range m.Inputs() {
				need(in)
			}
		}
		for _, r := range b.Results {
			need(r)
		}
		if len(info.frontier) > 0 {
			any = true
		}
		infos[k] = info
	}
	if !any {
		return nil, nil
	}
	// The hoisted nodes, rebuilt in ng from the loop's operands.
	outerOf := map[*graph.Node]*graph.Node{}
	var outer func(k int, m *graph.Node) *graph.Node
	outer = func(k int, m *graph.Node) *graph.Node {
		if o, ok := outerOf[m]; ok {
			return o
		}
		var o *graph.Node
		switch {
		case m.Op() == graph.OpInput:
			o = ins[off+infos[k].param[m]]
		case m.Op() == graph.OpConst:
			o = ng.ConstShared(m.Value(), m.Site())
		default:
			xs := make([]*graph.Node, len(m.Inputs()))
			for i, in := range m.Inputs() {
				xs[i] = outer(k, in)
			}
			o = opdef.Rebuild(ng, m, xs)
		}
		outerOf[m] = o
		return o
	}
	var caps []*graph.Node
	capIndex := map[*graph.Node]int{}
	for k, info := range infos {
		for _, m := range info.frontier {
			o := outer(k, m)
			if _, ok := capIndex[o]; !ok {
				capIndex[o] = len(caps)
				caps = append(caps, o)
			}
		}
	}
	na := *a
	na.NewID()
	na.Bodies = make([]*opdef.Body, len(bodies))
	for k, b := range bodies {
		sub := ng.Sub(fmt.Sprintf("%s (built at %s)", n.Op(), n.Site()))
		nb := &opdef.Body{Graph: sub}
		for _, p := range b.Params {
			nb.Params = append(nb.Params, sub.Input(p.Name(), p.DType(), p.Shape()...))
		}
		for i, o := range caps {
			nb.Params = append(nb.Params, sub.Input(fmt.Sprintf("hoisted%d", i), o.DType(), o.Shape()...))
		}
		done := map[*graph.Node]*graph.Node{}
		var inner func(m *graph.Node) *graph.Node
		inner = func(m *graph.Node) *graph.Node {
			if r, ok := done[m]; ok {
				return r
			}
			var r *graph.Node
			switch {
			case infos[k].isFront[m]:
				r = nb.Params[len(b.Params)+capIndex[outerOf[m]]]
			case m.Op() == graph.OpInput:
				j, ok := infos[k].param[m]
				if !ok {
					return sub.Fail(fmt.Errorf("%w: body input %s is not a parameter", graph.ErrInvalid, m))
				}
				r = nb.Params[j]
			default:
				xs := make([]*graph.Node, len(m.Inputs()))
				for i, in := range m.Inputs() {
					xs[i] = inner(in)
				}
				r = opdef.Rebuild(sub, m, xs)
			}
			done[m] = r
			return r
		}
		for _, r := range b.Results {
			nb.Results = append(nb.Results, inner(r))
		}
		if err := sub.Err(); err != nil {
			ng.Fail(err)
			return nil, nil
		}
		sub.Seal()
		na.Bodies[k] = nb
	}
	return &na, append(append([]*graph.Node{}, ins...), caps...)
}

// hoistInner returns body b of loop n with the While and Scan nodes in
// it hoisted (recursively), rebuilt in a new body graph inside g; b
// itself when it holds no such loop.
func hoistInner(g *graph.Graph, n *graph.Node, b *opdef.Body) *opdef.Body {
	nodes := graph.Ancestors(b.Results...)
	loops := false
	for _, m := range nodes {
		if a := controlAttr(m); a != nil && a.Kind != opdef.CondKind {
			loops = true
			break
		}
	}
	if !loops {
		return b
	}
	sub := g.Sub(describeControl(n))
	nb := &opdef.Body{Graph: sub}
	done := map[*graph.Node]*graph.Node{}
	for _, p := range b.Params {
		q := sub.Input(p.Name(), p.DType(), p.Shape()...)
		nb.Params = append(nb.Params, q)
		done[p] = q
	}
	for _, m := range nodes {
		if _, ok := done[m]; ok {
			continue
		}
		xs := make([]*graph.Node, len(m.Inputs()))
		for i, in := range m.Inputs() {
			xs[i] = done[in]
		}
		var r *graph.Node
		if a := controlAttr(m); a != nil && a.Kind != opdef.CondKind {
			if na, nins := hoistLoop(sub, m, a, xs); na != nil {
				r = rebuildWith(sub, m, na, nins)
			}
		}
		if r == nil {
			r = opdef.Rebuild(sub, m, xs)
		}
		done[m] = r
	}
	for _, r := range b.Results {
		nb.Results = append(nb.Results, done[r])
	}
	if sub.Err() != nil {
		g.Fail(sub.Err())
		return b
	}
	sub.Seal()
	return nb
}

// ---- precision ----

// converter converts control-flow nodes from one float type to another
// (the precision pass), remembering each attribute's conversion so that
// Extends links survive (link, after the rewrite).
type converter struct {
	from, to tensor.DType
	attrs    map[*opdef.ControlAttr]*opdef.ControlAttr
}

// link points each converted attribute's Extends at the conversion of
// the attribute it extended.
func (cv *converter) link() {
	for old, na := range cv.attrs {
		if old.Extends != nil {
			na.Extends = cv.attrs[old.Extends]
		}
	}
}

// convertControl rebuilds control-flow node n (operands ins already
// converted in ng) with its bodies computing in to instead of from.
func (cv *converter) convertControl(ng *graph.Graph, n *graph.Node, ins []*graph.Node) *graph.Node {
	from, to := cv.from, cv.to
	a := controlAttr(n)
	conv := func(t opdef.Type) opdef.Type {
		if t.DType == from {
			t.DType = to
		}
		return t
	}
	na := *a
	na.NewID()
	na.Extends = nil // set by link
	if cv.attrs == nil {
		cv.attrs = map[*opdef.ControlAttr]*opdef.ControlAttr{}
	}
	cv.attrs[a] = &na
	na.Outs = make([]opdef.Type, len(a.Outs))
	for i, t := range a.Outs {
		na.Outs[i] = conv(t)
	}
	na.Bodies = make([]*opdef.Body, len(a.Bodies))
	for k, b := range a.Bodies {
		sub := ng.Sub(describeControl(n))
		nb := &opdef.Body{Graph: sub}
		done := map[*graph.Node]*graph.Node{}
		for _, p := range b.Params {
			t := conv(opdef.TypeOf(p))
			q := sub.Input(p.Name(), t.DType, t.Shape...)
			nb.Params = append(nb.Params, q)
			done[p] = q
		}
		var visit func(m *graph.Node) *graph.Node
		visit = func(m *graph.Node) *graph.Node {
			if r, ok := done[m]; ok {
				return r
			}
			xs := make([]*graph.Node, len(m.Inputs()))
			for i, in := range m.Inputs() {
				xs[i] = visit(in)
			}
			r := cv.convertNode(sub, m, xs)
			done[m] = r
			return r
		}
		for _, r := range b.Results {
			nb.Results = append(nb.Results, visit(r))
		}
		if err := sub.Err(); err != nil {
			return ng.Fail(err)
		}
		sub.Seal()
		na.Bodies[k] = nb
	}
	return rebuildWith(ng, n, &na, ins)
}

// convertNode rebuilds node n in g with operands ins computing in to
// instead of from (the precision pass's rules, for body nodes).
func (cv *converter) convertNode(g *graph.Graph, n *graph.Node, ins []*graph.Node) *graph.Node {
	from, to := cv.from, cv.to
	switch {
	case n.Op() == graph.OpConst && n.DType() == from:
		t, _ := tensor.FromFloat64s(to, n.Value().Float64s(), n.Shape()...)
		return g.ConstShared(t, n.Site())
	case n.Op() == graph.OpVariable:
		return g.Fail(fmt.Errorf("%w: a Variable inside a body", graph.ErrInvalid))
	case n.Op() == ops.OpCast && n.DType() == from:
		return ops.Cast(ins[0], to)
	case isControl(n):
		return cv.convertControl(g, n, ins)
	case n.Op() == ops.OpTupleGet:
		ta := n.Attr().(opdef.TupleAttr)
		outs := controlAttr(ins[0]).Outs
		offs, _ := opdef.TupleLayout(outs)
		ta.Offset, ta.DType = offs[ta.Index], outs[ta.Index].DType
		return rebuildWith(g, n, ta, ins)
	case n.DType() == from && opdef.Lookup(n.Op()) != nil && opdef.Lookup(n.Op()).Kind == opdef.Random:
		ra := n.Attr().(opdef.RandomAttr)
		ra.DType = to
		return rebuildWith(g, n, ra, ins)
	}
	return opdef.Rebuild(g, n, ins)
}

// verifyGraph runs graph.Verify on the graph being compiled and on the
// bodies of its control-flow nodes, recursively (LOOM_VERIFY).
func (c *compilation) verifyGraph() error {
	return verifyWithBodies(c.g)
}

func verifyWithBodies(g *graph.Graph) error {
	if err := graph.Verify(g); err != nil {
		return err
	}
	for _, n := range g.Nodes() {
		a := controlAttr(n)
		if a == nil {
			continue
		}
		for k, b := range a.Bodies {
			if err := verifyWithBodies(b.Graph); err != nil {
				return fmt.Errorf("the %s of %s: %w", BodyName(a.Kind, k), describeControl(n), err)
			}
		}
	}
	return nil
}

// bodyArenas is the memory of the arenas of p's control-flow bodies
// (each program instance has one of each, nested bodies included), and
// their constants, for the memory check.
func bodyArenas(p *Plan) int64 {
	var total int64
	for _, bodies := range p.Bodies {
		for _, b := range bodies {
			total += b.ArenaBytes + bodyArenas(b.Plan)
			for _, v := range b.Consts {
				total += b.Values[v].Bytes
			}
		}
	}
	return total
}

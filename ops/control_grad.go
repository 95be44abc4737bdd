package ops

import (
	"fmt"
	"slices"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The gradient rules of Cond, While and Scan. Each differentiates the
// op's bodies with opdef.VJP (package autodiff's reverse sweep) and
// builds its result with the control-flow builders, so the gradient is
// itself made of Cond and Scan nodes and can be differentiated again
// (higher order).
//
// A body is a sealed graph: a rule never builds in it. It copies the
// body's nodes (replay) into a new body, or into a scratch graph where it
// studies the body's VJP, with each parameter replaced by whatever stands
// for it there. Parameters are matched by position (parameter i stands
// for operand i after Cond's predicate), never by the outer nodes, so the
// rules work the same on bodies nested at any depth.

// gradable reports whether a gradient flows through values of dtype dt
// (autodiff's rule: the compute floats and the complex types).
func gradable(dt tensor.DType) bool {
	return (dt.IsFloat() && !dt.IsStorage()) || dt.IsComplex()
}

// replay builds in g a copy of the nodes that roots depend on, stopping
// at the nodes m maps (to nodes of g or of graphs around it), and returns
// the copies of roots. The copies keep their op, attribute and call site;
// m grows with every node copied. An Input or Variable that m does not
// map is an error: a body's parameters must all be given.
func replay(g *graph.Graph, m map[*graph.Node]*graph.Node, roots []*graph.Node) ([]*graph.Node, error) {
	var todo []*graph.Node
	seen := map[*graph.Node]bool{}
	stack := slices.Clone(roots)
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[n] || m[n] != nil {
			continue
		}
		seen[n] = true
		todo = append(todo, n)
		stack = append(stack, n.Inputs()...)
	}
	// IDs are a topological order within one graph.
	slices.SortFunc(todo, func(a, b *graph.Node) int { return a.ID() - b.ID() })
	for _, n := range todo {
		switch n.Op() {
		case graph.OpInput, graph.OpVariable:
			return nil, fmt.Errorf("%s (%s built at %s) is read by a body but is not one of its parameters", n.Op(), n.Type(), n.Site())
		}
		ins := make([]*graph.Node, len(n.Inputs()))
		for i, in := range n.Inputs() {
			ins[i] = m[in]
		}
		c := opdef.Rebuild(g, n, ins)
		if !c.Valid() {
			return nil, c.Err()
		}
		m[n] = c
	}
	out := make([]*graph.Node, len(roots))
	for i, r := range roots {
		out[i] = m[r]
	}
	return out, nil
}

// gradFail records err on n's graph (naming the op and its call site)
// and returns an invalid cotangent for each of n's operands.
func gradFail(n *graph.Node, op, format string, args ...any) []*graph.Node {
	msg := fmt.Sprintf(format, args...)
	bad := fail(graph.ErrInvalid, op+" gradient", n.Inputs(), "%s (the %s built at %s)", msg, op, n.Site())
	out := make([]*graph.Node, len(n.Inputs()))
	for i := range out {
		out[i] = bad
	}
	return out
}

// firstInvalid returns the first invalid node of ns, or nil.
func firstInvalid(ns []*graph.Node) *graph.Node {
	for _, n := range ns {
		if !n.Valid() {
			return n
		}
	}
	return nil
}

// condGrad: Cond(pred, then', else', operands..., cotangents...), where
// each branch' recomputes its branch and returns the VJP of its results
// with respect to the operands that need a cotangent.
func condGrad(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node {
	a := n.Attr().(*opdef.ControlAttr)
	ins := n.Inputs()
	operands := ins[1:]
	var want []int // operand indices (after pred) that get a cotangent
	for i, o := range operands {
		if need[1+i] && gradable(o.DType()) {
			want = append(want, i)
		}
	}
	var ctIdx []int
	var cts []*graph.Node
	for j, d := range dys {
		if d != nil {
			ctIdx = append(ctIdx, j)
			cts = append(cts, d)
		}
	}
	out := make([]*graph.Node, len(ins))
	if len(want) == 0 || len(cts) == 0 {
		return out
	}
	branch := func(b *opdef.Body) func([]*graph.Node) []*graph.Node {
		return func(p []*graph.Node) []*graph.Node {
			sub := p[0].Graph()
			m := make(map[*graph.Node]*graph.Node, len(b.Params))
			for i, q := range b.Params {
				m[q] = p[i]
			}
			res, err := replay(sub, m, b.Results)
			if err != nil {
				return []*graph.Node{sub.Fail(err)}
			}
			ys := make([]*graph.Node, len(ctIdx))
			for k, j := range ctIdx {
				ys[k] = res[j]
			}
			xs := make([]*graph.Node, len(want))
			for k, i := range want {
				xs[k] = p[i]
			}
			return opdef.VJP(ys, xs, p[len(operands):])
		}
	}
	g := n.Graph()
	gs := Cond(ins[0], branch(a.Bodies[0]), branch(a.Bodies[1]), append(slices.Clone(operands), cts...)...)
	if err := g.Err(); err != nil {
		return repeatNode(g.Fail(err), len(ins))
	}
	if bad := firstInvalid(gs); bad != nil {
		return repeatNode(bad, len(ins))
	}
	for k, i := range want {
		out[1+i] = gs[k]
	}
	return out
}

func repeatNode(n *graph.Node, k int) []*graph.Node {
	out := make([]*graph.Node, k)
	for i := range out {
		out[i] = n
	}
	return out
}

// whileGrad differentiates a While with a bound as the equivalent Scan of
// MaxTrips steps with an extra bool carry "active":
//
//	go = active && cond(c); c = Cond(go, body, identity)(c); active = go
//
// whose gradient is scanGrad's. A While without a bound is not
// differentiable.
func whileGrad(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node {
	a := n.Attr().(*opdef.ControlAttr)
	if a.MaxTrips <= 0 {
		return gradFail(n, "While", "While without a bound is not differentiable: use ops.WhileMax")
	}
	ins := n.Inputs()
	nc := a.Carries
	caps := ins[nc:]
	condB, bodyB := a.Bodies[0], a.Bodies[1]
	var buildErr error
	step := func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
		sub := c[0].Graph()
		capP := make([]*graph.Node, len(caps))
		for k, cp := range caps {
			capP[k] = sub.Capture(cp)
		}
		active, carry := c[0], c[1:]
		m := map[*graph.Node]*graph.Node{}
		for i, p := range condB.Params {
			if i < nc {
				m[p] = carry[i]
			} else {
				m[p] = capP[i-nc]
			}
		}
		p, err := replay(sub, m, condB.Results)
		if err != nil {
			buildErr = err
			return c, nil
		}
		run := And(active, p[0])
		then := func(xs []*graph.Node) []*graph.Node {
			mb := map[*graph.Node]*graph.Node{}
			for i, q := range bodyB.Params {
				mb[q] = xs[i]
			}
			r, err := replay(xs[0].Graph(), mb, bodyB.Results)
			if err != nil {
				buildErr = err
				return xs[:nc]
			}
			return r
		}
		keep := func(xs []*graph.Node) []*graph.Node { return xs[:nc] }
		next := Cond(run, then, keep, append(slices.Clone(carry), capP...)...)
		return append([]*graph.Node{run}, next...), nil
	}
	g := n.Graph()
	on, err := tensor.FromFloat64s(tensor.Bool, []float64{1}, []int{}...)
	if err != nil {
		return gradFail(n, "While", "%v", err)
	}
	init := append([]*graph.Node{g.Const(on)}, ins[:nc]...)
	outs, _ := Scan(step, init, nil, a.MaxTrips, func(sa *opdef.ControlAttr) { sa.Remat = a.Remat })
	if buildErr != nil {
		return gradFail(n, "While", "%v", buildErr)
	}
	if err := g.Err(); err != nil {
		return repeatNode(g.Fail(err), len(ins))
	}
	if bad := firstInvalid(outs); bad != nil {
		return repeatNode(bad, len(ins))
	}
	sn := outs[0].Input(0)
	if len(sn.Inputs()) != len(ins)+1 || !slices.Equal(sn.Inputs()[1:], ins) {
		return gradFail(n, "While", "internal: the bounded Scan's operands differ from the While's")
	}
	sdys := append([]*graph.Node{nil}, dys...)
	sneed := append([]bool{false}, need...)
	gs := scanGrad(sn, sdys, sneed)
	return gs[1:]
}

// scanGrad: a reverse Scan over saved per-step residuals.
//
// The rule copies the body into a scratch graph, takes its VJP there and
// sorts the forward values the VJP reads: a step's x is scanned again,
// a capture is captured again, a value that depends on neither the
// carries nor the xs (only captures and constants) is recomputed in the
// backward body (the compiler hoists it out of the loop), and the rest
// are residuals, saved at each step as extra ys of an extended forward
// Scan: the same operands and first results as n, its attribute
// Extending n's, so the compiler computes both once. With Remat the
// residuals are the step's incoming carries only, and the backward body
// recomputes the step from them.
//
// The backward Scan runs the other way with carries (the carries'
// cotangents, the captures' accumulated cotangents) over (the ys'
// cotangents, the residuals, the xs), and its ys are the xs' cotangents.
// Integer and bool carries get no cotangent.
func scanGrad(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node {
	a := n.Attr().(*opdef.ControlAttr)
	ins := n.Inputs()
	nc, nx := a.Carries, a.Xs
	caps := ins[nc+nx:]
	body := a.Bodies[0]
	g := n.Graph()
	out := make([]*graph.Node, len(ins))

	// What gets a cotangent: every float carry (its cotangent runs
	// through the loop), the xs and captures asked for.
	var fc, wx, wcap []int
	for i := range nc {
		if gradable(ins[i].DType()) {
			fc = append(fc, i)
		}
	}
	for k := range nx {
		if i := nc + k; need[i] && gradable(ins[i].DType()) {
			wx = append(wx, k)
		}
	}
	for k := range caps {
		if i := nc + nx + k; need[i] && gradable(ins[i].DType()) {
			wcap = append(wcap, k)
		}
	}
	var cy []int // ys with a cotangent
	for j := nc; j < len(a.Outs); j++ {
		if dys[j] != nil && gradable(a.Outs[j].DType) {
			cy = append(cy, j-nc)
		}
	}
	wantCarry := false
	for _, i := range fc {
		wantCarry = wantCarry || need[i]
	}
	if len(wx)+len(wcap) == 0 && !wantCarry {
		return out
	}
	anyCt := len(cy) > 0
	for _, i := range fc {
		anyCt = anyCt || dys[i] != nil
	}
	if !anyCt {
		return out
	}

	// The scratch graph: parameters, cotangents, the body's copy, its VJP.
	s := graph.New()
	sp := make([]*graph.Node, len(body.Params))
	m := map[*graph.Node]*graph.Node{}
	for i, p := range body.Params {
		sp[i] = s.Input(fmt.Sprintf("p%d", i), p.DType(), p.Shape()...)
		m[p] = sp[i]
	}
	ctC := make([]*graph.Node, len(fc))
	for k, i := range fc {
		ctC[k] = s.Input(fmt.Sprintf("ctc%d", i), ins[i].DType(), ins[i].Shape()...)
	}
	ctY := make([]*graph.Node, len(cy))
	for k, j := range cy {
		t := body.Results[nc+j]
		ctY[k] = s.Input(fmt.Sprintf("cty%d", j), t.DType(), t.Shape()...)
	}
	res, err := replay(s, m, body.Results)
	if err != nil {
		return gradFail(n, "Scan", "%v", err)
	}
	fwdEnd := s.Len()
	var vys, vcts, vxs []*graph.Node
	for k, i := range fc {
		vys, vcts = append(vys, res[i]), append(vcts, ctC[k])
	}
	for k, j := range cy {
		vys, vcts = append(vys, res[nc+j]), append(vcts, ctY[k])
	}
	for _, i := range fc {
		vxs = append(vxs, sp[i])
	}
	for _, k := range wx {
		vxs = append(vxs, sp[nc+k])
	}
	for _, k := range wcap {
		vxs = append(vxs, sp[nc+nx+k])
	}
	grads := opdef.VJP(vys, vxs, vcts)
	if err := s.Err(); err != nil {
		return repeatNode(g.Fail(err), len(ins))
	}
	if bad := firstInvalid(grads); bad != nil {
		return repeatNode(g.Fail(bad.Err()), len(ins))
	}

	// The forward values the VJP reads.
	param := map[*graph.Node]int{}
	for i, p := range sp {
		param[p] = i
	}
	ref := map[*graph.Node]bool{}
	seen := map[*graph.Node]bool{}
	stack := slices.Clone(grads)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		if v.ID() < fwdEnd {
			ref[v] = true
			continue
		}
		stack = append(stack, v.Inputs()...)
	}
	// stepDep: depends on a carry or an x of the step.
	nodes := s.Nodes()
	stepDep := make([]bool, fwdEnd)
	for id := range fwdEnd {
		v := nodes[id]
		if i, ok := param[v]; ok {
			stepDep[id] = i < nc+nx
			continue
		}
		for _, in := range v.Inputs() {
			stepDep[id] = stepDep[id] || stepDep[in.ID()]
		}
	}
	var resid []*graph.Node // scratch nodes saved at each step
	if a.Remat {
		// The carries the referenced values are computed from.
		keep := map[*graph.Node]bool{}
		var st []*graph.Node
		for v := range ref {
			if stepDep[v.ID()] {
				st = append(st, v)
			}
		}
		vis := map[*graph.Node]bool{}
		for len(st) > 0 {
			v := st[len(st)-1]
			st = st[:len(st)-1]
			if vis[v] {
				continue
			}
			vis[v] = true
			if i, ok := param[v]; ok {
				if i < nc {
					keep[v] = true
				}
				continue
			}
			for _, in := range v.Inputs() {
				if stepDep[in.ID()] {
					st = append(st, in)
				}
			}
		}
		for i := range nc {
			if keep[sp[i]] {
				resid = append(resid, sp[i])
			}
		}
	} else {
		for v := range ref {
			if !stepDep[v.ID()] {
				continue
			}
			if i, ok := param[v]; ok && i >= nc {
				continue // an x: scanned again
			}
			resid = append(resid, v)
		}
		slices.SortFunc(resid, func(a, b *graph.Node) int { return a.ID() - b.ID() })
	}

	// The extended forward Scan: n's results, then the residuals stacked.
	orig := make([]*graph.Node, len(body.Results))
	copy(orig, res)
	var fwdErr error
	fwd := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		p := append(slices.Clone(c), x...)
		sub := p[0].Graph()
		fm := map[*graph.Node]*graph.Node{}
		for i := range nc + nx {
			fm[sp[i]] = p[i]
		}
		for k, cp := range caps { // in n's order: the same operands
			fm[sp[nc+nx+k]] = sub.Capture(cp)
		}
		r, err := replay(sub, fm, append(slices.Clone(orig), resid...))
		if err != nil {
			fwdErr = err
			return c, nil
		}
		return r[:nc], r[nc:]
	}
	var stacks []*graph.Node
	if len(resid) > 0 {
		_, ys := Scan(fwd, ins[:nc], ins[nc:nc+nx], a.Length, func(e *opdef.ControlAttr) {
			e.Reverse, e.Remat, e.Extends = a.Reverse, a.Remat, a
		})
		if fwdErr != nil {
			return gradFail(n, "Scan", "%v", fwdErr)
		}
		if err := g.Err(); err != nil {
			return repeatNode(g.Fail(err), len(ins))
		}
		if len(ys) < len(resid) {
			return gradFail(n, "Scan", "internal: the extended Scan has %d ys for %d residuals", len(ys), len(resid))
		}
		stacks = ys[len(ys)-len(resid):]
		if bad := firstInvalid(stacks); bad != nil {
			return repeatNode(bad, len(ins))
		}
		if e := stacks[0].Input(0); !slices.Equal(e.Inputs(), ins) {
			return gradFail(n, "Scan", "internal: the extended Scan's operands differ from the Scan's")
		}
	}

	// The backward Scan.
	init := make([]*graph.Node, 0, len(fc)+len(wcap))
	for _, i := range fc {
		d := dys[i]
		if d == nil {
			d = Full(g, ins[i].DType(), 0, ins[i].Shape()...)
		}
		init = append(init, d)
	}
	for _, k := range wcap {
		c := caps[k]
		init = append(init, Full(g, c.DType(), 0, c.Shape()...))
	}
	bxs := make([]*graph.Node, 0, len(cy)+len(stacks)+nx)
	for _, j := range cy {
		bxs = append(bxs, dys[nc+j])
	}
	bxs = append(bxs, stacks...)
	bxs = append(bxs, ins[nc:nc+nx]...)
	var bwdErr error
	bwd := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		p := append(slices.Clone(c), x...)
		sub := p[0].Graph()
		bm := map[*graph.Node]*graph.Node{}
		for k := range fc {
			bm[ctC[k]] = c[k]
		}
		acc := c[len(fc):]
		for k := range cy {
			bm[ctY[k]] = x[k]
		}
		for k, r := range resid {
			bm[r] = x[len(cy)+k]
		}
		for k := range nx {
			bm[sp[nc+k]] = x[len(cy)+len(resid)+k]
		}
		for k, cp := range caps {
			bm[sp[nc+nx+k]] = sub.Capture(cp)
		}
		r, err := replay(sub, bm, grads)
		if err != nil {
			bwdErr = err
			return c, nil
		}
		next := slices.Clone(r[:len(fc)])
		for k := range wcap {
			next = append(next, Add(acc[k], r[len(fc)+len(wx)+k]))
		}
		return next, r[len(fc) : len(fc)+len(wx)]
	}
	if len(init)+len(bxs) == 0 {
		return out
	}
	carry, cxs := Scan(bwd, init, bxs, a.Length, func(e *opdef.ControlAttr) {
		e.Reverse, e.Remat = !a.Reverse, a.Remat
	})
	if bwdErr != nil {
		return gradFail(n, "Scan", "%v", bwdErr)
	}
	if err := g.Err(); err != nil {
		return repeatNode(g.Fail(err), len(ins))
	}
	if bad := firstInvalid(append(slices.Clone(carry), cxs...)); bad != nil {
		return repeatNode(bad, len(ins))
	}
	for k, i := range fc {
		if need[i] {
			out[i] = carry[k]
		}
	}
	for k, i := range wcap {
		out[nc+nx+i] = carry[len(fc)+k]
	}
	for k, i := range wx {
		out[nc+i] = cxs[k]
	}
	return out
}

package exec

import (
	"sort"
	"strconv"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// fusible reports whether n can run inside a fused group: an elementwise
// op (the compiler's Fused groups are built from these).
func fusible(n *graph.Node) bool {
	d := opdef.Lookup(n.Op())
	return d != nil && d.Kind == opdef.Elementwise && n.Op() != ops.OpCustomGrad
}

// fusesReduce reports whether n may end a fused group as its trailing
// reduction (its declaration says so: Sum, Prod, Max, Min).
func fusesReduce(n *graph.Node) bool {
	d := opdef.Lookup(n.Op())
	return d != nil && d.FuseReduce
}

// group is a set of nodes that becomes one Fused node.
type group struct {
	root    *graph.Node          // the node whose value the group produces
	members map[*graph.Node]bool // elementwise ops computed inside
	bcasts  map[*graph.Node]bool // BroadcastTo nodes read through
	reduce  *graph.Node          // trailing reduction (== root) or nil
	domain  tensor.Shape

	attr     *opdef.FusedAttr // the program supported() last checked
	operands []*graph.Node
}

// fuser is the state of one fuse pass.
type fuser struct {
	be    Backend
	uses  map[*graph.Node]int
	taken map[*graph.Node]bool // members and roots of accepted groups
	// alone caches whether the backend accepts a node as the only op of
	// a fused program; a node it refuses (refused) never joins a group.
	alone   map[*graph.Node]bool
	refused map[*graph.Node]bool
	// suspect marks the members a split left over: the backend refused a
	// group containing them for a reason no single op explains (a limit
	// on the program's size, say), so their own groups are searched from
	// small to large instead of being tried whole first.
	suspect map[*graph.Node]bool
}

// fuse finds maximal groups of elementwise ops with one output (every
// member's other uses are inside the group), over one iteration domain
// (members all have the root's shape; smaller operands are read with
// broadcasting, explicit BroadcastTo nodes included), optionally ending in
// a reduction whose declaration has FuseReduce, and replaces each by a
// Fused node.
//
// Groups are grown from their root (the nodes are visited last to first),
// each node once per attempt, and the backend is asked once whether it
// can run each group. When it refuses, the group is split (see form), so
// that the ops it can run still fuse.
func fuse(c *compilation) error {
	f := &fuser{
		be: c.be, uses: c.consumers(), taken: map[*graph.Node]bool{},
		alone: map[*graph.Node]bool{}, refused: map[*graph.Node]bool{}, suspect: map[*graph.Node]bool{},
	}
	nodes := c.g.Nodes()
	var groups []*group
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		if f.taken[n] {
			continue
		}
		gr := f.form(n)
		if gr == nil {
			continue
		}
		for m := range gr.members {
			f.taken[m] = true
		}
		f.taken[gr.root] = true
		groups = append(groups, gr)
	}
	if len(groups) == 0 {
		return nil
	}
	byRoot := map[*graph.Node]*group{}
	for _, gr := range groups {
		byRoot[gr.root] = gr
	}
	return c.rewrite(func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, visit func(*graph.Node) *graph.Node) *graph.Node {
		gr := byRoot[n]
		if gr == nil {
			return nil
		}
		attr, operands := gr.attr, gr.operands // built by supported
		newOps := make([]*graph.Node, len(operands))
		for i, o := range operands {
			newOps[i] = visit(o)
		}
		if f := opdef.Fused(attr, newOps...); f.Valid() {
			return f
		}
		return nil
	})
}

// form returns the group rooted at n that the backend accepts, or nil.
// The maximal group is tried first. When the backend refuses it:
//   - a group ending in a reduction is tried without it (the reduction
//     then runs on its own);
//   - the members are tried one by one, each as the only op of a fused
//     program; those refused are never fused, and the group is grown
//     again without them;
//   - when every member passes alone, the largest accepted group of the
//     members nearest the root is searched for (search); the members left
//     out form their own groups later.
//
// Each step is linear in the group's size, so a chain of n ops costs O(n)
// when the backend accepts it, O(n log n) when it must be split.
func (f *fuser) form(n *graph.Node) *group {
	start := n
	if !fusible(n) && fusesReduce(n) {
		start = n.Input(0)
	}
	if f.suspect[start] {
		return f.search(start)
	}
	for {
		gr := f.grow(n, 0)
		if gr == nil || gr.size() < 2 {
			return nil
		}
		if f.supported(gr) {
			return gr
		}
		if gr.reduce != nil {
			el := gr.withoutReduce()
			if el.size() >= 2 && f.supported(el) {
				return el
			}
		}
		if f.refuseMembers(gr) {
			continue
		}
		for m := range gr.members {
			f.suspect[m] = true
		}
		if gr.reduce != nil {
			gr = gr.withoutReduce()
		}
		return f.search(gr.root)
	}
}

// search returns the largest group of the k members nearest root r (by
// node order) that the backend accepts, for k found by doubling then
// bisecting, without a reduction; nil if not even two members are
// accepted together. Its cost is O(k log k) for the k found.
func (f *fuser) search(r *graph.Node) *group {
	if !fusible(r) {
		return nil
	}
	var best *group
	lo, hi := 1, 0 // sizes known accepted (lo) and refused (hi; 0: none yet)
	for k := 2; hi == 0; k *= 2 {
		gr := f.grow(r, k)
		if gr == nil || gr.size() < 2 {
			return best
		}
		if gr.size() == lo {
			return best // nothing more joins: the group is the one accepted
		}
		if !f.supported(gr) {
			hi = gr.size()
			break
		}
		best, lo = gr, gr.size()
		if gr.size() < k {
			return best // the whole group is accepted
		}
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if gr := f.grow(r, mid); gr != nil && f.supported(gr) {
			best, lo = gr, mid
		} else {
			hi = mid
		}
	}
	return best
}

// refuseMembers asks the backend about each member of gr alone (once per
// node) and marks those it refuses; it reports whether it marked any.
func (f *fuser) refuseMembers(gr *group) bool {
	marked := false
	for m := range gr.members {
		ok, seen := f.alone[m]
		if !seen {
			one := &group{root: m, members: map[*graph.Node]bool{m: true}, bcasts: map[*graph.Node]bool{}, domain: gr.domain}
			ok = f.supported(one)
			f.alone[m] = ok
		}
		if !ok {
			f.refused[m] = true
			marked = true
		}
	}
	return marked
}

// joinable reports whether p may be a member of a new group.
func (f *fuser) joinable(p *graph.Node) bool {
	return fusible(p) && !f.taken[p] && !f.refused[p]
}

// grow builds the group rooted at n: n and the operands whose every use is
// inside the group, until no more can join (a least fixed point: a node
// joins once the group holds all its consumers). When n is a reduction
// the group starts at its operand. limit > 0 bounds the members: the
// group is then the limit members nearest the root in node order (nodes
// join in decreasing order, and a member's consumers come after it, so
// these are exactly the first members of the maximal group). It returns
// nil when n cannot root a group. Every member's operands are visited
// once.
func (f *fuser) grow(n *graph.Node, limit int) *group {
	var gr *group
	switch {
	case f.joinable(n):
		gr = &group{root: n, domain: n.Shape()}
	case fusesReduce(n):
		e := n.Input(0)
		if !f.joinable(e) || f.uses[e] != 1 {
			return nil
		}
		gr = &group{root: n, reduce: n, domain: e.Shape()}
		n = e
	default:
		return nil
	}
	gr.members = map[*graph.Node]bool{}
	gr.bcasts = map[*graph.Node]bool{}
	inside := map[*graph.Node]int{} // uses of each operand by members
	ready := nodeHeap{n}            // nodes whose uses are all inside, latest first
	for len(ready) > 0 && (limit <= 0 || len(gr.members) < limit) {
		m := ready.pop()
		gr.members[m] = true
		for _, p := range m.Inputs() {
			inside[p]++
			if inside[p] != f.uses[p] || gr.members[p] || gr.bcasts[p] || f.taken[p] || !p.Shape().Equal(gr.domain) {
				continue
			}
			switch {
			case f.joinable(p):
				ready.push(p)
			case p.Op() == ops.OpBroadcastTo:
				gr.bcasts[p] = true
			}
		}
	}
	return gr
}

// withoutReduce returns the group's elementwise part, rooted at the
// reduction's operand.
func (gr *group) withoutReduce() *group {
	return &group{root: gr.reduce.Input(0), members: gr.members, bcasts: gr.bcasts, domain: gr.domain}
}

// nodeHeap is a max-heap of nodes by ID.
type nodeHeap []*graph.Node

func (h *nodeHeap) push(n *graph.Node) {
	*h = append(*h, n)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].ID() >= s[i].ID() {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *nodeHeap) pop() *graph.Node {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && s[c+1].ID() > s[c].ID() {
			c++
		}
		if s[i].ID() >= s[c].ID() {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// supported asks the backend whether it can run the group, on a scratch
// graph with one Input per operand.
func (f *fuser) supported(gr *group) bool {
	attr, operands := gr.program()
	gr.attr, gr.operands = attr, operands
	g := graph.New()
	ins := make([]*graph.Node, len(operands))
	for i, o := range operands {
		// Add with the operand's site: Input would look up its caller's.
		ins[i] = g.Add(graph.Spec{Op: graph.OpInput, DType: o.DType(), Shape: o.Shape(), Name: "in" + strconv.Itoa(i), Site: o.Site()})
	}
	n := opdef.Fused(attr, ins...)
	return n.Valid() && f.be.Supports(n) == nil
}

func (gr *group) size() int {
	n := len(gr.members)
	if gr.reduce != nil {
		n++
	}
	return n
}

// program turns the group into a FusedAttr and its operand list (nodes of
// the old graph).
func (gr *group) program() (*opdef.FusedAttr, []*graph.Node) {
	members := make([]*graph.Node, 0, len(gr.members))
	for m := range gr.members {
		members = append(members, m)
	}
	sort.Slice(members, func(i, j int) bool { return members[i].ID() < members[j].ID() })
	index := map[*graph.Node]int{}
	for i, m := range members {
		index[m] = i
	}
	var operands []*graph.Node
	operandIdx := map[*graph.Node]int{}
	ref := func(p *graph.Node) int {
		if i, ok := index[p]; ok {
			return i
		}
		if gr.bcasts[p] {
			p = p.Input(0)
		}
		k, ok := operandIdx[p]
		if !ok {
			k = len(operands)
			operandIdx[p] = k
			operands = append(operands, p)
		}
		return -k - 1
	}
	attr := &opdef.FusedAttr{Domain: gr.domain.Clone()}
	for _, m := range members {
		args := make([]int, len(m.Inputs()))
		for k, p := range m.Inputs() {
			args[k] = ref(p)
		}
		attr.Ops = append(attr.Ops, opdef.FusedOp{Op: m.Op(), Attr: m.Attr(), Args: args, DType: m.DType()})
		attr.Nodes = append(attr.Nodes, m.ID())
		attr.Sites = append(attr.Sites, m.Site())
	}
	if r := gr.reduce; r != nil {
		a := r.Attr().(opdef.AxesAttr)
		attr.Reduce = &opdef.FusedReduce{Op: r.Op(), Axes: append([]int(nil), a.Axes...), KeepDims: a.KeepDims}
		attr.Nodes = append(attr.Nodes, r.ID())
		attr.Sites = append(attr.Sites, r.Site())
	}
	return attr, operands
}

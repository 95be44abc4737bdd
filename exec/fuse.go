package exec

import (
	"fmt"
	"sort"

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

// fuse finds maximal groups of elementwise ops with one output (every
// member's other uses are inside the group), over one iteration domain
// (members all have the root's shape; smaller operands are read with
// broadcasting, explicit BroadcastTo nodes included), optionally ending in
// a Sum, Max or Min, and replaces each by a Fused node. Groups the backend
// does not support are left unfused.
func fuse(c *compilation) error {
	uses := c.consumers()
	nodes := c.g.Nodes()
	taken := map[*graph.Node]bool{}
	var groups []*group
	for i := len(nodes) - 1; i >= 0; i-- {
		n := nodes[i]
		if taken[n] {
			continue
		}
		var gr *group
		switch {
		case fusible(n):
			gr = &group{root: n, members: map[*graph.Node]bool{n: true}, domain: n.Shape()}
		case n.Op() == ops.OpSum || n.Op() == ops.OpMax || n.Op() == ops.OpMin:
			e := n.Input(0)
			if !fusible(e) || uses[e] != 1 || taken[e] {
				continue
			}
			gr = &group{root: n, reduce: n, members: map[*graph.Node]bool{e: true}, domain: e.Shape()}
		default:
			continue
		}
		gr.grow(uses, taken)
		ok := gr.supported(c.be)
		if !ok && gr.reduce != nil {
			// Keep the elementwise part; the reduction runs on its own.
			gr.root, gr.reduce = n.Input(0), nil
			ok = gr.supported(c.be)
		}
		if !ok || gr.size() < 2 {
			continue
		}
		for m := range gr.members {
			taken[m] = true
		}
		taken[gr.root] = true
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

// supported asks the backend whether it can run the group, on a scratch
// graph with one Input per operand.
func (gr *group) supported(be Backend) bool {
	attr, operands := gr.program()
	gr.attr, gr.operands = attr, operands
	g := graph.New()
	ins := make([]*graph.Node, len(operands))
	for i, o := range operands {
		ins[i] = g.Input(fmt.Sprint("in", i), o.DType(), o.Shape()...)
	}
	f := opdef.Fused(attr, ins...)
	return f.Valid() && be.Supports(f) == nil
}

func (gr *group) size() int {
	n := len(gr.members)
	if gr.reduce != nil {
		n++
	}
	return n
}

// grow absorbs operands whose every use is inside the group, until no more
// can join.
func (gr *group) grow(uses map[*graph.Node]int, taken map[*graph.Node]bool) {
	gr.bcasts = map[*graph.Node]bool{}
	for changed := true; changed; {
		changed = false
		inside := map[*graph.Node]int{}
		for m := range gr.members {
			for _, p := range m.Inputs() {
				inside[p]++
			}
		}
		for p, k := range inside {
			if gr.members[p] || gr.bcasts[p] || taken[p] || k != uses[p] {
				continue
			}
			switch {
			case fusible(p) && p.Shape().Equal(gr.domain):
				gr.members[p] = true
				changed = true
			case p.Op() == ops.OpBroadcastTo && p.Shape().Equal(gr.domain):
				gr.bcasts[p] = true
			}
		}
	}
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

package exec

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
)

// rewriteFunc returns the replacement of node n (of the old graph) in the
// new graph ng, given n's operands already in ng; nil means "rebuild n
// unchanged". visit maps any other node of the old graph into ng.
type rewriteFunc func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, visit func(*graph.Node) *graph.Node) *graph.Node

// roots are the nodes the program must compute: outputs and update values.
func (c *compilation) roots() []*graph.Node {
	r := append([]*graph.Node(nil), c.gOuts...)
	return append(r, c.gNext...)
}

// rewrite rebuilds the graph being compiled into a fresh one, visiting the
// nodes the roots need in depth-first post-order (so the new graph's
// creation order is a depth-first topological order, which keeps few
// values live). Every Input and Variable is kept, used or not, so the
// program's interface does not change. f sees every other node, Consts
// included. Nodes f builds but does not use are dropped.
func (c *compilation) rewrite(f rewriteFunc) error { return c.rewriteLeaves(nil, f) }

// leafFunc rebuilds an Input or Variable in ng: stored is the new leaf
// (the program's interface), use is what its consumers read (the leaf
// itself, or say a Cast of it).
type leafFunc func(ng *graph.Graph, n *graph.Node) (stored, use *graph.Node)

func (c *compilation) rewriteLeaves(leaf leafFunc, f rewriteFunc) error {
	ng := graph.New()
	done := make(map[*graph.Node]*graph.Node, c.g.Len())
	origin := make(map[*graph.Node]*graph.Node, len(c.origin))
	for _, n := range c.g.Nodes() {
		if n.Op() == graph.OpInput || n.Op() == graph.OpVariable {
			stored, use := (*graph.Node)(nil), (*graph.Node)(nil)
			if leaf != nil {
				stored, use = leaf(ng, n)
			}
			if stored == nil {
				stored = opdef.Rebuild(ng, n, nil)
				use = stored
			}
			done[n] = use
			origin[stored] = c.origin[n]
		}
	}
	var visit func(n *graph.Node) *graph.Node
	visit = func(n *graph.Node) *graph.Node {
		if m, ok := done[n]; ok {
			return m
		}
		ins := make([]*graph.Node, len(n.Inputs()))
		for i, in := range n.Inputs() {
			ins[i] = visit(in)
		}
		var m *graph.Node
		if f != nil {
			m = f(ng, n, ins, visit)
		}
		if m == nil {
			m = opdef.Rebuild(ng, n, ins)
		}
		done[n] = m
		return m
	}
	outs := make([]*graph.Node, len(c.gOuts))
	for i, n := range c.gOuts {
		outs[i] = visit(n)
	}
	next := make([]*graph.Node, len(c.gNext))
	for i, n := range c.gNext {
		next[i] = visit(n)
	}
	if err := ng.Err(); err != nil {
		return err
	}
	c.g, c.gOuts, c.gNext, c.origin = ng, outs, next, origin
	if live := len(graph.Ancestors(c.roots()...)); live < c.g.Len()-c.leafCount() {
		return c.rewrite(nil) // drop what f built but did not use
	}
	return nil
}

// leafCount counts the Inputs and Variables that are not ancestors of the
// roots (they are kept regardless).
func (c *compilation) leafCount() int {
	live := map[*graph.Node]bool{}
	for _, n := range graph.Ancestors(c.roots()...) {
		live[n] = true
	}
	k := 0
	for _, n := range c.g.Nodes() {
		if (n.Op() == graph.OpInput || n.Op() == graph.OpVariable) && !live[n] {
			k++
		}
	}
	return k
}

// consumers counts the uses of every node of g by other nodes, plus one
// for each time it is an output or an update value.
func (c *compilation) consumers() map[*graph.Node]int {
	uses := make(map[*graph.Node]int, c.g.Len())
	for _, n := range c.g.Nodes() {
		for _, in := range n.Inputs() {
			uses[in]++
		}
	}
	for _, r := range c.roots() {
		uses[r]++
	}
	return uses
}

package ops

import "github.com/loomgraph/loom/graph"

// The gradient rules of Cond, While and Scan (stubs until written: a
// rule returning nil for every operand means no gradient flows).

func condGrad(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node {
	return notYet(n, "Cond")
}

func whileGrad(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node {
	return notYet(n, "While")
}

func scanGrad(n *graph.Node, dys []*graph.Node, need []bool) []*graph.Node {
	return notYet(n, "Scan")
}

func notYet(n *graph.Node, op string) []*graph.Node {
	bad := fail(graph.ErrInvalid, op+" gradient", []*graph.Node{n}, "not implemented yet")
	out := make([]*graph.Node, len(n.Inputs()))
	for i := range out {
		out[i] = bad
	}
	return out
}

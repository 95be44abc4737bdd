package graph

import (
	"fmt"

	"github.com/loomgraph/loom/tensor"
)

// Verify checks a graph's invariants: node IDs match positions; every input
// is a valid node of this graph with a smaller ID (so creation order is
// topological); every dtype and shape is valid; leaves carry a value of
// their type where they need one; every op is registered; and each op's
// checker agrees with the stored dtype and shape. The compiler runs it
// after every pass in tests.
func Verify(g *Graph) error {
	if g == nil {
		return fmt.Errorf("graph: Verify: nil graph")
	}
	for i, n := range g.nodes {
		if err := verifyNode(g, i, n); err != nil {
			return fmt.Errorf("graph: Verify: node %s: %w", n, err)
		}
	}
	return nil
}

func verifyNode(g *Graph, i int, n *Node) error {
	if n == nil {
		return fmt.Errorf("nil node at position %d", i)
	}
	if n.g != g {
		return fmt.Errorf("belongs to another graph")
	}
	if n.id != i {
		return fmt.Errorf("id %d at position %d", n.id, i)
	}
	if te := checkType(n.dtype, n.shape); te != nil {
		return fmt.Errorf("%w: %s", te.kind, te.msg)
	}
	info, ok := lookupOp(n.op)
	if !ok || n.op == OpInvalid {
		return fmt.Errorf("unregistered op %d", n.op)
	}
	for k, in := range n.inputs {
		switch {
		case in == nil:
			return fmt.Errorf("input %d is nil", k)
		case in.g != g:
			return fmt.Errorf("input %d belongs to another graph", k)
		case in.id >= n.id:
			return fmt.Errorf("input %d (%s) does not come before the node", k, in)
		case in.id >= len(g.nodes) || g.nodes[in.id] != in:
			return fmt.Errorf("input %d (%s) is not in the graph", k, in)
		}
	}
	switch n.op {
	case OpInput:
		if len(n.inputs) != 0 {
			return fmt.Errorf("an Input has operands")
		}
	case OpConst, OpVariable:
		if len(n.inputs) != 0 {
			return fmt.Errorf("a leaf has operands")
		}
		if n.value == nil {
			return fmt.Errorf("no value")
		}
		if n.value.DType() != n.dtype || !n.value.Shape().Equal(n.shape) {
			return fmt.Errorf("value %s does not match the node type %s", n.value.Type(), tensor.TypeString(n.dtype, n.shape))
		}
	}
	if info.Check != nil {
		if err := info.Check(n); err != nil {
			return err
		}
	}
	return nil
}

// Ancestors returns the nodes that roots depend on, roots included, in
// ascending ID order (a topological order). Nil or invalid roots are
// skipped.
func Ancestors(roots ...*Node) []*Node {
	if len(roots) == 0 {
		return nil
	}
	var g *Graph
	for _, r := range roots {
		if r.Valid() {
			g = r.g
			break
		}
	}
	if g == nil {
		return nil
	}
	mark := make([]bool, len(g.nodes))
	stack := make([]*Node, 0, len(roots))
	for _, r := range roots {
		if r.Valid() && r.g == g && !mark[r.id] {
			mark[r.id] = true
			stack = append(stack, r)
		}
	}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, in := range n.inputs {
			if !mark[in.id] {
				mark[in.id] = true
				stack = append(stack, in)
			}
		}
	}
	var out []*Node
	for i, m := range mark {
		if m {
			out = append(out, g.nodes[i])
		}
	}
	return out
}

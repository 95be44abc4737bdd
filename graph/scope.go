package graph

import "fmt"

// Bodies of control flow. A control-flow op (ops.Cond, ops.While,
// ops.Scan) builds each of its functions on a body: a Graph made with
// Sub, whose Inputs are the function's parameters. A body may read nodes
// of the graphs around it (a closure, as in JAX): the first time one is
// used as an operand, Add makes it a capture, an Input of the body
// standing for that outer node, and the op passes the outer node in as
// an operand. Nodes built only from outer nodes go to the outer graph, so
// they are computed once, not once per iteration. When its function has
// returned, the op seals the body: nothing more can be built in it, and
// its nodes cannot be used outside it.

// scope is what a body knows about the graphs around it.
type scope struct {
	parent   *Graph
	depth    int    // 0 for a top-level graph
	owner    string // "Scan (built at model.go:12)", for messages
	sealed   bool
	captured []*Node         // outer nodes (of parent), in capture order
	params   []*Node         // the body's Input for each captured node
	capIndex map[*Node]*Node // outer node -> param
}

// Sub returns a new, empty body graph inside g for the control-flow op
// described by owner ("While (built at model.go:12)"). Control-flow
// builders call it; users build bodies through them.
func (g *Graph) Sub(owner string) *Graph {
	if g == nil {
		return nil
	}
	s := New()
	s.parent, s.depth, s.owner = g, g.depth+1, owner
	s.capIndex = map[*Node]*Node{}
	return s
}

// Parent returns the graph a body is inside, or nil for a top-level
// graph.
func (g *Graph) Parent() *Graph {
	if g == nil {
		return nil
	}
	return g.parent
}

// Root returns the top-level graph around g (g itself when it is not a
// body).
func (g *Graph) Root() *Graph {
	for g != nil && g.parent != nil {
		g = g.parent
	}
	return g
}

// within reports whether o encloses g (o is g's parent, grandparent, ...).
func (g *Graph) within(o *Graph) bool {
	if g == nil || o == nil {
		return false
	}
	for p := g.parent; p != nil; p = p.parent {
		if p == o {
			return true
		}
	}
	return false
}

// live returns g, or when g is a finished body the nearest graph around
// it still being built: where an error about a misused body node belongs.
func (g *Graph) live() *Graph {
	for g.sealed && g.parent != nil {
		g = g.parent
	}
	return g
}

// Capture returns the parameter of body g that stands for n, a node of a
// graph enclosing g, making it on first use (and, for a node of a graph
// further out, capturing it in every body in between first). A node of g
// itself is returned as it is.
func (g *Graph) Capture(n *Node) *Node {
	if !n.Valid() {
		return n
	}
	if g == nil {
		return errNilGraph("Capture")
	}
	if n.g == g {
		return n
	}
	if !g.within(n.g) {
		return g.live().Fail(NewError(ErrInvalid, "Capture", []*Node{n}, "%s is not a node of a graph around this body", n))
	}
	outer := n
	if n.g != g.parent {
		// Capture it in the enclosing body first.
		if outer = g.parent.Capture(n); !outer.Valid() {
			return outer
		}
	}
	if p := g.capIndex[outer]; p != nil {
		return p
	}
	if g.err != nil {
		return &Node{g: g, op: OpInvalid, err: g.err}
	}
	name := fmt.Sprintf("capture%d", len(g.captured))
	for g.names[name] != nil {
		name += "'"
	}
	p := g.Add(Spec{Op: OpInput, DType: outer.dtype, Shape: outer.shape, Name: name, Site: outer.site})
	if !p.Valid() {
		return p
	}
	g.captured = append(g.captured, outer)
	g.params = append(g.params, p)
	g.capIndex[outer] = p
	return p
}

// Captures returns the outer nodes body g has captured (nodes of its
// parent graph) and the body's parameter for each, in capture order. The
// caller must not modify the slices.
func (g *Graph) Captures() (outer, params []*Node) {
	if g == nil {
		return nil, nil
	}
	return g.captured, g.params
}

// Seal finishes body g: later builders fail (a body's nodes are used only
// inside its function).
func (g *Graph) Seal() {
	if g != nil && g.parent != nil {
		g.sealed = true
	}
}

// Sealed reports whether g is a finished body.
func (g *Graph) Sealed() bool { return g != nil && g.sealed }

// Depth is 0 for a top-level graph, 1 for a body in it, and so on.
func (g *Graph) Depth() int {
	if g == nil {
		return 0
	}
	return g.depth
}

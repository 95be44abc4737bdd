package exec

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// ---- constfold ----

// foldLimit bounds the elements of a folded constant that is larger than
// its operands (a broadcast is cheaper to recompute than to store); an op
// without operands (Iota) folds up to this size.
const foldLimit = 64

func foldable(n *graph.Node, ins []*graph.Node) bool {
	d := opdef.Lookup(n.Op())
	if d == nil || !d.HasRef() || n.Op() == ops.OpCustomGrad || n.Op() == opdef.OpFused || d.Kind == opdef.Control || d.Kind == opdef.Collective {
		return false
	}
	size := 0
	for _, in := range ins {
		if in.Op() != graph.OpConst {
			return false
		}
		size += in.Shape().Size()
	}
	out := n.Shape().Size()
	return out <= max(size, foldLimit) && out <= 1<<22
}

// constfold replaces every node whose operands are all constants by its
// value, computed with the op's reference evaluator (internal/opdef): in
// float64 (int64 for integers, exactly) and rounded once to the node's
// dtype. Integer, bool and exactly rounded float results (the arithmetic
// ops, comparisons, movement) are the bits every backend computes; a
// folded transcendental (exp, log, tanh, ...) is the correctly rounded
// value, which may differ from what a backend's kernel computes at run
// time by that kernel's error bound (at most a few ulp: internal/simd
// documents the CPU's). Folding needs no backend, so a binary without the
// CPU backend folds too.
func constfold(c *compilation) error {
	var ferr error
	err := c.rewrite(func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, _ func(*graph.Node) *graph.Node) *graph.Node {
		if ferr != nil || !foldable(n, ins) {
			return nil
		}
		vals := make([]*opdef.Value, len(ins))
		for i, in := range ins {
			vals[i] = opdef.FromTensor(in.Value())
		}
		v, err := opdef.Evaluate(n, vals)
		var t *tensor.Tensor
		if err == nil {
			t, err = v.Tensor()
		}
		if err != nil {
			ferr = fmt.Errorf("folding %s (built at %s): %w", n, n.Site(), err)
			return nil
		}
		return ng.ConstShared(t, n.Site())
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// ---- cse ----

// cseKey identifies a node's value up to its attribute: op, dtype, shape
// and operands (sorted when the op's declaration says it is commutative);
// for a constant, dtype, shape and a hash of its bytes. Nodes with equal
// keys are the same value when their attributes are equal by value
// (opdef.EqualAttrs: not their String text), or, for constants, their
// bytes.
func cseKey(n *graph.Node, ins []*graph.Node) string {
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(n.Op()))
	b = append(b, byte(n.DType()))
	b = binary.AppendUvarint(b, uint64(len(n.Shape())))
	for _, d := range n.Shape() {
		b = binary.AppendUvarint(b, uint64(d))
	}
	if n.Op() == graph.OpConst {
		t := n.Value()
		if len(t.Bytes()) > 4096 {
			return "" // large constants are merged only when identical nodes
		}
		h := fnv.New64a()
		h.Write(t.Bytes())
		return string(binary.LittleEndian.AppendUint64(b, h.Sum64()))
	}
	ids := make([]int, len(ins))
	for i, in := range ins {
		ids[i] = in.ID()
	}
	if d := opdef.Lookup(n.Op()); d != nil && d.Commutative {
		slices.Sort(ids)
	}
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id))
	}
	return string(b)
}

// cse merges nodes that compute the same value. The attribute is part of
// the identity, so Softmax over different axes, or Softmax and LogSoftmax
// of one operand, stay distinct; nodes whose keys are equal are compared
// within their bucket.
func cse(c *compilation) error {
	seen := map[string][]*graph.Node{} // nodes of the new graph, by key
	return c.rewrite(func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, _ func(*graph.Node) *graph.Node) *graph.Node {
		key := cseKey(n, ins)
		if key == "" {
			return nil
		}
		for _, m := range seen[key] {
			if n.Op() == graph.OpConst {
				if equalBytes(m.Value().Bytes(), n.Value().Bytes()) {
					return m
				}
			} else if opdef.EqualAttrs(m.Attr(), n.Attr()) {
				return m
			}
		}
		m := opdef.Rebuild(ng, n, ins)
		seen[key] = append(seen[key], m)
		return m
	})
}

func equalBytes(a, b []byte) bool { return string(a) == string(b) }

// ---- precision ----

// precision converts float computation from the graph's float type to the
// one asked for: Inputs are cast on entry, Consts and Variables are held
// in the new type, Casts to the old type retarget, float random ops draw
// in the new type, and outputs are cast back to their declared types.
func precision(c *compilation) error {
	to := c.cfg.precision
	if to == 0 {
		return nil
	}
	from := tensor.Float32
	if to == tensor.Float32 {
		from = tensor.Float64
	}
	userTypes := make([]tensor.DType, len(c.gOuts))
	for i, n := range c.gOuts {
		userTypes[i] = n.DType()
	}
	convert := func(t *tensor.Tensor) *tensor.Tensor {
		out, _ := tensor.FromFloat64s(to, t.Float64s(), t.Shape()...)
		return out
	}
	cv := &converter{from: from, to: to}
	err := c.rewriteLeaves(func(ng *graph.Graph, n *graph.Node) (*graph.Node, *graph.Node) {
		if n.DType() != from {
			return nil, nil
		}
		if n.Op() == graph.OpInput {
			m := opdef.Rebuild(ng, n, nil)
			return m, ops.Cast(m, to)
		}
		m := ng.Add(graph.Spec{Op: graph.OpVariable, DType: to, Shape: n.Shape(), Value: convert(n.Value()), Name: n.Name(), Site: n.Site()})
		return m, m
	}, func(ng *graph.Graph, n *graph.Node, ins []*graph.Node, _ func(*graph.Node) *graph.Node) *graph.Node {
		switch {
		case n.Op() == graph.OpConst && n.DType() == from:
			return ng.ConstShared(convert(n.Value()), n.Site())
		case n.Op() == ops.OpCast && n.DType() == from:
			return ops.Cast(ins[0], to)
		case isControl(n), n.Op() == ops.OpTupleGet:
			// control flow: the bodies compute in the new type too, and
			// the tuple's layout changes with its results' types
			return cv.convertNode(ng, n, ins)
		case n.DType() == from && opdef.Lookup(n.Op()) != nil && opdef.Lookup(n.Op()).Kind == opdef.Random:
			// random (issue 14): a float random op draws in the new type
			a := n.Attr().(opdef.RandomAttr)
			a.DType = to
			return ng.Add(graph.Spec{Op: n.Op(), Attr: a, Inputs: ins, DType: to, Shape: n.Shape(), Name: n.Name(), Site: n.Site()})
		}
		return nil
	})
	if err != nil {
		return err
	}
	cv.link()
	for i, n := range c.gOuts {
		if n.DType() != userTypes[i] {
			c.gOuts[i] = ops.Cast(n, userTypes[i])
		}
	}
	return c.g.Err()
}

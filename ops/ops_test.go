package ops_test

import (
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestTableComplete fails when a row of the op table is missing a field.
func TestTableComplete(t *testing.T) {
	defs := opdef.Defs()
	if len(defs) != opdef.NumOps()-int(graph.FirstOp) {
		t.Errorf("%d rows for %d op codes", len(defs), opdef.NumOps()-int(graph.FirstOp))
	}
	names := map[string]bool{}
	for _, d := range defs {
		switch {
		case d.Name == "":
			t.Errorf("op %d has no name", d.Op)
		case names[d.Name]:
			t.Errorf("name %s is used twice", d.Name)
		case (d.Arity == 0 && d.Op != ops.OpIota) || d.Arity < -1: // Iota alone has no operands
			t.Errorf("%s: arity %d", d.Name, d.Arity)
		case d.DType == nil || d.Shape == nil:
			t.Errorf("%s: missing dtype or shape rule", d.Name)
		case d.Kind == 0:
			t.Errorf("%s: no kind", d.Name)
		case d.Op.String() != d.Name:
			t.Errorf("%s: registered as %q", d.Name, d.Op.String())
		}
		names[d.Name] = true
		if opdef.Lookup(d.Op) != d {
			t.Errorf("%s: Lookup does not find the row", d.Name)
		}
	}
}

func TestBroadcastShapes(t *testing.T) {
	// Expected results follow NumPy's rules (numpy.broadcast_shapes).
	cases := []struct {
		in   []tensor.Shape
		want tensor.Shape
		ok   bool
	}{
		{[]tensor.Shape{{2, 3}, {2, 3}}, tensor.Shape{2, 3}, true},
		{[]tensor.Shape{{2, 3}, {3}}, tensor.Shape{2, 3}, true},
		{[]tensor.Shape{{4, 1}, {1, 5}}, tensor.Shape{4, 5}, true},
		{[]tensor.Shape{{}, {3, 2}}, tensor.Shape{3, 2}, true},
		{[]tensor.Shape{{8, 1, 6, 1}, {7, 1, 5}}, tensor.Shape{8, 7, 6, 5}, true},
		{[]tensor.Shape{{5, 4}, {1}}, tensor.Shape{5, 4}, true},
		{[]tensor.Shape{{15, 3, 5}, {15, 1, 5}}, tensor.Shape{15, 3, 5}, true},
		{[]tensor.Shape{{0, 3}, {3}}, tensor.Shape{0, 3}, true},
		{[]tensor.Shape{{0}, {1}}, tensor.Shape{0}, true},
		{[]tensor.Shape{{2, 1}, {8, 4, 3}}, nil, false},
		{[]tensor.Shape{{3}, {4}}, nil, false},
		{[]tensor.Shape{{0}, {2}}, nil, false},
		{[]tensor.Shape{{2, 1}, {1, 3}, {4, 1, 1}}, tensor.Shape{4, 2, 3}, true},
	}
	for _, c := range cases {
		got, err := ops.BroadcastShapes(c.in...)
		if (err == nil) != c.ok || (c.ok && !got.Equal(c.want)) {
			t.Errorf("BroadcastShapes(%v) = %v, %v; want %v ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestShapeRules(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3, 4)
	m := g.Input("m", tensor.Float32, 5, 4, 6)
	v := g.Input("v", tensor.Float32, 4)
	i := g.Input("i", tensor.Int32, 3)
	j := g.Input("j", tensor.Int64, 3)
	d := g.Input("d", tensor.Float64, 4)
	cases := []struct {
		name string
		n    *graph.Node
		want string
	}{
		// NumPy matmul semantics: batch dims broadcast, 1-D operands are
		// promoted then the added axis removed.
		{"matmul-batched", ops.MatMul(x, g.Input("w", tensor.Float32, 4, 7)), "f32[2,3,7]"},
		{"matmul-broadcast-batch", ops.MatMul(g.Input("a1", tensor.Float32, 5, 1, 3, 4), m), "f32[5,5,3,6]"},
		{"matmul-mat-vec", ops.MatMul(x, v), "f32[2,3]"},
		{"matmul-vec-mat", ops.MatMul(v, m), "f32[5,6]"},
		{"matmul-vec-vec", ops.MatMul(v, v), "f32[]"},
		{"sum-all", ops.Sum(x), "f32[]"},
		{"sum-axes", ops.Sum(x, 0, -1), "f32[3]"},
		{"sum-keep", ops.SumKeepDims(x, 0, -1), "f32[1,3,1]"},
		{"mean", ops.Mean(x, 1), "f32[2,4]"},
		{"argmax", ops.ArgMax(x, 1), "i64[2,4]"},
		{"argmax-all", ops.ArgMax(x), "i64[]"},
		{"reshape", ops.Reshape(x, -1, 4), "f32[6,4]"},
		{"transpose", ops.Transpose(x), "f32[4,3,2]"},
		{"transpose-perm", ops.Transpose(x, 1, -1, 0), "f32[3,4,2]"},
		{"broadcast-to", ops.BroadcastTo(v, 3, 4), "f32[3,4]"},
		{"concat", ops.Concat(1, x, x), "f32[2,6,4]"},
		{"slice", ops.Slice(x, ops.R(1, 2), ops.RS(0, 3, 2), ops.R(-3, ops.End)), "f32[1,2,3]"},
		{"slice-default-axes", ops.Slice(x, ops.R(0, 1)), "f32[1,3,4]"},
		{"softmax", ops.Softmax(x, -1), "f32[2,3,4]"},
		{"compare", ops.Less(x, v), "b8[2,3,4]"},
		{"promote-int", ops.Add(i, j), "i64[3]"},
		{"promote-float", ops.Mul(v, d), "f64[4]"},
		{"where-promote", ops.Where(ops.Greater(d, ops.Scalar(d, 0)), v, d), "f64[4]"},
		{"cast", ops.Cast(i, tensor.Float16), "f16[3]"},
		{"expand", ops.ExpandDims(v, 0), "f32[1,4]"},
		{"squeeze", ops.Squeeze(ops.Reshape(v, 1, 4, 1)), "f32[4]"},
		{"sumto", ops.SumTo(x, tensor.Shape{3, 1}), "f32[3,1]"},
		{"logsumexp", ops.LogSumExp(x, 1), "f32[2,4]"},
		{"full", ops.Full(g, tensor.Int32, 7, 2, 2), "i32[2,2]"},
		{"scalar", ops.Scalar(x, 2), "f32[]"},
	}
	for _, c := range cases {
		if c.n.Type() != c.want {
			t.Errorf("%s: got %s, want %s (%v)", c.name, c.n.Type(), c.want, g.Err())
		}
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if err := graph.Verify(g); err != nil {
		t.Fatal(err)
	}
}

// TestIdentitiesBuildNothing: builders that would be the identity return
// their operand instead of adding a node.
func TestIdentitiesBuildNothing(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	for name, n := range map[string]*graph.Node{
		"reshape":   ops.Reshape(x, 2, 3),
		"transpose": ops.Transpose(x, 0, 1),
		"broadcast": ops.BroadcastTo(x, 2, 3),
		"slice":     ops.Slice(x, ops.All, ops.R(0, 3)),
		"cast":      ops.Cast(x, tensor.Float32),
		"concat":    ops.Concat(0, x),
	} {
		if n != x {
			t.Errorf("%s built %s", name, n)
		}
	}
	if g.Len() != 1 {
		t.Errorf("graph has %d nodes, want 1", g.Len())
	}
}

// TestAttrIdentity: nodes differing only in an attribute print different
// attributes (the compiler's CSE keys on them).
func TestAttrIdentity(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	a, b := ops.Softmax(x, 0), ops.Softmax(x, 1)
	if a.Attr().String() == b.Attr().String() {
		t.Errorf("Softmax axes 0 and 1 have the same attribute %q", a.Attr())
	}
	if s1, s2 := ops.Sum(x, -1), ops.Sum(x, 1); s1.Attr().String() != s2.Attr().String() {
		t.Errorf("axis -1 and 1 of a rank-2 operand normalise differently: %q %q", s1.Attr(), s2.Attr())
	}
	if k1, k2 := ops.Sum(x, 1), ops.SumKeepDims(x, 1); k1.Attr().String() == k2.Attr().String() {
		t.Errorf("keepdims is not part of the attribute")
	}
}

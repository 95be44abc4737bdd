package graph_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func TestFormat(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	w := g.Variable("w", tensor.Zeros(tensor.Float32, 3))
	y := ops.Sum(ops.Add(x, w), 1)
	_ = y
	got := graph.Format(g)
	// One node per line: id, op, operands, name, attribute, type, site.
	want := []string{
		`%0 = Input "x" f32[2,3]`,
		`%1 = Variable "w" f32[3]`,
		`%2 = Add(%0, %1) f32[2,3]`,
		`%3 = Sum(%2) axes=[1] f32[2]`,
	}
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("Format:\n%s", got)
	}
	site := regexp.MustCompile(`graph_test\.go:\d+$`)
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || !site.MatchString(lines[i]) {
			t.Errorf("line %d = %q, want %q followed by the call site", i, lines[i], w)
		}
	}
}

func TestWriteDOT(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	ops.Exp(ops.Mul(x, g.Const(tensor.Scalar(float32(2)))))
	var b bytes.Buffer
	if err := graph.WriteDOT(&b, g); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"digraph loom {", `n0 [label="%0 Input \"x\"\nf32[2]"`, "n0 -> n2;", "n1 -> n2;", "n2 -> n3;", `%3 Exp\nf32[2]`, "}"} {
		if !strings.Contains(s, want) {
			t.Errorf("DOT output lacks %q:\n%s", want, s)
		}
	}
}

func TestVerifyCatchesBadNodes(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	// A node whose stored type contradicts its op's rules.
	g.Add(graph.Spec{Op: ops.OpAdd, Inputs: []*graph.Node{x, x}, DType: tensor.Float32, Shape: tensor.Shape{3, 2}})
	err := graph.Verify(g)
	if err == nil || !strings.Contains(err.Error(), "rules give f32[2,3], node has f32[3,2]") {
		t.Errorf("Verify = %v", err)
	}
	h := graph.New()
	y := h.Input("y", tensor.Float32, 2)
	h.Add(graph.Spec{Op: ops.OpNeg, Inputs: []*graph.Node{y, y}, DType: tensor.Float32, Shape: tensor.Shape{2}})
	if err := graph.Verify(h); err == nil || !strings.Contains(err.Error(), "takes 1 operands, got 2") {
		t.Errorf("Verify of a wrong arity = %v", err)
	}
	ok := graph.New()
	ops.Softmax(ok.Input("z", tensor.Float64, 3, 4), 0)
	if err := graph.Verify(ok); err != nil {
		t.Errorf("Verify of a good graph: %v", err)
	}
	if err := graph.Verify(nil); err == nil {
		t.Errorf("Verify(nil) succeeded")
	}
}

func TestAddRejectsForeignInputs(t *testing.T) {
	g, h := graph.New(), graph.New()
	x := h.Input("x", tensor.Float32, 2)
	n := g.Add(graph.Spec{Op: ops.OpNeg, Inputs: []*graph.Node{x}, DType: tensor.Float32, Shape: tensor.Shape{2}})
	if n.Valid() || !errors.Is(g.Err(), graph.ErrInvalid) {
		t.Errorf("Add with a foreign input: %v, %v", n, g.Err())
	}
}

func TestAncestors(t *testing.T) {
	g := graph.New()
	a := g.Input("a", tensor.Float32, 1)
	b := g.Input("b", tensor.Float32, 1)
	c := ops.Exp(a)
	ops.Log(b) // not an ancestor of d
	d := ops.Add(c, a)
	got := graph.Ancestors(d)
	ids := []int{}
	for _, n := range got {
		ids = append(ids, n.ID())
	}
	if len(ids) != 3 || ids[0] != a.ID() || ids[1] != c.ID() || ids[2] != d.ID() {
		t.Errorf("Ancestors = %v", ids)
	}
	if graph.Ancestors() != nil || graph.Ancestors(nil) != nil {
		t.Errorf("Ancestors of nothing is not empty")
	}
}

func TestNodeAccessors(t *testing.T) {
	var n *graph.Node
	if n.Shape() != nil || n.DType() != tensor.Invalid || n.Graph() != nil || n.ID() != -1 || n.Err() == nil || n.Valid() || n.String() != "<nil node>" {
		t.Errorf("nil node accessors misbehave")
	}
	g := graph.New()
	x := g.Input("x", tensor.Int64, 4, 1)
	if x.Name() != "x" || x.Rank() != 2 || x.Type() != "i64[4,1]" || g.Lookup("x") != x || x.Graph() != g || x.Err() != nil {
		t.Errorf("accessors of %v", x)
	}
	if !strings.HasPrefix(x.Site(), "graph_test.go:") {
		t.Errorf("site %q", x.Site())
	}
	c := g.Const(tensor.Scalar(int64(3)))
	if c.Value().Float64(0) != 3 || c.Op() != graph.OpConst || !c.Op().IsLeaf() {
		t.Errorf("const %v", c)
	}
	if graph.OpInput.String() != "Input" || ops.OpMatMul.String() != "MatMul" {
		t.Errorf("op names %v %v", graph.OpInput, ops.OpMatMul)
	}
}

// TestConstCopies: a Const or Variable holds a copy, so later writes to
// the caller's tensor do not change the graph.
func TestConstCopies(t *testing.T) {
	data := []float32{1, 2}
	v, _ := tensor.New(data, 2)
	g := graph.New()
	c := g.Const(v)
	w := g.Variable("w", v)
	data[0] = 100
	if c.Value().Float64(0) != 1 || w.Value().Float64(0) != 1 {
		t.Errorf("the graph shares the caller's tensor")
	}
}

// TestNilGraph: every method of a nil *Graph returns an invalid node or an
// empty answer, never panics (issue 12, defect 13).
func TestNilGraph(t *testing.T) {
	var g *graph.Graph
	v := tensor.Zeros(tensor.Float32, 2)
	for name, n := range map[string]*graph.Node{
		"Input":       g.Input("x", tensor.Float32, 2),
		"Const":       g.Const(v),
		"ConstShared": g.ConstShared(v, ""),
		"Variable":    g.Variable("w", v),
		"Add":         g.Add(graph.Spec{Op: graph.OpConst, DType: tensor.Float32, Shape: tensor.Shape{2}, Value: v}),
		"Fail":        g.Fail(errors.New("boom")),
	} {
		if n.Valid() || n.Err() == nil || n.Graph() != nil {
			t.Errorf("%s on a nil graph = %v (err %v), want a detached invalid node", name, n, n.Err())
		}
		if name != "Fail" && (!errors.Is(n.Err(), graph.ErrInvalid) || !strings.Contains(n.Err().Error(), "nil graph")) {
			t.Errorf("%s on a nil graph: error %v does not say nil graph", name, n.Err())
		}
	}
	if g.Err() == nil || g.Nodes() != nil || g.Len() != 0 || g.Lookup("x") != nil {
		t.Errorf("accessors of a nil graph: %v %v %d %v", g.Err(), g.Nodes(), g.Len(), g.Lookup("x"))
	}
	if err := graph.WriteDOT(&bytes.Buffer{}, g); err == nil {
		t.Errorf("WriteDOT of a nil graph succeeded")
	}
	if s := graph.Format(g); s != "<nil graph>\n" {
		t.Errorf("Format(nil) = %q", s)
	}
	// Fail with a nil error still fails.
	if n := graph.New().Fail(nil); n.Valid() || n.Err() == nil {
		t.Errorf("Fail(nil) = %v", n)
	}
	if n := graph.Invalid(nil); n.Err() == nil {
		t.Errorf("Invalid(nil) carries no error")
	}
}

// TestZeroGraph: a zero Graph works like graph.New() (issue 12, defect 13).
func TestZeroGraph(t *testing.T) {
	var g graph.Graph
	x := g.Input("x", tensor.Float32, 2)
	w := g.Variable("w", tensor.Zeros(tensor.Float32, 2))
	y := ops.Add(x, w)
	if !y.Valid() || g.Err() != nil || g.Lookup("x") != x || g.Lookup("w") != w || g.Len() != 3 {
		t.Fatalf("building on a zero Graph: %v, %v", y, g.Err())
	}
	if err := graph.Verify(&g); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if d := g.Input("x", tensor.Float32, 3); d.Valid() || !strings.Contains(g.Err().Error(), `name "x" is already used`) {
		t.Errorf("a duplicate name on a zero Graph: %v", g.Err())
	}
}

// TestNodeInput: Input(i) of a nil node or out of range is nil (issue 12,
// defect 13).
func TestNodeInput(t *testing.T) {
	var n *graph.Node
	if n.Input(0) != nil {
		t.Errorf("(*Node)(nil).Input(0) is not nil")
	}
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	y := ops.Sub(x, ops.Exp(x))
	if y.Input(0) != x || y.Input(1) == nil || y.Input(2) != nil || y.Input(-1) != nil || x.Input(0) != nil {
		t.Errorf("Input(i) of %v: %v %v %v %v %v", y, y.Input(0), y.Input(1), y.Input(2), y.Input(-1), x.Input(0))
	}
	var e *graph.Error
	if e.Error() != "<nil>" || e.Unwrap() != nil {
		t.Errorf("a nil *Error: %q %v", e.Error(), e.Unwrap())
	}
	if s := graph.FormatNodes([]*graph.Node{x, nil}); !strings.Contains(s, "<nil node>") {
		t.Errorf("FormatNodes with a nil node: %q", s)
	}
	if err := graph.WriteDOT(nil, g); err == nil {
		t.Errorf("WriteDOT to a nil writer succeeded")
	}
}

// TestTooLarge: a value whose byte size (non-zero dimensions times the
// dtype's size) overflows an int is a build error wherever the node is
// made, whatever the order of the dimensions (issue 12, defect 4).
func TestTooLarge(t *testing.T) {
	site := regexp.MustCompile(`^graph_test\.go:\d+: `)
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
	}{
		// 1<<62 float32 elements are 1<<64 bytes.
		{"input", func(g *graph.Graph) *graph.Node { return g.Input("x", tensor.Float32, 1<<62) }},
		// The element count is 0, but strides of 1<<62 elements of 4 bytes overflow.
		{"input-zero-first", func(g *graph.Graph) *graph.Node { return g.Input("x", tensor.Float32, 0, 1<<62) }},
		{"input-zero-middle", func(g *graph.Graph) *graph.Node { return g.Input("x", tensor.Bool, 1<<40, 0, 1<<40) }},
		{"input-zero-last", func(g *graph.Graph) *graph.Node { return g.Input("x", tensor.Bool, 1<<40, 1<<40, 0) }},
		{"add", func(g *graph.Graph) *graph.Node {
			x := g.Input("x", tensor.Float64)
			return g.Add(graph.Spec{Op: ops.OpBroadcastTo, Attr: opdef.ShapeAttr{Shape: tensor.Shape{1 << 61}}, Inputs: []*graph.Node{x}, DType: tensor.Float64, Shape: tensor.Shape{1 << 61}})
		}},
		{"broadcast", func(g *graph.Graph) *graph.Node {
			return ops.BroadcastTo(g.Input("x", tensor.Float32), 1<<62)
		}},
	}
	for _, c := range cases {
		g := graph.New()
		n := c.build(g)
		err := g.Err()
		if n.Valid() || !errors.Is(err, graph.ErrShape) || !strings.Contains(err.Error(), "too large") || !site.MatchString(err.Error()) {
			t.Errorf("%s: %v, error %v; want an ErrShape \"too large\" at this file", c.name, n, err)
		}
	}
	// The largest values that fit are accepted: 1<<60 float32s are 1<<62 bytes.
	g := graph.New()
	if x := g.Input("x", tensor.Float32, 0, 1<<60); !x.Valid() {
		t.Errorf("f32[0,1<<60]: %v", g.Err())
	}
	if err := graph.CheckType(tensor.Float64, tensor.Shape{1 << 59, 0, 1 << 1}); err == nil || !errors.Is(err, graph.ErrShape) {
		t.Errorf("CheckType(f64[1<<59,0,2]) = %v", err)
	}
	if err := graph.CheckType(tensor.Float64, tensor.Shape{1 << 59, 0, 1}); err != nil {
		t.Errorf("CheckType(f64[1<<59,0,1]) = %v", err)
	}
}

// TestAddChecksStructure: Add refuses nodes that Verify would reject for
// their structure (it does not apply the ops' rules).
func TestAddChecksStructure(t *testing.T) {
	v := tensor.Zeros(tensor.Float32, 2)
	cases := []struct {
		name string
		spec func(g *graph.Graph) graph.Spec
		want string
	}{
		{"unregistered", func(g *graph.Graph) graph.Spec {
			return graph.Spec{Op: graph.Op(60000), DType: tensor.Float32, Shape: tensor.Shape{2}}
		}, "unregistered op"},
		{"invalid-op", func(g *graph.Graph) graph.Spec { return graph.Spec{Op: graph.OpInvalid, DType: tensor.Float32} }, "unregistered op"},
		{"const-no-value", func(g *graph.Graph) graph.Spec {
			return graph.Spec{Op: graph.OpConst, DType: tensor.Float32, Shape: tensor.Shape{2}}
		}, "nil value"},
		{"const-wrong-value", func(g *graph.Graph) graph.Spec {
			return graph.Spec{Op: graph.OpConst, DType: tensor.Float32, Shape: tensor.Shape{3}, Value: v}
		}, "does not match"},
		{"leaf-with-inputs", func(g *graph.Graph) graph.Spec {
			x := g.Input("x", tensor.Float32, 2)
			return graph.Spec{Op: graph.OpVariable, DType: tensor.Float32, Shape: tensor.Shape{2}, Value: v, Name: "w", Inputs: []*graph.Node{x}}
		}, "no operands"},
		{"input-no-name", func(g *graph.Graph) graph.Spec {
			return graph.Spec{Op: graph.OpInput, DType: tensor.Float32, Shape: tensor.Shape{2}}
		}, "empty name"},
		{"variable-same-name", func(g *graph.Graph) graph.Spec {
			g.Input("x", tensor.Float32, 2)
			return graph.Spec{Op: graph.OpVariable, DType: tensor.Float32, Shape: tensor.Shape{2}, Value: v, Name: "x"}
		}, "already used"},
		{"bad-dtype", func(g *graph.Graph) graph.Spec {
			return graph.Spec{Op: ops.OpNeg, DType: tensor.DType(99), Inputs: []*graph.Node{g.Input("x", tensor.Float32)}}
		}, "invalid dtype"},
	}
	for _, c := range cases {
		g := graph.New()
		if n := g.Add(c.spec(g)); n.Valid() || g.Err() == nil || !strings.Contains(g.Err().Error(), c.want) {
			t.Errorf("%s: Add = %v, error %v; want one containing %q", c.name, n, g.Err(), c.want)
		}
	}
	// An Input made with Add is registered under its name.
	g := graph.New()
	x := g.Add(graph.Spec{Op: graph.OpInput, DType: tensor.Float32, Shape: tensor.Shape{2}, Name: "x"})
	if !x.Valid() || g.Lookup("x") != x {
		t.Errorf("Add(Input) = %v, Lookup %v", x, g.Lookup("x"))
	}
}

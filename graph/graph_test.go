package graph_test

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
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

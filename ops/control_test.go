package ops_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// line returns the line it is called from: a case states the line its
// error must name.
func line() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

// Function shorthands for the control-flow builders.
type (
	branchFn = func([]*graph.Node) []*graph.Node
	condFn   = func([]*graph.Node) *graph.Node
	stepFn   = func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node)
)

func same(p []*graph.Node) []*graph.Node { return p }

// sumBelow is a While condition: sum(c[0]) < limit.
func sumBelow(limit float64) condFn {
	return func(c []*graph.Node) *graph.Node {
		s := ops.Sum(c[0])
		return ops.Less(s, ops.Scalar(s, limit))
	}
}

// TestControlBuildErrors checks the build-time checks of Cond, While and
// Scan: the error has the right kind, op and message, names the line of
// the user's code that caused it (the builder's call, or the line inside
// a body function), is recorded on the top-level graph, and nothing
// panics.
func TestControlBuildErrors(t *testing.T) {
	f32, f64 := tensor.Float32, tensor.Float64
	cases := []struct {
		name  string
		build func(g *graph.Graph) (*graph.Node, int) // the failing node and the line the error names
		kind  error
		want  []string
	}{
		{"cond-pred-float", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", f32), g.Input("x", f32, 2)
			return ops.Cond(p, same, same, x)[0], line()
		}, graph.ErrDType, []string{"Cond(f32[], f32[2]): the predicate must be a bool scalar, got f32[]"}},
		{"cond-pred-vector", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", tensor.Bool, 2), g.Input("x", f32, 2)
			return ops.Cond(p, same, same, x)[0], line()
		}, graph.ErrDType, []string{"Cond(b8[2], f32[2])", "bool scalar, got b8[2]"}},
		{"cond-branch-count", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", tensor.Bool), g.Input("x", f32, 2)
			twice := func(p []*graph.Node) []*graph.Node { return []*graph.Node{p[0], p[0]} }
			return ops.Cond(p, same, twice, x)[0], line()
		}, graph.ErrInvalid, []string{"Cond(b8[], f32[2]): then returns 1 results and else 2"}},
		{"cond-branch-dtype", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", tensor.Bool), g.Input("x", f32, 2)
			wide := func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.Cast(p[0], f64)} }
			return ops.Cond(p, same, wide, x)[0], line()
		}, graph.ErrDType, []string{"result 0 is f32[2] from then and f64[2] from else"}},
		{"cond-branch-shape", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", tensor.Bool), g.Input("x", f32, 2)
			sum := func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.Sum(p[0])} }
			return ops.Cond(p, sum, same, x)[0], line()
		}, graph.ErrShape, []string{"result 0 is f32[] from then and f32[2] from else"}},
		{"cond-nil-branch", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", tensor.Bool), g.Input("x", f32, 2)
			return ops.Cond(p, same, nil, x)[0], line()
		}, graph.ErrInvalid, []string{"Cond(): the else function is nil"}},
		{"while-cond-not-bool", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 2)
			return ops.While(func(c []*graph.Node) *graph.Node { return ops.Sum(c[0]) }, same, x)[0], line()
		}, graph.ErrDType, []string{"While(f32[2]): cond must return a bool scalar, got f32[]"}},
		{"while-carry-dtype", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 2)
			wide := func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Cast(c[0], f64)} }
			return ops.While(sumBelow(3), wide, x)[0], line()
		}, graph.ErrDType, []string{"While(f32[2]): body returns f64[2] for carry 0 of type f32[2]: a carry keeps its type"}},
		{"while-carry-shape", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 2)
			grow := func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Concat(0, c[0], c[0])} }
			return ops.While(sumBelow(3), grow, x)[0], line()
		}, graph.ErrShape, []string{"body returns f32[4] for carry 0 of type f32[2]"}},
		{"while-carry-count", func(g *graph.Graph) (*graph.Node, int) {
			x, k := g.Input("x", f32, 2), g.Input("k", tensor.Int32)
			first := func(c []*graph.Node) []*graph.Node { return c[:1] }
			return ops.While(sumBelow(3), first, x, k)[0], line()
		}, graph.ErrInvalid, []string{"While(f32[2], i32[]): body returns 1 values for 2 carries"}},
		{"while-no-carry", func(g *graph.Graph) (*graph.Node, int) {
			return ops.While(sumBelow(3), same)[0], 0 // no operand, no graph: a detached error
		}, graph.ErrInvalid, []string{"While(): no carried values"}},
		{"whilemax-bound", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 2)
			return ops.WhileMax(0, sumBelow(3), same, x)[0], line()
		}, graph.ErrInvalid, []string{"WhileMax(f32[2]): the bound must be at least 1, got 0"}},
		{"scan-x-length", func(g *graph.Graph) (*graph.Node, int) {
			c, x := g.Input("c", f32, 2), g.Input("x", f32, 3, 2)
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, x }
			_, ys := ops.Scan(step, []*graph.Node{c}, []*graph.Node{x}, 4)
			return ys[0], line() - 1
		}, graph.ErrShape, []string{"Scan(f32[2], f32[3,2]): x 0 is f32[3,2]: its leading axis must be the length 4"}},
		{"scan-x-scalar", func(g *graph.Graph) (*graph.Node, int) {
			c, x := g.Input("c", f32, 2), g.Input("x", f32)
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, nil }
			out, _ := ops.Scan(step, []*graph.Node{c}, []*graph.Node{x}, 1)
			return out[0], line() - 1
		}, graph.ErrShape, []string{"x 0 is f32[]: its leading axis must be the length 1"}},
		{"scan-no-length", func(g *graph.Graph) (*graph.Node, int) {
			c := g.Input("c", f32, 2)
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, nil }
			out, _ := ops.Scan(step, []*graph.Node{c}, nil, -1)
			return out[0], line() - 1
		}, graph.ErrInvalid, []string{"Scan(f32[2]): a negative length needs an x to take it from"}},
		{"scan-carry-dtype", func(g *graph.Graph) (*graph.Node, int) {
			k, x := g.Input("k", tensor.Int32), g.Input("x", f32, 3)
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Cast(c[0], tensor.Int64)}, nil
			}
			out, _ := ops.Scan(step, []*graph.Node{k}, []*graph.Node{x}, -1)
			return out[0], line() - 1
		}, graph.ErrDType, []string{"Scan(i32[], f32[3]): body returns i64[] for carry 0 of type i32[]"}},
		{"scan-carry-count", func(g *graph.Graph) (*graph.Node, int) {
			c, x := g.Input("c", f32, 2), g.Input("x", f32, 3)
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return nil, x }
			out, _ := ops.Scan(step, []*graph.Node{c}, []*graph.Node{x}, -1)
			return out[0], line() - 1
		}, graph.ErrInvalid, []string{"body returned 0 carries for 1"}},
		{"scan-nil-body", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 3)
			_, ys := ops.Scan(nil, nil, []*graph.Node{x}, -1)
			return ys[0], line() - 1
		}, graph.ErrInvalid, []string{"the body function is nil"}},
		{"scan-nothing", func(g *graph.Graph) (*graph.Node, int) {
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return nil, nil }
			_, ys := ops.Scan(step, nil, nil, 3)
			return ys[0], 0 // no operand, no graph: a detached error
		}, graph.ErrInvalid, []string{"Scan(): no valid operand"}},
		// An error inside a body names the body's line, not the builder's
		// (TestControlErrorInBodyLine), also in a body inside a body.
		{"error-in-nested-body", func(g *graph.Graph) (*graph.Node, int) {
			c := g.Input("c", f32, 2)
			var at int
			body := func(c []*graph.Node) []*graph.Node {
				inner := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
					bad := ops.Reshape(c[0], 3)
					at = line() - 1
					return []*graph.Node{bad}, nil
				}
				out, _ := ops.Scan(inner, c, nil, 2)
				return out
			}
			r := ops.While(sumBelow(10), body, c)[0]
			return r, at
		}, graph.ErrShape, []string{"Reshape(f32[2]): cannot reshape [2] (2 elements) to [3]"}},
		{"sealed-body-node-outside", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 3)
			var leak *graph.Node
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				leak = ops.Neg(x[0])
				return c, []*graph.Node{leak}
			}
			ops.Scan(step, nil, []*graph.Node{x}, -1)
			return ops.Add(leak, ops.Scalar(leak, 1)), line()
		}, graph.ErrInvalid, []string{"is used outside that body", "the body of Scan (built at control_test.go:"}},
		{"sealed-body-node-in-outer-op", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32)
			var leak *graph.Node
			step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				leak = ops.Neg(c[0])
				return []*graph.Node{leak}, nil
			}
			ops.Scan(step, []*graph.Node{x}, nil, 2)
			return ops.Add(x, leak), line()
		}, graph.ErrInvalid, []string{"Add(f32[], f32[])", "is used outside that body"}},
		{"sibling-body-node", func(g *graph.Graph) (*graph.Node, int) {
			p, x := g.Input("p", tensor.Bool), g.Input("x", f32, 2)
			var fromThen *graph.Node
			then := func(p []*graph.Node) []*graph.Node { fromThen = ops.Neg(p[0]); return []*graph.Node{fromThen} }
			at := line() + 1
			els := func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(p[0], fromThen)} }
			return ops.Cond(p, then, els, x)[0], at
		}, graph.ErrInvalid, []string{"Add(f32[2], f32[2]): operand 1 belongs to another graph"}},
		{"foreign-result", func(g *graph.Graph) (*graph.Node, int) {
			x := g.Input("x", f32, 2)
			other := graph.New().Input("y", f32, 2)
			return ops.While(sumBelow(3), func([]*graph.Node) []*graph.Node { return []*graph.Node{other} }, x)[0], line()
		}, graph.ErrInvalid, []string{"result 0 of body", "is not a node of the body or of a graph around it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			n, at := c.build(g)
			if n.Valid() {
				t.Fatalf("built %s without an error", n)
			}
			err := n.Err()
			if at != 0 {
				err = g.Err()
				if err == nil {
					t.Fatalf("no error recorded on the graph")
				}
				if n.Err() == nil || n.Err().Error() != err.Error() {
					t.Errorf("the invalid node carries %v, the graph %v", n.Err(), err)
				}
			}
			msg := err.Error()
			switch {
			case at > 0:
				if site := fmt.Sprintf("control_test.go:%d: ", at); !strings.HasPrefix(msg, site) {
					t.Errorf("error %q does not start with the call site %q", msg, site)
				}
			case at < 0:
				if !strings.HasPrefix(msg, "control_test.go:") {
					t.Errorf("error %q does not start with this file's call site", msg)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q does not wrap %v", msg, c.kind)
			}
			if at != 0 {
				// Sticky on the top-level graph.
				if later := ops.Neg(g.Input("z", f32, 1)); later.Valid() || g.Err() != err {
					t.Errorf("the error is not sticky")
				}
			}
			_ = n.Shape().String() + n.Type() + n.String()
		})
	}
}

// TestControlErrorInBodyLine: an error inside a body function names the
// line in the body, for a Scan body and for a Cond branch.
func TestControlErrorInBodyLine(t *testing.T) {
	g := graph.New()
	c, x, w := g.Input("c", tensor.Float32, 2, 3), g.Input("x", tensor.Float32, 5, 2), g.Input("w", tensor.Float32, 4, 3)
	var at int
	step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.MatMul(c[0], w)
		at = line() - 1
		return []*graph.Node{h}, nil
	}
	out, _ := ops.Scan(step, []*graph.Node{c}, []*graph.Node{x}, -1)
	if out[0].Valid() || g.Err() == nil {
		t.Fatalf("no error: %v", out[0])
	}
	if want := fmt.Sprintf("control_test.go:%d: MatMul(", at); !strings.HasPrefix(g.Err().Error(), want) {
		t.Errorf("error %q does not start with %q", g.Err(), want)
	}

	g = graph.New()
	p, y := g.Input("p", tensor.Bool), g.Input("y", tensor.Float32, 2)
	els := func(p []*graph.Node) []*graph.Node {
		bad := ops.Sum(p[0], 1)
		at = line() - 1
		return []*graph.Node{bad}
	}
	r := ops.Cond(p, same, els, y)
	if r[0].Valid() || g.Err() == nil {
		t.Fatalf("no error: %v", r[0])
	}
	if want := fmt.Sprintf("control_test.go:%d: Sum(f32[2]): axis 1 is out of range", at); !strings.HasPrefix(g.Err().Error(), want) {
		t.Errorf("error %q does not start with %q", g.Err(), want)
	}
}

// attrOf returns the ControlAttr of the control-flow node behind a
// builder's result (a TupleGet of it).
func attrOf(t *testing.T, res *graph.Node) (*graph.Node, *opdef.ControlAttr) {
	t.Helper()
	if !res.Valid() || res.Op() != ops.OpTupleGet {
		t.Fatalf("%v is not a TupleGet", res)
	}
	n := res.Inputs()[0]
	a, ok := n.Attr().(*opdef.ControlAttr)
	if !ok {
		t.Fatalf("%v has attribute %T", n, n.Attr())
	}
	return n, a
}

// TestControlTypes: the builders' results, their operands (with the
// captures after the fixed operands) and their bodies' parameters follow
// the convention of internal/opdef/control.go.
func TestControlTypes(t *testing.T) {
	f32 := tensor.Float32
	g := graph.New()
	h0, k0 := g.Input("h", f32, 4), g.Input("k", tensor.Int32)
	xs, ws := g.Input("xs", f32, 7, 3), g.Input("w", f32, 3, 4)
	scale := g.Input("scale", f32)
	step := func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		h := ops.Tanh(ops.Add(c[0], ops.MatMul(x[0], ws)))
		k := ops.Add(c[1], ops.Scalar(c[1], 1))
		return []*graph.Node{h, k}, []*graph.Node{ops.Mul(h, scale), ops.Cast(k, tensor.Int64)}
	}
	carry, ys := ops.Scan(step, []*graph.Node{h0, k0}, []*graph.Node{xs}, -1, ops.ScanReverse())
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"f32[4]", "i32[]"} {
		if carry[i].Type() != want {
			t.Errorf("carry %d is %s, want %s", i, carry[i].Type(), want)
		}
	}
	for i, want := range []string{"f32[7,4]", "i64[7]"} {
		if ys[i].Type() != want {
			t.Errorf("ys %d is %s, want %s", i, ys[i].Type(), want)
		}
	}
	n, a := attrOf(t, carry[0])
	if a.Kind != opdef.ScanKind || a.Carries != 2 || a.Xs != 1 || a.Length != 7 || !a.Reverse || a.Remat || a.MaxTrips != 0 {
		t.Errorf("attribute %s", a)
	}
	// Operands: the carries, the xs, then the captures in order of first use.
	ins := n.Inputs()
	if len(ins) != 5 || ins[0] != h0 || ins[1] != k0 || ins[3] != ws || ins[4] != scale {
		t.Errorf("operands %v", ins)
	}
	if n.DType() != tensor.Uint8 || n.Rank() != 1 {
		t.Errorf("the tuple is %s, want a u8 vector", n.Type())
	}
	offs, total := opdef.TupleLayout(a.Outs)
	// f32[4] at 0 (16 bytes), i32[] at 64, f32[7,4] at 128 (112 bytes), i64[7] at 256 (56 bytes): 312.
	if fmt.Sprint(offs) != "[0 64 128 256]" || total != 312 || n.Shape()[0] != 312 {
		t.Errorf("layout %v total %d, tuple %s", offs, total, n.Type())
	}
	for i, r := range append(carry, ys...) {
		ta := r.Attr().(opdef.TupleAttr)
		if ta.Index != i || ta.Offset != offs[i] || r.Inputs()[0] != n {
			t.Errorf("result %d: TupleGet %s of %v", i, ta, r.Inputs()[0])
		}
	}
	b := a.Bodies[0]
	if b.Graph.Parent() != g || !b.Graph.Sealed() || b.Graph.Depth() != 1 || b.Graph.Root() != g {
		t.Errorf("body graph: parent %p (want %p), sealed %v, depth %d", b.Graph.Parent(), g, b.Graph.Sealed(), b.Graph.Depth())
	}
	var ptypes []string
	for _, p := range b.Params {
		ptypes = append(ptypes, p.Type())
	}
	// x_t drops the leading axis; the captures keep their types.
	if got := strings.Join(ptypes, " "); got != "f32[4] i32[] f32[3] f32[3,4] f32[]" {
		t.Errorf("body parameters %s", got)
	}
	if outer, params := b.Graph.Captures(); len(outer) != 2 || outer[0] != ws || outer[1] != scale || params[0] != b.Params[3] {
		t.Errorf("captures %v %v", outer, params)
	}
	if len(b.Results) != 4 {
		t.Errorf("%d body results, want 2 carries and 2 ys", len(b.Results))
	}
	// A control-flow op's cost counts every step.
	if d := opdef.Lookup(ops.OpScan); d.FLOPsOf(n) <= 0 {
		t.Errorf("Scan's cost %v", d.FLOPsOf(n))
	}

	// While: the results have the carries' types; WhileMax keeps its bound.
	w := ops.WhileMax(5, sumBelow(10), func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Add(c[0], scale), c[1]}
	}, h0, k0)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if w[0].Type() != "f32[4]" || w[1].Type() != "i32[]" {
		t.Errorf("While results %s %s", w[0].Type(), w[1].Type())
	}
	wn, wa := attrOf(t, w[1])
	if wa.Kind != opdef.WhileKind || wa.MaxTrips != 5 || wa.Carries != 2 || len(wa.Bodies) != 2 {
		t.Errorf("attribute %s", wa)
	}
	// The captures are the union over cond and body: scale (only the body's).
	if ins := wn.Inputs(); len(ins) != 3 || ins[2] != scale {
		t.Errorf("While operands %v", ins)
	}
	for k, b := range wa.Bodies {
		if len(b.Params) != 3 {
			t.Errorf("body %d has %d parameters, want 3 (2 carries and the capture)", k, len(b.Params))
		}
	}
	if r := wa.Bodies[0].Results; len(r) != 1 || r[0].Type() != "b8[]" {
		t.Errorf("cond results %v", r)
	}
}

// TestControlCaptures: what a body reads of the graphs around it.
func TestControlCaptures(t *testing.T) {
	f32 := tensor.Float32
	g := graph.New()
	p := g.Input("p", tensor.Bool)
	x, a, b := g.Input("x", f32, 2), g.Input("a", f32, 2), g.Input("b", f32, 2)

	// Cond: then reads a, else reads b and a twice: one capture each, and
	// both branches get a parameter for both. Nodes built only from outer
	// nodes (a*b, a+a*b) go to the outer graph: only the last, which the
	// body's own nodes read, is captured.
	var outerOnly, outerSum *graph.Node
	r := ops.Cond(p,
		func(xs []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(xs[0], a)} },
		func(xs []*graph.Node) []*graph.Node {
			outerOnly = ops.Mul(a, b)
			outerSum = ops.Add(a, outerOnly)
			return []*graph.Node{ops.Add(ops.Add(xs[0], b), outerSum)}
		}, x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	if outerOnly.Graph() != g || outerSum.Graph() != g {
		t.Errorf("a*b and a+a*b (outer nodes only) were built in %p and %p, not in the outer graph %p", outerOnly.Graph(), outerSum.Graph(), g)
	}
	n, attr := attrOf(t, r[0])
	ins := n.Inputs()
	// [pred, x, captures: a (then), b, a+a*b (else; a already captured)]
	if len(ins) != 5 || ins[0] != p || ins[1] != x || ins[2] != a || ins[3] != b || ins[4] != outerSum {
		t.Errorf("Cond operands %v", ins)
	}
	if attr.Carries != 1 || attr.Fixed() != 2 || attr.ParamOffset() != 1 {
		t.Errorf("Cond attribute %s: Carries %d Fixed %d", attr, attr.Carries, attr.Fixed())
	}
	for k, body := range attr.Bodies {
		if len(body.Params) != 4 {
			t.Errorf("branch %d has %d parameters, want 4", k, len(body.Params))
		}
		for i, q := range body.Params {
			if q.Graph() != body.Graph || q.Op() != graph.OpInput || q.Type() != ins[i+1].Type() {
				t.Errorf("branch %d parameter %d: %v", k, i, q)
			}
		}
	}

	// A grand-outer capture: a Scan inside a While body reads w, a node of
	// the top-level graph. The Scan's body captures the While body's
	// parameter for w, and the While node takes w itself as an operand.
	w := g.Input("w", f32, 2)
	var scanNode *graph.Node
	var whileBody *graph.Graph
	res := ops.WhileMax(3, sumBelow(100), func(c []*graph.Node) []*graph.Node {
		whileBody = c[0].Graph()
		out, _ := ops.Scan(func(c, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
			return []*graph.Node{ops.Add(c[0], w)}, nil
		}, c, nil, 2)
		scanNode = out[0].Inputs()[0]
		return out
	}, x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	wn, _ := attrOf(t, res[0])
	if ins := wn.Inputs(); len(ins) != 2 || ins[1] != w {
		t.Errorf("While operands %v, want [x w]", ins)
	}
	outer, params := whileBody.Captures()
	if len(outer) != 1 || outer[0] != w {
		t.Fatalf("the While body captured %v, want [w]", outer)
	}
	if scanNode.Graph() != whileBody {
		t.Errorf("the Scan is in %p, not in the While body %p", scanNode.Graph(), whileBody)
	}
	if si := scanNode.Inputs(); len(si) != 2 || si[1] != params[0] {
		t.Errorf("the Scan's operands %v, want [carry, the While body's parameter for w]", si)
	}
	sa := scanNode.Attr().(*opdef.ControlAttr)
	inner := sa.Bodies[0].Graph
	if inner.Depth() != 2 || inner.Root() != g || inner.Parent() != whileBody {
		t.Errorf("the Scan body: depth %d, root ok %v, parent ok %v", inner.Depth(), inner.Root() == g, inner.Parent() == whileBody)
	}
	if o, _ := inner.Captures(); len(o) != 1 || o[0] != params[0] {
		t.Errorf("the Scan body captured %v, want the While body's parameter for w", o)
	}

	// A body may return an outer node as it is (a capture becomes the
	// result), and a parameter unchanged.
	r2 := ops.Cond(p, func([]*graph.Node) []*graph.Node { return []*graph.Node{a} }, same, x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	n2, a2 := attrOf(t, r2[0])
	if res := a2.Bodies[0].Results[0]; res.Graph() != a2.Bodies[0].Graph || res.Op() != graph.OpInput || res != a2.Bodies[0].Params[1] {
		t.Errorf("then's result %v is not its parameter for the capture", res)
	}
	if ins := n2.Inputs(); len(ins) != 3 || ins[2] != a {
		t.Errorf("operands %v", ins)
	}
}

// TestControlSealed: a finished body builds nothing more and lends no
// node outside; the error goes to the graph being built.
func TestControlSealed(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	var param *graph.Node
	ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
		param = xt[0]
		return nil, []*graph.Node{ops.Neg(xt[0])}
	}, nil, []*graph.Node{x}, -1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	body := param.Graph()
	if !body.Sealed() || g.Sealed() {
		t.Fatalf("sealed: body %v, top %v", body.Sealed(), g.Sealed())
	}
	// Building on a body parameter after the op returned.
	bad := ops.Exp(param)
	at := line() - 1
	if bad.Valid() {
		t.Fatalf("built %v in a sealed body", bad)
	}
	if body.Err() != nil {
		t.Errorf("the error went to the sealed body: %v", body.Err())
	}
	want := fmt.Sprintf("control_test.go:%d: Exp(f32[]): a node of the body of Scan (built at control_test.go:", at)
	if g.Err() == nil || !strings.HasPrefix(g.Err().Error(), want) || !errors.Is(g.Err(), graph.ErrInvalid) {
		t.Errorf("error %v, want it to start with %q", g.Err(), want)
	}
	// Nor through the graph's own methods.
	if in := body.Input("late", tensor.Float32); in.Valid() {
		t.Errorf("an Input was added to a sealed body")
	}
}

// TestTupleGetChecks: TupleGet's rules reject what is not a tuple read.
func TestTupleGetChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		in   func(g *graph.Graph) *graph.Node
		attr graph.Attr
		want string
	}{
		{"not-u8", func(g *graph.Graph) *graph.Node { return g.Input("t", tensor.Float32, 128) },
			opdef.TupleAttr{DType: tensor.Float32, Shape: tensor.Shape{2}}, "reads a control-flow op's tuple (uint8), got float32"},
		{"misaligned", func(g *graph.Graph) *graph.Node { return g.Input("t", tensor.Uint8, 128) },
			opdef.TupleAttr{Offset: 4, DType: tensor.Float32, Shape: tensor.Shape{2}}, "bad TupleGet attribute"},
		{"past-end", func(g *graph.Graph) *graph.Node { return g.Input("t", tensor.Uint8, 128) },
			opdef.TupleAttr{Offset: 64, DType: tensor.Float64, Shape: tensor.Shape{9}}, "does not fit in a tuple of shape [128]"},
		{"no-attr", func(g *graph.Graph) *graph.Node { return g.Input("t", tensor.Uint8, 128) },
			nil, "TupleGet needs a TupleAttr"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			out := ops.Apply(ops.OpTupleGet, c.attr, c.in(g))
			if out.Valid() || g.Err() == nil || !strings.Contains(g.Err().Error(), c.want) {
				t.Errorf("got %v, error %v: want an error containing %q", out, g.Err(), c.want)
			}
		})
	}
	// A TupleGet in bounds reads as its attribute says.
	g := graph.New()
	out := ops.Apply(ops.OpTupleGet, opdef.TupleAttr{Index: 1, Offset: 64, DType: tensor.Float64, Shape: tensor.Shape{8}}, g.Input("t", tensor.Uint8, 128))
	if !out.Valid() || out.Type() != "f64[8]" {
		t.Errorf("TupleGet %v: %v", out, g.Err())
	}
	// TupleGets of a node that is not a control-flow op is the node itself.
	if r := ops.TupleGets(g.Input("y", tensor.Float32, 2)); len(r) != 1 || r[0].Name() != "y" {
		t.Errorf("TupleGets of an Input = %v", r)
	}
}

// TestControlReference checks the reference evaluators (the source of
// the conformance suite's expected values) on small cases computed by
// hand.
func TestControlReference(t *testing.T) {
	f64 := tensor.Float64
	g := graph.New()
	p := g.Input("p", tensor.Bool)
	x := g.Input("x", f64, 2)
	k := g.Input("k", f64)
	// Cond: then 2x+k, else x-k; x = [1, 2], k = 3: then [5, 7], else
	// [-2, -1] (by hand).
	cond := ops.Cond(p,
		func(xs []*graph.Node) []*graph.Node {
			return []*graph.Node{ops.Add(ops.Mul(ops.Scalar(xs[0], 2), xs[0]), k)}
		},
		func(xs []*graph.Node) []*graph.Node { return []*graph.Node{ops.Sub(xs[0], k)} }, x)
	// While: double x until its sum reaches 20: [1,2] -> [2,4] -> [4,8] -> [8,16] (sum 24, 3 trips);
	// WhileMax(2): [4, 8].
	dbl := func(c []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(c[0], c[0])} }
	wh := ops.While(sumBelow(20), dbl, x)
	wm := ops.WhileMax(2, sumBelow(20), dbl, x)
	// Scan over xs = [[1,2],[3,4],[5,6]]: carry += x_t, y_t = carry * k;
	// forward carries [1,2], [4,6], [9,12]; ys times 3. Reverse:
	// [5,6], [8,10], [9,12]; ys by step index: step 2 first.
	xs := g.Input("xs", f64, 3, 2)
	step := func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
		n := ops.Add(c[0], xt[0])
		return []*graph.Node{n}, []*graph.Node{ops.Mul(n, k)}
	}
	zero := ops.ZerosLike(x)
	fc, fy := ops.Scan(step, []*graph.Node{zero}, []*graph.Node{xs}, -1)
	rc, ry := ops.Scan(step, []*graph.Node{zero}, []*graph.Node{xs}, -1, ops.ScanReverse())
	// Length 0: the initial carry and empty ys.
	ec, ey := ops.Scan(step, []*graph.Node{x}, []*graph.Node{ops.Slice(xs, ops.R(0, 0))}, -1)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	outs := []*graph.Node{cond[0], wh[0], wm[0], fc[0], fy[0], rc[0], ry[0], ec[0], ey[0]}
	feeds := map[*graph.Node]*tensor.Tensor{
		x: exectest.Tensor(f64, []float64{1, 2}, 2), k: exectest.Tensor(f64, []float64{3}, []int{}...),
		xs: exectest.Tensor(f64, []float64{1, 2, 3, 4, 5, 6}, 3, 2),
	}
	want := []string{
		"[5 7]", "[8 16]", "[4 8]",
		"[9 12]", "[3 6 12 18 27 36]",
		"[9 12]", "[27 36 24 30 15 18]",
		"[1 2]", "[]",
	}
	for _, pv := range []bool{true, false} {
		v := 0.0
		if pv {
			v = 1
		}
		feeds[p] = exectest.Tensor(tensor.Bool, []float64{v}, []int{}...)
		got, err := exectest.Eval(outs, feeds)
		if err != nil {
			t.Fatal(err)
		}
		if !pv {
			want[0] = "[-2 -1]"
		}
		for i, w := range want {
			if s := fmt.Sprint(got[i].Float64s()); s != w {
				t.Errorf("pred %v: output %d (%s) = %s, want %s", pv, i, outs[i], s, w)
			}
		}
	}
	if ey[0].Type() != "f64[0,2]" {
		t.Errorf("empty ys %s", ey[0].Type())
	}
}

// TestControlRules: the dtype and shape rules check a hand-made
// control-flow node (ops.Apply with a built op's attribute) against its
// bodies, as the builders do.
func TestControlRules(t *testing.T) {
	f32 := tensor.Float32
	g := graph.New()
	c, xs, w := g.Input("c", f32, 2), g.Input("xs", f32, 3, 2), g.Input("w", f32, 2)
	carry, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
		return []*graph.Node{ops.Add(ops.Mul(c[0], w), x[0])}, []*graph.Node{ops.Sum(c[0])}
	}, []*graph.Node{c}, []*graph.Node{xs}, -1)
	scan, _ := attrOf(t, carry[0])
	sa := scan.Attr()
	cond := ops.Cond(g.Input("p", tensor.Bool), same, same, c)
	cn, _ := attrOf(t, cond[0])
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		op   graph.Op
		attr graph.Attr
		in   func(h *graph.Graph) []*graph.Node
		want string
	}{
		{"same-operands", ops.OpScan, sa, func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("c", f32, 2), h.Input("xs", f32, 3, 2), h.Input("w", f32, 2)}
		}, ""},
		{"operand-dtype", ops.OpScan, sa, func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("c", tensor.Float64, 2), h.Input("xs", f32, 3, 2), h.Input("w", f32, 2)}
		}, "Scan(f64[2], f32[3,2], f32[2]): Scan: parameter 0 of body 0 is f32, its operand gives f64"},
		{"x-length", ops.OpScan, sa, func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("c", f32, 2), h.Input("xs", f32, 4, 2), h.Input("w", f32, 2)}
		}, "Scan: x 0 has shape [4,2], its leading axis must be the length 3"},
		{"missing-capture", ops.OpScan, sa, func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("c", f32, 2), h.Input("xs", f32, 3, 2)}
		}, "body 0 has 3 parameters for 2 operands"},
		{"wrong-kind", ops.OpWhile, sa, func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("c", f32, 2)}
		}, "While needs a *ControlAttr of its kind"},
		{"cond-pred", ops.OpCond, cn.Attr(), func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("p", tensor.Int32), h.Input("c", f32, 2)}
		}, "Cond(i32[], f32[2]): Cond's predicate must be a bool scalar, got i32"},
		{"no-attr", ops.OpCond, nil, func(h *graph.Graph) []*graph.Node {
			return []*graph.Node{h.Input("p", tensor.Bool), h.Input("c", f32, 2)}
		}, "Cond needs a *ControlAttr of its kind, got <nil>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := graph.New()
			n := ops.Apply(tc.op, tc.attr, tc.in(h)...)
			if tc.want == "" {
				if !n.Valid() || n.Type() != scan.Type() {
					t.Fatalf("%v: %v", n, h.Err())
				}
				return
			}
			if n.Valid() || h.Err() == nil || !strings.Contains(h.Err().Error(), tc.want) {
				t.Errorf("got %v, error %v: want an error containing %q", n, h.Err(), tc.want)
			}
		})
	}
}

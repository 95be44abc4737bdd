package autodiff_test

// Regression tests for issue 12 ("Trust"): differentiation through nodes a
// user made by hand, bad custom rules, nil arguments and oversized
// Jacobians end in build errors, never panics.

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// gradMustFail differentiates y with respect to x and expects an invalid
// gradient carrying an error that contains want, without a panic.
func gradMustFail(t *testing.T, name string, y, x *graph.Node, want string) {
	t.Helper()
	var gr []*graph.Node
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: Grad panicked: %v", name, r)
			}
		}()
		gr = autodiff.Grad(y, x)
	}()
	if len(gr) != 1 || gr[0].Valid() || gr[0].Err() == nil || !strings.Contains(gr[0].Err().Error(), want) {
		t.Errorf("%s: Grad = %v (%v), want an error containing %q", name, gr, gr[0].Err(), want)
	}
}

// TestGradThroughHandMadeNodes (defect 12): graph.Add builds nodes without
// the ops' rules; Grad checks each node before its rule uses the
// attribute (it panicked on a Sum without axes and on a CustomGrad
// without a rule).
func TestGradThroughHandMadeNodes(t *testing.T) {
	cases := []struct {
		name string
		spec func(x *graph.Node) graph.Spec
	}{
		{"sum-without-axes", func(x *graph.Node) graph.Spec {
			return graph.Spec{Op: ops.OpSum, Inputs: []*graph.Node{x}, DType: tensor.Float64, Shape: tensor.Shape{}}
		}},
		{"custom-without-rule", func(x *graph.Node) graph.Spec {
			return graph.Spec{Op: ops.OpCustomGrad, Attr: opdef.CustomAttr{Name: "r"}, Inputs: []*graph.Node{x, x}, DType: tensor.Float64, Shape: tensor.Shape{3}}
		}},
		{"custom-without-attr", func(x *graph.Node) graph.Spec {
			return graph.Spec{Op: ops.OpCustomGrad, Inputs: []*graph.Node{x, x}, DType: tensor.Float64, Shape: tensor.Shape{3}}
		}},
		{"transpose-bad-perm", func(x *graph.Node) graph.Spec {
			return graph.Spec{Op: ops.OpTranspose, Attr: opdef.PermAttr{Perm: []int{5}}, Inputs: []*graph.Node{x}, DType: tensor.Float64, Shape: tensor.Shape{3}}
		}},
		{"wrong-shape", func(x *graph.Node) graph.Spec {
			return graph.Spec{Op: ops.OpExp, Inputs: []*graph.Node{x}, DType: tensor.Float64, Shape: tensor.Shape{4}}
		}},
	}
	for _, c := range cases {
		g := graph.New()
		x := g.Input("x", tensor.Float64, 3)
		n := g.Add(c.spec(x))
		if !n.Valid() {
			t.Fatalf("%s: Add: %v", c.name, g.Err())
		}
		gradMustFail(t, c.name, ops.Sum(n), x, "does not obey its op's rules")
	}
}

// TestCustomRuleOtherGraph: a custom rule that returns a node of another
// graph is an error (it was added to this graph's cotangents).
func TestCustomRuleOtherGraph(t *testing.T) {
	g, h := graph.New(), graph.New()
	x := g.Input("x", tensor.Float64, 3)
	other := h.Input("o", tensor.Float64, 3)
	y := ops.CustomGradient("leak", ops.Exp(x), []*graph.Node{x}, func(dy *graph.Node) []*graph.Node {
		return []*graph.Node{other}
	})
	gradMustFail(t, "other-graph", ops.Sum(y), x, "another graph")
}

// TestNilArguments (defect 13): nil and invalid arguments to every
// exported function of autodiff give invalid nodes, not panics.
func TestNilArguments(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	y := ops.Sum(ops.Mul(x, x))
	for name, f := range map[string]func() []*graph.Node{
		"Grad(nil)":         func() []*graph.Node { return autodiff.Grad(nil, x) },
		"Grad(y, nil)":      func() []*graph.Node { return autodiff.Grad(y, nil) },
		"VJP(nil)":          func() []*graph.Node { return autodiff.VJP(nil, []*graph.Node{x}, nil) },
		"VJP(nil cot)":      func() []*graph.Node { return autodiff.VJP([]*graph.Node{y}, []*graph.Node{x}, []*graph.Node{nil}) },
		"Jacobian(nil, x)":  func() []*graph.Node { return []*graph.Node{autodiff.Jacobian(nil, x)} },
		"Jacobian(y, nil)":  func() []*graph.Node { return []*graph.Node{autodiff.Jacobian(y, nil)} },
		"Hessian(nil, nil)": func() []*graph.Node { return []*graph.Node{autodiff.Hessian(nil, nil)} },
		"HVP(y, x, nil)":    func() []*graph.Node { return []*graph.Node{autodiff.HVP(y, x, nil)} },
		"HVP(nil...)":       func() []*graph.Node { return []*graph.Node{autodiff.HVP(nil, nil, nil)} },
	} {
		var out []*graph.Node
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s panicked: %v", name, r)
				}
			}()
			out = f()
		}()
		for _, n := range out {
			if n.Valid() || n.Err() == nil {
				t.Errorf("%s = %v, want an invalid node with an error", name, n)
			}
		}
	}
}

// TestJacobianLimits: a Jacobian of more than MaxJacobianRows rows, or
// whose byte size overflows, is a build error (each row is a reverse
// sweep; it allocated a one-hot constant of y's size per row).
func TestJacobianLimits(t *testing.T) {
	g := graph.New()
	s := g.Input("s", tensor.Float32)
	y := ops.BroadcastTo(s, autodiff.MaxJacobianRows+1)
	if j := autodiff.Jacobian(y, s); j.Valid() || !errors.Is(g.Err(), graph.ErrShape) || !strings.Contains(g.Err().Error(), "MaxJacobianRows") {
		t.Errorf("Jacobian of %d rows: %v, %v", autodiff.MaxJacobianRows+1, j, g.Err())
	}
	h := graph.New()
	x := h.Input("x", tensor.Float32, 1<<31)
	y = ops.BroadcastTo(h.Input("t", tensor.Float32), 1<<31)
	if j := autodiff.Jacobian(y, x); j.Valid() || !strings.Contains(h.Err().Error(), "too large") {
		t.Errorf("a Jacobian of 2^62 floats: %v, %v", j, h.Err())
	}
}

// TestJacobianPaddedOneHots: the Jacobian with one-hot cotangents built by
// Pad is right for a y of several rows, computed at run time (no folding
// of the Pads past 64 elements). y = 2·x·v with x of 70 elements and v a
// constant: dy[i]/dx[j] = 2·v[i] when i == j, else 0 (hand).
func TestJacobianPaddedOneHots(t *testing.T) {
	g := graph.New()
	const n = 70
	x := g.Input("x", tensor.Float64, n)
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	vt, _ := tensor.FromFloat64s(tensor.Float64, vals)
	y := ops.Mul(ops.Mul(x, g.Const(vt)), ops.Scalar(x, 2))
	j := autodiff.Jacobian(y, x)
	got := run(t, []*graph.Node{j}, exec.Feeds{x: vt})[0]
	if !got.Shape().Equal(tensor.Shape{n, n}) {
		t.Fatalf("Jacobian is %v", got.Shape())
	}
	for i := range n {
		for k := range n {
			want := 0.0
			if i == k {
				want = 2 * vals[i]
			}
			if v := got.Float64(i*n + k); v != want {
				t.Fatalf("J[%d,%d] = %v, want %v", i, k, v, want)
			}
		}
	}
}

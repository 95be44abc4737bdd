package ops_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestBuildErrors checks every kind of bad input a builder can get: the
// error names the call site (this file), the op and the operand types,
// wraps the right sentinel, is sticky, and nothing panics.
func TestBuildErrors(t *testing.T) {
	site := regexp.MustCompile(`^errors_test\.go:\d+: `)
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		kind  error
		want  []string
	}{
		{"matmul-inner", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 4, 5))
		}, graph.ErrShape, []string{"MatMul(f32[2,3], f32[4,5]): inner dimensions 3 and 4 differ"}},
		{"matmul-batch", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32, 2, 2, 3), g.Input("b", tensor.Float32, 3, 3, 4))
		}, graph.ErrShape, []string{"MatMul(f32[2,2,3], f32[3,3,4])", "batch dimensions [2] and [3] do not broadcast"}},
		{"matmul-scalar", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32), g.Input("b", tensor.Float32, 3))
		}, graph.ErrShape, []string{"MatMul(f32[], f32[3])", "ops.Mul"}},
		{"matmul-int", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Int32, 2, 2), g.Input("b", tensor.Int32, 2, 2))
		}, graph.ErrDType, []string{"MatMul(i32[2,2], i32[2,2])", "float"}},
		{"broadcast", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 4))
		}, graph.ErrShape, []string{"Add(f32[2,3], f32[4])", "shapes [2,3] and [4] do not broadcast"}},
		{"broadcast-where", func(g *graph.Graph) *graph.Node {
			return ops.Where(g.Input("c", tensor.Bool, 3), g.Input("a", tensor.Float64, 2, 3), g.Input("b", tensor.Float64, 2))
		}, graph.ErrShape, []string{"Where(b8[3], f64[2,3], f64[2])", "does not broadcast"}},
		{"axis-range", func(g *graph.Graph) *graph.Node {
			return ops.Sum(g.Input("a", tensor.Float32, 2, 3), 2)
		}, graph.ErrShape, []string{"Sum(f32[2,3]): axis 2 is out of range for rank 2 (valid: -2..1)"}},
		{"axis-negative-range", func(g *graph.Graph) *graph.Node {
			return ops.Softmax(g.Input("a", tensor.Float32, 2, 3), -3)
		}, graph.ErrShape, []string{"Softmax(f32[2,3]): axis -3 is out of range"}},
		{"axis-repeated", func(g *graph.Graph) *graph.Node {
			return ops.Max(g.Input("a", tensor.Float32, 2, 3), 1, -1)
		}, graph.ErrShape, []string{"Max(f32[2,3]): axis -1 is repeated in [1,-1]"}},
		{"axis-scalar", func(g *graph.Graph) *graph.Node {
			return ops.Sum(g.Input("a", tensor.Float32), 0)
		}, graph.ErrShape, []string{"Sum(f32[]): axis 0 is out of range for a scalar"}},
		{"max-empty", func(g *graph.Graph) *graph.Node {
			return ops.Max(g.Input("a", tensor.Float32, 0, 3), 0)
		}, graph.ErrShape, []string{"Max(f32[0,3]): axis 0 has length 0"}},
		{"reshape-size", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("a", tensor.Float32, 2, 3), 4, 2)
		}, graph.ErrShape, []string{"Reshape(f32[2,3]): cannot reshape [2,3] (6 elements) to [4,2] (8 elements)"}},
		{"reshape-two-infer", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("a", tensor.Float32, 2, 3), -1, -1)
		}, graph.ErrShape, []string{"Reshape(f32[2,3]): target [-1,-1] has more than one -1"}},
		{"reshape-infer-fails", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("a", tensor.Float32, 2, 3), 4, -1)
		}, graph.ErrShape, []string{"cannot infer the -1 in [4,-1] for 6 elements"}},
		{"transpose-perm", func(g *graph.Graph) *graph.Node {
			return ops.Transpose(g.Input("a", tensor.Float32, 2, 3, 4), 0, 0, 1)
		}, graph.ErrShape, []string{"Transpose(f32[2,3,4]): perm [0,0,1] is not a permutation of 0..2"}},
		{"transpose-len", func(g *graph.Graph) *graph.Node {
			return ops.Transpose(g.Input("a", tensor.Float32, 2, 3, 4), 1, 0)
		}, graph.ErrShape, []string{"perm [1,0] has 2 entries for rank 3"}},
		{"slice-bounds", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4, 3), ops.R(0, 2), ops.R(1, 5))
		}, graph.ErrShape, []string{"Slice(f32[4,3]): axis 1: range 1:5:1 is out of bounds for length 3"}},
		{"slice-reversed", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4), ops.R(3, 1))
		}, graph.ErrShape, []string{"axis 0: range 3:1:1 is out of bounds for length 4"}},
		{"slice-negative-step", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4), ops.RS(3, 0, -1))
		}, graph.ErrShape, []string{"step -1 is negative"}},
		{"slice-too-many", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4), ops.All, ops.All)
		}, graph.ErrShape, []string{"2 ranges for rank 1"}},
		{"concat-shapes", func(g *graph.Graph) *graph.Node {
			return ops.Concat(0, g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 2, 4))
		}, graph.ErrShape, []string{"Concat(f32[2,3], f32[2,4])", "differs from [2,3] outside axis 0"}},
		{"broadcastto", func(g *graph.Graph) *graph.Node {
			return ops.BroadcastTo(g.Input("a", tensor.Float32, 2, 3), 3, 3)
		}, graph.ErrShape, []string{"BroadcastTo(f32[2,3]): cannot broadcast [2,3] to [3,3]"}},
		{"mixed-kinds", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2), g.Input("b", tensor.Int32, 2))
		}, graph.ErrDType, []string{"Add(f32[2], i32[2]): mixed dtypes float32 and int32", "use ops.Cast"}},
		{"bool-arith", func(g *graph.Graph) *graph.Node {
			return ops.Mul(g.Input("a", tensor.Bool, 2), g.Input("b", tensor.Bool, 2))
		}, graph.ErrDType, []string{"Mul(b8[2], b8[2])", "numeric", "use ops.Cast"}},
		{"int-exp", func(g *graph.Graph) *graph.Node {
			return ops.Exp(g.Input("a", tensor.Int64, 2))
		}, graph.ErrDType, []string{"Exp(i64[2]): requires a float dtype", "use ops.Cast"}},
		{"half-arith", func(g *graph.Graph) *graph.Node {
			return ops.Neg(g.Input("a", tensor.Float16, 2))
		}, graph.ErrDType, []string{"Neg(f16[2])", "storage type"}},
		{"where-cond", func(g *graph.Graph) *graph.Node {
			x := g.Input("a", tensor.Float32, 2)
			return ops.Where(x, x, x)
		}, graph.ErrDType, []string{"Where(f32[2], f32[2], f32[2]): condition must be bool"}},
		{"scalar-int", func(g *graph.Graph) *graph.Node {
			return ops.Scalar(g.Input("a", tensor.Int32, 2), 0.5)
		}, graph.ErrDType, []string{"Scalar(i32[2]): 0.5 is not an integer"}},
		{"nil-operand", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2), nil)
		}, graph.ErrInvalid, []string{"Add(f32[2], nil): operand 1 is nil"}},
		{"other-graph", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2), graph.New().Input("b", tensor.Float32, 2))
		}, graph.ErrInvalid, []string{"Add(f32[2], f32[2]): operand 1 belongs to another graph"}},
		{"duplicate-name", func(g *graph.Graph) *graph.Node {
			g.Input("a", tensor.Float32, 2)
			return g.Input("a", tensor.Float32, 3)
		}, graph.ErrInvalid, []string{`Input(): name "a" is already used by Input f32[2]`}},
		{"nil-variable", func(g *graph.Graph) *graph.Node {
			return g.Variable("w", nil)
		}, graph.ErrInvalid, []string{`Variable(): "w": nil initial value`}},
		{"negative-dim", func(g *graph.Graph) *graph.Node {
			return g.Input("a", tensor.Float32, 2, -1)
		}, graph.ErrShape, []string{`Input(): "a": dimension 1 of shape [2,-1] is negative`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			n := c.build(g)
			if n.Valid() {
				t.Fatalf("built %s without an error", n)
			}
			err := g.Err()
			if err == nil {
				t.Fatalf("no error recorded on the graph")
			}
			if n.Err() == nil || n.Err().Error() != err.Error() {
				t.Errorf("the invalid node carries %v, the graph %v", n.Err(), err)
			}
			msg := err.Error()
			if !site.MatchString(msg) {
				t.Errorf("error %q does not start with this file's call site", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q does not wrap %v", msg, c.kind)
			}
			var ge *graph.Error
			if !errors.As(err, &ge) || ge.Op == "" {
				t.Errorf("error is not a *graph.Error with an op")
			}
			// Sticky: later builders return invalid nodes, the first error stays.
			later := ops.Neg(g.Input("z", tensor.Float32, 1))
			if later.Valid() || g.Err() != err {
				t.Errorf("the error is not sticky")
			}
			// Methods of invalid nodes do not panic.
			_ = n.Shape().String() + n.Type() + n.String() + later.Name()
			// Other graphs are unaffected.
			h := graph.New()
			if y := ops.Add(h.Input("a", tensor.Float32, 2), h.Input("b", tensor.Float32, 2)); !y.Valid() || h.Err() != nil {
				t.Errorf("a fresh graph is affected: %v", h.Err())
			}
		})
	}
}

// TestNilEverywhere feeds nil and invalid nodes to every builder: each
// returns an invalid node carrying an error, without panicking.
func TestNilEverywhere(t *testing.T) {
	unaries := map[string]func(*graph.Node) *graph.Node{
		"Neg": ops.Neg, "Abs": ops.Abs, "Sign": ops.Sign, "Exp": ops.Exp, "Log": ops.Log, "Sqrt": ops.Sqrt,
		"Tanh": ops.Tanh, "Sigmoid": ops.Sigmoid, "Relu": ops.Relu, "Sin": ops.Sin, "Cos": ops.Cos, "Not": ops.Not,
		"StopGradient": ops.StopGradient, "Square": ops.Square, "ZerosLike": ops.ZerosLike, "OnesLike": ops.OnesLike,
		"Sum": func(x *graph.Node) *graph.Node { return ops.Sum(x) }, "Mean": func(x *graph.Node) *graph.Node { return ops.Mean(x) },
		"Max": func(x *graph.Node) *graph.Node { return ops.Max(x) }, "ArgMax": func(x *graph.Node) *graph.Node { return ops.ArgMax(x) },
		"Reshape":   func(x *graph.Node) *graph.Node { return ops.Reshape(x, 1) },
		"Transpose": func(x *graph.Node) *graph.Node { return ops.Transpose(x) },
		"Slice":     func(x *graph.Node) *graph.Node { return ops.Slice(x) },
		"Softmax":   func(x *graph.Node) *graph.Node { return ops.Softmax(x, 0) },
		"Cast":      func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Float64) },
		"Scalar":    func(x *graph.Node) *graph.Node { return ops.Scalar(x, 1) },
		"Bcast":     func(x *graph.Node) *graph.Node { return ops.BroadcastTo(x, 2) },
		"Concat":    func(x *graph.Node) *graph.Node { return ops.Concat(0, x) },
		"SumTo":     func(x *graph.Node) *graph.Node { return ops.SumTo(x, tensor.Shape{1}) },
		"LSE":       func(x *graph.Node) *graph.Node { return ops.LogSumExp(x) },
		"Expand":    func(x *graph.Node) *graph.Node { return ops.ExpandDims(x, 0) },
		"Squeeze":   func(x *graph.Node) *graph.Node { return ops.Squeeze(x) },
	}
	binaries := map[string]func(a, b *graph.Node) *graph.Node{
		"Add": ops.Add, "Sub": ops.Sub, "Mul": ops.Mul, "Div": ops.Div, "Pow": ops.Pow, "Maximum": ops.Maximum,
		"Minimum": ops.Minimum, "Equal": ops.Equal, "Less": ops.Less, "Greater": ops.Greater, "And": ops.And,
		"Or": ops.Or, "MatMul": ops.MatMul,
	}
	detached := ops.Neg(nil) // an invalid node of no graph
	for name, f := range unaries {
		for _, in := range []*graph.Node{nil, detached} {
			if out := f(in); out.Valid() || out.Err() == nil {
				t.Errorf("%s(%v) = %v, want an invalid node with an error", name, in, out)
			}
		}
	}
	for name, f := range binaries {
		if out := f(nil, nil); out.Valid() || out.Err() == nil {
			t.Errorf("%s(nil, nil) did not fail", name)
		}
		g := graph.New()
		x := g.Input("x", tensor.Float32, 2)
		if out := f(x, detached); out.Valid() || g.Err() == nil {
			t.Errorf("%s(x, invalid) did not record an error", name)
		}
	}
	if out := ops.Where(nil, nil, nil); out.Valid() {
		t.Errorf("Where(nil...) succeeded")
	}
	if out := ops.Concat(0); out.Valid() {
		t.Errorf("Concat() succeeded")
	}
}

package autodiff_test

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the control-flow ops' gradients
// (ops/control_grad.go). They run on the reference evaluator
// (exectest.Eval, float64) and on the CPU backend, the checks of
// TestFiniteDifferences: y = Σ f·R, central differences, 1e-6.
var controlGradCases = map[string][]gradCase{}

// refRunner evaluates with exectest.Eval, the float64 reference.
func refRunner(outputs []*graph.Node) (func(exec.Feeds) ([]*tensor.Tensor, error), func(), error) {
	return func(f exec.Feeds) ([]*tensor.Tensor, error) { return exectest.Eval(outputs, f) }, func() {}, nil
}

func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	add := func(name string, cs ...gradCase) { controlGradCases[name] = append(controlGradCases[name], cs...) }
	n1 := func(ns []*graph.Node) *graph.Node { return ns[0] }

	// Cond: the branch taken is the sign of sum(x0); x1 is captured by
	// both branches (read directly, not passed as an operand).
	cond := func(x []*graph.Node) []*graph.Node {
		pred := ops.Greater(ops.Sum(x[0]), ops.Scalar(x[0], 0))
		return ops.Cond(pred,
			func(p []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Mul(p[0], ops.Sin(x[1])), ops.Mul(p[0], p[0])}
			},
			func(p []*graph.Node) []*graph.Node {
				return []*graph.Node{ops.Add(p[0], ops.Exp(x[1])), ops.Sin(p[0])}
			}, x[0])
	}
	add("Cond",
		gradCase{"then", []operand{{s(3), uniform(0.5, 1.5)}, {s(3), uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node { return n1(cond(x)) }},
		gradCase{"else", []operand{{s(3), uniform(-1.5, -0.5)}, {s(3), uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node { return n1(cond(x)) }},
		// Both results reach y (the second squared).
		gradCase{"two-results", []operand{{s(2), uniform(-1.5, -0.5)}, {s(2), uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node {
			r := cond(x)
			return ops.Add(r[0], ops.Mul(r[1], r[1]))
		}},
		// A branch returning its operand unchanged (the cotangent passes
		// through), the other a constant (no cotangent).
		gradCase{"identity-and-const", op1(s(2, 2), uniform(0.5, 1.5)), func(x []*graph.Node) *graph.Node {
			pred := ops.Less(ops.Sum(x[0]), ops.Scalar(x[0], 0))
			return ops.Mul(x[0], n1(ops.Cond(pred,
				func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.ZerosLike(p[0])} },
				func(p []*graph.Node) []*graph.Node { return []*graph.Node{p[0]} }, x[0])))
		}},
		// The second derivative through a Cond (in the else branch):
		// f = d/dx1 Σ r0·r1.
		gradCase{"second-order", []operand{{s(2), uniform(-1.5, -0.5)}, {s(2), uniform(-2, 2)}}, func(x []*graph.Node) *graph.Node {
			r := cond(x)
			return autodiff.Grad(ops.Sum(ops.Mul(r[0], ops.Exp(r[1]))), x[1])[0]
		}},
	)

	// Scan: h' = tanh(h·W + x_t), y_t = h'·x_t; f = Σ_t y_t + h_final.
	// h is a carry, x is scanned, W is captured.
	rnn := func(opts ...ops.LoopOption) func(x []*graph.Node) *graph.Node {
		return func(x []*graph.Node) *graph.Node {
			c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Tanh(ops.Add(ops.MatMul(c[0], x[2]), xt[0]))
				return []*graph.Node{h}, []*graph.Node{ops.Mul(h, xt[0])}
			}, []*graph.Node{x[0]}, []*graph.Node{x[1]}, 4, opts...)
			return ops.Add(ops.Sum(ys[0], 0), c[0])
		}
	}
	rnnIn := []operand{{s(3), uniform(-1, 1)}, {s(4, 3), uniform(-1, 1)}, {s(3, 3), uniform(-0.8, 0.8)}}
	add("Scan",
		gradCase{"carry-xs-capture", rnnIn, rnn()},
		gradCase{"reverse", rnnIn, rnn(ops.ScanReverse())},
		gradCase{"remat", rnnIn, rnn(ops.ScanRemat())},
		gradCase{"remat-reverse", rnnIn, rnn(ops.ScanRemat(), ops.ScanReverse())},
		// Only the stacked ys reach y, and two carries, one an int
		// counter (no cotangent) that scales each step: h' = h·sin(x_t) +
		// k·x_t, k' = k+1.
		gradCase{"ys-int-counter", []operand{{s(2), uniform(-1, 1)}, {s(3, 2), uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node {
			k0 := ops.Full(x[0].Graph(), tensor.Int32, 1)
			_, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				k := ops.Cast(c[1], tensor.Float64)
				h := ops.Add(ops.Mul(c[0], ops.Sin(xt[0])), ops.Mul(k, xt[0]))
				return []*graph.Node{h, ops.Add(c[1], ops.Scalar(c[1], 1))}, []*graph.Node{ops.Mul(h, h)}
			}, []*graph.Node{x[0], k0}, []*graph.Node{x[1]}, 3)
			return ys[0]
		}},
		// A Scan in a Scan's body: the inner one runs two steps of
		// h = sin(h·x_t + w) over each outer step's x_t; w is captured by
		// the inner body from the outer graph (two levels out).
		gradCase{"nested", []operand{{s(2), uniform(-1, 1)}, {s(3, 2), uniform(-1, 1)}, {s(2), uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node {
			c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				ic, _ := ops.Scan(func(d, _ []*graph.Node) ([]*graph.Node, []*graph.Node) {
					return []*graph.Node{ops.Sin(ops.Add(ops.Mul(d[0], xt[0]), x[2]))}, nil
				}, []*graph.Node{c[0]}, nil, 2)
				return ic, []*graph.Node{ops.Mul(ic[0], c[0])}
			}, []*graph.Node{x[0]}, []*graph.Node{x[1]}, 3)
			return ops.Add(ops.Sum(ys[0], 0), ops.Mul(c[0], c[0]))
		}},
		// A Cond in the body whose branch depends on the step's x (the
		// rows' sums are ±1.5 or more, clear of the switch at 0): sin(h)·x_t
		// or h·x_t + w.
		gradCase{"cond-in-body", []operand{{s(2), uniform(-1, 1)}, fixed(s(3, 2), 1, 0.5, -1, -0.8, 0.9, 0.7), {s(2), uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node {
			c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Cond(ops.Greater(ops.Sum(xt[0]), ops.Scalar(xt[0], 0)),
					func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.Mul(ops.Sin(p[0]), p[1])} },
					func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.Add(ops.Mul(p[0], p[1]), x[2])} },
					c[0], xt[0])
				return h, []*graph.Node{ops.Exp(h[0])}
			}, []*graph.Node{x[0]}, []*graph.Node{x[1]}, 3)
			return ops.Add(ops.Sum(ys[0], 0), c[0])
		}},
		// No steps: the carry is the init, the ys empty.
		gradCase{"length-0", []operand{{s(2), uniform(-1, 1)}, {s(0, 2), uniform(-1, 1)}}, func(x []*graph.Node) *graph.Node {
			c, _ := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Mul(c[0], xt[0])}, []*graph.Node{c[0]}
			}, []*graph.Node{x[0]}, []*graph.Node{x[1]}, 0)
			return ops.Mul(c[0], c[0])
		}},
		// The second derivative: f is the gradient of Σ_t y_t + h_final
		// with respect to W, and the check differentiates it again.
		gradCase{"second-order", rnnIn, func(x []*graph.Node) *graph.Node {
			return autodiff.Grad(ops.Sum(rnn()(x)), x[2])[0]
		}},
		gradCase{"second-order-remat", rnnIn, func(x []*graph.Node) *graph.Node {
			return autodiff.Grad(ops.Sum(rnn(ops.ScanRemat())(x)), x[0])[0]
		}},
	)

	// WhileMax: c = c·1.5 + sin(w)·0.1 while sum(c) < 4, with an int
	// trip counter. From c = [0.6, 0.7] the sums are 1.3, ~2, ~3, ~4.5:
	// three trips, the bound 10 not hit (and far from the threshold, so
	// the trip count does not change under the finite differences'
	// steps); with the bound 2 the loop stops at it.
	grow := func(max int) func(x []*graph.Node) *graph.Node {
		return func(x []*graph.Node) *graph.Node {
			k0 := ops.Full(x[0].Graph(), tensor.Int64, 0)
			r := ops.WhileMax(max, func(c []*graph.Node) *graph.Node {
				return ops.Less(ops.Sum(c[0]), ops.Scalar(c[0], 4))
			}, func(c []*graph.Node) []*graph.Node {
				next := ops.Add(ops.Mul(c[0], ops.Scalar(c[0], 1.5)), ops.Mul(ops.Sin(x[1]), ops.Scalar(x[1], 0.1)))
				return []*graph.Node{next, ops.Add(c[1], ops.Scalar(c[1], 1))}
			}, x[0], k0)
			return ops.Mul(r[0], ops.Cast(r[1], tensor.Float64))
		}
	}
	whileIn := []operand{fixed(s(2), 0.6, 0.7), {s(2), uniform(-1, 1)}}
	add("While",
		gradCase{"bound-not-hit", whileIn, grow(10)},
		gradCase{"bound-hit", whileIn, grow(2)},
		// The second derivative: d/dw of Σ f, differentiated again.
		gradCase{"second-order", whileIn, func(x []*graph.Node) *graph.Node {
			return autodiff.Grad(ops.Sum(ops.Mul(grow(10)(x), x[1])), x[1])[0]
		}},
	)
}

// TestControlFiniteDifferences checks the control-flow gradients against
// central differences, evaluated by the reference evaluator.
func TestControlFiniteDifferences(t *testing.T) {
	names := make([]string, 0, len(controlGradCases))
	for n := range controlGradCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for oi, name := range names {
		for ci, c := range controlGradCases[name] {
			t.Run("ref/"+name+"/"+c.name, func(t *testing.T) {
				gradCheckWith(t, refRunner, c, uint64(1000+oi*16+ci), fdStep[name+"/"+c.name], hand[name+"/"+c.name])
			})
		}
	}
}

// An unbounded While has no gradient: a build error naming WhileMax.
func TestWhileWithoutBoundNotDifferentiable(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float64, 2)
	r := ops.While(func(c []*graph.Node) *graph.Node {
		return ops.Less(ops.Sum(c[0]), ops.Scalar(c[0], 4))
	}, func(c []*graph.Node) []*graph.Node {
		return []*graph.Node{ops.Mul(c[0], ops.Scalar(c[0], 2))}
	}, x)
	gr := autodiff.Grad(ops.Sum(r[0]), x)[0]
	if gr.Valid() {
		t.Fatal("the gradient through an unbounded While is valid")
	}
	err := g.Err()
	if err == nil || !errors.Is(err, graph.ErrInvalid) || !strings.Contains(err.Error(), "use ops.WhileMax") ||
		!strings.Contains(err.Error(), "gradcheck_control_test.go") {
		t.Fatalf("error %v: want an ErrInvalid naming ops.WhileMax and the While's call site", err)
	}
}

// The Scan rule's structure: an extended forward Scan (Extends the
// original, the same operands, the same first results) saving the
// residuals, and a backward Scan running the other way.
func TestScanGradStructure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []ops.LoopOption
		resid int
	}{
		// The body h' = tanh(h·W + x_t), y_t = h'·x_t: its VJP reads the
		// incoming carry h (W's cotangent is h^T·δ), h' (tanh' = 1-h'^2, and
		// y_t's cotangent times h'), and x_t, which is scanned again, not
		// saved; W is a capture. So two residuals.
		{"saved", nil, 2},
		// Remat saves the incoming carry only.
		{"remat", []ops.LoopOption{ops.ScanRemat()}, 1},
		{"remat-reverse", []ops.LoopOption{ops.ScanRemat(), ops.ScanReverse()}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := graph.New()
			h0 := g.Input("h", tensor.Float64, 3)
			xs := g.Input("xs", tensor.Float64, 4, 3)
			w := g.Input("w", tensor.Float64, 3, 3)
			c, ys := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				h := ops.Tanh(ops.Add(ops.MatMul(c[0], w), xt[0]))
				return []*graph.Node{h}, []*graph.Node{ops.Mul(h, xt[0])}
			}, []*graph.Node{h0}, []*graph.Node{xs}, 4, tc.opts...)
			orig := c[0].Input(0)
			oa := orig.Attr().(*opdef.ControlAttr)
			gr := autodiff.Grad(ops.Add(ops.Sum(ys[0]), ops.Sum(c[0])), h0, xs, w)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			var ext, bwd []*graph.Node
			for _, n := range g.Nodes() {
				if n.Op() != ops.OpScan || n == orig {
					continue
				}
				if n.Attr().(*opdef.ControlAttr).Extends != nil {
					ext = append(ext, n)
				} else {
					bwd = append(bwd, n)
				}
			}
			if len(ext) != 1 || len(bwd) != 1 {
				t.Fatalf("%d extended and %d other Scans, want 1 and 1", len(ext), len(bwd))
			}
			ea := ext[0].Attr().(*opdef.ControlAttr)
			if ea.Extends != oa || !slices.Equal(ext[0].Inputs(), orig.Inputs()) || ea.Reverse != oa.Reverse || ea.Remat != oa.Remat {
				t.Errorf("extended Scan %s (operands %v) does not extend %s (operands %v)", ea, ext[0].Inputs(), oa, orig.Inputs())
			}
			if got := len(ea.Outs) - len(oa.Outs); got != tc.resid {
				t.Errorf("%d residuals saved, want %d", got, tc.resid)
			}
			for i, o := range oa.Outs {
				if !ea.Outs[i].Equal(o) {
					t.Errorf("extended result %d is %s, the original's %s", i, ea.Outs[i], o)
				}
			}
			ba := bwd[0].Attr().(*opdef.ControlAttr)
			if ba.Reverse == oa.Reverse || ba.Length != 4 {
				t.Errorf("backward Scan %s: want the other direction than %s, length 4", ba, oa)
			}
			// The gradients come out of the backward Scan: h's and w's as
			// its final carries, xs' as its ys.
			for i, n := range gr {
				if n.Op() != ops.OpTupleGet || n.Input(0) != bwd[0] {
					t.Errorf("gradient %d is %s, not a result of the backward Scan", i, n)
				}
			}
		})
	}
}

// A non-differentiable op on the path inside a body fails the gradient
// with an error naming it and its line in the body.
func TestControlGradBodyErrors(t *testing.T) {
	build := map[string]func(x, h *graph.Node) *graph.Node{
		"Scan": func(x, h *graph.Node) *graph.Node {
			c, _ := ops.Scan(func(c, xt []*graph.Node) ([]*graph.Node, []*graph.Node) {
				am := ops.Cast(ops.ArgMax(ops.Mul(c[0], xt[0]), 0), tensor.Float64) // the ArgMax
				return []*graph.Node{ops.Add(c[0], am)}, nil
			}, []*graph.Node{h}, []*graph.Node{x}, 3)
			return c[0]
		},
		"Cond": func(x, h *graph.Node) *graph.Node {
			return ops.Cond(ops.Greater(ops.Sum(h), ops.Scalar(h, 0)),
				func(p []*graph.Node) []*graph.Node {
					return []*graph.Node{ops.Cast(ops.ArgMax(p[0], 0), tensor.Float64)} // the ArgMax
				},
				func(p []*graph.Node) []*graph.Node { return []*graph.Node{ops.Sum(p[0], 0)} }, x)[0]
		},
	}
	for name, f := range build {
		t.Run(name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.Float64, 3, 2)
			h := g.Input("h", tensor.Float64, 2)
			gr := autodiff.Grad(ops.Sum(f(x, h)), x)
			err := g.Err()
			if gr[0].Valid() || err == nil || !strings.Contains(err.Error(), "ArgMax") || !strings.Contains(err.Error(), "not differentiable") {
				t.Fatalf("error %v: want one naming the ArgMax in the body", err)
			}
			// the ArgMax's own line
			m := regexp.MustCompile(`ArgMax \([^)]* built at ([\w_.]+):(\d+)\)`).FindStringSubmatch(err.Error())
			if m == nil || m[1] != "gradcheck_control_test.go" {
				t.Fatalf("error %v: no ArgMax site in this file", err)
			}
			src, rerr := os.ReadFile(m[1])
			if rerr != nil {
				t.Fatal(rerr)
			}
			k, _ := strconv.Atoi(m[2])
			if lines := strings.Split(string(src), "\n"); k < 1 || k > len(lines) || !strings.Contains(lines[k-1], "// the ArgMax") {
				t.Errorf("error %v: line %d is not the ArgMax's", err, k)
			}
		})
	}
}

package exec_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// kernelList names a program's kernels, sorted: a plain kernel by its op,
// a fused one as "Fused[ops]/k" with its ops in program order (reduction
// last) and k operands.
func kernelList(p *exec.Program) []string {
	var ks []string
	for _, s := range p.Plan().Steps {
		if s.Kind != exec.KernelStep {
			continue
		}
		if a, ok := s.Node.Attr().(*opdef.FusedAttr); ok && s.Node.Op() == opdef.OpFused {
			ks = append(ks, fmt.Sprintf("Fused[%s]/%d", strings.Join(a.OpNames(), ","), len(s.Node.Inputs())))
			continue
		}
		ks = append(ks, s.Node.Op().String())
	}
	slices.Sort(ks)
	return ks
}

// chainNames is "Mul,Add,Mul,Add,..." for n links.
func chainNames(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = "Mul"
		if i%2 == 1 {
			names[i] = "Add"
		}
	}
	return strings.Join(names, ",")
}

// TestFusionGroups pins the groups the fuse pass forms on the usual shapes
// of graphs (every expectation is a hand count from the rule: a group is
// the elementwise ops of one shape whose every use is inside the group,
// plus a trailing reduction), and checks every program against the
// unfused one.
func TestFusionGroups(t *testing.T) {
	be := cpuBackend(t)
	noSimplify := []exec.Option{exec.DisablePasses("simplify")}
	cases := []struct {
		name  string
		build func(x, row, x3 *graph.Node) []*graph.Node
		opts  []exec.Option
		want  []string
	}{
		// 2,000 single-use links: one group; its operands are x and the
		// two scalars (CSE merges the 1,000 copies of each).
		{"chain", func(x, row, x3 *graph.Node) []*graph.Node {
			y := x
			for i := 0; i < 2000; i++ {
				if i%2 == 0 {
					y = ops.Mul(y, ops.Scalar(y, 0.999))
				} else {
					y = ops.Add(y, ops.Scalar(y, 0.001))
				}
			}
			return []*graph.Node{y}
		}, nil, []string{"Fused[" + chainNames(2000) + "]/3"}},
		// a = exp(x) feeds two branches that meet again: all five ops in one
		// group reading x once.
		{"diamond", func(x, row, x3 *graph.Node) []*graph.Node {
			a := ops.Exp(x)
			return []*graph.Node{ops.Tanh(ops.Add(ops.Sin(a), ops.Cos(a)))}
		}, nil, []string{"Fused[Exp,Sin,Cos,Add,Tanh]/1"}},
		// t = exp(-x) has consumers in two groups: it is its own group's
		// root, read by the Mul-Tanh group; Sin alone is a plain kernel.
		{"multi-use", func(x, row, x3 *graph.Node) []*graph.Node {
			t := ops.Exp(ops.Neg(x))
			return []*graph.Node{ops.Tanh(ops.Mul(t, t)), ops.Sin(t)}
		}, nil, []string{"Fused[Mul,Tanh]/1", "Fused[Neg,Exp]/1", "Sin"}},
		// An output that is also an operand is computed once, not inside
		// its consumer's group.
		{"output-inside", func(x, row, x3 *graph.Node) []*graph.Node {
			y := ops.Exp(ops.Abs(x))
			return []*graph.Node{y, ops.Sin(ops.Neg(y))}
		}, nil, []string{"Fused[Abs,Exp]/1", "Fused[Neg,Sin]/1"}},
		// A chain ending in a row reduction: the Sum joins the group.
		{"reduction", func(x, row, x3 *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sum(ops.Tanh(ops.Add(x, row)), 1)}
		}, nil, []string{"Fused[Add,Tanh,Sum]/2"}},
		// The reduced value is also read elsewhere: the reduction runs on
		// its own after the group that computes it.
		{"reduction-shared", func(x, row, x3 *graph.Node) []*graph.Node {
			e := ops.Exp(ops.Sin(x))
			return []*graph.Node{ops.Max(e, 1), ops.Neg(e)}
		}, nil, []string{"Fused[Sin,Exp]/1", "Max", "Neg"}},
		// The CPU fuses only row and column reductions: over the middle axis
		// of x3 the Sum is refused and runs alone after the group.
		{"reduction-refused", func(x, row, x3 *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Sum(ops.Exp(ops.Sin(x3)), 1)}
		}, nil, []string{"Fused[Sin,Exp]/1", "Sum"}},
		// A smaller operand chain is a group of its own domain.
		{"two-domains", func(x, row, x3 *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Tanh(ops.Mul(x, ops.Exp(ops.Neg(row))))}
		}, nil, []string{"Fused[Mul,Tanh]/2", "Fused[Neg,Exp]/1"}},
		// An explicit BroadcastTo used only inside the group is read
		// through (simplify, which would remove it, is off).
		{"broadcast", func(x, row, x3 *graph.Node) []*graph.Node {
			return []*graph.Node{ops.Tanh(ops.Add(x, ops.BroadcastTo(row, 8, 1024)))}
		}, noSimplify, []string{"Fused[Add,Tanh]/2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			x := g.Input("x", tensor.Float32, 8, 1024)
			row := g.Input("row", tensor.Float32, 1024)
			x3 := g.Input("x3", tensor.Float32, 4, 5, 6)
			outs := c.build(x, row, x3)
			feeds := exec.Feeds{
				x:   exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 1),
				row: exectest.Rand(tensor.Float32, row.Shape(), -1, 1, 2),
				x3:  exectest.Rand(tensor.Float32, x3.Shape(), -1, 1, 3),
			}
			opts := append([]exec.Option{exec.IgnoreUnusedFeeds()}, c.opts...)
			p, got := compileRun(t, be, outs, feeds, opts...)
			_, want := compileRun(t, be, outs, feeds, exec.IgnoreUnusedFeeds(), exec.DisablePasses("fuse"))
			if ks := kernelList(p); !slices.Equal(ks, c.want) {
				t.Errorf("kernels %s, want %s", short(ks), short(c.want))
			}
			for i := range outs {
				if err := exectest.Compare(got[i], want[i], 1e-5); err != nil {
					t.Errorf("output %d: %v", i, err)
				}
			}
		})
	}
}

// short abbreviates long kernel names for messages.
func short(ks []string) string {
	out := make([]string, len(ks))
	for i, k := range ks {
		if len(k) > 80 {
			k = k[:40] + "..." + k[len(k)-30:]
		}
		out[i] = k
	}
	return "[" + strings.Join(out, " ") + "]"
}

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

// pickyBackend is the CPU backend refusing the fused programs refuse
// names, counting the fused programs (and their ops) it is asked about.
type pickyBackend struct {
	exec.Backend
	refuse      func(a *opdef.FusedAttr) bool
	asked, opsN int
}

func (b *pickyBackend) Supports(n *graph.Node) error {
	if a, ok := n.Attr().(*opdef.FusedAttr); ok && n.Op() == opdef.OpFused {
		b.asked++
		b.opsN += len(a.OpNames())
		if b.refuse(a) {
			return fmt.Errorf("%w: picky: %v", exec.ErrUnsupported, a.OpNames())
		}
	}
	return b.Backend.Supports(n)
}

// TestFusionSplitsRefusedGroups: when the backend refuses a group, the
// ops it can run still fuse around the one it cannot, a size limit cuts a
// chain into full groups, and the backend is asked about a number of ops
// linear in the chain's length (trying every shorter group in turn, from
// the root down, would ask about ~2 million ops for the 2,000-link chain).
// The counts include schedule's check of every kernel of the plan.
func TestFusionSplitsRefusedGroups(t *testing.T) {
	cpuBe := cpuBackend(t)
	hasSin := func(a *opdef.FusedAttr) bool { return slices.Contains(a.OpNames(), "Sin") }
	cases := []struct {
		name        string
		refuse      func(a *opdef.FusedAttr) bool
		build       func(x *graph.Node) *graph.Node
		want        []string
		asked, opsN int // fused programs and ops the backend is asked about
	}{
		// Sin is refused even alone: the ops below and above it fuse. Hand
		// count: the whole chain (6 ops), each op alone (6), the group above
		// Sin (3), the group below (2), schedule's checks (3 + 2): 11
		// programs, 22 ops.
		{"local", hasSin, func(x *graph.Node) *graph.Node {
			return ops.Cos(ops.Abs(ops.Tanh(ops.Sin(ops.Neg(ops.Exp(x))))))
		}, []string{"Fused[Exp,Neg]/1", "Fused[Tanh,Abs,Cos]/1", "Sin"}, 11, 22},
		// The same with a trailing reduction, which stays in the group above
		// Sin; Neg alone is a plain kernel. Hand count: the whole group (5
		// ops), without the Sum (4), each op alone (4), Abs-Cos-Sum (3),
		// schedule's check (3): 8 programs, 19 ops.
		{"local-reduction", hasSin, func(x *graph.Node) *graph.Node {
			return ops.Sum(ops.Cos(ops.Abs(ops.Sin(ops.Neg(x)))), 1)
		}, []string{"Fused[Abs,Cos,Sum]/1", "Neg", "Sin"}, 8, 19},
		// At most 8 ops a program: 250 groups of 8 links, each reading the
		// previous group's value and the two scalars. Hand count: the whole
		// chain (1 program, 2,000 ops); each link alone (2,000, 2,000); for
		// each of the 249 groups from the top, the doubling and bisecting
		// probes of 2, 4, 8, 16 (refused), 12, 10 and 9 (refused) links (7,
		// 61, so 1,743, 15,189); for the first 8 links, 2, 4, 8, then 16
		// finds nothing more (3, 14); schedule's checks (250, 2,000):
		// 3,997 programs, 21,203 ops.
		{"size-limit", func(a *opdef.FusedAttr) bool { return len(a.OpNames()) > 8 }, func(x *graph.Node) *graph.Node {
			return longChainFrom(x, 2000)
		}, slices.Repeat([]string{"Fused[" + chainNames(8) + "]/3"}, 250), 3997, 21203},
		// No fused program at all: the whole chain once, then each link alone
		// once (hand: 2,001 programs, 4,000 ops); every link runs alone.
		{"none", func(*opdef.FusedAttr) bool { return true }, func(x *graph.Node) *graph.Node {
			return longChainFrom(x, 2000)
		}, append(slices.Repeat([]string{"Add"}, 1000), slices.Repeat([]string{"Mul"}, 1000)...), 2001, 4000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := &pickyBackend{Backend: cpuBe, refuse: c.refuse}
			g := graph.New()
			x := g.Input("x", tensor.Float32, 8, 1024)
			y := c.build(x)
			feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, x.Shape(), -1, 1, 1)}
			p, got := compileRun(t, be, []*graph.Node{y}, feeds)
			_, want := compileRun(t, cpuBe, []*graph.Node{y}, feeds, exec.DisablePasses("fuse"))
			if ks := kernelList(p); !slices.Equal(ks, c.want) {
				t.Errorf("kernels %s, want %s", short(ks), short(c.want))
			}
			if be.asked != c.asked || be.opsN != c.opsN {
				t.Errorf("asked about %d fused programs of %d ops in all, want %d and %d", be.asked, be.opsN, c.asked, c.opsN)
			}
			if err := exectest.Compare(got[0], want[0], 1e-5); err != nil {
				t.Error(err)
			}
		})
	}
}

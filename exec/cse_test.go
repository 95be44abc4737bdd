package exec_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// noteAttr is an attribute whose text does not show its value: two notes
// print alike and differ.
type noteAttr struct{ note int }

func (noteAttr) String() string { return "note" }

// opNote is a test op carrying a noteAttr: its operand, unchanged. No
// backend has a kernel for it (see planOnly).
var opNote = opdef.Register(&opdef.Def{Name: "ExecTestNote", Doc: "its operand; the attribute is a note", Arity: 1, Kind: opdef.Movement,
	DType: func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		if _, ok := attr.(noteAttr); !ok {
			return 0, opdef.ArgErr("takes a noteAttr, got %T", attr)
		}
		return in[0], nil
	},
	Shape: func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) { return in[0].Clone(), nil },
})

// planOnly is the CPU backend that accepts opNote and lowers nothing: for
// tests that read the plan only.
type planOnly struct{ exec.Backend }

func (b planOnly) Supports(n *graph.Node) error {
	if n.Op() == opNote {
		return nil
	}
	return b.Backend.Supports(n)
}

func (planOnly) Lower(*exec.Plan) (exec.Executable, error) { return planOnlyExe{}, nil }

type planOnlyExe struct{}

func (planOnlyExe) Run(context.Context, *exec.Frame) error {
	return errors.New("planOnly: not runnable")
}
func (planOnlyExe) Close() error { return nil }

// TestCSEAttributesPrintingAlike: nodes whose attributes print alike but
// differ are not merged (CSE once keyed nodes by the attribute's text);
// equal ones are.
func TestCSEAttributesPrintingAlike(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3, 4)
	n1, n2, n1again := opdef.Apply(opNote, noteAttr{1}, x), opdef.Apply(opNote, noteAttr{2}, x), opdef.Apply(opNote, noteAttr{1}, x)
	p, err := exec.Compile(planOnly{cpuBackend(t)}, []*graph.Node{n1, n2, n1again}, exec.VerifyEachPass())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// Hand count: notes 1 and 2 are two kernels; the second note 1 is
	// merged with the first, its output a copy.
	var notes []int
	for _, s := range p.Plan().Steps {
		if s.Kind == exec.KernelStep && s.Node.Op() == opNote {
			notes = append(notes, s.Node.Attr().(noteAttr).note)
		}
	}
	slices.Sort(notes)
	if !slices.Equal(notes, []int{1, 2}) {
		t.Errorf("kernels of notes %v, want [1 2]:\n%s", notes, p.Plan().Format())
	}
}

// TestCSEComparesAttributesByValue: equal attributes built separately (nil
// and empty axis lists, two copies of a permutation or of slice ranges)
// are merged; the commutative ops are the ones their declarations say.
func TestCSEComparesAttributesByValue(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3, 4)
	s := g.Input("s", tensor.Float32)
	a, b := g.Input("a", tensor.Float32, 3, 4), g.Input("b", tensor.Float32, 3, 4)
	outs := []*graph.Node{
		// A Sum of a scalar over no axes, written as nil and as an empty
		// list: one Sum.
		opdef.Apply(ops.OpSum, opdef.AxesAttr{Axes: nil}, s), opdef.Apply(ops.OpSum, opdef.AxesAttr{Axes: []int{}}, s),
		// Separately built equal permutations and ranges: one Transpose, one
		// Slice.
		ops.Transpose(x, 1, 0), ops.Transpose(x, 1, 0),
		ops.Slice(x, ops.R(0, 2), ops.R(1, 3)), ops.Slice(x, ops.R(0, 2), ops.R(1, 3)),
		// Maximum is declared commutative, Less is not: one Maximum, two Less.
		ops.Maximum(a, b), ops.Maximum(b, a), ops.Less(a, b), ops.Less(b, a),
	}
	feeds := exec.Feeds{
		x: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 1), s: exectest.Rand(tensor.Float32, tensor.Shape{}, -1, 1, 2),
		a: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 3), b: exectest.Rand(tensor.Float32, tensor.Shape{3, 4}, -1, 1, 4),
	}
	// simplify would turn the Sums over no axes into views.
	p, got := compileRun(t, be, outs, feeds, exec.DisablePasses("simplify", "fuse"))
	_, want := compileRun(t, be, outs, feeds, exec.DisablePasses(optionalPasses...))
	k := kernelOps(p)
	// Hand count from the comments above.
	if k[ops.OpSum] != 1 || k[ops.OpTranspose] != 1 || k[ops.OpSlice] != 1 || k[ops.OpMaximum] != 1 || k[ops.OpLess] != 2 {
		t.Errorf("kernels after CSE: %v\n%s", k, p.Plan().Format())
	}
	for i := range outs {
		if err := exectest.Compare(got[i], want[i], 0); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}

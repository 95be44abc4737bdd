package exectest

import (
	"slices"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// keysOf runs one case in mode m (modes[0] opt, modes[1] plain) on the
// CPU backend and returns its coverage keys as a set.
func keysOf(t *testing.T, m int, c Case) map[string]bool {
	t.Helper()
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	set := map[string]bool{}
	for _, k := range runCase(t, be, c, modes[m].opts...) {
		set[k] = true
	}
	return set
}

// TestCoverageCountsOnlyKernelsThatRan: an op that the optimiser removes
// is not covered, although it is in the graph the case built; an op that
// runs inside a fused kernel is.
func TestCoverageCountsOnlyKernelsThatRan(t *testing.T) {
	x := Tensor(tensor.Float32, []float64{0.5, -1, 2}, 3)

	// Sin of a constant: constant folding computes it at compile time.
	folded := Case{Name: "Sin/folded", Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return []*graph.Node{ops.Sin(g.Const(x))}, nil
	}}
	keys := keysOf(t, 0, folded)
	if keys["Sin/any"] || keys["Sin/f32"] {
		t.Errorf("a folded Sin counts as covered: %v", keys)
	}
	if m := uncovered(keys, nil); !slices.Contains(m, "Sin") || !slices.Contains(m, "Sin/f32") {
		t.Errorf("uncovered does not report the folded Sin: %v", m)
	}
	// With the passes off, the same Sin runs its kernel.
	if keys := keysOf(t, 1, folded); !keys["Sin/any"] || !keys["Sin/f32"] {
		t.Errorf("an unfolded Sin kernel is not covered: %v", keys)
	}

	// StopGradient of an Input: simplification removes it.
	stopped := Case{Name: "StopGradient", Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		in, feeds := Inputs(g, x)
		return []*graph.Node{ops.Exp(ops.StopGradient(in[0]))}, feeds
	}}
	if keys := keysOf(t, 0, stopped); keys["StopGradient/any"] || !keys["Exp/f32"] {
		t.Errorf("StopGradient removed by simplify: keys %v", keys)
	}

	// A chain of elementwise ops on an Input, fused into one kernel: the
	// ops inside count, with their dtypes (the Cast's float64 result too).
	fused := Case{Name: "fused", Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		in, feeds := Inputs(g, x)
		return []*graph.Node{ops.Cast(ops.Exp(ops.Sin(in[0])), tensor.Float64)}, feeds
	}, Tol: 1e-6} // computed in float32: the float64 output carries float32 rounding
	keys = keysOf(t, 0, fused)
	for _, k := range []string{"Fused/any", "Sin/f32", "Exp/f32", "Cast/f32", "Cast/f64"} {
		if !keys[k] {
			t.Errorf("fused chain: no key %s in %v", k, keys)
		}
	}
	if keys["Sin/f64"] || keys["Exp/f64"] {
		t.Errorf("fused chain: float32 ops counted as float64: %v", keys)
	}
	if keys := keysOf(t, 1, fused); keys["Fused/any"] || !keys["Sin/f32"] || !keys["Cast/f64"] {
		t.Errorf("plain chain: keys %v", keys)
	}
}

// TestCoverageOfControlFlow: a control-flow op counts as covered by its
// own kernel (the loop), not by the kernels of its bodies, and a TupleGet
// counts only where it is a kernel (a copy into an output), not where it
// is a view of the tuple that another kernel reads.
func TestCoverageOfControlFlow(t *testing.T) {
	xs := Tensor(tensor.Float32, []float64{1, 2, 3}, 3)
	scan := func(direct bool) Case {
		return Case{Name: "scan", Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			in, feeds := Inputs(g, xs)
			c, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) {
				return []*graph.Node{ops.Add(c[0], ops.Sin(x[0]))}, nil
			}, []*graph.Node{ops.Full(g, tensor.Float32, 0)}, in, -1)
			if direct {
				return c, feeds
			}
			return []*graph.Node{ops.Exp(c[0])}, feeds
		}}
	}
	for m := range modes {
		keys := keysOf(t, m, scan(true))
		if !keys["Scan/any"] || !keys["TupleGet/any"] {
			t.Errorf("%s: a Scan read into an output: keys %v", modes[m].name, keys)
		}
		if keys["Sin/any"] {
			t.Errorf("%s: the Sin inside the body counts as covered: %v", modes[m].name, keys)
		}
		keys = keysOf(t, m, scan(false))
		if !keys["Scan/any"] || keys["TupleGet/any"] {
			t.Errorf("%s: a Scan's result read by Exp (a view): keys %v", modes[m].name, keys)
		}
	}
}

package cpu_test

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func TestConformance(t *testing.T) {
	if raceEnabled {
		t.Skip("TestConformanceSampled runs the kernels under the race detector")
	}
	exectest.Run(t, func() (exec.Backend, error) { return cpu.New() })
}

// TestConformanceSampled checks exectest's sampling as the CUDA emulator
// runs it (exectest.EmulatorEvery: every eighth case of the optimising
// mode, every 10th of the plain mode, and those that bring an op or dtype
// the others lack): the cases it keeps still cover every op in every
// dtype, which the suite's coverage check asserts. It is also the suite
// under the race detector, which looks for unsynchronised memory access
// (the executor's scheduling, each kernel's split between threads), not
// for values, which TestConformance checks on every case without it: a
// third of the cost (60 -> 20 s here).
func TestConformanceSampled(t *testing.T) {
	exectest.RunSampled(t, func() (exec.Backend, error) { return cpu.New() }, exectest.Sampling{Every: exectest.EmulatorEvery})
}

// TestEveryOpHasAKernel fails when an op of the table has no CPU kernel.
func TestEveryOpHasAKernel(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1)
	for _, d := range opdef.Defs() {
		if d.Op == opdef.OpFused {
			// A Fused node needs a program: a two-op one.
			f := opdef.Fused(&opdef.FusedAttr{Domain: tensor.Shape{1}, Ops: []opdef.FusedOp{
				{Op: ops.OpNeg, Args: []int{-1}, DType: tensor.Float32},
				{Op: ops.OpExp, Args: []int{0}, DType: tensor.Float32},
			}}, x)
			if err := be.Supports(f); err != nil {
				t.Errorf("Fused: %v", err)
			}
			continue
		}
		n := g.Add(graph.Spec{Op: d.Op, Inputs: []*graph.Node{x}, DType: tensor.Float32, Shape: tensor.Shape{1}})
		if err := be.Supports(n); err != nil {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
}

// TestTrainingStepAllocations: after the first run, an MLP training step
// (forward, backward, SGD update; 784-256-10, batch 64) allocates nothing
// with RunInto.
func TestTrainingStepAllocations(t *testing.T) {
	be, _ := cpu.New()
	defer be.Close()
	p, feeds := mlpStep(t, be)
	defer p.Close()
	out := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	ctx := context.Background()
	if err := p.RunInto(ctx, feeds, out); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() {
		if err := p.RunInto(ctx, feeds, out); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per training step, want 0", a)
	}
}

// Package foldtest checks constant folding in a binary that links no CPU
// backend (as a CUDA-only program would): folding must not need one.
package foldtest

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// stub is a backend that supports every op and runs nothing: the test
// only looks at the plan Compile makes for it.
type stub struct{}

func (stub) Name() string                                    { return "stub" }
func (stub) Device() exec.Device                             { return exec.Device{Name: "stub", Kind: exec.GPU, Memory: 1 << 30} }
func (stub) Supports(*graph.Node) error                      { return nil }
func (stub) Lower(*exec.Plan) (exec.Executable, error)       { return exe{}, nil }
func (stub) NewBuffer(t *tensor.Tensor) (exec.Buffer, error) { return buf{}, nil }
func (stub) Close() error                                    { return nil }

type exe struct{}

func (exe) Run(context.Context, *exec.Frame) error { return nil }
func (exe) Close() error                           { return nil }

type buf struct{}

func (buf) Read(*tensor.Tensor) error  { return nil }
func (buf) Write(*tensor.Tensor) error { return nil }
func (buf) Free()                      {}

// TestFoldsWithoutCPUBackend: y = x * exp(2 + 3) folds exp(2+3) (hand:
// e^5 = 148.41316) into one constant, so the plan runs one kernel, a Mul,
// though no "cpu" backend is registered in this binary; and LOOM_DUMP
// prints the user's program once, not nested programs of the folder.
func TestFoldsWithoutCPUBackend(t *testing.T) {
	if _, err := exec.Open("cpu"); err == nil {
		t.Fatal("the cpu backend is linked into this test: it must not be")
	}
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	two, three := g.Const(tensor.Scalar(float32(2))), g.Const(tensor.Scalar(float32(3)))
	y := ops.Mul(x, ops.Exp(ops.Add(two, three)))

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	t.Setenv("LOOM_DUMP", "constfold")
	p, err := exec.Compile(stub{}, []*graph.Node{y})
	os.Stderr = old
	w.Close()
	dump, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var kernels []string
	var folded *tensor.Tensor
	for _, s := range p.Plan().Steps {
		if s.Kind == exec.KernelStep {
			kernels = append(kernels, s.Node.Op().String())
			for _, in := range s.Node.Inputs() {
				if in.Op() == graph.OpConst {
					folded = in.Value()
				}
			}
		}
	}
	if len(kernels) != 1 || kernels[0] != "Mul" {
		t.Errorf("kernels %v, want [Mul]", kernels)
	}
	if folded == nil || folded.Float64(0) != float64(float32(148.4131591025766)) { // e^5 in float64, rounded to float32
		t.Errorf("folded constant %v, want e^5 = 148.41316", folded)
	}
	if n := strings.Count(string(dump), "LOOM_DUMP after"); n != 1 {
		t.Errorf("LOOM_DUMP printed %d graphs, want 1 (the user's program):\n%s", n, dump)
	}
}

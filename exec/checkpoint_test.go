package exec_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestCheckpointRoundTrip trains a few steps, saves, loads the file into a
// fresh program of the same graph, and checks that both give bit-identical
// results from then on.
func TestCheckpointRoundTrip(t *testing.T) {
	be := cpuBackend(t)
	build := func() (*exec.Program, *graph.Node) {
		g := graph.New()
		x := g.Input("x", tensor.Float32, 8, 4)
		w := g.Variable("w", exectest.Rand(tensor.Float32, tensor.Shape{4, 3}, -1, 1, 1))
		b := g.Variable("b", tensor.Zeros(tensor.Float64, 3))
		y := ops.Add(ops.Cast(ops.MatMul(x, w), tensor.Float64), b)
		p, err := exec.Compile(be, []*graph.Node{y},
			exec.Update(w, ops.Mul(w, ops.Scalar(w, 0.9))), exec.Update(b, ops.Add(b, ops.Scalar(b, 0.5))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p, x
	}
	p1, x1 := build()
	xv := exectest.Rand(tensor.Float32, tensor.Shape{8, 4}, -1, 1, 2)
	for i := 0; i < 3; i++ {
		if _, err := p1.Run(context.Background(), exec.Feeds{x1: xv}); err != nil {
			t.Fatal(err)
		}
	}
	var file bytes.Buffer
	if err := p1.SaveVariables(&file, map[string]string{"step": "3"}); err != nil {
		t.Fatal(err)
	}
	p2, x2 := build()
	meta, err := p2.LoadVariables(bytes.NewReader(file.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if meta["step"] != "3" {
		t.Errorf("metadata %v", meta)
	}
	a, _ := p1.Run(context.Background(), exec.Feeds{x1: xv})
	b, _ := p2.Run(context.Background(), exec.Feeds{x2: xv})
	if !bytes.Equal(a[0].Bytes(), b[0].Bytes()) {
		t.Errorf("results differ after loading:\n%v\n%v", a[0], b[0])
	}
	// A checkpoint missing a variable, or with a mistyped one, is refused
	// and changes nothing.
	g := graph.New()
	g.Variable("w", tensor.Zeros(tensor.Float32, 4, 3))
	partial, _ := exec.Compile(be, []*graph.Node{g.Lookup("w")})
	var pf bytes.Buffer
	partial.SaveVariables(&pf, nil)
	if _, err := p2.LoadVariables(bytes.NewReader(pf.Bytes())); err == nil || !strings.Contains(err.Error(), `variable(s) b`) {
		t.Errorf("loading a file without b: %v", err)
	}
	h := graph.New()
	h.Variable("w", tensor.Zeros(tensor.Float64, 4, 3))
	h.Variable("b", tensor.Zeros(tensor.Float64, 3))
	wrong, _ := exec.Compile(be, []*graph.Node{h.Lookup("w"), h.Lookup("b")})
	var wf bytes.Buffer
	wrong.SaveVariables(&wf, nil)
	if _, err := p2.LoadVariables(bytes.NewReader(wf.Bytes())); err == nil || !strings.Contains(err.Error(), `tensor "w" is f64[4,3], variable "w" is f32[4,3]`) {
		t.Errorf("loading a mistyped w: %v", err)
	}
	if _, err := p2.LoadVariables(strings.NewReader("not a checkpoint")); err == nil {
		t.Errorf("loading garbage succeeded")
	}
	c, _ := p2.Run(context.Background(), exec.Feeds{x2: xv})
	d, _ := p1.Run(context.Background(), exec.Feeds{x1: xv})
	if !bytes.Equal(c[0].Bytes(), d[0].Bytes()) {
		t.Errorf("a refused load changed the variables")
	}
}

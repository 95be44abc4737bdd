package cuda

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestCheckNumerics: exec.CheckNumerics works on this backend too (its
// checks are ordinary reductions copied back with the outputs). Hand:
// log(0) = -Inf from the finite operand 0, so Log is blamed, not the Mul
// that reads it; log(0.5) is finite and the run succeeds. A program
// without the option returns the -Inf.
func TestCheckNumerics(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	y := ops.Mul(ops.Log(x), ops.Scalar(x, 3))
	p, err := exec.Compile(b, []*graph.Node{y}, exec.CheckNumerics())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	xv, _ := tensor.New([]float32{0.5, 1, 2, 4})
	if _, err := p.Run(ctx, exec.Feeds{x: xv}); err != nil {
		t.Fatalf("finite run: %v", err)
	}
	xv, _ = tensor.New([]float32{0.5, 0, 2, 4})
	_, err = p.Run(ctx, exec.Feeds{x: xv})
	if !errors.Is(err, exec.ErrNonFinite) || !strings.Contains(err.Error(), "Log(f32[4]) -> f32[4], built at numerics_test.go:") {
		t.Errorf("err = %v, want Log blamed", err)
	}
	q, err := exec.Compile(b, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out, err := q.Run(ctx, exec.Feeds{x: xv})
	if err != nil || !math.IsInf(out[0].Float64(1), -1) {
		t.Errorf("without CheckNumerics: %v, %v; want -Inf at 1", out, err)
	}
}

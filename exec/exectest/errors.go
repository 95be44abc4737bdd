package exectest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// runErrors checks the run-time error contract on be: every bad run is an
// error naming what is wrong, the variables are untouched by a failed run,
// and the program works normally afterwards.
func runErrors(t *testing.T, be exec.Backend) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	unused := g.Input("unused", tensor.Float32, 1)
	w := g.Variable("w", Tensor(tensor.Float32, []float64{1, 2, 3}, 3))
	y := ops.Add(x, w)
	s := ops.Sum(y)
	prog, err := exec.Compile(be, []*graph.Node{s}, exec.Update(w, ops.Add(w, ops.Scalar(w, 1))))
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	xv := Tensor(tensor.Float32, []float64{1, 1, 1, 1, 1, 1}, 2, 3)
	ctx := context.Background()
	other := graph.New().Input("x", tensor.Float32, 2, 3)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()

	cases := []struct {
		name  string
		ctx   context.Context
		feeds exec.Feeds
		want  []string
		is    error
	}{
		{"missing", ctx, exec.Feeds{}, []string{"missing feed", `"x"`, "f32[2,3]"}, exec.ErrFeed},
		{"extra-unused", ctx, exec.Feeds{x: xv, unused: Tensor(tensor.Float32, []float64{0}, 1)}, []string{"extra feed", `"unused"`, "does not use"}, exec.ErrFeed},
		{"extra-not-input", ctx, exec.Feeds{x: xv, y: xv}, []string{"extra feed", "only Inputs are fed"}, exec.ErrFeed},
		{"extra-other-graph", ctx, exec.Feeds{x: xv, other: xv}, []string{"extra feed", "another graph"}, exec.ErrFeed},
		{"wrong-shape", ctx, exec.Feeds{x: Tensor(tensor.Float32, []float64{1, 2, 3}, 3)}, []string{`"x"`, "f32[2,3]", "is f32[3]", "wrong shape"}, exec.ErrFeed},
		{"wrong-dtype", ctx, exec.Feeds{x: Rand(tensor.Float64, tensor.Shape{2, 3}, 0, 1, 1)}, []string{`"x"`, "f64[2,3]", "wrong dtype"}, exec.ErrFeed},
		{"nil-tensor", ctx, exec.Feeds{x: nil}, []string{`"x"`, "nil tensor"}, exec.ErrFeed},
		{"cancelled", cancelled, exec.Feeds{x: xv}, []string{"context canceled"}, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := prog.Run(c.ctx, c.feeds)
			if err == nil {
				t.Fatalf("Run succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if !errors.Is(err, c.is) {
				t.Errorf("error %q does not wrap %v", err, c.is)
			}
		})
	}
	// The failed runs changed nothing: w is still [1,2,3] (hand: no update
	// applied), and a good run gives sum(x + w) = 6*1 + 2*(1+2+3) = 18.
	wv, err := prog.Read(w)
	if err != nil {
		t.Fatal(err)
	}
	if err := Compare(wv, Tensor(tensor.Float32, []float64{1, 2, 3}, 3), 0); err != nil {
		t.Errorf("variable changed by failed runs: %v", err)
	}
	out, err := prog.Run(ctx, exec.Feeds{x: xv})
	if err != nil {
		t.Fatalf("good run after errors: %v", err)
	}
	if err := Compare(out[0], Tensor(tensor.Float32, []float64{18}, []int{}...), 0); err != nil {
		t.Errorf("good run after errors: %v", err)
	}
	// RunInto with the wrong output type.
	if err := prog.RunInto(ctx, exec.Feeds{x: xv}, []*tensor.Tensor{tensor.Zeros(tensor.Float64)}); err == nil || !strings.Contains(err.Error(), "output 0 is f64[]") {
		t.Errorf("RunInto with a wrong output: %v", err)
	}
	// Write with the wrong type, and Read of a foreign node.
	if err := prog.Write(w, tensor.Zeros(tensor.Float32, 4)); err == nil {
		t.Errorf("Write of a wrong shape succeeded")
	}
	if _, err := prog.Read(x); err == nil {
		t.Errorf("Read of an Input succeeded")
	}

	// Concurrent runs: 16 goroutines, 5 runs each, each run adds 1 to w.
	// Updates are serialised, so w ends at [1,2,3] + 1 (the good run above)
	// + 80 = [82, 83, 84] (hand).
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				if _, err := prog.Run(ctx, exec.Feeds{x: xv}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent run: %v", err)
	}
	wv, _ = prog.Read(w)
	if err := Compare(wv, Tensor(tensor.Float32, []float64{82, 83, 84}, 3), 0); err != nil {
		t.Errorf("after concurrent runs: %v", err)
	}
	// After Close, Run fails cleanly.
	prog.Close()
	if _, err := prog.Run(ctx, exec.Feeds{x: xv}); !errors.Is(err, exec.ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}

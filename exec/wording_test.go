package exec_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestWordings: Update of a node that is not a Variable names its op with
// the right article ("an Input", "a Const"), and Write calls its argument
// a value, not a feed, while errors.Is(err, ErrFeed) still holds.
func TestWordings(t *testing.T) {
	be, err := exec.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	c := g.Const(tensor.Zeros(tensor.Float32, 3))
	w := g.Variable("w", tensor.Zeros(tensor.Float32, 3))
	for _, tc := range []struct {
		target *graph.Node
		want   string
	}{
		{x, "the target is an Input, not a Variable"},
		{c, "the target is a Const, not a Variable"},
	} {
		_, err := exec.Compile(be, []*graph.Node{w}, exec.Update(tc.target, ops.Add(w, x)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Update(%s): %v, want %q", tc.target, err, tc.want)
		}
	}

	prog, err := exec.Compile(be, []*graph.Node{w})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	err = prog.Write(w, tensor.Zeros(tensor.Float32, 4))
	const want = `exec: Write("w" f32[3]): bad value: got f32[4]`
	if err == nil || err.Error() != want || !errors.Is(err, exec.ErrFeed) {
		t.Errorf("Write of f32[4] to f32[3]: %v, want %q wrapping ErrFeed", err, want)
	}
}

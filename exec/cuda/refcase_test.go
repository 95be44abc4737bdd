//go:build linux

package cuda

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// refCase is one op application with its feeds, built for a dtype.
type refCase struct {
	name  string
	build func(g *graph.Graph, dt tensor.DType) (*graph.Node, exec.Feeds)
}

// checkAgainstReference builds every case in dtype dt into one program
// (one compilation of the helper kernels: the emulator's is the host C++
// compiler), runs it twice (the plans and workspaces are reused) and
// compares each output with the float64 reference of the declarations
// (exectest.Eval) to tol.
func checkAgainstReference(t *testing.T, b exec.Backend, dt tensor.DType, tol float64, cs []refCase) {
	t.Helper()
	g := graph.New()
	feeds := exec.Feeds{}
	var outs []*graph.Node
	for _, c := range cs {
		out, f := c.build(g, dt)
		outs = append(outs, out)
		for k, v := range f {
			feeds[k] = v
		}
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	p, err := exec.Compile(b, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for run := range 2 {
		got, err := p.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cs {
			if err := exectest.Compare(got[i], want[i], tol); err != nil {
				t.Errorf("%s %v, run %d: %v", c.name, dt, run, err)
			}
		}
	}
}

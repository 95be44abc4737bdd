// Package exectest is the conformance suite every backend runs: a table of
// cases, each a small graph with feeds and expected outputs whose source
// is stated (a hand calculation in a comment, or the float64 reference
// interpreter Eval). A backend runs the whole suite with one line:
//
//	func TestConformance(t *testing.T) { exectest.Run(t, cpu.Open) }
package exectest

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Case is one conformance case.
type Case struct {
	Name string
	// Build adds the case's nodes to g and returns the outputs and the
	// feeds.
	Build func(g *graph.Graph) ([]*graph.Node, exec.Feeds)
	// Want are the expected outputs; nil means "what Eval computes".
	Want []*tensor.Tensor
	// Source says where Want comes from (required when Want is set).
	Source string
	// Tol overrides the comparison tolerance (relative and absolute).
	Tol float64
}

// Opener opens the backend under test.
type Opener func() (exec.Backend, error)

// Run runs every case on the backend, checks that together they cover
// every op of the table in each float dtype it admits, and runs the
// run-time error cases.
func Run(t *testing.T, open Opener) {
	be, err := open()
	if err != nil {
		t.Fatalf("opening backend: %v", err)
	}
	defer be.Close()
	covered := map[string]bool{}
	// Every case runs twice: through the whole optimising pipeline, and
	// with every optional pass off (each op its own kernel).
	for _, mode := range []struct {
		name string
		opts []exec.Option
	}{
		{"opt", nil},
		{"plain", []exec.Option{exec.DisablePasses("precision", "simplify", "constfold", "cse", "fuse")}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			for _, c := range Cases() {
				t.Run(c.Name, func(t *testing.T) {
					for _, k := range runCase(t, be, c, mode.opts...) {
						covered[k] = true
					}
				})
			}
		})
	}
	t.Run("coverage", func(t *testing.T) {
		var missing []string
		for _, d := range ops.Defs() {
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
				if !admits(d, dt) {
					continue
				}
				if !covered[d.Name+"/"+dt.Short()] {
					missing = append(missing, d.Name+"/"+dt.Short())
				}
			}
			if !covered[d.Name+"/any"] {
				missing = append(missing, d.Name)
			}
		}
		sort.Strings(missing)
		if len(missing) > 0 {
			t.Errorf("the conformance suite has no case for: %s", strings.Join(missing, ", "))
		}
	})
	t.Run("run-errors", func(t *testing.T) { runErrors(t, be) })
}

// admits reports whether op d accepts operands of dtype dt, by asking its
// dtype rule.
func admits(d *ops.Def, dt tensor.DType) bool {
	n := d.Arity
	if n < 0 {
		n = 2
	}
	in := make([]tensor.DType, n)
	for i := range in {
		in[i] = dt
	}
	if d.Op == ops.OpWhere {
		in[0] = tensor.Bool
	}
	var attr graph.Attr
	if d.Op == ops.OpCast {
		attr = ops.CastAttr{To: tensor.Float32}
	}
	_, err := d.DType(in, attr)
	return err == nil
}

// runCase compiles and runs one case and compares with the expected
// values; it returns the coverage keys ("Op/f32", "Op/any") it exercised.
func runCase(t *testing.T, be exec.Backend, c Case, opts ...exec.Option) []string {
	t.Helper()
	g := graph.New()
	outs, feeds := c.Build(g)
	if err := g.Err(); err != nil {
		t.Fatalf("building: %v", err)
	}
	want := c.Want
	if want == nil {
		var err error
		want, err = Eval(outs, feeds)
		if err != nil {
			t.Fatalf("reference: %v", err)
		}
	} else if c.Source == "" {
		t.Fatalf("case %s has golden values without a Source", c.Name)
	}
	prog, err := exec.Compile(be, outs, append(opts, exec.VerifyEachPass())...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer prog.Close()
	got, err := prog.Run(context.Background(), feeds)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for i := range want {
		if err := Compare(got[i], want[i], c.Tol); err != nil {
			t.Errorf("output %d (%s): %v\n got: %v\nwant: %v", i, outs[i], err, got[i], want[i])
		}
	}
	var keys []string
	nodes := graph.Ancestors(outs...)
	for _, s := range prog.Plan().Steps {
		if s.Kind == exec.KernelStep {
			nodes = append(nodes, s.Node)
		}
	}
	for _, n := range nodes {
		if n.Op().IsLeaf() {
			continue
		}
		keys = append(keys, n.Op().String()+"/any")
		for _, in := range n.Inputs() {
			if in.DType().IsFloat() {
				keys = append(keys, n.Op().String()+"/"+in.DType().Short())
			}
		}
		if n.DType().IsFloat() {
			keys = append(keys, n.Op().String()+"/"+n.DType().Short())
		}
	}
	return keys
}

// Compare checks got against want: same dtype and shape, and every
// element within tolerance: |g-w| <= tol*(1+|w|), with tol by dtype
// (2e-5 for float32, 1e-12 for float64, exact for integers and bools)
// unless overridden. NaN matches NaN and infinities must match exactly.
func Compare(got, want *tensor.Tensor, tol float64) error {
	if got == nil {
		return fmt.Errorf("got nil")
	}
	if got.DType() != want.DType() || !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("got %s, want %s", got.Type(), want.Type())
	}
	if tol == 0 {
		switch want.DType() {
		case tensor.Float32:
			tol = 2e-5
		case tensor.Float64:
			tol = 1e-12
		case tensor.Float16, tensor.BFloat16:
			tol = 1e-2
		}
	}
	g, w := got.Float64s(), want.Float64s()
	for i := range w {
		a, b := g[i], w[i]
		switch {
		case math.IsNaN(b):
			if !math.IsNaN(a) {
				return fmt.Errorf("element %d: got %v, want NaN", i, a)
			}
		case math.IsInf(b, 0):
			if a != b {
				return fmt.Errorf("element %d: got %v, want %v", i, a, b)
			}
		case math.Abs(a-b) > tol*(1+math.Abs(b)) || math.IsNaN(a):
			return fmt.Errorf("element %d: got %v, want %v (tolerance %g)", i, a, b, tol)
		}
	}
	return nil
}

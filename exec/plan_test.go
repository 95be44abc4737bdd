package exec_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestPlanIsACopy: changing the plan Program.Plan returns (a step's
// operands swapped, an output's value index changed, values moved, the
// steps truncated, nodes added to its graph) changes neither later Runs
// nor the next Plan nor Stats.
func TestPlanIsACopy(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	a, b := g.Input("a", tensor.Float32, 4), g.Input("b", tensor.Float32, 4)
	w := g.Variable("w", f32(t, []float32{1, 1, 1, 1}, 4))
	outs := []*graph.Node{ops.Sub(a, b), ops.Mul(a, w)}
	p, err := exec.Compile(be, outs, exec.Update(w, ops.Add(w, w)), exec.VerifyEachPass())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	before, stats := p.Plan().Format(), p.Stats().String()

	pl := p.Plan()
	for i, s := range pl.Steps {
		if s.Kind == exec.KernelStep && s.Node.Op() == ops.OpSub {
			pl.Steps[i].In[0], pl.Steps[i].In[1] = s.In[1], s.In[0]
		}
	}
	pl.Outputs[0], pl.Outputs[1] = pl.Outputs[1], pl.Outputs[0]
	for i := range pl.Values {
		pl.Values[i].Offset += 64
		pl.Values[i].Index = 0
	}
	pl.Vars[0].Update = -1
	pl.Inputs[0], pl.Inputs[1] = pl.Inputs[1], pl.Inputs[0]
	pl.InputNodes[0] = nil
	pl.Live[0] = -1
	pl.ArenaBytes = 0
	pl.Steps = pl.Steps[:0]
	pl.Graph.Input("extra", tensor.Float32, 1)

	feeds := exec.Feeds{a: f32(t, []float32{1, 2, 3, 4}, 4), b: f32(t, []float32{10, 20, 30, 40}, 4)}
	for run, scale := range []float32{1, 2} { // w doubles after each Run
		got, err := p.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		// hand: a-b, and a*w with w = 1 then 2
		if err := exectest.Compare(got[0], f32(t, []float32{-9, -18, -27, -36}, 4), 0); err != nil {
			t.Errorf("run %d, a-b: %v", run, err)
		}
		if err := exectest.Compare(got[1], f32(t, []float32{scale, 2 * scale, 3 * scale, 4 * scale}, 4), 0); err != nil {
			t.Errorf("run %d, a*w: %v", run, err)
		}
	}
	if after := p.Plan().Format(); after != before {
		t.Errorf("the plan changed:\n%s\nwas\n%s", after, before)
	}
	if after := p.Stats().String(); after != stats {
		t.Errorf("the stats changed: %s, was %s", after, stats)
	}
}

// TestPlanCloneSharesNoList: every list reachable from a Plan, whatever
// fields it gains, is the clone's own (checked by reflection: no slice of
// the clone shares its first element with the original's).
func TestPlanCloneSharesNoList(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	a := g.Input("a", tensor.Float32, 4)
	w := g.Variable("w", f32(t, []float32{1, 2, 3, 4}, 4))
	p, err := exec.Compile(be, []*graph.Node{ops.Exp(ops.Mul(a, w)), ops.Scalar(a, 1)}, exec.Update(w, ops.Neg(w)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	orig := p.Plan()
	checked := 0
	var walk func(path string, x, y reflect.Value)
	walk = func(path string, x, y reflect.Value) {
		switch x.Kind() {
		case reflect.Struct:
			for i := 0; i < x.NumField(); i++ {
				if x.Type().Field(i).IsExported() {
					walk(path+"."+x.Type().Field(i).Name, x.Field(i), y.Field(i))
				}
			}
		case reflect.Slice:
			if x.Len() == 0 {
				return
			}
			checked++
			if x.Index(0).Addr().Pointer() == y.Index(0).Addr().Pointer() {
				t.Errorf("%s is shared", path)
			}
			for i := 0; i < x.Len(); i++ {
				walk(path+"[i]", x.Index(i), y.Index(i))
			}
		}
	}
	walk("Plan", reflect.ValueOf(*orig), reflect.ValueOf(*orig.Clone()))
	// The plan has Values, Steps (with In), Inputs, InputNodes, Vars,
	// Outputs, Consts and Live, all non-empty here: 8 kinds of list, and
	// one In per step.
	if want := 8 + len(orig.Steps); checked != want {
		t.Errorf("checked %d lists, want %d", checked, want)
	}
}

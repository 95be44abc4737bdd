package exectest

import (
	"math"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// TestControlCasesReference evaluates the control-flow cases with the
// reference (what the backends are compared with) and checks the values
// a hand or NumPy calculation gives: the golden cases' Want, and the
// Newton loop's trip count and bounded result.
func TestControlCasesReference(t *testing.T) {
	byName := map[string][]*tensor.Tensor{}
	for _, c := range append(controlCases(), controlGradCases()...) {
		g := graph.New()
		outs, feeds := c.Build(g)
		if err := g.Err(); err != nil {
			t.Fatalf("%s: building: %v", c.Name, err)
		}
		got, err := Eval(outs, feeds)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for i, w := range c.Want {
			if err := Compare(got[i], w, c.Tol); err != nil {
				t.Errorf("%s: output %d: reference and golden differ: %v", c.Name, i, err)
			}
		}
		byName[c.Name] = got
	}
	// Newton's square root of [2 9 0.25] from 1 (numpy, /usr/bin/python3,
	// the same loop in float64): 6 trips to |x²-a| <= 1e-10; after 2
	// trips [17/12 3.4 0.5125] (by hand: 1 -> 1.5 -> 17/12; 1 -> 5 ->
	// 3.4; 1 -> 0.625 -> 0.5125).
	w := byName["control/while"]
	if k := w[1].Float64s()[0]; k != 6 {
		t.Errorf("While ran %v trips, want 6", k)
	}
	if err := Compare(w[0], Tensor(tensor.Float64, []float64{math.Sqrt2, 3, 0.5}, 3), 1e-10); err != nil {
		t.Errorf("While: %v", err)
	}
	if err := Compare(w[2], Tensor(tensor.Float64, []float64{17.0 / 12, 3.4, 0.5125}, 3), 0); err != nil {
		t.Errorf("WhileMax: %v", err)
	}
	if k := w[3].Float64s()[0]; k != 2 {
		t.Errorf("WhileMax ran %v trips, want its bound 2", k)
	}
	// The Scan counts 5 steps; its i64 ys are the step count times k:
	// [1·3 2·1 3·4 4·1 5·5] (by hand).
	s := byName["control/scan"]
	if k := s[1].Float64s()[0]; k != 5 {
		t.Errorf("Scan counter %v, want 5", k)
	}
	if err := Compare(s[3], Tensor(tensor.Int64, []float64{3, 2, 12, 4, 25}, 5), 0); err != nil {
		t.Errorf("Scan's i64 ys: %v", err)
	}
	// Length 0: the initial carry, empty ys.
	r := byName["control/scan-reverse"]
	if err := Compare(r[2], Rand(tensor.Float64, tensor.Shape{3}, -1, 1, 231), 0); err != nil || r[3].Shape().String() != "[0,3]" {
		t.Errorf("Scan of length 0: carry %v (%v), ys %s", r[2], err, r[3].Shape())
	}
	// The nested loop's counter: 3 trips.
	if k := byName["control/nested"][1].Float64s()[0]; k != 3 {
		t.Errorf("nested While ran %v trips, want 3", k)
	}
}

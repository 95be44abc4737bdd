package ops_test

import (
	"testing"

	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// evalVector evaluates f of the vector 0, 1, ..., d-1 with the float64
// reference interpreter.
func evalVector(t *testing.T, d int, f func(x *graph.Node) *graph.Node) []float64 {
	t.Helper()
	g := graph.New()
	x := g.Input("x", tensor.Float64, d)
	out := f(x)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	res, err := exectest.Eval([]*graph.Node{out}, map[*graph.Node]*tensor.Tensor{x: seq(d)})
	if err != nil {
		t.Fatal(err)
	}
	return res[0].Float64s()
}

// TestPadModesIndexMaps checks the pad modes, for every axis length 1..6
// and widths 0..13 on each side (within one period and far beyond it),
// against numpy.pad's index maps written directly: output position p
// holds x[src(p - low)], where src clamps (edge), takes the remainder
// modulo d (wrap) or reflects with period 2(d-1) (reflect; an axis of
// length 1 repeats its element).
func TestPadModesIndexMaps(t *testing.T) {
	mod := func(a, m int) int { return ((a % m) + m) % m }
	maps := map[string]struct {
		f   func(x *graph.Node, w ops.PadWidth) *graph.Node
		src func(i, d int) int
	}{
		"edge": {func(x *graph.Node, w ops.PadWidth) *graph.Node { return ops.PadEdge(x, w) }, func(i, d int) int { return min(max(i, 0), d-1) }},
		"wrap": {func(x *graph.Node, w ops.PadWidth) *graph.Node { return ops.PadWrap(x, w) }, func(i, d int) int { return mod(i, d) }},
		"reflect": {func(x *graph.Node, w ops.PadWidth) *graph.Node { return ops.PadReflect(x, w) }, func(i, d int) int {
			if d == 1 {
				return 0
			}
			m := mod(i, 2*(d-1))
			if m >= d {
				m = 2*(d-1) - m
			}
			return m
		}},
	}
	for name, m := range maps {
		for d := 1; d <= 6; d++ {
			for lo := 0; lo <= 13; lo++ {
				for hi := 0; hi <= 13; hi += 3 {
					w := ops.PadWidth{Low: lo, High: hi}
					got := evalVector(t, d, func(x *graph.Node) *graph.Node { return m.f(x, w) })
					if len(got) != lo+d+hi {
						t.Fatalf("%s d=%d %d:%d: %d elements", name, d, lo, hi, len(got))
					}
					for p, v := range got {
						if want := float64(m.src(p-lo, d)); v != want {
							t.Fatalf("%s d=%d %d:%d: got %v, element %d want %v", name, d, lo, hi, got, p, want)
						}
					}
				}
			}
		}
	}
}

// TestRollRepeatIndexMaps checks Roll (out[(i+s) mod d] = x[i]) for
// shifts -9..9 and Repeat (x[i] counts[i] times, in order) for counts
// drawn from a small pattern, against those definitions.
func TestRollRepeatIndexMaps(t *testing.T) {
	for d := 1; d <= 5; d++ {
		for s := -9; s <= 9; s++ {
			got := evalVector(t, d, func(x *graph.Node) *graph.Node { return ops.Roll(x, s) })
			for i := range d {
				if got[((i+s)%d+d)%d] != float64(i) {
					t.Fatalf("Roll d=%d shift %d: %v", d, s, got)
				}
			}
		}
	}
	for d := 1; d <= 6; d++ {
		for k := range 5 {
			counts := make([]int, d)
			var want []float64
			for i := range counts {
				counts[i] = (i*7 + k*3) % 4 // 0..3, changing at every element
				for range counts[i] {
					want = append(want, float64(i))
				}
			}
			got := evalVector(t, d, func(x *graph.Node) *graph.Node { return ops.Repeat(x, counts, 0) })
			if len(got) != len(want) {
				t.Fatalf("Repeat %v: %v, want %v", counts, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("Repeat %v: %v, want %v", counts, got, want)
				}
			}
		}
	}
}

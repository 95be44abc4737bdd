package mnist

import (
	"fmt"
	"testing"

	"github.com/loomgraph/loom/optim"
)

// TestShuffle: a permutation that moves almost everything, the same for
// a seed, another for another seed.
func TestShuffle(t *testing.T) {
	perm := func(seed uint64) []int {
		o := make([]int, 100)
		for i := range o {
			o[i] = i
		}
		Shuffle(optim.NewRand(seed), o)
		return o
	}
	a, b, c := perm(1), perm(1), perm(2)
	seen := make([]bool, 100)
	moved := 0
	for i, v := range a {
		if seen[v] {
			t.Fatalf("%d twice in %v", v, a)
		}
		seen[v] = true
		if v != i {
			moved++
		}
	}
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) == fmt.Sprint(c) || moved < 90 {
		t.Errorf("seed 1 twice: %v / %v; seed 2: %v; %d moved", a, b, c, moved)
	}
}

// TestBatch: the examples 2 and 0 of a set of three, in that order.
func TestBatch(t *testing.T) {
	d := &Dataset{X: make([]float32, 3*Pixels), Y: []uint8{4, 5, 6}, N: 3}
	for i := range d.X {
		d.X[i] = float32(i)
	}
	x, y := make([]float32, 2*Pixels), make([]int32, 2)
	d.Batch([]int{2, 0}, x, y)
	if x[0] != 2*Pixels || x[Pixels-1] != 3*Pixels-1 || x[Pixels] != 0 || x[2*Pixels-1] != Pixels-1 || y[0] != 6 || y[1] != 4 {
		t.Errorf("x[0], x[783], x[784], x[1567] = %v %v %v %v, y = %v; want 1568 2351 0 783, [6 4]",
			x[0], x[Pixels-1], x[Pixels], x[2*Pixels-1], y)
	}
	if h := d.Head(2); h.N != 2 || len(h.X) != 2*Pixels || len(h.Y) != 2 || d.Head(0) != d || d.Head(5) != d {
		t.Errorf("Head(2) = %d examples, %d pixels; Head(0), Head(5) must be d", h.N, len(h.X))
	}
}

func TestEvalBatch(t *testing.T) {
	// By hand: the largest of 1000, 500, 250, 100, 50, 10 dividing N.
	for n, want := range map[int]int{10000: 1000, 1500: 500, 750: 250, 300: 100, 150: 50, 70: 10, 7: 1} {
		if got := (&Dataset{N: n}).EvalBatch(); got != want {
			t.Errorf("N=%d: EvalBatch %d, want %d", n, got, want)
		}
	}
}

package cpu

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestCollectiveOverlap: a collective whose result is read only at the
// end runs while the independent steps after it do, and the results are
// those of the plain order (hand values over 2 ranks).
func TestCollectiveOverlap(t *testing.T) {
	comms, err := dist.NewGroup(2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	be, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	y := g.Input("y", tensor.Float32, 4)
	sum := ops.AllReduce(x, ops.ReduceSum, 2)
	other := ops.Sum(ops.Mul(y, y))     // independent of the collective
	out := ops.Add(sum, ops.Exp(other)) // reads the collective's result last
	res := make([]*tensor.Tensor, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		p, err := exec.Compile(be, []*graph.Node{out}, exec.WithCommunicator(comms[r]), exec.DisablePasses("fuse"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if r == 0 {
			lowered, err := be.Lower(p.Plan())
			if err != nil {
				t.Fatal(err)
			}
			e := lowered.(*executable)
			started := false
			for k, w := range e.waves {
				if e.overlap[k] >= 0 {
					started = true
					if e.overlap[k] <= k+1 {
						t.Errorf("the collective of wave %d waits at wave %d: nothing overlaps it", k, e.overlap[k])
					}
					t.Logf("the collective (step %d of %d) runs until wave %d", w.lo, len(e.plan.Steps), e.overlap[k])
				}
			}
			if !started {
				t.Errorf("no collective runs on its own goroutine")
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			xv, _ := tensor.New([]float32{1, 2, 3, float32(r)}, 4)
			yv := tensor.Zeros(tensor.Float32, 4)
			outs, err := p.Run(context.Background(), exec.Feeds{x: xv, y: yv})
			if err != nil {
				t.Error(err)
				return
			}
			res[r] = outs[0]
		}()
	}
	wg.Wait()
	for r := range 2 {
		if res[r] == nil {
			continue
		}
		// x summed over the ranks is [2 4 6 1]; exp(sum(0*0)) = 1 (hand).
		for i, want := range []float64{3, 5, 7, 2} {
			if got := res[r].Float64(i); got != want {
				t.Errorf("rank %d: out[%d] = %v, want %v", r, i, got, want)
			}
		}
	}
}

//go:build linux

package cuda

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

// TestCollectivesTwoRanks runs two ranks of an in-process group, each a
// program on its own backend (as ranks are processes with one backend
// each: a backend's device goroutine waits in a collective, so two ranks
// cannot share one), through the host staging path.
func TestCollectivesTwoRanks(t *testing.T) {
	bs := []*Backend{open(t), open(t)}
	defer bs[0].Close()
	defer bs[1].Close()
	comms, err := dist.NewGroup(2, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 2)
	y := ops.Exp(ops.Neg(x)) // a kernel before the collective: the staging copy must wait for it
	outs := []*graph.Node{ops.AllReduce(y, ops.ReduceSum, 2), ops.AllGather(x, 1, 2), ops.ReduceScatter(x, ops.ReduceMax, 1, 2)}
	res := make([][]*tensor.Tensor, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		p, err := exec.Compile(bs[r], outs, exec.WithCommunicator(comms[r]))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		xv := tensor.Zeros(tensor.Float32, 2, 2)
		for k := range 4 {
			xv.SetFloat64(k, float64(10*r+k)) // rank r: [[10r, 10r+1], [10r+2, 10r+3]]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[r], errs[r] = p.Run(context.Background(), exec.Feeds{x: xv})
		}()
	}
	wg.Wait()
	for r := range 2 {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		o := res[r]
		// exp(-0) + exp(-10) = 1.0000453999, float64 reference of the first element.
		if got := o[0].Float64(0); got < 1.0000453 || got > 1.0000455 {
			t.Errorf("rank %d: AllReduce(exp(-x))[0] = %v, want 1+exp(-10)", r, got)
		}
		// gather along axis 1: [[0,1,10,11],[2,3,12,13]] (hand).
		for k, w := range []float64{0, 1, 10, 11, 2, 3, 12, 13} {
			if got := o[1].Float64(k); got != w {
				t.Errorf("rank %d: AllGather[%d] = %v, want %v", r, k, got, w)
			}
		}
		// max over ranks is rank 1's [[10,11],[12,13]]; rank r keeps column r.
		for k, w := range []float64{float64(10 + r), float64(12 + r)} {
			if got := o[2].Float64(k); got != w {
				t.Errorf("rank %d: ReduceScatter max[%d] = %v, want %v", r, k, got, w)
			}
		}
	}
}

package exec_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// onRanks compiles outs for each of the n ranks of an in-process group
// and runs rank r with feeds(r), all at once; it returns each rank's
// outputs.
func onRanks(t *testing.T, n int, outs []*graph.Node, feeds func(r int) exec.Feeds) [][]*tensor.Tensor {
	t.Helper()
	comms, err := dist.NewGroup(n, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	be := cpuBackend(t)
	res := make([][]*tensor.Tensor, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		p, err := exec.Compile(be, outs, exec.WithCommunicator(comms[r]))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[r], errs[r] = p.Run(context.Background(), feeds(r))
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	return res
}

func ranged(t *testing.T, f func(i int) float64, shape ...int) *tensor.Tensor {
	t.Helper()
	x := tensor.Zeros(tensor.Float32, shape...)
	for i := range x.Size() {
		x.SetFloat64(i, f(i))
	}
	return x
}

func TestCollectiveOps(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	outs := []*graph.Node{
		ops.AllReduce(x, ops.ReduceSum, 3),
		ops.AllReduce(x, ops.ReduceMean, 3),
		ops.AllReduce(x, ops.ReduceMax, 3),
		ops.AllReduce(x, ops.ReduceMin, 3),
		ops.AllGather(x, 0, 3),
		ops.AllGather(x, -1, 3),
		ops.ReduceScatter(x, ops.ReduceSum, 1, 3),
		ops.Broadcast(x, 1, 3),
		ops.Reduce(x, ops.ReduceSum, 2, 3),
	}
	// Rank r holds x[i][j] = 100r + 10i + j (hand calculation below).
	res := onRanks(t, 3, outs, func(r int) exec.Feeds {
		return exec.Feeds{x: ranged(t, func(k int) float64 { return float64(100*r + 10*(k/3) + k%3) }, 2, 3)}
	})
	for r := range 3 {
		o := res[r]
		// sum over r of 100r is 300: 300 + 3(10i + j).
		checkVals(t, "sum", o[0], 300, 303, 306, 330, 333, 336)
		checkVals(t, "mean", o[1], 100, 101, 102, 110, 111, 112)
		checkVals(t, "max", o[2], 200, 201, 202, 210, 211, 212)
		checkVals(t, "min", o[3], 0, 1, 2, 10, 11, 12)
		checkVals(t, "gather 0", o[4], 0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112, 200, 201, 202, 210, 211, 212)
		checkVals(t, "gather 1", o[5], 0, 1, 2, 100, 101, 102, 200, 201, 202, 10, 11, 12, 110, 111, 112, 210, 211, 212)
		// Rank r gets column r of the sum.
		checkVals(t, "scatter", o[6], float64(300+3*r), float64(330+3*r))
		checkVals(t, "broadcast", o[7], 100, 101, 102, 110, 111, 112)
		if r == 2 {
			checkVals(t, "reduce at the root", o[8], 300, 303, 306, 330, 333, 336)
		} else {
			checkVals(t, "reduce elsewhere", o[8], 0, 0, 0, 0, 0, 0)
		}
	}
}

// TestCollectiveGradients: rank r's loss is L_r = sum(c_r * f(x_r)); the
// gradient each rank computes is that of the total L = sum_r L_r with
// respect to its own x_r.
func TestCollectiveGradients(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	c := g.Input("c", tensor.Float32, 2)
	cg := g.Input("cg", tensor.Float32, 6)
	lossAR := ops.Sum(ops.Mul(c, ops.AllReduce(x, ops.ReduceSum, 3)))
	lossMax := ops.Sum(ops.Mul(c, ops.AllReduce(x, ops.ReduceMax, 3)))
	lossAG := ops.Sum(ops.Mul(cg, ops.AllGather(x, 0, 3)))
	lossB := ops.Sum(ops.Mul(c, ops.Broadcast(x, 0, 3)))
	outs := []*graph.Node{
		autodiff.Grad(lossAR, x)[0], autodiff.Grad(lossMax, x)[0],
		autodiff.Grad(lossAG, x)[0], autodiff.Grad(lossB, x)[0],
	}
	xs := [][]float64{{1, 5}, {3, 5}, {2, 5}} // element 1 ties on every rank
	res := onRanks(t, 3, outs, func(r int) exec.Feeds {
		return exec.Feeds{
			x:  ranged(t, func(k int) float64 { return xs[r][k] }, 2),
			c:  ranged(t, func(k int) float64 { return float64(r + 1) }, 2),    // c_r = r+1: sum 6
			cg: ranged(t, func(k int) float64 { return float64(10*r + k) }, 6), // cg_r[k] = 10r + k
		}
	})
	for r := range 3 {
		o := res[r]
		// dL/dx_r = sum_s c_s = 6 for both elements.
		checkVals(t, "AllReduce sum", o[0], 6, 6)
		// max: element 0's max is rank 1's 3: all 6 goes there; element 1
		// ties on all three ranks: 6/3 = 2 each.
		want0 := 0.0
		if r == 1 {
			want0 = 6
		}
		checkVals(t, "AllReduce max", o[1], want0, 2)
		// AllGather: dL/dx_r[k] = sum_s cg_s[2r + k] = 3(2r+k) + 10(0+1+2).
		checkVals(t, "AllGather", o[2], float64(3*(2*r)+30), float64(3*(2*r+1)+30))
		// Broadcast from 0: rank 0 gets sum_s c_s = 6, the others 0.
		if r == 0 {
			checkVals(t, "Broadcast", o[3], 6, 6)
		} else {
			checkVals(t, "Broadcast", o[3], 0, 0)
		}
	}
}

func TestCollectiveCompileErrors(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	y := ops.AllReduce(x, ops.ReduceSum, 2)
	if _, err := exec.Compile(be, []*graph.Node{y}); err == nil || !strings.Contains(err.Error(), "compile with exec.WithCommunicator") {
		t.Errorf("no communicator: %v", err)
	}
	if _, err := exec.Compile(be, []*graph.Node{y}, exec.WithCommunicator(dist.Local{})); err == nil || !strings.Contains(err.Error(), "built for 2 ranks, and the communicator (local) has 1") {
		t.Errorf("wrong size: %v", err)
	}
	if _, err := exec.Compile(be, []*graph.Node{y}, exec.WithCommunicator(nil)); err == nil {
		t.Error("nil communicator: no error")
	}
	// Build errors name the op (each in a graph of its own: errors are sticky).
	f32 := func(dims ...int) *graph.Node { return graph.New().Input("x", tensor.Float32, dims...) }
	for _, c := range []struct {
		n    *graph.Node
		want string
	}{
		{ops.AllReduce(f32(4), ops.ReduceSum, 0), "AllReduce(f32[4]): the number of ranks is 0"},
		{ops.AllReduce(f32(4), ops.ReduceOp(9), 2), "unknown reduction"},
		{ops.AllReduce(graph.New().Input("i", tensor.Int32, 2), ops.ReduceMean, 2), "requires a float or complex dtype"},
		{ops.ReduceScatter(f32(4), ops.ReduceSum, 0, 3), "ReduceScatter(f32[4]): axis 0 has length 4, which does not divide into 3 equal blocks"},
		{ops.AllGather(f32(), 0, 2), "out of range for a scalar"},
		{ops.Broadcast(f32(4), 2, 2), "root rank 2 is out of range for 2 ranks"},
	} {
		err := c.n.Err()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "collective_test.go:") {
			t.Errorf("%v, want an error containing %q and the call site", err, c.want)
		}
	}
}

// TestCollectiveTimeout: a rank that never arrives makes the others fail
// with ErrTimeout, and the Program stays usable for its error.
func TestCollectiveTimeout(t *testing.T) {
	comms, _ := dist.NewGroup(2, 200*time.Millisecond)
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	p, err := exec.Compile(be, []*graph.Node{ops.AllReduce(x, ops.ReduceSum, 2)}, exec.WithCommunicator(comms[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	_, err = p.Run(context.Background(), exec.Feeds{x: tensor.Zeros(tensor.Float32, 4)})
	// The first collective of a first Run is the plans' fingerprint check.
	if !errors.Is(err, dist.ErrTimeout) || !strings.Contains(err.Error(), "rank 0 of 2") {
		t.Errorf("rank 1 absent: %v, want ErrTimeout naming the rank", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timeout took %v", d)
	}
}

// TestCollectivesEarly: an AllReduce built after the rest of the graph
// runs as soon as its operand is computed (the bucket of a data-parallel
// step), before the unrelated work built before it.
func TestCollectivesEarly(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 8)
	early := ops.Exp(x)
	late := ops.Tanh(ops.Sin(ops.Log(early))) // needs early too: without the move it comes first
	bucket := ops.AllReduce(ops.Reshape(early, 2, 4), ops.ReduceSum, 1)
	p, err := exec.Compile(cpuBackend(t), []*graph.Node{late, bucket}, exec.WithCommunicator(dist.Local{}), exec.DisablePasses("fuse"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var names []string
	for _, s := range p.Plan().Steps {
		if s.Kind != exec.CopyStep {
			names = append(names, s.Node.Op().String())
		}
	}
	got := strings.Join(names, " ")
	if !strings.HasPrefix(got, "Exp Reshape AllReduce") {
		t.Errorf("steps %s: want Exp Reshape AllReduce first", got)
	}
}

// TestCollectiveMismatch: ranks that compiled different programs fail at
// their first Run with ErrMismatch, not with a hang or wrong numbers.
func TestCollectiveMismatch(t *testing.T) {
	comms, _ := dist.NewGroup(2, 10*time.Second)
	be := cpuBackend(t)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		g := graph.New()
		x := g.Input("x", tensor.Float32, 4)
		y := ops.AllReduce(x, ops.ReduceSum, 2)
		if r == 1 {
			y = ops.AllReduce(ops.Exp(x), ops.ReduceSum, 2) // another program
		}
		p, err := exec.Compile(be, []*graph.Node{y}, exec.WithCommunicator(comms[r]))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = p.Run(context.Background(), exec.Feeds{x: tensor.Zeros(tensor.Float32, 4)})
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if !errors.Is(err, dist.ErrMismatch) || !strings.Contains(err.Error(), "compiled program fingerprints differ") {
			t.Errorf("rank %d: %v, want ErrMismatch", r, err)
		}
	}
}

package cpu

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestWorkersFor: the cost-based split. Expected counts by hand from
// grain.go's constants (50 GFLOP/s, 200 GFLOP/s for contractions whose
// sums have k terms times 1+8/k, 100 GB/s, parts of at least 10 µs, 15 µs
// for contractions):
//   - Add of 1K float32: 1K FLOPs (0.02 µs) + 12 KB (0.12 µs): 1 part.
//   - Add of 1M float32: 1M FLOPs (20 µs) + 12 MB (120 µs) = 140 µs:
//     14 parts, so every thread up to 14.
//   - Exp (8 FLOPs per element, ops/elementwise.go) of 32K float32:
//     256K FLOPs (5.2 µs) + 256 KB (2.6 µs) = 7.9 µs: 1 part; of 1M:
//     252 µs, 25 parts.
//   - MatMul 64x784 by 784x256: 2mnk = 25.7M FLOPs times 1+8/784
//     (130 µs) + 1.07 MB (10.7 µs) = 140 µs: 9 parts of 15 µs.
//   - MatMul 64x784 by 784x64: 6.42M FLOPs times 1+8/784 (32.4 µs) +
//     0.42 MB (4.2 µs) = 36.6 µs: 2 parts.
//   - MatMul 64x256 by 256x10: 328K FLOPs (1.7 µs) + 78 KB (0.8 µs): 1 part.
//   - Conv 64x1x28x28 by 8x1x3x3, padding 1 (examples/onnx's first
//     layer): 2·9 FLOPs per each of 401K outputs, 7.23M, times 1+8/9
//     (68.3 µs) + 200 KB in, 1.6 MB out, 288 B of filter (18.1 µs) =
//     86.3 µs: 5 parts.
func TestWorkersFor(t *testing.T) {
	g := graph.New()
	inputs := 0
	in := func(shape ...int) *graph.Node {
		inputs++
		return g.Input(fmt.Sprint("x", inputs), tensor.Float32, shape...)
	}
	cases := []struct {
		name    string
		n       *graph.Node
		threads int
		want    int
	}{
		{"add 1K", ops.Add(in(1024), in(1024)), 64, 1},
		{"add 1M on 2", ops.Add(in(1<<20), in(1<<20)), 2, 2},
		{"add 1M on 64", ops.Add(in(1<<20), in(1<<20)), 64, 14},
		{"exp 32K", ops.Exp(in(1 << 15)), 64, 1},
		{"exp 1M", ops.Exp(in(1 << 20)), 64, 25},
		{"matmul 64x784x256", ops.MatMul(in(64, 784), in(784, 256)), 64, 9},
		{"matmul 64x784x64 on 2", ops.MatMul(in(64, 784), in(784, 64)), 2, 2},
		{"conv 1 to 8 channels", ops.Conv(in(64, 1, 28, 28), in(8, 1, 3, 3), ops.Padding(1)), 64, 5},
		{"matmul 64x256x10", ops.MatMul(in(64, 256), in(256, 10)), 64, 1},
		{"one thread", ops.Add(in(1<<20), in(1<<20)), 1, 1},
		{"copy step", nil, 8, 8},
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := workersFor(c.n, c.threads); got != c.want {
			t.Errorf("%s: %d workers of %d, want %d (estimate %.0f ns)", c.name, got, c.threads, c.want, estimateIf(c.n))
		}
	}
}

func estimateIf(n *graph.Node) float64 {
	if n == nil {
		return 0
	}
	return estimateNs(n)
}

// TestPoolPartsOnce: every iteration of every loop runs exactly once, in
// the part For says, however many goroutines claim parts: pools of 2 and
// 16 threads (16 on a machine with fewer CPUs: more parts than workers),
// loops of every size from 0 to 40 with grains that give 1 to 16 parts,
// several callers at once (each with its own job, as instances have).
func TestPoolPartsOnce(t *testing.T) {
	for _, threads := range []int{2, 16} {
		p := newPool(threads)
		var wg sync.WaitGroup
		for c := 0; c < 3; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var j job
				for n := 0; n <= 40; n++ {
					for _, grain := range []int{1, 3, 7} {
						hits := make([]atomic.Int32, n)
						var parts atomic.Int32
						p.For(n, grain, threads, 0, &j, nil, nil, func(lo, hi, part int) {
							parts.Add(1)
							for i := lo; i < hi; i++ {
								hits[i].Add(1)
							}
						})
						for i := range hits {
							if h := hits[i].Load(); h != 1 {
								t.Errorf("threads %d, n %d, grain %d: iteration %d ran %d times", threads, n, grain, i, h)
								return
							}
						}
						if k := int(parts.Load()); n > 0 && (k < 1 || k > threads || (k > 1 && n/k < grain)) {
							t.Errorf("threads %d, n %d, grain %d: %d parts", threads, n, grain, k)
						}
					}
				}
			}()
		}
		wg.Wait()
		p.close()
	}
}

// TestPoolBalancedParts: with more parts allowed than goroutines to run
// them, For cuts the count that finishes first (hand: ceil(parts/2)
// rounds of ceil(n/parts) iterations on 2 goroutines, the fewest parts
// among equals): 1000 iterations in 2 parts whatever the cap above 2 (3
// parts would take 667, 4 parts 500 like 2); 10 in 2 (4 parts of 3, 3,
// 2, 2 take 6 against 5).
func TestPoolBalancedParts(t *testing.T) {
	if runtime.GOMAXPROCS(0) != 2 {
		t.Skip("written for GOMAXPROCS 2")
	}
	p := newPool(16)
	defer p.close()
	var j job
	for _, c := range []struct{ n, max, want int }{{1000, 1, 1}, {1000, 2, 2}, {1000, 3, 2}, {1000, 5, 2}, {1000, 16, 2}, {10, 5, 2}} {
		var parts atomic.Int32
		p.For(c.n, 1, c.max, 0, &j, nil, nil, func(lo, hi, part int) { parts.Add(1) })
		if got := int(parts.Load()); got != c.want {
			t.Errorf("%d iterations, at most %d parts: %d, want %d", c.n, c.max, got, c.want)
		}
	}
}

// TestBalance: balance on any machine (hand: ceil(parts/r) rounds of
// ceil(n/parts)): 10 iterations, 4 goroutines, up to 8 parts: 4 parts
// (3 per round, 1 round) beat 5 (2 rounds of 2); at most r parts are
// kept as they are; 1000 on 2 goroutines with up to 3: 2 (3 would take
// 2 rounds of 334).
func TestBalance(t *testing.T) {
	for _, c := range []struct{ n, k, r, want int }{{10, 8, 4, 4}, {7, 3, 4, 3}, {1000, 3, 2, 2}, {1000, 16, 2, 2}, {9, 6, 3, 3}} {
		if got := balance(c.n, c.k, c.r); got != c.want {
			t.Errorf("balance(%d, %d, %d) = %d, want %d", c.n, c.k, c.r, got, c.want)
		}
	}
}

// TestFusedWhereScalarIfTrue: Where(c, s, y), a scalar where the
// condition holds, runs in a fused group as Where(!c, y, s) with the
// negation in a register of its own. The groups below free y's and c's
// registers at the Where (their last reader), where a register taken for
// the negation after the frees would be one of them. Checked against
// exectest.Eval, the float64 reference: every element is either the
// scalar or Exp(x)·x, computed the same way.
func TestFusedWhereScalarIfTrue(t *testing.T) {
	be, err := New(Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3, 2500) // two chunks and a tail
	y := ops.Mul(ops.Exp(x), x)
	c := ops.Greater(x, ops.Scalar(x, 0.25))
	outs := []*graph.Node{
		ops.Mul(ops.Where(c, ops.Scalar(x, -7), y), ops.Scalar(x, 2)),
		ops.Sum(ops.Where(ops.Less(x, ops.Scalar(x, -1)), ops.Scalar(x, 0), ops.Add(x, ops.Scalar(x, 1))), -1),
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{3, 2500}, -3, 3, 11)}
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	fused := 0
	for _, st := range p.Plan().Steps {
		if st.Kind == exec.KernelStep && st.Node.Op() == opdef.OpFused {
			fused++
		}
	}
	if fused < 2 {
		t.Fatalf("%d fused groups in the plan, want 2", fused)
	}
	got, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		w, _ := tensor.Values[float32](want[i])
		gv, _ := tensor.Values[float32](got[i])
		for k := range gv {
			if d := math.Abs(float64(gv[k] - w[k])); d > 1e-5*max(1, math.Abs(float64(w[k]))) {
				t.Fatalf("output %d element %d: %v, want %v", i, k, gv[k], w[k])
			}
		}
	}
}

//go:build linux

package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The NCCL tests run two ranks in this process: two backends (each with
// its device goroutine) and the fake NCCL (cufake's fakenccl.c), whose
// ranks are threads. On a GPU machine they skip (real NCCL with two
// ranks needs two GPUs), but for TestNCCLOneRank.

func emuOnly(t *testing.T) {
	t.Helper()
	if mode != "emu" {
		t.Skipf("the two-rank NCCL tests run on the emulator's fake NCCL (mode %q)", mode)
	}
}

// ncclPair opens two backends and their NCCL communicators, bootstrapped
// over an in-process group (boot) or through NCCL_COMM_ID (env).
func ncclPair(t *testing.T, how string, opts ...NCCLOption) ([]*Backend, []*NCCL) {
	t.Helper()
	emuOnly(t)
	bs := []*Backend{open(t), open(t)}
	t.Cleanup(func() { bs[0].Close(); bs[1].Close() })
	group, err := dist.NewGroup(2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if how == "env" {
		t.Setenv("NCCL_COMM_ID", "127.0.0.1:29517")
	}
	ncs := make([]*NCCL, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Go(func() {
			if how == "env" {
				env := map[string]string{"LOOM_NCCL_RANK": fmt.Sprint(r), "OMPI_COMM_WORLD_SIZE": "2"}
				ncs[r], errs[r] = newNCCLFromEnv(bs[r], func(k string) string { return env[k] }, opts)
			} else {
				ncs[r], errs[r] = NewNCCL(context.Background(), bs[r], group[r], opts...)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ncs[0].Close(); ncs[1].Close() })
	for r, nc := range ncs {
		if nc.Rank() != r || nc.Size() != 2 || nc.Name() != "nccl" {
			t.Fatalf("rank %d: Rank %d Size %d Name %q", r, nc.Rank(), nc.Size(), nc.Name())
		}
	}
	return bs, ncs
}

// runRanks compiles outs on each rank's backend with its communicator
// and runs them concurrently; feed gives rank r's feeds.
func runRanks(t *testing.T, bs []*Backend, comms []dist.Communicator, outs func(r int) []*graph.Node, feed func(r int) exec.Feeds) ([][]*tensor.Tensor, []error) {
	t.Helper()
	res := make([][]*tensor.Tensor, len(bs))
	errs := make([]error, len(bs))
	var wg sync.WaitGroup
	for r := range bs {
		p, err := exec.Compile(bs[r], outs(r), exec.WithCommunicator(comms[r]))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		wg.Go(func() { res[r], errs[r] = p.Run(context.Background(), feed(r)) })
	}
	wg.Wait()
	return res, errs
}

// collectiveGraph builds every collective op of ops/collective.go on an
// operand x of type dt and shape [2, 4].
func collectiveGraph(dt tensor.DType) (*graph.Node, []*graph.Node, []string) {
	g := graph.New()
	x := g.Input("x", dt, 2, 4)
	y := ops.Neg(ops.Neg(x)) // an arena value (unless the compiler folds it)
	type build struct {
		name string
		fn   func() *graph.Node
	}
	all := []build{
		{"AllReduce sum", func() *graph.Node { return ops.AllReduce(y, ops.ReduceSum, 2) }},
		{"AllReduce mean", func() *graph.Node { return ops.AllReduce(y, ops.ReduceMean, 2) }},
		{"AllReduce max", func() *graph.Node { return ops.AllReduce(y, ops.ReduceMax, 2) }},
		{"AllReduce min", func() *graph.Node { return ops.AllReduce(y, ops.ReduceMin, 2) }},
		{"Reduce sum to 1", func() *graph.Node { return ops.Reduce(y, ops.ReduceSum, 1, 2) }},
		{"Broadcast from 1", func() *graph.Node { return ops.Broadcast(y, 1, 2) }},
		{"AllGather axis 0", func() *graph.Node { return ops.AllGather(y, 0, 2) }},
		{"AllGather axis 1", func() *graph.Node { return ops.AllGather(y, 1, 2) }},
		{"ReduceScatter sum axis 0", func() *graph.Node { return ops.ReduceScatter(y, ops.ReduceSum, 0, 2) }},
		{"ReduceScatter min axis 1", func() *graph.Node { return ops.ReduceScatter(y, ops.ReduceMin, 1, 2) }},
		{"ReduceScatter mean axis 1", func() *graph.Node { return ops.ReduceScatter(y, ops.ReduceMean, 1, 2) }},
		{"Reduce max to 0", func() *graph.Node { return ops.Reduce(y, ops.ReduceMax, 0, 2) }},
	}
	var outs []*graph.Node
	var names []string
	for _, b := range all {
		mean := strings.Contains(b.name, "mean")
		extreme := strings.Contains(b.name, "max") || strings.Contains(b.name, "min")
		if dt.IsInt() && mean || dt.IsComplex() && extreme {
			continue // no mean for integers; sums and means only for complex
		}
		names = append(names, b.name)
		outs = append(outs, b.fn())
	}
	return x, outs, names
}

// rankFeed is rank r's operand: element i (row-major) is 10r + i, plus
// (i - r)·1i for complex types.
func rankFeed(x *graph.Node, r int) exec.Feeds {
	v := tensor.Zeros(x.DType(), 2, 4)
	for i := range 8 {
		if x.DType().IsComplex() {
			v.SetComplex128(i, complex(float64(10*r+i), float64(i-r)))
		} else {
			v.SetFloat64(i, float64(10*r+i))
		}
	}
	return exec.Feeds{x: v}
}

// wantCollective is the hand-computed real part of output name on rank r
// for the operands of rankFeed (rank 0: i, rank 1: 10 + i).
func wantCollective(name string, r int) []float64 {
	seq := func(f func(i int) float64, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	switch name {
	case "AllReduce sum":
		return seq(func(i int) float64 { return float64(10 + 2*i) }, 8)
	case "AllReduce mean":
		return seq(func(i int) float64 { return float64(5 + i) }, 8)
	case "AllReduce max", "Broadcast from 1":
		return seq(func(i int) float64 { return float64(10 + i) }, 8)
	case "AllReduce min":
		return seq(func(i int) float64 { return float64(i) }, 8)
	case "Reduce sum to 1":
		return seq(func(i int) float64 { return float64(r * (10 + 2*i)) }, 8) // zeros on rank 0
	case "Reduce max to 0":
		return seq(func(i int) float64 { return float64((1 - r) * (10 + i)) }, 8) // zeros on rank 1
	case "AllGather axis 0":
		return seq(func(i int) float64 { return float64(10*(i/8) + i%8) }, 16)
	case "AllGather axis 1": // row k: rank 0's row k, then rank 1's
		return seq(func(i int) float64 { return float64(10*(i%8/4) + 4*(i/8) + i%4) }, 16)
	case "ReduceScatter sum axis 0": // row r of 10+2i
		return seq(func(i int) float64 { return float64(10 + 2*(4*r+i)) }, 4)
	case "ReduceScatter min axis 1": // columns 2r, 2r+1 of i
		return seq(func(i int) float64 { return float64(4*(i/2) + 2*r + i%2) }, 4)
	case "ReduceScatter mean axis 1": // columns 2r, 2r+1 of 5+i
		return seq(func(i int) float64 { return float64(5 + 4*(i/2) + 2*r + i%2) }, 4)
	}
	panic(name)
}

// TestNCCLCollectives runs every collective op through NCCL, in four
// dtypes, on two ranks bootstrapped both ways, and checks the values by
// hand, against the host-staged path (dist.NewGroup: the same bits), and
// that nothing was staged through the host.
func TestNCCLCollectives(t *testing.T) {
	for _, how := range []string{"boot", "env"} {
		t.Run(how, func(t *testing.T) {
			bs, ncs := ncclPair(t, how)
			for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Complex64} {
				if how == "env" && dt != tensor.Float32 {
					continue // the bootstrap does not change the collectives
				}
				x, outs, names := collectiveGraph(dt)
				staged := hostStaged.Load()
				got, errs := runRanks(t, bs, []dist.Communicator{ncs[0], ncs[1]}, func(int) []*graph.Node { return outs }, func(r int) exec.Feeds { return rankFeed(x, r) })
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("%v: %v", dt, err)
				}
				if d := hostStaged.Load() - staged; d != 0 {
					t.Errorf("%v: %d collectives were staged through the host on the NCCL path", dt, d)
				}
				group, _ := dist.NewGroup(2, 10*time.Second)
				ref, errs := runRanks(t, bs, group, func(int) []*graph.Node { return outs }, func(r int) exec.Feeds { return rankFeed(x, r) })
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("%v, host-staged: %v", dt, err)
				}
				for r := range 2 {
					for k, name := range names {
						want := wantCollective(name, r)
						o := got[r][k]
						if o.Size() != len(want) {
							t.Fatalf("%v rank %d %s: %d elements, want %d", dt, r, name, o.Size(), len(want))
						}
						for i, w := range want {
							gv := o.Float64(i)
							if dt.IsComplex() {
								gv = real(o.Complex128(i))
							}
							if gv != w {
								t.Errorf("%v rank %d %s[%d] = %v, want %v", dt, r, name, i, gv, w)
								break
							}
						}
						if string(o.Bytes()) != string(ref[r][k].Bytes()) {
							t.Errorf("%v rank %d %s: NCCL %v, host-staged %v", dt, r, name, o, ref[r][k])
						}
					}
				}
				if dt.IsComplex() {
					// The imaginary parts: sum (i-0)+(i-1) = 2i-1 (hand).
					if v := imag(got[0][0].Complex128(3)); v != 5 {
						t.Errorf("complex AllReduce sum[3] imaginary part %v, want 5", v)
					}
				}
			}
		})
	}
}

// TestNCCLInt16HostPath checks that int16 reductions, which NCCL lacks,
// take the host-staged path through the NCCL communicator (widened to
// int32), with the sum wrapping as int16.
func TestNCCLInt16HostPath(t *testing.T) {
	bs, ncs := ncclPair(t, "boot")
	g := graph.New()
	x := g.Input("x", tensor.Int16, 2)
	outs := []*graph.Node{ops.AllReduce(x, ops.ReduceSum, 2), ops.ReduceScatter(x, ops.ReduceMax, 0, 2)}
	staged := hostStaged.Load()
	got, errs := runRanks(t, bs, []dist.Communicator{ncs[0], ncs[1]}, func(int) []*graph.Node { return outs }, func(r int) exec.Feeds {
		v := tensor.Zeros(tensor.Int16, 2)
		v.SetFloat64(0, float64(30000-r*60000)) // 30000, -30000
		v.SetFloat64(1, float64(30000))         // 30000 on both: 60000 wraps to -5536
		return exec.Feeds{x: v}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if d := hostStaged.Load() - staged; d != 4 {
		t.Errorf("%d collectives staged through the host, want 4 (2 ops on 2 ranks)", d)
	}
	for r := range 2 {
		// 30000 + -30000 = 0; 30000 + 30000 = 60000 - 65536 = -5536 (int16 wrap).
		if a, b := got[r][0].Float64(0), got[r][0].Float64(1); a != 0 || b != -5536 {
			t.Errorf("rank %d: AllReduce = [%v %v], want [0 -5536]", r, a, b)
		}
		// max over ranks: [30000, 30000]; rank r keeps element r.
		if v := got[r][1].Float64(0); v != 30000 {
			t.Errorf("rank %d: ReduceScatter max = %v, want 30000", r, v)
		}
	}
}

// TestNCCLMismatch checks the plan fingerprint check of the first Run
// through NCCL's host-byte AllGather: ranks that compiled different
// programs fail with dist.ErrMismatch.
func TestNCCLMismatch(t *testing.T) {
	bs, ncs := ncclPair(t, "boot")
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	_, errs := runRanks(t, bs, []dist.Communicator{ncs[0], ncs[1]}, func(r int) []*graph.Node {
		if r == 0 {
			return []*graph.Node{ops.AllReduce(x, ops.ReduceSum, 2)}
		}
		return []*graph.Node{ops.AllReduce(x, ops.ReduceMax, 2)}
	}, func(int) exec.Feeds { return exec.Feeds{x: tensor.Zeros(tensor.Float32, 3)} })
	for r, err := range errs {
		if !errors.Is(err, dist.ErrMismatch) {
			t.Errorf("rank %d: got %v, want dist.ErrMismatch", r, err)
		}
	}
}

// TestNCCLTimeout checks that a rank that never calls gives the other an
// error wrapping dist.ErrTimeout within the timeout (the watchdog aborts
// the communicator), that the communicator is then broken, and that the
// backend still runs other programs.
func TestNCCLTimeout(t *testing.T) {
	bs, ncs := ncclPair(t, "boot", WithNCCLTimeout(300*time.Millisecond))
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	out := ops.AllReduce(ops.Exp(x), ops.ReduceSum, 2)
	ps := make([]*exec.Program, 2)
	for r := range 2 {
		p, err := exec.Compile(bs[r], []*graph.Node{out}, exec.WithCommunicator(ncs[r]))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		ps[r] = p
	}
	feeds := exec.Feeds{x: tensor.Zeros(tensor.Float32, 2)}
	// Both ranks run once (the fingerprint check and the AllReduce).
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for r := range 2 {
		wg.Go(func() { _, errs[r] = ps[r].Run(context.Background(), feeds) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// Rank 1 does not come again.
	start := time.Now()
	_, err := ps[0].Run(context.Background(), feeds)
	took := time.Since(start)
	if !errors.Is(err, dist.ErrTimeout) {
		t.Fatalf("got %v, want dist.ErrTimeout", err)
	}
	for _, s := range []string{"nccl", "AllReduce", "rank 0 of 2", "300ms"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("the timeout took %v, want about 300ms", took)
	}
	// Broken: the next Run fails at once.
	start = time.Now()
	_, err = ps[0].Run(context.Background(), feeds)
	if err == nil || !strings.Contains(err.Error(), "broken") || time.Since(start) > time.Second {
		t.Errorf("Run after the timeout: %v after %v, want a broken communicator at once", err, time.Since(start))
	}
	// The backend runs another program: exp(1) = 2.7182817 (float32).
	p, err := exec.Compile(bs[0], []*graph.Node{ops.Exp(x)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	one := tensor.Zeros(tensor.Float32, 2)
	one.SetFloat64(0, 1)
	res, err := p.Run(context.Background(), exec.Feeds{x: one})
	if err != nil {
		t.Fatalf("the backend after the abort: %v", err)
	}
	if v := res[0].Float64(0); v < 2.71828 || v > 2.71829 {
		t.Errorf("exp(1) = %v after the abort", v)
	}
}

// TestNCCLContextCancel checks that the Run's context ends a collective
// waiting for a rank that does not come, as the timeout does.
func TestNCCLContextCancel(t *testing.T) {
	bs, ncs := ncclPair(t, "boot")
	if got := ncs[0].Timeout(); got != DefaultNCCLTimeout {
		t.Errorf("Timeout() = %v, want the default %v", got, DefaultNCCLTimeout)
	}
	// Rank 0 alone in a host-byte collective with a deadline of 200 ms.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := ncs[0].AllReduce(ctx, make([]byte, 8), tensor.Float32, dist.Sum)
	if !errors.Is(err, dist.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "nccl: AllReduce") {
		t.Fatalf("got %v, want dist.ErrTimeout and context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the cancellation took %v", d)
	}
	_ = bs
}

// TestNCCLEnvErrors checks NewNCCLFromEnv's errors for a missing
// environment.
func TestNCCLEnvErrors(t *testing.T) {
	be := open(t)
	defer be.Close()
	t.Setenv("NCCL_COMM_ID", "")
	if _, err := NewNCCLFromEnv(be); err == nil || !strings.Contains(err.Error(), "NCCL_COMM_ID is not set") {
		t.Errorf("without NCCL_COMM_ID: %v", err)
	}
	t.Setenv("NCCL_COMM_ID", "127.0.0.1:29518")
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, "neither $LOOM_NCCL_RANK nor $OMPI_COMM_WORLD_RANK is set"},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "0"}, "neither $LOOM_NCCL_SIZE nor $OMPI_COMM_WORLD_SIZE is set"},
		{map[string]string{"LOOM_NCCL_RANK": "x", "LOOM_NCCL_SIZE": "2"}, `$LOOM_NCCL_RANK="x" is not an integer`},
		{map[string]string{"LOOM_NCCL_RANK": "2", "LOOM_NCCL_SIZE": "2"}, "rank 2 of 2 ranks is out of range"},
	} {
		_, err := newNCCLFromEnv(be, func(k string) string { return c.env[k] }, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("env %v: got %v, want %q", c.env, err, c.want)
		}
	}
	t.Setenv("LOOM_DIST_TIMEOUT", "soon")
	_, err := newNCCLFromEnv(be, func(k string) string { return map[string]string{"LOOM_NCCL_RANK": "0", "LOOM_NCCL_SIZE": "1"}[k] }, nil)
	if err == nil || !strings.Contains(err.Error(), `$LOOM_DIST_TIMEOUT="soon"`) {
		t.Errorf("a bad $LOOM_DIST_TIMEOUT: %v", err)
	}
}

// TestNCCLNotFound checks the error for a missing libnccl: it wraps
// exec.ErrUnavailable and names the paths tried.
func TestNCCLNotFound(t *testing.T) {
	t.Setenv("LOOM_LIBNCCL", "/nonexistent/loom-test/libnccl.so.2")
	t.Setenv("CUDA_HOME", "/nonexistent/cuda-home")
	_, err := loadNCCLLib(&libs{}) // a fresh set: the process's may hold the fake already
	if !errors.Is(err, exec.ErrUnavailable) || !errors.Is(err, cu.ErrNotFound) {
		t.Fatalf("got %v, want ErrUnavailable and cu.ErrNotFound", err)
	}
	for _, s := range []string{"/nonexistent/loom-test/libnccl.so.2 ($LOOM_LIBNCCL)", "/nonexistent/cuda-home/lib64/libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

// TestNCCLOneRank runs the collectives through NCCL with one rank (the
// identity): on the emulator with the fake, and on a GPU machine with the
// real libnccl.so.2 when it is found (else it skips, saying why).
func TestNCCLOneRank(t *testing.T) {
	be := open(t)
	defer be.Close()
	if _, err := loadNCCLLib(be.lib); err != nil {
		t.Skipf("no NCCL: %v", err)
	}
	nc, err := NewNCCL(context.Background(), be, dist.Local{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if v, err := nc.lib.Version(); err == nil {
		t.Logf("NCCL %d from %s", v, nc.lib.Path())
	}
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2, 3)
	outs := []*graph.Node{ops.AllReduce(x, ops.ReduceSum, 1), ops.AllReduce(x, ops.ReduceMean, 1), ops.AllGather(x, 1, 1),
		ops.ReduceScatter(x, ops.ReduceMax, 0, 1), ops.Broadcast(x, 0, 1), ops.Reduce(x, ops.ReduceSum, 0, 1)}
	p, err := exec.Compile(be, outs, exec.WithCommunicator(nc))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	xv := tensor.Zeros(tensor.Float32, 2, 3)
	for i := range 6 {
		xv.SetFloat64(i, float64(i)-2.5)
	}
	staged := hostStaged.Load()
	for run := range 2 {
		res, err := p.Run(context.Background(), exec.Feeds{x: xv})
		if err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for k, o := range res {
			if string(o.Bytes()) != string(xv.Bytes()) { // one rank: every collective is the identity
				t.Errorf("run %d: output %d (%s) = %v, want %v", run, k, outs[k].Op(), o, xv)
			}
		}
	}
	if d := hostStaged.Load() - staged; d != 0 {
		t.Errorf("%d collectives staged through the host", d)
	}
}

//go:build linux

package cuda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cufake"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/profile"
	"github.com/loomgraph/loom/tensor"
)

// The tests run on a real GPU when the driver loads and reports a device
// (the test binary built by `make gpu-test`, copied to a GPU machine), and
// otherwise on the emulator of exec/cuda/internal/cufake: fake libcuda,
// libnvrtc and libcublas that compile the generated CUDA C with the host
// C++ compiler and run it on the CPU. Without a C compiler they skip.
// LOOM_CUDA_TEST=gpu or =emu forces a mode.
var (
	mode    string // "gpu", "emu" or "" (skip)
	skipWhy string
)

func TestMain(m *testing.M) {
	os.Exit(setupAndRun(m))
}

func setupAndRun(m *testing.M) int {
	want := os.Getenv("LOOM_CUDA_TEST")
	if want != "emu" && realGPU() {
		mode = "gpu"
	} else if want != "gpu" {
		dir, err := os.MkdirTemp("", "loom-cufake")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		libs, err := cufake.Build(dir)
		switch {
		case errors.Is(err, cufake.ErrNoCompiler):
			skipWhy = "no GPU and no C compiler for the emulator: " + err.Error()
		case err != nil:
			fmt.Fprintln(os.Stderr, "building the CUDA emulator:", err)
			return 1
		default:
			for _, kv := range libs.Env() {
				k, v, _ := strings.Cut(kv, "=")
				os.Setenv(k, v)
			}
			if os.Getenv("LOOM_CUDA_CACHE") == "" {
				os.Setenv("LOOM_CUDA_CACHE", dir+"/cache")
			}
			mode = "emu"
		}
	} else {
		skipWhy = "LOOM_CUDA_TEST=gpu but no GPU is usable"
	}
	return m.Run()
}

// realGPU reports whether the real driver loads and has a device.
func realGPU() bool {
	if os.Getenv("LOOM_LIBCUDA") != "" {
		return false
	}
	d, err := cu.LoadDriver()
	if err != nil || d.Init() != nil {
		return false
	}
	n, err := d.DeviceCount()
	return err == nil && n > 0
}

// open opens cuda:0 or skips the test.
func open(t testing.TB) *Backend {
	t.Helper()
	if mode == "" {
		t.Skip(skipWhy)
	}
	b, err := Open(0)
	if err != nil {
		t.Fatalf("Open(0) in %s mode: %v", mode, err)
	}
	return b
}

func TestDevices(t *testing.T) {
	b := open(t)
	defer b.Close()
	d := b.Device()
	t.Logf("%s mode: %v", mode, d)
	if d.Name != "cuda:0" || d.Kind != exec.GPU || d.Memory <= 0 || d.Processors <= 0 || d.Compute == "" || d.Driver == "" {
		t.Errorf("Device() = %+v: want cuda:0, a GPU, memory, SMs, compute capability and driver version", d)
	}
	if mode == "emu" {
		// The emulator's fixed description (cufake): 4 SMs, 8 GiB,
		// compute capability 9.0, driver 13000.
		if d.Processors != 4 || d.Memory != 8<<30 || d.Compute != "9.0" || d.Driver != "13.0" {
			t.Errorf("emulated device = %+v", d)
		}
	}
	var found bool
	for _, dev := range exec.Devices() {
		if dev.Name == "cuda:0" {
			found = true
		}
	}
	if !found {
		t.Errorf("exec.Devices() = %v lacks cuda:0", exec.Devices())
	}
	if _, err := exec.Open("cuda:7"); !errors.Is(err, exec.ErrUnavailable) || !strings.Contains(err.Error(), "cuda:0 to cuda:") {
		t.Errorf("Open(cuda:7) = %v, want ErrUnavailable naming the devices there are", err)
	}
}

func TestConformance(t *testing.T) {
	if mode == "" {
		t.Skip(skipWhy)
	}
	if testing.Short() && mode == "emu" {
		t.Skip("-short: the conformance suite on the emulator takes minutes")
	}
	if mode == "emu" {
		// The emulator compiles each case's program with the host C++
		// compiler (about 0.3 s each on the 2-core development machine:
		// 850 s for the 3034 plain and 903 sampled opt cases, one at a
		// time). It runs the sampled suite (exectest.EmulatorEvery: every
		// op in every dtype still runs in both modes), two cases at once.
		// A GPU runs them all.
		exectest.RunSampled(t, func() (exec.Backend, error) { return Open(0) }, exectest.Sampling{Every: exectest.EmulatorEvery, Parallel: true})
		return
	}
	exectest.Run(t, func() (exec.Backend, error) { return Open(0) })
}

// runBoth compiles outs on the CPU and on the GPU, runs them with feeds and
// returns both results.
func runBoth(t *testing.T, b *Backend, outs []*graph.Node, feeds exec.Feeds, opts ...exec.Option) (gpu, host []*tensor.Tensor) {
	t.Helper()
	c, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, be := range []exec.Backend{b, c} {
		p, err := exec.Compile(be, outs, opts...)
		if err != nil {
			t.Fatalf("compile on %s: %v", be.Name(), err)
		}
		got, err := p.Run(context.Background(), feeds)
		p.Close()
		if err != nil {
			t.Fatalf("run on %s: %v", be.Name(), err)
		}
		if be == exec.Backend(b) {
			gpu = got
		} else {
			host = got
		}
	}
	return gpu, host
}

// TestGradients: the gradients of an MLP's loss and of a mix of ops agree
// with the CPU backend (itself checked against finite differences in
// autodiff's tests).
func TestGradients(t *testing.T) {
	b := open(t)
	defer b.Close()
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		g := graph.New()
		x := g.Input("x", dt, 16, 12)
		labels := g.Input("y", tensor.Int64, 16)
		w1 := g.Input("w1", dt, 12, 20)
		b1 := g.Input("b1", dt, 20)
		w2 := g.Input("w2", dt, 20, 5)
		h := ops.Tanh(ops.Add(ops.MatMul(x, w1), b1))
		logits := ops.MatMul(ops.Mul(h, ops.Sigmoid(h)), w2)
		loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(logits, labels))
		reg := ops.Sum(ops.Square(ops.Maximum(w1, ops.Scalar(w1, 0.1))))
		total := ops.Add(loss, ops.Mul(reg, ops.Scalar(reg, 1e-3)))
		grads := autodiff.Grad(total, w1, b1, w2)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}
		lab := tensor.Zeros(tensor.Int64, 16)
		for i := range 16 {
			lab.SetFloat64(i, float64(i%5))
		}
		feeds := exec.Feeds{
			x: exectest.Rand(dt, tensor.Shape{16, 12}, -1, 1, 1), labels: lab,
			w1: exectest.Rand(dt, tensor.Shape{12, 20}, -0.5, 0.5, 2), b1: exectest.Rand(dt, tensor.Shape{20}, -0.1, 0.1, 3),
			w2: exectest.Rand(dt, tensor.Shape{20, 5}, -0.5, 0.5, 4),
		}
		outs := append([]*graph.Node{total}, grads...)
		gpu, host := runBoth(t, b, outs, feeds)
		for i := range outs {
			// float32: sums in another order; 1e-4 relative to the CPU.
			tol := 1e-4
			if dt == tensor.Float64 {
				tol = 1e-10
			}
			if err := exectest.Compare(gpu[i], host[i], tol); err != nil {
				t.Errorf("%s output %d (%s): %v", dt, i, outs[i], err)
			}
		}
	}
}

// TestTraining: Variables stay on the device; a few SGD steps give the
// CPU's losses and weights.
func TestTraining(t *testing.T) {
	b := open(t)
	defer b.Close()
	c, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var losses [2][]float64
	var weights [2]*tensor.Tensor
	for k, be := range []exec.Backend{b, c} {
		g := graph.New()
		x := g.Input("x", tensor.Float32, 8, 4)
		y := g.Input("y", tensor.Float32, 8, 1)
		w := g.Variable("w", exectest.Rand(tensor.Float32, tensor.Shape{4, 1}, -1, 1, 9))
		loss := ops.Mean(ops.Square(ops.Sub(ops.MatMul(x, w), y)))
		gw := autodiff.Grad(loss, w)[0]
		next := ops.Sub(w, ops.Mul(gw, ops.Scalar(gw, 0.1)))
		p, err := exec.Compile(be, []*graph.Node{loss}, exec.Update(w, next))
		if err != nil {
			t.Fatal(err)
		}
		feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{8, 4}, -1, 1, 5), y: exectest.Rand(tensor.Float32, tensor.Shape{8, 1}, -1, 1, 6)}
		for range 5 {
			out, err := p.Run(context.Background(), feeds)
			if err != nil {
				t.Fatal(err)
			}
			losses[k] = append(losses[k], out[0].Float64s()[0])
		}
		if weights[k], err = p.Read(w); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	for i := range losses[0] {
		if d := losses[0][i] - losses[1][i]; d > 1e-5 || d < -1e-5 {
			t.Errorf("step %d: loss %g on cuda, %g on cpu", i, losses[0][i], losses[1][i])
		}
	}
	if losses[0][4] >= losses[0][0] {
		t.Errorf("losses %v do not decrease", losses[0])
	}
	if err := exectest.Compare(weights[0], weights[1], 1e-5); err != nil {
		t.Errorf("weights after 5 steps: %v", err)
	}
}

// TestConcurrentRuns: Runs of one Program from several goroutines are
// serialised on its stream and each gets its own results.
func TestConcurrentRuns(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1000)
	y := ops.Sum(ops.Mul(ops.Exp(ops.Neg(x)), x))
	p, err := exec.Compile(b, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, _ := tensor.Full(tensor.Float32, float64(i), 1000)
			out, err := p.Run(context.Background(), exec.Feeds{x: in})
			if err != nil {
				errs <- err
				return
			}
			// 1000 * i*exp(-i), computed in float64.
			want := 1000 * float64(i) * math.Exp(-float64(i))
			if got := out[0].Float64(0); math.Abs(got-want) > 1e-5*(1+want) {
				err = fmt.Errorf("got %g, want %g", got, want)
			}
			if err != nil {
				errs <- fmt.Errorf("run %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestProfile: a profiled Run records each kernel's GPU time on the
// stream's track with flow arrows from the launches, transfers as copies,
// and the device memory counter; the trace passes the validator.
func TestProfile(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 64, 32)
	w := g.Variable("w", exectest.Rand(tensor.Float32, tensor.Shape{32, 16}, -1, 1, 3))
	y := ops.Softmax(ops.Tanh(ops.MatMul(x, w)), -1)
	rec := profile.New()
	p, err := exec.Compile(b, []*graph.Node{y}, exec.Record(rec))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := profile.NewContext(context.Background(), rec)
	for range 2 {
		if _, err := p.Run(ctx, exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{64, 32}, -1, 1, 4)}); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := rec.WriteTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := profile.Validate(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("trace invalid: %v", err)
	}
	trace := buf.String()
	for _, want := range []string{`"stream 0"`, `"MatMul"`, `"launch MatMul"`, `"cat":"copy"`, `"upload x`, `"download output 0"`, `"device memory"`, `"ph":"s"`, `"ph":"f"`, `"device":"cuda:0"`} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %s", want)
		}
	}
	var sum bytes.Buffer
	if err := rec.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	t.Logf("summary:\n%s", sum.String())
}

// opNoKernel is an op no backend has a kernel for (registered by this
// test file, outside the ops table).
var opNoKernel = graph.Op(opdef.NumOps() + 7)

func init() { graph.RegisterOp(opNoKernel, graph.OpInfo{Name: "NoKernelOp"}) }

// TestUnsupportedOp: an op the backend has no kernel for fails at
// Compile, naming the op, before anything runs.
func TestUnsupportedOp(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4, 4)
	y := g.Add(graph.Spec{Op: opNoKernel, Inputs: []*graph.Node{ops.Exp(x)}, DType: tensor.Float32, Shape: tensor.Shape{4, 4}})
	if err := b.Supports(y); !errors.Is(err, exec.ErrUnsupported) || !strings.Contains(err.Error(), "NoKernelOp") {
		t.Errorf("Supports(NoKernelOp) = %v, want ErrUnsupported naming the op", err)
	}
	// (exec's passes reject an op outside the ops table before asking the
	// backend; either way Compile names it.)
	if _, err := exec.Compile(b, []*graph.Node{y}); err == nil || !strings.Contains(err.Error(), "NoKernelOp") {
		t.Errorf("Compile = %v, want an error naming the op", err)
	}
	// Integer MatMul (no cuBLAS kernel) is refused by name too; the graph
	// builders never make one, so the node is built by hand.
	xi := g.Input("xi", tensor.Int32, 4, 4)
	mi := g.Add(graph.Spec{Op: ops.OpMatMul, Inputs: []*graph.Node{xi, xi}, DType: tensor.Int32, Shape: tensor.Shape{4, 4}})
	if err := b.Supports(mi); !errors.Is(err, exec.ErrUnsupported) || !strings.Contains(err.Error(), "MatMul") {
		t.Errorf("Supports(int32 MatMul) = %v, want ErrUnsupported naming MatMul", err)
	}
}

// TestClosed: a closed backend's programs and buffers fail cleanly.
func TestClosed(t *testing.T) {
	b := open(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	p, err := exec.Compile(b, []*graph.Node{ops.Exp(x)})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewBuffer(tensor.Zeros(tensor.Float32, 2)); !errors.Is(err, exec.ErrClosed) {
		t.Errorf("NewBuffer after Close = %v, want ErrClosed", err)
	}
	// A Program left open when its backend closes fails cleanly, and
	// closing it afterwards is not an error.
	b2 := open(t)
	p2, err := exec.Compile(b2, []*graph.Node{ops.Exp(x)})
	if err != nil {
		t.Fatal(err)
	}
	b2.Close()
	if _, err := p2.Run(context.Background(), exec.Feeds{x: tensor.Zeros(tensor.Float32, 3)}); !errors.Is(err, exec.ErrClosed) {
		t.Errorf("Run after the backend's Close = %v, want ErrClosed", err)
	}
	if err := p2.Close(); err != nil {
		t.Errorf("Close of a program after its backend's Close: %v", err)
	}
}

// resetLibs forgets the loaded libraries (tests of the loading path).
func resetLibs() {
	libsMu.Lock()
	libsVal, drvErr = nil, nil
	libsMu.Unlock()
}

// TestMissingDriver: without libcuda, Open fails with ErrUnavailable
// listing what it tried, Devices has no GPU and Default is the CPU.
func TestMissingDriver(t *testing.T) {
	if mode == "gpu" {
		t.Skip("a real driver is installed: the search would find it")
	}
	resetLibs()
	defer resetLibs()
	t.Setenv("LOOM_LIBCUDA", "/nonexistent/loom-test/libcuda.so.1")
	t.Setenv("LOOM_DEVICE", "")
	t.Setenv("CUDA_HOME", "/nonexistent/cuda-home")
	be, err := exec.Open("cuda")
	if !errors.Is(err, exec.ErrUnavailable) {
		t.Fatalf("Open(cuda) = %v, want ErrUnavailable", err)
	}
	// Issue 12, defect 18: the driver returned a nil *Backend inside the
	// interface, so be != nil and be.Close() panicked.
	if be != nil {
		t.Errorf("Open(cuda) returned a non-nil Backend %#v with its error", be)
	}
	if drv, err := (driver{}).Open(0); err == nil || drv != nil {
		t.Errorf("driver.Open(0) = %#v, %v; want a nil Backend and an error", drv, err)
	}
	for _, want := range []string{"/nonexistent/loom-test/libcuda.so.1", "libcuda.so.1", "/nonexistent/cuda-home/lib64", "/usr/local/cuda/lib64"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
	for _, d := range exec.Devices() {
		if d.Kind == exec.GPU {
			t.Errorf("Devices() lists %v without a driver", d)
		}
	}
	be, err = exec.Default()
	if err != nil {
		t.Fatalf("Default() = %v", err)
	}
	defer be.Close()
	if be.Name() != "cpu" {
		t.Errorf("Default() without a GPU = %s, want cpu", be.Name())
	}
}

// fakeMem is device memory for allocator tests: it hands out addresses
// and fails beyond a limit like cuMemAlloc.
type fakeMem struct {
	next, used, limit int64
	live              map[cu.DevicePtr]int64
	allocs, frees     int
}

func (f *fakeMem) MemAlloc(n int64) (cu.DevicePtr, error) {
	if f.used+n > f.limit {
		return 0, cu.Result(2) // CUDA_ERROR_OUT_OF_MEMORY
	}
	f.next += 1 << 40
	f.used += n
	f.live[cu.DevicePtr(f.next)] = n
	f.allocs++
	return cu.DevicePtr(f.next), nil
}

func (f *fakeMem) MemFree(p cu.DevicePtr) error {
	f.used -= f.live[p]
	delete(f.live, p)
	f.frees++
	return nil
}

func TestAllocator(t *testing.T) {
	// Size classes by hand: 512 minimum, powers of two to 1 MiB, then
	// multiples of 2 MiB.
	for _, c := range []struct{ n, class int64 }{{0, 512}, {1, 512}, {512, 512}, {513, 1024}, {1 << 20, 1 << 20}, {1<<20 + 1, 2 << 20}, {5 << 20, 6 << 20}} {
		if got := sizeClass(c.n); got != c.class {
			t.Errorf("sizeClass(%d) = %d, want %d", c.n, got, c.class)
		}
	}
	f := &fakeMem{limit: 8 << 20, live: map[cu.DevicePtr]int64{}}
	a := newAllocator(f)
	p1, err := a.alloc(3000) // class 4096
	if err != nil {
		t.Fatal(err)
	}
	if err := a.put(p1); err != nil {
		t.Fatal(err)
	}
	p2, _ := a.alloc(4000) // same class: the cached block, no driver call
	if p2 != p1 || f.allocs != 1 {
		t.Errorf("the cached block was not reused: %#x vs %#x, %d allocations", p2, p1, f.allocs)
	}
	if a.inUse != 4096 || a.cached != 0 {
		t.Errorf("inUse %d cached %d, want 4096 and 0", a.inUse, a.cached)
	}
	big, err := a.alloc(6 << 20)
	if err != nil {
		t.Fatal(err)
	}
	a.put(big) // cached: 6 MiB
	// 4 MiB more does not fit next to the cached 6 MiB (limit 8 MiB): the
	// cache is released and the allocation retried.
	if _, err := a.alloc(4 << 20); err != nil {
		t.Fatalf("allocation after releasing the cache: %v", err)
	}
	if f.frees != 1 || a.cached != 0 {
		t.Errorf("frees %d cached %d, want the cached block freed", f.frees, a.cached)
	}
	if _, err := a.alloc(16 << 20); !errors.Is(err, cu.Result(2)) {
		t.Errorf("alloc beyond the device = %v, want out of memory", err)
	}
	if err := a.put(12345); err == nil {
		t.Error("put of a foreign pointer succeeded")
	}
	if err := a.releaseAll(); err != nil || len(f.live) != 0 {
		t.Errorf("releaseAll: %v, %d blocks left", err, len(f.live))
	}
}

// TestGradientsMatchCPU: for the conformance cases (every op), the
// gradient of a weighted sum of the float outputs with respect to the
// float feeds is the same on the GPU as on the CPU (whose gradients
// autodiff's tests check by finite differences). On the emulator every
// third case runs, to keep make test short; on a GPU all of them.
func TestGradientsMatchCPU(t *testing.T) {
	b := open(t)
	defer b.Close()
	if testing.Short() && mode == "emu" {
		t.Skip("-short")
	}
	ran := 0
	for i, c := range exectest.Cases() {
		if mode == "emu" && i%3 != 0 {
			continue
		}
		g := graph.New()
		outs, feeds := c.Build(g)
		var xs []*graph.Node
		for n, v := range feeds {
			if v.DType().IsFloat() && n.Op() == graph.OpInput {
				xs = append(xs, n)
			}
		}
		slices.SortFunc(xs, func(a, b *graph.Node) int { return a.ID() - b.ID() })
		var loss *graph.Node
		for k, o := range outs {
			if !o.DType().IsFloat() || o.Shape().Size() == 0 {
				continue
			}
			// A fixed random weighting: no symmetric cancellation.
			w := g.Const(exectest.Rand(o.DType(), o.Shape(), 0.5, 1.5, uint64(100+k)))
			term := ops.Sum(ops.Mul(o, w))
			if loss == nil {
				loss = term
			} else {
				loss = ops.Add(loss, ops.Cast(term, loss.DType()))
			}
		}
		if loss == nil || len(xs) == 0 {
			continue
		}
		grads := autodiff.Grad(loss, xs...)
		if g.Err() != nil {
			continue // a discrete op on the path: no gradient to compare
		}
		t.Run(c.Name, func(t *testing.T) {
			gpu, host := runBoth(t, b, grads, feeds, exec.IgnoreUnusedFeeds())
			for k := range grads {
				tol := 1e-4 // float32, summed in another order
				if grads[k].DType() == tensor.Float64 {
					tol = 1e-9
				}
				if err := exectest.Compare(gpu[k], host[k], tol); err != nil {
					t.Errorf("d/d%s: %v", xs[k].Name(), err)
				}
			}
		})
		ran++
	}
	t.Logf("%d cases' gradients compared", ran)
	if ran < 50 {
		t.Errorf("only %d cases had gradients to compare", ran)
	}
}

// TestRunAllocations: a training step (feeds up, loss down, SGD updates
// of device-resident Variables, cuBLAS products) allocates nothing on the
// Go heap: the per-run driver and cuBLAS calls go through
// purego.SyscallN with arguments in reused buffers, and the launches'
// parameter blocks live in page-locked host memory.
func TestRunAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 16, 32)
	y := g.Input("y", tensor.Int64, 16)
	w1 := g.Variable("w1", exectest.Rand(tensor.Float32, tensor.Shape{32, 24}, -0.3, 0.3, 1))
	w2 := g.Variable("w2", exectest.Rand(tensor.Float32, tensor.Shape{24, 10}, -0.3, 0.3, 2))
	loss := ops.Mean(ops.SparseSoftmaxCrossEntropy(ops.MatMul(ops.Relu(ops.MatMul(x, w1)), w2), y))
	gs := autodiff.Grad(loss, w1, w2)
	p, err := exec.Compile(b, []*graph.Node{loss},
		exec.Update(w1, ops.Sub(w1, ops.Mul(gs[0], ops.Scalar(w1, 0.1)))),
		exec.Update(w2, ops.Sub(w2, ops.Mul(gs[1], ops.Scalar(w2, 0.1)))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	lab := tensor.Zeros(tensor.Int64, 16)
	feeds := exec.Feeds{x: exectest.Rand(tensor.Float32, tensor.Shape{16, 32}, 0, 1, 3), y: lab}
	outs := []*tensor.Tensor{tensor.Zeros(tensor.Float32)}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(20, func() {
		if err := p.RunInto(ctx, feeds, outs); err != nil {
			t.Fatal(err)
		}
	})
	kernels := p.Stats().Kernels
	t.Logf("%.1f allocations per training step of %d kernels", allocs, kernels)
	if allocs != 0 {
		t.Errorf("%.1f allocations per step of %d kernels", allocs, kernels)
	}
}

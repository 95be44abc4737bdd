package exec_test

// Regression tests for issue 12's defects in package exec (the numbers are
// the issue's): huge values (1, 3), ShareVariables of a closed program (5),
// calls racing Close (8), consistent checkpoints (9), nil receivers and
// arguments (13), atomic checkpoint files (14), typed-nil backends (18)
// and the NaN/Inf checker (20).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// line returns "trust_test.go:N" for the line after the call, where the
// tests build the node an error must name.
func siteBelow(t *testing.T, src string, marker string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) && !strings.Contains(l, "siteBelow") {
			return fmt.Sprintf("%s:%d", filepath.Base(src), i+1)
		}
	}
	t.Fatalf("marker %q not found in %s", marker, src)
	return ""
}

// TestHugeValuesRefusedAtCompile: defects 1 and 3. A BroadcastTo of a
// scalar to 1<<50 elements compiled and then Run panicked in tensor.Make;
// f32[1<<62] planned an arena of 0 bytes (the byte size overflowed); a
// 1<<40-element graph compiled with an 8 TB arena. Compile must refuse each,
// naming the node and its call site; a fused reduction that reads a huge
// broadcast without materialising it still compiles.
func TestHugeValuesRefusedAtCompile(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	c := g.Input("c", tensor.Float32)
	huge := ops.Exp(ops.BroadcastTo(c, 1<<40)) // marker:huge40
	_, err := exec.Compile(be, []*graph.Node{huge})
	if !errors.Is(err, tensor.ErrTooLarge) {
		t.Fatalf("Compile of f32[1<<40]: err = %v, want ErrTooLarge", err)
	}
	if site := siteBelow(t, "trust_test.go", "marker:huge40"); !strings.Contains(err.Error(), site) {
		t.Errorf("error %q does not name the call site %s", err, site)
	}
	for _, n := range []int{1 << 50, 1 << 62} {
		g := graph.New()
		c := g.Input("c", tensor.Float32)
		outs := []*graph.Node{ops.BroadcastTo(c, n), ops.Sum(ops.Softmax(ops.BroadcastTo(c, n), 0))}
		for i, out := range outs {
			// Either a build error (the node's byte size overflows) or a
			// Compile error; never a program that panics in Run.
			p, err := exec.Compile(be, []*graph.Node{out})
			if err == nil {
				p.Close()
				t.Errorf("n=%d, output %d: Compile succeeded", n, i)
			}
		}
	}
	// An Input too large for the device is refused too.
	h := graph.New()
	x := h.Input("x", tensor.Float32, 1<<40)
	if _, err := exec.Compile(be, []*graph.Node{ops.Neg(x)}); !errors.Is(err, tensor.ErrTooLarge) || !strings.Contains(err.Error(), "Input f32[1099511627776]") {
		t.Errorf("Input f32[1<<40]: err = %v", err)
	}
	// Sum over a broadcast of 1<<36 elements is one fused kernel that never
	// holds the broadcast: it fits.
	k := graph.New()
	s := k.Input("s", tensor.Float32)
	p, err := exec.Compile(be, []*graph.Node{ops.Sum(ops.Mul(ops.BroadcastTo(s, 1<<36), ops.Scalar(s, 2)))})
	if err != nil {
		t.Fatalf("fused reduction of a broadcast: %v", err)
	}
	p.Close()
}

// TestMemoryLimitOption: exec.MemoryLimit lowers the device limit. y =
// x*x + x needs a 4 KiB arena value (1024 float32) besides the feed and
// output; 1 KiB refuses the 4 KiB values, 1 MiB admits them.
func TestMemoryLimitOption(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1024)
	y := ops.Add(ops.Mul(x, x), x)
	if _, err := exec.Compile(be, []*graph.Node{y}, exec.MemoryLimit(1024)); !errors.Is(err, tensor.ErrTooLarge) ||
		!strings.Contains(err.Error(), "needs 4096 bytes, more than the 1024 bytes of memory of cpu") {
		t.Errorf("1 KiB limit: err = %v", err)
	}
	p, err := exec.Compile(be, []*graph.Node{y}, exec.MemoryLimit(1<<20))
	if err != nil {
		t.Fatalf("1 MiB limit: %v", err)
	}
	p.Close()
	if _, err := exec.Compile(be, []*graph.Node{y}, exec.MemoryLimit(0)); err == nil {
		t.Errorf("MemoryLimit(0) accepted")
	}
}

// TestRunOutputAllocationFails: defect 1's path. If the outputs cannot be
// allocated when Run makes them (the host limit was lowered after
// Compile), Run returns an error instead of panicking.
func TestRunOutputAllocationFails(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1024)
	p, err := exec.Compile(be, []*graph.Node{ops.Neg(x)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	xv := tensor.Zeros(tensor.Float32, 1024)
	tensor.SetMemoryLimit(1024)
	_, err = p.Run(context.Background(), exec.Feeds{x: xv})
	tensor.SetMemoryLimit(0)
	if !errors.Is(err, tensor.ErrTooLarge) {
		t.Fatalf("Run with a 1 KiB host limit: err = %v, want ErrTooLarge", err)
	}
	out, err := p.Run(context.Background(), exec.Feeds{x: xv})
	if err != nil || out[0].Size() != 1024 {
		t.Fatalf("the program is not usable afterwards: %v", err)
	}
}

// TestShareVariablesOfClosedProgram: defect 5 (a nil-map panic).
func TestShareVariablesOfClosedProgram(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	w := g.Variable("w", tensor.Zeros(tensor.Float32, 2))
	p, err := exec.Compile(be, []*graph.Node{w})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	q, err := exec.Compile(be, []*graph.Node{ops.Neg(w)}, exec.ShareVariables(p))
	if !errors.Is(err, exec.ErrClosed) {
		t.Errorf("ShareVariables(closed): err = %v, want ErrClosed", err)
	}
	if q != nil {
		t.Errorf("got a program")
	}
}

// TestCallsRacingClose: defect 8. Run, RunInto, Read, Write, SaveVariables
// and LoadVariables racing Close must each either succeed or return
// ErrClosed (never an internal error such as "buffer of 0 bytes"), and the
// race detector (make test runs this package with -race) must stay quiet.
func TestCallsRacingClose(t *testing.T) {
	be := cpuBackend(t)
	for round := 0; round < 30; round++ {
		g := graph.New()
		x := g.Input("x", tensor.Float32, 64)
		w := g.Variable("w", tensor.Zeros(tensor.Float32, 64))
		p, err := exec.Compile(be, []*graph.Node{ops.Add(x, w)}, exec.Update(w, ops.Add(w, x)))
		if err != nil {
			t.Fatal(err)
		}
		var ckpt bytes.Buffer
		if err := p.SaveVariables(&ckpt, nil); err != nil {
			t.Fatal(err)
		}
		xv := tensor.Zeros(tensor.Float32, 64)
		calls := []func() error{
			func() error { _, err := p.Run(context.Background(), exec.Feeds{x: xv}); return err },
			func() error {
				return p.RunInto(context.Background(), exec.Feeds{x: xv}, []*tensor.Tensor{tensor.Zeros(tensor.Float32, 64)})
			},
			func() error { _, err := p.Read(w); return err },
			func() error { return p.Write(w, tensor.Zeros(tensor.Float32, 64)) },
			func() error { return p.SaveVariables(&bytes.Buffer{}, nil) },
			func() error { _, err := p.LoadVariables(bytes.NewReader(ckpt.Bytes())); return err },
		}
		var wg, started sync.WaitGroup
		errs := make(chan error, len(calls))
		for _, call := range calls {
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				first := true
				for {
					err := call()
					if first {
						started.Done() // Close comes once every call has run once
						first = false
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		started.Wait()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, exec.ErrClosed) {
				t.Fatalf("round %d: a call racing Close returned %v, want ErrClosed", round, err)
			}
		}
	}
}

// TestSaveVariablesIsOneStep: defect 9. Two variables advance together (a
// and b both gain 1 per Run) while checkpoints are taken; every checkpoint
// must hold a == b. Reading each variable under its own lock mixed steps in
// about half of the checkpoints.
func TestSaveVariablesIsOneStep(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	a := g.Variable("a", tensor.Zeros(tensor.Float64, 256))
	b := g.Variable("b", tensor.Zeros(tensor.Float64, 256))
	p, err := exec.Compile(be, nil, exec.Update(a, ops.Add(a, ops.Scalar(a, 1))), exec.Update(b, ops.Add(b, ops.Scalar(b, 1))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := p.Run(context.Background(), nil); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	mixed := 0
	const checkpoints = 500
	for i := 0; i < checkpoints; i++ {
		var buf bytes.Buffer
		if err := p.SaveVariables(&buf, nil); err != nil {
			t.Fatal(err)
		}
		ts, _, err := tensor.ReadSafetensors(bytes.NewReader(buf.Bytes()), tensor.SafetensorsLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if ts["a"].Float64(0) != ts["b"].Float64(0) {
			mixed++
		}
	}
	close(stop)
	wg.Wait()
	if mixed > 0 {
		t.Errorf("%d of %d checkpoints mix two training steps", mixed, checkpoints)
	}
}

// TestNilProgramAndArguments: defect 13's exec part. No method of a nil or
// zero Program panics, and nil writers and readers are errors.
func TestNilProgramAndArguments(t *testing.T) {
	for name, p := range map[string]*exec.Program{"nil": nil, "zero": {}} {
		if _, err := p.Run(context.Background(), nil); err == nil {
			t.Errorf("%s Program: Run succeeded", name)
		}
		if err := p.RunInto(context.Background(), nil, nil); err == nil {
			t.Errorf("%s Program: RunInto succeeded", name)
		}
		if _, err := p.Read(nil); err == nil {
			t.Errorf("%s Program: Read succeeded", name)
		}
		if err := p.Write(nil, nil); err == nil {
			t.Errorf("%s Program: Write succeeded", name)
		}
		if err := p.SaveVariables(&bytes.Buffer{}, nil); err == nil {
			t.Errorf("%s Program: SaveVariables succeeded", name)
		}
		if _, err := p.LoadVariables(bytes.NewReader(nil)); err == nil {
			t.Errorf("%s Program: LoadVariables succeeded", name)
		}
		if err := p.Close(); err == nil {
			t.Errorf("%s Program: Close succeeded", name)
		}
		_ = p.Stats()
		_ = p.Inputs()
		_ = p.Variables()
		_ = p.Passes()
	}
	be := cpuBackend(t)
	g := graph.New()
	w := g.Variable("w", tensor.Zeros(tensor.Float32, 2))
	p, err := exec.Compile(be, []*graph.Node{w})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.SaveVariables(nil, nil); err == nil || !strings.Contains(err.Error(), "nil io.Writer") {
		t.Errorf("SaveVariables(nil): %v", err)
	}
	if _, err := p.LoadVariables(nil); err == nil || !strings.Contains(err.Error(), "nil io.Reader") {
		t.Errorf("LoadVariables(nil): %v", err)
	}
	if _, err := p.Read(nil); err == nil {
		t.Errorf("Read(nil) succeeded")
	}
}

// TestSaveVariablesFileIsAtomic: defect 14. A failed save leaves the
// previous checkpoint whole and no temporary file behind; a successful one
// replaces it.
func TestSaveVariablesFileIsAtomic(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	w := g.Variable("w", f32(t, []float32{1, 2, 3}, 3))
	p, err := exec.Compile(be, nil, exec.Update(w, ops.Mul(w, ops.Scalar(w, 2))))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := p.SaveVariablesFile(path, map[string]string{"step": "0"}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// Invalid UTF-8 in the metadata makes the writer fail.
	if err := p.SaveVariablesFile(path, map[string]string{"bad": "\xff"}); err == nil {
		t.Fatal("save with invalid metadata succeeded")
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("a failed save changed the previous checkpoint (%d -> %d bytes, %v)", len(before), len(after), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed save, want only the checkpoint", len(entries))
	}
	if err := p.SaveVariablesFile(path, map[string]string{"step": "1"}); err != nil {
		t.Fatal(err)
	}
	q, err := exec.Compile(be, []*graph.Node{w})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	meta, err := q.LoadVariablesFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := q.Read(w)
	if meta["step"] != "1" || got.Float64(2) != 6 { // hand: 3 doubled once
		t.Errorf("loaded %v with metadata %v, want w[2] = 6 and step 1", got, meta)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v; want 0644", fi.Mode(), err)
	}
}

// typedNil is a driver whose Open returns a nil *nilBackend with an error,
// the mistake the CUDA driver made (defect 18).
type nilBackend struct{ exec.Backend }

type typedNilDriver struct{}

func (typedNilDriver) Devices() ([]exec.Device, error) { return nil, exec.ErrUnavailable }
func (typedNilDriver) Open(int) (exec.Backend, error) {
	var b *nilBackend
	return b, exec.ErrUnavailable
}

// TestOpenReturnsNilBackendOnError: defect 18. exec.Open("cuda") without a
// GPU returned a non-nil Backend holding a nil *cuda.Backend, so Close
// panicked. Open must return a nil interface with every error, whatever
// the driver does.
func TestOpenReturnsNilBackendOnError(t *testing.T) {
	if err := exec.RegisterDriver("typednil", typedNilDriver{}); err != nil {
		t.Fatal(err)
	}
	be, err := exec.Open("typednil")
	if err == nil || be != nil {
		t.Errorf("Open(typednil) = %v, %v; want a nil Backend and an error", be, err)
	}
	be, err = exec.Open("cpu:7")
	if err == nil || be != nil {
		t.Errorf("Open(cpu:7) = %v, %v; want a nil Backend and an error", be, err)
	}
}

// TestCheckNumerics: defect 20. The first kernel whose result is NaN or
// Inf although its operands were finite is named with its op, types and
// call site; values non-finite because an operand was are not blamed; the
// option is off by default; a failing Run leaves the variables unchanged.
func TestCheckNumerics(t *testing.T) {
	be := cpuBackend(t)
	ctx := context.Background()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3)
	w := g.Variable("w", f32(t, []float32{1, 1, 1}, 3))
	lg := ops.Log(x)                                       // marker:log
	y := ops.Mul(ops.Sqrt(ops.Neg(lg)), ops.Scalar(lg, 2)) // NaN/Inf flow on: not blamed
	next := ops.Add(w, y)
	p, err := exec.Compile(be, []*graph.Node{y}, exec.Update(w, next), exec.CheckNumerics())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	// log(0.5) = -0.693, sqrt(0.693)*2 = 1.665: all finite.
	if _, err := p.Run(ctx, exec.Feeds{x: f32(t, []float32{0.5, 0.5, 0.5}, 3)}); err != nil {
		t.Fatalf("finite run: %v", err)
	}
	wBefore, _ := p.Read(w)
	// log(0) = -Inf from a finite operand: Log is blamed.
	_, err = p.Run(ctx, exec.Feeds{x: f32(t, []float32{0.5, 0, 0.5}, 3)})
	if !errors.Is(err, exec.ErrNonFinite) {
		t.Fatalf("err = %v, want ErrNonFinite", err)
	}
	want := "Log(f32[3]) -> f32[3], built at " + siteBelow(t, "trust_test.go", "marker:log") + ", produced NaN or Inf from finite operands"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q\ndoes not contain %q", err, want)
	}
	if wAfter, _ := p.Read(w); !bytes.Equal(wBefore.Bytes(), wAfter.Bytes()) {
		t.Errorf("a failing Run updated w: %v -> %v", wBefore, wAfter)
	}
	// x = 2: log 2 > 0, so -log 2 < 0 and Sqrt gives NaN from finite
	// operands: Sqrt is blamed.
	_, err = p.Run(ctx, exec.Feeds{x: f32(t, []float32{2, 0.5, 0.5}, 3)})
	if !errors.Is(err, exec.ErrNonFinite) || !strings.Contains(err.Error(), "Sqrt(f32[3])") {
		t.Errorf("x = 2: err = %v, want Sqrt blamed", err)
	}
	// A NaN fed in propagates, and nothing is blamed.
	if _, err := p.Run(ctx, exec.Feeds{x: f32(t, []float32{float32(math.NaN()), 0.5, 0.5}, 3)}); err != nil {
		t.Errorf("NaN feed: %v, want no error (a non-finite operand is not a kernel's fault)", err)
	}
	// Off by default: the same graph runs and returns -Inf... and NaN.
	q, err := exec.Compile(be, []*graph.Node{lg})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out, err := q.Run(ctx, exec.Feeds{x: f32(t, []float32{0.5, 0, 0.5}, 3)})
	if err != nil || !math.IsInf(out[0].Float64(1), -1) {
		t.Errorf("without CheckNumerics: %v, %v; want log(0) = -Inf and no error", out, err)
	}
}

// TestCheckNumericsMasking: a -Inf mask constant is a non-finite operand,
// so neither the Where nor the Softmax after it is blamed; the softmax of
// the masked row is finite (hand: softmax([0, -Inf]) = [1, 0]). An
// overflow of Exp (exp(100) > MaxFloat32) and of a Cast to float16
// (1e5 > 65504) are blamed.
func TestCheckNumericsMasking(t *testing.T) {
	be := cpuBackend(t)
	ctx := context.Background()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 2)
	mask := g.Input("mask", tensor.Bool, 2)
	neg := g.Const(tensor.Scalar(float32(math.Inf(-1))))
	sm := ops.Softmax(ops.Where(mask, x, neg), 0)
	ex := ops.Exp(x)
	half := ops.Cast(x, tensor.Float16)
	for _, c := range []struct {
		out   *graph.Node
		xv    []float32
		blame string
	}{
		{sm, []float32{0, 100}, ""},
		{ex, []float32{0, 1}, ""},
		{ex, []float32{0, 100}, "Exp(f32[2])"},
		{half, []float32{1e5, 1}, "Cast(f32[2]) -> f16[2]"},
	} {
		p, err := exec.Compile(be, []*graph.Node{c.out}, exec.CheckNumerics(), exec.IgnoreUnusedFeeds())
		if err != nil {
			t.Fatal(err)
		}
		mv, _ := tensor.New([]bool{true, false})
		out, err := p.Run(ctx, exec.Feeds{x: f32(t, c.xv, 2), mask: mv})
		p.Close()
		switch {
		case c.blame == "" && err != nil:
			t.Errorf("%s: %v", c.out, err)
		case c.blame != "" && (!errors.Is(err, exec.ErrNonFinite) || !strings.Contains(err.Error(), c.blame)):
			t.Errorf("%s: err = %v, want %s blamed", c.out, err, c.blame)
		case c.out == sm && (out[0].Float64(0) != 1 || out[0].Float64(1) != 0):
			t.Errorf("masked softmax = %v, want [1 0]", out[0])
		}
	}
}

// TestEmptyMatMulOfHugeBatch: a MatMul whose result has no elements but
// 1<<40 batch entries ([1<<40,0,3] x [1<<40,3,0] -> [1<<40,0,0]) has no
// bytes anywhere; lowering it allocated two offsets per batch entry
// (16 TiB) and died. It compiles and runs to an empty result.
func TestEmptyMatMulOfHugeBatch(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	a := g.Input("a", tensor.Float32, 1<<40, 0, 3)
	b := g.Input("b", tensor.Float32, 1<<40, 3, 0)
	p, err := exec.Compile(be, []*graph.Node{ops.MatMul(a, b)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	av, _ := tensor.Make(tensor.Float32, 1<<40, 0, 3)
	bv, _ := tensor.Make(tensor.Float32, 1<<40, 3, 0)
	out, err := p.Run(context.Background(), exec.Feeds{a: av, b: bv})
	if err != nil || out[0].Type() != "f32[1099511627776,0,0]" {
		t.Fatalf("Run = %v, %v", out, err)
	}
}

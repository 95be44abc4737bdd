package exec_test

import (
	"context"
	"errors"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// cancellation computes (x + 1) - x for x = 1e8 in float32: 0 when it
// computes in float32 (1e8 + 1 rounds to 1e8: float32's spacing there is
// 8), 1 in float64 (exact). Hand calculation.
func cancellation(t *testing.T) (x, y *graph.Node, feeds exec.Feeds) {
	t.Helper()
	g := graph.New()
	x = g.Input("x", tensor.Float32)
	y = ops.Sub(ops.Add(x, g.Const(tensor.Scalar[float32](1))), x)
	return x, y, exec.Feeds{x: tensor.Scalar[float32](1e8)}
}

func runScalar(t *testing.T, ctx context.Context, y *graph.Node, feeds exec.Feeds, opts ...exec.Option) (float64, exec.Backend) {
	t.Helper()
	p, err := exec.CompileContext(ctx, []*graph.Node{y}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	outs, err := p.Run(ctx, feeds)
	if err != nil {
		t.Fatal(err)
	}
	return outs[0].Float64(0), p.Backend()
}

func TestContextDefaults(t *testing.T) {
	_, y, feeds := cancellation(t)
	be := cpuBackend(t)
	ctx := exec.WithBackend(context.Background(), be)
	if got, b := runScalar(t, ctx, y, feeds); got != 0 || b != be {
		t.Errorf("float32 in the context's backend: %v on %v, want 0 on the context's", got, b)
	}
	c64 := exec.WithPrecision(ctx, tensor.Float64)
	if got, _ := runScalar(t, c64, y, feeds); got != 1 {
		t.Errorf("WithPrecision(float64): %v, want 1", got)
	}
	if got, _ := runScalar(t, c64, y, feeds, exec.Precision(tensor.Float32)); got != 0 {
		t.Errorf("an explicit Precision(float32) under WithPrecision(float64): %v, want 0", got)
	}
	if got, _ := runScalar(t, exec.WithPrecision(c64, tensor.Invalid), y, feeds); got != 0 {
		t.Errorf("WithPrecision(Invalid) inside WithPrecision(float64): %v, want 0", got)
	}
	// The process default applies where the context says nothing.
	restore, err := exec.SetDefaultPrecision(tensor.Float64)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := runScalar(t, ctx, y, feeds); got != 1 {
		t.Errorf("SetDefaultPrecision(float64): %v, want 1", got)
	}
	if got, _ := runScalar(t, exec.WithPrecision(ctx, tensor.Float32), y, feeds); got != 0 {
		t.Errorf("the context's float32 over the process's float64: %v, want 0", got)
	}
	restore()
	if got, _ := runScalar(t, ctx, y, feeds); got != 0 {
		t.Errorf("after restore: %v, want 0", got)
	}
	if exec.PrecisionFrom(context.Background()) != tensor.Invalid {
		t.Errorf("PrecisionFrom after restore: %v", exec.PrecisionFrom(context.Background()))
	}
	if _, err := exec.SetDefaultPrecision(tensor.Int32); err == nil {
		t.Error("SetDefaultPrecision(int32): no error")
	}
	// Compile never reads the defaults.
	restore, _ = exec.SetDefaultPrecision(tensor.Float64)
	p, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	outs, _ := p.Run(context.Background(), feeds)
	p.Close()
	restore()
	if outs[0].Float64(0) != 0 {
		t.Errorf("Compile under SetDefaultPrecision(float64): %v, want 0 (Compile is explicit)", outs[0].Float64(0))
	}
}

func TestDefaultDevice(t *testing.T) {
	t.Setenv("LOOM_DEVICE", "nosuchdevice")
	if _, err := exec.Default(); !errors.Is(err, exec.ErrUnknownDevice) {
		t.Fatalf("Default with LOOM_DEVICE=nosuchdevice: %v", err)
	}
	restore, err := exec.SetDefaultDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	be, err := exec.Default()
	if err != nil {
		t.Fatalf("Default after SetDefaultDevice(cpu), over $LOOM_DEVICE: %v", err)
	}
	if be.Name() != "cpu" {
		t.Errorf("Default: %s", be.Name())
	}
	be.Close()
	// BackendFrom without a backend in the context: one shared backend.
	b1, err := exec.BackendFrom(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := exec.BackendFrom(nil)
	if b1 != b2 || b1.Name() != "cpu" {
		t.Errorf("BackendFrom: %v and %v, want one shared cpu backend", b1, b2)
	}
	_, y, feeds := cancellation(t)
	if got, b := runScalar(t, context.Background(), y, feeds); got != 0 || b != b1 {
		t.Errorf("CompileContext without a context backend: %v on %v", got, b)
	}
	restore()
	if _, err := exec.Default(); !errors.Is(err, exec.ErrUnknownDevice) {
		t.Errorf("Default after restore: %v, want $LOOM_DEVICE's error again", err)
	}
	for _, bad := range []string{"nosuch", "cpu:x", " "} {
		if _, err := exec.SetDefaultDevice(bad); !errors.Is(err, exec.ErrUnknownDevice) {
			t.Errorf("SetDefaultDevice(%q): %v", bad, err)
		}
	}
	if _, err := exec.CompileContext(context.Background(), []*graph.Node{y}); !errors.Is(err, exec.ErrUnknownDevice) {
		t.Errorf("CompileContext with LOOM_DEVICE=nosuchdevice: %v", err)
	}
}

//go:build linux

package cuda

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// transfers counts the bytes every Run moves between host and device (the
// DeviceSpans that are not steps: feeds' uploads, outputs' downloads).
type transfers struct {
	mu    sync.Mutex
	bytes int64
	spans []string
}

func (*transfers) Now() int64                         { return 0 }
func (*transfers) Step(int, int64, int64)             {}
func (*transfers) Part(int, int, int64, int64, int64) {}
func (*transfers) DeviceMemory(int64, int64)          {}
func (tr *transfers) DeviceSpan(_, step int, name string, bytes, _, _, _ int64) {
	if step == -1 {
		tr.mu.Lock()
		tr.bytes += bytes
		tr.spans = append(tr.spans, name)
		tr.mu.Unlock()
	}
}

// TestRunDevice hands a value from one program to another through the
// host (Run, then Run) and on the device (RunDevice), and counts the bytes
// each moves between host and device.
func TestRunDevice(t *testing.T) {
	b := open(t)
	defer b.Close()
	const n = 1 << 16
	g := graph.New()
	x := g.Input("x", tensor.Float32, n)
	y := ops.Exp(ops.Neg(ops.Mul(x, x))) // exp(-x²)
	yin := g.Input("y", tensor.Float32, n)
	r := ops.Reshape(yin, 256, n/256) // a view of the feed: bound through resolveAliases
	z := ops.Sum(ops.Mul(r, r))
	p1, err := exec.Compile(b, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer p1.Close()
	p2, err := exec.Compile(b, []*graph.Node{z})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	xv := tensor.Zeros(tensor.Float32, n) // y = 1 everywhere: z = n exactly
	tr := &transfers{}
	ctx := exec.WithObserver(context.Background(), tr)

	// Through the host: x up, y down, y up, z down.
	outs, err := p1.Run(ctx, exec.Feeds{x: xv})
	if err != nil {
		t.Fatal(err)
	}
	zs, err := p2.Run(ctx, exec.Feeds{yin: outs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got := zs[0].Float64(0); got != n {
		t.Fatalf("z through the host = %v, want %d", got, n)
	}
	viaHost := tr.bytes
	if want := int64(3*4*n + 4); viaHost != want {
		t.Errorf("through the host: %d bytes moved, want %d (x up, y down, y up, z down)", viaHost, want)
	}

	// On the device: only x up and z down.
	tr.bytes, tr.spans = 0, nil
	_, dev, err := p1.RunDevice(ctx, exec.Feeds{x: xv}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	zs, _, err = p2.RunDevice(ctx, nil, exec.DeviceFeeds{yin: dev[0]})
	if err != nil {
		t.Fatal(err)
	}
	if got := zs[0].Float64(0); got != n {
		t.Fatalf("z on the device = %v, want %d", got, n)
	}
	if want := int64(4*n + 4); tr.bytes != want {
		t.Errorf("on the device: %d bytes moved (%v), want %d (x up, z down)", tr.bytes, tr.spans, want)
	}
	t.Logf("bytes moved between host and device: %d through the host, %d with RunDevice", viaHost, tr.bytes)
	yv, err := dev[0].Tensor()
	if err != nil {
		t.Fatal(err)
	}
	if yv.Float64(n-1) != 1 {
		t.Errorf("y[n-1] = %v, want exp(0) = 1", yv.Float64(n-1))
	}

	// A plain Run after RunDevice uses the program's own memory again.
	xv2 := tensor.Zeros(tensor.Float32, n)
	xv2.SetFloat64(0, 1)
	outs, err = p1.Run(context.Background(), exec.Feeds{x: xv2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := outs[0].Float64(0), 0.36787944117144233; got < want-1e-6 || got > want+1e-6 { // exp(-1), float64
		t.Errorf("y[0] after RunDevice = %v, want exp(-1)", got)
	}
	if again, _ := dev[0].Tensor(); again.Float64(0) != 1 {
		t.Errorf("the kept output changed to %v after a later Run", again.Float64(0))
	}

	// Memory: the kept output is in use; freed, it is cached; released,
	// it goes back to the driver.
	m, err := exec.DeviceMemory(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Total <= 0 || m.Free < 0 || m.Free > m.Total || m.InUse < 4*n || m.Peak < m.InUse {
		t.Errorf("memory %+v", m)
	}
	dev[0].Free()
	m2, _ := exec.DeviceMemory(b)
	if m2.InUse != m.InUse-4*n || m2.Cached < 4*n {
		t.Errorf("after Free: %+v (before %+v): the 256 KiB output should move from in use to cached", m2, m)
	}
	released, err := exec.ReleaseCache(b)
	if err != nil {
		t.Fatal(err)
	}
	m3, _ := exec.DeviceMemory(b)
	if released != m2.Cached || m3.Cached != 0 || m3.InUse != m2.InUse {
		t.Errorf("ReleaseCache released %d; memory %+v (before %+v)", released, m3, m2)
	}
	if m3.Free < m2.Free+4*n {
		t.Errorf("free device memory %d after releasing %d bytes, %d before", m3.Free, released, m2.Free)
	}
	if _, _, err := p2.RunDevice(ctx, nil, exec.DeviceFeeds{yin: dev[0]}); !errors.Is(err, exec.ErrFreed) {
		t.Errorf("feeding a freed DeviceTensor: %v", err)
	}
}

// TestRunDeviceOtherBackend: a DeviceTensor of the CPU does not feed a
// CUDA program, with an error that says what to do.
func TestRunDeviceOtherBackend(t *testing.T) {
	b := open(t)
	defer b.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	p, err := exec.Compile(b, []*graph.Node{ops.Neg(x)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := exec.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := exec.Upload(c, tensor.Zeros(tensor.Float32, 4))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = p.RunDevice(context.Background(), nil, exec.DeviceFeeds{x: d})
	if err == nil || !strings.Contains(err.Error(), "held by cpu") {
		t.Errorf("CPU DeviceTensor fed to CUDA: %v", err)
	}
	// Uploaded to the GPU, it feeds; the result is kept and read back.
	dg, err := exec.Upload(b, tensor.Zeros(tensor.Float32, 4))
	if err != nil {
		t.Fatal(err)
	}
	defer dg.Free()
	_, kept, err := p.RunDevice(context.Background(), nil, exec.DeviceFeeds{x: dg}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := kept[0].Tensor()
	if err != nil {
		t.Fatal(err)
	}
	if got.Float64(3) != 0 {
		t.Errorf("-0 = %v", got.Float64(3))
	}
}

package exec_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// pipeline is two programs: the first computes y = 2x + 1 and sum(y), the
// second z = y*y from y, an Input of its own graph.
type pipeline struct {
	x, y, sy, y2, z *graph.Node
	p1, p2          *exec.Program
}

func newPipeline(t *testing.T, be exec.Backend, n int) *pipeline {
	t.Helper()
	g := graph.New()
	q := &pipeline{x: g.Input("x", tensor.Float32, n)}
	two, _ := tensor.Full(tensor.Float32, 2, n)
	one, _ := tensor.Full(tensor.Float32, 1, n)
	q.y = ops.Add(ops.Mul(q.x, g.Const(two)), g.Const(one))
	q.sy = ops.Sum(q.y)
	g2 := graph.New()
	q.y2 = g2.Input("y", tensor.Float32, n)
	q.z = ops.Mul(q.y2, q.y2)
	var err error
	if q.p1, err = exec.Compile(be, []*graph.Node{q.y, q.sy}); err != nil {
		t.Fatal(err)
	}
	if q.p2, err = exec.Compile(be, []*graph.Node{q.z}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.p1.Close(); q.p2.Close() })
	return q
}

func TestRunDevicePipeline(t *testing.T) {
	be := cpuBackend(t)
	q := newPipeline(t, be, 3)
	x := f32(t, []float32{0, 1, -2}, 3)
	host, dev, err := q.p1.RunDevice(context.Background(), exec.Feeds{q.x: x}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if host[0] != nil || dev[1] != nil || dev[0] == nil || host[1] == nil {
		t.Fatalf("kept output 0: host %v device %v", host, dev)
	}
	// y = 2x+1 = [1 3 -3] and sum(y) = 1 (hand calculation).
	if got := host[1].Float64(0); got != 1 {
		t.Errorf("sum(y) = %v, want 1", got)
	}
	if dev[0].Type() != "f32[3]" || dev[0].Bytes() != 12 || dev[0].Backend() != be {
		t.Errorf("device output: %s, %d bytes", dev[0].Type(), dev[0].Bytes())
	}
	y, err := dev[0].Tensor()
	if err != nil {
		t.Fatal(err)
	}
	checkVals(t, "y", y, 1, 3, -3)
	// z = y*y = [1 9 9], y fed from the device.
	outs, _, err := q.p2.RunDevice(context.Background(), nil, exec.DeviceFeeds{q.y2: dev[0]})
	if err != nil {
		t.Fatal(err)
	}
	checkVals(t, "z", outs[0], 1, 9, 9)
	// The DeviceTensor is unchanged and feeds again; Tensor copies.
	y.SetFloat64(0, 100)
	outs, _, err = q.p2.RunDevice(context.Background(), exec.Feeds{}, exec.DeviceFeeds{q.y2: dev[0]})
	if err != nil {
		t.Fatal(err)
	}
	checkVals(t, "z again", outs[0], 1, 9, 9)
	// Keep every output; feed a kept output to the same program shape.
	_, dev2, err := q.p2.RunDevice(context.Background(), nil, exec.DeviceFeeds{q.y2: dev[0]}, 0)
	if err != nil {
		t.Fatal(err)
	}
	outs, _, err = q.p2.RunDevice(context.Background(), nil, exec.DeviceFeeds{q.y2: dev2[0]})
	if err != nil {
		t.Fatal(err)
	}
	checkVals(t, "z(z)", outs[0], 1, 81, 81) // [1 9 9]^2 by hand
	dev[0].Free()
	dev[0].Free() // harmless
	if _, err := dev[0].Tensor(); !errors.Is(err, exec.ErrFreed) {
		t.Errorf("Tensor after Free: %v, want ErrFreed", err)
	}
	if _, _, err := q.p2.RunDevice(context.Background(), nil, exec.DeviceFeeds{q.y2: dev[0]}); !errors.Is(err, exec.ErrFreed) {
		t.Errorf("RunDevice with a freed feed: %v, want ErrFreed", err)
	}
}

func checkVals(t *testing.T, name string, got *tensor.Tensor, want ...float64) {
	t.Helper()
	if got.Size() != len(want) {
		t.Fatalf("%s: %s, want %d elements", name, got.Type(), len(want))
	}
	for i, w := range want {
		if g := got.Float64(i); g != w {
			t.Errorf("%s[%d] = %v, want %v", name, i, g, w)
		}
	}
}

func TestUpload(t *testing.T) {
	be := cpuBackend(t)
	src := f32(t, []float32{1, 2, 3, 4}, 2, 2)
	d, err := exec.Upload(be, src)
	if err != nil {
		t.Fatal(err)
	}
	src.SetFloat64(0, 7) // Upload copied: the device value stays 1
	got, err := d.Tensor()
	if err != nil {
		t.Fatal(err)
	}
	checkVals(t, "uploaded", got, 1, 2, 3, 4)
	if !d.Shape().Equal(tensor.Shape{2, 2}) || d.DType() != tensor.Float32 {
		t.Errorf("uploaded %s", d.Type())
	}
	if err := d.Read(tensor.Zeros(tensor.Float32, 4)); !errors.Is(err, exec.ErrFeed) {
		t.Errorf("Read into the wrong shape: %v", err)
	}
	if _, err := exec.Upload(nil, src); err == nil {
		t.Error("Upload to a nil backend: no error")
	}
	if _, err := exec.Upload(be, nil); err == nil {
		t.Error("Upload of a nil tensor: no error")
	}
	var nd *exec.DeviceTensor
	if _, err := nd.Tensor(); err == nil || nd.Type() != "nil" || nd.Bytes() != 0 || nd.Backend() != nil {
		t.Errorf("nil DeviceTensor: %v", err)
	}
	nd.Free()
}

func TestRunDeviceErrors(t *testing.T) {
	be := cpuBackend(t)
	q := newPipeline(t, be, 3)
	x := f32(t, []float32{0, 1, 2}, 3)
	ctx := context.Background()
	dx, err := exec.Upload(be, x)
	if err != nil {
		t.Fatal(err)
	}
	other := cpuBackend(t)
	dOther, err := exec.Upload(other, x)
	if err != nil {
		t.Fatal(err)
	}
	wrong, err := exec.Upload(be, f32(t, []float32{1, 2}, 2))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"keep out of range", func() error { _, _, err := q.p1.RunDevice(ctx, exec.Feeds{q.x: x}, nil, 2); return err }, "keep lists output 2 of a program with 2 outputs"},
		{"keep twice", func() error { _, _, err := q.p1.RunDevice(ctx, exec.Feeds{q.x: x}, nil, 1, 1); return err }, "keep lists output 1 twice"},
		{"fed twice", func() error {
			_, _, err := q.p1.RunDevice(ctx, exec.Feeds{q.x: x}, exec.DeviceFeeds{q.x: dx})
			return err
		}, "fed twice"},
		{"other backend", func() error { _, _, err := q.p1.RunDevice(ctx, nil, exec.DeviceFeeds{q.x: dOther}); return err }, "copy it with Tensor and Upload"},
		{"wrong shape", func() error { _, _, err := q.p1.RunDevice(ctx, nil, exec.DeviceFeeds{q.x: wrong}); return err }, `the feed for Input "x" f32[3] (built at resident_test.go:27) is f32[2]: wrong shape`},
		{"nil device tensor", func() error { _, _, err := q.p1.RunDevice(ctx, nil, exec.DeviceFeeds{q.x: nil}); return err }, "nil DeviceTensor"},
		{"extra device feed", func() error {
			_, _, err := q.p1.RunDevice(ctx, exec.Feeds{q.x: x}, exec.DeviceFeeds{q.y2: dx})
			return err
		}, "extra device feed"},
		{"missing", func() error { _, _, err := q.p1.RunDevice(ctx, nil, nil); return err }, "missing feed"},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// The program still works after all of them.
	outs, _, err := q.p1.RunDevice(ctx, nil, exec.DeviceFeeds{q.x: dx})
	if err != nil {
		t.Fatal(err)
	}
	checkVals(t, "y", outs[0], 1, 3, 5)
	var np *exec.Program
	if _, _, err := np.RunDevice(ctx, nil, nil); err == nil {
		t.Error("RunDevice of a nil Program: no error")
	}
}

// TestRunDeviceZeroCopyCPU checks that on the CPU a device feed is read in
// place and a kept output written in place: a RunDevice allocates far less
// than the 4 MiB value it hands over.
func TestRunDeviceZeroCopyCPU(t *testing.T) {
	be := cpuBackend(t)
	const n = 1 << 20
	q := newPipeline(t, be, n)
	g := graph.New()
	in := g.Input("y", tensor.Float32, n)
	sum, err := exec.Compile(be, []*graph.Node{ops.Sum(in)})
	if err != nil {
		t.Fatal(err)
	}
	defer sum.Close()
	x := tensor.Zeros(tensor.Float32, n)
	ctx := context.Background()
	_, dev, err := q.p1.RunDevice(ctx, exec.Feeds{q.x: x}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	measure := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		for range 4 {
			f()
		}
		runtime.ReadMemStats(&b)
		return (b.TotalAlloc - a.TotalAlloc) / 4
	}
	feed := measure(func() {
		outs, _, err := sum.RunDevice(ctx, nil, exec.DeviceFeeds{in: dev[0]})
		if err != nil {
			t.Fatal(err)
		}
		if got := outs[0].Float64(0); got != n { // sum of 2*0+1 over n elements
			t.Fatalf("sum = %v, want %d", got, n)
		}
	})
	if feed > 64<<10 {
		t.Errorf("a RunDevice fed a 4 MiB DeviceTensor allocates %d bytes: the feed was copied", feed)
	}
	keep := measure(func() {
		_, d, err := q.p1.RunDevice(ctx, exec.Feeds{q.x: x}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		d[0].Free()
	})
	// The kept output's own 4 MiB, and not a second copy of it.
	if keep < 4<<20 || keep > 4<<20+64<<10 {
		t.Errorf("a RunDevice keeping a 4 MiB output allocates %d bytes, want 4 MiB and little more", keep)
	}
}

// TestRunDeviceConcurrent feeds one DeviceTensor to parallel Runs while
// another goroutine frees a different one (run with -race).
func TestRunDeviceConcurrent(t *testing.T) {
	be := cpuBackend(t)
	q := newPipeline(t, be, 64)
	x := tensor.Zeros(tensor.Float32, 64)
	_, dev, err := q.p1.RunDevice(context.Background(), exec.Feeds{q.x: x}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				outs, _, err := q.p2.RunDevice(context.Background(), nil, exec.DeviceFeeds{q.y2: dev[0]})
				if err != nil {
					t.Error(err)
					return
				}
				if outs[0].Float64(63) != 1 { // (2*0+1)^2
					t.Errorf("z = %v, want 1", outs[0].Float64(63))
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			_, d, err := q.p1.RunDevice(context.Background(), exec.Feeds{q.x: x}, nil, 0, 1)
			if err != nil {
				t.Error(err)
				return
			}
			d[0].Free()
			d[1].Free()
		}
	}()
	wg.Wait()
}

func TestRunDeviceUpdates(t *testing.T) {
	be := cpuBackend(t)
	g := graph.New()
	w := g.Variable("w", tensor.Scalar[float32](1))
	x := g.Input("x", tensor.Float32)
	y := ops.Mul(w, x)
	p, err := exec.Compile(be, []*graph.Node{y}, exec.Update(w, ops.Add(w, x)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dx, err := exec.Upload(be, tensor.Scalar[float32](2))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2, 6, 10} { // w = 1, 3, 5 (w += 2): y = 2w
		_, dev, err := p.RunDevice(context.Background(), nil, exec.DeviceFeeds{x: dx}, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dev[0].Tensor()
		if err != nil {
			t.Fatal(err)
		}
		if got.Float64(0) != want {
			t.Errorf("run %d: y = %v, want %v", i, got.Float64(0), want)
		}
	}
}

func TestDeviceMemoryCPU(t *testing.T) {
	be := cpuBackend(t)
	m, err := exec.DeviceMemory(be)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && (m.Total <= 0 || m.Free <= 0 || m.Free > m.Total) {
		t.Errorf("memory %+v: want 0 < Free <= Total on Linux", m)
	}
	if m.InUse <= 0 {
		t.Errorf("memory %+v: the Go heap is in use", m)
	}
	// 64 MiB made garbage, then released: the heap's idle bytes go back.
	sink := make([]byte, 64<<20)
	sink[1] = 1
	sink = nil
	runtime.GC()
	n, err := exec.ReleaseCache(be)
	if err != nil {
		t.Fatal(err)
	}
	if n < 0 {
		t.Errorf("ReleaseCache released %d bytes", n)
	}
	if _, err := exec.DeviceMemory(nil); err == nil {
		t.Error("DeviceMemory(nil): no error")
	}
	if _, err := exec.ReleaseCache(nil); err == nil {
		t.Error("ReleaseCache(nil): no error")
	}
	_ = sink
}

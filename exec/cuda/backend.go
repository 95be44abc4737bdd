//go:build linux

package cuda

import (
	"fmt"
	"strings"
	"sync"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

func init() {
	if err := exec.RegisterDriver("cuda", driver{}); err != nil {
		panic(err)
	}
}

// libs are the three CUDA libraries, opened once per process.
type libs struct {
	drv   *cu.Driver
	nvrtc *cu.NVRTC
	blas  *cu.CUBLAS
	nccl  *cu.NCCL // loaded by the first NewNCCL (nccl.go)
}

var (
	libsMu  sync.Mutex
	libsVal *libs
	drvErr  error // the driver could not be opened or initialised (sticky)
)

// loadDriver opens and initialises libcuda once.
func loadDriver() (*libs, error) {
	libsMu.Lock()
	defer libsMu.Unlock()
	if libsVal != nil || drvErr != nil {
		return libsVal, drvErr
	}
	d, err := cu.LoadDriver()
	if err == nil {
		err = d.Init()
		if err != nil {
			err = fmt.Errorf("cuInit: %w", err)
		}
	}
	if err != nil {
		drvErr = fmt.Errorf("cuda: %w: %v", exec.ErrUnavailable, err)
		return nil, drvErr
	}
	libsVal = &libs{drv: d}
	return libsVal, nil
}

// loadAll also opens NVRTC and cuBLAS (retried on every Open until they
// load, since a user may fix the environment).
func loadAll() (*libs, error) {
	l, err := loadDriver()
	if err != nil {
		return nil, err
	}
	libsMu.Lock()
	defer libsMu.Unlock()
	if l.nvrtc == nil {
		n, err := cu.LoadNVRTC()
		if err != nil {
			return nil, fmt.Errorf("cuda: %w: the driver loaded but NVRTC, which compiles loom's kernels, did not: %v", exec.ErrUnavailable, err)
		}
		l.nvrtc = n
	}
	if l.blas == nil {
		b, err := cu.LoadCUBLAS()
		if err != nil {
			return nil, fmt.Errorf("cuda: %w: the driver loaded but cuBLAS, which runs MatMul, did not: %v", exec.ErrUnavailable, err)
		}
		l.blas = b
	}
	return l, nil
}

// driver is the "cuda" entry of exec's registry.
type driver struct{}

// Devices lists the GPUs the driver sees.
func (driver) Devices() ([]exec.Device, error) {
	l, err := loadDriver()
	if err != nil {
		return nil, err
	}
	n, err := l.drv.DeviceCount()
	if err != nil {
		return nil, fmt.Errorf("cuda: %w: cuDeviceGetCount: %v", exec.ErrUnavailable, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("cuda: %w: the driver (%s) reports no CUDA device", exec.ErrUnavailable, l.drv.Path())
	}
	devs := make([]exec.Device, 0, n)
	for i := 0; i < n; i++ {
		d, _, err := describe(l.drv, i)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// Open opens GPU index.
// On error the Backend is nil (not a nil *Backend in the interface).
func (driver) Open(index int) (exec.Backend, error) {
	b, err := Open(index)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// deviceInfo is what kernels and launches need to know of a device.
type deviceInfo struct {
	dev      cu.Device
	major    int
	minor    int
	sms      int
	maxThr   int
	shared   int
	warpSize int
}

// describe reads a device's properties.
func describe(d *cu.Driver, index int) (exec.Device, deviceInfo, error) {
	var info deviceInfo
	count, err := d.DeviceCount()
	if err != nil {
		return exec.Device{}, info, fmt.Errorf("cuda: %w: cuDeviceGetCount: %v", exec.ErrUnavailable, err)
	}
	if index < 0 || index >= count {
		return exec.Device{}, info, fmt.Errorf("cuda: device %d: %w: the driver reports %d device(s) (cuda:0 to cuda:%d)", index, exec.ErrUnavailable, count, count-1)
	}
	dev, err := d.DeviceGet(index)
	if err != nil {
		return exec.Device{}, info, fmt.Errorf("cuda: device %d: %w: %v", index, exec.ErrUnavailable, err)
	}
	info.dev = dev
	name, err := d.DeviceName(dev)
	if err != nil {
		return exec.Device{}, info, fmt.Errorf("cuda: device %d: %v", index, err)
	}
	mem, err := d.DeviceTotalMem(dev)
	if err != nil {
		return exec.Device{}, info, fmt.Errorf("cuda: device %d: %v", index, err)
	}
	for _, a := range []struct {
		attr cu.Attribute
		dst  *int
	}{
		{cu.AttrComputeCapabilityMajor, &info.major},
		{cu.AttrComputeCapabilityMinor, &info.minor},
		{cu.AttrMultiprocessorCount, &info.sms},
		{cu.AttrMaxThreadsPerBlock, &info.maxThr},
		{cu.AttrMaxSharedMemoryPerBlock, &info.shared},
		{cu.AttrWarpSize, &info.warpSize},
	} {
		v, err := d.DeviceAttribute(a.attr, dev)
		if err != nil {
			return exec.Device{}, info, fmt.Errorf("cuda: device %d: attribute %d: %v", index, a.attr, err)
		}
		*a.dst = v
	}
	ver, err := d.Version()
	if err != nil {
		return exec.Device{}, info, fmt.Errorf("cuda: cuDriverGetVersion: %v", err)
	}
	driverVer := fmt.Sprintf("%d.%d", ver/1000, ver%1000/10)
	return exec.Device{
		Name:        fmt.Sprintf("cuda:%d", index),
		Kind:        exec.GPU,
		Memory:      mem,
		Processors:  info.sms,
		Compute:     fmt.Sprintf("%d.%d", info.major, info.minor),
		Driver:      driverVer,
		Description: strings.TrimSpace(name),
	}, info, nil
}

// Backend is the CUDA backend for one GPU.
type Backend struct {
	lib    *libs
	index  int
	info   deviceInfo
	device exec.Device
	ctx    cu.Context
	w      *worker
	blas   cu.Handle
	alloc  *allocator
	mods   *moduleSet
	ext    libExt // cuFFT and cuSOLVER, loaded at the first program that needs them (linalg_lib.go)

	mu     sync.RWMutex // held for reading by every call into the device, for writing by Close
	closed bool
}

// Open opens GPU index (exec.Open("cuda:N") calls it).
func Open(index int) (*Backend, error) {
	l, err := loadAll()
	if err != nil {
		return nil, err
	}
	dev, info, err := describe(l.drv, index)
	if err != nil {
		return nil, err
	}
	b := &Backend{lib: l, index: index, info: info, device: dev}
	b.w, err = startWorker(func() error {
		ctx, err := l.drv.PrimaryCtxRetain(info.dev)
		if err != nil {
			return fmt.Errorf("cuda: cuda:%d: %w: retaining the primary context: %v", index, exec.ErrUnavailable, err)
		}
		if err := l.drv.CtxSetCurrent(ctx); err != nil {
			l.drv.PrimaryCtxRelease(info.dev)
			return fmt.Errorf("cuda: cuda:%d: %w: %v", index, exec.ErrUnavailable, err)
		}
		h, err := l.blas.Create()
		if err != nil {
			l.drv.PrimaryCtxRelease(info.dev)
			return fmt.Errorf("cuda: cuda:%d: %w: cublasCreate: %v", index, exec.ErrUnavailable, err)
		}
		b.ctx, b.blas = ctx, h
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.alloc = newAllocator(l.drv)
	b.mods = newModuleSet()
	return b, nil
}

// Name returns "cuda".
func (b *Backend) Name() string { return "cuda" }

// Device describes the GPU.
func (b *Backend) Device() exec.Device { return b.device }

// String describes the backend.
func (b *Backend) String() string { return b.device.String() }

// target is what the code generator needs to know of the device.
func (b *Backend) target() cudagen.Target {
	return cudagen.Target{MaxThreads: b.info.maxThr, SMs: b.info.sms, SharedBytes: b.info.shared}
}

// arch is the NVRTC architecture suffix: "90" for compute capability 9.0.
func (b *Backend) arch() string { return fmt.Sprintf("%d%d", b.info.major, b.info.minor) }

// do runs fn on the device goroutine, unless the backend is closed.
func (b *Backend) do(fn func() error) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return fmt.Errorf("cuda: %s: %w", b.device.Name, exec.ErrClosed)
	}
	return b.w.do(fn)
}

// Supports reports whether there is a kernel for n: every op has its row
// in the code generator's table (exec/cuda/internal/cudagen), which says
// whether it runs as a generated kernel or a library call (MatMul in
// float32 and float64 on cuBLAS).
func (b *Backend) Supports(n *graph.Node) error {
	if err := cudagen.Supports(n); err != nil {
		return fmt.Errorf("%w: cuda: %v", exec.ErrUnsupported, err)
	}
	return nil
}

// buffer is device memory holding a Variable.
type buffer struct {
	b     *Backend
	ptr   cu.DevicePtr
	bytes int64
	freed bool
}

// NewBuffer allocates device memory holding a copy of t.
func (b *Backend) NewBuffer(t *tensor.Tensor) (exec.Buffer, error) {
	buf := &buffer{b: b, bytes: int64(len(t.Bytes()))}
	src := t.Bytes()
	err := b.do(func() error {
		p, err := b.alloc.alloc(buf.bytes)
		if err != nil {
			return err
		}
		buf.ptr = p
		if len(src) > 0 {
			if err := b.lib.drv.MemcpyHtoD(p, ptrOf(src), buf.bytes); err != nil {
				b.alloc.put(p)
				return fmt.Errorf("copying %s to the device: %w", t.Type(), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: NewBuffer(%s): %w", t.Type(), err)
	}
	return buf, nil
}

// Read copies the buffer to dst.
func (m *buffer) Read(dst *tensor.Tensor) error {
	d := dst.Bytes()
	if int64(len(d)) != m.bytes {
		return fmt.Errorf("cuda: buffer of %d bytes read into %s", m.bytes, dst.Type())
	}
	if m.bytes == 0 {
		return nil
	}
	return m.b.do(func() error {
		if m.freed {
			return fmt.Errorf("cuda: read of a freed buffer")
		}
		return m.b.lib.drv.MemcpyDtoH(ptrOf(d), m.ptr, m.bytes)
	})
}

// Write copies src into the buffer.
func (m *buffer) Write(src *tensor.Tensor) error {
	s := src.Bytes()
	if int64(len(s)) != m.bytes {
		return fmt.Errorf("cuda: %s written to a buffer of %d bytes", src.Type(), m.bytes)
	}
	if m.bytes == 0 {
		return nil
	}
	return m.b.do(func() error {
		if m.freed {
			return fmt.Errorf("cuda: write to a freed buffer")
		}
		return m.b.lib.drv.MemcpyHtoD(m.ptr, ptrOf(s), m.bytes)
	})
}

// Free returns the memory to the backend's allocator.
func (m *buffer) Free() {
	m.b.do(func() error {
		if !m.freed {
			m.freed = true
			return m.b.alloc.put(m.ptr)
		}
		return nil
	})
}

// MemoryStats reports the backend allocator's bytes in use, cached for
// reuse, and the peak in use.
func (b *Backend) MemoryStats() (inUse, cached, peak int64) {
	b.do(func() error {
		inUse, cached, peak = b.alloc.inUse, b.alloc.cached, b.alloc.peak
		return nil
	})
	return
}

// AllocBuffer returns n bytes of uninitialised device memory from the
// backend's caching allocator (exec.Resident).
func (b *Backend) AllocBuffer(n int64) (exec.Buffer, error) {
	buf := &buffer{b: b, bytes: n}
	err := b.do(func() error {
		p, err := b.alloc.alloc(n)
		buf.ptr = p
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	return buf, nil
}

// BindsBuffers is true: a Run reads device feeds where they lie and writes
// kept outputs straight into their buffers (exec.Resident).
func (b *Backend) BindsBuffers() bool { return true }

// Memory reports the device's free and total memory (cuMemGetInfo: the
// whole device, other processes included) and the allocator's bytes in
// use, cached and peak (exec.MemoryBackend).
func (b *Backend) Memory() (exec.Memory, error) {
	var m exec.Memory
	err := b.do(func() error {
		free, total, err := b.lib.drv.MemGetInfo()
		if err != nil {
			return fmt.Errorf("cuMemGetInfo: %w", err)
		}
		m = exec.Memory{Total: total, Free: free, InUse: b.alloc.inUse, Cached: b.alloc.cached, Peak: b.alloc.peak}
		return nil
	})
	if err != nil {
		return exec.Memory{}, fmt.Errorf("cuda: %w", err)
	}
	return m, nil
}

// ReleaseCache frees the allocator's cached blocks (cuMemFree) and
// reports their bytes (exec.MemoryBackend).
func (b *Backend) ReleaseCache() (int64, error) {
	var n int64
	err := b.do(func() error {
		n = b.alloc.cached
		err := b.alloc.release()
		n -= b.alloc.cached
		return err
	})
	if err != nil {
		return n, fmt.Errorf("cuda: %w", err)
	}
	return n, nil
}

// Close releases the device memory, the modules, the cuBLAS handle and
// the primary context. Programs compiled for the backend must be closed
// first; they fail with exec.ErrClosed afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	var errs firstErr
	b.w.do(func() error {
		errs.keep(b.mods.unloadAll(b.lib.drv))
		errs.keep(b.alloc.releaseAll())
		errs.keep(b.ext.close())
		errs.keep(b.lib.blas.Destroy(b.blas))
		errs.keep(b.lib.drv.PrimaryCtxRelease(b.info.dev))
		return nil
	})
	b.w.stop()
	if errs.err != nil {
		return fmt.Errorf("cuda: Close: %w", errs.err)
	}
	return nil
}

package exec

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// DeviceTensor is a tensor value held in a backend's memory: an output
// that Program.RunDevice left on the device, or a host tensor put there
// with Upload. Another Run of the same or another Program on the same
// backend takes it as a feed (DeviceFeeds) without a round trip through
// the host. On the CPU backend a DeviceTensor is host memory that Runs
// read and write in place: handing one from Run to Run copies nothing.
//
// A DeviceTensor's value never changes (every RunDevice makes new ones),
// so it may feed several Runs at once. Free gives its memory back; a
// DeviceTensor that is never freed is released with its backend.
type DeviceTensor struct {
	be    Backend
	dtype tensor.DType
	shape tensor.Shape
	mu    sync.RWMutex // read-held while a Run or a copy uses buf; Free holds it
	buf   Buffer       // nil once freed
	host  []byte       // the buffer's bytes when it is host memory (HostBuffer)
}

// DeviceFeeds maps Input nodes to device-resident values for one
// RunDevice.
type DeviceFeeds map[*graph.Node]*DeviceTensor

// HostBuffer is a Buffer in host memory (the CPU backend's): Programs
// read feeds from it and write outputs into it in place.
type HostBuffer interface {
	Buffer
	// HostBytes returns the buffer's memory (not a copy).
	HostBytes() []byte
}

// Resident is implemented by backends whose Programs can take feeds from,
// and leave outputs in, Buffers (both of loom's). A backend without it
// still serves RunDevice and Upload, through host copies.
type Resident interface {
	// AllocBuffer returns an uninitialised Buffer of n bytes.
	AllocBuffer(n int64) (Buffer, error)
	// BindsBuffers reports whether the backend's Executables read
	// Frame.InputBufs and write Frame.OutputBufs (a HostBuffer backend
	// needs not: exec hands its bytes over as host tensors).
	BindsBuffers() bool
}

// Upload copies t into be's memory.
func Upload(be Backend, t *tensor.Tensor) (*DeviceTensor, error) {
	if be == nil {
		return nil, fmt.Errorf("exec: Upload: nil backend")
	}
	if t == nil {
		return nil, fmt.Errorf("exec: Upload: %w: nil tensor", graph.ErrInvalid)
	}
	buf, err := be.NewBuffer(t)
	if err != nil {
		return nil, fmt.Errorf("exec: Upload(%s) to %s: %w", t.Type(), be.Name(), err)
	}
	return newDeviceTensor(be, buf, t.DType(), t.Shape()), nil
}

func newDeviceTensor(be Backend, buf Buffer, dt tensor.DType, shape tensor.Shape) *DeviceTensor {
	d := &DeviceTensor{be: be, buf: buf, dtype: dt, shape: shape.Clone()}
	if hb, ok := buf.(HostBuffer); ok {
		d.host = hb.HostBytes()
	}
	return d
}

// Backend returns the backend that holds the value.
func (d *DeviceTensor) Backend() Backend {
	if d == nil {
		return nil
	}
	return d.be
}

// DType returns the value's element type.
func (d *DeviceTensor) DType() tensor.DType {
	if d == nil {
		return tensor.Invalid
	}
	return d.dtype
}

// Shape returns the value's shape.
func (d *DeviceTensor) Shape() tensor.Shape {
	if d == nil {
		return nil
	}
	return d.shape.Clone()
}

// Type is the value's type as Node.Type and Tensor.Type write it
// ("f32[2,3]").
func (d *DeviceTensor) Type() string {
	if d == nil {
		return "nil"
	}
	return tensor.TypeString(d.dtype, d.shape)
}

// Bytes is the size of the value in bytes.
func (d *DeviceTensor) Bytes() int64 {
	if d == nil {
		return 0
	}
	return int64(d.shape.Size() * d.dtype.Size())
}

// Tensor copies the value to a new host tensor (on every backend, the CPU
// included, so that the result never aliases the DeviceTensor).
func (d *DeviceTensor) Tensor() (*tensor.Tensor, error) {
	if d == nil {
		return nil, fmt.Errorf("exec: DeviceTensor.Tensor: %w: nil DeviceTensor", graph.ErrInvalid)
	}
	t, err := tensor.Make(d.dtype, d.shape...)
	if err != nil {
		return nil, fmt.Errorf("exec: DeviceTensor.Tensor: %w", err)
	}
	if err := d.Read(t); err != nil {
		return nil, err
	}
	return t, nil
}

// Read copies the value into dst, which must have its type.
func (d *DeviceTensor) Read(dst *tensor.Tensor) error {
	if d == nil {
		return fmt.Errorf("exec: DeviceTensor.Read: %w: nil DeviceTensor", graph.ErrInvalid)
	}
	if dst == nil || dst.DType() != d.dtype || !dst.Shape().Equal(d.shape) {
		return fmt.Errorf("exec: DeviceTensor.Read: %w: a %s value read into %s", ErrFeed, d.Type(), dst.Type())
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.buf == nil {
		return fmt.Errorf("exec: DeviceTensor.Read(%s): %w", d.Type(), ErrFreed)
	}
	if err := d.buf.Read(dst); err != nil {
		return fmt.Errorf("exec: DeviceTensor.Read(%s) from %s: %w", d.Type(), d.be.Name(), err)
	}
	return nil
}

// Free gives the memory back to the backend (its cache, on CUDA: see
// ReleaseCache). It waits for Runs that read the value; later uses are
// errors wrapping ErrFreed. Freeing twice is harmless.
func (d *DeviceTensor) Free() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.buf != nil {
		d.buf.Free()
		d.buf, d.host = nil, nil
	}
}

// ErrFreed is wrapped by the errors of uses of a freed DeviceTensor.
var ErrFreed = errors.New("the DeviceTensor was freed")

// RunDevice is Run with values that stay on the device: feeds are host
// tensors (feeds) or DeviceTensors of the program's backend (dev), one
// value per Input in either map; outputs whose numbers are listed in keep
// are left on the device and returned in device (host is nil there), the
// others are copied to the host as Run copies them and returned in host
// (device is nil there). A device feed is read where it lies: on CUDA the
// program's kernels read its memory, on the CPU its bytes, so neither
// moves a byte between host and device; a kept output is written by the
// kernels straight into a new DeviceTensor. Variable updates are applied
// as by Run. Errors leave the Program, its variables and the feeds as
// they were (kept outputs made before the error are freed).
func (p *Program) RunDevice(ctx context.Context, feeds Feeds, dev DeviceFeeds, keep ...int) (host []*tensor.Tensor, device []*DeviceTensor, err error) {
	if err := p.usable("RunDevice"); err != nil {
		return nil, nil, err
	}
	kept := make([]bool, p.nOut)
	for _, k := range keep {
		if k < 0 || k >= p.nOut {
			return nil, nil, fmt.Errorf("exec: RunDevice: %w: keep lists output %d of a program with %d outputs", ErrFeed, k, p.nOut)
		}
		if kept[k] {
			return nil, nil, fmt.Errorf("exec: RunDevice: %w: keep lists output %d twice", ErrFeed, k)
		}
		kept[k] = true
	}
	// The device feeds: read-locked for the whole Run (once each, even
	// when one value feeds two Inputs).
	locked := make(map[*DeviceTensor]bool, len(dev))
	for n, d := range dev {
		if d == nil {
			return nil, nil, fmt.Errorf("exec: RunDevice: %w: the device feed for %s is a nil DeviceTensor", ErrFeed, n)
		}
		if _, dup := feeds[n]; dup {
			return nil, nil, fmt.Errorf("exec: RunDevice: %w: %s is fed twice (a host feed and a device feed)", ErrFeed, n)
		}
		if d.be != p.be {
			return nil, nil, fmt.Errorf("exec: RunDevice: %w: the device feed for %s is held by %s (%s), the program runs on %s (%s): copy it with Tensor and Upload", ErrFeed, n, d.be.Name(), d.be.Device().Name, p.be.Name(), p.be.Device().Name)
		}
		if !locked[d] {
			locked[d] = true
			d.mu.RLock()
			defer d.mu.RUnlock()
		}
		if d.buf == nil {
			return nil, nil, fmt.Errorf("exec: RunDevice: the device feed for %s: %w", n, ErrFreed)
		}
	}
	res, _ := p.be.(Resident)
	binds := res != nil && res.BindsBuffers()
	host = make([]*tensor.Tensor, p.nOut)
	device = make([]*DeviceTensor, p.nOut)
	outs := make([]*tensor.Tensor, p.nOut)
	var outBufs []Buffer
	defer func() {
		if err != nil {
			for _, d := range device {
				d.Free()
			}
			host, device = nil, nil
		}
	}()
	for i, v := range p.plan.Outputs[:p.nOut] {
		n := p.plan.Values[v].Node
		if !kept[i] {
			t, err := tensor.Make(n.DType(), n.Shape()...)
			if err != nil {
				return nil, nil, fmt.Errorf("exec: RunDevice: output %d: %w", i, err)
			}
			host[i], outs[i] = t, t
			continue
		}
		var buf Buffer
		var err error
		if res != nil {
			buf, err = res.AllocBuffer(p.plan.Values[v].Bytes)
		} else {
			buf, err = p.be.NewBuffer(tensor.Zeros(n.DType(), n.Shape()...))
		}
		if err != nil {
			return nil, nil, fmt.Errorf("exec: RunDevice: allocating output %d %s on %s: %w", i, n.Type(), p.be.Name(), err)
		}
		d := newDeviceTensor(p.be, buf, n.DType(), n.Shape())
		device[i] = d
		switch {
		case d.host != nil:
			outs[i] = d.hostTensor()
		case binds:
			if outBufs == nil {
				outBufs = make([]Buffer, p.nOut)
			}
			outBufs[i] = buf
		default:
			// Computed on the host side, written to the device below.
			outs[i] = tensor.Zeros(n.DType(), n.Shape()...)
		}
	}
	if err := p.runWith(ctx, feeds, dev, binds, outs, outBufs); err != nil {
		return nil, nil, err
	}
	for i, d := range device {
		if d != nil && d.host == nil && !binds {
			if err := d.buf.Write(outs[i]); err != nil {
				return nil, nil, fmt.Errorf("exec: RunDevice: writing output %d to %s: %w", i, p.be.Name(), err)
			}
		}
	}
	return host, device, nil
}

// feedValue is how a device feed reaches the Frame: its bytes as a host
// tensor (a HostBuffer), its Buffer (a backend that binds buffers), or a
// host copy (any other backend).
func (d *DeviceTensor) feedValue(binds bool) (*tensor.Tensor, Buffer, error) {
	switch {
	case d.host != nil:
		return d.hostTensor(), nil, nil
	case binds:
		return nil, d.buf, nil
	}
	t, err := tensor.Make(d.dtype, d.shape...)
	if err == nil {
		err = d.buf.Read(t)
	}
	return t, nil, err
}

// hostTensor wraps a HostBuffer's bytes (no copy).
func (d *DeviceTensor) hostTensor() *tensor.Tensor {
	t, _ := tensor.FromBytes(d.dtype, d.host, d.shape...)
	return t
}

// Memory describes a backend's memory. For a GPU, Total and Free are the
// driver's figures for the whole device (other processes' use included);
// for the CPU, the machine's (MemTotal and MemAvailable of
// /proc/meminfo, 0 where unknown). InUse and Cached are loom's: the bytes
// its allocator has handed out (variables, arenas, constants,
// DeviceTensors) and the freed bytes it keeps for reuse without a driver
// call (on the CPU, the Go heap's in-use and idle-but-unreturned bytes).
type Memory struct {
	Total, Free   int64
	InUse, Cached int64
	Peak          int64 // the most bytes InUse has been (0 where not tracked)
}

// MemoryBackend is implemented by backends that report their memory and
// can give cached memory back (both of loom's).
type MemoryBackend interface {
	Memory() (Memory, error)
	// ReleaseCache returns the cached memory to the driver (the
	// operating system) and reports how many bytes that was.
	ReleaseCache() (int64, error)
}

// DeviceMemory reports be's memory (the seeds' get_available_memory).
func DeviceMemory(be Backend) (Memory, error) {
	if be == nil {
		return Memory{}, fmt.Errorf("exec: DeviceMemory: nil backend")
	}
	mb, ok := be.(MemoryBackend)
	if !ok {
		return Memory{}, fmt.Errorf("exec: DeviceMemory: %w: backend %s does not report its memory", ErrUnsupported, be.Name())
	}
	m, err := mb.Memory()
	if err != nil {
		return Memory{}, fmt.Errorf("exec: DeviceMemory(%s): %w", be.Name(), err)
	}
	return m, nil
}

// ReleaseCache gives the memory be keeps cached for reuse back to the
// driver, so that other programs (or processes) can have it, and returns
// how many bytes that was (the seeds' free_cache). Memory in use
// (variables, live programs' arenas, DeviceTensors) is not touched;
// freeing DeviceTensors and closing Programs first makes more of it
// cached and so released.
func ReleaseCache(be Backend) (int64, error) {
	if be == nil {
		return 0, fmt.Errorf("exec: ReleaseCache: nil backend")
	}
	mb, ok := be.(MemoryBackend)
	if !ok {
		return 0, fmt.Errorf("exec: ReleaseCache: %w: backend %s keeps no cache loom can release", ErrUnsupported, be.Name())
	}
	n, err := mb.ReleaseCache()
	if err != nil {
		return n, fmt.Errorf("exec: ReleaseCache(%s): %w", be.Name(), err)
	}
	return n, nil
}

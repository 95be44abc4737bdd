//go:build linux

package cu

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Device is a CUdevice, an ordinal-like handle from DeviceGet.
type Device int32

// Context is a CUcontext.
type Context uintptr

// Module is a CUmodule, a loaded cubin or PTX image.
type Module uintptr

// Function is a CUfunction, a kernel of a Module.
type Function uintptr

// Stream is a CUstream; 0 is the legacy default stream.
type Stream uintptr

// Event is a CUevent.
type Event uintptr

// DevicePtr is a CUdeviceptr, an address in device memory.
type DevicePtr uint64

// Attribute is a CUdevice_attribute.
type Attribute int32

// Device attributes, with the values of cuda.h.
const (
	AttrMaxThreadsPerBlock      Attribute = 1  // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	AttrMaxSharedMemoryPerBlock Attribute = 8  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK (bytes)
	AttrWarpSize                Attribute = 10 // CU_DEVICE_ATTRIBUTE_WARP_SIZE
	AttrClockRate               Attribute = 13 // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (kHz)
	AttrMultiprocessorCount     Attribute = 16 // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrMemoryClockRate         Attribute = 36 // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz)
	AttrGlobalMemoryBusWidth    Attribute = 37 // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH (bits)
	AttrComputeCapabilityMajor  Attribute = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor  Attribute = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
)

// Flags of StreamCreate and EventCreate.
const (
	StreamDefaultFlags uint32 = 0 // CU_STREAM_DEFAULT
	StreamNonBlocking  uint32 = 1 // CU_STREAM_NON_BLOCKING
	EventDefault       uint32 = 0 // CU_EVENT_DEFAULT
	EventBlockingSync  uint32 = 1 // CU_EVENT_BLOCKING_SYNC
	EventDisableTiming uint32 = 2 // CU_EVENT_DISABLE_TIMING
)

const deviceNameBufferLen = 256

// Driver is the loaded CUDA driver library (libcuda). Its methods are thin
// wrappers of the C functions named in their comments; see the package
// comment for the threading rules.
type Driver struct {
	path string

	cuInit                       func(flags uint32) Result
	cuDriverGetVersion           func(v *int32) Result
	cuDeviceGetCount             func(n *int32) Result
	cuDeviceGet                  func(dev *Device, ordinal int32) Result
	cuDeviceGetName              func(name *byte, n int32, dev Device) Result
	cuDeviceTotalMem_v2          func(bytes *uint64, dev Device) Result
	cuDeviceGetAttribute         func(v *int32, a Attribute, dev Device) Result
	cuDevicePrimaryCtxRetain     func(c *Context, dev Device) Result
	cuDevicePrimaryCtxRelease_v2 func(dev Device) Result
	cuCtxSetCurrent              func(c Context) Result
	cuCtxSynchronize             func() Result
	cuMemGetInfo_v2              func(free, total *uint64) Result
	cuMemAlloc_v2                func(p *DevicePtr, bytes uint64) Result
	cuMemFree_v2                 func(p DevicePtr) Result
	cuMemAllocHost_v2            func(p **byte, bytes uint64) Result
	cuMemFreeHost                func(p unsafe.Pointer) Result
	cuMemcpyHtoD_v2              func(dst DevicePtr, src unsafe.Pointer, bytes uint64) Result
	cuMemcpyDtoH_v2              func(dst unsafe.Pointer, src DevicePtr, bytes uint64) Result
	cuStreamCreate               func(s *Stream, flags uint32) Result
	cuStreamDestroy_v2           func(s Stream) Result
	cuEventCreate                func(e *Event, flags uint32) Result
	cuEventSynchronize           func(e Event) Result
	cuEventElapsedTime           func(ms *float32, start, end Event) Result
	cuEventDestroy_v2            func(e Event) Result
	cuModuleLoadData             func(m *Module, image unsafe.Pointer) Result
	cuModuleUnload               func(m Module) Result
	cuModuleGetFunction          func(f *Function, m Module, name string) Result
	cuGetErrorName               func(r Result, p **byte) Result
	cuGetErrorString             func(r Result, p **byte) Result

	launchAddr uintptr // cuLaunchKernel, called through purego.SyscallN
	// hot are the functions a Run calls per step or per transfer, called
	// through purego.SyscallN, which does not allocate (the
	// reflection-based RegisterFunc binding makes about 11 objects a call).
	sc  caller
	hot struct {
		cuMemcpyHtoDAsync_v2, cuMemcpyDtoHAsync_v2, cuMemcpyDtoDAsync_v2 uintptr
		cuMemsetD8Async, cuStreamSynchronize, cuEventRecord              uintptr
	}
	launchMu  sync.Mutex
	launchPin runtime.Pinner // reused by LaunchKernel, under launchMu
}

func (d *Driver) symbols() []symbol {
	return []symbol{
		{"cuInit", &d.cuInit},
		{"cuDriverGetVersion", &d.cuDriverGetVersion},
		{"cuDeviceGetCount", &d.cuDeviceGetCount},
		{"cuDeviceGet", &d.cuDeviceGet},
		{"cuDeviceGetName", &d.cuDeviceGetName},
		{"cuDeviceTotalMem_v2", &d.cuDeviceTotalMem_v2},
		{"cuDeviceGetAttribute", &d.cuDeviceGetAttribute},
		{"cuDevicePrimaryCtxRetain", &d.cuDevicePrimaryCtxRetain},
		{"cuDevicePrimaryCtxRelease_v2", &d.cuDevicePrimaryCtxRelease_v2},
		{"cuCtxSetCurrent", &d.cuCtxSetCurrent},
		{"cuCtxSynchronize", &d.cuCtxSynchronize},
		{"cuMemGetInfo_v2", &d.cuMemGetInfo_v2},
		{"cuMemAlloc_v2", &d.cuMemAlloc_v2},
		{"cuMemFree_v2", &d.cuMemFree_v2},
		{"cuMemAllocHost_v2", &d.cuMemAllocHost_v2},
		{"cuMemFreeHost", &d.cuMemFreeHost},
		{"cuMemcpyHtoD_v2", &d.cuMemcpyHtoD_v2},
		{"cuMemcpyDtoH_v2", &d.cuMemcpyDtoH_v2},
		{"cuMemcpyHtoDAsync_v2", addrOf{&d.hot.cuMemcpyHtoDAsync_v2}},
		{"cuMemcpyDtoHAsync_v2", addrOf{&d.hot.cuMemcpyDtoHAsync_v2}},
		{"cuMemcpyDtoDAsync_v2", addrOf{&d.hot.cuMemcpyDtoDAsync_v2}},
		{"cuMemsetD8Async", addrOf{&d.hot.cuMemsetD8Async}},
		{"cuStreamCreate", &d.cuStreamCreate},
		{"cuStreamDestroy_v2", &d.cuStreamDestroy_v2},
		{"cuStreamSynchronize", addrOf{&d.hot.cuStreamSynchronize}},
		{"cuEventCreate", &d.cuEventCreate},
		{"cuEventRecord", addrOf{&d.hot.cuEventRecord}},
		{"cuEventSynchronize", &d.cuEventSynchronize},
		{"cuEventElapsedTime", &d.cuEventElapsedTime},
		{"cuEventDestroy_v2", &d.cuEventDestroy_v2},
		{"cuModuleLoadData", &d.cuModuleLoadData},
		{"cuModuleUnload", &d.cuModuleUnload},
		{"cuModuleGetFunction", &d.cuModuleGetFunction},
		{"cuLaunchKernel", addrOf{&d.launchAddr}},
		{"cuGetErrorName", &d.cuGetErrorName},
		{"cuGetErrorString", &d.cuGetErrorString},
	}
}

// LoadDriver opens libcuda: the file named by $LOOM_LIBCUDA, then
// libcuda.so.1 through the loader, then libcuda.so.1 in $CUDA_HOME/lib64,
// /usr/local/cuda/lib64, /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu
// and /usr/local/nvidia/lib. When none opens, the error (a *LoadError) lists
// every path tried and wraps ErrNotFound; a library lacking a bound function
// gives an error naming it that wraps ErrMissingSymbol. It does not call
// cuInit.
func LoadDriver() (*Driver, error) {
	return loadDriver(cudaSpec.candidates(os.Getenv))
}

func loadDriver(cands []candidate) (*Driver, error) {
	d := &Driver{}
	p, err := load(cudaSpec, cands, d.symbols())
	if err != nil {
		return nil, err
	}
	d.path = p
	driverErrors.Store(&errorFuncs{name: d.cuGetErrorName, str: d.cuGetErrorString})
	return d, nil
}

// Path returns the file that was opened.
func (d *Driver) Path() string { return d.path }

// size converts a byte count to size_t, refusing negative ones.
func size(n int64) (uint64, error) {
	if n < 0 {
		return 0, fmt.Errorf("cu: negative size %d", n)
	}
	return uint64(n), nil
}

// Init initialises the driver: cuInit(0).
func (d *Driver) Init() error { return d.cuInit(0).err() }

// Version returns the CUDA version the driver supports, as 1000*major +
// 10*minor (13000 for CUDA 13.0): cuDriverGetVersion.
func (d *Driver) Version() (int, error) {
	var v int32
	err := d.cuDriverGetVersion(&v).err()
	return int(v), err
}

// DeviceCount returns the number of devices: cuDeviceGetCount.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	err := d.cuDeviceGetCount(&n).err()
	return int(n), err
}

// DeviceGet returns the device of an ordinal in [0, DeviceCount()):
// cuDeviceGet.
func (d *Driver) DeviceGet(ordinal int) (Device, error) {
	if ordinal < 0 || ordinal > math.MaxInt32 {
		return 0, fmt.Errorf("cu: device ordinal %d out of range", ordinal)
	}
	var dev Device
	err := d.cuDeviceGet(&dev, int32(ordinal)).err()
	return dev, err
}

// DeviceName returns the device's name, e.g. "NVIDIA H100 80GB HBM3":
// cuDeviceGetName.
func (d *Driver) DeviceName(dev Device) (string, error) {
	var buf [deviceNameBufferLen]byte
	if err := d.cuDeviceGetName(&buf[0], int32(len(buf)), dev).err(); err != nil {
		return "", err
	}
	n := bytes.IndexByte(buf[:], 0)
	if n < 0 {
		n = len(buf)
	}
	return string(buf[:n]), nil
}

// DeviceTotalMem returns the device's memory in bytes: cuDeviceTotalMem_v2.
func (d *Driver) DeviceTotalMem(dev Device) (int64, error) {
	var n uint64
	err := d.cuDeviceTotalMem_v2(&n, dev).err()
	return int64(n), err
}

// DeviceAttribute returns an attribute of the device: cuDeviceGetAttribute.
func (d *Driver) DeviceAttribute(a Attribute, dev Device) (int, error) {
	var v int32
	err := d.cuDeviceGetAttribute(&v, a, dev).err()
	return int(v), err
}

// PrimaryCtxRetain retains the device's primary context, the one the CUDA
// runtime and cuBLAS use: cuDevicePrimaryCtxRetain. Balance it with
// PrimaryCtxRelease.
func (d *Driver) PrimaryCtxRetain(dev Device) (Context, error) {
	var c Context
	err := d.cuDevicePrimaryCtxRetain(&c, dev).err()
	return c, err
}

// PrimaryCtxRelease releases the device's primary context:
// cuDevicePrimaryCtxRelease_v2.
func (d *Driver) PrimaryCtxRelease(dev Device) error {
	return d.cuDevicePrimaryCtxRelease_v2(dev).err()
}

// CtxSetCurrent binds the context to the calling OS thread:
// cuCtxSetCurrent. Lock the goroutine to its thread first.
func (d *Driver) CtxSetCurrent(c Context) error { return d.cuCtxSetCurrent(c).err() }

// CtxSynchronize waits for all work of the current context:
// cuCtxSynchronize.
func (d *Driver) CtxSynchronize() error { return d.cuCtxSynchronize().err() }

// MemGetInfo returns the free and total device memory of the current
// context's device in bytes: cuMemGetInfo_v2.
func (d *Driver) MemGetInfo() (free, total int64, err error) {
	var f, t uint64
	err = d.cuMemGetInfo_v2(&f, &t).err()
	return int64(f), int64(t), err
}

// MemAlloc allocates device memory: cuMemAlloc_v2.
func (d *Driver) MemAlloc(bytes int64) (DevicePtr, error) {
	n, err := size(bytes)
	if err != nil {
		return 0, err
	}
	var p DevicePtr
	err = d.cuMemAlloc_v2(&p, n).err()
	return p, err
}

// MemFree frees device memory from MemAlloc: cuMemFree_v2.
func (d *Driver) MemFree(p DevicePtr) error { return d.cuMemFree_v2(p).err() }

// MemAllocHost allocates page-locked host memory, returned as a slice of
// len and cap bytes over C memory (the garbage collector does not own it):
// cuMemAllocHost_v2. Free it with MemFreeHost; the slice must not be used
// afterwards.
func (d *Driver) MemAllocHost(bytes int64) ([]byte, error) {
	n, err := size(bytes)
	if err != nil {
		return nil, err
	}
	var p *byte
	if err := d.cuMemAllocHost_v2(&p, n).err(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("cu: cuMemAllocHost_v2 returned NULL")
	}
	return unsafe.Slice(p, n), nil
}

// MemFreeHost frees memory from MemAllocHost: cuMemFreeHost. b must start
// where the slice MemAllocHost returned starts (it may be resliced shorter).
func (d *Driver) MemFreeHost(b []byte) error {
	p := unsafe.SliceData(b)
	if p == nil {
		return errors.New("cu: MemFreeHost of a nil slice")
	}
	return d.cuMemFreeHost(unsafe.Pointer(p)).err()
}

// MemcpyHtoD copies bytes from host memory to device memory and returns
// when the copy is done: cuMemcpyHtoD_v2.
func (d *Driver) MemcpyHtoD(dst DevicePtr, src unsafe.Pointer, bytes int64) error {
	n, err := size(bytes)
	if err != nil {
		return err
	}
	return d.cuMemcpyHtoD_v2(dst, src, n).err()
}

// MemcpyDtoH copies bytes from device memory to host memory and returns
// when the copy is done: cuMemcpyDtoH_v2.
func (d *Driver) MemcpyDtoH(dst unsafe.Pointer, src DevicePtr, bytes int64) error {
	n, err := size(bytes)
	if err != nil {
		return err
	}
	return d.cuMemcpyDtoH_v2(dst, src, n).err()
}

// MemcpyHtoDAsync queues a host-to-device copy on s: cuMemcpyHtoDAsync_v2.
// The host memory must stay valid (and, if it is Go memory, reachable and
// unmoved: pin it) until the stream has passed the copy; page-locked memory
// from MemAllocHost makes the copy truly asynchronous.
func (d *Driver) MemcpyHtoDAsync(dst DevicePtr, src unsafe.Pointer, bytes int64, s Stream) error {
	n, err := size(bytes)
	if err != nil {
		return err
	}
	return d.call(d.hot.cuMemcpyHtoDAsync_v2, uintptr(dst), uintptr(src), uintptr(n), uintptr(s))
}

// MemcpyDtoHAsync queues a device-to-host copy on s: cuMemcpyDtoHAsync_v2.
// The host memory must stay valid until the stream has passed the copy, as
// for MemcpyHtoDAsync.
func (d *Driver) MemcpyDtoHAsync(dst unsafe.Pointer, src DevicePtr, bytes int64, s Stream) error {
	n, err := size(bytes)
	if err != nil {
		return err
	}
	return d.call(d.hot.cuMemcpyDtoHAsync_v2, uintptr(dst), uintptr(src), uintptr(n), uintptr(s))
}

// MemcpyDtoDAsync queues a device-to-device copy on s:
// cuMemcpyDtoDAsync_v2.
func (d *Driver) MemcpyDtoDAsync(dst, src DevicePtr, bytes int64, s Stream) error {
	n, err := size(bytes)
	if err != nil {
		return err
	}
	return d.call(d.hot.cuMemcpyDtoDAsync_v2, uintptr(dst), uintptr(src), uintptr(n), uintptr(s))
}

// MemsetD8Async queues setting n bytes at dst to v on s: cuMemsetD8Async.
func (d *Driver) MemsetD8Async(dst DevicePtr, v byte, n int64, s Stream) error {
	c, err := size(n)
	if err != nil {
		return err
	}
	return d.call(d.hot.cuMemsetD8Async, uintptr(dst), uintptr(v), uintptr(c), uintptr(s))
}

// StreamCreate creates a stream (flags: StreamDefaultFlags or
// StreamNonBlocking): cuStreamCreate.
func (d *Driver) StreamCreate(flags uint32) (Stream, error) {
	var s Stream
	err := d.cuStreamCreate(&s, flags).err()
	return s, err
}

// StreamDestroy destroys a stream: cuStreamDestroy_v2.
func (d *Driver) StreamDestroy(s Stream) error { return d.cuStreamDestroy_v2(s).err() }

// StreamSynchronize waits for the work queued on s: cuStreamSynchronize.
func (d *Driver) StreamSynchronize(s Stream) error {
	return d.call(d.hot.cuStreamSynchronize, uintptr(s))
}

// EventCreate creates an event (flags: EventDefault, EventBlockingSync,
// EventDisableTiming): cuEventCreate.
func (d *Driver) EventCreate(flags uint32) (Event, error) {
	var e Event
	err := d.cuEventCreate(&e, flags).err()
	return e, err
}

// EventRecord queues e on s: cuEventRecord.
func (d *Driver) EventRecord(e Event, s Stream) error {
	return d.call(d.hot.cuEventRecord, uintptr(e), uintptr(s))
}

// EventSynchronize waits until e has completed: cuEventSynchronize.
func (d *Driver) EventSynchronize(e Event) error { return d.cuEventSynchronize(e).err() }

// EventElapsedTime returns the milliseconds between two completed events:
// cuEventElapsedTime.
func (d *Driver) EventElapsedTime(start, end Event) (float32, error) {
	var ms float32
	err := d.cuEventElapsedTime(&ms, start, end).err()
	return ms, err
}

// EventDestroy destroys an event: cuEventDestroy_v2.
func (d *Driver) EventDestroy(e Event) error { return d.cuEventDestroy_v2(e).err() }

// ModuleLoadData loads a module from an image in memory (a cubin, a fatbin
// or PTX text) into the current context: cuModuleLoadData. PTX need not be
// NUL-terminated: an image that is not ELF or a fatbin and lacks a trailing
// NUL is copied with one added. The image is pinned for the call; the
// driver does not keep it.
func (d *Driver) ModuleLoadData(image []byte) (Module, error) {
	if len(image) == 0 {
		return 0, errors.New("cu: ModuleLoadData of an empty image")
	}
	img := image
	if !selfSized(img) && img[len(img)-1] != 0 {
		img = make([]byte, len(image)+1)
		copy(img, image)
	}
	var pin runtime.Pinner
	pin.Pin(&img[0])
	defer pin.Unpin()
	var m Module
	err := d.cuModuleLoadData(&m, unsafe.Pointer(&img[0])).err()
	return m, err
}

// selfSized reports whether an image carries its own size: an ELF cubin or
// a fatbin.
func selfSized(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.HasPrefix(b, []byte{0x50, 0xed, 0x55, 0xba})
}

// ModuleUnload unloads a module: cuModuleUnload.
func (d *Driver) ModuleUnload(m Module) error { return d.cuModuleUnload(m).err() }

// ModuleGetFunction returns the kernel called name (an extern "C" name or
// a mangled one) of the module: cuModuleGetFunction.
func (d *Driver) ModuleGetFunction(m Module, name string) (Function, error) {
	var f Function
	err := d.cuModuleGetFunction(&f, m, name).err()
	return f, err
}

// LaunchKernel queues the kernel f on s with grid×block threads and shared
// bytes of dynamic shared memory: cuLaunchKernel(f, grid[0], grid[1],
// grid[2], block[0], block[1], block[2], shared, s, kernelParams, NULL).
// params[i] points at the value of the kernel's parameter i (for a pointer
// parameter, at a DevicePtr variable); the driver copies the values during
// the call. The backing array of params and every value it points at are
// pinned with a runtime.Pinner for the duration of the call.
//
// Allocation: the call goes through purego.SyscallN (the reflection-based
// binding made 11 objects a call); pinning more than a few Go values costs
// the Pinner one record, and none when params and the values live in C
// memory (the backend keeps them in page-locked host memory). See
// TestLaunchKernelAllocs.
func (d *Driver) LaunchKernel(f Function, grid, block [3]uint32, shared uint32, s Stream, params []unsafe.Pointer) error {
	var pp *unsafe.Pointer
	d.launchMu.Lock()
	defer d.launchMu.Unlock()
	defer d.launchPin.Unpin()
	if len(params) > 0 {
		pp = &params[0]
		d.launchPin.Pin(pp)
		for i, p := range params {
			if p == nil {
				return fmt.Errorf("cu: LaunchKernel: params[%d] is nil", i)
			}
			d.launchPin.Pin(p)
		}
	}
	// SyscallN rather than the RegisterFunc binding: the launch is the one
	// call made per kernel per run, and SyscallN does not allocate the way
	// the reflection-based binding does. The parameter block is pinned.
	return d.call(d.launchAddr, uintptr(f), uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(shared), uintptr(s), uintptr(unsafe.Pointer(pp)), 0)
}

// caller makes calls through purego.SyscallN without allocating: SyscallN
// keeps its argument slice, so a variadic slice passed straight through
// would go to the heap on every call; the arguments are copied into buf,
// which lives in the library's struct. Pointer arguments must point at C
// memory or at Go memory that stays reachable for the call.
type caller struct {
	mu  sync.Mutex
	buf [15]uintptr
}

func (c *caller) call(fn uintptr, args ...uintptr) uintptr {
	c.mu.Lock()
	n := copy(c.buf[:], args)
	r, _, _ := purego.SyscallN(fn, c.buf[:n]...)
	c.mu.Unlock()
	return r
}

// call calls a driver function and returns its CUresult as an error.
func (d *Driver) call(fn uintptr, args ...uintptr) error {
	return Result(int32(d.sc.call(fn, args...))).err()
}

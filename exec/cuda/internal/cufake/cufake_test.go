//go:build linux

package cufake

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The tests load the fake libraries with purego directly (package cu, the
// real bindings, is not used here) and call them as the backend would.

var (
	libs     Libs
	buildErr error
)

func TestMain(m *testing.M) {
	if os.Getenv("CUFAKE_CHILD") != "" {
		// A test run by another test in a fresh process: the libraries are
		// given in the environment.
		libs = Libs{os.Getenv("LOOM_LIBCUDA"), os.Getenv("LOOM_LIBNVRTC"), os.Getenv("LOOM_LIBCUBLAS"), os.Getenv("LOOM_LIBCUFFT"), os.Getenv("LOOM_LIBCUSOLVER"), os.Getenv("LOOM_LIBNCCL")}
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cufake-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	libs, buildErr = Build(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Results of the fake libraries (their real values in cuda.h, nvrtc.h,
// cublas_api.h).
const (
	cudaSuccess             = 0
	cudaErrInvalidValue     = 1
	cudaErrOutOfMemory      = 2
	cudaErrNotInitialized   = 3
	cudaErrInvalidDevice    = 101
	cudaErrInvalidImage     = 200
	cudaErrInvalidContext   = 201
	cudaErrNoBinaryForGPU   = 209
	cudaErrInvalidHandle    = 400
	cudaErrNotFound         = 500
	cudaErrLaunchFailed     = 719
	nvrtcSuccess            = 0
	nvrtcErrInvalidOption   = 5
	nvrtcErrCompilation     = 6
	cublasSuccess           = 0
	cublasErrNotInitialized = 1
	cublasErrInvalidValue   = 7
	cublasOpN               = 0
	cublasOpT               = 1
)

// api holds the fake libraries' functions, with the C prototypes as purego
// maps them (CUdeviceptr and size_t: uint64; handles: uintptr).
type api struct {
	cuInit                       func(flags uint32) int32
	cuDriverGetVersion           func(v *int32) int32
	cuDeviceGetCount             func(n *int32) int32
	cuDeviceGet                  func(d *int32, ordinal int32) int32
	cuDeviceGetName              func(name *byte, n int32, dev int32) int32
	cuDeviceTotalMem_v2          func(b *uint64, dev int32) int32
	cuDeviceGetAttribute         func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain     func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease_v2 func(dev int32) int32
	cuCtxSetCurrent              func(ctx uintptr) int32
	cuCtxSynchronize             func() int32
	cuMemGetInfo_v2              func(free, total *uint64) int32
	cuMemAlloc_v2                func(p *uint64, n uint64) int32
	cuMemFree_v2                 func(p uint64) int32
	cuMemAllocHost_v2            func(p *unsafe.Pointer, n uint64) int32
	cuMemFreeHost                func(p unsafe.Pointer) int32
	cuMemcpyHtoD_v2              func(dst uint64, src unsafe.Pointer, n uint64) int32
	cuMemcpyDtoH_v2              func(dst unsafe.Pointer, src uint64, n uint64) int32
	cuMemcpyHtoDAsync_v2         func(dst uint64, src unsafe.Pointer, n uint64, s uintptr) int32
	cuMemcpyDtoHAsync_v2         func(dst unsafe.Pointer, src uint64, n uint64, s uintptr) int32
	cuMemcpyDtoDAsync_v2         func(dst, src uint64, n uint64, s uintptr) int32
	cuMemsetD8Async              func(dst uint64, v uint8, n uint64, s uintptr) int32
	cuStreamCreate               func(s *uintptr, flags uint32) int32
	cuStreamDestroy_v2           func(s uintptr) int32
	cuStreamSynchronize          func(s uintptr) int32
	cuEventCreate                func(e *uintptr, flags uint32) int32
	cuEventRecord                func(e, s uintptr) int32
	cuEventSynchronize           func(e uintptr) int32
	cuEventElapsedTime           func(ms *float32, a, b uintptr) int32
	cuEventDestroy_v2            func(e uintptr) int32
	cuModuleLoadData             func(m *uintptr, image unsafe.Pointer) int32
	cuModuleUnload               func(m uintptr) int32
	cuModuleGetFunction          func(f *uintptr, m uintptr, name string) int32
	cuLaunchKernel               func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params, extra unsafe.Pointer) int32
	cuGetErrorName               func(code int32, s **byte) int32
	cuGetErrorString             func(code int32, s **byte) int32

	nvrtcVersion           func(major, minor *int32) int32
	nvrtcCreateProgram     func(p *uintptr, src, name string, nh int32, headers, names unsafe.Pointer) int32
	nvrtcCompileProgram    func(p uintptr, n int32, opts unsafe.Pointer) int32
	nvrtcGetProgramLogSize func(p uintptr, n *uint64) int32
	nvrtcGetProgramLog     func(p uintptr, log *byte) int32
	nvrtcGetPTXSize        func(p uintptr, n *uint64) int32
	nvrtcGetPTX            func(p uintptr, ptx *byte) int32
	nvrtcGetCUBINSize      func(p uintptr, n *uint64) int32
	nvrtcGetCUBIN          func(p uintptr, cubin *byte) int32
	nvrtcDestroyProgram    func(p *uintptr) int32
	nvrtcGetErrorString    func(r int32) string

	cublasCreate_v2           func(h *uintptr) int32
	cublasDestroy_v2          func(h uintptr) int32
	cublasSetStream_v2        func(h, s uintptr) int32
	cublasGetVersion_v2       func(h uintptr, v *int32) int32
	cublasSgemm_v2            func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, b uint64, ldb int32, beta *float32, c uint64, ldc int32) int32
	cublasDgemm_v2            func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, b uint64, ldb int32, beta *float64, c uint64, ldc int32) int32
	cublasSgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *float32, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *float32, c uint64, ldc int32, sc int64, batch int32) int32
	cublasDgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *float64, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *float64, c uint64, ldc int32, sc int64, batch int32) int32
	cublasCgemm_v2            func(h uintptr, ta, tb, m, n, k int32, alpha *complex64, a uint64, lda int32, b uint64, ldb int32, beta *complex64, c uint64, ldc int32) int32
	cublasZgemm_v2            func(h uintptr, ta, tb, m, n, k int32, alpha *complex128, a uint64, lda int32, b uint64, ldb int32, beta *complex128, c uint64, ldc int32) int32
	cublasCgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *complex64, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *complex64, c uint64, ldc int32, sc int64, batch int32) int32
	cublasZgemmStridedBatched func(h uintptr, ta, tb, m, n, k int32, alpha *complex128, a uint64, lda int32, sa int64, b uint64, ldb int32, sb int64, beta *complex128, c uint64, ldc int32, sc int64, batch int32) int32
}

var (
	loadOnce sync.Once
	loaded   *api
	loadErr  error
)

func load() (*api, error) {
	loadOnce.Do(func() {
		var h [3]uintptr
		for i, p := range []string{libs.CUDA, libs.NVRTC, libs.CUBLAS} {
			var err error
			if h[i], err = purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL); err != nil {
				loadErr = err
				return
			}
		}
		a := &api{}
		reg := func(lib int, fn any, name string) {
			if _, err := purego.Dlsym(h[lib], name); err != nil {
				loadErr = errors.Join(loadErr, err)
				return
			}
			purego.RegisterLibFunc(fn, h[lib], name)
		}
		reg(0, &a.cuInit, "cuInit")
		reg(0, &a.cuDriverGetVersion, "cuDriverGetVersion")
		reg(0, &a.cuDeviceGetCount, "cuDeviceGetCount")
		reg(0, &a.cuDeviceGet, "cuDeviceGet")
		reg(0, &a.cuDeviceGetName, "cuDeviceGetName")
		reg(0, &a.cuDeviceTotalMem_v2, "cuDeviceTotalMem_v2")
		reg(0, &a.cuDeviceGetAttribute, "cuDeviceGetAttribute")
		reg(0, &a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain")
		reg(0, &a.cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease_v2")
		reg(0, &a.cuCtxSetCurrent, "cuCtxSetCurrent")
		reg(0, &a.cuCtxSynchronize, "cuCtxSynchronize")
		reg(0, &a.cuMemGetInfo_v2, "cuMemGetInfo_v2")
		reg(0, &a.cuMemAlloc_v2, "cuMemAlloc_v2")
		reg(0, &a.cuMemFree_v2, "cuMemFree_v2")
		reg(0, &a.cuMemAllocHost_v2, "cuMemAllocHost_v2")
		reg(0, &a.cuMemFreeHost, "cuMemFreeHost")
		reg(0, &a.cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2")
		reg(0, &a.cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2")
		reg(0, &a.cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2")
		reg(0, &a.cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2")
		reg(0, &a.cuMemcpyDtoDAsync_v2, "cuMemcpyDtoDAsync_v2")
		reg(0, &a.cuMemsetD8Async, "cuMemsetD8Async")
		reg(0, &a.cuStreamCreate, "cuStreamCreate")
		reg(0, &a.cuStreamDestroy_v2, "cuStreamDestroy_v2")
		reg(0, &a.cuStreamSynchronize, "cuStreamSynchronize")
		reg(0, &a.cuEventCreate, "cuEventCreate")
		reg(0, &a.cuEventRecord, "cuEventRecord")
		reg(0, &a.cuEventSynchronize, "cuEventSynchronize")
		reg(0, &a.cuEventElapsedTime, "cuEventElapsedTime")
		reg(0, &a.cuEventDestroy_v2, "cuEventDestroy_v2")
		reg(0, &a.cuModuleLoadData, "cuModuleLoadData")
		reg(0, &a.cuModuleUnload, "cuModuleUnload")
		reg(0, &a.cuModuleGetFunction, "cuModuleGetFunction")
		reg(0, &a.cuLaunchKernel, "cuLaunchKernel")
		reg(0, &a.cuGetErrorName, "cuGetErrorName")
		reg(0, &a.cuGetErrorString, "cuGetErrorString")
		reg(1, &a.nvrtcVersion, "nvrtcVersion")
		reg(1, &a.nvrtcCreateProgram, "nvrtcCreateProgram")
		reg(1, &a.nvrtcCompileProgram, "nvrtcCompileProgram")
		reg(1, &a.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize")
		reg(1, &a.nvrtcGetProgramLog, "nvrtcGetProgramLog")
		reg(1, &a.nvrtcGetPTXSize, "nvrtcGetPTXSize")
		reg(1, &a.nvrtcGetPTX, "nvrtcGetPTX")
		reg(1, &a.nvrtcGetCUBINSize, "nvrtcGetCUBINSize")
		reg(1, &a.nvrtcGetCUBIN, "nvrtcGetCUBIN")
		reg(1, &a.nvrtcDestroyProgram, "nvrtcDestroyProgram")
		reg(1, &a.nvrtcGetErrorString, "nvrtcGetErrorString")
		reg(2, &a.cublasCreate_v2, "cublasCreate_v2")
		reg(2, &a.cublasDestroy_v2, "cublasDestroy_v2")
		reg(2, &a.cublasSetStream_v2, "cublasSetStream_v2")
		reg(2, &a.cublasGetVersion_v2, "cublasGetVersion_v2")
		reg(2, &a.cublasSgemm_v2, "cublasSgemm_v2")
		reg(2, &a.cublasDgemm_v2, "cublasDgemm_v2")
		reg(2, &a.cublasSgemmStridedBatched, "cublasSgemmStridedBatched")
		reg(2, &a.cublasDgemmStridedBatched, "cublasDgemmStridedBatched")
		reg(2, &a.cublasCgemm_v2, "cublasCgemm_v2")
		reg(2, &a.cublasZgemm_v2, "cublasZgemm_v2")
		reg(2, &a.cublasCgemmStridedBatched, "cublasCgemmStridedBatched")
		reg(2, &a.cublasZgemmStridedBatched, "cublasZgemmStridedBatched")
		if loadErr == nil {
			loaded = a
		}
	})
	return loaded, loadErr
}

// fake is a test's view of the fake device: the libraries, loaded, with
// the primary context current on the test's (locked) OS thread.
type fake struct {
	*api
	t testing.TB
}

func libsOrSkip(t testing.TB) {
	t.Helper()
	if errors.Is(buildErr, ErrNoCompiler) {
		t.Skip(buildErr)
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
}

// setup loads the libraries and makes the primary context current; the
// test stays on its OS thread, as contexts are current per thread.
func setup(t testing.TB) *fake {
	t.Helper()
	libsOrSkip(t)
	a, err := load()
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	f := &fake{api: a, t: t}
	f.ok(a.cuInit(0), "cuInit")
	var ctx uintptr
	f.ok(a.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain")
	t.Cleanup(func() { a.cuDevicePrimaryCtxRelease_v2(0) })
	f.ok(a.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
	return f
}

func cString(p *byte) string {
	if p == nil {
		return "<nil>"
	}
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

func (f *fake) errName(r int32) string {
	var p *byte
	f.cuGetErrorName(r, &p)
	return cString(p)
}

func (f *fake) ok(r int32, what string) {
	f.t.Helper()
	if r != cudaSuccess {
		f.t.Fatalf("%s: %d (%s)", what, r, f.errName(r))
	}
}

func (f *fake) want(r, want int32, what string) {
	f.t.Helper()
	if r != want {
		f.t.Errorf("%s: got %d (%s), want %d (%s)", what, r, f.errName(r), want, f.errName(want))
	}
}

func (f *fake) alloc(n int) uint64 {
	f.t.Helper()
	var p uint64
	f.ok(f.cuMemAlloc_v2(&p, uint64(n)), "cuMemAlloc")
	f.t.Cleanup(func() { f.cuMemFree_v2(p) })
	return p
}

func upload[T any](f *fake, xs []T) uint64 {
	f.t.Helper()
	n := len(xs) * int(unsafe.Sizeof(xs[0]))
	p := f.alloc(n)
	f.ok(f.cuMemcpyHtoD_v2(p, unsafe.Pointer(&xs[0]), uint64(n)), "cuMemcpyHtoD")
	return p
}

func download[T any](f *fake, p uint64, n int) []T {
	f.t.Helper()
	xs := make([]T, n)
	f.ok(f.cuMemcpyDtoH_v2(unsafe.Pointer(&xs[0]), p, uint64(n)*uint64(unsafe.Sizeof(xs[0]))), "cuMemcpyDtoH")
	return xs
}

// compile compiles src with the fake NVRTC; it returns the result, the
// log and (on success) the CUBIN, or the PTX if there is no CUBIN.
func (f *fake) compile(src string, opts ...string) (int32, string, []byte) {
	f.t.Helper()
	var prog uintptr
	if r := f.nvrtcCreateProgram(&prog, src, "test.cu", 0, nil, nil); r != nvrtcSuccess {
		f.t.Fatalf("nvrtcCreateProgram: %d", r)
	}
	defer f.nvrtcDestroyProgram(&prog)
	var pin runtime.Pinner
	defer pin.Unpin()
	cs := make([]*byte, len(opts)+1)
	for i, o := range opts {
		b := append([]byte(o), 0)
		pin.Pin(&b[0])
		cs[i] = &b[0]
	}
	pin.Pin(&cs[0])
	r := f.nvrtcCompileProgram(prog, int32(len(opts)), unsafe.Pointer(&cs[0]))
	var n uint64
	f.nvrtcGetProgramLogSize(prog, &n)
	log := make([]byte, n)
	f.nvrtcGetProgramLog(prog, &log[0])
	if r != nvrtcSuccess {
		return r, strings.TrimRight(string(log), "\x00"), nil
	}
	var size uint64
	f.nvrtcGetCUBINSize(prog, &size)
	if size > 0 {
		img := make([]byte, size)
		f.nvrtcGetCUBIN(prog, &img[0])
		return r, string(log), img
	}
	f.nvrtcGetPTXSize(prog, &size)
	img := make([]byte, size)
	f.nvrtcGetPTX(prog, &img[0])
	return r, string(log), img
}

func (f *fake) module(src string) uintptr {
	f.t.Helper()
	r, log, img := f.compile(src, "--gpu-architecture=sm_90", "-default-device", "--use_fast_math", "-std=c++17")
	if r != nvrtcSuccess {
		f.t.Fatalf("nvrtcCompileProgram: %d (%s)\n%s", r, f.nvrtcGetErrorString(r), log)
	}
	var m uintptr
	f.ok(f.cuModuleLoadData(&m, unsafe.Pointer(&img[0])), "cuModuleLoadData")
	f.t.Cleanup(func() { f.cuModuleUnload(m) })
	return m
}

func (f *fake) function(m uintptr, name string) uintptr {
	f.t.Helper()
	var fn uintptr
	f.ok(f.cuModuleGetFunction(&fn, m, name), "cuModuleGetFunction "+name)
	return fn
}

// launch launches fn with the arguments args (each a pointer to the value
// of one kernel parameter, as in kernelParams).
func (f *fake) launch(fn uintptr, grid, block [3]uint32, shared uint32, args ...unsafe.Pointer) int32 {
	var pin runtime.Pinner
	defer pin.Unpin()
	params := make([]unsafe.Pointer, len(args)+1)
	for i, a := range args {
		pin.Pin(a)
		params[i] = a
	}
	pin.Pin(&params[0])
	return f.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, 0,
		unsafe.Pointer(&params[0]), nil)
}

func TestDeviceAndMemory(t *testing.T) {
	f := setup(t)
	var v, n int32
	f.ok(f.cuDriverGetVersion(&v), "cuDriverGetVersion")
	f.ok(f.cuDeviceGetCount(&n), "cuDeviceGetCount")
	if v != 13000 || n != 1 {
		t.Errorf("driver version %d, %d devices; want 13000, 1", v, n)
	}
	var dev int32
	f.ok(f.cuDeviceGet(&dev, 0), "cuDeviceGet")
	f.want(f.cuDeviceGet(&dev, 1), cudaErrInvalidDevice, "cuDeviceGet(1)")
	f.want(f.cuDeviceGet(nil, 0), cudaErrInvalidValue, "cuDeviceGet(NULL)")
	name := make([]byte, 64)
	f.ok(f.cuDeviceGetName(&name[0], int32(len(name)), 0), "cuDeviceGetName")
	if got := cString(&name[0]); got != "Loom Emulated GPU" {
		t.Errorf("device name %q", got)
	}
	var total uint64
	f.ok(f.cuDeviceTotalMem_v2(&total, 0), "cuDeviceTotalMem")
	if total != 8<<30 {
		t.Errorf("total memory %d, want 8 GiB", total)
	}
	for _, a := range []struct{ attr, want int32 }{
		{75, 9}, {76, 0}, // compute capability
		{16, 4},     // multiprocessors
		{1, 1024},   // max threads per block
		{8, 49152},  // shared memory per block
		{10, 32},    // warp size
		{41, 1},     // unified addressing
		{97, 49152}, // opt-in shared memory per block
	} {
		var got int32
		f.ok(f.cuDeviceGetAttribute(&got, a.attr, 0), fmt.Sprint("cuDeviceGetAttribute ", a.attr))
		if got != a.want {
			t.Errorf("attribute %d = %d, want %d", a.attr, got, a.want)
		}
	}
	f.want(f.cuDeviceGetAttribute(&v, 100000, 0), cudaErrInvalidValue, "unknown attribute")

	// Round trip host -> device -> device -> host, and a memset.
	xs := make([]float32, 1000)
	for i := range xs {
		xs[i] = float32(i) * 0.5
	}
	var free0, free1 uint64
	f.ok(f.cuMemGetInfo_v2(&free0, &total), "cuMemGetInfo")
	a := upload(f, xs)
	b := f.alloc(4000)
	f.ok(f.cuMemGetInfo_v2(&free1, &total), "cuMemGetInfo")
	if free0-free1 != 8000 || total != 8<<30 {
		t.Errorf("free memory went from %d to %d (total %d), want 8000 less", free0, free1, total)
	}
	if a%256 != 0 || b%256 != 0 {
		t.Errorf("allocations %#x, %#x not 256-byte aligned", a, b)
	}
	var s uintptr
	f.ok(f.cuStreamCreate(&s, 0), "cuStreamCreate")
	f.ok(f.cuMemcpyDtoDAsync_v2(b, a, 4000, s), "cuMemcpyDtoDAsync")
	f.ok(f.cuMemsetD8Async(b, 0, 400, s), "cuMemsetD8Async") // xs[0:100] = 0
	ys := make([]float32, 1000)
	f.ok(f.cuMemcpyDtoHAsync_v2(unsafe.Pointer(&ys[0]), b, 4000, s), "cuMemcpyDtoHAsync")
	f.ok(f.cuStreamSynchronize(s), "cuStreamSynchronize")
	for i := range ys {
		want := xs[i]
		if i < 100 {
			want = 0
		}
		if ys[i] != want {
			t.Fatalf("ys[%d] = %v, want %v", i, ys[i], want)
		}
	}
	f.ok(f.cuStreamDestroy_v2(s), "cuStreamDestroy")
	f.want(f.cuStreamDestroy_v2(s), cudaErrInvalidHandle, "cuStreamDestroy again")

	// Pinned host memory.
	var h unsafe.Pointer
	f.ok(f.cuMemAllocHost_v2(&h, 4000), "cuMemAllocHost")
	f.ok(f.cuMemcpyDtoHAsync_v2(h, a, 4000, 0), "cuMemcpyDtoHAsync to pinned memory")
	if got := unsafe.Slice((*float32)(h), 1000)[999]; got != 499.5 {
		t.Errorf("pinned copy: %v, want 499.5", got)
	}
	f.ok(f.cuMemFreeHost(h), "cuMemFreeHost")
	f.want(f.cuMemFreeHost(h), cudaErrInvalidValue, "cuMemFreeHost again")

	// Misuse.
	f.want(f.cuMemFree_v2(a+4), cudaErrInvalidValue, "cuMemFree of an inner pointer")
	f.want(f.cuMemcpyDtoH_v2(unsafe.Pointer(&ys[0]), a+4, 4000), cudaErrInvalidValue, "copy past the end")
	f.want(f.cuMemAlloc_v2(nil, 16), cudaErrInvalidValue, "cuMemAlloc(NULL)")
	f.want(f.cuMemAlloc_v2(&a, 0), cudaErrInvalidValue, "cuMemAlloc of 0 bytes")

	// Events.
	var e0, e1 uintptr
	f.ok(f.cuEventCreate(&e0, 0), "cuEventCreate")
	f.ok(f.cuEventCreate(&e1, 0), "cuEventCreate")
	var ms float32
	f.want(f.cuEventElapsedTime(&ms, e0, e1), cudaErrInvalidHandle, "elapsed time of unrecorded events")
	f.ok(f.cuEventRecord(e0, 0), "cuEventRecord")
	time.Sleep(2 * time.Millisecond)
	f.ok(f.cuEventRecord(e1, 0), "cuEventRecord")
	f.ok(f.cuEventSynchronize(e1), "cuEventSynchronize")
	f.ok(f.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime")
	if ms < 2 || ms > 1000 {
		t.Errorf("elapsed %v ms over a 2 ms sleep", ms)
	}
	f.ok(f.cuEventDestroy_v2(e0), "cuEventDestroy")
	f.ok(f.cuEventDestroy_v2(e1), "cuEventDestroy")
	f.ok(f.cuCtxSynchronize(), "cuCtxSynchronize")

	// Errors.
	var p *byte
	f.ok(f.cuGetErrorString(cudaErrOutOfMemory, &p), "cuGetErrorString")
	if cString(p) != "out of memory" || f.errName(cudaErrLaunchFailed) != "CUDA_ERROR_LAUNCH_FAILED" {
		t.Errorf("error texts %q, %q", cString(p), f.errName(cudaErrLaunchFailed))
	}
	f.want(f.cuGetErrorName(12345, &p), cudaErrInvalidValue, "cuGetErrorName of an unknown code")
}

// The device code of the kernel tests.
const kernels = `
// A grid-stride loop.
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		y[i] = a * x[i] + y[i];
}

// One sum per block: a block-stride loop, then a tree reduction in dynamic
// shared memory.
extern "C" __global__ void block_sum(const int* __restrict__ in, int n, long long* __restrict__ out) {
	extern __shared__ __align__(16) unsigned char loom_smem[];
	long long* part = reinterpret_cast<long long*>(loom_smem);
	long long s = 0;
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		s += in[(long long)blockIdx.x * n + i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
		if (threadIdx.x < stride)
			part[threadIdx.x] += part[threadIdx.x + stride];
		__syncthreads();
	}
	// Thread 0 passes the sum to the last thread.
	static __shared__ long long result;
	if (threadIdx.x == 0)
		result = part[0];
	__syncthreads();
	if (threadIdx.x == blockDim.x - 1)
		out[blockIdx.x] = result;
}

// Warp shuffles, static shared memory and atomics.
extern "C" __global__ void warp_sum(const float* in, float* block_out, unsigned* count, float* total) {
	__shared__ float warp_part[32];
	unsigned tid = threadIdx.x;
	float v = in[blockIdx.x * blockDim.x + tid];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if ((tid & 31) == 0)
		warp_part[tid >> 5] = v;
	__syncthreads();
	if (tid < 32) {
		float w = tid < blockDim.x / 32 ? warp_part[tid] : 0.0f;
		for (int o = 16; o > 0; o >>= 1)
			w += __shfl_xor_sync(0xffffffffu, w, o);
		if (tid == 0) {
			block_out[blockIdx.x] = w;
			atomicAdd(total, w);
		}
	}
	atomicAdd(count, 1u);
}

// The math library and bit casts as device code sees them.
__device__ __forceinline__ float twice(float x) { return 2.0f * x; }

extern "C" __global__ void __launch_bounds__(32) dialect(float* f, double* d, int* k) {
	if (threadIdx.x != 0 || blockIdx.x != 0)
		return;
	f[0] = expf(1.0f);
	f[1] = sqrt(2.0f); // the float overload
	f[2] = fmaxf(-1.0f, 3.0f);
	f[3] = __int_as_float(0x3f800000);
	f[4] = tanhf(0.5f);
	f[5] = max(2.0f, twice(3.5f));
	f[6] = rsqrtf(4.0f);
	f[7] = copysignf(3.0f, -0.0f);
	d[0] = exp(1.0);
	d[1] = log1p(1e-10);
	d[2] = __longlong_as_double(0x3ff8000000000000LL);
	d[3] = fma(2.0, 3.0, 1.0);
	k[0] = isnan(__int_as_float(0x7fc00000));
	k[1] = isinf(__longlong_as_double(0x7ff0000000000000LL));
	k[2] = signbit(-2.0f);
	k[3] = __float_as_int(1.0f);
	k[4] = min(3, -4);
	k[5] = __popc(0xF0u);
}

// Thread and block indices of a 3D launch, warp votes and reductions.
extern "C" __global__ void ids(unsigned* out, unsigned* votes) {
	unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
	unsigned tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
	unsigned nt = blockDim.x * blockDim.y * blockDim.z;
	out[block * nt + tid] = threadIdx.x | threadIdx.y << 4 | threadIdx.z << 8 | blockIdx.x << 12 | blockIdx.y << 16 | blockIdx.z << 20;
	if (block != 0 || tid >= 32)
		return;
	unsigned lane = tid;
	unsigned b = __ballot_sync(0xffffffffu, lane % 3 == 0);
	int all = __all_sync(0xffffffffu, lane < 32), any = __any_sync(0xffffffffu, lane == 31);
	__syncwarp();
	unsigned sum = __reduce_add_sync(0xffffffffu, lane);
	unsigned up = __shfl_up_sync(0xffffffffu, lane, 1), idx = __shfl_sync(0xffffffffu, lane, 5, 8);
	if (lane == 9) {
		votes[0] = b;
		votes[1] = all;
		votes[2] = any;
		votes[3] = sum;
		votes[4] = up;
		votes[5] = idx;
	}
}

// Every thread must reach __syncthreads: this is an error.
extern "C" __global__ void divergent(int* out) {
	if (threadIdx.x >= 10)
		return;
	__syncthreads();
	out[threadIdx.x] = 1;
}

// The body of the launch cost measurement.
extern "C" __global__ void scale(float* y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	y[i] = 2.0f * y[i] + 1.0f;
}

extern "C" __global__ void scale_sync(float* y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float v = y[i];
	__syncthreads();
	y[i] = 2.0f * v + 1.0f;
}
`

func TestKernels(t *testing.T) {
	f := setup(t)
	m := f.module(kernels)

	// saxpy over 10000 elements with 4 blocks of 128 threads, so every
	// thread makes about 20 trips: y = 2x + y with x[i] = i, y[i] = 1 gives
	// 2i + 1, exact in float32.
	const n = 10000
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), 1
	}
	dx, dy := upload(f, x), upload(f, y)
	nn, a := int32(n), float32(2)
	f.ok(f.launch(f.function(m, "saxpy"), [3]uint32{4, 1, 1}, [3]uint32{128, 1, 1}, 0,
		unsafe.Pointer(&nn), unsafe.Pointer(&a), unsafe.Pointer(&dx), unsafe.Pointer(&dy)), "launch saxpy")
	for i, v := range download[float32](f, dy, n) {
		if v != float32(2*i+1) {
			t.Fatalf("saxpy: y[%d] = %v, want %d", i, v, 2*i+1)
		}
	}

	// block_sum: block b sums in[b*N+j] = j+1+b for j < N, which is
	// N(N+1)/2 (Gauss) + b*N; with N = 1000: 500500 + 1000b.
	const N, blocks, threads = 1000, 3, 256
	in := make([]int32, N*blocks)
	for b := 0; b < blocks; b++ {
		for j := 0; j < N; j++ {
			in[b*N+j] = int32(j + 1 + b)
		}
	}
	din, dout := upload(f, in), f.alloc(8*blocks)
	nN := int32(N)
	f.ok(f.launch(f.function(m, "block_sum"), [3]uint32{blocks, 1, 1}, [3]uint32{threads, 1, 1}, threads*8,
		unsafe.Pointer(&din), unsafe.Pointer(&nN), unsafe.Pointer(&dout)), "launch block_sum")
	for b, s := range download[int64](f, dout, blocks) {
		if want := int64(N*(N+1)/2 + b*N); s != want {
			t.Errorf("block_sum: block %d = %d, want %d", b, s, want)
		}
	}

	// warp_sum: 4 blocks of 256 threads over in[i] = i: block b sums
	// 256b .. 256b+255, that is 256*256b + 255*256/2 = 65536b + 32640; the
	// total is 1023*1024/2 = 523776, and 1024 threads count themselves.
	wf := make([]float32, 1024)
	for i := range wf {
		wf[i] = float32(i)
	}
	dwin, dwout := upload(f, wf), f.alloc(16)
	dcount, dtotal := upload(f, []uint32{0}), upload(f, []float32{0})
	f.ok(f.launch(f.function(m, "warp_sum"), [3]uint32{4, 1, 1}, [3]uint32{256, 1, 1}, 0,
		unsafe.Pointer(&dwin), unsafe.Pointer(&dwout), unsafe.Pointer(&dcount), unsafe.Pointer(&dtotal)), "launch warp_sum")
	for b, s := range download[float32](f, dwout, 4) {
		if want := float32(65536*b + 32640); s != want {
			t.Errorf("warp_sum: block %d = %v, want %v", b, s, want)
		}
	}
	if c, tot := download[uint32](f, dcount, 1)[0], download[float32](f, dtotal, 1)[0]; c != 1024 || tot != 523776 {
		t.Errorf("warp_sum: count %d, total %v; want 1024, 523776", c, tot)
	}

	// dialect: the expected values are Go's math (float32 results within
	// an ulp of the correctly rounded value), or exact by definition.
	df, dd, dk := f.alloc(8*4), f.alloc(4*8), f.alloc(6*4)
	f.ok(f.launch(f.function(m, "dialect"), [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0,
		unsafe.Pointer(&df), unsafe.Pointer(&dd), unsafe.Pointer(&dk)), "launch dialect")
	fs, ds, ks := download[float32](f, df, 8), download[float64](f, dd, 4), download[int32](f, dk, 6)
	wantF := []float32{float32(math.E), float32(math.Sqrt2), 3, 1, float32(math.Tanh(0.5)), 7, 0.5, float32(math.Copysign(3, -1))}
	for i, w := range wantF {
		if d := math.Abs(float64(fs[i] - w)); d > math.Abs(float64(w))*1.2e-7 {
			t.Errorf("dialect: f[%d] = %v, want %v", i, fs[i], w)
		}
	}
	wantD := []float64{math.E, math.Log1p(1e-10), 1.5, 7}
	for i, w := range wantD {
		if math.Abs(ds[i]-w) > math.Abs(w)*2.3e-16 {
			t.Errorf("dialect: d[%d] = %v, want %v", i, ds[i], w)
		}
	}
	// isnan(NaN), isinf(+Inf), signbit(-2) are true; 1.0f is 0x3f800000;
	// min(3, -4) = -4; 0xF0 has 4 bits set.
	if want := []int32{1, 1, 1, 0x3f800000, -4, 4}; !slices.Equal(ks, want) {
		t.Errorf("dialect: k = %v, want %v", ks, want)
	}

	// ids: grid 2×3×2 of blocks 4×2×3 (24 threads: block 0 runs the warp
	// functions in a partial warp); then one block of 32 threads for the
	// votes.
	dids, dvotes := f.alloc(12*24*4), f.alloc(6*4)
	f.ok(f.launch(f.function(m, "ids"), [3]uint32{2, 3, 2}, [3]uint32{4, 2, 3}, 0,
		unsafe.Pointer(&dids), unsafe.Pointer(&dvotes)), "launch ids 3D")
	got := download[uint32](f, dids, 12*24)
	for bz := uint32(0); bz < 2; bz++ {
		for by := uint32(0); by < 3; by++ {
			for bx := uint32(0); bx < 2; bx++ {
				for tz := uint32(0); tz < 3; tz++ {
					for ty := uint32(0); ty < 2; ty++ {
						for tx := uint32(0); tx < 4; tx++ {
							i := ((bz*3+by)*2+bx)*24 + (tz*2+ty)*4 + tx
							if want := tx | ty<<4 | tz<<8 | bx<<12 | by<<16 | bz<<20; got[i] != want {
								t.Fatalf("ids: out[%d] = %#x, want %#x", i, got[i], want)
							}
						}
					}
				}
			}
		}
	}
	f.ok(f.launch(f.function(m, "ids"), [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 0,
		unsafe.Pointer(&dids), unsafe.Pointer(&dvotes)), "launch ids 1D")
	// Lanes 0, 3, ..., 30 have lane%3 == 0: bits 0x49249249; all lanes are
	// < 32; lane 31 exists; 0+1+...+31 = 496; lane 9 gets lane 8 shifted up
	// and, in segments of 8, lane 8+5 = 13.
	if v, want := download[uint32](f, dvotes, 6), []uint32{0x49249249, 1, 1, 496, 8, 13}; !slices.Equal(v, want) {
		t.Errorf("ids: votes %#x, want %#x", v, want)
	}

	// A launch whose threads do not all reach __syncthreads fails.
	dbad := f.alloc(64 * 4)
	f.want(f.launch(f.function(m, "divergent"), [3]uint32{1, 1, 1}, [3]uint32{64, 1, 1}, 0, unsafe.Pointer(&dbad)),
		cudaErrLaunchFailed, "launch of a divergent __syncthreads")

	// Launch configuration checks.
	fn := f.function(m, "scale")
	dsc := f.alloc(1024 * 4)
	for _, c := range []struct {
		grid, block [3]uint32
		shared      uint32
	}{
		{[3]uint32{0, 1, 1}, [3]uint32{32, 1, 1}, 0},
		{[3]uint32{1, 1, 1}, [3]uint32{32, 0, 1}, 0},
		{[3]uint32{1, 1, 1}, [3]uint32{1025, 1, 1}, 0},
		{[3]uint32{1, 1, 1}, [3]uint32{32, 32, 2}, 0},
		{[3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 48*1024 + 1},
	} {
		f.want(f.launch(fn, c.grid, c.block, c.shared, unsafe.Pointer(&dsc)), cudaErrInvalidValue,
			fmt.Sprintf("launch with grid %v, block %v, %d shared bytes", c.grid, c.block, c.shared))
	}
	f.want(f.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, 0, nil, nil), cudaErrInvalidValue, "launch without kernelParams")
	var missing uintptr
	f.want(f.cuModuleGetFunction(&missing, m, "nope"), cudaErrNotFound, "cuModuleGetFunction of a missing kernel")
	junk := []byte("not an image\x00")
	var m2 uintptr
	f.want(f.cuModuleLoadData(&m2, unsafe.Pointer(&junk[0])), cudaErrInvalidImage, "cuModuleLoadData of junk")
}

// TestLaunchRepeated launches two kernels (without and with a
// __syncthreads) 40 times each on one buffer: every launch must see the
// previous one's result. The time per launch is BenchmarkLaunch's (this
// was a timed test, and it failed under the race detector beside another
// race run: 32 ms per barrier launch against a bound of 20).
func TestLaunchRepeated(t *testing.T) {
	f := setup(t)
	m := f.module(kernels)
	const blocks, threads = 16, 256
	dy := upload(f, make([]float32, blocks*threads))
	for _, name := range []string{"scale", "scale_sync"} {
		fn := f.function(m, name)
		for range 40 {
			f.ok(f.launch(fn, [3]uint32{blocks, 1, 1}, [3]uint32{threads, 1, 1}, 0, unsafe.Pointer(&dy)), "launch "+name)
		}
	}
	// 80 launches of y = 2y + 1 from 0: 2^k - 1 exactly up to k = 24,
	// then 2y + 1 rounds to 2y in float32 (with or without an FMA): 2^80.
	want := float32(math.Ldexp(1, 80))
	for i, v := range download[float32](f, dy, blocks*threads) {
		if v != want {
			t.Fatalf("y[%d] = %v after 80 launches, want 2^80 = %v", i, v, want)
		}
	}
}

func TestCompile(t *testing.T) {
	f := setup(t)
	var major, minor int32
	if f.nvrtcVersion(&major, &minor); major != 13 || minor != 0 {
		t.Errorf("nvrtcVersion %d.%d, want 13.0", major, minor)
	}

	// A compilation error gives NVRTC_ERROR_COMPILATION and a log naming the
	// program and the line.
	r, log, _ := f.compile("extern \"C\" __global__ void k(float* x) {\n\tx[0] = undefined_thing;\n}\n", "-arch=sm_90")
	if r != nvrtcErrCompilation || !strings.Contains(log, "test.cu:2") || !strings.Contains(log, "undefined_thing") {
		t.Errorf("compiling a bad program: %d (%s), log:\n%s", r, f.nvrtcGetErrorString(r), log)
	}
	if strings.Contains(log, os.TempDir()) {
		t.Errorf("the log shows the temporary directory:\n%s", log)
	}

	// Options are checked.
	for _, opt := range []string{"--gpu-architecture=sm_9x", "-arch=sm_50", "--no-such-option", "-std=c++98", "-ftz=maybe", "plain"} {
		if r, log, _ := f.compile("", opt); r != nvrtcErrInvalidOption || log == "" {
			t.Errorf("option %q: %d, log %q", opt, r, log)
		}
	}

	// Without a real architecture there is no CUBIN, only PTX, which loads
	// for a virtual architecture up to the device's; a CUBIN for another
	// major version does not load.
	src := "extern \"C\" __global__ void k(int* x) { x[threadIdx.x] = threadIdx.x; }\n"
	for _, c := range []struct {
		arch  string
		cubin bool
		load  int32
	}{
		{"", false, cudaSuccess},
		{"-arch=compute_90", false, cudaSuccess},
		{"-arch=compute_100", false, 218}, // CUDA_ERROR_INVALID_PTX
		{"--gpu-architecture=sm_90", true, cudaSuccess},
		{"--gpu-architecture=sm_90a", true, cudaSuccess},
		{"-arch=sm_80", true, cudaErrNoBinaryForGPU},
	} {
		var opts []string
		if c.arch != "" {
			opts = append(opts, c.arch)
		}
		var prog uintptr
		f.nvrtcCreateProgram(&prog, src, "", 0, nil, nil)
		var pin runtime.Pinner
		cs := make([]*byte, len(opts)+1)
		for i, o := range opts {
			b := append([]byte(o), 0)
			pin.Pin(&b[0])
			cs[i] = &b[0]
		}
		pin.Pin(&cs[0])
		if r := f.nvrtcCompileProgram(prog, int32(len(opts)), unsafe.Pointer(&cs[0])); r != nvrtcSuccess {
			t.Fatalf("%s: %d", c.arch, r)
		}
		pin.Unpin()
		var cubin, ptx uint64
		f.nvrtcGetCUBINSize(prog, &cubin)
		f.nvrtcGetPTXSize(prog, &ptx)
		if (cubin > 0) != c.cubin || ptx == 0 || (c.cubin && ptx != cubin+1) {
			t.Errorf("%s: CUBIN size %d, PTX size %d", c.arch, cubin, ptx)
		}
		img := make([]byte, ptx)
		f.nvrtcGetPTX(prog, &img[0])
		f.nvrtcDestroyProgram(&prog)
		var m uintptr
		f.want(f.cuModuleLoadData(&m, unsafe.Pointer(&img[0])), c.load, "cuModuleLoadData "+c.arch)
		if c.load == cudaSuccess {
			f.ok(f.cuModuleUnload(m), "cuModuleUnload")
		}
	}
}

// TestHeaders compiles a program with headers given to nvrtcCreateProgram,
// extern shared memory declared at file scope in a header, a kernel in an
// extern "C" block, 2D blocks and __syncthreads_count.
func TestHeaders(t *testing.T) {
	f := setup(t)
	header := "#pragma once\nextern __shared__ float tile[];\n__device__ inline int linear() { return threadIdx.y * blockDim.x + threadIdx.x; }\n"
	src := `#include "sub/common.h"
extern "C" {
__global__ void transpose(const float* in, float* out, int* counts) {
	int n = blockDim.x; // square blocks
	int gx = blockIdx.x * n + threadIdx.x, gy = blockIdx.y * n + threadIdx.y, w = gridDim.x * n;
	tile[threadIdx.y * (n + 1) + threadIdx.x] = in[gy * w + gx];
	int c = __syncthreads_count(threadIdx.x == threadIdx.y);
	int ox = blockIdx.y * n + threadIdx.x, oy = blockIdx.x * n + threadIdx.y;
	out[oy * w + ox] = tile[threadIdx.x * (n + 1) + threadIdx.y];
	if (linear() == 0)
		counts[blockIdx.y * gridDim.x + blockIdx.x] = c;
}
}
`
	var prog uintptr
	hb, nb := []byte(header+"\x00"), []byte("sub/common.h\x00")
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(&hb[0])
	pin.Pin(&nb[0])
	hs, ns := []*byte{&hb[0]}, []*byte{&nb[0]}
	pin.Pin(&hs[0])
	pin.Pin(&ns[0])
	if r := f.nvrtcCreateProgram(&prog, src, "transpose.cu", 1, unsafe.Pointer(&hs[0]), unsafe.Pointer(&ns[0])); r != nvrtcSuccess {
		t.Fatal(r)
	}
	defer f.nvrtcDestroyProgram(&prog)
	arch := []byte("-arch=sm_90\x00")
	pin.Pin(&arch[0])
	opts := []*byte{&arch[0]}
	pin.Pin(&opts[0])
	if r := f.nvrtcCompileProgram(prog, 1, unsafe.Pointer(&opts[0])); r != nvrtcSuccess {
		var n uint64
		f.nvrtcGetProgramLogSize(prog, &n)
		log := make([]byte, n)
		f.nvrtcGetProgramLog(prog, &log[0])
		t.Fatalf("%d\n%s", r, log)
	}
	var size uint64
	f.nvrtcGetCUBINSize(prog, &size)
	img := make([]byte, size)
	f.nvrtcGetCUBIN(prog, &img[0])
	var m uintptr
	f.ok(f.cuModuleLoadData(&m, unsafe.Pointer(&img[0])), "cuModuleLoadData")
	defer f.cuModuleUnload(m)

	// A 48×32 matrix (w = 3 blocks of 16 across, 2 down) transposed by 16×16
	// blocks; each block counts its 16 diagonal threads.
	const bs, gw, gh = 16, 3, 2
	const w, h = gw * bs, gh * bs
	in := make([]float32, w*h)
	for i := range in {
		in[i] = float32(i)
	}
	din, dout, dc := upload(f, in), f.alloc(4*w*w), f.alloc(4*gw*gh)
	f.ok(f.launch(f.function(m, "transpose"), [3]uint32{gw, gh, 1}, [3]uint32{bs, bs, 1}, bs*(bs+1)*4,
		unsafe.Pointer(&din), unsafe.Pointer(&dout), unsafe.Pointer(&dc)), "launch transpose")
	// The input is h×w (row stride w); the kernel writes its transpose,
	// w×h, also with row stride w: out[r][c] = in[c][r].
	out := download[float32](f, dout, w*w)
	for r := 0; r < w; r++ {
		for c := 0; c < h; c++ {
			if got := out[r*w+c]; got != in[c*w+r] {
				t.Fatalf("out[%d][%d] = %v, want %v", r, c, got, in[c*w+r])
			}
		}
	}
	for i, c := range download[int32](f, dc, gw*gh) {
		if c != bs {
			t.Errorf("block %d counted %d diagonal threads, want %d", i, c, bs)
		}
	}
}

// TestConcurrent compiles and launches from several OS threads at once,
// each with the primary context current.
func TestConcurrent(t *testing.T) {
	f := setup(t)
	var ctx uintptr
	f.ok(f.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain")
	defer f.cuDevicePrimaryCtxRelease_v2(0)
	const workers, n = 4, 5000
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			errs <- func() error {
				if r := f.cuCtxSetCurrent(ctx); r != cudaSuccess {
					return fmt.Errorf("cuCtxSetCurrent: %d", r)
				}
				// Each worker compiles its own program (in parallel).
				src := fmt.Sprintf("extern \"C\" __global__ void add%d(int n, float* y) {\n"+
					"\tfor (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += %d.0f;\n}\n", w, w)
				var prog uintptr
				if r := f.nvrtcCreateProgram(&prog, src, "add.cu", 0, nil, nil); r != nvrtcSuccess {
					return fmt.Errorf("nvrtcCreateProgram: %d", r)
				}
				defer f.nvrtcDestroyProgram(&prog)
				if r := f.nvrtcCompileProgram(prog, 0, nil); r != nvrtcSuccess {
					return fmt.Errorf("nvrtcCompileProgram: %d", r)
				}
				var size uint64
				f.nvrtcGetPTXSize(prog, &size)
				img := make([]byte, size)
				f.nvrtcGetPTX(prog, &img[0])
				var m, fn uintptr
				if r := f.cuModuleLoadData(&m, unsafe.Pointer(&img[0])); r != cudaSuccess {
					return fmt.Errorf("cuModuleLoadData: %d", r)
				}
				defer f.cuModuleUnload(m)
				if r := f.cuModuleGetFunction(&fn, m, fmt.Sprintf("add%d", w)); r != cudaSuccess {
					return fmt.Errorf("cuModuleGetFunction: %d", r)
				}
				var y uint64
				if r := f.cuMemAlloc_v2(&y, 4*n); r != cudaSuccess {
					return fmt.Errorf("cuMemAlloc: %d", r)
				}
				defer f.cuMemFree_v2(y)
				f.cuMemsetD8Async(y, 0, 4*n, 0)
				nn := int32(n)
				for range 20 {
					if r := f.launch(fn, [3]uint32{3, 1, 1}, [3]uint32{64, 1, 1}, 0, unsafe.Pointer(&nn), unsafe.Pointer(&y)); r != cudaSuccess {
						return fmt.Errorf("launch: %d", r)
					}
				}
				// 20 launches add 20w to zeros.
				out := make([]float32, n)
				f.cuMemcpyDtoH_v2(unsafe.Pointer(&out[0]), y, 4*n)
				for i, v := range out {
					if v != float32(20*w) {
						return fmt.Errorf("worker %d: y[%d] = %v, want %d", w, i, v, 20*w)
					}
				}
				return nil
			}()
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestSourceForms covers declarations the fake NVRTC must recognise: a
// kernel declared extern "C" and defined later, shared memory declared
// through a macro and as `__shared__ static`, a kernel made by a macro
// (compiled, but not exported: the fake cannot see its name), comments
// and strings that mention __global__.
func TestSourceForms(t *testing.T) {
	f := setup(t)
	m := f.module(`
#define DECLARE_SMEM extern __shared__ float macro_smem[]
#define KERNEL(name) extern "C" __global__ void name(float* x) { x[threadIdx.x] = 1.0f; }
KERNEL(from_macro)
/* extern "C" __global__ void in_a_comment(float* x) { } */
static const char* text = "extern \"C\" __global__ void in_a_string(float* x) { }";
extern "C" __global__ void declared_first(float* x);
__global__ void declared_first(float* x) {
	DECLARE_SMEM;
	__shared__ static float tmp[32];
	tmp[threadIdx.x] = threadIdx.x;
	macro_smem[threadIdx.x] = 2.0f * threadIdx.x;
	__syncthreads();
	x[threadIdx.x] = tmp[31 - threadIdx.x] + macro_smem[31 - threadIdx.x] + (text[0] == 'e' ? 0.0f : 1000.0f);
}
`)
	dx := f.alloc(32 * 4)
	f.ok(f.launch(f.function(m, "declared_first"), [3]uint32{1, 1, 1}, [3]uint32{32, 1, 1}, 32*4, unsafe.Pointer(&dx)),
		"launch declared_first")
	// Thread i reads what thread 31-i wrote: (31-i) + 2(31-i).
	for i, v := range download[float32](f, dx, 32) {
		if want := float32(3 * (31 - i)); v != want {
			t.Errorf("x[%d] = %v, want %v", i, v, want)
		}
	}
	var fn uintptr
	for _, name := range []string{"from_macro", "in_a_comment", "in_a_string"} {
		f.want(f.cuModuleGetFunction(&fn, m, name), cudaErrNotFound, "cuModuleGetFunction "+name)
	}
}

func TestCublas(t *testing.T) {
	f := setup(t)
	var h uintptr
	if r := f.cublasCreate_v2(&h); r != cublasSuccess {
		t.Fatal(r)
	}
	defer f.cublasDestroy_v2(h)
	var ver int32
	if f.cublasGetVersion_v2(h, &ver); ver != 130000 {
		t.Errorf("cublasGetVersion %d", ver)
	}
	if r := f.cublasSetStream_v2(h, 0); r != cublasSuccess {
		t.Errorf("cublasSetStream: %d", r)
	}

	// Column-major matrices: A stored k×m (used transposed, lda = k+1
	// with a padding row), B k×n, C m×n with ldc = m.
	const m, n, k = 3, 4, 5
	const lda, ldb, ldc = k + 1, k, m
	a := make([]float32, lda*m)
	b := make([]float32, ldb*n)
	c := make([]float32, ldc*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) - 1.5
	}
	for i := range c {
		c[i] = float32(i)
	}
	// The naive product, C = alpha Aᵀ B + beta C, by definition.
	alpha, beta := float32(2), float32(0.5)
	want := make([]float32, len(c))
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for l := 0; l < k; l++ {
				s += float64(a[l+i*lda]) * float64(b[l+j*ldb])
			}
			want[i+j*ldc] = float32(float64(alpha)*s + float64(beta)*float64(c[i+j*ldc]))
		}
	}
	da, db, dc := upload(f, a), upload(f, b), upload(f, c)
	if r := f.cublasSgemm_v2(h, cublasOpT, cublasOpN, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc); r != cublasSuccess {
		t.Fatalf("cublasSgemm: %d", r)
	}
	if got := download[float32](f, dc, len(c)); !slices.Equal(got, want) {
		t.Errorf("cublasSgemm(T, N):\n got %v\nwant %v", got, want)
	}

	// Dgemm, B transposed (stored n×k), beta = 0 with NaN in C (not read),
	// as a batch of 2 with strides, and as single calls.
	const batch = 2
	ad := make([]float64, m*k*batch) // m×k, lda = m
	bd := make([]float64, n*k*batch) // n×k, ldb = n
	for i := range ad {
		ad[i] = float64(i%11) * 0.25
	}
	for i := range bd {
		bd[i] = float64(i%13) - 6
	}
	cd := make([]float64, m*n*batch)
	for i := range cd {
		cd[i] = math.NaN()
	}
	wantD := make([]float64, len(cd))
	alphaD, betaD := 1.5, 0.0
	for q := 0; q < batch; q++ {
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				var s float64
				for l := 0; l < k; l++ {
					s += ad[q*m*k+i+l*m] * bd[q*n*k+j+l*n]
				}
				wantD[q*m*n+i+j*m] = alphaD * s
			}
		}
	}
	dad, dbd := upload(f, ad), upload(f, bd)
	dcd := upload(f, cd)
	if r := f.cublasDgemmStridedBatched(h, cublasOpN, cublasOpT, m, n, k, &alphaD, dad, m, m*k, dbd, n, n*k, &betaD, dcd, m, m*n, batch); r != cublasSuccess {
		t.Fatalf("cublasDgemmStridedBatched: %d", r)
	}
	if got := download[float64](f, dcd, len(cd)); !slices.Equal(got, wantD) {
		t.Errorf("cublasDgemmStridedBatched(N, T):\n got %v\nwant %v", got, wantD)
	}
	dcd2 := upload(f, cd)
	for q := uint64(0); q < batch; q++ {
		if r := f.cublasDgemm_v2(h, cublasOpN, cublasOpT, m, n, k, &alphaD, dad+q*m*k*8, m, dbd+q*n*k*8, n, &betaD, dcd2+q*m*n*8, m); r != cublasSuccess {
			t.Fatalf("cublasDgemm: %d", r)
		}
	}
	if got := download[float64](f, dcd2, len(cd)); !slices.Equal(got, wantD) {
		t.Errorf("cublasDgemm(N, T):\n got %v\nwant %v", got, wantD)
	}

	// Sgemm batched against the single call above (one batch, stride 0).
	dc2 := upload(f, c)
	if r := f.cublasSgemmStridedBatched(h, cublasOpT, cublasOpN, m, n, k, &alpha, da, lda, 0, db, ldb, 0, &beta, dc2, ldc, 0, 1); r != cublasSuccess {
		t.Fatalf("cublasSgemmStridedBatched: %d", r)
	}
	if got := download[float32](f, dc2, len(c)); !slices.Equal(got, want) {
		t.Errorf("cublasSgemmStridedBatched(T, N):\n got %v\nwant %v", got, want)
	}

	// Argument checks.
	for _, c := range []struct {
		ta, tb, m, n, k, lda, ldb, ldc int32
	}{
		{cublasOpN, cublasOpN, -1, n, k, m, k, m},
		{cublasOpN, cublasOpN, m, n, -1, m, k, m},
		{cublasOpN, cublasOpN, m, n, k, m - 1, k, m}, // lda < m
		{cublasOpT, cublasOpN, m, n, k, k - 1, k, m}, // lda < k
		{cublasOpN, cublasOpT, m, n, k, m, n - 1, m}, // ldb < n
		{cublasOpN, cublasOpN, m, n, k, m, k, m - 1}, // ldc < m
		{cublasOpN, 7, m, n, k, m, k, m},             // bad operation
	} {
		if r := f.cublasSgemm_v2(h, c.ta, c.tb, c.m, c.n, c.k, &alpha, da, c.lda, db, c.ldb, &beta, dc, c.ldc); r != cublasErrInvalidValue {
			t.Errorf("cublasSgemm%v: %d, want %d", c, r, cublasErrInvalidValue)
		}
	}
	if r := f.cublasSgemm_v2(h+8, cublasOpN, cublasOpN, m, n, k, &alpha, da, m, db, k, &beta, dc, m); r != cublasErrNotInitialized {
		t.Errorf("cublasSgemm with a bad handle: %d", r)
	}
}

// TestCublasComplex: cublasCgemm and cublasZgemm (single and strided
// batched) against the definition C = alpha·op(A)·op(B) + beta·C computed
// here in complex128, with op N, T and C (the conjugate transpose), a
// complex alpha and beta, and padded leading dimensions. The entries are
// small integers and halves, so every product and sum is exact in
// float32 and the results must be equal, not close.
func TestCublasComplex(t *testing.T) {
	f := setup(t)
	var h uintptr
	if r := f.cublasCreate_v2(&h); r != cublasSuccess {
		t.Fatal(r)
	}
	defer f.cublasDestroy_v2(h)
	const m, n, k, batch = 3, 2, 4, 2
	const cublasOpC = 2
	alpha, beta := complex(1.5, -0.5), complex(0.5, 2)
	val := func(i, salt int) complex128 { return complex(float64((i*7+salt)%9-4), float64((i*5+salt)%7-3)/2) }
	for _, c := range []struct{ ta, tb int32 }{{cublasOpN, cublasOpN}, {cublasOpT, cublasOpC}, {cublasOpC, cublasOpN}} {
		// op(A) is m×k: A is stored m×k (N) or k×m (T, C), with one
		// padding row; likewise B.
		ar, ac := m, k
		if c.ta != cublasOpN {
			ar, ac = k, m
		}
		br, bc := k, n
		if c.tb != cublasOpN {
			br, bc = n, k
		}
		lda, ldb, ldc := ar+1, br+1, m+1
		sa, sb, sc := lda*ac, ldb*bc, ldc*n
		a, b, cm := make([]complex128, sa*batch), make([]complex128, sb*batch), make([]complex128, sc*batch)
		for i := range a {
			a[i] = val(i, 1)
		}
		for i := range b {
			b[i] = val(i, 2)
		}
		for i := range cm {
			cm[i] = val(i, 3)
		}
		opX := func(x []complex128, ld int, op int32, r, col int) complex128 {
			if op == cublasOpN {
				return x[r+col*ld]
			}
			v := x[col+r*ld]
			if op == cublasOpC {
				v = complex(real(v), -imag(v))
			}
			return v
		}
		want := append([]complex128(nil), cm...)
		for q := range batch {
			for j := range n {
				for i := range m {
					var s complex128
					for l := range k {
						s += opX(a[q*sa:], lda, c.ta, i, l) * opX(b[q*sb:], ldb, c.tb, l, j)
					}
					want[q*sc+i+j*ldc] = alpha*s + beta*cm[q*sc+i+j*ldc]
				}
			}
		}
		name := fmt.Sprintf("(%d, %d)", c.ta, c.tb)

		da, db := upload(f, a), upload(f, b)
		dz := upload(f, cm)
		if r := f.cublasZgemmStridedBatched(h, c.ta, c.tb, m, n, k, &alpha, da, int32(lda), int64(sa), db, int32(ldb), int64(sb), &beta, dz, int32(ldc), int64(sc), batch); r != cublasSuccess {
			t.Fatalf("cublasZgemmStridedBatched%s: %d", name, r)
		}
		if got := download[complex128](f, dz, len(cm)); !slices.Equal(got, want) {
			t.Errorf("cublasZgemmStridedBatched%s:\n got %v\nwant %v", name, got, want)
		}
		dz1 := upload(f, cm[:sc])
		if r := f.cublasZgemm_v2(h, c.ta, c.tb, m, n, k, &alpha, da, int32(lda), db, int32(ldb), &beta, dz1, int32(ldc)); r != cublasSuccess {
			t.Fatalf("cublasZgemm%s: %d", name, r)
		}
		if got := download[complex128](f, dz1, sc); !slices.Equal(got, want[:sc]) {
			t.Errorf("cublasZgemm%s:\n got %v\nwant %v", name, got, want[:sc])
		}

		c64 := func(x []complex128) []complex64 {
			out := make([]complex64, len(x))
			for i, v := range x {
				out[i] = complex64(v)
			}
			return out
		}
		alpha32, beta32 := complex64(alpha), complex64(beta)
		ca, cb := upload(f, c64(a)), upload(f, c64(b))
		dcs := upload(f, c64(cm))
		if r := f.cublasCgemmStridedBatched(h, c.ta, c.tb, m, n, k, &alpha32, ca, int32(lda), int64(sa), cb, int32(ldb), int64(sb), &beta32, dcs, int32(ldc), int64(sc), batch); r != cublasSuccess {
			t.Fatalf("cublasCgemmStridedBatched%s: %d", name, r)
		}
		if got := download[complex64](f, dcs, len(cm)); !slices.Equal(got, c64(want)) {
			t.Errorf("cublasCgemmStridedBatched%s:\n got %v\nwant %v", name, got, c64(want))
		}
		dc1 := upload(f, c64(cm[:sc]))
		if r := f.cublasCgemm_v2(h, c.ta, c.tb, m, n, k, &alpha32, ca, int32(lda), cb, int32(ldb), &beta32, dc1, int32(ldc)); r != cublasSuccess {
			t.Fatalf("cublasCgemm%s: %d", name, r)
		}
		if got := download[complex64](f, dc1, sc); !slices.Equal(got, c64(want[:sc])) {
			t.Errorf("cublasCgemm%s:\n got %v\nwant %v", name, got, c64(want[:sc]))
		}
	}
	// The argument checks are the real ones': lda < m is refused.
	var one complex64 = 1
	d := upload(f, make([]complex64, 16))
	if r := f.cublasCgemm_v2(h, cublasOpN, cublasOpN, 3, 2, 2, &one, d, 2, d, 2, &one, d, 3); r != cublasErrInvalidValue {
		t.Errorf("cublasCgemm with lda < m: %d, want %d", r, cublasErrInvalidValue)
	}
}

// TestFreshProcess runs, in a new process, the checks that need a driver
// nobody initialised and the out-of-memory limit.
func TestFreshProcess(t *testing.T) {
	if os.Getenv("CUFAKE_CHILD") == "fresh" {
		freshProcess(t)
		return
	}
	libsOrSkip(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFreshProcess$", "-test.v")
	cmd.Env = append(os.Environ(), libs.Env()...)
	cmd.Env = append(cmd.Env, "CUFAKE_CHILD=fresh", "LOOM_FAKE_CUDA_MEMLIMIT=1048576")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFreshProcess") {
		t.Fatalf("%v\n%s", err, out)
	}
}

func freshProcess(t *testing.T) {
	a, err := load()
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f := &fake{api: a, t: t}
	var n int32
	var p uint64
	var ctx uintptr
	f.want(f.cuDeviceGetCount(&n), cudaErrNotInitialized, "cuDeviceGetCount before cuInit")
	f.want(f.cuDevicePrimaryCtxRetain(&ctx, 0), cudaErrNotInitialized, "cuDevicePrimaryCtxRetain before cuInit")
	f.ok(f.cuInit(0), "cuInit")
	f.want(f.cuMemAlloc_v2(&p, 16), cudaErrInvalidContext, "cuMemAlloc without a current context")
	f.want(f.cuDevicePrimaryCtxRetain(&ctx, 1), cudaErrInvalidDevice, "cuDevicePrimaryCtxRetain(1)")
	f.ok(f.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain")
	f.ok(f.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

	// Contexts are current per OS thread.
	done := make(chan int32)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var q uint64
		done <- f.cuMemAlloc_v2(&q, 16)
	}()
	f.want(<-done, cudaErrInvalidContext, "cuMemAlloc on another thread")

	// LOOM_FAKE_CUDA_MEMLIMIT is 1 MiB.
	var free, total uint64
	f.ok(f.cuMemGetInfo_v2(&free, &total), "cuMemGetInfo")
	if free != 1<<20 || total != 1<<20 {
		t.Errorf("cuMemGetInfo: %d free of %d, want 1 MiB of 1 MiB", free, total)
	}
	var a1, a2 uint64
	f.ok(f.cuMemAlloc_v2(&a1, 600<<10), "cuMemAlloc 600 KiB")
	f.want(f.cuMemAlloc_v2(&a2, 600<<10), cudaErrOutOfMemory, "cuMemAlloc 600 KiB more")
	f.ok(f.cuMemAlloc_v2(&a2, 400<<10), "cuMemAlloc 400 KiB")
	f.ok(f.cuMemFree_v2(a1), "cuMemFree")
	f.want(f.cuMemFree_v2(a1), cudaErrInvalidValue, "cuMemFree again")
	f.ok(f.cuMemAlloc_v2(&a1, 600<<10), "cuMemAlloc 600 KiB after a free")

	// The last release of the primary context frees everything.
	f.ok(f.cuDevicePrimaryCtxRelease_v2(0), "cuDevicePrimaryCtxRelease")
	f.want(f.cuMemFree_v2(a1), cudaErrInvalidContext, "cuMemFree after the context's release")
	f.ok(f.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain")
	f.want(f.cuMemFree_v2(a2), cudaErrInvalidValue, "cuMemFree of memory of the released context")
	f.ok(f.cuMemGetInfo_v2(&free, &total), "cuMemGetInfo")
	if free != total {
		t.Errorf("after the release: %d free of %d", free, total)
	}
}

// TestExports checks that the libraries export exactly the API.
func TestExports(t *testing.T) {
	libsOrSkip(t)
	for _, c := range []struct {
		path string
		want string
	}{
		{libs.CUDA, "cuInit cuDriverGetVersion cuDeviceGetCount cuDeviceGet cuDeviceGetName cuDeviceTotalMem_v2 cuDeviceGetAttribute cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRelease_v2 cuCtxSetCurrent cuCtxSynchronize cuMemGetInfo_v2 cuMemAlloc_v2 cuMemFree_v2 cuMemAllocHost_v2 cuMemFreeHost cuMemcpyHtoD_v2 cuMemcpyDtoH_v2 cuMemcpyHtoDAsync_v2 cuMemcpyDtoHAsync_v2 cuMemcpyDtoDAsync_v2 cuMemsetD8Async cuStreamCreate cuStreamDestroy_v2 cuStreamSynchronize cuEventCreate cuEventRecord cuEventSynchronize cuEventElapsedTime cuEventDestroy_v2 cuModuleLoadData cuModuleUnload cuModuleGetFunction cuLaunchKernel cuGetErrorName cuGetErrorString"},
		{libs.NVRTC, "nvrtcVersion nvrtcCreateProgram nvrtcCompileProgram nvrtcGetProgramLogSize nvrtcGetProgramLog nvrtcGetPTXSize nvrtcGetPTX nvrtcGetCUBINSize nvrtcGetCUBIN nvrtcDestroyProgram nvrtcGetErrorString"},
		{libs.CUBLAS, "cublasCreate_v2 cublasDestroy_v2 cublasSetStream_v2 cublasGetVersion_v2 cublasSgemm_v2 cublasDgemm_v2 cublasSgemmStridedBatched cublasDgemmStridedBatched cublasCgemm_v2 cublasZgemm_v2 cublasCgemmStridedBatched cublasZgemmStridedBatched" + solveBLASExports},
		{libs.CUFFT, cufftExports},
		{libs.CUSOLVER, cusolverExports},
		{libs.NCCL, "ncclGetVersion ncclGetUniqueId ncclCommInitRank ncclCommDestroy ncclCommAbort ncclCommGetAsyncError ncclGetErrorString ncclAllReduce ncclAllGather ncclReduceScatter ncclBroadcast ncclReduce"},
	} {
		ef, err := elf.Open(c.path)
		if err != nil {
			t.Fatal(err)
		}
		syms, err := ef.DynamicSymbols()
		ef.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) == elf.STB_GLOBAL {
				got = append(got, s.Name)
			}
		}
		want := strings.Fields(c.want)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s exports\n%v\nwant\n%v", filepath.Base(c.path), got, want)
		}
	}
}

func TestBuildReuses(t *testing.T) {
	libsOrSkip(t)
	// reused, not rebuilt: no library is written again (this compared
	// the call's time with a second, which a loaded machine can pass)
	stamps := func() []time.Time {
		var ts []time.Time
		for _, p := range []string{libs.CUDA, libs.NVRTC, libs.CUBLAS, libs.CUFFT, libs.CUSOLVER, libs.NCCL} {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, fi.ModTime())
		}
		return ts
	}
	before := stamps()
	again, err := Build(filepath.Dir(libs.CUDA))
	if err != nil || again != libs {
		t.Fatalf("Build again: %v, %v", again, err)
	}
	if after := stamps(); !slices.EqualFunc(before, after, time.Time.Equal) {
		t.Errorf("Build of built libraries wrote them again: modification times %v, then %v", before, after)
	}
	if env := libs.Env(); len(env) != 6 || env[0] != "LOOM_LIBCUDA="+libs.CUDA {
		t.Errorf("Env() = %v", env)
	}
}

// BenchmarkLaunch measures a launch of 16 blocks of 256 threads with a
// short body, without and with a __syncthreads.
func BenchmarkLaunch(b *testing.B) {
	for _, name := range []string{"scale", "scale_sync"} {
		b.Run(name, func(b *testing.B) {
			f := setup(b)
			fn := f.function(f.module(kernels), name)
			dy := f.alloc(16 * 256 * 4)
			f.ok(f.cuMemsetD8Async(dy, 0, 16*256*4, 0), "cuMemsetD8Async")
			for b.Loop() {
				f.ok(f.launch(fn, [3]uint32{16, 1, 1}, [3]uint32{256, 1, 1}, 0, unsafe.Pointer(&dy)), "launch")
			}
		})
	}
}

// TestStacksTrimmed: a launch of 256 threads with a barrier needs 256
// fiber stacks, two memory maps each (stack and guard page); after the
// launch the emulator keeps at most 16 idle ones, so a module adds at most
// about 32 maps to the process however many threads its kernels used.
// Without the trim, every module kept 512 maps, and the conformance suite
// (thousands of modules in one process) reached Linux's limit
// (vm.max_map_count, 65530): "cannot map a fiber stack".
func TestStacksTrimmed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts /proc/self/maps")
	}
	f := setup(t)
	maps := func() int {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n"))
	}
	dy := upload(f, make([]float32, 256))
	m := f.module(kernels)
	fn := f.function(m, "scale_sync")
	before := maps()
	f.ok(f.launch(fn, [3]uint32{1, 1, 1}, [3]uint32{256, 1, 1}, 0, unsafe.Pointer(&dy)), "launch scale_sync")
	if grew := maps() - before; grew > 40 {
		t.Errorf("a launch of 256 threads left %d more memory maps; want at most 40 (16 idle stacks kept)", grew)
	}
	// y = 2y + 1 from 0 once: every element is 1.
	for i, v := range download[float32](f, dy, 256) {
		if v != 1 {
			t.Fatalf("y[%d] = %v, want 1", i, v)
		}
	}
}

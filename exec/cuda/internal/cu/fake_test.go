//go:build linux

package cu

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/loomgraph/loom/exec/cuda/internal/cufake"
)

// The tests below run against the fake libcuda, libnvrtc and libcublas of
// package cufake, which run kernels on the host (a DevicePtr is a host
// address). They skip when there is no C/C++ compiler to build them. With
// LOOM_CU_TEST_REAL=1 they run against the real libraries instead, found by
// the ordinary search (for a GPU machine: build the test binary with
// CGO_ENABLED=0 go test -c and run it there).

var (
	fakeOnce sync.Once
	fakeLibs cufake.Libs
	fakeErr  error
	fakeDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeDir != "" {
		os.RemoveAll(fakeDir)
	}
	os.Exit(code)
}

// env is the loaded (fake) libraries with the primary context of device 0
// current on the test's (locked) thread.
type env struct {
	d   *Driver
	n   *NVRTC
	b   *CUBLAS
	dev Device
}

// loadFakes builds the fake libraries once and points the environment
// overrides at them, skipping the test when there is no compiler.
func loadFakes(t *testing.T) {
	t.Helper()
	fakeOnce.Do(func() {
		fakeDir, fakeErr = os.MkdirTemp("", "loom-cufake-")
		if fakeErr == nil {
			fakeLibs, fakeErr = cufake.Build(fakeDir)
		}
	})
	if errors.Is(fakeErr, cufake.ErrNoCompiler) {
		t.Skip("cannot build the fake CUDA libraries:", fakeErr)
	}
	if fakeErr != nil {
		t.Fatal("building the fake CUDA libraries:", fakeErr)
	}
	// Load through the environment overrides, as a user would.
	t.Setenv("LOOM_LIBCUDA", fakeLibs.CUDA)
	t.Setenv("LOOM_LIBNVRTC", fakeLibs.NVRTC)
	t.Setenv("LOOM_LIBCUBLAS", fakeLibs.CUBLAS)
}

func setup(t *testing.T) *env {
	t.Helper()
	real := os.Getenv("LOOM_CU_TEST_REAL") != ""
	if !real {
		loadFakes(t)
	}
	e := &env{}
	var err error
	if e.d, err = LoadDriver(); err != nil {
		t.Fatal(err)
	}
	if e.n, err = LoadNVRTC(); err != nil {
		t.Fatal(err)
	}
	if e.b, err = LoadCUBLAS(); err != nil {
		t.Fatal(err)
	}
	if real {
		t.Logf("real libraries: %s, %s, %s", e.d.Path(), e.n.Path(), e.b.Path())
	} else {
		for _, c := range []struct{ got, want string }{{e.d.Path(), fakeLibs.CUDA}, {e.n.Path(), fakeLibs.NVRTC}, {e.b.Path(), fakeLibs.CUBLAS}} {
			if c.got != c.want {
				t.Errorf("Path() = %q, want %q", c.got, c.want)
			}
		}
	}
	must(t, e.d.Init())
	if e.dev, err = e.d.DeviceGet(0); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	ctx, err := e.d.PrimaryCtxRetain(e.dev)
	if err != nil {
		t.Fatal(err)
	}
	must(t, e.d.CtxSetCurrent(ctx))
	t.Cleanup(func() {
		must(t, e.d.CtxSynchronize())
		must(t, e.d.PrimaryCtxRelease(e.dev))
		runtime.UnlockOSThread()
	})
	return e
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// upload copies a slice to new device memory, freed at the end of the test.
func upload[T any](t *testing.T, d *Driver, s []T) DevicePtr {
	t.Helper()
	bytes := int64(len(s)) * int64(unsafe.Sizeof(s[0]))
	p, err := d.MemAlloc(bytes)
	must(t, err)
	t.Cleanup(func() { must(t, d.MemFree(p)) })
	must(t, d.MemcpyHtoD(p, unsafe.Pointer(&s[0]), bytes))
	return p
}

// download copies len(s) elements from p into s.
func download[T any](t *testing.T, d *Driver, s []T, p DevicePtr) {
	t.Helper()
	must(t, d.MemcpyDtoH(unsafe.Pointer(&s[0]), p, int64(len(s))*int64(unsafe.Sizeof(s[0]))))
}

func TestDriverDevice(t *testing.T) {
	e := setup(t)
	v, err := e.d.Version()
	must(t, err)
	if v < 1000 {
		t.Errorf("driver version %d", v)
	}
	n, err := e.d.DeviceCount()
	must(t, err)
	if n < 1 {
		t.Fatalf("%d devices", n)
	}
	name, err := e.d.DeviceName(e.dev)
	must(t, err)
	if name == "" || strings.ContainsRune(name, 0) {
		t.Errorf("device name %q", name)
	}
	total, err := e.d.DeviceTotalMem(e.dev)
	must(t, err)
	if total <= 0 {
		t.Errorf("total memory %d", total)
	}
	attrs := map[string]int{}
	for a, s := range map[Attribute]string{
		AttrMaxThreadsPerBlock: "max threads per block", AttrMaxSharedMemoryPerBlock: "shared memory per block",
		AttrWarpSize: "warp size", AttrClockRate: "clock rate", AttrMultiprocessorCount: "multiprocessors",
		AttrMemoryClockRate: "memory clock", AttrGlobalMemoryBusWidth: "bus width",
		AttrComputeCapabilityMajor: "cc major", AttrComputeCapabilityMinor: "cc minor",
	} {
		v, err := e.d.DeviceAttribute(a, e.dev)
		must(t, err)
		attrs[s] = v
		if v < 0 || (v == 0 && a != AttrComputeCapabilityMinor) {
			t.Errorf("attribute %s (%d) = %d", s, a, v)
		}
	}
	if attrs["warp size"] != 32 {
		t.Errorf("warp size %d", attrs["warp size"])
	}
	free, tot, err := e.d.MemGetInfo()
	must(t, err)
	if tot <= 0 || free < 0 || free > tot {
		t.Errorf("MemGetInfo = %d free of %d", free, tot)
	}
	t.Logf("%s: driver %d, %d bytes, %v", name, v, total, attrs)

	// CUDA_ERROR_OPERATING_SYSTEM is not in the built-in table: its text
	// comes from the driver's cuGetErrorName and cuGetErrorString.
	if got, want := Result(304).Error(), "CUDA_ERROR_OPERATING_SYSTEM (304): OS call failed or operation not supported on this OS"; got != want {
		t.Errorf("Result(304).Error() = %q, want %q", got, want)
	}

	// A bad ordinal is an error from the driver.
	if _, err := e.d.DeviceGet(n + 5); err == nil {
		t.Errorf("DeviceGet(%d) of %d devices succeeded", n+5, n)
	} else {
		var r Result
		if !errors.As(err, &r) || !strings.HasPrefix(err.Error(), "CUDA_ERROR_") {
			t.Errorf("DeviceGet error %v (%T)", err, err)
		}
	}
}

func TestDriverMemory(t *testing.T) {
	e := setup(t)
	d := e.d
	const n = 4096
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)*0.5 - 7
	}
	p := upload(t, d, src)
	got := make([]float32, n)
	download(t, d, got, p)
	for i := range got {
		if got[i] != src[i] {
			t.Fatalf("round trip [%d] = %v, want %v", i, got[i], src[i])
		}
	}

	// Async copies and memset on a stream, through pinned host memory.
	s, err := d.StreamCreate(StreamNonBlocking)
	must(t, err)
	defer func() { must(t, d.StreamDestroy(s)) }()
	host, err := d.MemAllocHost(n)
	must(t, err)
	defer func() { must(t, d.MemFreeHost(host)) }()
	if len(host) != n || cap(host) != n {
		t.Fatalf("MemAllocHost: len %d cap %d", len(host), cap(host))
	}
	for i := range host {
		host[i] = byte(i * 7)
	}
	a, err := d.MemAlloc(n)
	must(t, err)
	defer func() { must(t, d.MemFree(a)) }()
	b, err := d.MemAlloc(n)
	must(t, err)
	defer func() { must(t, d.MemFree(b)) }()
	must(t, d.MemcpyHtoDAsync(a, unsafe.Pointer(&host[0]), n, s))
	must(t, d.MemsetD8Async(b, 0xAB, n, s))
	must(t, d.MemcpyDtoDAsync(b+100, a+200, 1000, s)) // b[100:1100] = a[200:1200]
	must(t, d.MemsetD8Async(a, 0x11, 16, s))
	must(t, d.MemcpyDtoHAsync(unsafe.Pointer(&host[0]), b, n, s))
	must(t, d.StreamSynchronize(s))
	for i := range host {
		want := byte(0xAB)
		if i >= 100 && i < 1100 {
			want = byte((i + 100) * 7)
		}
		if host[i] != want {
			t.Fatalf("b[%d] = %#x, want %#x", i, host[i], want)
		}
	}
	ha := make([]byte, 32)
	must(t, d.MemcpyDtoH(unsafe.Pointer(&ha[0]), a, 32))
	for i, v := range ha {
		want := byte(0x11)
		if i >= 16 {
			want = byte(i * 7)
		}
		if v != want {
			t.Fatalf("a[%d] = %#x, want %#x", i, v, want)
		}
	}

	// Events around some work: a positive elapsed time.
	start, err := d.EventCreate(EventDefault)
	must(t, err)
	defer func() { must(t, d.EventDestroy(start)) }()
	end, err := d.EventCreate(EventDefault)
	must(t, err)
	defer func() { must(t, d.EventDestroy(end)) }()
	const big = 32 << 20
	buf, err := d.MemAlloc(big)
	must(t, err)
	defer func() { must(t, d.MemFree(buf)) }()
	must(t, d.EventRecord(start, s))
	for range 4 {
		must(t, d.MemsetD8Async(buf, 1, big, s))
	}
	time.Sleep(2 * time.Millisecond)
	must(t, d.EventRecord(end, s))
	must(t, d.EventSynchronize(end))
	ms, err := d.EventElapsedTime(start, end)
	must(t, err)
	if !(ms > 0) {
		t.Errorf("elapsed time %v ms", ms)
	}
	t.Logf("4 memsets of %d MiB: %.3f ms", big>>20, ms)

	// Size checks happen before the call.
	if _, err := d.MemAlloc(-1); err == nil {
		t.Error("MemAlloc(-1) succeeded")
	}
}

const saxpySrc = `extern "C" __global__ void saxpy(float a, const float* __restrict__ x, float* __restrict__ y, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        y[i] = a * x[i] + y[i];
    }
}
`

// archOption returns the NVRTC option for device 0's architecture.
func archOption(t *testing.T, e *env) string {
	t.Helper()
	ma, err := e.d.DeviceAttribute(AttrComputeCapabilityMajor, e.dev)
	must(t, err)
	mi, err := e.d.DeviceAttribute(AttrComputeCapabilityMinor, e.dev)
	must(t, err)
	return fmt.Sprintf("--gpu-architecture=sm_%d%d", ma, mi)
}

// loadSaxpy compiles saxpySrc for the device's real architecture and
// returns its kernel.
func loadSaxpy(t *testing.T, e *env) Function {
	t.Helper()
	return loadSaxpyArch(t, e, archOption(t, e))
}

func loadSaxpyArch(t *testing.T, e *env, arch string) Function {
	t.Helper()
	out, err := e.n.Compile(saxpySrc, "saxpy.cu", []string{arch, "-default-device"})
	must(t, err)
	if len(out.CUBIN) == 0 && len(out.PTX) == 0 {
		t.Fatal("Compile gave neither a cubin nor PTX")
	}
	img := out.CUBIN
	if len(img) == 0 {
		img = out.PTX
	}
	m, err := e.d.ModuleLoadData(img)
	must(t, err)
	t.Cleanup(func() { must(t, e.d.ModuleUnload(m)) })
	f, err := e.d.ModuleGetFunction(m, "saxpy")
	must(t, err)
	return f
}

func TestSaxpyLaunch(t *testing.T) {
	e := setup(t)
	d := e.d
	ma, mi, err := e.n.Version()
	must(t, err)
	if ma < 1 || mi < 0 {
		t.Errorf("NVRTC version %d.%d", ma, mi)
	}
	f := loadSaxpy(t, e)

	// n is not a multiple of the block and the grid covers less than n
	// threads, so the grid-stride loop runs several rounds; y has a tail
	// past n that must stay untouched. The values are dyadic rationals, so
	// a*x+y is exact in float32 with or without a fused multiply-add and
	// the device must match the host value exactly.
	const n, tail = 10007, 16
	const a = float32(2.5)
	xs := make([]float32, n)
	ys := make([]float32, n+tail)
	for i := range xs {
		xs[i] = float32(i%1000)*0.5 - 100
	}
	for i := range ys {
		ys[i] = 1 - float32(i%512)*0.25
	}
	x := upload(t, d, xs)
	y := upload(t, d, ys)
	s, err := d.StreamCreate(0)
	must(t, err)
	defer func() { must(t, d.StreamDestroy(s)) }()

	av, xv, yv, nv := a, x, y, int64(n)
	params := []unsafe.Pointer{unsafe.Pointer(&av), unsafe.Pointer(&xv), unsafe.Pointer(&yv), unsafe.Pointer(&nv)}
	must(t, d.LaunchKernel(f, [3]uint32{16, 1, 1}, [3]uint32{128, 1, 1}, 0, s, params))
	must(t, d.StreamSynchronize(s))
	got := make([]float32, n+tail)
	download(t, d, got, y)
	for i := range got {
		want := ys[i]
		if i < n {
			want = a*xs[i] + ys[i]
		}
		if got[i] != want {
			t.Fatalf("y[%d] = %v, want %v (x=%v, y=%v)", i, got[i], want, xs[min(i, n-1)], ys[i])
		}
	}

	// Compiled for the virtual architecture there is no cubin, and the
	// module is loaded from the PTX.
	virt := strings.Replace(archOption(t, e), "sm_", "compute_", 1)
	out, err := e.n.Compile(saxpySrc, "saxpy.cu", []string{virt})
	must(t, err)
	if len(out.CUBIN) != 0 || len(out.PTX) == 0 {
		t.Errorf("%s: %d bytes of cubin, %d of PTX", virt, len(out.CUBIN), len(out.PTX))
	}
	fv := loadSaxpyArch(t, e, virt)
	av = -1
	must(t, d.LaunchKernel(fv, [3]uint32{3, 1, 1}, [3]uint32{64, 1, 1}, 0, s, params))
	must(t, d.StreamSynchronize(s))
	download(t, d, got, y)
	for i := range got {
		want := ys[i]
		if i < n {
			want = a*xs[i] + ys[i] - xs[i]
		}
		if got[i] != want {
			t.Fatalf("PTX module: y[%d] = %v, want %v", i, got[i], want)
		}
	}

	// A nil parameter is refused before the call.
	if err := d.LaunchKernel(f, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, s, []unsafe.Pointer{unsafe.Pointer(&av), nil}); err == nil {
		t.Error("LaunchKernel with a nil parameter succeeded")
	}
}

// TestLaunchKernelAllocs measures LaunchKernel's allocations (documented
// on LaunchKernel): none, since the call goes through SyscallN.
func TestLaunchKernelAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	e := setup(t)
	f := loadSaxpy(t, e)
	xs := []float32{1, 2, 3, 4}
	x := upload(t, e.d, xs)
	y := upload(t, e.d, xs)
	av, nv := float32(1), int64(len(xs))
	params := []unsafe.Pointer{unsafe.Pointer(&av), unsafe.Pointer(&x), unsafe.Pointer(&y), unsafe.Pointer(&nv)}
	allocs := testing.AllocsPerRun(50, func() {
		if err := e.d.LaunchKernel(f, [3]uint32{1, 1, 1}, [3]uint32{4, 1, 1}, 0, 0, params); err != nil {
			t.Fatal(err)
		}
	})
	must(t, e.d.CtxSynchronize())
	t.Logf("LaunchKernel: %.1f allocations per call", allocs)
	if allocs > 0 { // five pins fit the Pinner's own store
		t.Errorf("LaunchKernel makes %.1f allocations per call", allocs)
	}
}

func TestCompileError(t *testing.T) {
	e := setup(t)
	src := "extern \"C\" __global__ void bad(float* y)\n{\n    y[0] = loom_undeclared_identifier;\n}\n"
	out, err := e.n.Compile(src, "bad.cu", []string{archOption(t, e)})
	if err == nil {
		t.Fatalf("compiled a bad program: %+v", out)
	}
	var ce *CompileError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CompileError", err, err)
	}
	if ce.Result != NVRTCErrorCompilation || !errors.Is(err, NVRTCErrorCompilation) {
		t.Errorf("result %v, want NVRTC_ERROR_COMPILATION", ce.Result)
	}
	if !strings.Contains(ce.Log, "loom_undeclared_identifier") {
		t.Errorf("log does not mention the identifier:\n%s", ce.Log)
	}
	// NVRTC writes "bad.cu(3): error: ...", a host compiler "bad.cu:3:...".
	if !strings.Contains(ce.Log, "(3)") && !strings.Contains(ce.Log, ":3:") {
		t.Errorf("log does not point at line 3:\n%s", ce.Log)
	}
	if !strings.Contains(err.Error(), ce.Log[:min(len(ce.Log), 40)]) {
		t.Errorf("error does not include the log: %v", err)
	}
	t.Log(err)

	// A NUL in an option is refused before NVRTC sees it.
	if _, err := e.n.Compile(saxpySrc, "x.cu", []string{"-a\x00b"}); err == nil {
		t.Error("an option with a NUL byte was accepted")
	}
}

// gemmCase is one column-major gemm with padded leading dimensions.
type gemmCase struct {
	transA, transB bool
	m, n, k        int
}

func gemmCases() []gemmCase {
	var cs []gemmCase
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			cs = append(cs, gemmCase{ta, tb, 5, 3, 4}, gemmCase{ta, tb, 2, 7, 6}, gemmCase{ta, tb, 1, 1, 9})
		}
	}
	return cs
}

// dims returns the stored (rows, cols) of A and B and the leading
// dimensions, each padded by 2 rows past the minimum.
func (c gemmCase) dims() (ar, ac, br, bc, lda, ldb, ldc int) {
	ar, ac = c.m, c.k
	if c.transA {
		ar, ac = c.k, c.m
	}
	br, bc = c.k, c.n
	if c.transB {
		br, bc = c.n, c.k
	}
	return ar, ac, br, bc, ar + 2, br + 2, c.m + 2
}

// refGemm is the reference: C = alpha·op(A)·op(B) + beta·C in float64
// with a naive triple loop over column-major storage, written from the
// BLAS definition of xGEMM (C(i,j) = alpha·Σ_l op(A)(i,l)·op(B)(l,j) +
// beta·C(i,j), X(i,j) stored at X[i + j·ldx]); entries of C outside the
// m×n matrix are left as they are.
func refGemm(c gemmCase, alpha float64, A []float64, lda int, B []float64, ldb int, beta float64, C []float64, ldc int) {
	opA := func(i, l int) float64 {
		if c.transA {
			return A[l+i*lda]
		}
		return A[i+l*lda]
	}
	opB := func(l, j int) float64 {
		if c.transB {
			return B[j+l*ldb]
		}
		return B[l+j*ldb]
	}
	for j := 0; j < c.n; j++ {
		for i := 0; i < c.m; i++ {
			var s float64
			for l := 0; l < c.k; l++ {
				s += opA(i, l) * opB(l, j)
			}
			C[i+j*ldc] = alpha*s + beta*C[i+j*ldc]
		}
	}
}

// dyadic returns n values that are multiples of 1/4 in [-4, 4]: products
// and sums of a few of them are exact in float32, so float32 results can
// be compared with the float64 reference to within rounding of alpha and
// beta (which are dyadic too, making them exact).
func dyadic(r *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(r.IntN(33)-16) / 4
	}
	return v
}

func toF32(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

func checkClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestGemm(t *testing.T) {
	e := setup(t)
	d, b := e.d, e.b
	h, err := b.Create()
	must(t, err)
	defer func() { must(t, b.Destroy(h)) }()
	s, err := d.StreamCreate(0)
	must(t, err)
	defer func() { must(t, d.StreamDestroy(s)) }()
	must(t, b.SetStream(h, s))
	v, err := b.Version(h)
	must(t, err)
	if v <= 0 {
		t.Errorf("cuBLAS version %d", v)
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alpha, beta = 1.5, -0.5
	for _, c := range gemmCases() {
		name := fmt.Sprintf("transA=%v transB=%v m=%d n=%d k=%d", c.transA, c.transB, c.m, c.n, c.k)
		_, ac, _, bc, lda, ldb, ldc := c.dims()
		A, B, C := dyadic(r, lda*ac), dyadic(r, ldb*bc), dyadic(r, ldc*c.n)
		want := append([]float64(nil), C...)
		refGemm(c, alpha, A, lda, B, ldb, beta, want, ldc)

		// float64
		dA, dB, dC := upload(t, d, A), upload(t, d, B), upload(t, d, C)
		must(t, b.Dgemm(h, c.transA, c.transB, c.m, c.n, c.k, alpha, dA, lda, dB, ldb, beta, dC, ldc))
		must(t, d.StreamSynchronize(s))
		got := make([]float64, len(C))
		download(t, d, got, dC)
		checkClose(t, "Dgemm "+name, got, want, 1e-12)

		// float32
		sA, sB, sC := upload(t, d, toF32(A)), upload(t, d, toF32(B)), upload(t, d, toF32(C))
		must(t, b.Sgemm(h, c.transA, c.transB, c.m, c.n, c.k, alpha, sA, lda, sB, ldb, beta, sC, ldc))
		must(t, d.StreamSynchronize(s))
		got32 := make([]float32, len(C))
		download(t, d, got32, sC)
		for i, x := range got32 {
			got[i] = float64(x)
		}
		checkClose(t, "Sgemm "+name, got, want, 1e-6)
	}
}

func TestGemmStridedBatched(t *testing.T) {
	e := setup(t)
	d, b := e.d, e.b
	h, err := b.Create()
	must(t, err)
	defer func() { must(t, b.Destroy(h)) }()
	r := rand.New(rand.NewPCG(3, 4))
	const alpha, beta, batch = -0.75, 2.0, 3
	for _, c := range gemmCases() {
		name := fmt.Sprintf("transA=%v transB=%v m=%d n=%d k=%d", c.transA, c.transB, c.m, c.n, c.k)
		_, ac, _, bc, lda, ldb, ldc := c.dims()
		// Strides leave gaps between the matrices, which must stay as
		// they are in C.
		sa, sb, sc := lda*ac+3, ldb*bc+1, ldc*c.n+5
		A, B, C := dyadic(r, sa*batch), dyadic(r, sb*batch), dyadic(r, sc*batch)
		want := append([]float64(nil), C...)
		for i := range batch {
			refGemm(c, alpha, A[i*sa:], lda, B[i*sb:], ldb, beta, want[i*sc:], ldc)
		}

		dA, dB, dC := upload(t, d, A), upload(t, d, B), upload(t, d, C)
		must(t, b.DgemmStridedBatched(h, c.transA, c.transB, c.m, c.n, c.k, alpha, dA, lda, int64(sa), dB, ldb, int64(sb), beta, dC, ldc, int64(sc), batch))
		must(t, d.CtxSynchronize())
		got := make([]float64, len(C))
		download(t, d, got, dC)
		checkClose(t, "DgemmStridedBatched "+name, got, want, 1e-12)

		sA, sB, sC := upload(t, d, toF32(A)), upload(t, d, toF32(B)), upload(t, d, toF32(C))
		must(t, b.SgemmStridedBatched(h, c.transA, c.transB, c.m, c.n, c.k, alpha, sA, lda, int64(sa), sB, ldb, int64(sb), beta, sC, ldc, int64(sc), batch))
		must(t, d.CtxSynchronize())
		got32 := make([]float32, len(C))
		download(t, d, got32, sC)
		for i, x := range got32 {
			got[i] = float64(x)
		}
		checkClose(t, "SgemmStridedBatched "+name, got, want, 1e-6)
	}

	// An out-of-range dimension is refused before the call.
	if err := b.Sgemm(h, false, false, 1<<40, 1, 1, 1, 0, 1, 0, 1, 0, 0, 1); err == nil {
		t.Error("Sgemm with m = 2^40 succeeded")
	}
}

// refCgemm is refGemm in complex128 (op(X) is X or Xᵀ: the bindings do
// not offer the conjugate transpose).
func refCgemm(c gemmCase, alpha complex128, A []complex128, lda int, B []complex128, ldb int, beta complex128, C []complex128, ldc int) {
	for j := 0; j < c.n; j++ {
		for i := 0; i < c.m; i++ {
			var s complex128
			for l := 0; l < c.k; l++ {
				var a, b complex128
				if c.transA {
					a = A[l+i*lda]
				} else {
					a = A[i+l*lda]
				}
				if c.transB {
					b = B[j+l*ldb]
				} else {
					b = B[l+j*ldb]
				}
				s += a * b
			}
			C[i+j*ldc] = alpha*s + beta*C[i+j*ldc]
		}
	}
}

// dyadicC is dyadic for complex values (both parts multiples of 1/4).
func dyadicC(r *rand.Rand, n int) []complex128 {
	re, im := dyadic(r, n), dyadic(r, n)
	v := make([]complex128, n)
	for i := range v {
		v[i] = complex(re[i], im[i])
	}
	return v
}

func checkCloseC(t *testing.T, what string, got, want []complex128, tol float64) {
	t.Helper()
	for i := range want {
		if cmplx.Abs(got[i]-want[i]) > tol*(1+cmplx.Abs(want[i])) {
			t.Fatalf("%s: [%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// TestGemmComplex: Cgemm, Zgemm and their strided-batched forms against
// the complex128 reference, with every transpose combination, padded
// leading dimensions, complex alpha and beta, and gaps between the
// batch's matrices that must stay as they are.
func TestGemmComplex(t *testing.T) {
	e := setup(t)
	d, b := e.d, e.b
	h, err := b.Create()
	must(t, err)
	defer func() { must(t, b.Destroy(h)) }()
	r := rand.New(rand.NewPCG(5, 6))
	alpha, beta := complex(1.5, -0.25), complex(-0.5, 0.75)
	const batch = 2
	for _, c := range gemmCases() {
		name := fmt.Sprintf("transA=%v transB=%v m=%d n=%d k=%d", c.transA, c.transB, c.m, c.n, c.k)
		_, ac, _, bc, lda, ldb, ldc := c.dims()
		sa, sb, sc := lda*ac+1, ldb*bc+2, ldc*c.n+3
		A, B, C := dyadicC(r, sa*batch), dyadicC(r, sb*batch), dyadicC(r, sc*batch)
		want := append([]complex128(nil), C...)
		for i := range batch {
			refCgemm(c, alpha, A[i*sa:], lda, B[i*sb:], ldb, beta, want[i*sc:], ldc)
		}
		to64 := func(x []complex128) []complex64 {
			out := make([]complex64, len(x))
			for i, v := range x {
				out[i] = complex64(v)
			}
			return out
		}
		from64 := func(x []complex64) []complex128 {
			out := make([]complex128, len(x))
			for i, v := range x {
				out[i] = complex128(v)
			}
			return out
		}

		dA, dB := upload(t, d, A), upload(t, d, B)
		dC := upload(t, d, C)
		must(t, b.ZgemmStridedBatched(h, c.transA, c.transB, c.m, c.n, c.k, alpha, dA, lda, int64(sa), dB, ldb, int64(sb), beta, dC, ldc, int64(sc), batch))
		must(t, d.CtxSynchronize())
		got := make([]complex128, len(C))
		download(t, d, got, dC)
		checkCloseC(t, "ZgemmStridedBatched "+name, got, want, 1e-12)
		dC1 := upload(t, d, C[:sc])
		must(t, b.Zgemm(h, c.transA, c.transB, c.m, c.n, c.k, alpha, dA, lda, dB, ldb, beta, dC1, ldc))
		must(t, d.CtxSynchronize())
		download(t, d, got[:sc], dC1)
		checkCloseC(t, "Zgemm "+name, got[:sc], want[:sc], 1e-12)

		sA, sB := upload(t, d, to64(A)), upload(t, d, to64(B))
		sC := upload(t, d, to64(C))
		must(t, b.CgemmStridedBatched(h, c.transA, c.transB, c.m, c.n, c.k, complex64(alpha), sA, lda, int64(sa), sB, ldb, int64(sb), complex64(beta), sC, ldc, int64(sc), batch))
		must(t, d.CtxSynchronize())
		got64 := make([]complex64, len(C))
		download(t, d, got64, sC)
		checkCloseC(t, "CgemmStridedBatched "+name, from64(got64), want, 1e-6)
		sC1 := upload(t, d, to64(C[:sc]))
		must(t, b.Cgemm(h, c.transA, c.transB, c.m, c.n, c.k, complex64(alpha), sA, lda, sB, ldb, complex64(beta), sC1, ldc))
		must(t, d.CtxSynchronize())
		download(t, d, got64[:sc], sC1)
		checkCloseC(t, "Cgemm "+name, from64(got64[:sc]), want[:sc], 1e-6)
	}
	if err := b.Zgemm(h, false, false, 1, 1<<40, 1, 1, 0, 1, 0, 1, 0, 0, 1); err == nil {
		t.Error("Zgemm with n = 2^40 succeeded")
	}
}

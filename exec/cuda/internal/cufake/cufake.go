// Package cufake builds fake CUDA libraries for testing loom's CUDA backend
// on machines without a GPU: an emulated driver (libcuda), runtime compiler
// (libnvrtc), BLAS (libcublas), FFT (libcufft) and dense solver
// (libcusolver) and collectives (libnccl), C shared libraries that export
// exactly the symbols the backend uses, with the real C ABI, so the
// backend loads them through LOOM_LIBCUDA, LOOM_LIBNVRTC, LOOM_LIBCUBLAS,
// LOOM_LIBCUFFT, LOOM_LIBCUSOLVER and LOOM_LIBNCCL as it loads the real
// ones. Everything runs on the host, synchronously.
//
// Driver. One device, "Loom Emulated GPU": compute capability 9.0, 4
// multiprocessors, 1024 threads and 48 KiB of shared memory per block,
// warp size 32, 8 GiB (or $LOOM_FAKE_CUDA_MEMLIMIT bytes, to test
// out-of-memory handling; read at each allocation), driver version 13000.
// Device memory is host memory: cuMemAlloc returns a 256-byte aligned
// malloc'd address filled with 0xff bytes (reads of uninitialised memory
// give NaN or -1); copies and memsets must lie inside live allocations
// (else CUDA_ERROR_INVALID_VALUE). Streams are synchronous; events read
// CLOCK_MONOTONIC. cuInit comes first; as in CUDA, the current context is
// per OS thread, so calls from a thread without it give
// CUDA_ERROR_INVALID_CONTEXT; the last release of the primary context
// frees its memory, streams, events and modules. A module image whose
// architecture the device cannot run gives CUDA_ERROR_NO_BINARY_FOR_GPU
// (a CUBIN not for sm_90) or CUDA_ERROR_INVALID_PTX (PTX newer than
// compute_90). cuLaunchKernel checks the configuration, runs the grid on
// the calling thread, and returns CUDA_ERROR_LAUNCH_FAILED (with a message
// on stderr) for a barrier not reached by every thread. The extra
// argument (CU_LAUNCH_PARAM_BUFFER_*) is not supported.
//
// NVRTC. nvrtcCompileProgram compiles the program as host C++17 with
// $LOOM_FAKE_CXX (default c++) -O0 (plus $LOOM_FAKE_CXXFLAGS), after
// csrc/loom_emu.h, which emulates the device dialect; the compiler's
// diagnostics (lines of the program's name) are the log. Options are
// checked as NVRTC checks them (NVRTC_ERROR_INVALID_OPTION) and, but for
// -D, -U, -I, -include and -std, ignored. The image is the built shared
// object behind a 24-byte header; nvrtcGetCUBIN gives it for a real
// architecture (sm_XX) and, as NVRTC, nothing (size 0) for a virtual one
// (compute_XX, and the default compute_75); nvrtcGetPTX always gives it
// (with a NUL, as PTX). Identical compilations are cached in the process.
// loom_emu.h is precompiled (g++ -x c++-header) once per set of compile
// flags into $TMPDIR/loomfakenvrtc-pch-<hash>, kept like a build cache and
// shared by later processes, which cuts a small program's compile by about
// 40%; $LOOM_FAKE_NOPCH=1 turns it off, and a compiler that cannot use it
// only loses the speed-up (a .gch left by an older g++ is ignored by the
// new one: delete the directories after a compiler upgrade).
//
// cuBLAS. cublas[SDCZ]gemm_v2 and cublas[SDCZ]gemmStridedBatched compute the
// column-major product with naive loops accumulating in double (complex:
// the real and imaginary parts in double; CUBLAS_OP_C conjugates), with the
// argument checks of cuBLAS; the scalars are read from host memory. The
// triangular solves (cublas[SD]trsm_v2, trsmBatched) and the batched LU
// (getrfBatched, getrsBatched) come from fakecusolver.c.
//
// cuFFT (fakecufft.c). Plans of rank 1 to 3 in the advanced layout of
// cufftMakePlanMany64, all six transform types, executed as naive DFTs in
// double; a plan without automatic work-area allocation needs
// cufftSetWorkArea before it runs (CUFFT_NO_WORKSPACE), and the work area
// is written over at each execution.
//
// cuSOLVER (fakecusolver.c). potrf/potrs (and batched), getrf/getrs,
// geqrf/orgqr, syevd, gesvd, syevjBatched, gesvdjBatched in float and
// double with their _bufferSize queries, as unblocked textbook algorithms
// in double (Jacobi for the eigenproblem and the SVD), with cuSOLVER's
// argument checks (info = -i) and LAPACK's info > 0 for a minor that is
// not positive definite or a zero pivot.
//
// NCCL (fakenccl.c). The ranks of a communicator are threads of one
// process (one fake CUDA backend each); a collective runs, in rank order,
// when the last rank calls it, and the callers block until then. An
// ncclCommAbort from another thread ends the waits (ncclSystemError for
// the aborted handle's caller, ncclRemoteError for the other ranks);
// $LOOM_FAKE_NCCL_TIMEOUT seconds (default 60) is a safety net.
// ncclGetUniqueId returns the same id to every caller when $NCCL_COMM_ID
// is set, as NCCL's own bootstrap; an id carries a checksum, which
// ncclCommInitRank checks (the id is a 128-byte struct passed by value).
//
// The device dialect (loom_emu.h): kernels must be extern "C" __global__
// definitions (or defined after an extern "C" declaration) written out in
// the source, not made by macros; templates are not exported. Supported:
// __global__ __device__ __host__ __forceinline__ __noinline__ __restrict__
// __align__(n) __launch_bounds__ __constant__ (as ordinary globals);
// threadIdx blockIdx blockDim gridDim warpSize; dim3 uint3 and the vector
// types (float4, int2, ...) with make_*; `extern __shared__ T name[]` at
// file or block scope (all names alias one 48 KiB buffer, poisoned with
// 0xff bytes at each block start); static `__shared__ T x[N]` at file or
// block scope (one instance, shared by the block's threads); __syncthreads
// and __syncthreads_count/and/or; the warp functions __shfl_sync
// __shfl_up_sync __shfl_down_sync __shfl_xor_sync (with width) on values of
// up to 8 bytes, __ballot_sync __all_sync __any_sync __activemask
// __syncwarp and __reduce_{add,min,max,and,or,xor}_sync, each a barrier of
// the lanes of its mask; atomicAdd/Sub/Exch/Min/Max/And/Or/Xor/Inc/Dec/CAS
// (plain read-modify-write: fibers never run at the same time);
// __threadfence*; __ldg; the bit casts __int_as_float __float_as_int
// __uint_as_float __float_as_uint __longlong_as_double __double_as_longlong;
// the conversion and integer intrinsics (__float2int_rn, __popc, __clz,
// __ffs, __brev, __umulhi, ...); the C math library with the float and
// double overloads of the C++ library (expf, sqrt(float), fma, isnan, ...)
// plus CUDA's min/max overloads, rsqrtf, sinpif, normcdff, __expf (=
// expf), __fdividef, __saturatef and the _rn arithmetic; printf. Not
// supported: half and bfloat16 types (cuda_fp16.h), textures and surfaces,
// cooperative groups, clusters, dynamic parallelism, __constant__ set by
// cuMemcpyToSymbol, kernels with C++ linkage, and a namespace around
// extern shared arrays. Warps do not run in lockstep: code relying on
// implicit warp synchrony without __syncwarp or the *_sync functions is
// wrong here (as on Volta and later). Results differ in the last bits from
// a GPU where CUDA contracts a*b+c into an FMA or uses fast math.
// Out-of-bounds accesses are not detected; a fiber stack is 64 KiB, and
// overflowing it faults.
//
// Cost: a launch of 16 blocks of 256 threads with a short body takes
// about 30 µs without barriers (each block runs on one fiber) and about
// 220 µs with one __syncthreads (a few stack switches per thread) on
// x86-64 (BenchmarkLaunch); elsewhere the fibers use ucontext, about ten
// times slower.
//
// The C sources are embedded in this package and written next to the
// libraries by Build, so a test binary copied elsewhere can still build them.
package cufake

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNoCompiler is wrapped by the error of Build when the C or C++ compiler
// cannot be found; tests then skip.
var ErrNoCompiler = errors.New("no C compiler")

//go:embed csrc/fakecuda.c csrc/fakenvrtc.c csrc/fakecublas.c csrc/fakecufft.c csrc/fakecusolver.c csrc/fakenccl.c csrc/loom_emu.h
var sources embed.FS

// Libs holds the absolute paths of the built libraries.
type Libs struct{ CUDA, NVRTC, CUBLAS, CUFFT, CUSOLVER, NCCL string }

// Env returns the environment entries that point loom's CUDA backend at the
// libraries.
func (l Libs) Env() []string {
	return []string{"LOOM_LIBCUDA=" + l.CUDA, "LOOM_LIBNVRTC=" + l.NVRTC, "LOOM_LIBCUBLAS=" + l.CUBLAS,
		"LOOM_LIBCUFFT=" + l.CUFFT, "LOOM_LIBCUSOLVER=" + l.CUSOLVER, "LOOM_LIBNCCL=" + l.NCCL}
}

// Setenv sets the environment variables of Env, with t.Setenv in tests (which
// restores them when the test ends).
func (l Libs) Setenv(t interface{ Setenv(k, v string) }) {
	t.Setenv("LOOM_LIBCUDA", l.CUDA)
	t.Setenv("LOOM_LIBNVRTC", l.NVRTC)
	t.Setenv("LOOM_LIBCUBLAS", l.CUBLAS)
	t.Setenv("LOOM_LIBCUFFT", l.CUFFT)
	t.Setenv("LOOM_LIBCUSOLVER", l.CUSOLVER)
	t.Setenv("LOOM_LIBNCCL", l.NCCL)
}

// Build compiles the six libraries into dir (created if needed) with $CC
// (default cc) and -O2 -fPIC -shared, as libcuda.so, libnvrtc.so,
// libcublas.so, libcufft.so, libcusolver.so and libnccl.so.2; the C sources are written to dir/src. When dir already holds
// libraries built from the same sources with the same compiler, they are
// kept. The error wraps ErrNoCompiler when cc, or the C++ compiler the fake
// NVRTC will run ($LOOM_FAKE_CXX, default c++), cannot be found.
func Build(dir string) (Libs, error) {
	cc := strings.Fields(os.Getenv("CC"))
	if len(cc) == 0 {
		cc = []string{"cc"}
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		return Libs{}, fmt.Errorf("cufake: %w: %v", ErrNoCompiler, err)
	}
	cxx := strings.Fields(os.Getenv("LOOM_FAKE_CXX"))
	if len(cxx) == 0 {
		cxx = []string{"c++"}
	}
	if _, err := exec.LookPath(cxx[0]); err != nil {
		return Libs{}, fmt.Errorf("cufake: %w (C++ for the fake NVRTC): %v", ErrNoCompiler, err)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Libs{}, err
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return Libs{}, err
	}
	libs := Libs{
		CUDA:     filepath.Join(dir, "libcuda.so"),
		NVRTC:    filepath.Join(dir, "libnvrtc.so"),
		CUBLAS:   filepath.Join(dir, "libcublas.so"),
		CUFFT:    filepath.Join(dir, "libcufft.so"),
		CUSOLVER: filepath.Join(dir, "libcusolver.so"),
		NCCL:     filepath.Join(dir, "libnccl.so.2"),
	}

	files := map[string][]byte{}
	sum := sha256.New()
	fmt.Fprintf(sum, "%q\n", cc)
	for _, name := range []string{"fakecuda.c", "fakenvrtc.c", "fakecublas.c", "fakecufft.c", "fakecusolver.c", "fakenccl.c", "loom_emu.h"} {
		b, err := sources.ReadFile("csrc/" + name)
		if err != nil {
			return Libs{}, err
		}
		files[name] = b
		fmt.Fprintf(sum, "%s %d\n", name, len(b))
		sum.Write(b)
	}
	files["loom_emu_h.inc"] = cArray(files["loom_emu.h"])
	stamp := hex.EncodeToString(sum.Sum(nil))
	stampFile := filepath.Join(dir, "cufake.stamp")
	if old, err := os.ReadFile(stampFile); err == nil && string(old) == stamp && exists(libs.CUDA, libs.NVRTC, libs.CUBLAS, libs.CUFFT, libs.CUSOLVER, libs.NCCL) {
		return libs, nil
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			return Libs{}, err
		}
	}

	// The fake cuBLAS is fakecublas.c plus the cuBLAS part of
	// fakecusolver.c (triangular solves, batched LU).
	jobs := []struct {
		srcs []string
		out  string
	}{
		{[]string{"fakecuda.c"}, libs.CUDA},
		{[]string{"fakenvrtc.c"}, libs.NVRTC},
		{[]string{"fakecublas.c", "-DLOOM_FAKE_CUBLAS_PART", "fakecusolver.c"}, libs.CUBLAS},
		{[]string{"fakecufft.c"}, libs.CUFFT},
		{[]string{"fakecusolver.c"}, libs.CUSOLVER},
		{[]string{"fakenccl.c"}, libs.NCCL},
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = compile(cc, src, j.srcs, j.out)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return Libs{}, err
	}
	if err := os.WriteFile(stampFile, []byte(stamp), 0o644); err != nil {
		return Libs{}, err
	}
	return libs, nil
}

// compile builds one library into a temporary file and renames it into
// place, so that a library already loaded from out is not overwritten.
func compile(cc []string, dir string, srcs []string, out string) error {
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	args := append(cc[1:len(cc):len(cc)], "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread", "-o", tmp)
	args = append(append(args, srcs...), "-ldl", "-lm")
	cmd := exec.Command(cc[0], args...)
	cmd.Dir = dir
	var log bytes.Buffer
	cmd.Stdout = &log
	cmd.Stderr = &log
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("cufake: %s %s: %v\n%s", cc[0], strings.Join(args, " "), err, log.String())
	}
	return os.Rename(tmp, out)
}

func exists(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// cArray renders b as the initialiser of a NUL-terminated char array.
func cArray(b []byte) []byte {
	var w bytes.Buffer
	for i, c := range b {
		fmt.Fprintf(&w, "%d,", int8(c))
		if i%32 == 31 {
			w.WriteByte('\n')
		}
	}
	w.WriteString("0\n")
	return w.Bytes()
}

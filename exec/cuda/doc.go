// Package cuda is loom's CUDA backend. Importing it registers the "cuda"
// device with exec.Open ("cuda" is the first GPU, "cuda:N" the Nth):
//
//	import _ "github.com/loomgraph/loom/exec/cuda"
//	be, err := exec.Open("cuda")
//
// It needs no cgo and no CUDA headers to build: the driver (libcuda.so.1),
// NVRTC (libnvrtc.so.13 or .12) and cuBLAS (libcublas.so.13 or .12) are
// opened at run time through github.com/ebitengine/purego. Set
// LOOM_LIBCUDA, LOOM_LIBNVRTC or LOOM_LIBCUBLAS to a full path to choose a
// library; otherwise they are looked up by soname through the loader, then
// under $CUDA_HOME/lib64, /usr/local/cuda/lib64 and /usr/local/nvidia/lib64.
// Without a driver, Open returns an error wrapping exec.ErrUnavailable that
// lists every path tried, and exec.Default falls back to the CPU.
//
// Execution model:
//   - one goroutine per device, locked to its OS thread, makes every driver
//     and cuBLAS call, in the device's primary context;
//   - one stream per Program; a Run uploads its feeds through pinned host
//     memory, enqueues every step, downloads the outputs and synchronises;
//     Runs of one Program are serialised, Variables stay on the device;
//   - device memory comes from a caching allocator (size classes), and a
//     Program's intermediate values live in one arena laid out by the
//     optimiser's memory plan;
//   - every op has its row in the code generator's op-to-code table
//     (exec/cuda/internal/cudagen): MatMul's says cuBLAS (row-major through
//     the transposed column-major call, strided-batched for batches);
//     every other op, and every fused elementwise group with its
//     broadcasting and trailing reduction, is CUDA C generated from its
//     row (an elementwise op's is one C-expression template), compiled by
//     NVRTC for the device's compute capability (cubin, PTX as a
//     fallback) into one module per Program, and cached in memory and on
//     disk under
//     $LOOM_CUDA_CACHE (default: the user cache directory's loom/cuda;
//     "off" disables the disk cache) by a hash of the source, the options,
//     the NVRTC version and the compute capability;
//   - control flow (Cond, While, Scan: control.go): every body is lowered
//     like a program, into the same module and stream, with its own arena;
//     an iteration rebinds the body's parameter and result addresses (no
//     copies: Scan's x_t and y_t are addresses of step t in xs and in the
//     result, the carries alternate between the result and a spare
//     buffer) and enqueues the body's kernels. Cond's predicate and
//     While's condition are read back to the host, once per Cond and per
//     While iteration; a Scan reads nothing back. CUDA graph conditional
//     nodes are not used (they cannot be tested on the emulator).
//
// Profiling (profile.NewContext on the Run's context): every kernel's GPU
// time from CUDA events, on the stream's own track with a flow arrow from
// its launch on the run's thread; feed and result transfers as copy
// slices; device memory in use as a counter.
package cuda

// Package cudagen generates the CUDA C kernels of loom's CUDA backend:
// for one graph node (an elementwise op, a fused group, a reduction, a
// movement op or a softmax) it returns the source of the __global__
// functions that compute it and the launches to run, with every shape,
// stride and size baked into the source as a constant.
//
// Every op has one row in the op-to-code table (table.go). An elementwise
// op's row is a C-expression template with a variant per dtype class
// (bool, integer, float, storage, complex) where semantics differ; the dtypes of a
// class differ only through the C type mapping (types.go), so tanh renders
// tanhf(x) for float32 and tanh(x) for float64. The same expression serves
// the op alone, in fused groups and before a fused reduction. Every other
// op's row is its generator (reductions with their arithmetic), and
// MatMul's names the cuBLAS call the backend makes instead (LibraryOf).
// Adding an elementwise op is one row; TestTable fails for a declared op
// without one, and exec/cuda's TestElementwiseTable compiles (with the
// real NVRTC where installed) and runs every elementwise op in every dtype
// combination its declaration admits.
//
// The source is written in a small dialect that both NVRTC (with no
// headers) and a host C++17 compiler (the emulator, after its own header)
// accept: extern "C" kernels with pointer parameters only, 64-bit
// indices, no templates, no warp intrinsics, no atomics, and dynamic
// shared memory only (loom_smem, declared once in Prelude). Helpers
// (float16/bfloat16 conversions, saturating casts, floor division, ...)
// live in Prelude, which a module includes once before its kernels.
//
// Semantics follow the CPU backend (exec/cpu): integer arithmetic wraps,
// integer division floors and x/0 is 0, float-to-integer casts truncate
// and saturate with NaN giving 0, the storage types convert through
// float32 with rounding to nearest even, Maximum, Minimum, Max, Min and
// the arg reductions propagate NaN (ties go to the first index), and
// float sums accumulate in double (and products and scans).
//
// Complex numbers (complex.go) are the prelude's loom_c64 and loom_c128,
// structs of two floats or doubles aligned as cuFloatComplex and
// cuDoubleComplex, with operators, so that the float templates of
// arithmetic, Where and the reductions serve them; Div, Exp, Log, Sqrt,
// Abs and Angle are prelude helpers with Go's semantics (complex64
// computed in complex128 and rounded once, products as Go's), complex
// Sum and Prod accumulate in complex128 (alone and ending a fused group),
// movement copies complex128 as 16-byte loom_b128, and MatMul runs on
// cuBLAS's Cgemm and Zgemm.
//
// Kernel shapes (block = 256 threads, or the device's limit):
//
//   - Elementwise and fused groups: a grid-stride loop, grid =
//     min(ceil(n/256), 32 blocks per multiprocessor); operands with the
//     domain's shape are read at the loop index, one-element operands
//     once, broadcast ones through strides by constant div/mod.
//   - Reductions (and fused groups ending in one): a block holds BO
//     outputs of BR lanes; lanes fold strided elements into private
//     accumulators, then a shared-memory tree combines them. One thread
//     per output when the reduced extent is short (<= 16 with the
//     innermost axis reduced, <= 32 otherwise) or when outputs are many
//     (>= 256 per multiprocessor) and neighbouring outputs are
//     neighbouring addresses; rows (innermost axis reduced) get 32..256
//     lanes along x, about 8 elements each; columns get 32 outputs along
//     x and 8 lanes along y. When there are fewer than 2 blocks per
//     multiprocessor and each lane would fold 32 or more elements, the
//     extent is cut into parts (4 blocks per multiprocessor, >= 16
//     elements per lane, <= 1024 parts): pass 1 writes partials to
//     scratch, pass 2 reduces them.
//   - Softmax and LogSoftmax: the reduction's tiles without parts: a
//     block per row along the innermost axis, tree reductions for the
//     maximum and the sum.
//   - Scans (Cumsum, Cumprod, Cummax, LogCumSumExp; scan.go): a thread
//     per line (coalesced when the axis is not the innermost), or, along
//     the innermost axis with at least 512 elements, a block per row:
//     each thread folds a contiguous segment, thread 0 scans the segment
//     totals in order in shared memory, each thread rescans its segment.
//     The gradient helpers CumprodGrad and CummaxGrad: a thread per line.
//   - Sort, ArgSort, TopK (sort.go): a bitonic network on (key, index)
//     pairs, a block per line in shared memory up to 2048 pairs, else
//     tiles in shared memory and global compare-and-swap passes over
//     scratch. SearchSorted: a thread per value.
//   - Indexing (index.go): Gather and TakeAlongAxis a thread per result
//     element; Scatter, ScatterAdd and IndexAdd a copy of x (skipped in
//     place), then a thread per (line, destination range) walking the
//     indices in order, so that every element has one writer; a bad index
//     sets the step's status word (a Status argument) and a one-thread
//     launch finds the first.
//   - Convolutions (conv.go): an implicit GEMM over shared-memory tiles
//     (split-K with an ordered second pass when tiles are few), or for
//     depthwise and few channels the reductions' kernels over the taps.
//   - Transpose: 32x32 shared-memory tiles when the input's contiguous
//     axis moves; gathers (Slice, BroadcastTo, other transposes), Concat
//     and Pad compute each result element's source.
package cudagen

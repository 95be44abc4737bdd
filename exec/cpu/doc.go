// Package cpu is loom's reference backend: pure Go plus Go assembly (no
// cgo), a kernel for every op and every dtype its rule admits. Importing
// it registers the backend as "cpu" (exec.Open("cpu")); New opens one with
// options such as Threads.
//
// Every op has one entry in one table (table.go). An elementwise op's
// entry describes its element computation: a float64 function for the
// float dtypes and an int64 function for the integer dtypes and bool (the
// result wrapping to the element type), internal/simd's kernels where the
// op is hot, or its own kind (comparisons, Where, Cast); both its
// standalone kernel (NumPy broadcasting) and its micro-op in fused groups
// come from that entry, for every element type (generic code; types.go
// lists the types once). Every other op's entry is its prepare function.
//
// Kernels are prepared once at compile time (broadcast strides, reduction
// plans, matrix-product plans) and bound once per arena, so a Run
// allocates nothing of its own. Large kernels split their work over a
// fixed pool of worker goroutines; long reductions are summed in
// fixed-size blocks combined in order, and matrix products accumulate in
// an order fixed by their shapes, so results do not depend on the thread
// count. Float32 sums accumulate in float64.
//
// The float32 and float64 arithmetic, comparisons, selects, reductions and
// exp/log/tanh/sigmoid run on internal/simd at every level (AVX-512 or
// AVX2+FMA chosen at start-up; LOOM_SIMD=go or the build tag noasm selects
// its pure-Go loops, which are also what the integer types run; Silu,
// GeluTanh and Softplus are composed of its kernels, mathfast.go), matrix
// products on internal/gemm (packed, cache-blocked, with
// AVX-512/AVX2 micro-kernels and transposed operands read in place), and
// fused groups of elementwise ops (opdef.OpFused) on a chunk evaluator that
// keeps intermediates in per-thread registers of 2048 elements.
//
// Cancellation: a Run checks its context before every step, and kernels
// check it between pieces of bounded work (sub-ranges of their parallel
// loops, blocks of long reductions and softmax rows, the packed blocks of
// a matrix product: at most a few ms each), so that a Run returns soon
// after its context is done, with an error wrapping ctx.Err() that names
// the step. A check is a non-blocking receive on ctx.Done(): nothing is
// allocated, and a context that cannot be cancelled (Done() == nil) costs
// nothing. Rows of a reduction or softmax longer than 4M elements are
// therefore reduced in blocks of 4M, their partial sums added in order
// (deterministic, but rounded differently from one pass over the row).
// One dot product of a matrix-vector MatMul is not split: it is bounded
// by its length.
package cpu

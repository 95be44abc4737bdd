// Package gemm is loom's matrix multiply for float32 and float64:
//
//	C = alpha·op(A)·op(B) + beta·C
//
// with op(X) = X or Xᵀ, all matrices row-major with leading dimensions
// lda, ldb, ldc (op(A) is m×k, op(B) k×n, C m×n). Transposes are handled by
// the packing, never materialised.
//
// # Use
//
// A Plan32 (Plan64) is prepared once for fixed dimensions, transpositions
// and a thread count. It splits the product into Tasks() tasks, each
// computing a disjoint 2-D tile of C and packing what it needs itself, so
// tasks run concurrently with no synchronisation. Each running task needs
// its own workspace of WorkspaceFloats() elements; Run allocates nothing.
// RunUntil runs a task that stops early when a done channel (a context's
// Done()) is closed, checking it between blocks.
// Sgemm and Dgemm (and SgemmThreads, DgemmThreads) plan, allocate and run,
// for tests and casual use.
//
// Semantics follow BLAS: when alpha is zero, A and B are not read and C
// becomes beta·C; when beta is zero, C is only written (NaN or garbage in C
// does not propagate); k == 0 gives beta·C; m or n == 0 does nothing. C must
// not overlap A or B. Leading dimensions and slice lengths are checked
// (Run panics like gonum's BLAS on bad arguments).
//
// ShiftPlan (NewShift, Run) is a different product for stride-1
// convolutions: its B operand is never packed, row r being the run of a
// zero-padded input from an offset (a tap's shift plus its channel's
// plane), on AVX-512 micro-kernels only (ShiftAvailable; shift.go).
// RunEpi adds a per-row bias and applies ReLU in registers before each
// store (a convolution's bias and activation, no second pass).
//
// # Determinism
//
// Results are bit-identical whatever the number of threads, tasks or the
// order the tasks run in: the k dimension is split into blocks that depend
// on k and the kernel only, and every element of C goes through the same
// operations wherever its tile lies (edge tiles run the same micro-kernel
// through a buffer). Results may differ between machines that select
// different kernels (AVX-512, AVX2, portable Go).
//
// # Algorithm
//
// GotoBLAS/BLIS blocking: for each nc-column panel of B and each kc-deep
// block of k, B is packed into nr-column slivers; for each mc-row block of
// A, A is packed into mr-row slivers; a micro-kernel computes each mr×nr
// block of C with FMA, the B sliver (kc×nr) staying in L1 and the A block
// (mc×kc) in L2. Edge slivers are zero-padded; the last sliver of B uses a
// narrower kernel (half nr) when it is at most half full.
//
// Kernels, chosen at start-up from CPUID (kernels_amd64.go):
//
//	AVX-512 (F/DQ/BW/VL):  float32 8×32 (16 zmm accumulators), kc 256, mc 128, nc 2048
//	                       float64 8×16 (16 zmm accumulators), kc 256, mc 64,  nc 2048
//	AVX2+FMA:              float32 6×16, float64 6×8 (12 ymm accumulators)
//	otherwise, other architectures, or the noasm build tag:
//	                       portable Go 2×4 (about 6 GFLOP/s)
//
// Products with m == 1 or n == 1 skip packing on AVX-512 machines (vec.go):
// an axpy form that keeps the micro-kernels' arithmetic, or a dot-product
// form. Products with m·n·k <= 64 are computed by plain loops.
//
// The assembly micro-kernels are generated: `go generate` runs ./asmgen,
// which writes kernels_amd64.s.
//
// # Tuning
//
// The kernels and blockings above were chosen with two benchmarks
// (tune_amd64_test.go), kept to redo the choice on another machine:
// BenchmarkTuneKernels times every assembly micro-kernel alone on
// L1-resident slivers (sub-benchmarks kernel=NAME), BenchmarkTuneGemm times
// whole single-threaded products with the kernels in use and candidate
// blockings (type=T/shape=S/kernel=MRxNR-KC-MC-NC). Run them on an idle
// machine and compare the candidates with benchstat
// (golang.org/x/perf/cmd/benchstat):
//
//	go test -run '^$' -bench '^BenchmarkTune' -count 10 ./internal/gemm > tune.out
//	benchstat -col /kernel tune.out
//
// TestTuneBlockings checks that every candidate blocking computes correct
// products, so a candidate is only ever compared when it is right.
package gemm

// Package cpu is loom's reference backend: pure Go, a kernel for every op
// and every dtype its rule admits. Importing it registers the backend as
// "cpu" (exec.Open("cpu")); New opens one with options such as Threads.
//
// Kernels are prepared once at compile time (broadcast strides, reduction
// plans) and bound once per arena, so a Run allocates nothing of its own.
// Large elementwise, reduction and data-movement kernels split their work
// across a fixed pool of worker goroutines; long reductions are summed in
// fixed-size blocks combined in order, so results do not depend on the
// thread count. Float32 sums accumulate in float64. Matrix products go
// through gonum's BLAS (which parallelises large products itself).
package cpu

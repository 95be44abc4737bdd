package cpu

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
)

// How many workers a kernel uses: as many as its work pays for, never
// more than the backend's threads. A kernel's serial time is estimated
// from the op's cost model (its declaration's FLOPs and the bytes it
// reads and writes, opdef.Def.FLOPsOf and opdef.BytesOf) at the rates
// below, and every worker must get at least minPartNs of it: a part
// smaller than that costs more in dispatch (handing the part over, the
// worker's start, the wait for it: about 1 µs here, BenchmarkDispatch) and
// lost cache locality than it saves. The decision is made once per step
// when a Program instance binds its kernels (workersFor); the kernels'
// own grains (elements or rows per part, bcast.go's grainElems) still
// apply on top, so a loop never gets more parts than either allows.
//
// The rates and the grain are constants measured on this project's
// machines (2-vCPU AMD EPYC Zen 4/5 virtual machines, 2026-11), not
// calibrated at start-up: a calibration would make the split, and with
// it the timing, depend on how busy the machine was in the first
// milliseconds of a process, while the results never depend on it
// (every kernel gives the same bits for every split). They are
// deliberately the fast end of what the kernels reach (an estimate too
// low only forgoes a split of a kernel near the threshold; one too high
// would split kernels that are too small, the slowdown this guards
// against).
const (
	// nsPerFLOP is the time of one FLOP of vectorised non-contraction work
	// (elementwise, reductions, normalisations): 50 GFLOP/s.
	nsPerFLOP = 1.0 / 50
	// nsPerContractionFLOP is MatMul's and the convolutions' rate: the
	// packed gemm's 200-240 GFLOP/s per core (internal/gemm).
	nsPerContractionFLOP = 1.0 / 200
	// nsPerByte is the time of one byte read or written: 100 GB/s, the
	// rate of streaming through L2 (DRAM-bound kernels are slower, so they
	// are split at the same size or sooner).
	nsPerByte = 1.0 / 100
	// minPartNs is the least estimated work one worker gets: 10 µs,
	// ten times the dispatch cost of a part, so that a split loses at most
	// about a tenth of its gain to dispatch even when the pool is
	// oversubscribed (more workers than CPUs, where dispatches queue).
	minPartNs = 10_000
	// minContractionPartNs is the least work of one part of a MatMul or
	// a convolution: 15 µs. Every part packs its own panels of the
	// operands (internal/gemm), so the work of a product grows with its
	// parts: cut into 16 parts of 10 µs, a 784x256 by 64 product did 13%
	// more work than in 2 (bench/cmd/scaling, loom@16 against loom@2).
	// At 30 µs, examples/onnx's 64x784 by 784x64 product (estimated 36 µs,
	// 55 µs on one thread of a 2-vCPU Intel Xeon VM, 2026-11-25) stayed on
	// one thread; on two it takes 39-43 µs.
	minContractionPartNs = 15_000
	// contractionDepth: a product whose sums are k terms long runs at
	// about k/(k+contractionDepth) of the rate above, its tiles' loads,
	// stores and calls costing about that many steps of the k loop: the
	// shifted kernels of examples/onnx's convolutions reach 60 GFLOP/s at
	// k = 9 (the 1->8 layer, 3x3 taps of one channel) and 121 at k = 72
	// (BenchmarkShift), 121·9/17 = 64. Without it the 1->8 layer at batch
	// 64 (7.2 MFLOP, 160 µs on one thread) was estimated at 54 µs.
	contractionDepth = 8
	// nsPerWindowByte is the pooling windows' rate per byte: 30 GB/s,
	// what the 2x2 MaxPool reaches on a CNN's maps (BenchmarkMaxPool:
	// 27 GB/s on 64x16x14x14, 39 GB/s on 64x8x28x28, one thread). At
	// nsPerByte the 1 MB of the first would stay on one thread (37 µs).
	nsPerWindowByte = 1.0 / 30
)

// estimateNs is the estimated serial time of node n's kernel in
// nanoseconds (0 for a node without a declaration).
func estimateNs(n *graph.Node) float64 {
	d := opdef.Lookup(n.Op())
	if d == nil {
		return 0
	}
	rate := nsPerFLOP
	if d.Kind == opdef.Contraction {
		rate = nsPerContractionFLOP
	}
	perByte := nsPerByte
	if n.Op() == ops.OpMaxPool || n.Op() == ops.OpAvgPool || n.Op() == ops.OpMaxPoolSelect {
		perByte = nsPerWindowByte
	}
	flops := d.FLOPsOf(n)
	if d.Kind == opdef.Contraction {
		// k: the terms of each result's sum (a multiply and an add each)
		if k := flops / (2 * float64(max(n.Shape().Size(), 1))); k > 0 {
			flops *= 1 + contractionDepth/k
		}
	}
	return flops*rate + opdef.BytesOf(n)*perByte
}

// workersFor is the parts node n's kernel may split into on backend b:
// workersFor with its threads, at most the goroutines its pool can run at
// once. A kernel planned for more (gemm tiles for 5 workers run by 2
// goroutines: parts of 3 and 2 tasks) would finish later than one planned
// for the goroutines it has.
func (b *Backend) workersFor(n *graph.Node) int {
	return min(workersFor(n, b.threads), b.pool.runners())
}

// workersFor returns how many parts node n's kernel may split into with
// threads workers available: at most threads, at least 1, and no more
// than its estimated work gives minPartNs each (the kernels inside a
// control-flow body decide for themselves). A nil node (a copy step) may
// use every thread: its loop has its own grain in bytes.
func workersFor(n *graph.Node, threads int) int {
	if n == nil || threads <= 1 {
		return max(threads, 1)
	}
	part := float64(minPartNs)
	if d := opdef.Lookup(n.Op()); d != nil && d.Kind == opdef.Contraction {
		part = minContractionPartNs
	}
	k := int(estimateNs(n) / part)
	return min(max(k, 1), threads)
}

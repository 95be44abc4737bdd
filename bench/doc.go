// Package bench holds loom's peer benchmarks (issue 7, "CPU speed"): the
// same workloads in loom, in Gorgonia (gorgonia.org/gorgonia v0.9.18,
// float32, TapeMachine) and in PyTorch on the CPU (a long-lived Python
// subprocess running torch_bench.py, driven over a line protocol), timed
// alternately in one process so that the machine's noise hits every engine
// alike.
//
// This is a nested module: the main module never depends on a peer.
// Run it with `make bench-peers` from the repository root, or
// `go run ./cmd/peers -h` here; `make bench-scaling` (cmd/scaling, issue
// 20) times loom alone at several thread counts side by side. The cross-checks (every engine computes the
// same numbers from the same inputs) are ordinary tests: `go test ./...`.
//
// Every engine draws its inputs and initial weights from the same
// generator (Uniform, Classes): a splitmix64 hash of the element index,
// reproduced bit for bit by torch_bench.py with numpy, so no data crosses
// the pipe.
package bench

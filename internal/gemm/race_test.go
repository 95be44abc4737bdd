//go:build race

package gemm

// raceEnabled: the race detector slows the reference computations ~20×,
// so the exhaustive product tests are cut down under it.
const raceEnabled = true

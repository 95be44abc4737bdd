package cpu

import "github.com/loomgraph/loom/internal/stop"

// Test knobs (this file is compiled only into the package's tests).

// SetCheckHook makes f run at every check for cancellation of a Run's
// context (f must be safe for concurrent use); restore undoes it.
func SetCheckHook(f func()) (restore func()) { return stop.SetHook(f) }

// SetForcedStep makes every stepped parallel loop run its parts in
// sub-ranges of step iterations, whether or not the Run can be cancelled.
func SetForcedStep(step int) (restore func()) {
	old := forcedStep
	forcedStep = step
	return func() { forcedStep = old }
}

// SetLongRun sets the longest run a SIMD reduction handles in one call.
func SetLongRun(n int) (restore func()) {
	old := longRun
	longRun = n
	return func() { longRun = old }
}

// SetCopyStep sets the sub-range, in bytes, of copying and clearing loops.
func SetCopyStep(n int) (restore func()) {
	old := copyStep
	copyStep = n
	return func() { copyStep = old }
}

// SetSlidePool turns MaxPool's sliding-window path (poolslide.go) on or
// off for the programs compiled until restore.
func SetSlidePool(on bool) (restore func()) {
	old := slidePool
	slidePool = on
	return func() { slidePool = old }
}

// Package device opens the device an example's -device flag names, and
// links every backend loom has into the example, so that -device cuda
// works wherever a GPU does.
package device

import (
	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"  // registers "cpu"
	_ "github.com/loomgraph/loom/exec/cuda" // registers "cuda", "cuda:N"
)

// Usage is the help text of the examples' -device flag.
const Usage = `device: "cpu", "cuda", "cuda:N"; empty: exec.Default() ($LOOM_DEVICE if set, else a GPU, else the CPU)`

// Open opens the named device, or exec.Default() when name is empty.
func Open(name string) (exec.Backend, error) {
	if name == "" {
		return exec.Default()
	}
	return exec.Open(name)
}

// Package device is how the example programs choose their device: the
// -device flag's text and the function that opens it. Importing it links
// both backends, so that -device cuda works wherever a GPU does.
package device

import (
	"github.com/loomgraph/loom/exec"
	_ "github.com/loomgraph/loom/exec/cpu"  // the "cpu" backend
	_ "github.com/loomgraph/loom/exec/cuda" // the "cuda" backend
)

// Usage is the -device flag's help text.
const Usage = `device: "cpu", "cuda", "cuda:N"; empty: exec.Default() ($LOOM_DEVICE if set, else a GPU, else the CPU)`

// Open opens the device name names, or exec.Default() when it is empty.
func Open(name string) (exec.Backend, error) {
	if name == "" {
		return exec.Default()
	}
	return exec.Open(name)
}

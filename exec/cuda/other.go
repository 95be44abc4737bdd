//go:build !linux

package cuda

import (
	"fmt"
	"runtime"

	"github.com/loomgraph/loom/exec"
)

// The CUDA backend runs on Linux. Elsewhere the package still builds, and
// registers a "cuda" device that reports itself unavailable, so programs
// that import it compile everywhere and fall back to the CPU.
func init() {
	if err := exec.RegisterDriver("cuda", unavailable{}); err != nil {
		panic(err)
	}
}

type unavailable struct{}

func (unavailable) err() error {
	return fmt.Errorf("cuda: %w: the CUDA backend runs on linux, not %s", exec.ErrUnavailable, runtime.GOOS)
}

// Devices reports that there is no usable GPU.
func (u unavailable) Devices() ([]exec.Device, error) { return nil, u.err() }

// Open fails with an error wrapping exec.ErrUnavailable.
func (u unavailable) Open(int) (exec.Backend, error) { return nil, u.err() }

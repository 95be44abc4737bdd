//go:build linux

package cuda

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
)

// newFFTStep plans an FFT op on cuFFT.
func newFFTStep(b *Backend, n *graph.Node) (libStep, error) {
	return nil, fmt.Errorf("no cuFFT kernel for %v yet", n.Op())
}

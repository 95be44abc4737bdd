package cpu_test

import (
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
)

func TestConformance(t *testing.T) {
	exectest.Run(t, func() (exec.Backend, error) { return cpu.New() })
}

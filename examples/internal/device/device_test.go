package device

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
)

// TestDefaultHonoursLOOMDEVICE: an empty name goes through exec.Default,
// which opens $LOOM_DEVICE: "cpu" gives the CPU, a name no backend has
// gives an error naming it (so the variable is read, not ignored).
func TestDefaultHonoursLOOMDEVICE(t *testing.T) {
	t.Setenv("LOOM_DEVICE", "cpu")
	be, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	if got := be.Device(); got.Name != "cpu" || got.Kind != exec.CPU {
		t.Errorf("LOOM_DEVICE=cpu: device %v", got)
	}
	be.Close()

	t.Setenv("LOOM_DEVICE", "nosuchdevice")
	if _, err := Open(""); !errors.Is(err, exec.ErrUnknownDevice) || !strings.Contains(err.Error(), "nosuchdevice") {
		t.Errorf("LOOM_DEVICE=nosuchdevice: %v, want an unknown-device error naming it", err)
	}
}

// TestCUDALinked: "cuda" is registered. Without a GPU, Open fails with
// ErrUnavailable (no driver), never with "not linked".
func TestCUDALinked(t *testing.T) {
	be, err := Open("cuda")
	if err == nil {
		t.Logf("a GPU is here: %s", be.Device())
		be.Close()
		return
	}
	if !errors.Is(err, exec.ErrUnavailable) || strings.Contains(err.Error(), "not linked") {
		t.Errorf("Open(cuda): %v, want an unavailable device, not an unlinked backend", err)
	}
}

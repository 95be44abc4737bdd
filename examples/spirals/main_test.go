package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestTrainSmall trains a smaller model (256 points, 32 hidden units,
// 1000 steps, about 0.6 s): the loss must fall and the accuracy reach 0.9
// (it reaches 0.98 with this seed; chance is 0.5).
func TestTrainSmall(t *testing.T) {
	var out bytes.Buffer
	acc, err := train(&out, config{points: 128, hidden: 32, steps: 1000, lr: 1, seed: 1, device: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	if acc < 0.9 {
		t.Errorf("accuracy %.3f after 1000 steps, want >= 0.9:\n%s", acc, out.String())
	}
	lines := strings.Split(out.String(), "\n")
	var first, last string
	for _, l := range lines {
		if strings.HasPrefix(l, "step") {
			if first == "" {
				first = l
			}
			last = l
		}
	}
	if first == "" || first == last {
		t.Fatalf("no progress lines:\n%s", out.String())
	}
	var l0, l1 float64
	fmt.Sscanf(strings.Fields(first)[3], "%g", &l0)
	fmt.Sscanf(strings.Fields(last)[3], "%g", &l1)
	if !(l1 < l0/2) {
		t.Errorf("loss went from %g to %g; want it at least halved", l0, l1)
	}
}

// TestDeviceFlag: -device defaults to "" (exec.Default, which honours
// $LOOM_DEVICE), and "cuda" is linked in: without a GPU it fails as an
// unavailable device, never as a backend missing from the program.
func TestDeviceFlag(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.device != "" {
		t.Fatalf("defaults: %+v, %v; want device \"\"", c, err)
	}
	c.points, c.hidden, c.steps = 8, 4, 2
	t.Setenv("LOOM_DEVICE", "nosuchdevice")
	if _, err := train(io.Discard, c); err == nil || !strings.Contains(err.Error(), "nosuchdevice") {
		t.Errorf("LOOM_DEVICE=nosuchdevice: %v, want an error naming it", err)
	}
	c.device = "cuda"
	if _, err := train(io.Discard, c); err != nil && strings.Contains(err.Error(), "not linked") {
		t.Errorf("-device cuda: %v", err)
	}
}

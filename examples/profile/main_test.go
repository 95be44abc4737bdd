package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/profile"
)

// TestProfile runs a smaller step and checks that the trace validates and
// the summary names the matrix products.
func TestProfile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "trace.json")
	var buf bytes.Buffer
	if err := run(&buf, config{batch: 16, hidden: 32, warmup: 1, steps: 2, out: out, device: "cpu"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := profile.Validate(f); err != nil {
		t.Fatalf("trace: %v", err)
	}
	for _, want := range []string{"MatMul", "trace of 2 steps written to"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestDeviceFlag: -device defaults to "" (exec.Default, which honours
// $LOOM_DEVICE), and "cuda" is linked in: without a GPU it fails as an
// unavailable device, never as a backend missing from the program.
func TestDeviceFlag(t *testing.T) {
	c, err := parseFlags([]string{"-batch", "2", "-hidden", "4", "-warmup", "0", "-steps", "1"}, io.Discard)
	if err != nil || c.device != "" {
		t.Fatalf("defaults: %+v, %v; want device \"\"", c, err)
	}
	c.out = filepath.Join(t.TempDir(), "trace.json")
	t.Setenv("LOOM_DEVICE", "nosuchdevice")
	if err := run(io.Discard, c); err == nil || !strings.Contains(err.Error(), "nosuchdevice") {
		t.Errorf("LOOM_DEVICE=nosuchdevice: %v, want an error naming it", err)
	}
	c.device = "cuda"
	if err := run(io.Discard, c); err != nil && strings.Contains(err.Error(), "not linked") {
		t.Errorf("-device cuda: %v", err)
	}
}

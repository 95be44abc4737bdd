package main

import (
	"bytes"
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

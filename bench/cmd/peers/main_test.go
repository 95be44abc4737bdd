package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/bench"
)

// TestQuick is the smoke test: one quick round of every workload with the
// engines that are available (PyTorch is not installed by a test), a
// table on stdout and a JSON file. Gorgonia has no twin of the charlm
// transformer nor of the convolutions: it must say so (unavailable)
// rather than fail.
func TestQuick(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	code := run([]string{"-quick", "-rounds", "1", "-target", "20ms", "-install-torch=false", "-results", dir}, &out, &log)
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), log.String())
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	for _, w := range bench.Workloads(true) {
		if !strings.Contains(out.String(), w.Name) {
			t.Errorf("table has no row for %s", w.Name)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("results: %v, want one JSON file", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Workloads {
		for _, n := range []string{"loom", "gorgonia"} {
			r := w.Engines[n]
			noTwin := w.Spec.Kind == bench.KindCharLM || w.Spec.Kind == bench.KindConv || w.Spec.Kind == bench.KindCNN
			if n == "gorgonia" && noTwin && r != nil && strings.Contains(r.Error, bench.ErrUnavailable.Error()) {
				continue // no Gorgonia twin of the transformer or the convolutions
			}
			if r == nil || r.MedianNs <= 0 || len(r.NsPerIter) != 1 {
				t.Errorf("%s: %s: %+v, want one timing", w.Spec.Name, n, r)
			}
		}
		if r := w.Engines["pytorch"]; r != nil && r.Error == "" && r.MedianNs <= 0 {
			t.Errorf("%s: pytorch ran without a timing: %+v", w.Spec.Name, r)
		}
	}
}

func TestBadFlags(t *testing.T) {
	var out, log bytes.Buffer
	if code := run([]string{"-filter", "("}, &out, &log); code == 0 {
		t.Errorf("bad -filter: exit status 0")
	}
	if code := run([]string{"-engines", "tensorflow", "-quick"}, &out, &log); code == 0 {
		t.Errorf("unknown engine: exit status 0")
	}
}

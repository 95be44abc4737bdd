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

// TestQuick is the smoke test: one quick round of every workload, loom at
// 1 and 2 threads (no PyTorch), a table with a row per workload on stdout
// and a JSON file.
func TestQuick(t *testing.T) {
	dir := t.TempDir()
	var out, log bytes.Buffer
	code := run([]string{"-quick", "-rounds", "1", "-target", "5ms", "-threads", "1,2", "-results", dir}, &out, &log)
	t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), log.String())
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	rows := map[string]string{}
	var title string
	for _, l := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] != "#" {
			if f[0] == "workload" {
				title = l
			}
			rows[f[0]] = l
		}
	}
	if !strings.Contains(title, "loom@1") || !strings.Contains(title, "loom@2") || !strings.Contains(title, "2 vs 1") ||
		strings.Contains(title, "loom@16") || strings.Contains(title, "pytorch") {
		t.Errorf("title row %q, want loom@1, loom@2, 2 vs 1 and no other count", title)
	}
	for _, w := range bench.Workloads(true) {
		l, ok := rows[w.Name]
		if !ok {
			t.Errorf("table has no row for %s", w.Name)
			continue
		}
		if strings.Contains(l, "n/a") {
			t.Errorf("row %q has an n/a", l)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "scaling-*.json"))
	if len(files) != 1 {
		t.Fatalf("results: %v, want one JSON file", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.ScalingReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Workloads) != len(bench.Workloads(true)) {
		t.Errorf("JSON has %d workloads, want %d", len(rep.Workloads), len(bench.Workloads(true)))
	}
	for _, w := range rep.Workloads {
		for _, n := range []int{1, 2} {
			if r := w.Loom[n]; r == nil || r.MedianNs <= 0 || len(r.NsPerIter) != 1 {
				t.Errorf("%s: loom@%d: %+v, want one timing", w.Spec.Name, n, r)
			}
		}
		if len(w.Ratios) != 1 || w.Ratios[0].Value <= 0 || w.Verdict == "" || w.Verdict == "n/a" {
			t.Errorf("%s: ratios %+v, verdict %q", w.Spec.Name, w.Ratios, w.Verdict)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-filter", "("},
		{"-threads", "0"},
		{"-threads", ""},
		{"-threads", "1,two"},
		{"-torch", "x"},
		{"extra"},
	} {
		var out, log bytes.Buffer
		if code := run(append([]string{"-quick", "-results", ""}, args...), &out, &log); code == 0 {
			t.Errorf("%q: exit status 0", args)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBasics(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := run(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	b, _ := os.ReadFile(f.Name())
	s := string(b)
	// x's first row selects w's first row: logits [0.5+0.1, -1+0.1] =
	// [0.6, -0.9]; softmax = [1/(1+e^-1.5), ...] = [0.8175745, 0.18242553].
	for _, want := range []string{"0.8175745", "argmax = i64[4] [0 1 0 0]", "inner dimensions 3 and 4 differ", "missing feed"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

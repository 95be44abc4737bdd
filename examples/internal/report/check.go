package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/profile"
)

// CheckRun is the examples' smoke-test check of a finished run: the last
// line of out is "test accuracy: 0.…", dir holds a trace.json that
// profile.Validate accepts and a loss.png of at least 1000 bytes.
func CheckRun(t testing.TB, out, dir string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "test accuracy: 0.") {
		t.Errorf("the last line is %q", last)
	}
	f, err := os.Open(filepath.Join(dir, "trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := profile.Validate(f); err != nil {
		t.Errorf("trace.json: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "loss.png")); err != nil || fi.Size() < 1000 {
		t.Errorf("loss.png: %v", err)
	}
}

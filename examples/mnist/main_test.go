package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/examples/internal/mnist"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/tensor"
)

func smallConfig(out string) config {
	return config{hidden: []int{64}, batch: 50, epochs: 1, opt: "adam", schedule: "cosine", device: "cpu", seed: 7,
		limit: 3000, evalLimit: 1000, outDir: out}
}

func needData(t *testing.T) {
	t.Helper()
	if _, err := mnist.DataDir(); err != nil {
		t.Skipf("MNIST data not available: %v", err)
	}
}

// TestTrainSmall trains on 3000 examples for one epoch (60 steps): the
// loss must fall to under half its start (from about ln 10 = 2.3), the
// accuracy on 1000 test images beat 0.8 (it reaches about 0.89; chance is
// 0.1), and the trace and the plot must be written, the trace valid.
func TestTrainSmall(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	var out bytes.Buffer
	res, err := train(&out, smallConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	n := len(res.losses)
	first, last := mean(res.losses[:5]), mean(res.losses[n-10:])
	if n != 60 || !(last < first/2) {
		t.Errorf("%d steps, loss from %.3f to %.3f; want 60 steps and at least halved", n, first, last)
	}
	if res.accuracy < 0.8 {
		t.Errorf("accuracy %.4f, want >= 0.8", res.accuracy)
	}
	report.CheckRun(t, out.String(), dir)
}

// TestDeterministic: two runs with one seed give the same loss at every
// step, to the last bit (the CPU kernels sum in a fixed order whatever
// the thread count, and the shuffling and initial weights come from the
// seeded generator).
func TestDeterministic(t *testing.T) {
	needData(t)
	c := smallConfig("")
	c.limit, c.evalLimit = 1000, 500
	a, err := train(&bytes.Buffer{}, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := train(&bytes.Buffer{}, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.losses {
		if math.Float64bits(a.losses[i]) != math.Float64bits(b.losses[i]) {
			t.Fatalf("step %d: loss %v vs %v", i, a.losses[i], b.losses[i])
		}
	}
	if a.accuracy != b.accuracy {
		t.Errorf("accuracy %v vs %v", a.accuracy, b.accuracy)
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestSaveCheckpoint: -save writes a safetensors file holding every
// weight with its shape (and the optimiser state), with metadata.
func TestSaveCheckpoint(t *testing.T) {
	needData(t)
	c := smallConfig("")
	c.limit, c.evalLimit = 500, 500
	c.save = filepath.Join(t.TempDir(), "w.safetensors")
	if _, err := train(&bytes.Buffer{}, c); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(c.save)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, meta, err := tensor.ReadSafetensors(f, tensor.SafetensorsLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if w := ts["linear0/weight"]; w == nil || w.Type() != "f32[784,64]" || ts["linear1/bias"].Type() != "f32[10]" || ts["linear0/weight/adam_m"] == nil {
		t.Errorf("checkpoint tensors: %v", keys(ts))
	}
	if meta["model"] != "mlp 784-64-10" {
		t.Errorf("metadata %v", meta)
	}
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestDeviceFlag: -device defaults to "" (exec.Default, which honours
// $LOOM_DEVICE), and "cuda" is linked in: without a GPU it fails as an
// unavailable device, never as a backend missing from the program.
func TestDeviceFlag(t *testing.T) {
	needData(t)
	c, err := parseFlags([]string{"-hidden", "8", "-batch", "50", "-epochs", "1", "-limit", "100", "-out", ""}, io.Discard)
	if err != nil || c.device != "" {
		t.Fatalf("flags: %+v, %v; want device \"\"", c, err)
	}
	c.evalLimit = 100
	t.Setenv("LOOM_DEVICE", "nosuchdevice")
	if _, err := train(io.Discard, c); err == nil || !strings.Contains(err.Error(), "nosuchdevice") {
		t.Errorf("LOOM_DEVICE=nosuchdevice: %v, want an error naming it", err)
	}
	c.device = "cuda"
	if _, err := train(io.Discard, c); err != nil && strings.Contains(err.Error(), "not linked") {
		t.Errorf("-device cuda: %v", err)
	}
	if _, err := parseFlags([]string{"-hidden", "8,x"}, io.Discard); err == nil || !strings.Contains(err.Error(), `bad -hidden "8,x"`) {
		t.Errorf("-hidden 8,x: %v", err)
	}
}

// TestDataParallel trains two ranks of an in-process group, each on half
// of every batch of 50, beside one process on the whole batches: the
// ranks print the same losses (the mean over the ranks, the same bits on
// both) and reach the one process's accuracy (the same model up to
// float32 rounding: the loss curves agree to 1e-5; measured 2.4e-7).
func TestDataParallel(t *testing.T) {
	needData(t)
	c := smallConfig("")
	c.limit, c.evalLimit = 1000, 500
	one, err := train(&bytes.Buffer{}, c)
	if err != nil {
		t.Fatal(err)
	}
	comms, err := dist.NewGroup(2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res := make([]*result, 2)
	errs := make([]error, 2)
	outs := make([]bytes.Buffer, 2)
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cr := c
			cr.comm = comms[r]
			res[r], errs[r] = train(&outs[r], cr)
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if !strings.Contains(outs[1].String(), "data parallel: rank 1 of 2 (group), 25 examples of every batch of 50") {
		t.Errorf("rank 1's output lacks its data-parallel line:\n%s", outs[1].String())
	}
	worst := 0.0
	for i := range one.losses {
		if res[0].losses[i] != res[1].losses[i] {
			t.Fatalf("step %d: the ranks' losses differ: %v and %v", i, res[0].losses[i], res[1].losses[i])
		}
		worst = max(worst, math.Abs(res[0].losses[i]-one.losses[i]))
	}
	t.Logf("largest loss difference from one process over %d steps: %.3g; accuracy %.4f (one process %.4f)", len(one.losses), worst, res[0].accuracy, one.accuracy)
	if worst > 1e-5 {
		t.Errorf("the two-rank loss departs from one process's by %.3g (bound 1e-5)", worst)
	}
	if res[0].accuracy != res[1].accuracy || math.Abs(res[0].accuracy-one.accuracy) > 0.01 {
		t.Errorf("accuracy %.4f and %.4f on the ranks, %.4f in one process", res[0].accuracy, res[1].accuracy, one.accuracy)
	}
}

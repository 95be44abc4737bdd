package main

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/examples/internal/mnist"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/tensor"
)

func smallConfig(out string) config {
	return config{channels: []int{8, 16}, batch: 32, epochs: 1, lr: 3e-3, schedule: "cosine", device: "cpu", seed: 7,
		limit: 1280, evalLimit: 500, outDir: out}
}

func needData(t *testing.T) {
	t.Helper()
	if _, err := mnist.DataDir(); err != nil {
		t.Skipf("MNIST data not available: %v", err)
	}
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestTrainSmall is the smoke test: a two-stage CNN (8 and 16 channels)
// trained on 1280 examples for one epoch (40 steps of 32). The loss must
// fall to under half its start (from about ln 10 = 2.3), the accuracy on
// 500 test images (with the running BatchNorm statistics) beat 0.7
// (chance is 0.1), and the trace and the plot must be written, the trace
// valid, the last line the test accuracy.
func TestTrainSmall(t *testing.T) {
	needData(t)
	dir := t.TempDir()
	var out bytes.Buffer
	res, err := train(&out, smallConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	n := len(res.losses)
	first, last := mean(res.losses[:5]), mean(res.losses[n-10:])
	if n != 40 || !(last < first/2) {
		t.Errorf("%d steps, loss from %.3f to %.3f; want 40 steps and at least halved", n, first, last)
	}
	if res.accuracy < 0.7 {
		t.Errorf("accuracy %.4f, want >= 0.7", res.accuracy)
	}
	report.CheckRun(t, out.String(), dir)
}

// TestDeterministic: two runs with one seed give the same loss at every
// step, to the last bit.
func TestDeterministic(t *testing.T) {
	needData(t)
	c := smallConfig("")
	c.limit, c.evalLimit = 320, 100
	a, err := train(io.Discard, c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := train(io.Discard, c)
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

// TestSaveCheckpoint: -save writes every layer's weights, the BatchNorm
// running statistics included.
func TestSaveCheckpoint(t *testing.T) {
	needData(t)
	c := smallConfig("")
	c.limit, c.evalLimit = 64, 100
	c.save = filepath.Join(t.TempDir(), "w.safetensors")
	if _, err := train(io.Discard, c); err != nil {
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
	var shapes []string
	for k, v := range ts {
		shapes = append(shapes, k+" "+v.Type())
	}
	all := strings.Join(shapes, "\n")
	// The conv filters [out, in, 3, 3] of both stages and the linear
	// layer [16·7·7 = 784, 10].
	for _, want := range []string{"f32[8,1,3,3]", "f32[16,8,3,3]", "f32[784,10]"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s among the checkpoint's tensors:\n%s", want, all)
		}
	}
	if meta["model"] != "cnn 8-16" {
		t.Errorf("metadata %v", meta)
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || len(c.channels) != 3 || c.channels[2] != 64 || c.batch != 64 || c.device != "" {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	for _, args := range [][]string{{"-channels", "8,x"}, {"-channels", "1,2,3,4,5"}, {"-schedule", "step"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

package main

import (
	"bytes"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/examples/internal/mnist"
	"github.com/loomgraph/loom/onnx"
	"github.com/loomgraph/loom/tensor"
)

func needData(t *testing.T) {
	t.Helper()
	if _, err := mnist.DataDir(); err != nil {
		t.Skipf("MNIST data not available: %v", err)
	}
}

// TestSameAsPyTorch: the imported model predicts PyTorch's class for every
// one of the 10000 test images, its logits on the first 100 are PyTorch's
// to float32 rounding, and its accuracy is the 0.9826 train_torch.py
// printed for the committed cnn.onnx (9826 of 10000 correct).
func TestSameAsPyTorch(t *testing.T) {
	needData(t)
	c, err := parseFlags([]string{"-epochs", "0", "-save", "", "-device", "cpu"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res, err := run(&out, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if res.n != 10000 || res.agree != res.n {
		t.Errorf("same prediction as PyTorch on %d of %d images, want all 10000", res.agree, res.n)
	}
	// The logits are O(10): 1e-4 is a few float32 ulps of accumulated
	// rounding (loom and PyTorch sum the convolutions in other orders).
	if !(res.maxLogitDiff < 1e-4) {
		t.Errorf("logits differ from PyTorch's by %g, want < 1e-4", res.maxLogitDiff)
	}
	if math.Abs(res.before-0.9826) > 1e-9 {
		t.Errorf("accuracy %.4f, want 0.9826 (train_torch.py's)", res.before)
	}
	if !strings.Contains(out.String(), "same prediction as PyTorch on 10000 of 10000 test images") {
		t.Errorf("no comparison line in the output")
	}
}

// TestFineTune: a short fine-tuning run (1280 examples, 20 steps) changes
// the weights, keeps the accuracy on 1000 test images within a point of
// the imported model's, and saves every initialiser under its ONNX name
// and shape, with values other than the model's.
func TestFineTune(t *testing.T) {
	needData(t)
	path := filepath.Join(t.TempDir(), "ft.safetensors")
	c, err := parseFlags([]string{"-limit", "1280", "-eval-limit", "1000", "-save", path, "-device", "cpu"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(io.Discard, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.losses) != 20 {
		t.Errorf("%d steps, want 20", len(res.losses))
	}
	// The imported model already gets 98% right: fine-tuning at a small
	// learning rate must not wreck it.
	if res.after < res.before-0.01 {
		t.Errorf("accuracy %.4f after fine-tuning, %.4f before", res.after, res.before)
	}
	saved, meta, err := tensor.ReadSafetensorsFile(path, tensor.SafetensorsLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(meta["model"], "cnn.onnx") {
		t.Errorf("metadata %v", meta)
	}
	m, err := onnx.ImportBytes(cnnModel, onnx.InputShape("image", 1, 1, 28, 28), onnx.Variables())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Variables) != 8 {
		t.Fatalf("%d Variables, want 8 (weight and bias of conv1, conv2, fc1, fc2)", len(m.Variables))
	}
	for name, v := range m.Variables {
		got, ok := saved[name]
		if !ok {
			t.Errorf("%s not saved", name)
			continue
		}
		if !got.Shape().Equal(v.Shape()) {
			t.Errorf("%s saved as %v, want %v", name, got.Shape(), v.Shape())
		}
		if bytes.Equal(got.Bytes(), v.Value().Bytes()) {
			t.Errorf("%s did not change in fine-tuning", name)
		}
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil || c.batch != 64 || c.epochs != 1 || c.model != "" || c.save != "cnn-finetuned.safetensors" {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	if _, err := parseFlags([]string{"extra"}, io.Discard); err == nil {
		t.Error("extra argument: no error")
	}
	c.model = filepath.Join(t.TempDir(), "missing.onnx")
	needData(t)
	if _, err := run(io.Discard, c); err == nil || !strings.Contains(err.Error(), "missing.onnx") {
		t.Errorf("missing -model: %v", err)
	}
}

package onnx

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/loomgraph/loom/tensor"
)

// TestLegacyBroadcast: the binary operators before opset 7 broadcast B to
// A only with broadcast=1, B's dimensions placed at axis (or at the end).
func TestLegacyBroadcast(t *testing.T) {
	a := tensor.Zeros(tensor.Float32, 2, 3, 2)
	av, _ := tensor.Values[float32](a)
	for i := range av {
		av[i] = float32(i)
	}
	b3, _ := tensor.New([]float32{10, 20, 30}, 3)
	b2, _ := tensor.New([]float32{100, 200}, 2)
	s1, _ := tensor.New([]float32{0.5}, 1)
	ins := func(b *tensor.Tensor) []tin { return []tin{{"a", a, true}, {"b", b, true}} }

	// axis 1: B [3] runs along A's dimension 1, so A[i,j,k] + B[j];
	// by hand for A = 0..11: [10 11 22 23 34 35 16 17 28 29 40 41].
	out, err := runNode(t, 6, "Add", []*attrProto{iattr("broadcast", 1), iattr("axis", 1)}, ins(b3), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{10, 11, 22, 23, 34, 35, 16, 17, 28, 29, 40, 41}
	if got, _ := tensor.Values[float32](out[0]); !slices.Equal(got, want) {
		t.Errorf("axis 1: %v, want %v", got, want)
	}
	// No axis: B [2] aligned at the end, A[i,j,k] * B[k]: by hand
	// [0 200 200 600 400 1000 600 1400 800 1800 1000 2200].
	out, err = runNode(t, 6, "Mul", []*attrProto{iattr("broadcast", 1)}, ins(b2), 1)
	if err != nil {
		t.Fatal(err)
	}
	want = []float32{0, 200, 200, 600, 400, 1000, 600, 1400, 800, 1800, 1000, 2200}
	if got, _ := tensor.Values[float32](out[0]); !slices.Equal(got, want) {
		t.Errorf("no axis: %v, want %v", got, want)
	}
	// A 1-element B is a scalar: A - 0.5.
	out, err = runNode(t, 1, "Sub", []*attrProto{iattr("broadcast", 1), iattr("consumed_inputs", 0)}, ins(s1), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tensor.Values[float32](out[0]); got[0] != -0.5 || got[11] != 10.5 || !out[0].Shape().Equal(a.Shape()) {
		t.Errorf("scalar: %v %v", out[0].Shape(), got)
	}

	for _, c := range []struct {
		opset int
		attrs []*attrProto
		b     *tensor.Tensor
		want  string
	}{
		{6, nil, b3, "broadcast is 0"},
		{6, []*attrProto{iattr("axis", 1)}, b3, "axis without broadcast"},
		{6, []*attrProto{iattr("broadcast", 1), iattr("axis", 2)}, b3, "does not broadcast"},
		{6, []*attrProto{iattr("broadcast", 1), iattr("axis", 3)}, b3, "out of range"},
		{7, []*attrProto{iattr("broadcast", 1)}, b3, "removed in opset 7"},
	} {
		_, err := runNode(t, c.opset, "Add", c.attrs, ins(c.b), 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("opset %d %v: %v, want an error with %q", c.opset, c.attrs, err, c.want)
		}
		if c.opset == 7 && !errors.Is(err, ErrUnsupported) {
			t.Errorf("opset 7 broadcast: %v does not wrap ErrUnsupported", err)
		}
	}
}

package onnx

import (
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loomgraph/loom/tensor"
)

// Tests of the neural-network operators on paths the ONNX backend test
// data does not reach (its tests pass through onnx-conformance): pools
// whose padding exceeds loom's limit, MaxPool's Indices with padding and
// dilation, LpPool, integer Gemm and MatMul, Hardmax before opset 13,
// and the refusals.

// nnAttr is one attribute of a node built by nnModel.
type nnAttr struct {
	name string
	v    any // int, float64, string, []int
}

// nnModel builds a one-node model of the given opset whose inputs are
// the feeds (in order of names) and whose outputs are outs.
func nnModel(opset int, op string, names []string, feeds map[string]*tensor.Tensor, outs []string, attrs ...nnAttr) []byte {
	tag := func(b []byte, num protowire.Number, typ protowire.Type) []byte {
		return protowire.AppendTag(b, num, typ)
	}
	str := func(b []byte, num protowire.Number, s string) []byte {
		return protowire.AppendString(tag(b, num, protowire.BytesType), s)
	}
	msg := func(b []byte, num protowire.Number, m []byte) []byte {
		return protowire.AppendBytes(tag(b, num, protowire.BytesType), m)
	}
	varint := func(b []byte, num protowire.Number, v int64) []byte {
		return protowire.AppendVarint(tag(b, num, protowire.VarintType), uint64(v))
	}
	var node []byte
	for _, in := range names {
		node = str(node, 1, in)
	}
	for _, o := range outs {
		node = str(node, 2, o)
	}
	node = str(node, 4, op)
	for _, a := range attrs {
		ab := str(nil, 1, a.name)
		switch v := a.v.(type) {
		case int:
			ab = varint(varint(ab, 3, int64(v)), 20, 2)
		case float64:
			ab = protowire.AppendFixed32(tag(ab, 2, protowire.Fixed32Type), math.Float32bits(float32(v)))
			ab = varint(ab, 20, 1)
		case string:
			ab = varint(str(ab, 4, v), 20, 3)
		case []int:
			for _, x := range v {
				ab = varint(ab, 8, int64(x))
			}
			ab = varint(ab, 20, 7)
		}
		node = msg(node, 5, ab)
	}
	g := msg(nil, 1, node)
	for _, in := range names {
		if in == "" {
			continue
		}
		t := feeds[in]
		var shape []byte
		for _, d := range t.Shape() {
			shape = msg(shape, 1, varint(nil, 1, int64(d)))
		}
		tt := msg(varint(nil, 1, int64(onnxDType(t.DType()))), 2, shape)
		g = msg(g, 11, msg(str(nil, 1, in), 2, msg(nil, 1, tt)))
	}
	for _, o := range outs {
		g = msg(g, 12, str(nil, 1, o))
	}
	m := varint(nil, 1, 8)
	m = msg(m, 8, varint(str(nil, 1, ""), 2, int64(opset)))
	return msg(m, 7, g)
}

// nnRun imports and runs a one-node model on the CPU.
func nnRun(t *testing.T, opset int, op string, names []string, feeds map[string]*tensor.Tensor, outs []string, attrs ...nnAttr) []*tensor.Tensor {
	t.Helper()
	m, err := ImportBytes(nnModel(opset, op, names, feeds, outs, attrs...))
	if err != nil {
		t.Fatal(err)
	}
	return run(t, m, feeds)
}

// nnImportErr imports a one-node model and returns the error.
func nnImportErr(opset int, op string, names []string, feeds map[string]*tensor.Tensor, outs []string, attrs ...nnAttr) error {
	_, err := ImportBytes(nnModel(opset, op, names, feeds, outs, attrs...))
	return err
}

func nnTensor[T tensor.Elem](t *testing.T, vals []T, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.New(vals, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// nnCheck compares got's shape and values (within 1e-5 relative) with
// want.
func nnCheck(t *testing.T, what string, got *tensor.Tensor, shape []int, want []float64) {
	t.Helper()
	if !got.Shape().Equal(shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), shape)
	}
	g := got.Float64s()
	for i := range want {
		if math.Abs(g[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Fatalf("%s = %v, want %v", what, g, want)
		}
	}
}

func TestMaxPoolWidePaddingAndIndices(t *testing.T) {
	// x = [3 1 4 1 5 9 2], kernel 2, dilation 2, stride 2, pads 2/3 (more
	// than half the kernel: padded explicitly). Taps of window o are
	// positions 2o-2 and 2o: o=0: (-2, 0) -> 3 at 0; o=1: (0, 2) -> 4 at
	// 2; o=2: (2, 4) -> 5 at 4; o=3: (4, 6) -> 5 at 4; o=4: (6, 8) -> 2 at
	// 6 (8 is padding). Result size floor((7+5-3)/2)+1 = 5. By hand.
	x := nnTensor(t, []float32{3, 1, 4, 1, 5, 9, 2}, 1, 1, 7)
	feeds := map[string]*tensor.Tensor{"x": x}
	out := nnRun(t, 13, "MaxPool", []string{"x"}, feeds, []string{"y", "i"},
		nnAttr{"kernel_shape", []int{2}}, nnAttr{"dilations", []int{2}}, nnAttr{"strides", []int{2}}, nnAttr{"pads", []int{2, 3}})
	nnCheck(t, "MaxPool", out[0], []int{1, 1, 5}, []float64{3, 4, 5, 5, 2})
	nnCheck(t, "MaxPool Indices", out[1], []int{1, 1, 5}, []float64{0, 2, 4, 4, 6})
	if out[1].DType() != tensor.Int64 {
		t.Errorf("Indices are %s, want int64", out[1].DType())
	}

	// Two channels, 2-D, padding within loom's limit: the flat index
	// counts the channel ((n·C + c)·H·W), and storage_order 1 makes the
	// spatial part column-major (h + w·H). x[c] = c·10 + [[1 5] [7 2]] (H
	// = W = 2), kernel 2x2, pads 1 before, stride 2: one window per
	// channel, floor((2+1-2)/2)+1 = 1, seeing x[c, 0, 0] and padding. By
	// hand.
	x2 := nnTensor(t, []float32{1, 5, 7, 2, 11, 15, 17, 12}, 1, 2, 2, 2)
	out = nnRun(t, 13, "MaxPool", []string{"x"}, map[string]*tensor.Tensor{"x": x2}, []string{"y", "i"},
		nnAttr{"kernel_shape", []int{2, 2}}, nnAttr{"strides", []int{2, 2}}, nnAttr{"pads", []int{1, 1, 0, 0}}, nnAttr{"storage_order", 1})
	nnCheck(t, "MaxPool 2-D", out[0], []int{1, 2, 1, 1}, []float64{1, 11})
	nnCheck(t, "MaxPool 2-D Indices", out[1], []int{1, 2, 1, 1}, []float64{0, 4})
	out = nnRun(t, 13, "MaxPool", []string{"x"}, map[string]*tensor.Tensor{"x": x2}, []string{"y", "i"},
		nnAttr{"kernel_shape", []int{2, 2}}, nnAttr{"strides", []int{1, 1}}, nnAttr{"storage_order", 1})
	// One window per channel over all of it: the maximum 7 at (1, 0),
	// column-major 1 + 0·2 = 1; channel 1 adds 4.
	nnCheck(t, "MaxPool column-major Indices", out[1], []int{1, 2, 1, 1}, []float64{1, 5})
}

func TestAveragePoolWidePadding(t *testing.T) {
	// x = [1 2 3], kernel 3, stride 1, pads 2/2 (more than half the
	// kernel). Windows over the padded [0 0 1 2 3 0 0]: sums 1, 3, 6, 5, 3.
	// count_include_pad=1 divides by 3; =0 by the input positions 1, 2,
	// 3, 2, 1. By hand.
	x := nnTensor(t, []float32{1, 2, 3}, 1, 1, 3)
	feeds := map[string]*tensor.Tensor{"x": x}
	attrs := []nnAttr{{"kernel_shape", []int{3}}, {"pads", []int{2, 2}}}
	out := nnRun(t, 13, "AveragePool", []string{"x"}, feeds, []string{"y"}, append(attrs, nnAttr{"count_include_pad", 1})...)
	nnCheck(t, "AveragePool include", out[0], []int{1, 1, 5}, []float64{1.0 / 3, 1, 2, 5.0 / 3, 1})
	out = nnRun(t, 13, "AveragePool", []string{"x"}, feeds, []string{"y"}, attrs...)
	nnCheck(t, "AveragePool exclude", out[0], []int{1, 1, 5}, []float64{1, 1.5, 2, 2.5, 3})
}

func TestLpPool(t *testing.T) {
	// x = [3 -4 0 5 12], kernel 2, stride 1, p = 2: windows (3,-4) -> 5,
	// (-4,0) -> 4, (0,5) -> 5, (5,12) -> 13. By hand.
	x := nnTensor(t, []float32{3, -4, 0, 5, 12}, 1, 1, 5)
	feeds := map[string]*tensor.Tensor{"x": x}
	out := nnRun(t, 11, "LpPool", []string{"x"}, feeds, []string{"y"}, nnAttr{"kernel_shape", []int{2}})
	nnCheck(t, "LpPool p=2", out[0], []int{1, 1, 4}, []float64{5, 4, 5, 13})
	// p = 1, kernel 3, stride 2, pads 1/1: windows (pad,3,-4) -> 7,
	// (-4,0,5) -> 9, (5,12,pad) -> 17. By hand.
	out = nnRun(t, 11, "LpPool", []string{"x"}, feeds, []string{"y"}, nnAttr{"kernel_shape", []int{3}}, nnAttr{"p", 1},
		nnAttr{"strides", []int{2}}, nnAttr{"pads", []int{1, 1}})
	nnCheck(t, "LpPool p=1", out[0], []int{1, 1, 3}, []float64{7, 9, 17})
	// GlobalLpPool p=3: (27 + 64 + 0 + 125 + 1728)^(1/3) = 1944^(1/3)
	// (float64 reference: 12.4805...).
	out = nnRun(t, 11, "GlobalLpPool", []string{"x"}, feeds, []string{"y"}, nnAttr{"p", 3})
	nnCheck(t, "GlobalLpPool", out[0], []int{1, 1, 1}, []float64{math.Cbrt(1944)})
}

func TestIntegerGemmMatMul(t *testing.T) {
	// A = [[1 2] [3 4]], B = [[5 6] [7 8]]: A·Bᵀ = [[17 23] [39 53]];
	// 2·A·Bᵀ + 3·C with C = [1 -1] (broadcast over rows) = [[37 43] [81
	// 103]]. By hand.
	a := nnTensor(t, []int32{1, 2, 3, 4}, 2, 2)
	b := nnTensor(t, []int32{5, 6, 7, 8}, 2, 2)
	c := nnTensor(t, []int32{1, -1}, 2)
	feeds := map[string]*tensor.Tensor{"a": a, "b": b, "c": c}
	out := nnRun(t, 13, "Gemm", []string{"a", "b", "c"}, feeds, []string{"y"},
		nnAttr{"transB", 1}, nnAttr{"alpha", 2.0}, nnAttr{"beta", 3.0})
	nnCheck(t, "Gemm int32", out[0], []int{2, 2}, []float64{37, 43, 81, 103})
	if out[0].DType() != tensor.Int32 {
		t.Errorf("Gemm of int32 is %s", out[0].DType())
	}
	// MatMul of a vector [1 2] and a stack [2, 2, 2] of A and B: [1 2]·A
	// = [7 10], [1 2]·B = [19 22]. By hand.
	v := nnTensor(t, []int64{1, 2}, 2)
	s := nnTensor(t, []int64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2)
	out = nnRun(t, 13, "MatMul", []string{"v", "s"}, map[string]*tensor.Tensor{"v": v, "s": s}, []string{"y"})
	nnCheck(t, "MatMul int64", out[0], []int{2, 2}, []float64{7, 10, 19, 22})
}

func TestHardmaxCoerced(t *testing.T) {
	// Opset 11, axis 1 of [2, 2, 2]: each row of the [2, 4] matrix gets a
	// one at its first maximum: row 0 [1 4 4 0] -> index 1, row 1
	// [0 0 0 0] -> index 0. By hand.
	x := nnTensor(t, []float32{1, 4, 4, 0, 0, 0, 0, 0}, 2, 2, 2)
	out := nnRun(t, 11, "Hardmax", []string{"x"}, map[string]*tensor.Tensor{"x": x}, []string{"y"})
	nnCheck(t, "Hardmax-11", out[0], []int{2, 2, 2}, []float64{0, 1, 0, 0, 1, 0, 0, 0})
	// Opset 13, axis 0: columns of [2, 2, 2] compared across the first
	// axis: first maximum of (1,0), (4,0), (4,0), (0,0) is index 0 each.
	out = nnRun(t, 13, "Hardmax", []string{"x"}, map[string]*tensor.Tensor{"x": x}, []string{"y"}, nnAttr{"axis", 0})
	nnCheck(t, "Hardmax-13 axis 0", out[0], []int{2, 2, 2}, []float64{1, 1, 1, 1, 0, 0, 0, 0})
}

func TestDropoutMaskBeforeOpset10(t *testing.T) {
	// Opset 7's mask has X's type: ones.
	x := nnTensor(t, []float32{1, -2}, 2)
	out := nnRun(t, 7, "Dropout", []string{"x"}, map[string]*tensor.Tensor{"x": x}, []string{"y", "m"})
	nnCheck(t, "Dropout-7", out[0], []int{2}, []float64{1, -2})
	nnCheck(t, "Dropout-7 mask", out[1], []int{2}, []float64{1, 1})
	if out[1].DType() != tensor.Float32 {
		t.Errorf("the opset-7 mask is %s, want float32", out[1].DType())
	}
}

func TestLayerNormStashType(t *testing.T) {
	// [1 2 3] over its one axis: mean 2, variance 2/3, InvStdDev
	// 1/sqrt(2/3 + 1e-5) (float64 reference), computed in float32
	// (stash_type 1) and returned as float64.
	x := nnTensor(t, []float64{1, 2, 3}, 1, 3)
	s := nnTensor(t, []float64{1, 1, 2}, 3)
	out := nnRun(t, 17, "LayerNormalization", []string{"x", "s"}, map[string]*tensor.Tensor{"x": x, "s": s}, []string{"y", "mean", "inv"})
	inv := 1 / math.Sqrt(2.0/3+1e-5)
	nnCheck(t, "LayerNormalization Y", out[0], []int{1, 3}, []float64{-inv, 0, 2 * inv})
	nnCheck(t, "LayerNormalization Mean", out[1], []int{1, 1}, []float64{2})
	nnCheck(t, "LayerNormalization InvStdDev", out[2], []int{1, 1}, []float64{inv})
	if out[0].DType() != tensor.Float64 || out[2].DType() != tensor.Float32 {
		t.Errorf("Y is %s and InvStdDev %s, want float64 and float32", out[0].DType(), out[2].DType())
	}
	// float16: Y returns to float16 (values exact to its 11-bit
	// significand: 1.2247 rounds to 1.2246 within 1e-3), Mean and
	// InvStdDev stay float32.
	xh, err := tensor.FromFloat64s(tensor.Float16, []float64{1, 2, 3}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := tensor.FromFloat64s(tensor.Float16, []float64{1, 1, 2}, 3)
	out = nnRun(t, 17, "LayerNormalization", []string{"x", "s"}, map[string]*tensor.Tensor{"x": xh, "s": sh}, []string{"y", "mean", "inv"})
	if out[0].DType() != tensor.Float16 || out[1].DType() != tensor.Float32 || out[2].DType() != tensor.Float32 {
		t.Fatalf("float16: Y, Mean, InvStdDev are %s, %s, %s; want float16, float32, float32", out[0].DType(), out[1].DType(), out[2].DType())
	}
	for i, w := range []float64{-inv, 0, 2 * inv} {
		if g := out[0].Float64(i); math.Abs(g-w) > 1e-3*math.Max(1, math.Abs(w)) {
			t.Errorf("float16 Y[%d] = %v, want %v", i, g, w)
		}
	}
}

func TestNNRefusals(t *testing.T) {
	x := nnTensor(t, []float32{1, 2, 3, 4, 5}, 1, 1, 5)
	feeds := map[string]*tensor.Tensor{"x": x}
	in := []string{"x"}
	y := []string{"y"}
	four := map[string]*tensor.Tensor{"x": nnTensor(t, make([]float32, 4), 1, 1, 2, 2), "s": nnTensor(t, make([]float32, 1), 1)}
	for _, c := range []struct {
		what string
		err  error
		want string
	}{
		// ceil_mode: ONNX 1.12 keeps a last window starting in the
		// padding ((5+2-2)/2 rounded up, plus 1 = 4), PyTorch's rule
		// (loom's) drops it (3).
		{"ceil", nnImportErr(13, "MaxPool", in, feeds, y, nnAttr{"kernel_shape", []int{2}}, nnAttr{"strides", []int{2}},
			nnAttr{"pads", []int{1, 1}}, nnAttr{"ceil_mode", 1}), "ceil_mode gives [1,1,4] in ONNX but [1,1,3] in loom"},
		{"spatial", nnImportErr(7, "BatchNormalization", []string{"x", "s", "s", "s", "s"}, four, y, nnAttr{"spatial", 0}), "spatial=0"},
		{"is_test", nnImportErr(6, "BatchNormalization", []string{"x", "s", "s", "s", "s"}, four, y), "training mode (is_test=0)"},
		{"dropout-6", nnImportErr(6, "Dropout", in, feeds, y), "training mode with ratio 0.5"},
		{"stash", nnImportErr(17, "LayerNormalization", []string{"x", "s"}, four, y, nnAttr{"stash_type", 11}), "stash_type 11"},
		{"attribute", nnImportErr(13, "Conv", []string{"x", "x"}, feeds, y, nnAttr{"bogus", 1}), `attribute "bogus"`},
		{"storage_order", nnImportErr(13, "MaxPool", in, feeds, y, nnAttr{"kernel_shape", []int{2}}, nnAttr{"storage_order", 2}), "storage_order 2"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.what, c.err, c.want)
			continue
		}
		unsupported := c.what != "storage_order"
		if errors.Is(c.err, ErrUnsupported) != unsupported {
			t.Errorf("%s: errors.Is(err, ErrUnsupported) = %v, want %v (%v)", c.what, !unsupported, unsupported, c.err)
		}
	}
}

// TestMaxUnpoolErrors: MaxUnpool's operands are checked (the backend test
// data cover its values).
func TestMaxUnpoolErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 1, 1, 2, 2)
	i4 := tensor.Zeros(tensor.Int64, 1, 1, 2, 2)
	i3 := tensor.Zeros(tensor.Int64, 1, 1, 3)
	k := []*attrProto{isattr("kernel_shape", 2, 2), isattr("strides", 2, 2)}
	small, _ := tensor.New([]int64{1, 1, 3, 3}, 4)
	other, _ := tensor.New([]int64{1, 2, 4, 4}, 4)
	for _, c := range []struct {
		ins  []tin
		want string
	}{
		{[]tin{{"x", x, true}, {"i", i3, true}}, "must be integers of X's shape"},
		{[]tin{{"x", x, true}, {"i", i4, true}, {"s", small, false}}, "smaller than the default [1 1 4 4]"},
		{[]tin{{"x", x, true}, {"i", i4, true}, {"s", other, false}}, "must be [1 1 ...]"},
	} {
		if _, err := runNode(t, 11, "MaxUnpool", k, c.ins, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error with %q", c.ins, err, c.want)
		}
	}
}

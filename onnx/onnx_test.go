package onnx

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// A small protobuf writer for building models in tests.
type pb []byte

func (b pb) str(num protowire.Number, s string) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func (b pb) msg(num protowire.Number, m pb) pb {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

func (b pb) int(num protowire.Number, v int64) pb {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func (b pb) f32(num protowire.Number, v float32) pb {
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(v))
}

func tensorPB(name string, dims []int64, vals []float32) pb {
	var t pb
	for _, d := range dims {
		t = t.int(1, d)
	}
	t = t.int(2, dtFloat).str(8, name)
	var packed []byte
	for _, v := range vals {
		packed = protowire.AppendFixed32(packed, math.Float32bits(v))
	}
	return t.msg(4, packed)
}

func valueInfoPB(name string, elem int64, dims ...any) pb {
	var shape pb
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			shape = shape.msg(1, pb{}.int(1, int64(d)))
		case string:
			shape = shape.msg(1, pb{}.str(2, d))
		}
	}
	tt := pb{}.int(1, elem).msg(2, shape)
	return pb{}.str(1, name).msg(2, pb{}.msg(1, tt))
}

func nodePB(op, name string, ins, outs []string, attrs ...pb) pb {
	var n pb
	for _, i := range ins {
		n = n.str(1, i)
	}
	for _, o := range outs {
		n = n.str(2, o)
	}
	n = n.str(3, name).str(4, op)
	for _, a := range attrs {
		n = n.msg(5, a)
	}
	return n
}

func modelPB(opset int64, graph pb) []byte {
	m := pb{}.int(1, 8).msg(8, pb{}.str(1, "").int(2, opset)).str(2, "loom-test").msg(7, graph)
	return m
}

// mlpModel is y = Relu(x*W + b) built by hand: x [batch, 3] (batch
// symbolic), W [3], b [3].
func mlpModel() []byte {
	g := pb{}.
		msg(1, nodePB("Mul", "mm", []string{"x", "W"}, []string{"xw"})).
		msg(1, nodePB("Add", "add", []string{"xw", "b"}, []string{"z"})).
		msg(1, nodePB("Relu", "relu", []string{"z"}, []string{"y"})).
		str(2, "mlp").
		msg(5, tensorPB("W", []int64{3}, []float32{1, -1, 2})).
		msg(5, tensorPB("b", []int64{3}, []float32{0.25, 0, -1})).
		msg(11, valueInfoPB("x", dtFloat, "batch", 3)).
		msg(12, valueInfoPB("y", dtFloat, "batch", 3))
	return modelPB(13, g)
}

func run(t *testing.T, m *Model, feeds map[string]*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	p, err := exec.Compile(be, m.Outputs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f, err := m.Feeds(feeds)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Run(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestImportHandBuiltModel(t *testing.T) {
	x, _ := tensor.New([]float32{1, 2, -1, 0.5, 0, 3}, 2, 3)
	m, err := ImportBytes(mlpModel(), InputShape("x", 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset != 13 || m.Producer != "loom-test" || len(m.Inputs) != 1 || m.InputNames[0] != "x" || m.OutputNames[0] != "y" {
		t.Fatalf("model: opset %d producer %q inputs %v outputs %v", m.Opset, m.Producer, m.InputNames, m.OutputNames)
	}
	y, _ := tensor.Values[float32](run(t, m, map[string]*tensor.Tensor{"x": x})[0])
	// By hand: row [1,2,-1]*W = [1,-2,-2], + b = [1.25,-2,-3] -> relu [1.25,0,0];
	// row [0.5,0,3]*W = [0.5,0,6], + b = [0.75,0,5] -> [0.75,0,5].
	want := []float32{1.25, 0, 0, 0.75, 0, 5}
	for i := range want {
		if y[i] != want[i] {
			t.Fatalf("y = %v, want %v", y, want)
		}
	}
}

func TestImportVariablesTrainable(t *testing.T) {
	m, err := ImportBytes(mlpModel(), InputShape("x", 1, 3), Variables())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Variables) != 2 || m.Variables["W"] == nil || m.Variables["b"] == nil {
		t.Fatalf("Variables = %v, want W and b", m.Variables)
	}
	if s := m.Variables["W"].Shape(); !s.Equal(tensor.Shape{3}) {
		t.Fatalf("W is %v", s)
	}
}

// TestApply builds the hand-built model a second time at another batch
// size on the same Variables: an update made by one program is seen by the
// other (exec.ShareVariables), and the inputs are checked before anything
// is built.
func TestApply(t *testing.T) {
	m, err := ImportBytes(mlpModel(), InputShape("x", 1, 3), Variables())
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	x2 := g.Input("x2", tensor.Float32, 2, 3)
	outs, err := m.Apply(x2)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || !outs[0].Shape().Equal(tensor.Shape{2, 3}) || len(m.Variables) != 2 {
		t.Fatalf("Apply: outputs %v, %d Variables", outs, len(m.Variables))
	}
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	// Program a sets b to b+1; program b runs the second copy on its
	// storage.
	b := m.Variables["b"]
	pa, err := exec.Compile(be, m.Outputs, exec.Update(b, ops.Add(b, ops.Scalar(b, 1))))
	if err != nil {
		t.Fatal(err)
	}
	defer pa.Close()
	pb2, err := exec.Compile(be, outs, exec.ShareVariables(pa))
	if err != nil {
		t.Fatal(err)
	}
	defer pb2.Close()
	ctx := context.Background()
	x1, _ := tensor.New([]float32{0, 0, 0}, 1, 3)
	if _, err := pa.Run(ctx, exec.Feeds{m.Inputs[0]: x1}); err != nil {
		t.Fatal(err)
	}
	xv, _ := tensor.New([]float32{1, 2, -1, 0.5, 0, 3}, 2, 3)
	out, err := pb2.Run(ctx, exec.Feeds{x2: xv})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := tensor.Values[float32](out[0])
	// By hand, as TestImportHandBuiltModel with b+1 = [1.25, 1, 0]:
	// [1,-2,-2]+b = [2.25,-1,-2] -> [2.25,0,0]; [0.5,0,6]+b = [1.75,1,6].
	want := []float32{2.25, 0, 0, 1.75, 1, 6}
	for i := range want {
		if y[i] != want[i] {
			t.Fatalf("y = %v, want %v", y, want)
		}
	}

	// Bad inputs: refused before anything is built, the graph stays usable.
	other := tensor.Zeros(tensor.Float32, 2, 3)
	for _, c := range []struct {
		in   *graph.Node
		want string
	}{
		{g.Input("xi", tensor.Int32, 2, 3), "is float32, given int32"},
		{g.Input("xr", tensor.Float32, 6), "rank 2"},
		{g.Input("xd", tensor.Float32, 2, 4), "dimension 1 is 3"},
		{graph.New().Const(other), "another graph"},
	} {
		if _, err := m.Apply(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply(%v): %v, want an error with %q", c.in, err, c.want)
		}
	}
	if _, err := m.Apply(); err == nil || !strings.Contains(err.Error(), "1 inputs (x), given 0") {
		t.Errorf("Apply(): %v", err)
	}
	if err := g.Err(); err != nil {
		t.Fatalf("a refused Apply broke the graph: %v", err)
	}
}

func TestImportErrors(t *testing.T) {
	unknownOp := modelPB(13, pb{}.
		msg(1, nodePB("FrobnicateV2", "frob", []string{"x"}, []string{"y"})).
		msg(11, valueInfoPB("x", dtFloat, 2)).msg(12, valueInfoPB("y", dtFloat, 2)))
	badAttr := modelPB(13, pb{}.
		msg(1, nodePB("Relu", "r1", []string{"x"}, []string{"y"}, pb{}.str(1, "flavour").int(20, attrInt).int(3, 1))).
		msg(11, valueInfoPB("x", dtFloat, 2)).msg(12, valueInfoPB("y", dtFloat, 2)))
	gather := modelPB(11, pb{}.
		msg(1, nodePB("Reshape", "rs", []string{"x", "s"}, []string{"y"})).
		msg(11, valueInfoPB("x", dtFloat, 4)).msg(11, valueInfoPB("s", dtInt64, 2)).msg(12, valueInfoPB("y", dtFloat, 2, 2)))
	cases := []struct {
		name  string
		model []byte
		opts  []Option
		is    error
		wants []string
	}{
		{"unknown operator", unknownOp, nil, ErrUnsupported, []string{`node "frob"`, "FrobnicateV2", "opset 13", "no importer"}},
		{"unknown attribute", badAttr, nil, ErrUnsupported, []string{`node "r1"`, "Relu", `attribute "flavour"`}},
		{"symbolic dimension unbound", mlpModel(), nil, nil, []string{`input "x"`, `dimension 0 is "batch"`, "InputShape"}},
		{"bound shape disagrees", mlpModel(), []Option{InputShape("x", 4, 2)}, nil, []string{`input "x"`, "dimension 1 is 3"}},
		{"unknown input bound", mlpModel(), []Option{InputShape("x", 1, 3), InputShape("z", 1)}, nil, []string{`"z"`, "not an input"}},
		{"opset too new", modelPB(18, pb{}), nil, ErrUnsupported, []string{"opset 18", "up to 17"}},
		{"shape from an input", gather, nil, ErrDynamic, []string{`node "rs"`, `input 1 ("s")`, "Constants"}},
		{"truncated", mlpModel()[:40], nil, errProto, []string{"malformed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ImportBytes(c.model, c.opts...)
			if err == nil {
				t.Fatal("no error")
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v does not wrap %v", err, c.is)
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestConstantsBindInputs(t *testing.T) {
	m := modelPB(13, pb{}.
		msg(1, nodePB("Reshape", "rs", []string{"x", "s"}, []string{"y"})).
		msg(11, valueInfoPB("x", dtFloat, 4)).msg(11, valueInfoPB("s", dtInt64, 2)).msg(12, valueInfoPB("y", dtFloat, 2, 2)))
	s, _ := tensor.New([]int64{2, -1}, 2)
	mod, err := ImportBytes(m, Constants(map[string]*tensor.Tensor{"s": s}))
	if err != nil {
		t.Fatal(err)
	}
	if len(mod.Inputs) != 1 || mod.InputNames[0] != "x" {
		t.Fatalf("inputs %v, want [x] (s is bound)", mod.InputNames)
	}
	x, _ := tensor.New([]float32{1, 2, 3, 4}, 4)
	y := run(t, mod, map[string]*tensor.Tensor{"x": x, "s": s})[0]
	if !y.Shape().Equal(tensor.Shape{2, 2}) {
		t.Fatalf("y is %v, want [2 2] (shape [2,-1] of 4 elements, by hand)", y.Shape())
	}
	other, _ := tensor.New([]int64{4, 1}, 2)
	if _, err := mod.Feeds(map[string]*tensor.Tensor{"x": x, "s": other}); err == nil || !strings.Contains(err.Error(), "bound at import") {
		t.Fatalf("feeding another value of a bound input: %v", err)
	}
}

func TestTensorProtoForms(t *testing.T) {
	// int32_data carries int8 and bool; raw_data little-endian; both checked by hand.
	i8 := pb{}.int(1, 3).int(2, dtInt8).msg(5, protowire.AppendVarint(protowire.AppendVarint(protowire.AppendVarint(nil, uint64(0xFFFFFFFFFFFFFFFF)), 7), 127))
	tp, err := decodeTensor(i8)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := tp.toTensor("")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := tensor.Values[int8](tt)
	if v[0] != -1 || v[1] != 7 || v[2] != 127 {
		t.Fatalf("int8 from int32_data = %v, want [-1 7 127]", v)
	}
	raw := pb{}.int(1, 2).int(2, dtInt64).msg(9, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	tp, _ = decodeTensor(raw)
	tt, err = tp.toTensor("")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tensor.Values[int64](tt)
	if w[0] != 1 || w[1] != -2 {
		t.Fatalf("int64 raw = %v, want [1 -2]", w)
	}
	short := pb{}.int(1, 3).int(2, dtInt64).msg(9, []byte{1, 2})
	tp, _ = decodeTensor(short)
	if _, err := tp.toTensor(""); err == nil || !strings.Contains(err.Error(), "2 bytes") {
		t.Fatalf("short raw_data: %v", err)
	}
	huge := pb{}.int(1, 1<<40).int(1, 1<<40).int(2, dtFloat)
	tp, _ = decodeTensor(huge)
	if _, err := tp.toTensor(""); err == nil {
		t.Fatal("a 2^80-element tensor was accepted")
	}
}

func TestExternalData(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 8+12)
	for i, v := range []float32{1.5, -2, 4} {
		b := math.Float32bits(v)
		data[8+4*i], data[9+4*i], data[10+4*i], data[11+4*i] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ext := func(loc string) pb {
		return pb{}.int(1, 3).int(2, dtFloat).str(8, "w").
			msg(13, pb{}.str(1, "location").str(2, loc)).
			msg(13, pb{}.str(1, "offset").str(2, "8")).
			msg(13, pb{}.str(1, "length").str(2, "12")).int(14, 1)
	}
	tp, err := decodeTensor(ext("w.bin"))
	if err != nil {
		t.Fatal(err)
	}
	tt, err := tp.toTensor(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := tensor.Values[float32](tt)
	if v[0] != 1.5 || v[1] != -2 || v[2] != 4 {
		t.Fatalf("external = %v, want [1.5 -2 4] (written above)", v)
	}
	for _, loc := range []string{"../w.bin", "/etc/passwd", "sub/../../w.bin"} {
		tp, _ := decodeTensor(ext(loc))
		if _, err := tp.toTensor(dir); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("location %q: %v, want refused as outside the model's directory", loc, err)
		}
	}
	tp, _ = decodeTensor(ext("w.bin"))
	if _, err := tp.toTensor(""); err == nil || !strings.Contains(err.Error(), "external") {
		t.Errorf("external data without a directory: %v", err)
	}
}

// testDataDir is Debian's libonnx-testdata.
const testDataDir = "/usr/include/onnx/backend/test/data"

func FuzzImport(f *testing.F) {
	f.Add(mlpModel())
	for _, name := range []string{"node/test_conv_with_strides_padding", "node/test_slice", "node/test_gather_0", "simple/test_expand_shape_model1"} {
		if b, err := os.ReadFile(filepath.Join(testDataDir, name, "model.onnx")); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// No panic, and a model or an error.
		m, err := ImportBytes(b, InputShape("x", 1, 3))
		if err == nil && m == nil {
			t.Fatal("nil model without an error")
		}
		Signature(b)
		ReadTensor(strings.NewReader(string(b)))
	})
}

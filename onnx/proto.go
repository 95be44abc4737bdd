package onnx

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of onnx.proto (ONNX 1.12, IR version 8) that the importer
// reads, decoded by hand with protowire: the importer needs a dozen
// messages and a few fields of each, and decoding them itself lets it
// bound every allocation by the bytes actually present (a length or a
// count is never trusted before the bytes behind it are), limit the
// nesting of subgraphs, and keep raw tensor bytes as views of the input
// until a tensor is built. Generated code (protoc-gen-go) would need
// protoc at build time and register the types globally, for no gain
// here. Unknown fields are skipped, as protobuf requires.

// errProto wraps every decoding error.
var errProto = errors.New("onnx: malformed protobuf")

// maxDepth bounds the nesting of graphs (a subgraph attribute of a node
// of a subgraph ...) and of types, so hostile input cannot exhaust the
// stack.
const maxDepth = 32

type modelProto struct {
	IRVersion       int64
	Opsets          []opsetID
	Producer        string
	ProducerVersion string
	Domain          string
	Graph           *graphProto
	Functions       int // local functions (not supported)
	TrainingInfo    int
}

type opsetID struct {
	Domain  string
	Version int64
}

type graphProto struct {
	Name        string
	Nodes       []*nodeProto
	Inits       []*tensorProto
	SparseInits int
	Inputs      []*valueInfo
	Outputs     []*valueInfo
	ValueInfo   []*valueInfo
}

type nodeProto struct {
	Inputs, Outputs []string
	Name, OpType    string
	Domain          string
	Attrs           []*attrProto
}

// The AttributeProto.AttributeType values.
const (
	attrUndefined    = 0
	attrFloat        = 1
	attrInt          = 2
	attrString       = 3
	attrTensor       = 4
	attrGraph        = 5
	attrFloats       = 6
	attrInts         = 7
	attrStrings      = 8
	attrTensors      = 9
	attrGraphs       = 10
	attrSparseTensor = 11
	attrSparseTensrs = 12
	attrTypeProto    = 13
	attrTypeProtos   = 14
)

type attrProto struct {
	Name        string
	RefAttrName string
	Type        int32
	F           float32
	I           int64
	S           []byte
	T           *tensorProto
	G           *graphProto
	Floats      []float32
	Ints        []int64
	Strings     [][]byte
	Tensors     []*tensorProto
	Graphs      []*graphProto
	Other       bool // a sparse tensor or type proto value
}

type tensorProto struct {
	Dims         []int64
	DataType     int32
	Segment      bool
	FloatData    []float32
	Int32Data    []int32
	StringData   [][]byte
	Int64Data    []int64
	Name         string
	RawData      []byte
	HasRaw       bool
	External     []keyValue
	DataLocation int32
	DoubleData   []float64
	Uint64Data   []uint64
}

type keyValue struct{ Key, Value string }

type valueInfo struct {
	Name string
	Type *typeProto
}

// typeProto is a TypeProto: Kind is "tensor" (ElemType, Shape), or the
// kind of value loom does not import ("sequence", "map", "optional",
// "sparse tensor").
type typeProto struct {
	Kind     string
	ElemType int32
	HasShape bool
	Shape    []dimProto
}

type dimProto struct {
	HasValue bool
	Value    int64
	Param    string
}

// decoder walks one message's fields.
type decoder struct {
	b   []byte
	msg string // for errors
}

type field struct {
	num protowire.Number
	typ protowire.Type
	v   uint64 // varint, fixed32 or fixed64 value
	b   []byte // bytes value
}

func (d *decoder) errf(format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", errProto, d.msg, fmt.Sprintf(format, args...))
}

// next returns the next field, false at the end.
func (d *decoder) next() (field, bool, error) {
	if len(d.b) == 0 {
		return field{}, false, nil
	}
	num, typ, n := protowire.ConsumeTag(d.b)
	if n < 0 {
		return field{}, false, d.errf("bad field tag: %v", protowire.ParseError(n))
	}
	d.b = d.b[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.v, n = protowire.ConsumeVarint(d.b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(d.b)
		f.v = uint64(v)
	case protowire.Fixed64Type:
		f.v, n = protowire.ConsumeFixed64(d.b)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(d.b)
	default:
		n = protowire.ConsumeFieldValue(num, typ, d.b)
	}
	if n < 0 {
		return field{}, false, d.errf("field %d: %v", num, protowire.ParseError(n))
	}
	d.b = d.b[n:]
	return f, true, nil
}

func (f field) want(d *decoder, typ protowire.Type, name string) error {
	if f.typ != typ {
		return d.errf("field %s (%d) has wire type %d, want %d", name, f.num, f.typ, typ)
	}
	return nil
}

func (f field) str(d *decoder, name string) (string, error) {
	if err := f.want(d, protowire.BytesType, name); err != nil {
		return "", err
	}
	return string(f.b), nil
}

func (f field) varint(d *decoder, name string) (int64, error) {
	if err := f.want(d, protowire.VarintType, name); err != nil {
		return 0, err
	}
	return int64(f.v), nil
}

// ints appends a repeated integer field, packed or not.
func (f field) ints(d *decoder, name string, dst []int64) ([]int64, error) {
	switch f.typ {
	case protowire.VarintType:
		return append(dst, int64(f.v)), nil
	case protowire.BytesType:
		b := f.b
		// At least one byte per element: the count is bounded by len(b).
		if dst == nil {
			dst = make([]int64, 0, min(len(b), 1<<16))
		}
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, d.errf("packed %s: %v", name, protowire.ParseError(n))
			}
			dst = append(dst, int64(v))
			b = b[n:]
		}
		return dst, nil
	}
	return nil, d.errf("field %s (%d) has wire type %d, want an integer", name, f.num, f.typ)
}

// fixed32s appends a repeated float field, packed or not.
func (f field) fixed32s(d *decoder, name string, dst []float32) ([]float32, error) {
	switch f.typ {
	case protowire.Fixed32Type:
		return append(dst, math.Float32frombits(uint32(f.v))), nil
	case protowire.BytesType:
		if len(f.b)%4 != 0 {
			return nil, d.errf("packed %s: %d bytes is not a whole number of floats", name, len(f.b))
		}
		for b := f.b; len(b) > 0; b = b[4:] {
			v, _ := protowire.ConsumeFixed32(b)
			dst = append(dst, math.Float32frombits(v))
		}
		return dst, nil
	}
	return nil, d.errf("field %s (%d) has wire type %d, want a float", name, f.num, f.typ)
}

// fixed64s appends a repeated double field, packed or not.
func (f field) fixed64s(d *decoder, name string, dst []float64) ([]float64, error) {
	switch f.typ {
	case protowire.Fixed64Type:
		return append(dst, math.Float64frombits(f.v)), nil
	case protowire.BytesType:
		if len(f.b)%8 != 0 {
			return nil, d.errf("packed %s: %d bytes is not a whole number of doubles", name, len(f.b))
		}
		for b := f.b; len(b) > 0; b = b[8:] {
			v, _ := protowire.ConsumeFixed64(b)
			dst = append(dst, math.Float64frombits(v))
		}
		return dst, nil
	}
	return nil, d.errf("field %s (%d) has wire type %d, want a double", name, f.num, f.typ)
}

func decodeModel(b []byte) (*modelProto, error) {
	d := &decoder{b: b, msg: "ModelProto"}
	m := &modelProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return m, err
		}
		switch f.num {
		case 1:
			m.IRVersion, err = f.varint(d, "ir_version")
		case 8:
			if err = f.want(d, protowire.BytesType, "opset_import"); err == nil {
				var o opsetID
				o, err = decodeOpset(f.b)
				m.Opsets = append(m.Opsets, o)
			}
		case 2:
			m.Producer, err = f.str(d, "producer_name")
		case 3:
			m.ProducerVersion, err = f.str(d, "producer_version")
		case 4:
			m.Domain, err = f.str(d, "domain")
		case 7:
			if err = f.want(d, protowire.BytesType, "graph"); err == nil {
				m.Graph, err = decodeGraph(f.b, 0)
			}
		case 20:
			m.TrainingInfo++
		case 25:
			m.Functions++
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeOpset(b []byte) (opsetID, error) {
	d := &decoder{b: b, msg: "OperatorSetIdProto"}
	var o opsetID
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return o, err
		}
		switch f.num {
		case 1:
			o.Domain, err = f.str(d, "domain")
		case 2:
			o.Version, err = f.varint(d, "version")
		}
		if err != nil {
			return o, err
		}
	}
}

func decodeGraph(b []byte, depth int) (*graphProto, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: graphs nested more than %d deep", errProto, maxDepth)
	}
	d := &decoder{b: b, msg: "GraphProto"}
	g := &graphProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return g, err
		}
		switch f.num {
		case 1, 2, 5, 11, 12, 13:
			if err = f.want(d, protowire.BytesType, fmt.Sprintf("GraphProto field %d", f.num)); err != nil {
				return nil, err
			}
		}
		switch f.num {
		case 1:
			var n *nodeProto
			n, err = decodeNode(f.b, depth)
			g.Nodes = append(g.Nodes, n)
		case 2:
			g.Name, err = f.str(d, "name")
		case 5:
			var t *tensorProto
			t, err = decodeTensor(f.b)
			g.Inits = append(g.Inits, t)
		case 15:
			g.SparseInits++
		case 11, 12, 13:
			var v *valueInfo
			v, err = decodeValueInfo(f.b, depth)
			switch f.num {
			case 11:
				g.Inputs = append(g.Inputs, v)
			case 12:
				g.Outputs = append(g.Outputs, v)
			default:
				g.ValueInfo = append(g.ValueInfo, v)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeNode(b []byte, depth int) (*nodeProto, error) {
	d := &decoder{b: b, msg: "NodeProto"}
	n := &nodeProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return n, err
		}
		var s string
		switch f.num {
		case 1:
			s, err = f.str(d, "input")
			n.Inputs = append(n.Inputs, s)
		case 2:
			s, err = f.str(d, "output")
			n.Outputs = append(n.Outputs, s)
		case 3:
			n.Name, err = f.str(d, "name")
		case 4:
			n.OpType, err = f.str(d, "op_type")
		case 7:
			n.Domain, err = f.str(d, "domain")
		case 5:
			if err = f.want(d, protowire.BytesType, "attribute"); err == nil {
				var a *attrProto
				a, err = decodeAttr(f.b, depth)
				n.Attrs = append(n.Attrs, a)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeAttr(b []byte, depth int) (*attrProto, error) {
	d := &decoder{b: b, msg: "AttributeProto"}
	a := &attrProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return a, err
		}
		switch f.num {
		case 1:
			a.Name, err = f.str(d, "name")
		case 21:
			a.RefAttrName, err = f.str(d, "ref_attr_name")
		case 20:
			var v int64
			v, err = f.varint(d, "type")
			a.Type = int32(v)
		case 2:
			var v []float32
			v, err = f.fixed32s(d, "f", nil)
			if err == nil && len(v) > 0 {
				a.F = v[len(v)-1]
			}
		case 3:
			a.I, err = f.varint(d, "i")
		case 4:
			if err = f.want(d, protowire.BytesType, "s"); err == nil {
				a.S = f.b
			}
		case 5:
			if err = f.want(d, protowire.BytesType, "t"); err == nil {
				a.T, err = decodeTensor(f.b)
			}
		case 6:
			if err = f.want(d, protowire.BytesType, "g"); err == nil {
				a.G, err = decodeGraph(f.b, depth+1)
			}
		case 7:
			a.Floats, err = f.fixed32s(d, "floats", a.Floats)
		case 8:
			a.Ints, err = f.ints(d, "ints", a.Ints)
		case 9:
			if err = f.want(d, protowire.BytesType, "strings"); err == nil {
				a.Strings = append(a.Strings, f.b)
			}
		case 10:
			if err = f.want(d, protowire.BytesType, "tensors"); err == nil {
				var t *tensorProto
				t, err = decodeTensor(f.b)
				a.Tensors = append(a.Tensors, t)
			}
		case 11:
			if err = f.want(d, protowire.BytesType, "graphs"); err == nil {
				var g *graphProto
				g, err = decodeGraph(f.b, depth+1)
				a.Graphs = append(a.Graphs, g)
			}
		case 14, 15, 22, 23:
			a.Other = true
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeTensor(b []byte) (*tensorProto, error) {
	d := &decoder{b: b, msg: "TensorProto"}
	t := &tensorProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return t, err
		}
		switch f.num {
		case 1:
			t.Dims, err = f.ints(d, "dims", t.Dims)
		case 2:
			var v int64
			v, err = f.varint(d, "data_type")
			t.DataType = int32(v)
		case 3:
			t.Segment = true
		case 4:
			t.FloatData, err = f.fixed32s(d, "float_data", t.FloatData)
		case 5:
			var v []int64
			v, err = f.ints(d, "int32_data", nil)
			for _, x := range v {
				t.Int32Data = append(t.Int32Data, int32(x))
			}
		case 6:
			if err = f.want(d, protowire.BytesType, "string_data"); err == nil {
				t.StringData = append(t.StringData, f.b)
			}
		case 7:
			t.Int64Data, err = f.ints(d, "int64_data", t.Int64Data)
		case 8:
			t.Name, err = f.str(d, "name")
		case 9:
			if err = f.want(d, protowire.BytesType, "raw_data"); err == nil {
				t.RawData, t.HasRaw = f.b, true
			}
		case 13:
			if err = f.want(d, protowire.BytesType, "external_data"); err == nil {
				var kv keyValue
				kv, err = decodeKeyValue(f.b)
				t.External = append(t.External, kv)
			}
		case 14:
			var v int64
			v, err = f.varint(d, "data_location")
			t.DataLocation = int32(v)
		case 10:
			t.DoubleData, err = f.fixed64s(d, "double_data", t.DoubleData)
		case 11:
			var v []int64
			v, err = f.ints(d, "uint64_data", nil)
			for _, x := range v {
				t.Uint64Data = append(t.Uint64Data, uint64(x))
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeKeyValue(b []byte) (keyValue, error) {
	d := &decoder{b: b, msg: "StringStringEntryProto"}
	var kv keyValue
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return kv, err
		}
		switch f.num {
		case 1:
			kv.Key, err = f.str(d, "key")
		case 2:
			kv.Value, err = f.str(d, "value")
		}
		if err != nil {
			return kv, err
		}
	}
}

func decodeValueInfo(b []byte, depth int) (*valueInfo, error) {
	d := &decoder{b: b, msg: "ValueInfoProto"}
	v := &valueInfo{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return v, err
		}
		switch f.num {
		case 1:
			v.Name, err = f.str(d, "name")
		case 2:
			if err = f.want(d, protowire.BytesType, "type"); err == nil {
				v.Type, err = decodeType(f.b, depth+1)
			}
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeType(b []byte, depth int) (*typeProto, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: types nested more than %d deep", errProto, maxDepth)
	}
	d := &decoder{b: b, msg: "TypeProto"}
	t := &typeProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return t, err
		}
		switch f.num {
		case 1:
			t.Kind = "tensor"
			if err = f.want(d, protowire.BytesType, "tensor_type"); err == nil {
				err = decodeTensorType(f.b, t)
			}
		case 4:
			t.Kind = "sequence"
		case 5:
			t.Kind = "map"
		case 9:
			t.Kind = "optional"
		case 8:
			t.Kind = "sparse tensor"
		}
		if err != nil {
			return nil, err
		}
	}
}

func decodeTensorType(b []byte, t *typeProto) error {
	d := &decoder{b: b, msg: "TypeProto.Tensor"}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return err
		}
		switch f.num {
		case 1:
			var v int64
			v, err = f.varint(d, "elem_type")
			t.ElemType = int32(v)
		case 2:
			if err = f.want(d, protowire.BytesType, "shape"); err == nil {
				t.HasShape = true
				t.Shape, err = decodeShape(f.b)
			}
		}
		if err != nil {
			return err
		}
	}
}

func decodeShape(b []byte) ([]dimProto, error) {
	d := &decoder{b: b, msg: "TensorShapeProto"}
	dims := []dimProto{}
	for {
		f, ok, err := d.next()
		if err != nil || !ok {
			return dims, err
		}
		if f.num != 1 {
			continue
		}
		if err = f.want(d, protowire.BytesType, "dim"); err != nil {
			return nil, err
		}
		dd := &decoder{b: f.b, msg: "TensorShapeProto.Dimension"}
		var dim dimProto
		for {
			g, ok, err := dd.next()
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			switch g.num {
			case 1:
				dim.Value, err = g.varint(dd, "dim_value")
				dim.HasValue = true
			case 2:
				dim.Param, err = g.str(dd, "dim_param")
			}
			if err != nil {
				return nil, err
			}
		}
		dims = append(dims, dim)
	}
}

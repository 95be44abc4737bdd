package onnx

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// The TensorProto.DataType values.
const (
	dtUndefined  = 0
	dtFloat      = 1
	dtUint8      = 2
	dtInt8       = 3
	dtUint16     = 4
	dtInt16      = 5
	dtInt32      = 6
	dtInt64      = 7
	dtString     = 8
	dtBool       = 9
	dtFloat16    = 10
	dtDouble     = 11
	dtUint32     = 12
	dtUint64     = 13
	dtComplex64  = 14
	dtComplex128 = 15
	dtBFloat16   = 16
)

var onnxTypeNames = map[int32]string{
	dtUndefined: "undefined", dtFloat: "float", dtUint8: "uint8", dtInt8: "int8", dtUint16: "uint16",
	dtInt16: "int16", dtInt32: "int32", dtInt64: "int64", dtString: "string", dtBool: "bool",
	dtFloat16: "float16", dtDouble: "double", dtUint32: "uint32", dtUint64: "uint64",
	dtComplex64: "complex64", dtComplex128: "complex128", dtBFloat16: "bfloat16",
}

// onnxTypeName names an ONNX element type as the spec does.
func onnxTypeName(t int32) string {
	if s, ok := onnxTypeNames[t]; ok {
		return s
	}
	return "type " + strconv.Itoa(int(t))
}

// loomDType maps an ONNX element type to loom's; uint16, uint32, uint64
// and string have no loom dtype.
func loomDType(t int32) (tensor.DType, error) {
	switch t {
	case dtFloat:
		return tensor.Float32, nil
	case dtUint8:
		return tensor.Uint8, nil
	case dtInt8:
		return tensor.Int8, nil
	case dtInt16:
		return tensor.Int16, nil
	case dtInt32:
		return tensor.Int32, nil
	case dtInt64:
		return tensor.Int64, nil
	case dtBool:
		return tensor.Bool, nil
	case dtFloat16:
		return tensor.Float16, nil
	case dtDouble:
		return tensor.Float64, nil
	case dtComplex64:
		return tensor.Complex64, nil
	case dtComplex128:
		return tensor.Complex128, nil
	case dtBFloat16:
		return tensor.BFloat16, nil
	}
	return tensor.Invalid, fmt.Errorf("element type %s has no loom dtype (loom has no uint16, uint32, uint64 or string tensors): %w", onnxTypeName(t), ErrUnsupported)
}

// onnxDType is loomDType's inverse.
func onnxDType(dt tensor.DType) int32 {
	for _, t := range []int32{dtFloat, dtUint8, dtInt8, dtInt16, dtInt32, dtInt64, dtBool, dtFloat16, dtDouble, dtComplex64, dtComplex128, dtBFloat16} {
		if d, _ := loomDType(t); d == dt {
			return t
		}
	}
	return dtUndefined
}

// toTensor builds the tensor a TensorProto holds. dir is the directory
// external data is read from ("" forbids external data).
func (tp *tensorProto) toTensor(dir string) (*tensor.Tensor, error) {
	name := tp.Name
	if name == "" {
		name = "(unnamed)"
	}
	t, err := tp.convert(dir)
	if err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return t, nil
}

func (tp *tensorProto) convert(dir string) (*tensor.Tensor, error) {
	if tp.Segment {
		return nil, fmt.Errorf("segmented tensors: %w", ErrUnsupported)
	}
	dt, err := loomDType(tp.DataType)
	if err != nil {
		return nil, err
	}
	shape := make([]int, len(tp.Dims))
	for i, d := range tp.Dims {
		if d < 0 || d > math.MaxInt32 {
			return nil, fmt.Errorf("dimension %d is %d", i, d)
		}
		shape[i] = int(d)
	}
	nbytes, err := tensor.ByteSize(dt, tensor.Shape(shape))
	if err != nil {
		return nil, err
	}
	n := tensor.Shape(shape).Size()
	if tp.DataLocation == 1 {
		raw, err := readExternal(dir, tp.External, int64(nbytes))
		if err != nil {
			return nil, err
		}
		return fromLE(dt, raw, shape)
	}
	if tp.HasRaw {
		if len(tp.RawData) != nbytes {
			return nil, fmt.Errorf("raw_data has %d bytes for %s (%d bytes)", len(tp.RawData), tensor.TypeString(dt, tensor.Shape(shape)), nbytes)
		}
		return fromLE(dt, tp.RawData, shape)
	}
	count := func(have, per int) error {
		if have != n*per {
			return fmt.Errorf("%d values for %s (%d elements)", have, tensor.TypeString(dt, tensor.Shape(shape)), n)
		}
		return nil
	}
	t, err := tensor.Make(dt, shape...)
	if err != nil {
		return nil, err
	}
	b := t.Bytes()
	switch dt {
	case tensor.Float32, tensor.Complex64:
		per := 1
		if dt == tensor.Complex64 {
			per = 2
		}
		if err := count(len(tp.FloatData), per); err != nil {
			return nil, err
		}
		for i, v := range tp.FloatData {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
	case tensor.Float64, tensor.Complex128:
		per := 1
		if dt == tensor.Complex128 {
			per = 2
		}
		if err := count(len(tp.DoubleData), per); err != nil {
			return nil, err
		}
		for i, v := range tp.DoubleData {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
	case tensor.Int64:
		if err := count(len(tp.Int64Data), 1); err != nil {
			return nil, err
		}
		for i, v := range tp.Int64Data {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	default: // int32_data holds int32, int16, int8, uint8, bool, and the bits of float16 and bfloat16
		if err := count(len(tp.Int32Data), 1); err != nil {
			return nil, err
		}
		es := dt.Size()
		for i, v := range tp.Int32Data {
			switch es {
			case 1:
				b[i] = byte(v)
				if dt == tensor.Bool && v != 0 {
					b[i] = 1
				}
			case 2:
				binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
			case 4:
				binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
			}
		}
	}
	return t, nil
}

// fromLE copies little-endian element bytes into a new (aligned) tensor.
func fromLE(dt tensor.DType, raw []byte, shape []int) (*tensor.Tensor, error) {
	t, err := tensor.Make(dt, shape...)
	if err != nil {
		return nil, err
	}
	copy(t.Bytes(), raw)
	if dt == tensor.Bool {
		for i, v := range t.Bytes() {
			if v > 1 {
				t.Bytes()[i] = 1
			}
		}
	}
	return t, nil
}

// readExternal reads a tensor's bytes from the file its external_data
// names: location (relative to dir, and inside it), offset and length.
func readExternal(dir string, kvs []keyValue, want int64) ([]byte, error) {
	if dir == "" {
		return nil, fmt.Errorf("the tensor's data is in an external file, and the model was not read from a file (use ImportFile, or the BaseDir option)")
	}
	var loc string
	var off, length int64 = 0, -1
	for _, kv := range kvs {
		var err error
		switch kv.Key {
		case "location":
			loc = kv.Value
		case "offset":
			off, err = strconv.ParseInt(kv.Value, 10, 64)
		case "length":
			length, err = strconv.ParseInt(kv.Value, 10, 64)
		case "checksum":
		default:
			return nil, fmt.Errorf("unknown external_data key %q", kv.Key)
		}
		if err != nil || off < 0 || length < -1 {
			return nil, fmt.Errorf("external_data %s=%q is not a byte count", kv.Key, kv.Value)
		}
	}
	if loc == "" {
		return nil, fmt.Errorf("external_data has no location")
	}
	clean := filepath.Clean(filepath.FromSlash(loc))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("external data location %q is outside the model's directory", loc)
	}
	if length >= 0 && length != want {
		return nil, fmt.Errorf("external data length %d, but the tensor has %d bytes", length, want)
	}
	f, err := os.Open(filepath.Join(dir, clean))
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("external data: %w", err)
	}
	if off+want > st.Size() || off+want < off {
		return nil, fmt.Errorf("external data %q: %d bytes at offset %d, but the file has %d", loc, want, off, st.Size())
	}
	buf := make([]byte, want)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("external data %q: %w", loc, err)
	}
	return buf, nil
}

// ReadTensor reads one serialised TensorProto (an input_K.pb or
// output_K.pb of the ONNX backend test data) and returns its name and
// value.
func ReadTensor(r io.Reader) (string, *tensor.Tensor, error) {
	b, err := readLimited(r)
	if err != nil {
		return "", nil, err
	}
	tp, err := decodeTensor(b)
	if err != nil {
		return "", nil, err
	}
	t, err := tp.toTensor("")
	if err != nil {
		return "", nil, fmt.Errorf("onnx: %w", err)
	}
	return tp.Name, t, nil
}

// ReadTensorFile is ReadTensor of a file.
func ReadTensorFile(path string) (string, *tensor.Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, fmt.Errorf("onnx: %w", err)
	}
	defer f.Close()
	name, t, err := ReadTensor(f)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", path, err)
	}
	return name, t, nil
}

// readLimited reads all of r, refusing more than MaxModelBytes.
func readLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxModelBytes+1))
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	if int64(len(b)) > MaxModelBytes {
		return nil, fmt.Errorf("onnx: input larger than MaxModelBytes (%d bytes; protobuf's own limit is 2 GiB: larger models keep their weights in external data files)", MaxModelBytes)
	}
	return b, nil
}

// MaxModelBytes is the largest serialised model (or tensor) read: 2 GiB,
// protobuf's own limit for one message.
const MaxModelBytes = 2 << 30

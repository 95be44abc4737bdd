package tensor

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// npyFile returns a .npy file of the given version (1, 2 or 3) with the
// given header, unpadded, and data.
func npyFile(version byte, header string, data ...byte) []byte {
	b := append([]byte(npyMagic), version, 0)
	if version == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(header)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(header)))
	}
	return slices.Concat(b, []byte(header), data)
}

// npyHdr returns the header NumPy writes for descr, fortran order and the
// shape tuple (written as Python writes it, "(2, 3)", "(5,)", "()").
func npyHdr(descr string, fortran bool, shape string) string {
	f := "False"
	if fortran {
		f = "True"
	}
	return fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }\n", descr, f, shape)
}

// npyDTypes is every dtype .npy files hold: all but BFloat16.
func npyDTypes() []DType {
	return slices.DeleteFunc(DTypes(), func(d DType) bool { return d == BFloat16 })
}

// readNpyAll reads file as ReadNpy does from a seeker and from a stream
// read a byte at a time, checks that both agree with want, and fails the
// test otherwise.
func readNpyAll(t *testing.T, file []byte, want *Tensor) {
	t.Helper()
	for how, r := range readers(file) {
		got, err := ReadNpy(r(), NpyLimits{})
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if d := diffTensors(map[string]*Tensor{"": got}, map[string]*Tensor{"": want}); d != "" {
			t.Errorf("%s: %s", how, d)
		}
	}
}

func TestNpyRoundTrip(t *testing.T) {
	all := map[string]*Tensor{}
	for _, dt := range npyDTypes() {
		for name, x := range roundTripTensors(dt) {
			var buf bytes.Buffer
			if err := WriteNpy(&buf, x); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if buf.Len() < 64 || (buf.Len()-len(x.Bytes()))%npyAlign != 0 {
				t.Errorf("%s: header of %d bytes is not aligned to %d", name, buf.Len()-len(x.Bytes()), npyAlign)
			}
			readNpyAll(t, buf.Bytes(), x)
			all[name] = x
		}
	}
	for _, compress := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteNpz(&buf, all, compress); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNpz(bytes.NewReader(buf.Bytes()), int64(buf.Len()), NpyLimits{})
		if err != nil {
			t.Fatalf("compress %v: %v", compress, err)
		}
		if d := diffTensors(got, all); d != "" {
			t.Errorf("compress %v: %s", compress, d)
		}
		// Deterministic: writing again gives the same bytes.
		var again bytes.Buffer
		if err := WriteNpz(&again, all, compress); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Errorf("compress %v: writing twice gives different archives (%v)", compress, err)
		}
		// Entries are named "<name>.npy", sorted, with the asked method.
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
			if want := map[bool]uint16{false: zip.Store, true: zip.Deflate}[compress]; f.Method != want {
				t.Errorf("entry %s has method %d, want %d", f.Name, f.Method, want)
			}
		}
		want := slices.Sorted(maps.Keys(all))
		for i := range want {
			want[i] += ".npy"
		}
		if !slices.Equal(names, want) {
			t.Errorf("entries %q, want %q", names, want)
		}
	}
}

// TestNpyWriteHeader checks the exact bytes WriteNpy writes: the header
// numpy.save writes for the same array (less NumPy 1.24's extra spaces
// for growing the last axis, which readers ignore).
func TestNpyWriteHeader(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteNpy(&buf, must(New([]int16{1, -2, 3, 4, 5, 6}, 2, 3))); err != nil {
		t.Fatal(err)
	}
	h := "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }"
	// 10 bytes of magic, version and length, then the 60-byte header,
	// spaces and '\n' to 128 bytes in all, the first multiple of 64 that
	// holds them: the length is 118, 0x76.
	want := slices.Concat([]byte("\x93NUMPY\x01\x00\x76\x00"), []byte(h), bytes.Repeat([]byte(" "), 128-10-len(h)-1), []byte("\n"),
		[]byte{1, 0, 0xfe, 0xff, 3, 0, 4, 0, 5, 0, 6, 0})
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("wrote\n%q\nwant\n%q", buf.Bytes(), want)
	}
	buf.Reset()
	if err := WriteNpy(&buf, Scalar(true)); err != nil {
		t.Fatal(err)
	}
	if h := "{'descr': '|b1', 'fortran_order': False, 'shape': (), }"; !bytes.HasPrefix(buf.Bytes()[10:], []byte(h)) {
		t.Errorf("scalar header %q, want %q", buf.Bytes()[10:], h)
	}
	buf.Reset()
	if err := WriteNpy(&buf, must(New([]float32{1, 2, 3}))); err != nil {
		t.Fatal(err)
	}
	if h := "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"; !bytes.HasPrefix(buf.Bytes()[10:], []byte(h)) {
		t.Errorf("vector header %q, want %q", buf.Bytes()[10:], h)
	}
}

// TestNpyGolden reads hand-written files: big-endian data, Fortran order,
// the other versions and the header spellings NumPy and Python allow.
func TestNpyGolden(t *testing.T) {
	cases := []struct {
		name string
		file []byte
		want *Tensor
	}{
		// 0x00000102 = 258; 0xfffffffe = -2 in two's complement.
		{"big-endian int32", npyFile(1, npyHdr(">i4", false, "(2,)"), 0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe),
			must(New([]int32{258, -2}))},
		// 0x400921fb54442d18 is the float64 nearest pi (math.Float64bits(math.Pi)).
		{"big-endian float64 scalar", npyFile(1, npyHdr(">f8", false, "()"), 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18),
			Scalar(math.Pi)},
		// IEEE half: 0x3c00 is 1.0, 0xc000 is -2.0, 0x7c00 is +Inf.
		{"big-endian float16", npyFile(1, npyHdr(">f2", false, "(3,)"), 0x3c, 0x00, 0xc0, 0x00, 0x7c, 0x00),
			must(New([]F16{0x3c00, 0xc000, 0x7c00}))},
		// Each part swapped on its own: float32 0x3f800000 is 1.0, 0xc0000000 is -2.0.
		{"big-endian complex64", npyFile(1, npyHdr(">c8", false, "(1,)"), 0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0),
			must(New([]complex64{complex(1, -2)}))},
		// float64 0x3ff0000000000000 is 1.0, 0x4008000000000000 is 3.0.
		{"big-endian complex128", npyFile(1, npyHdr(">c16", false, "()"), 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x40, 0x08, 0, 0, 0, 0, 0, 0),
			Scalar(complex(1.0, 3.0))},
		// The 2x3 matrix [[1 2 3] [4 5 6]] stored column by column: 1 4 2 5 3 6.
		{"fortran int16", npyFile(1, npyHdr("<i2", true, "(2, 3)"), 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6, 0),
			must(New([]int16{1, 2, 3, 4, 5, 6}, 2, 3))},
		// Element (i,j,k) of a 2x2x2 Fortran array is at offset i+2j+4k; the
		// data is 0..7, so element (i,j,k) is i+2j+4k, and in C order
		// (k fastest) they are 0 4 2 6 1 5 3 7.
		{"fortran rank 3", npyFile(1, npyHdr("|u1", true, "(2, 2, 2)"), 0, 1, 2, 3, 4, 5, 6, 7),
			must(New([]uint8{0, 4, 2, 6, 1, 5, 3, 7}, 2, 2, 2))},
		// [[1 2] [3 4]] column by column, big-endian: 1 3 2 4.
		{"fortran big-endian", npyFile(1, npyHdr(">i4", true, "(2, 2)"), 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 2, 0, 0, 0, 4),
			must(New([]int32{1, 2, 3, 4}, 2, 2))},
		{"fortran vector", npyFile(1, npyHdr("<i8", true, "(2,)"), 7, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0),
			must(New([]int64{7, 9}))},
		{"fortran empty", npyFile(1, npyHdr("<f4", true, "(0, 3)")), Zeros(Float32, 0, 3)},
		{"version 2.0", npyFile(2, npyHdr("|i1", false, "(2,)"), 0xff, 5), must(New([]int8{-1, 5}))},
		{"version 3.0 UTF-8", npyFile(3, npyHdr("|b1", false, "(2,)"), 1, 0), must(New([]bool{true, false}))},
		// Python 2's NumPy wrote long integers with an L suffix; NumPy still reads them in 1.0 and 2.0.
		{"long ints", npyFile(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (2L, 1L), }", 1, 0, 2, 0), must(New([]int16{1, 2}, 2, 1))},
		{"double quotes, any key order, no padding", npyFile(1, `{"shape": (1,), "fortran_order": False, "descr": "<f4"}`, 0, 0, 0x80, 0x3f),
			must(New([]float32{1}))},
		{"no byte order", npyFile(1, npyHdr("f4", false, "(1,)"), 0, 0, 0x80, 0x3f), must(New([]float32{1}))},
		{"native byte order", npyFile(1, npyHdr("=f4", false, "(1,)"), 0, 0, 0x80, 0x3f), must(New([]float32{1}))},
		{"big-endian bytes", npyFile(1, npyHdr(">u1", false, "(2,)"), 1, 2), must(New([]uint8{1, 2}))},
		{"whitespace", npyFile(1, "\t{ 'descr' : '<i2' ,\n'fortran_order':True,'shape':( 2 , ) }  \n", 1, 0, 2, 0), must(New([]int16{1, 2}))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { readNpyAll(t, c.file, c.want) })
	}
}

// TestNpyCorrupt checks that every malformed file is an error that names
// the problem, read from a seeker and from a stream.
func TestNpyCorrupt(t *testing.T) {
	ok := npyHdr("<i2", false, "(1,)")
	cases := []struct {
		name, want string
		file       []byte
		limits     NpyLimits
	}{
		{"empty", "too short for the 6-byte magic", nil, NpyLimits{}},
		{"magic", `magic string is "\x93NUMPZ"`, slices.Concat([]byte("\x93NUMPZ\x01\x00\x00\x00")), NpyLimits{}},
		{"version 4", "format version 4.0 is not supported", npyFile(4, ok, 1, 0), NpyLimits{}},
		{"version 1.1", "format version 1.1 is not supported", slices.Concat([]byte(npyMagic), []byte{1, 1, 0, 0}), NpyLimits{}},
		{"no length", "too short for the 2-byte header length", []byte(npyMagic + "\x01\x00\x05"), NpyLimits{}},
		{"no length v2", "too short for the 4-byte header length", []byte(npyMagic + "\x02\x00\x05\x00"), NpyLimits{}},
		{"header truncated", "header length 60 exceeds the 5 bytes that follow it", slices.Concat([]byte(npyMagic+"\x01\x00\x3c\x00"), []byte("{'des")), NpyLimits{}},
		{"header limit", "header length 58 exceeds the limit of 20 bytes (NpyLimits.MaxHeaderBytes)", npyFile(1, ok, 1, 0), NpyLimits{MaxHeaderBytes: 20}},
		{"header big v2", "header length 4294967295 exceeds the limit of 10000 bytes", slices.Concat([]byte(npyMagic + "\x02\x00\xff\xff\xff\xff")), NpyLimits{}},
		{"not a dict", "header is a list of 0 items, want a dict", npyFile(1, "[]"), NpyLimits{}},
		{"empty header", "header ends at byte 0, where a value should start", npyFile(1, ""), NpyLimits{}},
		{"unclosed dict", "header { at byte 0 is not closed", npyFile(1, "{'descr': '<i2'"), NpyLimits{}},
		{"unclosed tuple", "header ( at byte 10 is not closed", npyFile(1, "{'shape': (1, 2"), NpyLimits{}},
		{"unclosed string", "header string at byte 1 is not closed", npyFile(1, "{'descr"), NpyLimits{}},
		{"escape", "holds a backslash or newline", npyFile(1, `{'descr': '<\x69\x32'}`), NpyLimits{}},
		{"missing colon", "header dict key the string \"descr\" is not followed by ':'", npyFile(1, "{'descr' '<i2'}"), NpyLimits{}},
		{"missing comma", "want ',' or '}'", npyFile(1, "{'descr': '<i2' 'shape': ()}"), NpyLimits{}},
		{"missing tuple comma", `want ',' or ')'`, npyFile(1, "{'shape': (1 2)}"), NpyLimits{}},
		{"trailing text", "header has 2 bytes after its dict, at header byte 58", npyFile(1, strings.TrimSuffix(ok, "\n")+" x\n", 1, 0), NpyLimits{}},
		{"expression", `header has '+' at byte 39`, npyFile(1, "{'descr': '<i2', 'fortran_order': False+1, 'shape': (1,)}"), NpyLimits{}},
		{"name", `header has the name "false" at byte 34`, npyFile(1, "{'descr': '<i2', 'fortran_order': false, 'shape': (1,)}"), NpyLimits{}},
		{"deep", "header nests literals deeper than 16 levels", npyFile(1, "{'shape': "+strings.Repeat("[", 40)), NpyLimits{}},
		{"missing key", `header has no "fortran_order" key`, npyFile(1, "{'descr': '<i2', 'shape': (1,)}", 1, 0), NpyLimits{}},
		{"extra key", `header has unknown key "order"; want exactly`, npyFile(1, "{'descr': '<i2', 'order': 'C', 'fortran_order': False, 'shape': (1,)}"), NpyLimits{}},
		{"repeated key", `header has key "descr" twice`, npyFile(1, "{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (1,)}"), NpyLimits{}},
		{"integer key", "header has key the integer 1, want the strings", npyFile(1, "{1: 2}"), NpyLimits{}},
		{"descr not string", "header: 'descr' is the integer 4, want a type string", npyFile(1, "{'descr': 4, 'fortran_order': False, 'shape': ()}"), NpyLimits{}},
		{"structured", "structured dtypes (record arrays) are not supported", npyFile(1, "{'descr': [('x', '<f4'), ('y', '<i2')], 'fortran_order': False, 'shape': (1,)}"), NpyLimits{}},
		{"object", `descr "|O" is NumPy's object (pickled Python objects), which loom does not read`, npyFile(1, npyHdr("|O", false, "(1,)")), NpyLimits{}},
		{"unicode", `descr "<U5" is NumPy's str`, npyFile(1, npyHdr("<U5", false, "(1,)")), NpyLimits{}},
		{"datetime", `descr "<M8[ns]" is NumPy's datetime64`, npyFile(1, npyHdr("<M8[ns]", false, "(1,)")), NpyLimits{}},
		{"uint32", `descr "<u4" is NumPy's uint32, which loom does not read`, npyFile(1, npyHdr("<u4", false, "(1,)")), NpyLimits{}},
		{"long double", `descr "<f16" is NumPy's float128`, npyFile(1, npyHdr("<f16", false, "(1,)")), NpyLimits{}},
		{"unknown descr", `descr "<x3" is not a supported type string; loom reads b1, i1`, npyFile(1, npyHdr("<x3", false, "(1,)")), NpyLimits{}},
		{"empty descr", `descr "" is not a supported type string`, npyFile(1, npyHdr("", false, "(1,)")), NpyLimits{}},
		{"fortran not bool", "header: 'fortran_order' is the integer 0, want True or False", npyFile(1, "{'descr': '<i2', 'fortran_order': 0, 'shape': ()}"), NpyLimits{}},
		{"shape list", "header: 'shape' is a list of 1 items, want a tuple", npyFile(1, npyHdr("<i2", false, "[1]")), NpyLimits{}},
		{"shape int", "header: 'shape' is the integer 3, want a tuple", npyFile(1, npyHdr("<i2", false, "(3)")), NpyLimits{}},
		{"shape negative", "header: 'shape'[1] is the integer -2, want a non-negative integer", npyFile(1, npyHdr("<i2", false, "(1, -2)")), NpyLimits{}},
		{"shape string", `header: 'shape'[0] is the string "1", want`, npyFile(1, npyHdr("<i2", false, "('1',)")), NpyLimits{}},
		{"shape huge int", `header integer "99999999999999999999" at byte 51 is not a 64-bit integer`, npyFile(1, npyHdr("<i2", false, "(99999999999999999999,)")), NpyLimits{}},
		{"leading zero", `header integer "01" at byte 51 has a leading zero`, npyFile(1, npyHdr("<i2", false, "(01,)")), NpyLimits{}},
		{"long int in 3.0", `want ',' or ')'`, npyFile(3, npyHdr("<i2", false, "(1L,)"), 1, 0), NpyLimits{}},
		{"rank 65", "'shape' has 65 dimensions, over the limit of 64", npyFile(1, npyHdr("<i2", false, "("+strings.Repeat("1, ", 65)+")")), NpyLimits{}},
		{"overflow", "holds more than 68719476736 bytes of data (NpyLimits.MaxTotalBytes)", npyFile(1, npyHdr("<i8", false, "(4294967296, 4294967296)")), NpyLimits{}},
		{"data limit", "shape [3] of <i2 holds more than 5 bytes of data (NpyLimits.MaxTotalBytes)", npyFile(1, npyHdr("<i2", false, "(3,)"), 1, 0, 2, 0, 3, 0), NpyLimits{MaxTotalBytes: 5}},
		{"data truncated", "data is truncated: shape [3] of <i2 needs 6 bytes, but 5 follow the header", npyFile(1, npyHdr("<i2", false, "(3,)"), 1, 0, 2, 0, 3), NpyLimits{}},
		{"bool byte", "data: bool element 1 is byte 2, want 0 or 1", npyFile(1, npyHdr("|b1", false, "(2,)"), 1, 2), NpyLimits{}},
		{"invalid UTF-8 in 3.0", "header of version 3.0 is not valid UTF-8 (at header byte 11)", npyFile(3, "{'descr': '\xff'}"), NpyLimits{}},
		{"negative limit", "limits: MaxHeaderBytes is -1", npyFile(1, ok, 1, 0), NpyLimits{MaxHeaderBytes: -1}},
		{"negative total", "limits: MaxTotalBytes is -1", npyFile(1, ok, 1, 0), NpyLimits{MaxTotalBytes: -1}},
		{"negative arrays", "limits: MaxArrays is -1", npyFile(1, ok, 1, 0), NpyLimits{MaxArrays: -1}},
	}
	for _, c := range cases {
		for how, r := range readers(c.file) {
			_, err := ReadNpy(r(), c.limits)
			if err == nil {
				t.Errorf("%s, %s: no error", c.name, how)
				continue
			}
			if !strings.HasPrefix(err.Error(), "tensor: npy: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, %s: error %q, want it to contain %q", c.name, how, err, c.want)
			}
		}
	}
	if _, err := ReadNpy(nil, NpyLimits{}); err == nil || err.Error() != "tensor: npy: nil io.Reader" {
		t.Errorf("nil reader: %v", err)
	}
}

// TestNpyWriteErrors checks the tensors WriteNpy and WriteNpz refuse, and
// that nothing is written for them.
func TestNpyWriteErrors(t *testing.T) {
	cases := []struct {
		name string
		t    *Tensor
		want string
	}{
		{"nil", nil, "tensor is nil"},
		{"bfloat16", Zeros(BFloat16, 2), "dtype bfloat16 has no NumPy equivalent (NumPy has no bfloat16): cast the tensor to float32 first"},
		{"invalid dtype", &Tensor{dtype: numDTypes, shape: Shape{}, data: []byte{0}}, "invalid dtype"},
		{"short data", &Tensor{dtype: Int32, shape: Shape{2}, data: make([]byte, 4)}, "holds 4 bytes, which do not match its type i32[2]"},
		{"rank 65", &Tensor{dtype: Uint8, shape: make(Shape, 65), data: []byte{}}, "rank 65, over NumPy's limit of 64"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		err := WriteNpy(&buf, c.t)
		if err == nil || !strings.HasPrefix(err.Error(), "tensor: npy: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteNpy %s: %v, want %q", c.name, err, c.want)
		}
		err = WriteNpz(&buf, map[string]*Tensor{"a": Scalar(int8(1)), "b": c.t}, true)
		if err == nil || !strings.HasPrefix(err.Error(), `tensor: npz: array "b": `) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WriteNpz %s: %v, want %q", c.name, err, c.want)
		}
		if buf.Len() > 0 {
			t.Errorf("%s: %d bytes written", c.name, buf.Len())
		}
	}
	if err := WriteNpz(io.Discard, map[string]*Tensor{"\xff": Scalar(int8(1))}, false); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
		t.Errorf("invalid name: %v", err)
	}
	if err := WriteNpy(failWriter{}, Scalar(1.0)); !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "writing the header") {
		t.Errorf("failing writer: %v", err)
	}
	if err := WriteNpz(failWriter{}, map[string]*Tensor{"a": Scalar(1.0)}, false); err == nil {
		t.Error("WriteNpz to a failing writer: no error")
	}
	if err := WriteNpy(nil, Scalar(1.0)); err == nil {
		t.Error("WriteNpy to nil: no error")
	}
}

// TestNpyConsecutive reads arrays written one after another to one
// stream, as repeated numpy.save calls to an open file write them.
func TestNpyConsecutive(t *testing.T) {
	a, b := must(New([]int32{1, 2, 3})), Scalar(2.5)
	var buf bytes.Buffer
	if err := WriteNpy(&buf, a); err != nil {
		t.Fatal(err)
	}
	if err := WriteNpy(&buf, b); err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(buf.Bytes())
	for _, want := range []*Tensor{a, b} {
		got, err := ReadNpy(r, NpyLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if d := diffTensors(map[string]*Tensor{"": got}, map[string]*Tensor{"": want}); d != "" {
			t.Error(d)
		}
	}
	if r.Len() != 0 {
		t.Errorf("%d bytes left", r.Len())
	}
}

// TestNpyBoundedAllocation checks that a header claiming more data than
// the input holds does not make ReadNpy allocate what it claims.
func TestNpyBoundedAllocation(t *testing.T) {
	file := npyFile(1, npyHdr("|u1", false, "(17179869184,)"), 1, 2, 3) // 16 GiB claimed, 3 bytes present
	for how, r := range map[string]io.Reader{"seeker": bytes.NewReader(file), "stream": streamReader{bytes.NewReader(file)}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadNpy(r, NpyLimits{})
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("%s: %v, want a truncation error", how, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
			t.Errorf("%s: allocated %d bytes before failing", how, n)
		}
	}
}

// npzOf returns a zip archive of the given entries (name, contents),
// stored or deflated.
func npzOf(t *testing.T, method uint16, entries ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(entries); i += 2 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: entries[i], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(entries[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestNpzCorrupt checks the .npz errors: the archive, its entry names,
// the arrays in the entries and the limits.
func TestNpzCorrupt(t *testing.T) {
	arr := string(npyFile(1, npyHdr("<i2", false, "(2,)"), 1, 0, 2, 0))
	var bomb bytes.Buffer // 64 MiB of zeros deflated to about 64 KiB
	{
		zw := zip.NewWriter(&bomb)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "z.npy", Method: zip.Deflate})
		w.Write(npyFile(1, npyHdr("|u1", false, "(67108864,)")))
		w.Write(make([]byte, 64<<20))
		zw.Close()
	}
	corruptCRC := npzOf(t, zip.Store, "a.npy", arr)
	i := bytes.Index(corruptCRC, []byte{1, 0, 2, 0})
	corruptCRC[i] = 3 // the data no longer matches the checksum

	cases := []struct {
		name, want string
		file       []byte
		limits     NpyLimits
	}{
		{"not zip", "not a valid zip archive", []byte("not a zip file at all"), NpyLimits{}},
		{"not npy name", `entry "a.txt" is not named *.npy`, npzOf(t, zip.Store, "a.txt", arr), NpyLimits{}},
		{"twice", `archive has entry "a.npy" twice`, npzOf(t, zip.Store, "a.npy", arr, "a.npy", arr), NpyLimits{}},
		{"bad array", `entry "b.npy": magic string is "garbag"`, npzOf(t, zip.Deflate, "a.npy", arr, "b.npy", "garbage data"), NpyLimits{}},
		{"trailing", `entry "a.npy": trailing bytes follow the array's data`, npzOf(t, zip.Deflate, "a.npy", arr+"x"), NpyLimits{}},
		{"checksum", `entry "a.npy": after the array's data: zip: checksum error`, corruptCRC, NpyLimits{}},
		{"too many", "archive has 2 entries, over the limit of 1 (NpyLimits.MaxArrays)", npzOf(t, zip.Store, "a.npy", arr, "b.npy", arr), NpyLimits{MaxArrays: 1}},
		// Each array is 4 bytes: the second one finds 2 of the 6 bytes left.
		{"total", `entry "b.npy": header: shape [2] of <i2 holds more than 2 bytes`, npzOf(t, zip.Store, "a.npy", arr, "b.npy", arr), NpyLimits{MaxTotalBytes: 6}},
		{"bomb", `entry "z.npy": header: shape [67108864] of |u1 holds more than 1048576 bytes`, bomb.Bytes(), NpyLimits{MaxTotalBytes: 1 << 20}},
		{"negative limit", "limits: MaxArrays is -3", npzOf(t, zip.Store), NpyLimits{MaxArrays: -3}},
	}
	for _, c := range cases {
		_, err := ReadNpz(bytes.NewReader(c.file), int64(len(c.file)), c.limits)
		if err == nil || !strings.HasPrefix(err.Error(), "tensor: npz: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	if _, err := ReadNpz(nil, 0, NpyLimits{}); err == nil {
		t.Error("nil reader: no error")
	}

	// The bomb, read with the default limits, succeeds: the limit is policy.
	// Read with a small one, it fails having allocated little.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadNpz(bytes.NewReader(bomb.Bytes()), int64(bomb.Len()), NpyLimits{MaxTotalBytes: 1 << 20})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("bomb: no error")
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("bomb: allocated %d bytes before failing", n)
	}
	// An empty archive is no arrays.
	empty := npzOf(t, zip.Store)
	if got, err := ReadNpz(bytes.NewReader(empty), int64(len(empty)), NpyLimits{}); err != nil || len(got) != 0 {
		t.Errorf("empty archive: %v, %v", got, err)
	}
}

// TestNpyFile writes and reads .npy and .npz files on disk.
func TestNpyFile(t *testing.T) {
	dir := t.TempDir()
	x := must(New([]float64{1, 2, 3, 4}, 2, 2))
	p := filepath.Join(dir, "x.npy")
	if err := WriteNpyFile(p, x); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNpyFile(p, NpyLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTensors(map[string]*Tensor{"x": got}, map[string]*Tensor{"x": x}); d != "" {
		t.Error(d)
	}
	// A file must end with its array.
	b, _ := os.ReadFile(p)
	os.WriteFile(p, append(b, 0), 0o644)
	if _, err := ReadNpyFile(p, NpyLimits{}); err == nil || !strings.Contains(err.Error(), "trailing bytes") {
		t.Errorf("trailing byte: %v", err)
	}
	if _, err := ReadNpyFile(filepath.Join(dir, "missing.npy"), NpyLimits{}); err == nil || !strings.HasPrefix(err.Error(), "tensor: ReadNpyFile: ") {
		t.Errorf("missing file: %v", err)
	}
	if err := WriteNpyFile(p, Zeros(BFloat16, 1)); err == nil || !strings.Contains(err.Error(), "bfloat16") {
		t.Errorf("bfloat16 file: %v", err)
	}

	z := filepath.Join(dir, "x.npz")
	all := map[string]*Tensor{"x": x, "y": Scalar(int64(-7))}
	if err := WriteNpzFile(z, all, true); err != nil {
		t.Fatal(err)
	}
	gotAll, err := ReadNpzFile(z, NpyLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if d := diffTensors(gotAll, all); d != "" {
		t.Error(d)
	}
	if _, err := ReadNpzFile(filepath.Join(dir, "missing.npz"), NpyLimits{}); err == nil || !strings.HasPrefix(err.Error(), "tensor: ReadNpzFile: ") {
		t.Errorf("missing file: %v", err)
	}
}

// npyPython is the script TestNpyNumPy runs: "write DIR SPEC" saves the
// arrays SPEC (JSON) describes with NumPy, each as DIR/NAME.npy and all of
// them in DIR/plain.npz (numpy.savez) and DIR/compressed.npz
// (numpy.savez_compressed); "check DIR SPEC" loads the same files,
// written by Go, and prints a line "ok ..." or "FAIL ..." per array and
// file. The values are those of npyExpected.
const npyPython = `
import sys, json
import numpy as np
mode, d, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
def make(c):
    n = int(np.prod(c['shape'], dtype=np.int64))
    i = np.arange(n)
    dt = np.dtype(c['descr'])
    v = (i % 7) * 1.25 - (0 if dt.kind in 'ub' else 3)
    if dt.kind == 'c':
        v = v + 1j * ((i % 5) - 2)
    return v.astype(dt).reshape(c['shape'])
if mode == 'write':
    arrays = {}
    for c in spec:
        a = make(c)
        if c['fortran']:
            a = np.asfortranarray(a)
        with open(d + '/' + c['name'] + '.npy', 'wb') as f:
            np.lib.format.write_array(f, a, version=tuple(c['version']) if c['version'] else None)
        arrays[c['name']] = a
    np.savez(d + '/plain.npz', **arrays)
    np.savez_compressed(d + '/compressed.npz', **arrays)
else:
    npz = {k: np.load(d + '/' + k) for k in ('plain.npz', 'compressed.npz')}
    for c in spec:
        want = make(c)
        for src, got in [('npy', np.load(d + '/' + c['name'] + '.npy'))] + [(k, z[c['name']]) for k, z in npz.items()]:
            ok = got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
            print('ok' if ok else 'FAIL', c['name'], src, got.dtype.str, got.shape, 'want', want.dtype.str, want.shape)
`

// npyCase is one array of TestNpyNumPy.
type npyCase struct {
	Name    string `json:"name"`
	Descr   string `json:"descr"`
	Shape   []int  `json:"shape"`
	Fortran bool   `json:"fortran"`
	Version []int  `json:"version"`
}

// npyExpected returns the tensor the script's make(c) gives: element i
// (in C order) is (i%7)*1.25 - 3 (without the -3 for bool and uint8),
// plus (i%5 - 2) imaginary for complex, converted as NumPy's astype
// converts (truncation toward zero for integers, != 0 for bool), which is
// how FromFloat64s converts.
func npyExpected(c npyCase) *Tensor {
	code := strings.TrimLeft(c.Descr, "<>|=")
	dt := DType(Invalid)
	for _, d := range npyDTypes() {
		if npyDescrs[d][1:] == code {
			dt = d
		}
	}
	n := Shape(c.Shape).Size()
	vals := make([]complex128, n)
	for i := range vals {
		v := float64(i%7) * 1.25
		if dt != Bool && dt != Uint8 {
			v -= 3
		}
		vals[i] = complex(v, 0)
		if dt.IsComplex() {
			vals[i] += complex(0, float64(i%5-2))
		}
	}
	if dt.IsComplex() {
		return must(FromComplex128s(dt, vals, c.Shape...))
	}
	re := make([]float64, n)
	for i, v := range vals {
		re[i] = real(v)
	}
	return must(FromFloat64s(dt, re, c.Shape...))
}

// runNumPy runs the script with args under /usr/bin/python3, skipping the
// test if Python or NumPy is missing.
func runNumPy(t *testing.T, args ...string) string {
	t.Helper()
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no %s: %v", python, err)
	}
	if out, err := exec.Command(python, "-c", "import numpy").CombinedOutput(); err != nil {
		t.Skipf("NumPy is not installed for %s: %v: %s", python, err, out)
	}
	out, err := exec.Command(python, append([]string{"-c", npyPython}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", args[0], err, out)
	}
	return string(out)
}

// TestNpyNumPy round-trips arrays through NumPy itself: NumPy writes .npy
// files (both byte orders, Fortran order, versions 1.0 to 3.0) and .npz
// archives (stored and compressed) that Go reads, and NumPy reads the
// files Go writes.
func TestNpyNumPy(t *testing.T) {
	var fromNumPy []npyCase
	for _, dt := range npyDTypes() {
		d := npyDescrs[dt]
		fromNumPy = append(fromNumPy, npyCase{Name: "le_" + dt.String(), Descr: d, Shape: []int{2, 3}})
		if dt.Size() > 1 {
			fromNumPy = append(fromNumPy, npyCase{Name: "be_" + dt.String(), Descr: ">" + d[1:], Shape: []int{3, 2}})
		}
	}
	fromNumPy = append(fromNumPy,
		npyCase{Name: "fortran_i8", Descr: "<i8", Shape: []int{2, 3, 4}, Fortran: true},
		npyCase{Name: "fortran_be_f8", Descr: ">f8", Shape: []int{3, 4}, Fortran: true},
		npyCase{Name: "fortran_c8", Descr: "<c8", Shape: []int{2, 3}, Fortran: true},
		npyCase{Name: "fortran_be_c16", Descr: ">c16", Shape: []int{2, 2, 3}, Fortran: true},
		npyCase{Name: "fortran_b1", Descr: "|b1", Shape: []int{4, 3}, Fortran: true},
		npyCase{Name: "scalar_f8", Descr: "<f8", Shape: []int{}},
		npyCase{Name: "scalar_be_i2", Descr: ">i2", Shape: []int{}},
		npyCase{Name: "empty_f4", Descr: "<f4", Shape: []int{0, 3}},
		npyCase{Name: "vector_u1", Descr: "|u1", Shape: []int{9}},
		npyCase{Name: "v2_i2", Descr: "<i2", Shape: []int{2, 5}, Version: []int{2, 0}},
		npyCase{Name: "v3_f2", Descr: ">f2", Shape: []int{5, 2}, Fortran: true, Version: []int{3, 0}},
	)
	t.Run("numpy to go", func(t *testing.T) {
		dir := t.TempDir()
		spec, _ := json.Marshal(fromNumPy)
		runNumPy(t, "write", dir, string(spec))
		plain, err := ReadNpzFile(filepath.Join(dir, "plain.npz"), NpyLimits{})
		if err != nil {
			t.Fatal(err)
		}
		compressed, err := ReadNpzFile(filepath.Join(dir, "compressed.npz"), NpyLimits{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]*Tensor{}
		for _, c := range fromNumPy {
			want[c.Name] = npyExpected(c)
			p := filepath.Join(dir, c.Name+".npy")
			got, err := ReadNpyFile(p, NpyLimits{})
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
				continue
			}
			if d := diffTensors(map[string]*Tensor{c.Name: got}, map[string]*Tensor{c.Name: want[c.Name]}); d != "" {
				t.Errorf("%s.npy: %s", c.Name, d)
			}
			// Check that NumPy wrote what the case means to test.
			file, _ := os.ReadFile(p)
			if c.Fortran && !bytes.Contains(file, []byte("'fortran_order': True")) {
				t.Errorf("%s.npy: NumPy did not write Fortran order: %q", c.Name, file[:min(len(file), 128)])
			}
			if c.Version != nil && file[6] != byte(c.Version[0]) {
				t.Errorf("%s.npy: NumPy wrote version %d, want %d", c.Name, file[6], c.Version[0])
			}
		}
		if d := diffTensors(plain, want); d != "" {
			t.Errorf("plain.npz: %s", d)
		}
		if d := diffTensors(compressed, want); d != "" {
			t.Errorf("compressed.npz: %s", d)
		}
	})
	t.Run("go to numpy", func(t *testing.T) {
		dir := t.TempDir()
		var cases []npyCase
		all := map[string]*Tensor{}
		for _, dt := range npyDTypes() {
			for i, shape := range [][]int{{2, 3}, {}, {0, 2}, {5}, {2, 1, 3}} {
				c := npyCase{Name: fmt.Sprintf("go_%v_%d", dt, i), Descr: npyDescrs[dt], Shape: shape}
				cases = append(cases, c)
				all[c.Name] = npyExpected(c)
				if err := WriteNpyFile(filepath.Join(dir, c.Name+".npy"), all[c.Name]); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := WriteNpzFile(filepath.Join(dir, "plain.npz"), all, false); err != nil {
			t.Fatal(err)
		}
		if err := WriteNpzFile(filepath.Join(dir, "compressed.npz"), all, true); err != nil {
			t.Fatal(err)
		}
		spec, _ := json.Marshal(cases)
		out := runNumPy(t, "check", dir, string(spec))
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3*len(cases) {
			t.Errorf("NumPy printed %d lines, want %d:\n%s", len(lines), 3*len(cases), out)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "ok ") {
				t.Errorf("NumPy: %s", l)
			}
		}
	})
}

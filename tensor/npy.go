package tensor

// The NumPy .npy format (numpy.lib.format; NEP 1):
//
//	6 bytes   the magic string "\x93NUMPY"
//	2 bytes   the format version, major then minor: 1.0, 2.0 or 3.0
//	2 bytes   (version 1.0) or 4 bytes (2.0 and 3.0): HEADER_LEN, the
//	          header's length, little-endian
//	HEADER_LEN bytes  the header: a Python dict literal such as
//	          {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//	          padded with spaces and ended by '\n' (Latin-1 before 3.0,
//	          UTF-8 in 3.0)
//	the rest  the elements, packed, in the byte order of 'descr' and in
//	          C (row-major) or Fortran (column-major) order
//
// A .npz file is a zip archive of .npy files, one per array, each named
// after its array with ".npy" appended (numpy.savez, and
// numpy.savez_compressed, whose entries are deflated).

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// npyMagic starts every .npy file.
const npyMagic = "\x93NUMPY"

// npyAlign is the multiple of bytes the writer pads magic, length and
// header to, as NumPy does (numpy.lib.format.ARRAY_ALIGN), so the data
// can be memory-mapped aligned.
const npyAlign = 64

// npyDescrs is the 'descr' loom writes for each DType: NumPy's
// array-interface type string, little-endian ('|' where byte order does
// not apply). BFloat16 has none: NumPy has no bfloat16 dtype.
var npyDescrs = [numDTypes]string{
	Bool:       "|b1",
	Int8:       "|i1",
	Int16:      "<i2",
	Int32:      "<i4",
	Int64:      "<i8",
	Uint8:      "|u1",
	Float16:    "<f2",
	Float32:    "<f4",
	Float64:    "<f8",
	Complex64:  "<c8",
	Complex128: "<c16",
}

// npyUnsupported names the NumPy type codes (descr without its byte-order
// character, or its first letter) that loom has no dtype for.
var npyUnsupported = map[string]string{
	"u2":  "uint16",
	"u4":  "uint32",
	"u8":  "uint64",
	"f12": "float96 (long double)",
	"f16": "float128 (long double)",
	"c24": "complex192 (long double)",
	"c32": "complex256 (long double)",
	"O":   "object (pickled Python objects)",
	"S":   "bytes (fixed-width byte strings)",
	"a":   "bytes (fixed-width byte strings)",
	"U":   "str (fixed-width Unicode strings)",
	"V":   "void (raw or structured records)",
	"M":   "datetime64",
	"m":   "timedelta64",
}

// Defaults of NpyLimits; see its documentation.
const (
	defaultNpyMaxHeaderBytes = 10_000
	defaultNpyMaxTotalBytes  = 64 << 30
	defaultNpyMaxArrays      = 1 << 16
)

// npyMaxDepth bounds the nesting of the header's Python literal, so a
// header of brackets cannot exhaust the stack.
const npyMaxDepth = 16

// NpyLimits bounds what ReadNpy and ReadNpz accept from an untrusted file.
// A zero field means its default; a negative field is an error.
//
// Memory is never allocated for more bytes than the input actually holds
// (or, for an io.Seeker, than its size), so the limits are policy, not
// the only defence: they reject files larger than the caller is prepared
// to load before the data is read. The element count of an array is
// bounded by MaxTotalBytes divided by its element size.
type NpyLimits struct {
	// MaxHeaderBytes bounds the header (the dict literal) of each array.
	// The default, 10,000 bytes, is numpy.load's own default
	// (max_header_size, since NumPy 1.24); the header of an array of
	// rank 64 needs less than 1,500.
	MaxHeaderBytes int64

	// MaxTotalBytes bounds the element data: of the one array of a .npy
	// file, and the sum over all arrays of a .npz archive (uncompressed).
	// The default is 64 GiB, as SafetensorsLimits.MaxTotalBytes.
	MaxTotalBytes int64

	// MaxArrays bounds the number of entries of a .npz archive. The
	// default is 65,536.
	MaxArrays int
}

// withDefaults returns l with zero fields replaced by their defaults and
// sizes capped at what an int can index on this platform.
func (l NpyLimits) withDefaults() (NpyLimits, error) {
	switch {
	case l.MaxHeaderBytes < 0:
		return l, fmt.Errorf("limits: MaxHeaderBytes is %d, want >= 0 (0 for the default)", l.MaxHeaderBytes)
	case l.MaxTotalBytes < 0:
		return l, fmt.Errorf("limits: MaxTotalBytes is %d, want >= 0 (0 for the default)", l.MaxTotalBytes)
	case l.MaxArrays < 0:
		return l, fmt.Errorf("limits: MaxArrays is %d, want >= 0 (0 for the default)", l.MaxArrays)
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = defaultNpyMaxHeaderBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = defaultNpyMaxTotalBytes
	}
	if l.MaxArrays == 0 {
		l.MaxArrays = defaultNpyMaxArrays
	}
	l.MaxHeaderBytes = min(l.MaxHeaderBytes, math.MaxInt)
	l.MaxTotalBytes = min(l.MaxTotalBytes, math.MaxInt)
	return l, nil
}

// npyErrorf and npzErrorf return errors with the package's .npy and .npz
// prefixes.
func npyErrorf(format string, args ...any) error {
	return fmt.Errorf("tensor: npy: "+format, args...)
}

func npzErrorf(format string, args ...any) error {
	return fmt.Errorf("tensor: npz: "+format, args...)
}

// WriteNpy writes t to w as a .npy file of format version 1.0, which
// numpy.load (and every NumPy since 1.0) reads: C order, little-endian
// ('|' for the one-byte types), the header padded so that the data starts
// at a multiple of 64 bytes, as numpy.save does. Bool elements are written
// as 0 or 1 bytes.
//
// Every dtype but BFloat16 has a NumPy dtype of the same name (Float16 is
// numpy.float16, Complex64 numpy.complex64, ...); NumPy has no bfloat16,
// so a BFloat16 tensor is an error: cast it to Float32 first. Nothing is
// written when t cannot be.
func WriteNpy(w io.Writer, t *Tensor) error {
	if w == nil {
		return npyErrorf("nil io.Writer")
	}
	if err := npyWritable(t); err != nil {
		return npyErrorf("%v", err)
	}
	if err := writeNpy(w, t); err != nil {
		return npyErrorf("%w", err)
	}
	return nil
}

// npyWritable reports why t cannot be written as .npy, if it cannot.
func npyWritable(t *Tensor) error {
	switch {
	case t == nil:
		return errors.New("tensor is nil")
	case t.dtype == BFloat16:
		return errors.New("dtype bfloat16 has no NumPy equivalent (NumPy has no bfloat16): cast the tensor to float32 first")
	case !t.dtype.Valid():
		return fmt.Errorf("tensor has invalid dtype %v", t.dtype)
	case t.shape.Size() < 0 || len(t.data) != t.shape.Size()*t.dtype.Size():
		return fmt.Errorf("tensor holds %d bytes, which do not match its type %s", len(t.data), t.Type())
	case len(t.shape) > maxSafetensorsRank:
		return fmt.Errorf("tensor has rank %d, over NumPy's limit of %d", len(t.shape), maxSafetensorsRank)
	}
	return nil
}

// npyHeader returns magic, version, header length and header of a
// version 1.0 file holding t, padded to a multiple of npyAlign bytes.
func npyHeader(t *Tensor) []byte {
	var h bytes.Buffer
	h.WriteString("{'descr': '" + npyDescrs[t.dtype] + "', 'fortran_order': False, 'shape': (")
	for i, d := range t.shape {
		if i > 0 {
			h.WriteString(", ")
		}
		h.WriteString(strconv.Itoa(d))
	}
	if len(t.shape) == 1 {
		h.WriteByte(',') // (5,): a one-element tuple, as Python writes it
	}
	h.WriteString("), }")
	pre := len(npyMagic) + 2 + 2
	pad := (npyAlign - (pre+h.Len()+1)%npyAlign) % npyAlign
	out := make([]byte, 0, pre+h.Len()+pad+1)
	out = append(out, npyMagic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(h.Len()+pad+1)) // < 2,000 bytes at rank 64
	out = append(out, h.Bytes()...)
	out = append(out, bytes.Repeat([]byte{' '}, pad)...)
	return append(out, '\n')
}

// writeNpy writes t, which npyWritable accepts, without error prefix.
func writeNpy(w io.Writer, t *Tensor) error {
	if _, err := w.Write(npyHeader(t)); err != nil {
		return fmt.Errorf("writing the header: %w", err)
	}
	if _, err := w.Write(fileBytes(t)); err != nil {
		return fmt.Errorf("writing the data: %w", err)
	}
	return nil
}

// ReadNpy reads one .npy array from r (format version 1.0, 2.0 or 3.0)
// and returns it as a tensor in C (row-major) order and loom's
// little-endian layout, in its own 8-aligned memory. It reads exactly the
// array's bytes, so r may hold several arrays one after another (as
// repeated numpy.save calls to one open file write them).
//
// The input is untrusted: ReadNpy returns an error, never panics, for any
// malformed file, and allocates no more than the input holds. If r is an
// io.Seeker, the sizes in the header are checked against the bytes left in
// r before anything is allocated. The header must be a Python dict literal
// with exactly the keys 'descr', 'fortran_order' and 'shape' (no key
// twice), followed only by whitespace:
//
//   - 'descr' is a string: a byte-order character ('<' little-endian, '>'
//     big-endian, '|' not applicable or '=' native, both read as
//     little-endian here; it may be left out) and one of the type codes
//     b1, i1, i2, i4, i8, u1, f2, f4, f8, c8 and c16. Object arrays
//     (pickles), strings, datetimes, structured dtypes (a list descr),
//     the unsigned integers wider than a byte and long doubles are errors
//     that say so;
//   - 'fortran_order' is True or False; a Fortran-order array is
//     transposed into C order;
//   - 'shape' is a tuple of at most 64 non-negative integers (a Python 2
//     "L" suffix is accepted in versions 1.0 and 2.0, as NumPy does),
//     whose data is at most MaxTotalBytes;
//   - bool elements are 0 or 1.
//
// Every error names the problem and the part of the file, and starts with
// "tensor: npy: ".
func ReadNpy(r io.Reader, limits NpyLimits) (*Tensor, error) {
	if r == nil {
		return nil, npyErrorf("nil io.Reader")
	}
	lim, err := limits.withDefaults()
	if err != nil {
		return nil, npyErrorf("%v", err)
	}
	size, err := inputSize(r)
	if err != nil {
		return nil, npyErrorf("%w", err)
	}
	t, err := readNpy(r, size, lim)
	if err != nil {
		return nil, npyErrorf("%w", err)
	}
	return t, nil
}

// readNpy reads one array from r, of which size bytes remain (-1 if
// unknown). Its errors have no prefix.
func readNpy(r io.Reader, size int64, lim NpyLimits) (*Tensor, error) {
	sized := size >= 0
	var pre [12]byte
	if got, err := io.ReadFull(r, pre[:8]); err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("file is %d bytes, too short for the 6-byte magic string and 2-byte version", got)
		}
		return nil, fmt.Errorf("reading the magic string: %w", err)
	}
	if string(pre[:6]) != npyMagic {
		return nil, fmt.Errorf("magic string is %q, want %q: not a .npy file", pre[:6], npyMagic)
	}
	major, minor := pre[6], pre[7]
	lenBytes := 4
	switch {
	case major == 1 && minor == 0:
		lenBytes = 2
	case (major == 2 || major == 3) && minor == 0:
	default:
		return nil, fmt.Errorf("format version %d.%d is not supported; loom reads 1.0, 2.0 and 3.0", major, minor)
	}
	if got, err := io.ReadFull(r, pre[8:8+lenBytes]); err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("file is %d bytes, too short for the %d-byte header length of version %d.0", 8+got, lenBytes, major)
		}
		return nil, fmt.Errorf("reading the header length: %w", err)
	}
	var n int64
	if lenBytes == 2 {
		n = int64(binary.LittleEndian.Uint16(pre[8:]))
	} else {
		n = int64(binary.LittleEndian.Uint32(pre[8:]))
	}
	prefix := int64(8 + lenBytes)
	switch {
	case n > lim.MaxHeaderBytes:
		return nil, fmt.Errorf("header length %d exceeds the limit of %d bytes (NpyLimits.MaxHeaderBytes)", n, lim.MaxHeaderBytes)
	case sized && n > size-prefix:
		return nil, fmt.Errorf("header length %d exceeds the %d bytes that follow it: the file is truncated", n, max(size-prefix, 0))
	}
	header, got, err := readAligned(r, n, sized)
	if err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("header length %d exceeds the %d bytes that follow it: the file is truncated", n, got)
		}
		return nil, fmt.Errorf("reading the header: %w", err)
	}
	if major == 3 {
		if i := invalidUTF8(header); i >= 0 {
			return nil, fmt.Errorf("header of version 3.0 is not valid UTF-8 (at header byte %d)", i)
		}
	}
	h, err := parseNpyHeader(header, major <= 2)
	if err != nil {
		return nil, err
	}
	elemSize := int64(h.dtype.Size())
	elems := h.shape.Size()
	if elems < 0 || int64(elems) > lim.MaxTotalBytes/elemSize {
		return nil, fmt.Errorf("header: shape %v of %s holds more than %d bytes of data (NpyLimits.MaxTotalBytes)", h.shape, h.descr, lim.MaxTotalBytes)
	}
	nbytes := int64(elems) * elemSize
	if sized && nbytes > size-prefix-n {
		return nil, fmt.Errorf("data is truncated: shape %v of %s needs %d bytes, but %d follow the header", h.shape, h.descr, nbytes, max(size-prefix-n, 0))
	}
	data, got, err := readAligned(r, nbytes, sized)
	if err != nil {
		if isEOF(err) {
			return nil, fmt.Errorf("data is truncated: shape %v of %s needs %d bytes, but %d follow the header", h.shape, h.descr, nbytes, got)
		}
		return nil, fmt.Errorf("reading the data: %w", err)
	}
	if h.bigEndian {
		swapBytes(data, h.dtype)
	}
	if h.dtype == Bool {
		if i := slices.IndexFunc(data, func(c byte) bool { return c > 1 }); i >= 0 {
			return nil, fmt.Errorf("data: bool element %d is byte %d, want 0 or 1", i, data[i])
		}
	}
	if h.fortran && len(h.shape) > 1 && elems > 0 {
		data = fromFortran(data, h.shape, int(elemSize))
	}
	return &Tensor{dtype: h.dtype, shape: h.shape, data: data}, nil
}

// swapBytes reverses the bytes of every element of data, a big-endian
// array of dtype dt (each part of a complex element on its own).
func swapBytes(data []byte, dt DType) {
	w := dt.Size()
	if dt.IsComplex() {
		w /= 2
	}
	if w == 1 {
		return
	}
	for i := 0; i+w <= len(data); i += w {
		slices.Reverse(data[i : i+w])
	}
}

// fromFortran returns the elements of data, an array of the given shape
// in Fortran (column-major) order, in C (row-major) order, in new memory.
func fromFortran(data []byte, shape Shape, elemSize int) []byte {
	out := alloc(len(data))
	rank := len(shape)
	cStrides := make([]int, rank) // in bytes
	s := elemSize
	for i := rank - 1; i >= 0; i-- {
		cStrides[i] = s
		s *= shape[i]
	}
	idx := make([]int, rank)
	off := 0 // C offset of idx
	for f := 0; f < len(data); f += elemSize {
		copy(out[off:off+elemSize], data[f:f+elemSize])
		// Advance idx in Fortran order: the first index fastest.
		for i := 0; i < rank; i++ {
			idx[i]++
			off += cStrides[i]
			if idx[i] < shape[i] {
				break
			}
			off -= idx[i] * cStrides[i]
			idx[i] = 0
		}
	}
	return out
}

// npyHeaderInfo is what a .npy header says.
type npyHeaderInfo struct {
	descr     string
	dtype     DType
	bigEndian bool
	fortran   bool
	shape     Shape
}

// parseNpyHeader checks the header dict and returns what it says.
// longInts admits Python 2's "L" suffix on integers.
func parseNpyHeader(header []byte, longInts bool) (npyHeaderInfo, error) {
	var h npyHeaderInfo
	p := &pyParser{s: header, longInts: longInts}
	v, err := p.value(0)
	if err != nil {
		return h, err
	}
	p.skipSpace()
	if p.pos < len(p.s) {
		return h, fmt.Errorf("header has %d bytes after its dict, at header byte %d; only whitespace may follow", len(p.s)-p.pos, p.pos)
	}
	if v.kind != pyDict {
		return h, fmt.Errorf("header is %s, want a dict", v.describe())
	}
	seen := map[string]bool{}
	for i, k := range v.keys {
		if k.kind != pyStr {
			return h, fmt.Errorf("header has key %s, want the strings 'descr', 'fortran_order' and 'shape'", k.describe())
		}
		if seen[k.s] {
			return h, fmt.Errorf("header has key %q twice", k.s)
		}
		seen[k.s] = true
		val := v.items[i]
		switch k.s {
		case "descr":
			if h.descr, h.dtype, h.bigEndian, err = npyDType(val); err != nil {
				return h, err
			}
		case "fortran_order":
			if val.kind != pyBool {
				return h, fmt.Errorf("header: 'fortran_order' is %s, want True or False", val.describe())
			}
			h.fortran = val.b
		case "shape":
			if val.kind != pyTuple {
				return h, fmt.Errorf("header: 'shape' is %s, want a tuple of integers", val.describe())
			}
			if len(val.items) > maxSafetensorsRank {
				return h, fmt.Errorf("header: 'shape' has %d dimensions, over the limit of %d", len(val.items), maxSafetensorsRank)
			}
			h.shape = make(Shape, len(val.items))
			for j, d := range val.items {
				if d.kind != pyInt || d.i < 0 || d.i > math.MaxInt {
					return h, fmt.Errorf("header: 'shape'[%d] is %s, want a non-negative integer", j, d.describe())
				}
				h.shape[j] = int(d.i)
			}
		default:
			return h, fmt.Errorf("header has unknown key %q; want exactly 'descr', 'fortran_order' and 'shape'", k.s)
		}
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return h, fmt.Errorf("header has no %q key", k)
		}
	}
	return h, nil
}

// npyDType reads the 'descr' value.
func npyDType(v pyValue) (descr string, dt DType, big bool, err error) {
	switch v.kind {
	case pyStr:
	case pyList:
		return "", Invalid, false, errors.New("header: 'descr' is a list: structured dtypes (record arrays) are not supported")
	default:
		return "", Invalid, false, fmt.Errorf("header: 'descr' is %s, want a type string such as '<f4'", v.describe())
	}
	s := v.s
	code := s
	if s != "" && strings.ContainsRune("<>|=", rune(s[0])) {
		code = s[1:]
	}
	for _, d := range DTypes() {
		if npyDescrs[d] != "" && npyDescrs[d][1:] == code {
			return s, d, s[0] == '>', nil
		}
	}
	name, ok := npyUnsupported[code]
	if !ok && code != "" {
		name, ok = npyUnsupported[code[:1]]
	}
	if ok {
		return "", Invalid, false, fmt.Errorf("header: descr %q is NumPy's %s, which loom does not read", s, name)
	}
	return "", Invalid, false, fmt.Errorf("header: descr %q is not a supported type string; loom reads b1, i1, i2, i4, i8, u1, f2, f4, f8, c8 and c16, each after '<', '>', '|' or '='", s)
}

// pyKind is the kind of a Python literal.
type pyKind uint8

const (
	pyStr pyKind = iota
	pyInt
	pyBool
	pyNone
	pyTuple
	pyList
	pyDict
)

// pyValue is a parsed Python literal: a string, an integer, True, False,
// None, or a tuple, list or dict of literals.
type pyValue struct {
	kind  pyKind
	s     string
	i     int64
	b     bool
	items []pyValue // of a tuple or list; a dict's values
	keys  []pyValue // a dict's keys
}

// describe names v for an error message.
func (v pyValue) describe() string {
	switch v.kind {
	case pyStr:
		return fmt.Sprintf("the string %q", v.s)
	case pyInt:
		return fmt.Sprintf("the integer %d", v.i)
	case pyBool:
		if v.b {
			return "True"
		}
		return "False"
	case pyNone:
		return "None"
	case pyTuple:
		return fmt.Sprintf("a tuple of %d items", len(v.items))
	case pyList:
		return fmt.Sprintf("a list of %d items", len(v.items))
	}
	return fmt.Sprintf("a dict of %d keys", len(v.keys))
}

// pyParser parses the Python literals that NumPy writes in headers: a
// strict subset of Python's syntax (no escapes in strings, no
// expressions, decimal integers only).
type pyParser struct {
	s        []byte
	pos      int
	longInts bool // admit Python 2's "L" suffix on integers
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

// value parses one literal at nesting depth depth.
func (p *pyParser) value(depth int) (pyValue, error) {
	if depth > npyMaxDepth {
		return pyValue{}, fmt.Errorf("header nests literals deeper than %d levels (at header byte %d)", npyMaxDepth, p.pos)
	}
	p.skipSpace()
	if p.pos >= len(p.s) {
		return pyValue{}, fmt.Errorf("header ends at byte %d, where a value should start", p.pos)
	}
	start := p.pos
	switch c := p.s[p.pos]; {
	case c == '\'' || c == '"':
		end := p.pos + 1
		for end < len(p.s) && p.s[end] != c {
			if p.s[end] == '\\' || p.s[end] == '\n' {
				return pyValue{}, fmt.Errorf("header string at byte %d holds a backslash or newline, which loom does not read", start)
			}
			end++
		}
		if end == len(p.s) {
			return pyValue{}, fmt.Errorf("header string at byte %d is not closed", start)
		}
		p.pos = end + 1
		return pyValue{kind: pyStr, s: string(p.s[start+1 : end])}, nil
	case c == '{':
		return p.dict(depth)
	case c == '(' || c == '[':
		return p.sequence(depth)
	case c == '-' || c >= '0' && c <= '9':
		p.pos++
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		digits := string(p.s[start:p.pos])
		if p.longInts && p.pos < len(p.s) && (p.s[p.pos] == 'L' || p.s[p.pos] == 'l') {
			p.pos++
		}
		if len(digits) > 1 && (digits[0] == '0' || digits[:2] == "-0") {
			return pyValue{}, fmt.Errorf("header integer %q at byte %d has a leading zero", digits, start)
		}
		i, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return pyValue{}, fmt.Errorf("header integer %q at byte %d is not a 64-bit integer", digits, start)
		}
		return pyValue{kind: pyInt, i: i}, nil
	case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
		for p.pos < len(p.s) && (isIdentByte(p.s[p.pos])) {
			p.pos++
		}
		switch name := string(p.s[start:p.pos]); name {
		case "True", "False":
			return pyValue{kind: pyBool, b: name == "True"}, nil
		case "None":
			return pyValue{kind: pyNone}, nil
		default:
			return pyValue{}, fmt.Errorf("header has the name %q at byte %d, want a literal (True, False, None, a string, an integer, a tuple, a list or a dict)", name, start)
		}
	default:
		return pyValue{}, fmt.Errorf("header has %q at byte %d, where a value should start", c, start)
	}
}

func isIdentByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}

// sequence parses a tuple "(...)" or list "[...]". A parenthesized single
// value without a trailing comma is that value, as in Python.
func (p *pyParser) sequence(depth int) (pyValue, error) {
	open := p.s[p.pos]
	closer, kind := byte(')'), pyTuple
	if open == '[' {
		closer, kind = ']', pyList
	}
	start := p.pos
	p.pos++
	v := pyValue{kind: kind}
	comma := false // a comma followed the last item
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return v, fmt.Errorf("header %c at byte %d is not closed", open, start)
		}
		if p.s[p.pos] == closer {
			p.pos++
			break
		}
		if len(v.items) > 0 && !comma {
			return v, fmt.Errorf("header has %q at byte %d, want ',' or %q", p.s[p.pos], p.pos, closer)
		}
		item, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		comma = p.pos < len(p.s) && p.s[p.pos] == ','
		if comma {
			p.pos++
		}
	}
	if kind == pyTuple && len(v.items) == 1 && !comma {
		return v.items[0], nil
	}
	return v, nil
}

// dict parses a dict "{key: value, ...}".
func (p *pyParser) dict(depth int) (pyValue, error) {
	start := p.pos
	p.pos++
	v := pyValue{kind: pyDict}
	comma := false
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return v, fmt.Errorf("header { at byte %d is not closed", start)
		}
		if p.s[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		if len(v.keys) > 0 && !comma {
			return v, fmt.Errorf("header has %q at byte %d, want ',' or '}'", p.s[p.pos], p.pos)
		}
		key, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return v, fmt.Errorf("header dict key %s is not followed by ':' (at header byte %d)", key.describe(), p.pos)
		}
		p.pos++
		val, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		v.keys = append(v.keys, key)
		v.items = append(v.items, val)
		p.skipSpace()
		comma = p.pos < len(p.s) && p.s[p.pos] == ','
		if comma {
			p.pos++
		}
	}
}

// npzModified is the modification time of every .npz entry WriteNpz
// writes (the earliest a zip archive can hold, as Python's zipfile
// writes by default), so the output does not depend on the clock.
var npzModified = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// WriteNpz writes the named tensors to w as a .npz archive, as
// numpy.savez (compress false: entries stored) or numpy.savez_compressed
// (compress true: entries deflated) would: one .npy entry (see WriteNpy)
// per tensor, named after it with ".npy" appended, in sorted order. Names
// must be valid UTF-8 and no tensor may be nil or BFloat16; nothing is
// written when an argument is invalid. The output is deterministic.
func WriteNpz(w io.Writer, tensors map[string]*Tensor, compress bool) error {
	if w == nil {
		return npzErrorf("nil io.Writer")
	}
	names := slices.Sorted(maps.Keys(tensors))
	for _, name := range names {
		if !utf8.ValidString(name) {
			return npzErrorf("array name %q is not valid UTF-8", name)
		}
		if err := npyWritable(tensors[name]); err != nil {
			return npzErrorf("array %q: %v", name, err)
		}
	}
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	zw := zip.NewWriter(w)
	for _, name := range names {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name + ".npy", Method: method, Modified: npzModified})
		if err != nil {
			return npzErrorf("array %q: %v", name, err)
		}
		if err := writeNpy(fw, tensors[name]); err != nil {
			return npzErrorf("array %q: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return npzErrorf("writing the zip directory: %v", err)
	}
	return nil
}

// ReadNpz reads a .npz archive of size bytes from r and returns its
// arrays, named after the entries without their ".npy" suffix. Entries may
// be stored or deflated (numpy.savez and numpy.savez_compressed); every
// entry must be named "*.npy" and hold exactly one .npy array (see
// ReadNpy, whose rules apply to each), and its checksum must match. The
// archive has at most MaxArrays entries, and their data, uncompressed,
// at most MaxTotalBytes together; memory is taken in proportion to the
// bytes that decompression actually yields, so a small archive that
// claims or inflates to more fails at the limit, not after allocating it.
//
// Every error names the entry and the problem, and starts with
// "tensor: npz: ".
func ReadNpz(r io.ReaderAt, size int64, limits NpyLimits) (map[string]*Tensor, error) {
	if r == nil {
		return nil, npzErrorf("nil io.ReaderAt")
	}
	lim, err := limits.withDefaults()
	if err != nil {
		return nil, npzErrorf("%v", err)
	}
	if size < 0 {
		return nil, npzErrorf("size is %d, want >= 0", size)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, npzErrorf("not a valid zip archive: %v", err)
	}
	if len(zr.File) > lim.MaxArrays {
		return nil, npzErrorf("archive has %d entries, over the limit of %d (NpyLimits.MaxArrays)", len(zr.File), lim.MaxArrays)
	}
	out := make(map[string]*Tensor, len(zr.File))
	budget := lim.MaxTotalBytes
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			return nil, npzErrorf("entry %q is not named *.npy; a .npz archive holds only .npy arrays", f.Name)
		}
		if _, dup := out[name]; dup {
			return nil, npzErrorf("archive has entry %q twice", f.Name)
		}
		t, err := readNpzEntry(f, lim, budget)
		if err != nil {
			return nil, npzErrorf("entry %q: %w", f.Name, err)
		}
		budget -= int64(len(t.data))
		out[name] = t
	}
	return out, nil
}

// readNpzEntry reads the array in entry f with budget bytes of data left
// under the limits.
func readNpzEntry(f *zip.File, lim NpyLimits, budget int64) (*Tensor, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	lim.MaxTotalBytes = budget // what the entries before this one left
	t, err := readNpy(rc, -1, lim)
	if err != nil {
		return nil, err
	}
	// Read to the end, so the zip reader checks the size and checksum.
	var extra [1]byte
	switch n, err := io.ReadFull(rc, extra[:]); {
	case n > 0:
		return nil, errors.New("trailing bytes follow the array's data")
	case err != io.EOF:
		return nil, fmt.Errorf("after the array's data: %w", err)
	}
	return t, nil
}

// WriteNpyFile writes t to the file at path as .npy (see WriteNpy),
// atomically as WriteSafetensorsFile does: if anything fails, path is
// untouched.
func WriteNpyFile(path string, t *Tensor) error {
	if err := writeFileAtomic(path, func(w io.Writer) error { return WriteNpy(w, t) }); err != nil {
		return fmt.Errorf("tensor: WriteNpyFile: %w", err)
	}
	return nil
}

// ReadNpyFile reads the .npy file at path (see ReadNpy; sizes are checked
// against the file's before anything is allocated). Unlike ReadNpy, it
// requires the file to end with the array: trailing bytes are an error.
func ReadNpyFile(path string, limits NpyLimits) (*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tensor: ReadNpyFile: %w", err)
	}
	defer f.Close()
	t, err := ReadNpy(f, limits)
	if err != nil {
		return nil, err
	}
	var extra [1]byte
	switch n, err := io.ReadFull(f, extra[:]); {
	case n > 0:
		return nil, npyErrorf("trailing bytes follow the array's data in %s", path)
	case err != io.EOF:
		return nil, npyErrorf("reading past the array's data: %w", err)
	}
	return t, nil
}

// WriteNpzFile writes the tensors to the file at path as .npz (see
// WriteNpz), atomically as WriteSafetensorsFile does.
func WriteNpzFile(path string, tensors map[string]*Tensor, compress bool) error {
	if err := writeFileAtomic(path, func(w io.Writer) error { return WriteNpz(w, tensors, compress) }); err != nil {
		return fmt.Errorf("tensor: WriteNpzFile: %w", err)
	}
	return nil
}

// ReadNpzFile reads the .npz file at path (see ReadNpz).
func ReadNpzFile(path string, limits NpyLimits) (map[string]*Tensor, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tensor: ReadNpzFile: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("tensor: ReadNpzFile: %w", err)
	}
	return ReadNpz(f, st.Size(), limits)
}

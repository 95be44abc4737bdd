package tensor

// The safetensors file format (https://huggingface.co/docs/safetensors):
//
//	8 bytes   N, the header length, a little-endian uint64
//	N bytes   the header: a UTF-8 JSON object, optionally padded with spaces
//	the rest  the data buffer: every tensor's raw little-endian, row-major
//	          elements, packed without gaps
//
// The header maps each tensor name to
// {"dtype": "F32", "shape": [2,3], "data_offsets": [begin, end]}, with the
// offsets relative to the start of the data buffer, and may hold a
// "__metadata__" object of string values.

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// safetensorsDTypes names each loom DType the way the safetensors header
// does. The format has more types (U16, U32, U64, F8_E4M3, F8_E5M2, ...);
// loom has no equivalent for them, so files holding them are rejected.
//
// Complex64 is the format's "C64" (added to safetensors' Dtype enum in
// its 0.6 releases: 8 bytes, two little-endian float32, real part first).
// The format has no complex128; loom writes and reads it as "C128" (16
// bytes, two little-endian float64, real part first), a name of its own
// that other readers reject: convert to complex64, or store the real and
// imaginary parts as two F64 tensors, for files meant for other tools.
var safetensorsDTypes = [numDTypes]string{
	Bool:       "BOOL",
	Int8:       "I8",
	Int16:      "I16",
	Int32:      "I32",
	Int64:      "I64",
	Uint8:      "U8",
	Float32:    "F32",
	Float64:    "F64",
	Float16:    "F16",
	BFloat16:   "BF16",
	Complex64:  "C64",
	Complex128: "C128",
}

// safetensorsMetadataKey is the reserved header key of the string metadata.
const safetensorsMetadataKey = "__metadata__"

// Defaults of SafetensorsLimits; see its documentation.
const (
	defaultSafetensorsMaxHeaderBytes = 100_000_000
	defaultSafetensorsMaxTotalBytes  = 64 << 30
	defaultSafetensorsMaxTensors     = 1 << 16
)

// maxSafetensorsRank bounds a tensor's rank: NumPy's limit (NPY_MAXDIMS
// is 64 since NumPy 2), so no file written from Python exceeds it.
const maxSafetensorsRank = 64

// readChunk is the first allocation when reading data of unknown size, and
// maxReadPiece the largest piece read at once (see readAligned).
const (
	readChunk    = 1 << 20
	maxReadPiece = 64 << 20
)

// stErrorf returns an error with the package's safetensors prefix.
func stErrorf(format string, args ...any) error {
	return fmt.Errorf("tensor: safetensors: "+format, args...)
}

// WriteSafetensors writes the named tensors (and optional string metadata)
// in the safetensors format, so the file opens with Python's safetensors,
// torch or numpy loaders.
//
// The output is deterministic: the header lists "__metadata__" first (its
// keys sorted; it is left out when metadata is empty) and then the tensors
// sorted by name, whose data follows in the same order. The header is padded
// with spaces so that the data buffer starts at a multiple of 8 bytes, as the
// reference implementation does. Bool elements are written as 0 or 1 bytes.
//
// Tensor names, metadata keys and values must be valid UTF-8, a tensor may
// not be named "__metadata__", and no tensor may be nil. Nothing is written
// when an argument is invalid.
func WriteSafetensors(w io.Writer, tensors map[string]*Tensor, metadata map[string]string) error {
	if w == nil {
		return stErrorf("nil io.Writer")
	}
	names := slices.Sorted(maps.Keys(tensors))
	header, err := safetensorsHeader(names, tensors, metadata)
	if err != nil {
		return err
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(header)))
	if _, err := w.Write(n[:]); err != nil {
		return stErrorf("writing the header length: %w", err)
	}
	if _, err := w.Write(header); err != nil {
		return stErrorf("writing the header: %w", err)
	}
	for _, name := range names {
		if _, err := w.Write(fileBytes(tensors[name])); err != nil {
			return stErrorf("writing tensor %q: %w", name, err)
		}
	}
	return nil
}

// safetensorsHeader returns the padded JSON header describing the tensors
// laid out in the order of names. It validates every argument.
func safetensorsHeader(names []string, tensors map[string]*Tensor, metadata map[string]string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(metadata) > 0 {
		b.WriteString(`"` + safetensorsMetadataKey + `":{`)
		for i, k := range slices.Sorted(maps.Keys(metadata)) {
			v := metadata[k]
			if !utf8.ValidString(k) {
				return nil, stErrorf("metadata key %q is not valid UTF-8", k)
			}
			if !utf8.ValidString(v) {
				return nil, stErrorf("metadata value %q of key %q is not valid UTF-8", v, k)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, k)
			b.WriteByte(':')
			writeJSONString(&b, v)
		}
		b.WriteByte('}')
	}
	var offset int64
	for i, name := range names {
		t := tensors[name]
		if err := checkWritable(name, t); err != nil {
			return nil, err
		}
		if i > 0 || len(metadata) > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, name)
		b.WriteString(`:{"dtype":"` + safetensorsDTypes[t.dtype] + `","shape":[`)
		for j, d := range t.shape {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(d))
		}
		end := offset + int64(len(t.data))
		fmt.Fprintf(&b, `],"data_offsets":[%d,%d]}`, offset, end)
		offset = end
	}
	b.WriteByte('}')
	for b.Len()%8 != 0 {
		b.WriteByte(' ')
	}
	return b.Bytes(), nil
}

// checkWritable reports why tensor t cannot be written under name, if it
// cannot.
func checkWritable(name string, t *Tensor) error {
	switch {
	case !utf8.ValidString(name):
		return stErrorf("tensor name %q is not valid UTF-8", name)
	case name == safetensorsMetadataKey:
		return stErrorf("tensor name %q is reserved for the metadata", name)
	case t == nil:
		return stErrorf("tensor %q is nil", name)
	case !t.dtype.Valid():
		return stErrorf("tensor %q has invalid dtype %v", name, t.dtype)
	case t.shape.Size() < 0 || len(t.data) != t.shape.Size()*t.dtype.Size():
		return stErrorf("tensor %q holds %d bytes, which do not match its type %s", name, len(t.data), t.Type())
	}
	return nil
}

// writeJSONString appends s to b as a JSON string, without the HTML
// escaping of json.Marshal (the reference writer does not escape <, >, &).
// s must be valid UTF-8.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes; writes to a bytes.Buffer do not fail
	b.Truncate(b.Len() - 1)
}

// fileBytes returns t's data as it is stored in a file: unchanged, except
// that Bool elements other than 0 become 1.
func fileBytes(t *Tensor) []byte {
	if t.dtype != Bool || !slices.ContainsFunc(t.data, func(c byte) bool { return c > 1 }) {
		return t.data
	}
	out := make([]byte, len(t.data))
	for i, c := range t.data {
		if c != 0 {
			out[i] = 1
		}
	}
	return out
}

// SafetensorsLimits bounds what ReadSafetensors accepts from an untrusted
// file. A zero field means its default; a negative field is an error.
//
// Memory is never allocated for more bytes than the input actually holds (or,
// for an io.Seeker, than its size), so the limits are policy, not the only
// defence: they reject files larger than the caller is prepared to load
// before the data is read.
type SafetensorsLimits struct {
	// MaxHeaderBytes bounds the JSON header. The default, 100,000,000
	// bytes, is the reference (Rust and Python) implementation's fixed
	// limit, so every file it accepts is accepted here.
	MaxHeaderBytes int64

	// MaxTotalBytes bounds the data buffer: the sum of all tensors' sizes.
	// The default, 64 GiB, exceeds any single file of a sharded checkpoint
	// (the Hugging Face tools shard at 5 or 10 GB) while refusing absurd
	// claims before any data is read. Raise it to load larger files, or
	// lower it to the memory that untrusted input may take.
	MaxTotalBytes int64

	// MaxTensors bounds the number of tensors in the header. The default,
	// 65,536, is many times the tensor count of the largest published
	// models' files.
	MaxTensors int
}

// withDefaults returns l with zero fields replaced by their defaults and
// sizes capped at what an int can index on this platform.
func (l SafetensorsLimits) withDefaults() (SafetensorsLimits, error) {
	switch {
	case l.MaxHeaderBytes < 0:
		return l, stErrorf("limits: MaxHeaderBytes is %d, want >= 0 (0 for the default)", l.MaxHeaderBytes)
	case l.MaxTotalBytes < 0:
		return l, stErrorf("limits: MaxTotalBytes is %d, want >= 0 (0 for the default)", l.MaxTotalBytes)
	case l.MaxTensors < 0:
		return l, stErrorf("limits: MaxTensors is %d, want >= 0 (0 for the default)", l.MaxTensors)
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = defaultSafetensorsMaxHeaderBytes
	}
	if l.MaxTotalBytes == 0 {
		l.MaxTotalBytes = defaultSafetensorsMaxTotalBytes
	}
	if l.MaxTensors == 0 {
		l.MaxTensors = defaultSafetensorsMaxTensors
	}
	l.MaxHeaderBytes = min(l.MaxHeaderBytes, math.MaxInt)
	l.MaxTotalBytes = min(l.MaxTotalBytes, math.MaxInt)
	return l, nil
}

// stEntry is one tensor's header entry.
type stEntry struct {
	name       string
	dtype      DType
	shape      Shape
	begin, end int64 // data_offsets
}

// ReadSafetensors reads a whole safetensors file from r and returns its
// tensors, each in its own 8-aligned memory, and its metadata (nil when the
// header has no "__metadata__").
//
// The input is untrusted: ReadSafetensors returns an error, never panics,
// for any malformed file, and allocates no more than the input holds. If r
// is an io.Seeker, the file's size is checked against the header before any
// data is read (the file then starts at r's current offset); otherwise data
// is read in growing pieces. The file must satisfy every rule of the format:
//
//   - the header length is between 1 and MaxHeaderBytes and no longer than
//     what follows it;
//   - the header is a UTF-8 JSON object, followed only by JSON whitespace
//     (the format pads with spaces), with no repeated key;
//   - "__metadata__", if present, is an object of string values (or null);
//   - every other key names a tensor, at most MaxTensors of them, whose value
//     is an object with exactly the fields "dtype" (one of BOOL, I32, I64,
//     F16, BF16, F32, F64), "shape" (at most 64 non-negative integers whose
//     product fits in an int) and "data_offsets" (two integers,
//     0 <= begin <= end, end-begin being the shape's size in bytes);
//   - the tensors' byte ranges tile the data buffer exactly: no overlaps, no
//     holes, no bytes after the last one, no more than MaxTotalBytes;
//   - BOOL elements are 0 or 1.
//
// Every error names the problem (the tensor, field and value) and starts
// with "tensor: safetensors: ".
func ReadSafetensors(r io.Reader, limits SafetensorsLimits) (map[string]*Tensor, map[string]string, error) {
	if r == nil {
		return nil, nil, stErrorf("nil io.Reader")
	}
	lim, err := limits.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	size, err := inputSize(r) // bytes from here to the end of r, -1 if unknown
	if err != nil {
		return nil, nil, stErrorf("%w", err)
	}
	sized := size >= 0

	var lenBuf [8]byte
	if got, err := io.ReadFull(r, lenBuf[:]); err != nil {
		if isEOF(err) {
			return nil, nil, stErrorf("file is %d bytes, too short for the 8-byte header length", got)
		}
		return nil, nil, stErrorf("reading the header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	switch {
	case n == 0:
		return nil, nil, stErrorf("header length is 0, want at least 2 (the header is a JSON object)")
	case n > uint64(lim.MaxHeaderBytes):
		return nil, nil, stErrorf("header length %d exceeds the limit of %d bytes (SafetensorsLimits.MaxHeaderBytes)", n, lim.MaxHeaderBytes)
	case sized && n > uint64(size-8):
		return nil, nil, errHeaderLength(n, size-8)
	}
	header, got, err := readAligned(r, int64(n), sized)
	if err != nil {
		if isEOF(err) {
			return nil, nil, errHeaderLength(n, int64(got))
		}
		return nil, nil, stErrorf("reading the header: %w", err)
	}
	entries, metadata, err := parseSafetensorsHeader(header, lim.MaxTensors)
	if err != nil {
		return nil, nil, err
	}
	dataLen, err := checkLayout(entries)
	if err != nil {
		return nil, nil, err
	}
	if dataLen > lim.MaxTotalBytes {
		return nil, nil, stErrorf("tensors hold %d bytes of data, over the limit of %d (SafetensorsLimits.MaxTotalBytes)", dataLen, lim.MaxTotalBytes)
	}
	if sized {
		avail := max(size-8-int64(n), 0) // (negative only if r's size lied)
		if dataLen > avail {
			i := slices.IndexFunc(entries, func(e stEntry) bool { return e.end > avail })
			return nil, nil, errTruncated(entries[i], avail)
		}
		if dataLen < avail {
			return nil, nil, errTrailing(dataLen, avail-dataLen)
		}
	}

	tensors := make(map[string]*Tensor, len(entries))
	for _, e := range entries {
		data, got, err := readAligned(r, e.end-e.begin, sized)
		if err != nil {
			if isEOF(err) {
				return nil, nil, errTruncated(e, e.begin+int64(got))
			}
			return nil, nil, stErrorf("reading tensor %q: %w", e.name, err)
		}
		if e.dtype == Bool {
			if i := slices.IndexFunc(data, func(c byte) bool { return c > 1 }); i >= 0 {
				return nil, nil, stErrorf("tensor %q: BOOL element %d is byte %d, want 0 or 1", e.name, i, data[i])
			}
		}
		tensors[e.name] = &Tensor{dtype: e.dtype, shape: e.shape, data: data}
	}
	if !sized {
		var extra [1]byte
		if _, err := io.ReadFull(r, extra[:]); err == nil {
			return nil, nil, errTrailing(dataLen, -1)
		} else if !isEOF(err) {
			return nil, nil, stErrorf("reading past the last tensor: %w", err)
		}
	}
	return tensors, metadata, nil
}

// errHeaderLength reports a header length n larger than the follow bytes
// after it.
func errHeaderLength(n uint64, follow int64) error {
	return stErrorf("header length %d exceeds the %d bytes that follow it: the file is truncated or not safetensors", n, follow)
}

// errTruncated reports that tensor e extends past the end of a data buffer
// of dataLen bytes.
func errTruncated(e stEntry, dataLen int64) error {
	return stErrorf("tensor %q: data_offsets [%d,%d] extend past the end of the data buffer, which is %d bytes: the file is truncated",
		e.name, e.begin, e.end, dataLen)
}

// errTrailing reports n bytes (-1: an unknown number) after the end of the
// last tensor's data, at dataLen.
func errTrailing(dataLen, n int64) error {
	count := ""
	if n >= 0 {
		count = fmt.Sprintf(" (%d)", n)
	}
	return stErrorf("trailing bytes%s follow the tensor data, which ends at data byte %d (the data_offsets must cover the data buffer exactly)", count, dataLen)
}

func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }

// inputSize returns the number of bytes from r's current offset to its end
// if r is an io.Seeker that can tell, and -1 otherwise. It leaves r's offset
// where it was.
func inputSize(r io.Reader) (int64, error) {
	s, ok := r.(io.Seeker)
	if !ok {
		return -1, nil
	}
	cur, err := s.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1, nil // not seekable after all (a pipe, say): stream it
	}
	end, err := s.Seek(0, io.SeekEnd)
	if err != nil {
		return -1, nil
	}
	if _, err := s.Seek(cur, io.SeekStart); err != nil {
		return 0, fmt.Errorf("seeking back to the start of the file: %w", err)
	}
	return max(end-cur, 0), nil
}

// readAligned reads exactly n bytes into fresh 8-aligned memory and returns
// them. When the input's size was not checked in advance (sized is false),
// memory is taken in proportion to the bytes that actually arrive: the data
// is read into pieces, each at most half the bytes received so far (from
// readChunk up to maxReadPiece), and joined once all n bytes are in. So a
// header claiming more data than the input holds makes it allocate at most
// 1.5 times what was received plus readChunk before it fails, and a stream
// that does hold the data costs twice its size at the end (pieces and the
// joined copy); an io.Seeker is read with no extra copy. On error it also
// returns how many bytes it read.
func readAligned(r io.Reader, n int64, sized bool) ([]byte, int, error) {
	if sized || n <= readChunk {
		buf := alloc(int(n)) // n <= a limit capped at math.MaxInt
		got, err := io.ReadFull(r, buf)
		if err != nil {
			return nil, got, err
		}
		return buf, got, nil
	}
	var pieces [][]byte
	got := int64(0)
	for got < n {
		size := min(max(got/2, readChunk), maxReadPiece, n-got)
		piece := alloc(int(size))
		m, err := io.ReadFull(r, piece)
		got += int64(m)
		if err != nil {
			return nil, int(got), err
		}
		pieces = append(pieces, piece)
	}
	buf := alloc(int(n))
	off := 0
	for i, p := range pieces {
		off += copy(buf[off:], p)
		pieces[i] = nil
	}
	return buf, int(n), nil
}

// checkLayout sorts entries by their data offsets (the order of the data in
// the file) and checks that they tile the data buffer without overlaps or
// holes. It returns the data buffer's length.
func checkLayout(entries []stEntry) (int64, error) {
	slices.SortFunc(entries, func(a, b stEntry) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end), strings.Compare(a.name, b.name))
	})
	var pos int64 // end of the data covered so far
	last := -1    // the entry that ends at pos, if any
	for i, e := range entries {
		switch {
		case e.begin < pos:
			p := entries[last]
			return 0, stErrorf("tensor %q: data_offsets [%d,%d] overlap those of tensor %q, [%d,%d]", e.name, e.begin, e.end, p.name, p.begin, p.end)
		case e.begin > pos:
			return 0, stErrorf("data bytes [%d,%d) before tensor %q belong to no tensor (a hole in the data buffer)", pos, e.begin, e.name)
		}
		if e.end > pos {
			pos, last = e.end, i
		}
	}
	return pos, nil
}

// headerDecoder walks the tokens of a safetensors header. Walking tokens,
// rather than decoding into maps, finds repeated keys and never descends
// into values of unexpected shape.
type headerDecoder struct {
	dec *json.Decoder
}

// token returns the next token, reporting malformed JSON.
func (h headerDecoder) token() (json.Token, error) {
	tok, err := h.dec.Token()
	if err == nil {
		return tok, nil
	}
	if isEOF(err) {
		return nil, stErrorf("header is not valid JSON: it ends at byte %d, inside a value", h.dec.InputOffset())
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return nil, stErrorf("header is not valid JSON: %v (at header byte %d)", err, syn.Offset)
	}
	return nil, stErrorf("header is not valid JSON: %v", err)
}

// open consumes the delimiter that opens an object or array (want '{' or
// '['); what names the value for the error.
func (h headerDecoder) open(want json.Delim, what string) error {
	tok, err := h.token()
	if err != nil {
		return err
	}
	if tok != want {
		kind := "an object"
		if want == '[' {
			kind = "an array"
		}
		return stErrorf("%s is %s, want %s", what, describeToken(tok), kind)
	}
	return nil
}

// key returns the next key of an object whose opening delimiter has been
// consumed, or ok false after consuming its closing delimiter.
func (h headerDecoder) key() (key string, ok bool, err error) {
	if !h.dec.More() {
		_, err := h.token() // the closing '}'
		return "", false, err
	}
	tok, err := h.token()
	if err != nil {
		return "", false, err
	}
	key, ok = tok.(string)
	if !ok { // the decoder reports any other key as a syntax error
		return "", false, stErrorf("header is not valid JSON: an object key is %s", describeToken(tok))
	}
	return key, true, nil
}

// str returns the next value, which must be a string.
func (h headerDecoder) str(what string) (string, error) {
	tok, err := h.token()
	if err != nil {
		return "", err
	}
	s, ok := tok.(string)
	if !ok {
		return "", stErrorf("%s is %s, want a string", what, describeToken(tok))
	}
	return s, nil
}

// ints returns the next value, which must be an array of at most maxLen
// integers in [0, maxVal]; what names the array for errors.
func (h headerDecoder) ints(what string, maxLen int, maxVal int64) ([]int64, error) {
	if err := h.open('[', what); err != nil {
		return nil, err
	}
	var vals []int64
	for h.dec.More() {
		if len(vals) == maxLen {
			return nil, stErrorf("%s has more than %d integers", what, maxLen)
		}
		tok, err := h.token()
		if err != nil {
			return nil, err
		}
		num, isNum := tok.(json.Number)
		v, perr := strconv.ParseInt(string(num), 10, 64)
		if !isNum || perr != nil || v < 0 || v > maxVal {
			return nil, stErrorf("%s[%d] is %s, want an integer in [0, %d]", what, len(vals), describeToken(tok), maxVal)
		}
		vals = append(vals, v)
	}
	_, err := h.token() // the closing ']'
	return vals, err
}

// describeToken formats a JSON token for an error message.
func describeToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return string(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(tok)
}

// parseSafetensorsHeader validates the JSON header and returns its tensor
// entries, in header order, and its metadata.
func parseSafetensorsHeader(header []byte, maxTensors int) ([]stEntry, map[string]string, error) {
	if i := invalidUTF8(header); i >= 0 {
		return nil, nil, stErrorf("header is not valid UTF-8 (at header byte %d)", i)
	}
	dec := json.NewDecoder(bytes.NewReader(header))
	dec.UseNumber()
	h := headerDecoder{dec}
	if err := h.open('{', "header"); err != nil {
		return nil, nil, err
	}
	var (
		entries  []stEntry
		metadata map[string]string
		seen     = map[string]bool{}
	)
	for {
		key, ok, err := h.key()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			break
		}
		if seen[key] {
			if key == safetensorsMetadataKey {
				return nil, nil, stErrorf("header has key %q twice", key)
			}
			return nil, nil, stErrorf("header has tensor %q twice", key)
		}
		seen[key] = true
		if key == safetensorsMetadataKey {
			if metadata, err = h.metadata(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if len(entries) == maxTensors {
			return nil, nil, stErrorf("header has more than %d tensors (SafetensorsLimits.MaxTensors)", maxTensors)
		}
		e, err := h.entry(key)
		if err != nil {
			return nil, nil, err
		}
		entries = append(entries, e)
	}
	off := dec.InputOffset()
	if rest := header[off:]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return nil, nil, stErrorf("header has %d bytes after its JSON object, at header byte %d; only space padding may follow", len(rest), off)
	}
	return entries, metadata, nil
}

// invalidUTF8 returns the offset of the first invalid UTF-8 byte in b, or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, w := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && w == 1 {
			return i
		}
		i += w
	}
	return -1
}

// metadata reads the value of "__metadata__": an object of string values,
// or null (which the reference implementation reads as no metadata).
func (h headerDecoder) metadata() (map[string]string, error) {
	tok, err := h.token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if tok != json.Delim('{') {
		return nil, stErrorf("%q is %s, want an object of strings", safetensorsMetadataKey, describeToken(tok))
	}
	md := map[string]string{}
	for {
		key, ok, err := h.key()
		if err != nil || !ok {
			return md, err
		}
		if _, dup := md[key]; dup {
			return nil, stErrorf("%q has key %q twice", safetensorsMetadataKey, key)
		}
		if md[key], err = h.str(fmt.Sprintf("%s value of key %q", safetensorsMetadataKey, key)); err != nil {
			return nil, err
		}
	}
}

// entry reads the header entry of the tensor called name and checks it on
// its own (checkLayout checks the entries together).
func (h headerDecoder) entry(name string) (stEntry, error) {
	e := stEntry{name: name}
	if err := h.open('{', fmt.Sprintf("tensor %q", name)); err != nil {
		return e, err
	}
	var offsets []int64
	seen := map[string]bool{}
	for {
		field, ok, err := h.key()
		if err != nil {
			return e, err
		}
		if !ok {
			break
		}
		what := fmt.Sprintf("tensor %q: %s", name, field)
		if seen[field] {
			return e, stErrorf("tensor %q has field %q twice", name, field)
		}
		seen[field] = true
		switch field {
		case "dtype":
			s, err := h.str(what)
			if err != nil {
				return e, err
			}
			if e.dtype = safetensorsDType(s); e.dtype == Invalid {
				return e, stErrorf("tensor %q: dtype %q is not supported; loom reads %s", name, s, strings.Join(safetensorsDTypes[Bool:], ", "))
			}
		case "shape":
			dims, err := h.ints(what, maxSafetensorsRank, math.MaxInt)
			if err != nil {
				return e, err
			}
			e.shape = make(Shape, len(dims))
			for i, d := range dims {
				e.shape[i] = int(d)
			}
		case "data_offsets":
			if offsets, err = h.ints(what, 2, math.MaxInt64); err != nil {
				return e, err
			}
		default:
			return e, stErrorf("tensor %q has unknown field %q; want dtype, shape and data_offsets", name, field)
		}
	}
	for _, f := range []string{"dtype", "shape", "data_offsets"} {
		if !seen[f] {
			return e, stErrorf("tensor %q has no %q field", name, f)
		}
	}
	if len(offsets) != 2 {
		return e, stErrorf("tensor %q: data_offsets is %v, want two integers [begin, end]", name, offsets)
	}
	e.begin, e.end = offsets[0], offsets[1]
	if e.begin > e.end {
		return e, stErrorf("tensor %q: data_offsets [%d,%d] begin after they end", name, e.begin, e.end)
	}
	elems := e.shape.Size()
	if elems < 0 || int64(elems) > math.MaxInt64/int64(e.dtype.Size()) {
		return e, stErrorf("tensor %q: shape %v has too many elements", name, e.shape)
	}
	if want := int64(elems) * int64(e.dtype.Size()); e.end-e.begin != want {
		return e, stErrorf("tensor %q: data_offsets [%d,%d] span %d bytes, but %s needs %d (%d elements of %d bytes)",
			name, e.begin, e.end, e.end-e.begin, safetensorsDTypes[e.dtype]+e.shape.String(), want, elems, e.dtype.Size())
	}
	return e, nil
}

// safetensorsDType returns the DType a header names, or Invalid.
func safetensorsDType(s string) DType {
	for _, d := range DTypes() {
		if safetensorsDTypes[d] == s {
			return d
		}
	}
	return Invalid
}

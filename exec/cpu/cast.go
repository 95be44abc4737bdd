package cpu

import (
	"github.com/loomgraph/loom/tensor"
)

// convert is the plain conversion, right for every pair except float to
// integer (saturating, below) and anything to Bool (!= 0).
func convert[S, D elem](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(s[i])
	}
}

// floatToInt converts floats to the integer type D with toInt.
func floatToInt[S, D elem](d []D, s []S, r intRange[D]) {
	s = s[:len(d)]
	for i := range d {
		d[i] = toInt(float64(s[i]), r)
	}
}

// intRange is an integer dtype's range for the saturating conversion:
// its lowest and highest values, as floats and as D.
type intRange[D elem] struct {
	flo, fhi float64
	lo, hi   D
}

// rangeOf is the range of integer dtype dt, held in D (dt's element
// type: int8 for Int8, uint8 for Uint8 ...).
func rangeOf[D elem](dt tensor.DType) intRange[D] {
	lo, hi := dt.IntRange()
	return intRange[D]{float64(lo), float64(hi), D(lo), D(hi)}
}

// toInt is v truncated toward zero and saturated to r, NaN giving 0, as
// tensor.FloatToIntType (Go's own conversion is implementation-defined
// out of range). float64(MaxInt64) is 2^63, outside Int64's range: v >=
// fhi saturates there too.
func toInt[D elem](v float64, r intRange[D]) D {
	switch {
	case v != v:
		return 0
	case v <= r.flo:
		return r.lo
	case v >= r.fhi:
		return r.hi
	}
	return D(v)
}

func toBool[S elem](d []uint8, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = u8(s[i] != 0)
	}
}

// castFunc returns a converter of raw element bytes, dst from src, or nil.
func castFunc(from, to tensor.DType) func(dst, src []byte) {
	if from == to {
		return func(d, s []byte) { copy(d, s) }
	}
	if from.IsComplex() || to.IsComplex() {
		return castComplex(from, to)
	}
	if from.IsStorage() || to.IsStorage() {
		return castViaFloat32(from, to)
	}
	if t := elemTypes[from]; t != nil {
		return t.castTo(from, to)
	}
	return nil
}

// castViaFloat32 handles the storage types: every value goes through
// float32 (exact for both half types; a float64 source rounds twice, which
// can differ from direct rounding in the last half-precision bit). The
// other side's element type comes from elemTypes.
func castViaFloat32(from, to tensor.DType) func(d, s []byte) {
	dec, enc := halfDecoder(from), halfEncoder(to)
	switch {
	case dec != nil && enc != nil:
		return func(d, s []byte) {
			x, y := as[uint16](s), as[uint16](d)
			n := min(len(x), len(y))
			for i := 0; i < n; i++ {
				y[i] = enc(dec(x[i]))
			}
		}
	case dec != nil && elemTypes[to] != nil:
		return elemTypes[to].fromHalf(dec, to)
	case enc != nil && elemTypes[from] != nil:
		return elemTypes[from].toHalf(enc)
	}
	return nil
}

// halfDecoder returns the float32 value of a storage type's element bits,
// nil for the other dtypes.
func halfDecoder(dt tensor.DType) func(uint16) float32 {
	switch dt {
	case tensor.Float16:
		return func(b uint16) float32 { return tensor.F16(b).Float32() }
	case tensor.BFloat16:
		return func(b uint16) float32 { return tensor.BF16(b).Float32() }
	}
	return nil
}

// halfEncoder returns a storage type's element bits of a float32 (rounded
// to nearest even), nil for the other dtypes.
func halfEncoder(dt tensor.DType) func(float32) uint16 {
	switch dt {
	case tensor.Float16:
		return func(v float32) uint16 { return uint16(tensor.F16FromFloat32(v)) }
	case tensor.BFloat16:
		return func(v float32) uint16 { return uint16(tensor.BF16FromFloat32(v)) }
	}
	return nil
}

// castComplex converts to, from and between the complex types: complex to
// complex rounds each part; a real source becomes the real part (cast to
// the parts' type as a real Cast does) with a zero imaginary part; a
// complex source gives its real part, then cast as from the parts' type
// (NumPy's rule, which warns; loom documents it at ops.Cast), but for bool,
// which is z != 0 (either part non-zero).
func castComplex(from, to tensor.DType) func(d, s []byte) {
	switch {
	case from == tensor.Complex64 && to == tensor.Complex128:
		return func(d, s []byte) { convert(as[float64](d), as[float32](s)[:len(d)/8]) }
	case from == tensor.Complex128 && to == tensor.Complex64:
		return func(d, s []byte) { convert(as[float32](d), as[float64](s)[:len(d)/4]) }
	case to.IsComplex(): // real to complex: the real part through a real cast
		part := castFunc(from, to.RealDType())
		if part == nil {
			return nil
		}
		if to == tensor.Complex64 {
			return func(d, s []byte) { toComplex[float32](d, s, part) }
		}
		return func(d, s []byte) { toComplex[float64](d, s, part) }
	}
	if to == tensor.Bool { // z != 0: either part non-zero, as NumPy
		if from == tensor.Complex64 {
			return func(d, s []byte) { complexNonZero(d, as[float32](s)) }
		}
		return func(d, s []byte) { complexNonZero(d, as[float64](s)) }
	}
	part := castFunc(from.RealDType(), to) // complex to real: the real part
	if part == nil {
		return nil
	}
	if from == tensor.Complex64 {
		return func(d, s []byte) { fromComplex[float32](d, s, part, to.Size()) }
	}
	return func(d, s []byte) { fromComplex[float64](d, s, part, to.Size()) }
}

// castChunk is the elements a complex cast converts through its buffer at
// a time.
const castChunk = 512

// toComplex writes complex elements (parts of type P) into d from the
// real elements s: part casts s into P, written as real parts with zero
// imaginary parts.
func toComplex[P float](d, s []byte, part func(d, s []byte)) {
	var buf [castChunk]P
	out := as[P](d)
	n := len(out) / 2
	ssz := len(s) / max(n, 1)
	for i := 0; i < n; i += castChunk {
		m := min(castChunk, n-i)
		part(asBytes(buf[:m]), s[i*ssz:(i+m)*ssz])
		for k := 0; k < m; k++ {
			out[2*(i+k)], out[2*(i+k)+1] = buf[k], 0
		}
	}
}

// fromComplex writes into d (elements of dsz bytes) the real parts of the
// complex elements s (parts of type P), cast by part.
func fromComplex[P float](d, s []byte, part func(d, s []byte), dsz int) {
	var buf [castChunk]P
	in := as[P](s)
	n := len(d) / dsz
	for i := 0; i < n; i += castChunk {
		m := min(castChunk, n-i)
		for k := 0; k < m; k++ {
			buf[k] = in[2*(i+k)]
		}
		part(d[i*dsz:(i+m)*dsz], asBytes(buf[:m]))
	}
}

// complexNonZero writes into the bools d whether each complex element of
// the interleaved parts s is non-zero (NaN parts count as non-zero).
func complexNonZero[P float](d []byte, s []P) {
	for i := range d {
		d[i] = 0
		if s[2*i] != 0 || s[2*i+1] != 0 {
			d[i] = 1
		}
	}
}

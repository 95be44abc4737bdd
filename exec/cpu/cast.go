package cpu

import (
	"math"

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

// floatToInt truncates toward zero, saturates at the target range and maps
// NaN to 0: Go's own conversion is implementation-defined out of range.
func floatToInt[S, D elem](d []D, s []S) {
	bits := bitsOf[D]()
	lo := -math.Ldexp(1, bits-1) // the range of a signed D, exactly
	hi := -lo
	s = s[:len(d)]
	for i := range d {
		v := float64(s[i])
		switch {
		case v != v:
			d[i] = 0
		case v <= lo:
			d[i] = D(int64(-1) << (bits - 1))
		case v >= hi:
			d[i] = D(int64(uint64(1)<<(bits-1) - 1))
		default:
			d[i] = D(v)
		}
	}
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
// can differ from direct rounding in the last half-precision bit).
func castViaFloat32(from, to tensor.DType) func(d, s []byte) {
	read := func(s []byte, i int) float32 {
		switch from {
		case tensor.Float16:
			return as[tensor.F16](s)[i].Float32()
		case tensor.BFloat16:
			return as[tensor.BF16](s)[i].Float32()
		case tensor.Bool:
			return float32(s[i])
		case tensor.Int32:
			return float32(as[int32](s)[i])
		case tensor.Int64:
			return float32(as[int64](s)[i])
		case tensor.Float32:
			return as[float32](s)[i]
		case tensor.Float64:
			return float32(as[float64](s)[i])
		}
		return float32(math.NaN())
	}
	fs, ts := from.Size(), to.Size()
	return func(d, s []byte) {
		n := len(s) / fs
		if len(d)/ts < n {
			n = len(d) / ts
		}
		for i := 0; i < n; i++ {
			v := read(s, i)
			switch to {
			case tensor.Float16:
				as[tensor.F16](d)[i] = tensor.F16FromFloat32(v)
			case tensor.BFloat16:
				as[tensor.BF16](d)[i] = tensor.BF16FromFloat32(v)
			case tensor.Bool:
				d[i] = u8(v != 0)
			case tensor.Int32:
				as[int32](d)[i] = int32(tensor.FloatToInt(float64(v), 32))
			case tensor.Int64:
				as[int64](d)[i] = tensor.FloatToInt(float64(v), 64)
			case tensor.Float32:
				as[float32](d)[i] = v
			case tensor.Float64:
				as[float64](d)[i] = float64(v)
			}
		}
	}
}

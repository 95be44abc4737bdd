package cpu

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

func init() { kernels[ops.OpCast] = prepareCast }

type castable interface{ num | uint8 }

// convert is the plain conversion, right for every pair except float to
// integer (saturating, below) and anything to Bool (!= 0).
func convert[S, D castable](d []D, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = D(s[i])
	}
}

// floatToInt truncates toward zero, saturates at the target range and maps
// NaN to 0: Go's own conversion is implementation-defined out of range.
func floatToInt[S float, D integer](d []D, s []S) {
	var z D
	lo, hi := math.MinInt64, math.MaxInt64
	if _, ok := any(z).(int32); ok {
		lo, hi = math.MinInt32, math.MaxInt32
	}
	flo, fhi := float64(lo), float64(hi)
	s = s[:len(d)]
	for i := range d {
		v := float64(s[i])
		switch {
		case v != v:
			d[i] = 0
		case v <= flo:
			d[i] = D(lo)
		case v >= fhi:
			d[i] = D(hi)
		default:
			d[i] = D(v)
		}
	}
}

func toBool[S castable](d []uint8, s []S) {
	s = s[:len(d)]
	for i := range d {
		d[i] = u8(s[i] != 0)
	}
}

func prepareCast(n *graph.Node) (*kernel, error) {
	from, to := n.Input(0).DType(), n.DType()
	f := castFunc(from, to)
	if f == nil {
		return nil, fmt.Errorf("no Cast kernel from %v to %v", from, to)
	}
	size := n.Shape().Size()
	fs, ts := from.Size(), to.Size()
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			f(a.Out()[lo*ts:hi*ts], a.In(0)[lo*fs:hi*fs])
		})
		return func() { l.Run(size, grainElems, stepElems) }
	}}, nil
}

// castFunc returns a converter of raw element bytes, dst from src.
func castFunc(from, to tensor.DType) func(dst, src []byte) {
	if from == to {
		return func(d, s []byte) { copy(d, s) }
	}
	if from.IsStorage() || to.IsStorage() {
		return castViaFloat32(from, to)
	}
	switch from {
	case tensor.Bool:
		return castFrom[uint8](to)
	case tensor.Int32:
		return castFrom[int32](to)
	case tensor.Int64:
		return castFrom[int64](to)
	case tensor.Float32:
		return castFromFloat[float32](to)
	case tensor.Float64:
		return castFromFloat[float64](to)
	}
	return nil
}

func castFrom[S castable](to tensor.DType) func(d, s []byte) {
	switch to {
	case tensor.Bool:
		return func(d, s []byte) { toBool(d, as[S](s)) }
	case tensor.Int32:
		return func(d, s []byte) { convert(as[int32](d), as[S](s)) }
	case tensor.Int64:
		return func(d, s []byte) { convert(as[int64](d), as[S](s)) }
	case tensor.Float32:
		return func(d, s []byte) { convert(as[float32](d), as[S](s)) }
	case tensor.Float64:
		return func(d, s []byte) { convert(as[float64](d), as[S](s)) }
	}
	return nil
}

func castFromFloat[S float](to tensor.DType) func(d, s []byte) {
	switch to {
	case tensor.Int32:
		return func(d, s []byte) { floatToInt(as[int32](d), as[S](s)) }
	case tensor.Int64:
		return func(d, s []byte) { floatToInt(as[int64](d), as[S](s)) }
	}
	return castFrom[S](to)
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

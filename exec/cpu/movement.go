package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// gather is an affine strided copy: the output, in row-major order over
// dims, reads input element base + sum(idx[d]*strides[d]). Transpose,
// BroadcastTo and Slice are all gathers.
type gather struct {
	dims    []int
	strides []int
	base    int
	n       int
}

func newGather(dims, strides []int, base int) *gather {
	var ds, ss []int
	for i, d := range dims {
		if d != 1 {
			ds = append(ds, d)
			ss = append(ss, strides[i])
		}
	}
	if len(ds) == 0 {
		ds, ss = []int{1}, []int{1}
	}
	for i := len(ds) - 2; i >= 0; i-- {
		if ss[i] == ss[i+1]*ds[i+1] {
			ds[i] *= ds[i+1]
			ss[i] = ss[i+1]
			ds = append(ds[:i+1], ds[i+2:]...)
			ss = append(ss[:i+1], ss[i+2:]...)
		}
	}
	n := 1
	for _, d := range ds {
		n *= d
	}
	return &gather{dims: ds, strides: ss, base: base, n: n}
}

// offset returns the strided offset of row-major position p and p's index
// j within the innermost dimension.
func (g *gather) offset(p int) (off, j int) {
	last := len(g.dims) - 1
	inner := g.dims[last]
	outer, j := p/inner, p%inner
	off = g.base + j*g.strides[last]
	for d := last - 1; d >= 0 && outer > 0; d-- {
		off += (outer % g.dims[d]) * g.strides[d]
		outer /= g.dims[d]
	}
	return off, j
}

func (g *gather) kernel(dt tensor.DType) (*kernel, error) {
	switch dt.Size() {
	case 1:
		return gatherKernel[uint8](g), nil
	case 2:
		return gatherKernel[uint16](g), nil
	case 4:
		return gatherKernel[uint32](g), nil
	case 8:
		return gatherKernel[uint64](g), nil
	case 16:
		return gatherKernel[bits128](g), nil
	}
	return nil, fmt.Errorf("no gather for %v", dt)
}

func gatherKernel[T uint8 | uint16 | uint32 | uint64 | bits128](g *gather) *kernel {
	last := len(g.dims) - 1
	inner, is := g.dims[last], g.strides[last]
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			src, dst := as[T](a.In(0)), as[T](a.Out())
			for p := lo; p < hi; {
				off, j := g.offset(p)
				run := min(inner-j, hi-p)
				switch is {
				case 1:
					copy(dst[p:p+run], src[off:off+run])
				case 0:
					v := src[off]
					for i := p; i < p+run; i++ {
						dst[i] = v
					}
				default:
					for i := 0; i < run; i++ {
						dst[p+i] = src[off+i*is]
					}
				}
				p += run
			}
		})
		return func() { l.Run(g.n, grainElems, stepElems) }
	}}
}

func prepareTranspose(n *graph.Node) (*kernel, error) {
	perm := n.Attr().(opdef.PermAttr).Perm
	in := n.Input(0).Shape().Strides()
	st := make([]int, len(perm))
	for i, p := range perm {
		st[i] = in[p]
	}
	return newGather(n.Shape(), st, 0).kernel(n.DType())
}

func prepareBroadcastTo(n *graph.Node) (*kernel, error) {
	out, from := n.Shape(), n.Input(0).Shape()
	in := from.Strides()
	st := make([]int, len(out))
	off := len(out) - len(from)
	for i := range from {
		if from[i] == out[off+i] {
			st[off+i] = in[i]
		}
	}
	return newGather(out, st, 0).kernel(n.DType())
}

func prepareSlice(n *graph.Node) (*kernel, error) {
	rs := n.Attr().(opdef.SliceAttr).Ranges
	in := n.Input(0).Shape().Strides()
	st := make([]int, len(rs))
	base := 0
	for i, r := range rs {
		st[i] = in[i] * r.Step
		base += r.Start * in[i]
	}
	if n.Shape().Size() == 0 {
		return prepareCopy(n)
	}
	return newGather(n.Shape(), st, base).kernel(n.DType())
}

// prepareConcat copies each operand's blocks into place: along the axis,
// operand k occupies bytes [off_k, off_k+size_k) of every outer row of
// the result. The loop runs over the result's bytes, so that a concat
// with few outer rows (axis 0) is still split into parts and sub-ranges.
func prepareConcat(n *graph.Node) (*kernel, error) {
	axis := n.Attr().(opdef.AxisAttr).Axis
	out := n.Shape()
	outer, inner := 1, 1
	for _, d := range out[:axis] {
		outer *= d
	}
	for _, d := range out[axis+1:] {
		inner *= d
	}
	es := n.DType().Size()
	row := out[axis] * inner * es // bytes of one outer row of the result
	type part struct{ k, off, size int }
	var parts []part // the operands with bytes, in order along the axis
	off := 0
	for k, in := range n.Inputs() {
		sz := in.Shape()[axis] * inner * es
		if sz > 0 {
			parts = append(parts, part{k, off, sz})
		}
		off += sz
	}
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			dst := a.Out()
			o, w := lo/row, lo%row // outer row of byte lo, byte within it
			i := 0                 // the part w lies in
			for parts[i].off+parts[i].size <= w {
				i++
			}
			for b := lo; b < hi; {
				p := parts[i]
				from := o*p.size + w - p.off
				m := min(p.off+p.size-w, hi-b)
				copy(dst[b:b+m], a.In(p.k)[from:from+m])
				b, w = b+m, w+m
				if w == p.off+p.size {
					if i++; i == len(parts) {
						o, w, i = o+1, 0, 0
					}
				}
			}
		})
		return func() { l.Run(outer*row, grainElems*es, copyStep) }
	}}, nil
}

// preparePad zeroes the result and scatters the operand to its strided
// positions: element idx of x goes to base + sum(idx[d]*strides[d]), a
// gather run backwards.
func preparePad(n *graph.Node) (*kernel, error) {
	ws := n.Attr().(opdef.PadAttr).Widths
	out := n.Shape().Strides()
	st := make([]int, len(ws))
	base := 0
	for i, w := range ws {
		st[i] = out[i] * (w.Interior + 1)
		base += w.Low * out[i]
	}
	sc := newGather(n.Input(0).Shape(), st, base)
	switch n.DType().Size() {
	case 1:
		return scatterKernel[uint8](sc, n.Input(0).Shape().Size()), nil
	case 2:
		return scatterKernel[uint16](sc, n.Input(0).Shape().Size()), nil
	case 4:
		return scatterKernel[uint32](sc, n.Input(0).Shape().Size()), nil
	case 8:
		return scatterKernel[uint64](sc, n.Input(0).Shape().Size()), nil
	case 16:
		return scatterKernel[bits128](sc, n.Input(0).Shape().Size()), nil
	}
	return nil, fmt.Errorf("no Pad kernel for %v", n.DType())
}

func scatterKernel[T uint8 | uint16 | uint32 | uint64 | bits128](g *gather, size int) *kernel {
	last := len(g.dims) - 1
	inner, os := g.dims[last], g.strides[last]
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			src, dst := as[T](a.In(0)), as[T](a.Out())
			for p := lo; p < hi; {
				off, j := g.offset(p)
				run := min(inner-j, hi-p)
				if os == 1 {
					copy(dst[off:off+run], src[p:p+run])
				} else {
					for i := 0; i < run; i++ {
						dst[off+i*os] = src[p+i]
					}
				}
				p += run
			}
		})
		zero := a.Loop(func(lo, hi, _ int) { clear(a.Out()[lo:hi]) })
		return func() {
			zero.Run(len(a.Out()), 4*grainElems, copyStep)
			if size > 0 && !a.Stopped() {
				l.Run(size, grainElems, stepElems)
			}
		}
	}}
}

// prepareCopy is the kernel of an op whose value is its operand's bytes
// (Reshape, CustomGrad).
func prepareCopy(n *graph.Node) (*kernel, error) {
	return &kernel{bind: copyLoop}, nil
}

// segments describes Repeat and SumRuns along one axis: outer rows
// before it, inner elements after it, the long axis (the counts' sum) and
// the short one (one position per count), and for each long position the
// count it belongs to. The offsets operand (In(1)) is not read: the
// counts are in the attribute.
type segments struct {
	outer, inner, long, short int
	src                       []int
}

func segmentsOf(n *graph.Node, x tensor.Shape) *segments {
	a := n.Attr().(opdef.RepeatAttr)
	s := &segments{outer: 1, inner: 1, short: len(a.Counts)}
	for _, d := range x[:a.Axis] {
		s.outer *= d
	}
	for _, d := range x[a.Axis+1:] {
		s.inner *= d
	}
	for i, c := range a.Counts {
		for range c {
			s.src = append(s.src, i)
		}
	}
	s.long = len(s.src)
	return s
}

// prepareRepeat copies, for every (outer row, long position), the inner
// block of the short position it repeats.
func prepareRepeat(n *graph.Node) (*kernel, error) {
	if n.Shape().Size() == 0 {
		return prepareCopy(n)
	}
	s := segmentsOf(n, n.Input(0).Shape())
	if s.inner == 1 { // single elements: typed moves, not copy calls
		switch n.DType().Size() {
		case 1:
			return repeatElems[uint8](s), nil
		case 2:
			return repeatElems[uint16](s), nil
		case 4:
			return repeatElems[uint32](s), nil
		case 8:
			return repeatElems[uint64](s), nil
		case 16:
			return repeatElems[bits128](s), nil
		}
	}
	row := s.inner * n.DType().Size() // bytes of one inner block
	rows := max(1, grainElems/s.inner)
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			src, dst := a.In(0), a.Out()
			for u := lo; u < hi; u++ {
				o, j := u/s.long, u%s.long
				from := (o*s.short + s.src[j]) * row
				copy(dst[u*row:(u+1)*row], src[from:from+row])
			}
		})
		return func() { l.Run(s.outer*s.long, rows, max(1, stepElems/s.inner)) }
	}}, nil
}

// repeatElems is Repeat along the last axis (inner blocks of one
// element): each result element reads its source.
func repeatElems[T uint8 | uint16 | uint32 | uint64 | bits128](s *segments) *kernel {
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			src, dst := as[T](a.In(0)), as[T](a.Out())
			o, j := lo/s.long, lo%s.long
			base := o * s.short
			for u := lo; u < hi; u++ {
				dst[u] = src[base+s.src[j]]
				if j++; j == s.long {
					j, base = 0, base+s.short
				}
			}
		})
		return func() { l.Run(s.outer*s.long, grainElems, stepElems) }
	}}
}

// prepareSumRuns sums, for every (outer row, short position), the
// inner blocks of its run of long positions, in order, in float64 for
// the float types and int64 (wrapping) for the integers.
func prepareSumRuns(n *graph.Node) (*kernel, error) {
	if n.Shape().Size() == 0 {
		return prepareCopy(n)
	}
	s := segmentsOf(n, n.Shape())
	off := make([]int, s.short+1)
	a := n.Attr().(opdef.RepeatAttr)
	for i, c := range a.Counts {
		off[i+1] = off[i] + c
	}
	switch n.DType() {
	case tensor.Float32:
		return sumRunsKernel[float32, float64](s, off), nil
	case tensor.Float64:
		return sumRunsKernel[float64, float64](s, off), nil
	case tensor.Int32:
		return sumRunsKernel[int32, int64](s, off), nil
	case tensor.Int64:
		return sumRunsKernel[int64, int64](s, off), nil
	case tensor.Int8:
		return sumRunsKernel[int8, int64](s, off), nil
	case tensor.Int16:
		return sumRunsKernel[int16, int64](s, off), nil
	case tensor.Uint8:
		return sumRunsKernel[uint8, int64](s, off), nil
	}
	return nil, fmt.Errorf("no SumRuns kernel for %v", n.DType())
}

func sumRunsKernel[T elem | int8 | int16, W wide](s *segments, off []int) *kernel {
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			src, dst := as[T](a.In(0)), as[T](a.Out())
			for u := lo; u < hi; u++ {
				o, i := u/s.short, u%s.short
				base := o * s.long * s.inner
				for k := 0; k < s.inner; k++ {
					var acc W
					for j := off[i]; j < off[i+1]; j++ {
						acc += W(src[base+j*s.inner+k])
					}
					dst[u*s.inner+k] = T(acc)
				}
			}
		})
		cost := s.inner * (s.long/s.short + 1) // elements read per result block
		return func() { l.Run(s.outer*s.short, max(1, grainElems/cost), max(1, stepElems/cost)) }
	}}
}

// prepareIota writes each element's index along the attribute's axis:
// (p / stride) % length for row-major position p.
func prepareIota(n *graph.Node) (*kernel, error) {
	a := n.Attr().(opdef.IotaAttr)
	stride := 1
	for _, d := range n.Shape()[a.Axis+1:] {
		stride *= d
	}
	length := n.Shape()[a.Axis]
	switch n.DType() {
	case tensor.Int32:
		return iotaKernel[int32](n.Shape().Size(), stride, length), nil
	case tensor.Int64:
		return iotaKernel[int64](n.Shape().Size(), stride, length), nil
	}
	return nil, fmt.Errorf("no Iota kernel for %v", n.DType())
}

func iotaKernel[T int32 | int64](size, stride, length int) *kernel {
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			dst := as[T](a.Out())
			for p := lo; p < hi; {
				// A run of stride equal values, then the next index.
				v := (p / stride) % length
				end := min(hi, (p/stride+1)*stride)
				for ; p < end; p++ {
					dst[p] = T(v)
				}
			}
		})
		return func() { l.Run(size, grainElems, stepElems) }
	}}
}

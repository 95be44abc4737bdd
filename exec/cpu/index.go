package cpu

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/simd"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The kernels of the indexing ops (ops/index.go). Every index is checked
// where it is read: one outside its axis (after a negative one wraps
// once) is skipped, so nothing is read or written out of bounds, and the
// kernel then finds the first bad index in order and reports it with
// args.Fail, so that Run fails naming the op, its call site and that
// index, whatever the thread count.
//
// Geometry: x's shape split at the axis into outer (the axes before), d
// (the axis) and inner (the axes after); n is the indices' length along
// the axis (Gather: all of them, flattened).
type ixGeom struct {
	op                 string
	axis               int
	outer, d, inner, n int
	esize              int // bytes per element
	idx                tensor.Shape
	wideIdx            bool
}

func ixGeomOf(n *graph.Node) ixGeom {
	x := n.Input(0).Shape()
	ax := n.Attr().(opdef.AxisAttr).Axis
	g := ixGeom{op: n.Op().String(), axis: ax, outer: 1, d: x[ax], inner: 1, esize: n.DType().Size(),
		idx: n.Input(1).Shape(), wideIdx: n.Input(1).DType() == tensor.Int64}
	for _, v := range x[:ax] {
		g.outer *= v
	}
	for _, v := range x[ax+1:] {
		g.inner *= v
	}
	if n.Op() == ops.OpGather || n.Op() == ops.OpIndexAdd {
		g.n = g.idx.Size()
	} else {
		g.n = g.idx[ax]
	}
	return g
}

// index is an index element type.
type index interface{ int32 | int64 }

// firstBad is the error of the first index of idx outside an axis of
// length d (nil when there is none).
func firstBad[I index](g *ixGeom, idx []I) error {
	for p, v := range idx {
		if opdef.WrapIndex(int64(v), g.d) < 0 {
			return opdef.IndexError(g.op, int64(v), p, g.axis, g.d)
		}
	}
	return nil
}

// wrapped maps index v to 0..d-1, or returns false when it is out of
// range.
func wrapped[I index](v I, d int) (int, bool) {
	w := int(v)
	if w < 0 {
		w += d
	}
	return w, uint(w) < uint(d)
}

// bySize dispatches a movement kernel on the index type and the element
// size (the element's bits are moved, whatever the dtype).
func bySize(g ixGeom, k func(ixGeom) func(int) (*kernel, bool)) (*kernel, error) {
	f := k(g)
	if kn, ok := f(g.esize); ok {
		return kn, nil
	}
	return nil, fmt.Errorf("no %s kernel for elements of %d bytes", g.op, g.esize)
}

// prepareGather copies, for every (outer row, index), the inner block of
// x at that index: one copy per row when the block is more than one
// element, a typed move per element otherwise.
func prepareGather(n *graph.Node) (*kernel, error) {
	if n.Shape().Size() == 0 {
		return &kernel{bind: func(*args) func() { return func() {} }}, nil
	}
	g := ixGeomOf(n)
	if g.wideIdx {
		return gatherOf[int64](g)
	}
	return gatherOf[int32](g)
}

func gatherOf[I index](g ixGeom) (*kernel, error) {
	if g.inner > 1 {
		return gatherRows[I](g), nil
	}
	switch g.esize {
	case 1:
		return gatherElems[I, uint8](g), nil
	case 2:
		return gatherElems[I, uint16](g), nil
	case 4:
		return gatherElems[I, uint32](g), nil
	case 8:
		return gatherElems[I, uint64](g), nil
	case 16:
		return gatherElems[I, bits128](g), nil
	}
	return nil, fmt.Errorf("no Gather kernel for elements of %d bytes", g.esize)
}

// finish is the end of a checked kernel: when some part saw a bad index,
// the first in order is reported.
func finish[I index](a *args, g *ixGeom, bad *atomic.Bool) {
	if bad.Load() {
		a.Fail(firstBad(g, as[I](a.In(1))))
	}
}

func gatherRows[I index](g ixGeom) *kernel {
	row := g.inner * g.esize
	return &kernel{bind: func(a *args) func() {
		var bad atomic.Bool
		l := a.Loop(func(lo, hi, _ int) {
			idx, src, dst := as[I](a.In(1)), a.In(0), a.Out()
			o, j := lo/g.n, lo%g.n
			for r := lo; r < hi; r++ {
				if v, ok := wrapped(idx[j], g.d); ok {
					from := (o*g.d + v) * row
					copy(dst[r*row:(r+1)*row], src[from:from+row])
				} else {
					bad.Store(true)
				}
				if j++; j == g.n {
					j, o = 0, o+1
				}
			}
		})
		return func() {
			bad.Store(false)
			l.Run(g.outer*g.n, max(1, grainElems/g.inner), max(1, stepElems/g.inner))
			finish[I](a, &g, &bad)
		}
	}}
}

func gatherElems[I index, T uint8 | uint16 | uint32 | uint64 | bits128](g ixGeom) *kernel {
	return &kernel{bind: func(a *args) func() {
		var bad atomic.Bool
		l := a.Loop(func(lo, hi, _ int) {
			idx, src, dst := as[I](a.In(1)), as[T](a.In(0)), as[T](a.Out())
			o, j := lo/g.n, lo%g.n
			base := o * g.d
			for r := lo; r < hi; r++ {
				if v, ok := wrapped(idx[j], g.d); ok {
					dst[r] = src[base+v]
				} else {
					bad.Store(true)
				}
				if j++; j == g.n {
					j, base = 0, base+g.d
				}
			}
		})
		return func() {
			bad.Store(false)
			l.Run(g.outer*g.n, grainElems, stepElems)
			finish[I](a, &g, &bad)
		}
	}}
}

// prepareTakeAlongAxis reads, for every element of the indices, x's
// element at that index along the axis (the same outer and inner
// position).
func prepareTakeAlongAxis(n *graph.Node) (*kernel, error) {
	if n.Shape().Size() == 0 {
		return &kernel{bind: func(*args) func() { return func() {} }}, nil
	}
	g := ixGeomOf(n)
	if g.wideIdx {
		return bySize(g, takeAlong[int64])
	}
	return bySize(g, takeAlong[int32])
}

func takeAlong[I index](g ixGeom) func(int) (*kernel, bool) {
	return func(size int) (*kernel, bool) {
		switch size {
		case 1:
			return takeAlongK[I, uint8](g), true
		case 2:
			return takeAlongK[I, uint16](g), true
		case 4:
			return takeAlongK[I, uint32](g), true
		case 8:
			return takeAlongK[I, uint64](g), true
		case 16:
			return takeAlongK[I, bits128](g), true
		}
		return nil, false
	}
}

func takeAlongK[I index, T uint8 | uint16 | uint32 | uint64 | bits128](g ixGeom) *kernel {
	return &kernel{bind: func(a *args) func() {
		var bad atomic.Bool
		l := a.Loop(func(lo, hi, _ int) {
			idx, src, dst := as[I](a.In(1)), as[T](a.In(0)), as[T](a.Out())
			// p = (o*n + j)*inner + i; x's element is (o*d + v)*inner + i.
			o, rest := lo/(g.n*g.inner), lo%(g.n*g.inner)
			j, i := rest/g.inner, rest%g.inner
			base := o * g.d * g.inner
			for p := lo; p < hi; p++ {
				if v, ok := wrapped(idx[p], g.d); ok {
					dst[p] = src[base+v*g.inner+i]
				} else {
					bad.Store(true)
				}
				if i++; i == g.inner {
					i = 0
					if j++; j == g.n {
						j, base = 0, base+g.d*g.inner
					}
				}
			}
		})
		return func() {
			bad.Store(false)
			l.Run(g.idx.Size(), grainElems, stepElems)
			finish[I](a, &g, &bad)
		}
	}}
}

// The scatters (Scatter, ScatterAdd, IndexAdd) first copy x into the
// result (nothing to copy when the memory planner gave the result x's
// buffer), then write or add the updates. Every result element is
// written by one part only, and each part walks the indices in order, so
// duplicates meet in row-major order of the indices (the last write wins;
// sums are added in that order) on any number of threads. The work is cut
// into pieces (outer row, inner chunk, destination range): a piece
// handles the updates of its outer row and inner chunk whose index falls
// in its range of the axis. Many updates into few rows (an embedding's
// gradient) are split by inner chunk or by destination row, without
// atomics and without per-thread copies.
type ixScatterPlan struct {
	ichunk, nichunks, dparts int
}

// minChunk is the fewest inner elements a piece of a scatter handles.
const minChunk = 64

// planIxScatter cuts the work into about four pieces per thread; work is
// the number of updated elements.
func planIxScatter(g *ixGeom, threads, work int) ixScatterPlan {
	p := ixScatterPlan{ichunk: g.inner, nichunks: 1, dparts: 1}
	want := 4 * threads
	if threads <= 1 || work < grainElems {
		return p
	}
	pieces := g.outer
	ranges := func() {
		// Destination ranges: each piece scans every index and handles
		// those in its range, adding whole rows.
		// Every destination range costs a scan of all the indices, so
		// the ranges are at most inner/16 (the scans then cost at most a
		// sixteenth of the rows' adds, whatever the thread count).
		if pieces < want && g.d > 1 {
			p.dparts = min(g.d, (want+pieces-1)/pieces, max(1, g.inner/16))
			pieces *= p.dparts
		}
	}
	if g.d >= 4*want {
		// Many destination rows (an embedding's gradient): ranges first.
		ranges()
	}
	if pieces < threads && g.inner >= 2*minChunk {
		// Few destination rows (many updates into few): one inner chunk
		// per thread (equal work, so no more pieces are needed), so that
		// every piece reads the updates in order, in long runs (streams
		// that prefetch well), rather than the scattered rows of a
		// destination range.
		p.nichunks = min(g.inner/minChunk, (threads+pieces-1)/pieces)
		p.ichunk = (g.inner + p.nichunks - 1) / p.nichunks
		p.nichunks = (g.inner + p.ichunk - 1) / p.ichunk
		pieces *= p.nichunks
	}
	if pieces < threads {
		ranges()
	}
	return p
}

// piece is one piece of a scatter plan: its outer row, inner chunk
// [i0,i1) and destination range [d0,d1).
func (p ixScatterPlan) piece(g *ixGeom, k int) (o, i0, i1, d0, d1 int) {
	dp := k % p.dparts
	k /= p.dparts
	c := k % p.nichunks
	o = k / p.nichunks
	i0, i1 = c*p.ichunk, min(g.inner, (c+1)*p.ichunk)
	d0, d1 = g.d*dp/p.dparts, g.d*(dp+1)/p.dparts
	return
}

func (p ixScatterPlan) pieces(g *ixGeom) int { return g.outer * p.nichunks * p.dparts }

// scalarFill returns the bytes of one element when x is a scalar
// constant broadcast (ZerosLike, Full: what a gradient scatters into),
// so that the scatter fills its result itself instead of copying x (and
// the backend skips computing x when nothing else reads it: see
// kernel.ignoresIn0).
func scalarFill(x *graph.Node) []byte {
	if x.Op() != ops.OpBroadcastTo {
		return nil
	}
	c := x.Input(0)
	if c.Op() != graph.OpConst || c.Value() == nil || c.Shape().Size() != 1 {
		return nil
	}
	return c.Value().Bytes()
}

// fillLoop sets every element of the result to the element elem (in
// parallel sub-ranges, so that a long fill can be cancelled).
func fillLoop(a *args, elem []byte) func() {
	zero := true
	for _, b := range elem {
		zero = zero && b == 0
	}
	size := len(elem)
	l := a.Loop(func(lo, hi, _ int) {
		out := a.Out()[lo*size : hi*size]
		if zero {
			clear(out)
			return
		}
		for p := 0; p < len(out); p += size {
			copy(out[p:p+size], elem)
		}
	})
	return func() { l.Run(len(a.Out())/size, 4*grainElems, copyStep) }
}

// copyX copies operand 0 into the result unless they share memory, or
// fills the result when operand 0 is a broadcast scalar constant (fill).
func copyX(a *args, fill []byte) func() {
	if fill != nil {
		return fillLoop(a, fill)
	}
	cp := copyLoop(a)
	return func() {
		in, out := a.In(0), a.Out()
		if len(out) == 0 || unsafe.SliceData(in) == unsafe.SliceData(out) {
			return
		}
		cp()
	}
}

// ixScatterFn is the body of a scatter piece over typed views.
type ixScatterFn[I index, T any] func(g *ixGeom, idx []I, upd, out []T, o, i0, i1, d0, d1 int, bad *atomic.Bool)

func ixScatterKernel[I index, T any](g ixGeom, body ixScatterFn[I, T], fill []byte) *kernel {
	work := g.outer * g.n * g.inner
	return &kernel{ignoresIn0: fill != nil, bind: func(a *args) func() {
		var bad atomic.Bool
		p := planIxScatter(&g, a.Threads(), work)
		l := a.Loop(func(lo, hi, _ int) {
			idx, upd, out := as[I](a.In(1)), as[T](a.In(2)), as[T](a.Out())
			for k := lo; k < hi; k++ {
				o, i0, i1, d0, d1 := p.piece(&g, k)
				body(&g, idx, upd, out, o, i0, i1, d0, d1, &bad)
			}
		})
		cp := copyX(a, fill)
		return func() {
			cp()
			if work == 0 || a.Stopped() {
				return
			}
			bad.Store(false)
			l.Run(p.pieces(&g), 1, 1)
			finish[I](a, &g, &bad)
		}
	}}
}

// alongBody is a piece of Scatter (add false) or ScatterAdd: every update
// element has its own index.
func alongBody[I index, T simd.Number](add bool) ixScatterFn[I, T] {
	return func(g *ixGeom, idx []I, upd, out []T, o, i0, i1, d0, d1 int, bad *atomic.Bool) {
		whole := d0 == 0 && d1 == g.d
		for j := 0; j < g.n; j++ {
			base := (o*g.n + j) * g.inner
			for i := i0; i < i1; i++ {
				v, ok := wrapped(idx[base+i], g.d)
				if !ok {
					bad.Store(true)
					continue
				}
				if !whole && (v < d0 || v >= d1) {
					continue
				}
				q := (o*g.d+v)*g.inner + i
				if add {
					out[q] += upd[base+i]
				} else {
					out[q] = upd[base+i]
				}
			}
		}
	}
}

// alongSet is a piece of Scatter for elements moved by their bits only
// (16-byte ones, which have no arithmetic type in simd).
func alongSet[I index, T any]() ixScatterFn[I, T] {
	return func(g *ixGeom, idx []I, upd, out []T, o, i0, i1, d0, d1 int, bad *atomic.Bool) {
		for j := 0; j < g.n; j++ {
			base := (o*g.n + j) * g.inner
			for i := i0; i < i1; i++ {
				v, ok := wrapped(idx[base+i], g.d)
				if !ok {
					bad.Store(true)
					continue
				}
				if v >= d0 && v < d1 {
					out[(o*g.d+v)*g.inner+i] = upd[base+i]
				}
			}
		}
	}
}

// indexAddBody is a piece of IndexAdd: one index per inner row, whose
// chunk is added with the vector kernel.
func indexAddBody[I index, T simd.Number]() ixScatterFn[I, T] {
	vv, _, _ := simd.Binary[T](simd.Add)
	return func(g *ixGeom, idx []I, upd, out []T, o, i0, i1, d0, d1 int, bad *atomic.Bool) {
		for j := 0; j < g.n; j++ {
			v, ok := wrapped(idx[j], g.d)
			if !ok {
				bad.Store(true)
				continue
			}
			if v < d0 || v >= d1 {
				continue
			}
			src := upd[(o*g.n+j)*g.inner+i0 : (o*g.n+j)*g.inner+i1]
			dst := out[(o*g.d+v)*g.inner+i0 : (o*g.d+v)*g.inner+i1]
			if len(dst) >= 8 {
				vv(dst, dst, src)
				continue
			}
			for i := range dst {
				dst[i] += src[i]
			}
		}
	}
}

// prepareScatter writes the updates' bits (any dtype, by element size).
func prepareScatter(n *graph.Node) (*kernel, error) {
	g := ixGeomOf(n)
	fill := scalarFill(n.Input(0))
	if g.wideIdx {
		return scatterBits[int64](g, fill)
	}
	return scatterBits[int32](g, fill)
}

func scatterBits[I index](g ixGeom, fill []byte) (*kernel, error) {
	switch g.esize {
	case 1:
		return ixScatterKernel(g, alongBody[I, uint8](false), fill), nil
	case 2:
		return ixScatterKernel(g, alongBody[I, uint16](false), fill), nil
	case 4:
		return ixScatterKernel(g, alongBody[I, uint32](false), fill), nil
	case 8:
		return ixScatterKernel(g, alongBody[I, uint64](false), fill), nil
	case 16:
		return ixScatterKernel(g, alongSet[I, bits128](), fill), nil
	}
	return nil, fmt.Errorf("no Scatter kernel for elements of %d bytes", g.esize)
}

// prepareScatterAdd and prepareIndexAdd add in the element type (integers
// wrap, floats round at every addition, in the indices' order).
func prepareScatterAdd(n *graph.Node) (*kernel, error) {
	g := ixGeomOf(n)
	fill := scalarFill(n.Input(0))
	if g.wideIdx {
		return addKernel[int64](g, n.DType(), false, fill)
	}
	return addKernel[int32](g, n.DType(), false, fill)
}

func prepareIndexAdd(n *graph.Node) (*kernel, error) {
	g := ixGeomOf(n)
	fill := scalarFill(n.Input(0))
	if g.wideIdx {
		return addKernel[int64](g, n.DType(), true, fill)
	}
	return addKernel[int32](g, n.DType(), true, fill)
}

func addKernel[I index](g ixGeom, dt tensor.DType, rows bool, fill []byte) (*kernel, error) {
	switch dt {
	case tensor.Float32:
		return addOf[I, float32](g, rows, fill), nil
	case tensor.Float64:
		return addOf[I, float64](g, rows, fill), nil
	case tensor.Int8:
		return addOf[I, int8](g, rows, fill), nil
	case tensor.Int16:
		return addOf[I, int16](g, rows, fill), nil
	case tensor.Int32:
		return addOf[I, int32](g, rows, fill), nil
	case tensor.Int64:
		return addOf[I, int64](g, rows, fill), nil
	case tensor.Uint8:
		return addOf[I, uint8](g, rows, fill), nil
	}
	return nil, fmt.Errorf("no %s kernel for %v", g.op, dt)
}

func addOf[I index, T simd.Number](g ixGeom, rows bool, fill []byte) *kernel {
	if rows {
		return ixScatterKernel(g, indexAddBody[I, T](), fill)
	}
	return ixScatterKernel(g, alongBody[I, T](true), fill)
}

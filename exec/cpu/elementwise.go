package cpu

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/simd"
	"github.com/loomgraph/loom/tensor"
)

// An elementwise op's entry in the table (table.go) describes its element
// computation once, as a micro-op builder; both of its kernels come from
// it: the standalone kernel (prepareElementwise: NumPy broadcasting by
// runs of bcast) and the fused chunk evaluator's instruction (fused.go).

// microFn computes m elements of an elementwise op at d from its operands
// at x, y and z (as many as it has), each the address of m elements (a
// vector) or of one (a scalar, broadcast), as fixed when the micro-op was
// built. Addresses keep the call cheap (five words in registers); the
// callers take them from byte slices whose bounds they check (addr).
type microFn func(m int, d, x, y, z unsafe.Pointer)

// addr is the address of b[off:], after checking that the n bytes from off
// are in b.
func addr(b []byte, off, n int) unsafe.Pointer {
	return unsafe.Pointer(unsafe.SliceData(b[off : off+n]))
}

// view is the slice of the m elements of T at p.
func view[T any](p unsafe.Pointer, m int) []T { return unsafe.Slice((*T)(p), m) }

// microBuilder builds the micro-op of an op whose result has dtype out and
// operands dtypes in; strides gives, per operand, 1 for a vector and 0
// for a scalar (never all 0: microFor handles that). It returns
// errNoKernel when the entry has no kernel for these dtypes.
type microBuilder func(out tensor.DType, in []tensor.DType, strides []int) (microFn, error)

// errNoKernel: an entry has no kernel for the dtypes it was asked for.
var errNoKernel = errors.New("no kernel for these dtypes")

// entry is one op's row of the table: prepare builds a node's standalone
// kernel (every op has one); micro is set for elementwise ops only.
type entry struct {
	prepare prepareFn
	micro   microBuilder
	math    *mathEntry // a unary or binary entry's description (for the tests)
}

// kernelOf is the entry of an op that is not elementwise.
func kernelOf(p prepareFn) entry { return entry{prepare: p} }

// elementwise is the entry of an elementwise op: its standalone kernel
// runs the micro-op over broadcast runs.
func elementwise(m microBuilder) entry {
	e := entry{micro: m}
	e.prepare = func(n *graph.Node) (*kernel, error) { return prepareElementwise(n, e) }
	return e
}

// microFor builds the micro-op of the entry for the given dtypes and
// operand strides. Every elementwise entry accepts scalar operands: when
// all of them are scalars, it computes one element and repeats it.
func (e entry) microFor(out tensor.DType, in []tensor.DType, strides []int) (microFn, error) {
	if e.micro == nil {
		return nil, errNoKernel
	}
	scalars := 0
	for _, s := range strides {
		if s == 0 {
			scalars++
		}
	}
	if scalars < len(strides) {
		return e.micro(out, in, strides)
	}
	ones := make([]int, len(strides))
	for i := range ones {
		ones[i] = 1
	}
	f, err := e.micro(out, in, ones)
	if err != nil {
		return nil, err
	}
	es := out.Size()
	return func(m int, d, x, y, z unsafe.Pointer) {
		if m == 0 {
			return
		}
		f(1, d, x, y, z)
		b := view[byte](d, m*es)
		fill(b[es:], b[:es])
	}, nil
}

// prepareElementwise is the standalone kernel of an elementwise op: the
// output in row-major order, by runs within one inner row of the
// broadcast (coalesced) iteration, each run one call of the micro-op.
func prepareElementwise(n *graph.Node, e entry) (*kernel, error) {
	ins := n.Inputs()
	k := len(ins)
	if k > 3 {
		return nil, fmt.Errorf("no %s kernel: an elementwise micro-op takes at most 3 operands, got %d", n.Op(), k)
	}
	dts := make([]tensor.DType, k)
	es := make([]int, k)
	for i, in := range ins {
		dts[i], es[i] = in.DType(), in.DType().Size()
	}
	bc := newBcast(n.Shape(), shapesOf(ins))
	fn, err := e.microFor(n.DType(), dts, bc.vec)
	if err != nil {
		return nil, fmt.Errorf("no %s kernel for %v: %w", n.Op(), dts, err)
	}
	eo := n.DType().Size()
	// Operand i spans m*step[i] + one[i] bytes from its offset: m
	// elements for a vector, one for a scalar.
	var step, one [3]int
	for i := 0; i < k; i++ {
		step[i] = bc.vec[i] * es[i]
		one[i] = (1 - bc.vec[i]) * es[i]
	}
	if len(bc.dims) == 1 {
		// One run (same shapes, or scalars broadcast): operand i's element
		// at position p is at p*step[i].
		return &kernel{bind: func(a *args) func() {
			l := a.Loop(func(lo, hi, _ int) {
				m := hi - lo
				var p [3]unsafe.Pointer
				for i := 0; i < k; i++ {
					p[i] = addr(a.In(i), lo*step[i], m*step[i]+one[i])
				}
				fn(m, addr(a.Out(), lo*eo, m*eo), p[0], p[1], p[2])
			})
			return func() { l.Run(bc.n, grainElems, stepElems) }
		}}, nil
	}
	if kern, ok := periodicElementwise(n, e, dts, es); ok {
		return kern, nil
	}
	return &kernel{bind: func(a *args) func() {
		offsets := make([][3]int, a.Threads())
		l := a.Loop(func(lo, hi, part int) {
			d := a.Out()
			var in [3][]byte
			for i := 0; i < k; i++ {
				in[i] = a.In(i)
			}
			bc.walk(lo, hi, offsets[part][:k], func(q, m int, o []int) {
				var p [3]unsafe.Pointer
				for i := 0; i < k; i++ {
					p[i] = addr(in[i], o[i]*es[i], m*step[i]+one[i])
				}
				fn(m, addr(d, q*eo, m*eo), p[0], p[1], p[2])
			})
		})
		return func() { l.Run(bc.n, grainElems, stepElems) }
	}}, nil
}

// periodicElementwise is the standalone kernel of an elementwise op
// whose operands are each either of the output's shape or a broadcast
// operand that repeats over it (a per-channel [1, C, 1, 1] over
// [N, C, H, W]: its pattern has a period, the product of the dims inside
// its leading broadcast dims), at least one of them the latter. Each run
// expands the repeating operands over one period and a chunk (as the
// fused evaluator does), and the op runs as the vector micro-op over
// chunks, the repeating operands read in place at the chunk's position
// modulo their period: one call per chunk where the runs of bcast cost a
// call per run of equal elements (49 for a 7x7 feature map). Each element
// is computed by the same function of the same operand values, so the
// results are those of the runs.
func periodicElementwise(n *graph.Node, e entry, dts []tensor.DType, es []int) (*kernel, bool) {
	out := n.Shape()
	ins := n.Inputs()
	k := len(ins)
	var period [3]int // 0: an operand of the output's shape
	var gs [3]gatherSpec
	found := false
	for i, in := range ins {
		if in.Shape().Equal(out) {
			continue
		}
		bc := newBcast(out, []tensor.Shape{in.Shape()})
		per := periodOf(bc)
		if per == 0 || per+chunkElems > maxExpanded || per > out.Size()/2 {
			return nil, false
		}
		period[i], gs[i], found = per, gatherSpec{operand: i, bc: bc, size: es[i]}, true
	}
	if !found {
		return nil, false
	}
	ones := []int{1, 1, 1}[:k]
	fn, err := e.microFor(n.DType(), dts, ones)
	if err != nil {
		return nil, false
	}
	eo := n.DType().Size()
	total := out.Size()
	return &kernel{bind: func(a *args) func() {
		var exp [3][]byte
		for i := 0; i < k; i++ {
			if period[i] > 0 {
				exp[i] = make([]byte, (period[i]+chunkElems)*es[i])
			}
		}
		offs := make([]int, 1)
		l := a.Loop(func(lo, hi, _ int) {
			d := a.Out()
			for q := lo; q < hi; q += chunkElems {
				m := min(chunkElems, hi-q)
				var p [3]unsafe.Pointer
				for i := 0; i < k; i++ {
					if period[i] > 0 {
						p[i] = addr(exp[i], q%period[i]*es[i], m*es[i])
					} else {
						p[i] = addr(a.In(i), q*es[i], m*es[i])
					}
				}
				fn(m, addr(d, q*eo, m*eo), p[0], p[1], p[2])
			}
		})
		return func() {
			for i := 0; i < k; i++ {
				if period[i] == 0 {
					continue
				}
				x, P := exp[i], period[i]*es[i]
				gatherInto(x, a.In(i), gs[i], 0, period[i], offs)
				for n := P; n < len(x); {
					n += copy(x[n:], x[n-P:n])
				}
			}
			l.Run(total, grainElems, stepElems)
		}
	}}, true
}

func shapesOf(ns []*graph.Node) []tensor.Shape {
	out := make([]tensor.Shape, len(ns))
	for i, n := range ns {
		out[i] = n.Shape()
	}
	return out
}

// ---- the kinds of entries ----

// mathEntry is an op of one or two operands of one dtype, computed from
// scalar functions: f (in float64) for the float dtypes, i (in int64) for
// the integer dtypes and bool, the result converted back to the element
// type (for integers that is two's-complement wrapping); nil where the op
// admits no such dtype. Where the op is hot, internal/simd's kernels of
// un or bin replace the loops over f and i for the element types simd has
// them for (assembly for float32 and float64, unrolled Go for the others).
type mathEntry struct {
	arity int
	f1    func(float64) float64
	i1    func(int64) int64
	f2    func(x, y float64) float64
	i2    func(x, y int64) int64
	un    simd.UnaryOp
	bin   simd.ArithOp
	fast  *fastFloat // kernels of this package for the float types (mathfast.go)
}

func (e *mathEntry) build(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
	t := elemTypes[out]
	if t == nil || len(st) != e.arity {
		return nil, errNoKernel
	}
	return t.math(e, out, st)
}

// unary is the entry of a one-operand op: f for the float dtypes, i for
// the integer dtypes and bool, and optionally simd's kernel of fast.
func unary(f func(float64) float64, i func(int64) int64, fast ...simd.UnaryOp) entry {
	e := &mathEntry{arity: 1, f1: f, i1: i}
	if len(fast) > 0 {
		e.un = fast[0]
	}
	en := elementwise(e.build)
	en.math = e
	return en
}

// binary is the entry of a two-operand op: f for the float dtypes, i for
// the integer dtypes and bool, and optionally simd's kernels of fast.
func binary(f func(x, y float64) float64, i func(x, y int64) int64, fast ...simd.ArithOp) entry {
	e := &mathEntry{arity: 2, f2: f, i2: i}
	if len(fast) > 0 {
		e.bin = fast[0]
	}
	en := elementwise(e.build)
	en.math = e
	return en
}

// byBool is the entry of an op whose element function differs between
// bools and the other dtypes (Not: logical on bools, bitwise on
// integers): b's kernels for a Bool result, o's for the others.
func byBool(b, o entry) entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		if out == tensor.Bool {
			return b.micro(out, in, st)
		}
		return o.micro(out, in, st)
	})
}

// compare is the entry of a comparison: operands of any element type,
// a bool result, by simd's comparison op (a scalar on the left compares
// with the operands swapped).
func compare(op simd.CmpOp) entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		t := elemTypes[in[0]]
		if t == nil || out != tensor.Bool || len(st) != 2 {
			return nil, errNoKernel
		}
		return t.compare(op, st), nil
	})
}

// where is Where's entry: a select by the condition, of elements by their
// size (any dtype).
func where() entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		if len(st) != 3 || in[0] != tensor.Bool {
			return nil, errNoKernel
		}
		switch out.Size() {
		case 1:
			return selectMicro[uint8](st), nil
		case 2:
			return selectMicro[uint16](st), nil
		case 4:
			return selectMicro[uint32](st), nil
		case 8:
			return selectMicro[uint64](st), nil
		case 16:
			return selectWide(st), nil
		}
		return nil, errNoKernel
	})
}

// cast is Cast's entry: a conversion for every pair of dtypes (cast.go).
func cast() entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		f := castFunc(in[0], out)
		if f == nil || len(st) != 1 {
			return nil, errNoKernel
		}
		fs, ts := in[0].Size(), out.Size()
		return func(m int, d, x, _, _ unsafe.Pointer) { f(view[byte](d, m*ts), view[byte](x, m*fs)) }, nil
	})
}

// identity is the entry of an op whose value is its operand's (any
// dtype): a copy of the bytes.
func identity() entry {
	return elementwise(func(out tensor.DType, in []tensor.DType, st []int) (microFn, error) {
		if len(st) != 1 || in[0] != out {
			return nil, errNoKernel
		}
		es := out.Size()
		return func(m int, d, x, _, _ unsafe.Pointer) { copy(view[byte](d, m*es), view[byte](x, m*es)) }, nil
	})
}

// ---- loops over scalar functions ----

// wide is the type an entry's scalar functions compute in.
type wide interface{ float64 | int64 }

// loop1 applies f to every element, through W.
func loop1[T elem, W wide](f func(W) W) func(d, a []T) {
	return func(d, a []T) {
		a = a[:len(d)]
		for i := range d {
			d[i] = T(f(W(a[i])))
		}
	}
}

// loops2 are the vector-vector, vector-scalar and scalar-vector loops of
// f, through W.
func loops2[T elem, W wide](f func(x, y W) W) (vv func(d, a, b []T), vs func(d, a []T, s T), sv func(d []T, s T, b []T)) {
	vv = func(d, a, b []T) {
		a, b = a[:len(d)], b[:len(d)]
		for i := range d {
			d[i] = T(f(W(a[i]), W(b[i])))
		}
	}
	vs = func(d, a []T, s T) {
		a, y := a[:len(d)], W(s)
		for i := range d {
			d[i] = T(f(W(a[i]), y))
		}
	}
	sv = func(d []T, s T, b []T) {
		x, b := W(s), b[:len(d)]
		for i := range d {
			d[i] = T(f(x, W(b[i])))
		}
	}
	return vv, vs, sv
}

// ---- Where ----

// selectMicro is Where's micro-op on elements of T's size: simd's selects
// when the condition and x are vectors, selectRun otherwise.
func selectMicro[T simd.Bits](st []int) microFn {
	cs, xs, ys := st[0], st[1], st[2]
	if cs == 1 && xs == 1 {
		vv, vs := simd.Select[T]()
		if ys == 1 {
			return func(m int, d, c, x, y unsafe.Pointer) {
				vv(view[T](d, m), view[uint8](c, m), view[T](x, m), view[T](y, m))
			}
		}
		return func(m int, d, c, x, y unsafe.Pointer) { vs(view[T](d, m), view[uint8](c, m), view[T](x, m), *(*T)(y)) }
	}
	n := func(stride, m int) int { return max(1, stride*m) } // a scalar's one element
	return func(m int, d, c, x, y unsafe.Pointer) {
		selectRun(view[T](d, m), view[uint8](c, n(cs, m)), cs, view[T](x, n(xs, m)), xs, view[T](y, n(ys, m)), ys)
	}
}

// selectWide is Where's micro-op on 16-byte elements (complex128): a
// plain loop, each operand a vector or a scalar.
func selectWide(st []int) microFn {
	cs, xs, ys := st[0], st[1], st[2]
	n := func(stride, m int) int { return max(1, stride*m) }
	return func(m int, d, c, x, y unsafe.Pointer) {
		dv, cv := view[bits128](d, m), view[uint8](c, n(cs, m))
		xv, yv := view[bits128](x, n(xs, m)), view[bits128](y, n(ys, m))
		for i := range dv {
			if cv[i*cs] != 0 {
				dv[i] = xv[i*xs]
			} else {
				dv[i] = yv[i*ys]
			}
		}
	}
}

// selectRun is Where over a run for the patterns simd has no select for:
// d[i] = x[i] if c[i] != 0 else y[i], each operand a vector (stride 1) or
// a scalar (stride 0). The select is branch-free: m is all ones where the
// condition holds.
func selectRun[T simd.Bits](d []T, c []uint8, cs int, x []T, xs int, y []T, ys int) {
	if cs == 1 && ys == 1 {
		c, s, y := c[:len(d)], x[0], y[:len(d)]
		for i := range d {
			m := -T(c[i])
			d[i] = s&m | y[i]&^m
		}
		return
	}
	for i := range d {
		m := -T(c[i*cs])
		d[i] = x[i*xs]&m | y[i*ys]&^m
	}
}

// u8 is 1 for true and 0 for false; the compiler makes it a SETcc.
func u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

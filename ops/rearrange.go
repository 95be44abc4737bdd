package ops

import (
	"errors"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The movement composites: each is a few Slice, Concat, Reshape,
// Transpose and BroadcastTo nodes (their gradients follow from those),
// and each does work linear in its result.

// sliceAxis is x with range r along axis and every other axis whole.
func sliceAxis(x *graph.Node, axis int, r Range) *graph.Node {
	rs := make([]Range, axis+1)
	for i := range rs {
		rs[i] = All
	}
	rs[axis] = r
	return Slice(x, rs...)
}

// replicate is x with each element along axis repeated c times in place
// (numpy.repeat with one count): a length-1 axis inserted after axis,
// broadcast to c, and merged back.
func replicate(x *graph.Node, axis, c int) *graph.Node {
	s := x.Shape()
	in := append(append(append([]int{}, s[:axis+1]...), 1), s[axis+1:]...)
	to := append([]int{}, in...)
	to[axis+1] = c
	out := append([]int{}, s...)
	out[axis] *= c
	return Reshape(BroadcastTo(Reshape(x, in...), to...), out...)
}

// tileAxis is x repeated c times as a whole along axis (numpy.tile on one
// axis).
func tileAxis(x *graph.Node, axis, c int) *graph.Node {
	s := x.Shape()
	in := append(append(append([]int{}, s[:axis]...), 1), s[axis:]...)
	to := append([]int{}, in...)
	to[axis] = c
	out := append([]int{}, s...)
	out[axis] *= c
	return Reshape(BroadcastTo(Reshape(x, in...), to...), out...)
}

// maxParts bounds the number of parts a split makes beyond the axis
// length (empty parts), so that a huge count is an error, not an
// allocation that ends the process.
const maxParts = 1 << 16

// failN is n copies of the invalid node bad (at least one), the result
// of a failed builder that returns several nodes.
func failN(bad *graph.Node, n int) []*graph.Node {
	out := make([]*graph.Node, min(max(n, 1), maxParts))
	for i := range out {
		out[i] = bad
	}
	return out
}

// Stack joins xs, which must have one shape, along a new axis (negative
// counts from the end of the result), as numpy.stack(xs, axis) and the
// Array API's stack; dtypes are promoted within a kind as by Concat.
func Stack(axis int, xs ...*graph.Node) *graph.Node {
	if _, bad := graph.Operands("Stack", xs...); bad != nil {
		return bad
	}
	for i, x := range xs[1:] {
		if !x.Shape().Equal(xs[0].Shape()) {
			return fail(graph.ErrShape, "Stack", xs, "operand %d has shape %v, operand 0 has %v; stacked operands need one shape", i+1, x.Shape(), xs[0].Shape())
		}
	}
	ax, err := normAxis(axis, xs[0].Rank()+1)
	if err != nil {
		return fail(graph.ErrShape, "Stack", xs, "%v", err)
	}
	ex := make([]*graph.Node, len(xs))
	for i, x := range xs {
		ex[i] = ExpandDims(x, ax)
	}
	return Concat(ax, ex...)
}

// Unstack returns the slices of x along axis with that axis removed, as
// the Array API's unstack(x, axis): x.Shape()[axis] nodes (none for an
// empty axis).
func Unstack(x *graph.Node, axis int) []*graph.Node {
	if _, bad := graph.Operands("Unstack", x); bad != nil {
		return failN(bad, 1)
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return failN(fail(graph.ErrShape, "Unstack", []*graph.Node{x}, "%v", err), 1)
	}
	out := make([]*graph.Node, x.Shape()[ax])
	for i := range out {
		out[i] = Squeeze(sliceAxis(x, ax, R(i, i+1)), ax)
	}
	return out
}

// Split divides x along axis into sections equal parts, as
// numpy.split(x, sections, axis): the axis length must be a multiple of
// sections (use ArraySplit otherwise).
func Split(x *graph.Node, sections, axis int) []*graph.Node {
	return split("Split", x, sections, axis, true)
}

// ArraySplit divides x along axis into sections parts, as
// numpy.array_split(x, sections, axis): for an axis of length d the first
// d % sections parts have d/sections + 1 elements and the rest
// d/sections (some are empty when sections > d; at most max(d, 65536)
// sections).
func ArraySplit(x *graph.Node, sections, axis int) []*graph.Node {
	return split("ArraySplit", x, sections, axis, false)
}

func split(op string, x *graph.Node, sections, axis int, equal bool) []*graph.Node {
	if _, bad := graph.Operands(op, x); bad != nil {
		return failN(bad, sections)
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return failN(fail(graph.ErrShape, op, []*graph.Node{x}, "%v", err), sections)
	}
	d := x.Shape()[ax]
	if sections < 1 {
		return failN(fail(graph.ErrInvalid, op, []*graph.Node{x}, "sections %d is not positive", sections), sections)
	}
	if sections > max(d, maxParts) {
		return failN(fail(graph.ErrInvalid, op, []*graph.Node{x}, "%d sections for axis %d of length %d: at most max(length, %d)", sections, ax, d, maxParts), sections)
	}
	if equal && d%sections != 0 {
		return failN(fail(graph.ErrShape, op, []*graph.Node{x}, "axis %d of length %d does not divide into %d equal sections (ArraySplit allows unequal ones)", ax, d, sections), sections)
	}
	out := make([]*graph.Node, sections)
	q, r := d/sections, d%sections
	start := 0
	for i := range out {
		n := q
		if i < r {
			n++
		}
		out[i] = sliceAxis(x, ax, R(start, start+n))
		start += n
	}
	return out
}

// SplitAt divides x along axis at the given indices, as
// numpy.split(x, indices, axis): the parts are x[:i0], x[i0:i1], ...,
// x[ik:] along the axis, with Python's slice rules (negative indices count
// from the end, indices beyond the axis are clamped to it, and a part
// whose start is past its stop is empty): len(indices)+1 nodes.
func SplitAt(x *graph.Node, indices []int, axis int) []*graph.Node {
	if _, bad := graph.Operands("SplitAt", x); bad != nil {
		return failN(bad, len(indices)+1)
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return failN(fail(graph.ErrShape, "SplitAt", []*graph.Node{x}, "%v", err), len(indices)+1)
	}
	d := x.Shape()[ax]
	clamp := func(i int) int {
		if i < 0 {
			i += d
		}
		return min(max(i, 0), d)
	}
	out := make([]*graph.Node, len(indices)+1)
	start := 0
	for k := range out {
		stop := d
		if k < len(indices) {
			stop = clamp(indices[k])
		}
		out[k] = sliceAxis(x, ax, R(start, max(start, stop)))
		if k < len(indices) {
			start = stop
		}
	}
	return out
}

// Flip reverses x along the given axes (all axes when none are given), as
// numpy.flip(x, axis): a Slice with step -1 on each.
func Flip(x *graph.Node, axes ...int) *graph.Node {
	if _, bad := graph.Operands("Flip", x); bad != nil {
		return bad
	}
	ax, err := normAxes(axes, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, "Flip", []*graph.Node{x}, "%v", err)
	}
	rs := make([]Range, x.Rank())
	for i := range rs {
		rs[i] = All
	}
	for _, a := range ax {
		rs[a] = Range{Start: -1, Stop: End, Step: -1}
	}
	return Slice(x, rs...)
}

// Roll shifts the elements of x by shift positions along each of the
// given axes, those pushed past the end coming back at the start, as
// numpy.roll(x, shift, axis). With no axes x is rolled as if flattened and
// then restored to its shape. A negative shift rolls the other way.
func Roll(x *graph.Node, shift int, axes ...int) *graph.Node {
	shifts := make([]int, max(len(axes), 1))
	for i := range shifts {
		shifts[i] = shift
	}
	return roll("Roll", x, shifts, axes)
}

// RollAxes rolls x by shifts[i] along axes[i], as numpy.roll(x, shifts,
// axes) with sequences of equal length (an axis named twice is rolled by
// the sum of its shifts, as in NumPy).
func RollAxes(x *graph.Node, shifts, axes []int) *graph.Node {
	if _, bad := graph.Operands("RollAxes", x); bad != nil {
		return bad
	}
	if len(shifts) != len(axes) {
		return fail(graph.ErrInvalid, "RollAxes", []*graph.Node{x}, "%d shifts for %d axes", len(shifts), len(axes))
	}
	if len(axes) == 0 {
		return x
	}
	return roll("RollAxes", x, shifts, axes)
}

func roll(op string, x *graph.Node, shifts, axes []int) *graph.Node {
	if _, bad := graph.Operands(op, x); bad != nil {
		return bad
	}
	if len(axes) == 0 {
		flat := Reshape(x, x.Shape().Size())
		return Reshape(roll(op, flat, shifts, []int{0}), x.Shape()...)
	}
	total := make([]int, x.Rank())
	for i, a := range axes {
		ax, err := normAxis(a, x.Rank())
		if err != nil {
			return fail(graph.ErrShape, op, []*graph.Node{x}, "%v", err)
		}
		d := x.Shape()[ax]
		if d > 0 {
			total[ax] = (total[ax] + shifts[i]%d) % d
		}
	}
	for ax, s := range total {
		d := x.Shape()[ax]
		if s < 0 {
			s += d
		}
		if s == 0 {
			continue
		}
		x = Concat(ax, sliceAxis(x, ax, R(d-s, d)), sliceAxis(x, ax, R(0, d-s)))
	}
	return x
}

// Tile repeats x reps[i] times along axis i, as numpy.tile(x, reps): when
// reps is shorter than x's rank it is padded with leading 1s, and when it
// is longer x gets leading axes of length 1. One BroadcastTo does the
// copying.
func Tile(x *graph.Node, reps ...int) *graph.Node {
	if _, bad := graph.Operands("Tile", x); bad != nil {
		return bad
	}
	r := max(len(reps), x.Rank())
	full := make([]int, r)
	for i := range full {
		full[i] = 1
	}
	copy(full[r-len(reps):], reps)
	s := make([]int, r)
	for i := range s {
		s[i] = 1
	}
	copy(s[r-x.Rank():], x.Shape())
	in, to, out := []int{}, []int{}, make([]int, r)
	for i, c := range full {
		if c < 0 {
			return fail(graph.ErrShape, "Tile", []*graph.Node{x}, "reps %s has a negative entry", intList(reps))
		}
		n, ok := mulDims(s[i], c)
		if !ok {
			return fail(graph.ErrShape, "Tile", []*graph.Node{x}, "reps %s makes axis %d longer than an int holds", intList(reps), i)
		}
		out[i] = n
		if c != 1 {
			in, to = append(in, 1), append(to, c)
		}
		in, to = append(in, s[i]), append(to, s[i])
	}
	if err := graph.CheckType(x.DType(), out); err != nil {
		return fail(errors.Unwrap(err), "Tile", []*graph.Node{x}, "reps %s: %v", intList(reps), err)
	}
	return Reshape(BroadcastTo(Reshape(x, in...), to...), out...)
}

// Repeat repeats each element of x along axis, as numpy.repeat(x, counts,
// axis): counts has one entry (every element repeated that many times) or
// one per element along the axis. With no axis x is flattened first. The
// counts are static and must not be negative.
//
// One count (or equal ones) is one BroadcastTo; different counts are the
// Repeat primitive, one gather whatever the counts, whose gradient is
// SumRuns.
func Repeat(x *graph.Node, counts []int, axis ...int) *graph.Node {
	if _, bad := graph.Operands("Repeat", x); bad != nil {
		return bad
	}
	if len(axis) > 1 {
		return fail(graph.ErrInvalid, "Repeat", []*graph.Node{x}, "%d axes given; Repeat takes at most one", len(axis))
	}
	if len(axis) == 0 {
		x = Reshape(x, x.Shape().Size())
		axis = []int{0}
	}
	ax, err := normAxis(axis[0], x.Rank())
	if err != nil {
		return fail(graph.ErrShape, "Repeat", []*graph.Node{x}, "%v", err)
	}
	d := x.Shape()[ax]
	if len(counts) != 1 && len(counts) != d {
		return fail(graph.ErrShape, "Repeat", []*graph.Node{x}, "%d counts for axis %d of length %d (give 1 or %d)", len(counts), ax, d, d)
	}
	total := 0
	for i, c := range counts {
		if c < 0 {
			return fail(graph.ErrInvalid, "Repeat", []*graph.Node{x}, "count %d (entry %d) is negative", c, i)
		}
		n, ok := c, true
		if len(counts) == 1 {
			n, ok = mulDims(c, d)
		}
		if ok {
			total, ok = addDims(total, n)
		}
		if !ok {
			return fail(graph.ErrShape, "Repeat", []*graph.Node{x}, "counts make axis %d longer than an int holds", ax)
		}
	}
	out := x.Shape().Clone()
	out[ax] = total
	if err := graph.CheckType(x.DType(), out); err != nil {
		return fail(errors.Unwrap(err), "Repeat", []*graph.Node{x}, "%v", err)
	}
	if len(counts) == 1 || d == 0 {
		if len(counts) == 0 || counts[0] == 1 {
			return x
		}
		return replicate(x, ax, counts[0])
	}
	same := true
	for _, c := range counts {
		same = same && c == counts[0]
	}
	if same {
		return replicate(x, ax, counts[0])
	}
	return repeatEach(x, counts, ax)
}

// MoveAxis moves axis source of x to position destination, the other
// axes keeping their order, as numpy.moveaxis(x, source, destination)
// (negative axes count from the end).
func MoveAxis(x *graph.Node, source, destination int) *graph.Node {
	return moveAxes("MoveAxis", x, []int{source}, []int{destination})
}

// MoveAxes moves the axes source[i] of x to the positions destination[i],
// the other axes keeping their order, as numpy.moveaxis with sequences.
func MoveAxes(x *graph.Node, source, destination []int) *graph.Node {
	return moveAxes("MoveAxes", x, source, destination)
}

func moveAxes(op string, x *graph.Node, source, destination []int) *graph.Node {
	if _, bad := graph.Operands(op, x); bad != nil {
		return bad
	}
	if len(source) != len(destination) {
		return fail(graph.ErrInvalid, op, []*graph.Node{x}, "%d source axes and %d destinations", len(source), len(destination))
	}
	r := x.Rank()
	norm := func(axes []int) ([]int, error) {
		out := make([]int, len(axes))
		seen := make([]bool, r)
		for i, a := range axes {
			n, err := normAxis(a, r)
			if err != nil {
				return nil, err
			}
			if seen[n] {
				return nil, shapeErr("axis %d is repeated in %s", a, intList(axes))
			}
			seen[n], out[i] = true, n
		}
		return out, nil
	}
	src, err := norm(source)
	if err == nil {
		var dst []int
		if dst, err = norm(destination); err == nil {
			perm := make([]int, r)
			placed := make([]bool, r)
			moved := make([]bool, r)
			for i, d := range dst {
				perm[d], placed[d], moved[src[i]] = src[i], true, true
			}
			k := 0
			for a := 0; a < r; a++ {
				if moved[a] {
					continue
				}
				for placed[k] {
					k++
				}
				perm[k], placed[k] = a, true
			}
			return Transpose(x, perm...)
		}
	}
	return fail(graph.ErrShape, op, []*graph.Node{x}, "%v", err)
}

// Diagonal returns diagonal offset of x's axes axis1 and axis2, as
// numpy.diagonal(x, offset, axis1, axis2): those two axes are removed and
// one axis holding the diagonal x[..., i, i+offset, ...] is appended at
// the end (offset > 0 above the main diagonal, < 0 below; a diagonal
// outside the matrix is empty). The result is a copy, not NumPy's
// read-only view: the two axes are moved last and the flattened matrices
// sliced with step m+1.
func Diagonal(x *graph.Node, offset, axis1, axis2 int) *graph.Node {
	return diagonal("Diagonal", x, offset, axis1, axis2)
}

func diagonal(op string, x *graph.Node, offset, axis1, axis2 int) *graph.Node {
	if _, bad := graph.Operands(op, x); bad != nil {
		return bad
	}
	if x.Rank() < 2 {
		return fail(graph.ErrShape, op, []*graph.Node{x}, "needs at least 2 axes, got rank %d", x.Rank())
	}
	a1, err := normAxis(axis1, x.Rank())
	if err == nil {
		var a2 int
		if a2, err = normAxis(axis2, x.Rank()); err == nil && a1 == a2 {
			err = shapeErr("axis1 and axis2 are both axis %d", a1)
		}
		if err == nil {
			return diag(x, offset, a1, a2)
		}
	}
	return fail(graph.ErrShape, op, []*graph.Node{x}, "%v", err)
}

func diag(x *graph.Node, offset, a1, a2 int) *graph.Node {
	var perm, batch []int
	for i, d := range x.Shape() {
		if i != a1 && i != a2 {
			perm, batch = append(perm, i), append(batch, d)
		}
	}
	n, m := x.Shape()[a1], x.Shape()[a2]
	t := Transpose(x, append(perm, a1, a2)...)
	var length, start int
	switch {
	case offset >= m || offset <= -n:
		// outside the matrix: empty
	case offset >= 0:
		length, start = min(n, m-offset), offset
	default:
		length, start = min(n+offset, m), -offset*m
	}
	flat := Reshape(t, append(append([]int{}, batch...), n*m)...)
	last := len(batch)
	if length == 0 {
		return sliceAxis(flat, last, R(0, 0))
	}
	return sliceAxis(flat, last, RS(start, start+(length-1)*(m+1)+1, m+1))
}

// Trace returns the sums along diagonal offset of x's axes axis1 and
// axis2, as numpy.trace(x, offset, axis1, axis2): Sum of Diagonal over its
// last axis (0 for an empty diagonal).
func Trace(x *graph.Node, offset, axis1, axis2 int) *graph.Node {
	d := diagonal("Trace", x, offset, axis1, axis2)
	if !d.Valid() {
		return d
	}
	return Sum(d, -1)
}

// The pad modes of numpy.pad beyond zeros. Each takes one PadWidth per
// leading axis (Low elements before, High after); Interior must be 0
// except for PadConstant.

// PadConstant surrounds x with value (and puts it between elements for
// an Interior width), as numpy.pad(x, widths, mode="constant",
// constant_values=value). value must be representable in x's dtype.
func PadConstant(x *graph.Node, value float64, widths ...PadWidth) *graph.Node {
	g, bad := graph.Operands("PadConstant", x)
	if bad != nil {
		return bad
	}
	if err := representable(x.DType(), value); err != nil {
		return fail(graph.ErrDType, "PadConstant", []*graph.Node{x}, "value: %v", err)
	}
	p := Pad(x, widths...)
	if value == 0 || !p.Valid() || p == x {
		return p
	}
	inside := Pad(Full(g, tensor.Bool, 1, x.Shape()...), widths...)
	return Where(inside, p, Scalar(x, value))
}

// PadReflect pads x with its reflection about the first and last
// elements, which are not repeated, as numpy.pad(x, widths,
// mode="reflect"): [1 2 3] padded by 2 on both sides is [3 2 1 2 3 2 1].
// Widths beyond the axis continue the reflection periodically, as NumPy
// does (period 2(d-1)); an axis of length 1 is padded with its element
// (NumPy's legacy rule), and padding an empty axis is an error, as in
// NumPy.
func PadReflect(x *graph.Node, widths ...PadWidth) *graph.Node {
	return padMode("PadReflect", x, widths)
}

// PadEdge pads x with copies of its first and last elements, as
// numpy.pad(x, widths, mode="edge"): [1 2 3] padded by 2 on both sides is
// [1 1 1 2 3 3 3]. Padding an empty axis is an error, as in NumPy.
func PadEdge(x *graph.Node, widths ...PadWidth) *graph.Node {
	return padMode("PadEdge", x, widths)
}

// PadWrap pads x with copies of itself (circular padding), as
// numpy.pad(x, widths, mode="wrap"): [1 2 3] padded by 2 on both sides is
// [2 3 1 2 3 1 2]; widths beyond the axis wrap around again. Padding an
// empty axis is an error, as in NumPy.
func PadWrap(x *graph.Node, widths ...PadWidth) *graph.Node {
	return padMode("PadWrap", x, widths)
}

func padMode(op string, x *graph.Node, widths []PadWidth) *graph.Node {
	if _, bad := graph.Operands(op, x); bad != nil {
		return bad
	}
	if len(widths) > x.Rank() {
		return fail(graph.ErrShape, op, []*graph.Node{x}, "%d pad widths for rank %d", len(widths), x.Rank())
	}
	out := x.Shape().Clone()
	for i, w := range widths {
		d := x.Shape()[i]
		switch {
		case w.Low < 0 || w.High < 0:
			return fail(graph.ErrShape, op, []*graph.Node{x}, "axis %d: negative padding %d:%d", i, w.Low, w.High)
		case w.Interior != 0:
			return fail(graph.ErrShape, op, []*graph.Node{x}, "axis %d: interior padding %d is only for Pad and PadConstant", i, w.Interior)
		case d == 0 && (w.Low > 0 || w.High > 0):
			return fail(graph.ErrShape, op, []*graph.Node{x}, "axis %d is empty: there is nothing to pad it with", i)
		}
		n, ok := paddedLen(d, w)
		if !ok {
			return fail(graph.ErrShape, op, []*graph.Node{x}, "axis %d: padding %d:%d makes length %d longer than an int holds", i, w.Low, w.High, d)
		}
		out[i] = n
	}
	if err := graph.CheckType(x.DType(), out); err != nil {
		return fail(errors.Unwrap(err), op, []*graph.Node{x}, "%v", err)
	}
	for ax, w := range widths {
		if w.Low == 0 && w.High == 0 {
			continue
		}
		d := x.Shape()[ax]
		switch {
		case op == "PadEdge" || (op == "PadReflect" && d == 1):
			var parts []*graph.Node
			if w.Low > 0 {
				parts = append(parts, replicate(sliceAxis(x, ax, R(0, 1)), ax, w.Low))
			}
			parts = append(parts, x)
			if w.High > 0 {
				parts = append(parts, replicate(sliceAxis(x, ax, R(d-1, d)), ax, w.High))
			}
			x = Concat(ax, parts...)
		case op == "PadWrap" && w.Low <= d && w.High <= d:
			// Within one period: the tail before, the head after.
			x = Concat(ax, sliceAxis(x, ax, R(d-w.Low, d)), x, sliceAxis(x, ax, R(0, w.High)))
		case op == "PadWrap":
			x = periodic(x, ax, x, d, w)
		case w.Low < d && w.High < d:
			// Reflect within one period: x[L:0:-1], x, x[d-2:d-2-H:-1].
			hi := Range{Start: d - 2, Stop: d - 2 - w.High, Step: -1}
			if hi.Stop < 0 {
				hi.Stop = End // through index 0 (a stop of -1 would count from the end)
			}
			x = Concat(ax, sliceAxis(x, ax, Range{Start: w.Low, Stop: 0, Step: -1}), x, sliceAxis(x, ax, hi))
		default: // reflect, d >= 2: one period is x and x reversed without its ends
			u := x
			if d > 2 {
				u = Concat(ax, x, sliceAxis(x, ax, Range{Start: d - 2, Stop: 0, Step: -1}))
			}
			x = periodic(x, ax, u, 2*(d-1), w)
		}
	}
	return x
}

// periodic is x padded along ax by w with the periodic extension of one
// period u (of length p, whose element 0 is x's element 0): u tiled enough
// times and the window of the result sliced out.
func periodic(x *graph.Node, ax int, u *graph.Node, p int, w PadWidth) *graph.Node {
	d := x.Shape()[ax]
	total := w.Low + d + w.High      // checked by the caller
	start := (p - w.Low%p) % p       // where output position 0 falls in u
	k := (start + total + p - 1) / p // periods needed
	t := u
	if k > 1 {
		t = tileAxis(u, ax, k)
	}
	return sliceAxis(t, ax, R(start, start+total))
}

// Op codes of the primitives behind Repeat with per-element counts and
// its gradient.
var OpRepeat, OpSumRuns graph.Op

func init() {
	OpRepeat = define(&opdef.Def{Name: "Repeat", Doc: "each element along an axis repeated by its own count (numpy.repeat); operand 1 holds the counts' offsets",
		Arity: 2, Kind: opdef.Movement, DType: dtSegments(anyType), Shape: shSegments(false),
		Cost: func(*graph.Node) float64 { return 0 }, Ref: refRepeat,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a := n.Attr().(opdef.RepeatAttr)
			return each(need, func() *graph.Node { return sumRuns(g, a.Counts, a.Axis) })
		}})
	OpSumRuns = define(&opdef.Def{Name: "SumRuns", Doc: "sums of consecutive runs of elements along an axis, one per count (Repeat's adjoint); operand 1 holds the counts' offsets",
		Arity: 2, Kind: opdef.Movement, DType: dtSegments(numeric), Shape: shSegments(true),
		Cost: func(n *graph.Node) float64 { return float64(n.Input(0).Shape().Size()) }, Ref: refSumRuns,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			a := n.Attr().(opdef.RepeatAttr)
			return each(need, func() *graph.Node { return repeatEach(g, a.Counts, a.Axis) })
		}})
}

// dtSegments is the dtype rule of Repeat and SumRuns: operand 0 of
// the admitted types, operand 1 (the offsets) Int64.
func dtSegments(s opdef.DTypeSet) opdef.DTypeRule {
	same := sameDType(s)
	return func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		if in[1] != tensor.Int64 {
			return 0, dtypeErr("the offsets (operand 1) must be i64, got %v", in[1])
		}
		return same(in[:1], attr)
	}
}

// shSegments is the shape rule of Repeat (sum false: the axis grows from
// len(Counts) to their sum) and SumRuns (the reverse); operand 1 has
// len(Counts)+1 offsets.
func shSegments(sum bool) opdef.ShapeRule {
	return func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		a, ok := attr.(opdef.RepeatAttr)
		if !ok {
			return nil, argErr("needs an opdef.RepeatAttr attribute, got %T", attr)
		}
		s := in[0]
		if a.Axis < 0 || a.Axis >= len(s) {
			return nil, shapeErr("axis %d is out of range for rank %d", a.Axis, len(s))
		}
		total := 0
		for i, c := range a.Counts {
			if c < 0 {
				return nil, shapeErr("count %d (entry %d) is negative", c, i)
			}
			if total, ok = addDims(total, c); !ok {
				return nil, shapeErr("the counts add up to more than an int holds")
			}
		}
		from, to := len(a.Counts), total
		if sum {
			from, to = total, len(a.Counts)
		}
		if s[a.Axis] != from {
			return nil, shapeErr("axis %d has length %d; %d counts adding up to %d need %d", a.Axis, s[a.Axis], len(a.Counts), total, from)
		}
		if !in[1].Equal(tensor.Shape{len(a.Counts) + 1}) {
			return nil, shapeErr("the offsets (operand 1) have shape %v, want [%d]", in[1], len(a.Counts)+1)
		}
		out := s.Clone()
		out[a.Axis] = to
		return out, nil
	}
}

// segmentOf is, for each position along the long axis (the sum of the
// counts), the index of the count it belongs to.
func segmentOf(counts []int) []int {
	var src []int
	for i, c := range counts {
		for range c {
			src = append(src, i)
		}
	}
	return src
}

func refRepeat(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.RepeatAttr)
	src := segmentOf(a.Counts)
	idx := make([]int, n.Rank())
	return opdef.Gather(opdef.NewValue(n.DType(), n.Shape()), in[0], func(out []int) int {
		copy(idx, out)
		idx[a.Axis] = src[out[a.Axis]]
		return opdef.Flat(in[0].Shape, idx)
	}), nil
}

func refSumRuns(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.RepeatAttr)
	src := segmentOf(a.Counts)
	x := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	idx := make([]int, len(x.Shape))
	for p := 0; p < x.Len(); p++ {
		opdef.Index(x.Shape, p, idx)
		idx[a.Axis] = src[idx[a.Axis]]
		q := opdef.Flat(out.Shape, idx)
		if out.DType.IsInt() {
			out.I[q] += x.I[p] // wraps as the dtype's arithmetic does (Round)
		} else {
			out.F[q] += x.F[p]
		}
	}
	return out, nil
}

// offsetsOf is the Int64 constant of the counts' running sums: 0, c0,
// c0+c1, ..., one more than the counts.
func offsetsOf(g *graph.Graph, counts []int) *graph.Node {
	off := make([]int64, len(counts)+1)
	for i, c := range counts {
		off[i+1] = off[i] + int64(c)
	}
	t, err := tensor.New(off, len(off))
	if err != nil {
		return graph.Failf(graph.ErrInvalid, "Repeat", nil, "%v", err)
	}
	return g.ConstShared(t, "")
}

// repeatEach is the Repeat primitive of x (checked by the caller or by
// the rules).
func repeatEach(x *graph.Node, counts []int, axis int) *graph.Node {
	return Apply(OpRepeat, opdef.RepeatAttr{Axis: axis, Counts: counts}, x, offsetsOf(x.Graph(), counts))
}

func sumRuns(x *graph.Node, counts []int, axis int) *graph.Node {
	return Apply(OpSumRuns, opdef.RepeatAttr{Axis: axis, Counts: counts}, x, offsetsOf(x.Graph(), counts))
}

// SumRuns sums consecutive runs of x's elements along axis: result
// element i along the axis is the sum of the counts[i] elements that
// follow the first counts[0]+...+counts[i-1] (0 for a zero count). The
// counts must add up to the axis length. It is the adjoint of Repeat
// (its gradient is a Repeat, and Repeat's is a SumRuns), and
// numpy.add.reduceat(x, offsets, axis) where no count is zero.
func SumRuns(x *graph.Node, counts []int, axis int) *graph.Node {
	if _, bad := graph.Operands("SumRuns", x); bad != nil {
		return bad
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, "SumRuns", []*graph.Node{x}, "%v", err)
	}
	return sumRuns(x, counts, ax)
}

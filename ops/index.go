package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The indexing ops (issue 14): gathers and scatters along one axis with
// indices held in a node (int32 or int64). Negative indices wrap once, as
// in NumPy (-1 is the last element along the axis); any other index
// outside the axis is an error: a build error when the indices are a
// Const, a run error naming the op and the call site otherwise (the
// backends check every index before they read or write). The primitives
// take an opdef.AxisAttr; every geometry is x's shape split at the axis
// into outer (the axes before), the axis (length D) and inner (the axes
// after).

// Op codes of the indexing primitives.
var OpGather, OpTakeAlongAxis, OpScatter, OpScatterAdd, OpIndexAdd graph.Op

func init() {
	OpGather = define(&opdef.Def{Name: "Gather", Doc: "elements along an axis picked by an index array, numpy.take(x, indices, axis); indices i32 or i64, negative ones wrap once",
		Arity: 2, Kind: opdef.Movement, DType: dtIndexed(anyType, 2), Shape: shGather,
		Cost: func(*graph.Node) float64 { return 0 }, Ref: refGather,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			x, idx := n.Input(0), n.Input(1)
			ax := n.Attr().(opdef.AxisAttr).Axis
			return each(need, func() *graph.Node {
				size := idx.Shape().Size()
				s := x.Shape().Clone()
				s[ax] = size
				return Apply(OpIndexAdd, opdef.AxisAttr{Axis: ax}, ZerosLike(x), Reshape(idx, size), Reshape(g, s...))
			})
		}})
	OpTakeAlongAxis = define(&opdef.Def{Name: "TakeAlongAxis", Doc: "x[..., indices[..., j, ...], ...] along an axis, numpy.take_along_axis / torch.gather; indices i32 or i64 of x's shape but along the axis",
		Arity: 2, Kind: opdef.Movement, DType: dtIndexed(anyType, 2), Shape: shAlong(false),
		Cost: func(*graph.Node) float64 { return 0 }, Ref: refAlong(alongTake),
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			x, idx := n.Input(0), n.Input(1)
			return each(need, func() *graph.Node { return Apply(OpScatterAdd, n.Attr(), ZerosLike(x), idx, g) })
		}})
	OpScatter = define(&opdef.Def{Name: "Scatter", Doc: "x with updates written at indices along an axis, torch.scatter (indices unique; with duplicates the last in row-major order wins)",
		Arity: 3, Kind: opdef.Movement, DType: dtIndexed(anyType, 3), Shape: shAlong(true),
		Cost: func(*graph.Node) float64 { return 0 }, Ref: refAlong(alongSet),
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			idx, upd := n.Input(1), n.Input(2)
			return each(need,
				// The overwritten positions of x do not reach the result.
				func() *graph.Node { return Apply(OpScatter, n.Attr(), g, idx, ZerosLike(upd)) },
				nil,
				func() *graph.Node { return Apply(OpTakeAlongAxis, n.Attr(), g, idx) })
		}})
	OpScatterAdd = define(&opdef.Def{Name: "ScatterAdd", Doc: "x plus updates added at indices along an axis, torch.scatter_add; duplicate indices accumulate; integers wrap",
		Arity: 3, Kind: opdef.Movement, DType: dtIndexed(numeric, 3), Shape: shAlong(true),
		Cost: func(n *graph.Node) float64 { return float64(n.Input(2).Shape().Size()) }, Ref: refAlong(alongAdd),
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			idx := n.Input(1)
			return each(need,
				func() *graph.Node { return g },
				nil,
				func() *graph.Node { return Apply(OpTakeAlongAxis, n.Attr(), g, idx) })
		}})
	OpIndexAdd = define(&opdef.Def{Name: "IndexAdd", Doc: "x plus the slices of source added at a 1-D index along an axis, torch.index_add; duplicate indices accumulate; integers wrap",
		Arity: 3, Kind: opdef.Movement, DType: dtIndexed(numeric, 3), Shape: shIndexAdd,
		Cost: func(n *graph.Node) float64 { return float64(n.Input(2).Shape().Size()) }, Ref: refIndexAdd,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			idx := n.Input(1)
			ax := n.Attr().(opdef.AxisAttr).Axis
			return each(need,
				func() *graph.Node { return g },
				nil,
				func() *graph.Node { return Apply(OpGather, opdef.AxisAttr{Axis: ax}, g, idx) })
		}})
}

// isIndexDType reports whether dt can hold indices: int32 or int64.
func isIndexDType(dt tensor.DType) bool { return dt == tensor.Int32 || dt == tensor.Int64 }

// dtIndexed is the dtype rule of the indexing ops of arity operands:
// operand 0 (and 2, the updates, of the same dtype) in s, operand 1 (the
// indices) int32 or int64.
func dtIndexed(s opdef.DTypeSet, arity int) opdef.DTypeRule {
	same := sameDType(s)
	return func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		if len(in) != arity {
			return 0, argErr("takes %d operands, got %d", arity, len(in))
		}
		if !isIndexDType(in[1]) {
			return 0, dtypeErr("the indices (operand 1) must be i32 or i64, got %v", in[1])
		}
		if arity == 3 {
			return same([]tensor.DType{in[0], in[2]}, attr)
		}
		return same(in[:1], attr)
	}
}

// axisAttr checks the attribute of an indexing op against x's rank.
func axisAttr(attr graph.Attr, rank int) (int, error) {
	a, ok := attr.(opdef.AxisAttr)
	if !ok {
		return 0, argErr("needs an opdef.AxisAttr attribute, got %T", attr)
	}
	if a.Axis < 0 || a.Axis >= rank {
		if rank == 0 {
			return 0, shapeErr("x is a scalar (rank 0): there is no axis to index")
		}
		return 0, shapeErr("axis %d is out of range for rank %d", a.Axis, rank)
	}
	return a.Axis, nil
}

// shGather: x.shape[:axis] + indices.shape + x.shape[axis+1:].
func shGather(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	x, idx := in[0], in[1]
	ax, err := axisAttr(attr, len(x))
	if err != nil {
		return nil, err
	}
	if x[ax] == 0 && idx.Size() > 0 {
		return nil, shapeErr("axis %d is empty: there is nothing to take %d elements from", ax, idx.Size())
	}
	out := append(append(append(tensor.Shape{}, x[:ax]...), idx...), x[ax+1:]...)
	if err := graph.CheckType(tensor.Float64, out); err != nil {
		return nil, shapeErr("%v", err)
	}
	return out, nil
}

// shAlong is the shape rule of TakeAlongAxis (scatter false: the result
// has the indices' shape) and of Scatter and ScatterAdd (the result has
// x's; the updates have the indices' shape): the indices have x's rank
// and x's dimensions but along the axis.
func shAlong(scatter bool) opdef.ShapeRule {
	return func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		x, idx := in[0], in[1]
		ax, err := axisAttr(attr, len(x))
		if err != nil {
			return nil, err
		}
		if len(idx) != len(x) {
			return nil, shapeErr("the indices have rank %d, x has rank %d; they need the same", len(idx), len(x))
		}
		for d := range x {
			if d != ax && idx[d] != x[d] {
				return nil, shapeErr("the indices have shape %v, x has %v: they must agree but along axis %d", idx, x, ax)
			}
		}
		if x[ax] == 0 && idx.Size() > 0 {
			return nil, shapeErr("axis %d is empty: there is nothing to index", ax)
		}
		if !scatter {
			return idx.Clone(), nil
		}
		if !in[2].Equal(idx) {
			return nil, shapeErr("the updates have shape %v, the indices %v; they need the same", in[2], idx)
		}
		return x.Clone(), nil
	}
}

// shIndexAdd: a 1-D index, and a source of x's shape but for the axis,
// whose length is the index's.
func shIndexAdd(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	x, idx, src := in[0], in[1], in[2]
	ax, err := axisAttr(attr, len(x))
	if err != nil {
		return nil, err
	}
	if len(idx) != 1 {
		return nil, shapeErr("the index has shape %v; it must be 1-D", idx)
	}
	want := x.Clone()
	want[ax] = idx[0]
	if !src.Equal(want) {
		return nil, shapeErr("the source has shape %v; an index of %d along axis %d of x %v needs %v", src, idx[0], ax, x, want)
	}
	if x[ax] == 0 && idx[0] > 0 {
		return nil, shapeErr("axis %d is empty: there is nothing to add into", ax)
	}
	return x.Clone(), nil
}

// indexGeom is x's shape split at axis: Outer elements before it (the
// product of the axes before), the axis length D, Inner after it.
type indexGeom struct{ outer, d, inner int }

func geomOf(s tensor.Shape, axis int) indexGeom {
	g := indexGeom{outer: 1, d: s[axis], inner: 1}
	for _, v := range s[:axis] {
		g.outer *= v
	}
	for _, v := range s[axis+1:] {
		g.inner *= v
	}
	return g
}

var (
	indexError = opdef.IndexError
	wrapIndex  = opdef.WrapIndex
)

// wrapAll wraps every index of idx (a reference value) for an axis of
// length d, or returns the error naming the first out of range.
func wrapAll(op string, idx *opdef.Value, axis, d int) ([]int, error) {
	w := make([]int, idx.Len())
	for p := range w {
		v := idx.Int(p)
		if w[p] = wrapIndex(v, d); w[p] < 0 {
			return nil, indexError(op, v, p, axis, d)
		}
	}
	return w, nil
}

func refGather(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x := in[0]
	ax := n.Attr().(opdef.AxisAttr).Axis
	g := geomOf(x.Shape, ax)
	w, err := wrapAll("Gather", in[1], ax, g.d)
	if err != nil {
		return nil, err
	}
	out := opdef.NewValue(n.DType(), n.Shape())
	p := 0
	for o := 0; o < g.outer; o++ {
		for _, j := range w {
			for i := 0; i < g.inner; i++ {
				out.Copy(p, x, (o*g.d+j)*g.inner+i)
				p++
			}
		}
	}
	return out, nil
}

// The element steps of the TakeAlongAxis family: out element q of x's
// geometry against element p of the indices (and updates u).
const (
	alongTake = iota
	alongSet
	alongAdd
)

// refAlong is the reference of TakeAlongAxis (alongTake), Scatter
// (alongSet: the updates written in row-major order of the indices, so
// that the last of duplicates wins) and ScatterAdd (alongAdd).
func refAlong(mode int) func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	name := map[int]string{alongTake: "TakeAlongAxis", alongSet: "Scatter", alongAdd: "ScatterAdd"}[mode]
	return func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
		x, idx := in[0], in[1]
		ax := n.Attr().(opdef.AxisAttr).Axis
		g := geomOf(x.Shape, ax)
		w, err := wrapAll(name, idx, ax, g.d)
		if err != nil {
			return nil, err
		}
		out := opdef.NewValue(n.DType(), n.Shape())
		if mode != alongTake {
			copy(out.F, x.F)
			copy(out.I, x.I)
			copy(out.C, x.C) // Scatter admits any dtype, complex too
		}
		n1 := idx.Shape[ax] // the indices' length along the axis
		for p, j := range w {
			o, i := p/(n1*g.inner), p%g.inner
			q := (o*g.d+j)*g.inner + i
			switch mode {
			case alongTake:
				out.Copy(p, x, q)
			case alongSet:
				out.Copy(q, in[2], p)
			case alongAdd:
				if out.DType.IsInt() {
					out.I[q] += in[2].I[p] // wraps when rounded
				} else {
					out.F[q] += in[2].F[p]
				}
			}
		}
		return out, nil
	}
}

func refIndexAdd(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x, src := in[0], in[2]
	ax := n.Attr().(opdef.AxisAttr).Axis
	g := geomOf(x.Shape, ax)
	w, err := wrapAll("IndexAdd", in[1], ax, g.d)
	if err != nil {
		return nil, err
	}
	out := opdef.NewValue(n.DType(), n.Shape())
	copy(out.F, x.F)
	copy(out.I, x.I)
	p := 0
	for o := 0; o < g.outer; o++ {
		for _, j := range w {
			for i := 0; i < g.inner; i++ {
				q := (o*g.d+j)*g.inner + i
				if out.DType.IsInt() {
					out.I[q] += src.I[p]
				} else {
					out.F[q] += src.F[p]
				}
				p++
			}
		}
	}
	return out, nil
}

// checkConstIndices is the build-time check of indices held in a Const:
// every one must lie in -d..d-1.
func checkConstIndices(op string, operands []*graph.Node, idx *graph.Node, axis, d int) *graph.Node {
	if idx.Op() != graph.OpConst || idx.Value() == nil {
		return nil
	}
	t := idx.Value()
	i64, _ := tensor.Values[int64](t) // nil for int32
	for p := range t.Shape().Size() {
		v := int64(t.Float64(p)) // exact for int32
		if i64 != nil {
			v = i64[p]
		}
		if wrapIndex(v, d) < 0 {
			return fail(graph.ErrShape, op, operands, "%v", indexError(op, v, p, axis, d))
		}
	}
	return nil
}

// indexOperands checks the operands of an indexing builder: one graph,
// indices i32 or i64, and the axis against x's rank.
func indexOperands(op string, x, idx *graph.Node, axis int, more ...*graph.Node) (int, *graph.Node) {
	all := append([]*graph.Node{x, idx}, more...)
	if _, bad := graph.Operands(op, all...); bad != nil {
		return 0, bad
	}
	if !isIndexDType(idx.DType()) {
		return 0, fail(graph.ErrDType, op, all, "the indices must be i32 or i64, got %v", idx.DType())
	}
	ax, err := normAxis(axis, x.Rank())
	if err != nil {
		return 0, fail(graph.ErrShape, op, all, "%v", err)
	}
	return ax, nil
}

// Gather takes the elements of x at indices along axis, as
// numpy.take(x, indices, axis) and torch.index_select (for 1-D indices):
// the result has shape x.shape[:axis] + indices.shape + x.shape[axis+1:],
// and element [a..., j..., b...] is x[a..., indices[j...], b...]. An
// embedding lookup is Gather(table, ids, 0). The indices are i32 or i64;
// negative ones count from the end (once); others out of range are an
// error (at build time for a Const, else when the program runs). Its
// gradient adds the result's cotangent back at the indices (IndexAdd), so
// repeated indices accumulate.
func Gather(x, indices *graph.Node, axis int) *graph.Node {
	ax, bad := indexOperands("Gather", x, indices, axis)
	if bad != nil {
		return bad
	}
	if bad := checkConstIndices("Gather", []*graph.Node{x, indices}, indices, ax, x.Shape()[ax]); bad != nil {
		return bad
	}
	return Apply(OpGather, opdef.AxisAttr{Axis: ax}, x, indices)
}

// alongShapes broadcasts x and indices against each other except along
// axis, as numpy.take_along_axis: both must have one rank.
func alongShapes(op string, x, indices *graph.Node, ax int) (*graph.Node, *graph.Node, *graph.Node) {
	all := []*graph.Node{x, indices}
	if x.Rank() != indices.Rank() {
		return nil, nil, fail(graph.ErrShape, op, all, "x has rank %d, the indices rank %d; they need the same", x.Rank(), indices.Rank())
	}
	xs, is := x.Shape().Clone(), indices.Shape().Clone()
	xs[ax], is[ax] = 1, 1
	b, err := BroadcastShapes(xs, is)
	if err != nil {
		return nil, nil, fail(graph.ErrShape, op, all, "x %v and the indices %v do not broadcast but along axis %d: %v", x.Shape(), indices.Shape(), ax, err)
	}
	xt, it := b.Clone(), b.Clone()
	xt[ax], it[ax] = x.Shape()[ax], indices.Shape()[ax]
	if !xt.Equal(x.Shape()) {
		x = BroadcastTo(x, xt...)
	}
	if !it.Equal(indices.Shape()) {
		indices = BroadcastTo(indices, it...)
	}
	return x, indices, nil
}

// TakeAlongAxis picks, for every position of indices, the element of x
// along axis at that index: result[a, j, b] = x[a, indices[a, j, b], b],
// as numpy.take_along_axis(x, indices, axis) and torch.gather(x, axis,
// indices). x and indices have one rank and broadcast against each other
// except along axis (NumPy); the result has the broadcast shape with the
// indices' length along the axis. Indices as for Gather. Its gradient is
// a ScatterAdd (repeated indices accumulate).
func TakeAlongAxis(x, indices *graph.Node, axis int) *graph.Node {
	ax, bad := indexOperands("TakeAlongAxis", x, indices, axis)
	if bad != nil {
		return bad
	}
	if bad := checkConstIndices("TakeAlongAxis", []*graph.Node{x, indices}, indices, ax, x.Shape()[ax]); bad != nil {
		return bad
	}
	x, indices, bad = alongShapes("TakeAlongAxis", x, indices, ax)
	if bad != nil {
		return bad
	}
	return Apply(OpTakeAlongAxis, opdef.AxisAttr{Axis: ax}, x, indices)
}

// scatter is the builder of Scatter and ScatterAdd: updates may broadcast
// to the indices' shape (a scalar writes one value everywhere).
func scatter(op string, code graph.Op, x, indices, updates *graph.Node, axis int) *graph.Node {
	ax, bad := indexOperands(op, x, indices, axis, updates)
	if bad != nil {
		return bad
	}
	all := []*graph.Node{x, indices, updates}
	if bad := checkConstIndices(op, all, indices, ax, x.Shape()[ax]); bad != nil {
		return bad
	}
	if !updates.Shape().Equal(indices.Shape()) {
		if err := broadcastsTo(updates.Shape(), indices.Shape()); err != nil {
			return fail(graph.ErrShape, op, all, "the updates %v do not broadcast to the indices' shape %v", updates.Shape(), indices.Shape())
		}
		updates = BroadcastTo(updates, indices.Shape()...)
	}
	return Apply(code, opdef.AxisAttr{Axis: ax}, x, indices, updates)
}

// Scatter returns x with updates written at indices along axis:
// result[a, indices[a, j, b], b] = updates[a, j, b], every other element
// x's, as torch.scatter(x, axis, indices, updates) (torch's
// Tensor.scatter_ out of place). indices has x's rank and x's dimensions
// but along axis; updates has the indices' shape or broadcasts to it.
// Indices as for Gather; they should be unique along the axis (with
// duplicates the last in row-major order of the indices wins, on every
// backend, and the gradient goes to that one only through x's path but
// to every duplicate through the updates'). The gradient with respect to
// x is the cotangent with the overwritten positions zeroed; with respect
// to updates, the cotangent taken at the indices.
func Scatter(x, indices, updates *graph.Node, axis int) *graph.Node {
	return scatter("Scatter", OpScatter, x, indices, updates, axis)
}

// ScatterAdd returns x with updates added at indices along axis:
// result[a, indices[a, j, b], b] += updates[a, j, b], as
// torch.scatter_add(x, axis, indices, updates) (with indices and updates
// of one shape: x's but along the axis; updates may broadcast to it).
// Duplicate indices accumulate (in row-major order of the indices, so
// float results do not depend on the thread count); integers wrap. It is
// TakeAlongAxis's transpose: its gradient is the cotangent for x and
// TakeAlongAxis of it for the updates.
func ScatterAdd(x, indices, updates *graph.Node, axis int) *graph.Node {
	return scatter("ScatterAdd", OpScatterAdd, x, indices, updates, axis)
}

// IndexAdd returns x with the slices of source added at index along axis:
// result[a, index[j], b] += source[a, j, b], as torch.index_add(x, axis,
// index, source) (alpha 1). index is 1-D (i32 or i64, negative entries
// wrap once); source has x's shape but index's length along the axis.
// Duplicate indices accumulate in index order; integers wrap. It is
// Gather's transpose: its gradient is the cotangent for x and Gather of
// it for source.
func IndexAdd(x, index, source *graph.Node, axis int) *graph.Node {
	ax, bad := indexOperands("IndexAdd", x, index, axis, source)
	if bad != nil {
		return bad
	}
	all := []*graph.Node{x, index, source}
	if bad := checkConstIndices("IndexAdd", all, index, ax, x.Shape()[ax]); bad != nil {
		return bad
	}
	return Apply(OpIndexAdd, opdef.AxisAttr{Axis: ax}, x, index, source)
}

// SegmentSum sums the rows of x (along axis 0) by segment:
// result[s] = the sum of x[i] over the i with segmentIDs[i] == s, for
// s in 0..numSegments-1 (0 for a segment no row names), as
// jax.ops.segment_sum(x, segmentIDs, numSegments) and
// tf.math.unsorted_segment_sum. segmentIDs is 1-D of x's leading length,
// i32 or i64; the ids need not be sorted; negative ids wrap once (as
// NumPy indices; JAX drops them) and ids beyond numSegments are an error
// (JAX drops those too). The result has shape [numSegments] +
// x.shape[1:]; it is IndexAdd into zeros, so rows are added in order and
// the gradient is a Gather. (The sums of consecutive runs with static
// counts are SumRuns.)
func SegmentSum(x, segmentIDs *graph.Node, numSegments int) *graph.Node {
	all := []*graph.Node{x, segmentIDs}
	g, bad := graph.Operands("SegmentSum", all...)
	if bad != nil {
		return bad
	}
	if x.Rank() == 0 {
		return fail(graph.ErrShape, "SegmentSum", all, "x is a scalar: segments are rows along axis 0")
	}
	if segmentIDs.Rank() != 1 || segmentIDs.Shape()[0] != x.Shape()[0] {
		return fail(graph.ErrShape, "SegmentSum", all, "the segment ids have shape %v; x %v needs [%d]", segmentIDs.Shape(), x.Shape(), x.Shape()[0])
	}
	if numSegments < 0 {
		return fail(graph.ErrInvalid, "SegmentSum", all, "numSegments %d is negative", numSegments)
	}
	if !isIndexDType(segmentIDs.DType()) {
		return fail(graph.ErrDType, "SegmentSum", all, "the segment ids must be i32 or i64, got %v", segmentIDs.DType())
	}
	if bad := checkConstIndices("SegmentSum", all, segmentIDs, 0, numSegments); bad != nil {
		return bad
	}
	s := x.Shape().Clone()
	s[0] = numSegments
	if err := graph.CheckType(x.DType(), s); err != nil {
		return fail(graph.ErrShape, "SegmentSum", all, "%v", err)
	}
	if !numeric.OK(x.DType()) {
		return fail(graph.ErrDType, "SegmentSum", all, "x must have %s, got %v", numeric.What, x.DType())
	}
	return Apply(OpIndexAdd, opdef.AxisAttr{Axis: 0}, Full(g, x.DType(), 0, s...), segmentIDs, x)
}

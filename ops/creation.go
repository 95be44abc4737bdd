package ops

import (
	"errors"
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The creation ops are composites of Iota, the one op without operands:
// an index vector computed by a kernel on each backend, so none of them
// stores a constant in proportion to its result. Arange and Linspace are
// Iota cast to float64, scaled and shifted (elementwise, fused into one
// kernel after the Iota), then cast to the dtype; the masks of Eye, Tril
// and Triu compare a row and a column Iota, broadcast, and fuse with the
// Where or Cast that consumes them.

// graphFail records a build error of op on g, which has no operand nodes
// to name (the creation ops take a graph).
func graphFail(g *graph.Graph, kind error, op string, format string, args ...any) *graph.Node {
	err := graph.NewError(kind, op, nil, format, args...)
	if g == nil {
		return graph.Invalid(err)
	}
	return g.Fail(err)
}

// graphReady checks g before a creation op builds in it.
func graphReady(g *graph.Graph, op string) *graph.Node {
	if g == nil {
		return graph.Invalid(graph.NewError(graph.ErrInvalid, op, nil, "nil graph"))
	}
	if err := g.Err(); err != nil {
		return g.Fail(err)
	}
	return nil
}

// emptyOf is a constant of dtype dt and the given (empty) shape.
func emptyOf(g *graph.Graph, dt tensor.DType, shape ...int) *graph.Node {
	t, err := tensor.Make(dt, shape...)
	if err != nil {
		return graph.Failf(graph.ErrInvalid, "empty", nil, "%v", err)
	}
	return g.ConstShared(t, "")
}

// Arange returns the values start, start+step, ... below stop (above it
// for a negative step) in dtype dt, as numpy.arange(start, stop, step,
// dtype=dt): ceil((stop-start)/step) elements, none if that is not
// positive. Element i is start + i*step, computed in float64 for the float
// dtypes and rounded once to dt (NumPy computes start + i*((start+step) -
// start), which differs from this in the last bit at most for steps that
// are not exact), and exactly in int64 for the integer dtypes.
//
// Deliberate differences from NumPy: for an integer dt, start and step
// must be integers (NumPy casts them in ways that depend on the version),
// and every element must fit dt; a step of 0, a non-finite argument or a
// Bool dt is an error.
func Arange(g *graph.Graph, dt tensor.DType, start, stop, step float64) *graph.Node {
	if bad := graphReady(g, "Arange"); bad != nil {
		return bad
	}
	fail := func(format string, args ...any) *graph.Node {
		return graphFail(g, graph.ErrInvalid, "Arange", "start %v, stop %v, step %v, dtype %v: %s", start, stop, step, dt, fmt.Sprintf(format, args...))
	}
	switch {
	case !dt.Valid() || dt == tensor.Bool || !(dt.IsInt() || dt.IsFloat()):
		return graphFail(g, graph.ErrDType, "Arange", "dtype %v is not numeric", dt)
	case math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(stop) || math.IsInf(stop, 0) || math.IsNaN(step) || math.IsInf(step, 0):
		return fail("the arguments must be finite")
	case step == 0:
		return fail("step is 0")
	}
	count := math.Ceil((stop - start) / step)
	if count <= 0 {
		return emptyOf(g, dt, 0)
	}
	if count > float64(math.MaxInt32)*float64(math.MaxInt32) || math.IsInf(count, 0) {
		return fail("%v elements is too many", count)
	}
	n := int(count)
	if err := graph.CheckType(dt, []int{n}); err != nil {
		return graphFail(g, errors.Unwrap(err), "Arange", "%d elements: %v", n, err)
	}
	idx := Iota(g, tensor.Int64, 0, n)
	if dt.IsInt() {
		last := start + float64(n-1)*step
		for _, v := range []float64{start, step, last} {
			if err := representable(tensor.Int64, v); err != nil {
				return fail("%v", err)
			}
		}
		for _, v := range []float64{start, last} {
			if err := representable(dt, v); err != nil {
				return fail("%v", err)
			}
		}
		v := idx
		if step != 1 {
			v = Mul(v, intConst(g, tensor.Int64, int(step)))
		}
		if start != 0 {
			v = Add(v, intConst(g, tensor.Int64, int(start)))
		}
		return Cast(v, dt)
	}
	return Cast(affine(Cast(idx, tensor.Float64), step, start), dt)
}

// affine returns x*a + b for a float64 x, skipping the identities.
func affine(x *graph.Node, a, b float64) *graph.Node {
	if a != 1 {
		x = Mul(x, Scalar(x, a))
	}
	if b != 0 {
		x = Add(x, Scalar(x, b))
	}
	return x
}

// Linspace returns num evenly spaced values from start to stop in the
// float dtype dt, as numpy.linspace(start, stop, num, endpoint, dtype=dt):
// with endpoint the step is (stop-start)/(num-1) and the last element is
// exactly stop; without it the step is (stop-start)/num and stop is
// excluded. Element i is start + i*step, computed in float64 and rounded
// once to dt. num 0 gives an empty vector and num 1 the vector [start].
//
// Deliberate difference from NumPy: dt must be a float dtype (NumPy
// floors the float values for an integer dtype; Cast them after a Floor
// instead).
func Linspace(g *graph.Graph, dt tensor.DType, start, stop float64, num int, endpoint bool) *graph.Node {
	if bad := graphReady(g, "Linspace"); bad != nil {
		return bad
	}
	switch {
	case !dt.Valid() || !dt.IsFloat():
		return graphFail(g, graph.ErrDType, "Linspace", "dtype %v is not a float dtype", dt)
	case num < 0:
		return graphFail(g, graph.ErrInvalid, "Linspace", "num %d is negative", num)
	case math.IsNaN(start) || math.IsInf(start, 0) || math.IsNaN(stop) || math.IsInf(stop, 0):
		return graphFail(g, graph.ErrInvalid, "Linspace", "start %v and stop %v must be finite", start, stop)
	}
	if err := graph.CheckType(dt, []int{num}); err != nil {
		return graphFail(g, errors.Unwrap(err), "Linspace", "%d elements: %v", num, err)
	}
	if num == 0 {
		return emptyOf(g, dt, 0)
	}
	div := num
	if endpoint {
		div = num - 1
	}
	if div == 0 { // num 1 with the endpoint: [start]
		return Full(g, dt, start, 1)
	}
	step := (stop - start) / float64(div)
	y := affine(Cast(Iota(g, tensor.Int64, 0, num), tensor.Float64), step, start)
	if endpoint {
		y = Concat(0, Slice(y, R(0, num-1)), Full(g, tensor.Float64, stop, 1))
	}
	return Cast(y, dt)
}

// offsets returns the Int64 matrix col - row of shape [n, m]: element
// (i, j) is j - i, which the diagonal k is (0 the main one, above it
// positive).
func offsets(g *graph.Graph, n, m int) *graph.Node {
	return Sub(Iota(g, tensor.Int64, 0, m), Iota(g, tensor.Int64, 0, n, 1))
}

// Eye returns the n×m matrix of dtype dt with ones on diagonal k and
// zeros elsewhere, as numpy.eye(n, m, k, dtype=dt): element (i, j) is 1
// where j - i == k (k 0 is the main diagonal, k > 0 above it, k < 0
// below). It is built from index vectors, not stored.
func Eye(g *graph.Graph, dt tensor.DType, n, m, k int) *graph.Node {
	if bad := graphReady(g, "Eye"); bad != nil {
		return bad
	}
	if n < 0 || m < 0 {
		return graphFail(g, graph.ErrShape, "Eye", "shape %d×%d is negative", n, m)
	}
	if err := graph.CheckType(dt, []int{n, m}); err != nil {
		return graphFail(g, errors.Unwrap(err), "Eye", "%d×%d of %v: %v", n, m, dt, err)
	}
	if n*m == 0 {
		return emptyOf(g, dt, n, m)
	}
	d := offsets(g, n, m)
	return Cast(Equal(d, intConst(g, tensor.Int64, clampDiag(k, n, m))), dt)
}

// clampDiag keeps a diagonal index k inside (-n-1, m+1), where the
// comparisons with j - i give the same answers, so that it fits any
// int64 arithmetic.
func clampDiag(k, n, m int) int { return min(max(k, -n-1), m+1) }

// triangle is Tril and Triu: x where keep(j - i, k), 0 elsewhere, on the
// last two axes.
func triangle(op string, x *graph.Node, k int, lower bool) *graph.Node {
	g, bad := graph.Operands(op, x)
	if bad != nil {
		return bad
	}
	if x.Rank() < 2 {
		return fail(graph.ErrShape, op, []*graph.Node{x}, "needs at least 2 axes, got rank %d", x.Rank())
	}
	n, m := x.Shape()[x.Rank()-2], x.Shape()[x.Rank()-1]
	if x.Shape().Size() == 0 {
		return x
	}
	kc := intConst(g, tensor.Int64, clampDiag(k, n, m))
	var keep *graph.Node
	if lower {
		keep = LessEqual(offsets(g, n, m), kc)
	} else {
		keep = GreaterEqual(offsets(g, n, m), kc)
	}
	return Where(keep, x, Scalar(x, 0))
}

// Tril returns x with the elements above diagonal k of its last two axes
// zeroed, as numpy.tril(x, k): element (..., i, j) is kept where
// j - i <= k. Batched over the leading axes; x needs rank >= 2 (NumPy
// also takes a vector, as a matrix of equal rows; loom does not).
func Tril(x *graph.Node, k int) *graph.Node { return triangle("Tril", x, k, true) }

// Triu returns x with the elements below diagonal k of its last two axes
// zeroed, as numpy.triu(x, k): element (..., i, j) is kept where
// j - i >= k. Batched over the leading axes; x needs rank >= 2.
func Triu(x *graph.Node, k int) *graph.Node { return triangle("Triu", x, k, false) }

// OpIota is the op code of Iota, the one op without operands.
var OpIota graph.Op

func init() {
	OpIota = define(&opdef.Def{Name: "Iota", Doc: "no operands: each element's index along one axis, in an integer dtype (the index vectors of the creation ops)",
		Arity: 0, Kind: opdef.Movement, DType: dtIota, Shape: shIota, Ref: refIota})
}

func dtIota(_ []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	a, ok := attr.(opdef.IotaAttr)
	if !ok {
		return 0, argErr("needs an opdef.IotaAttr attribute, got %T", attr)
	}
	if a.DType != tensor.Int32 && a.DType != tensor.Int64 {
		return 0, dtypeErr("dtype %v is not i32 or i64", a.DType)
	}
	return a.DType, nil
}

func shIota(_ []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.IotaAttr)
	if !ok {
		return nil, argErr("needs an opdef.IotaAttr attribute, got %T", attr)
	}
	if err := validShape(a.Shape); err != nil {
		return nil, err
	}
	if a.Axis < 0 || a.Axis >= len(a.Shape) {
		return nil, shapeErr("axis %d is out of range for shape %v", a.Axis, a.Shape)
	}
	if a.DType == tensor.Int32 && a.Shape[a.Axis] > math.MaxInt32+1 {
		return nil, shapeErr("axis %d of length %d has indices beyond i32", a.Axis, a.Shape[a.Axis])
	}
	return a.Shape.Clone(), nil
}

func refIota(n *graph.Node, _ []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.IotaAttr)
	out := opdef.NewValue(n.DType(), n.Shape())
	idx := make([]int, n.Rank())
	for p := 0; p < out.Len(); p++ {
		opdef.Index(out.Shape, p, idx)
		out.SetInt(p, int64(idx[a.Axis]))
	}
	return out, nil
}

// Iota returns the integer array of dtype dt (Int32 or Int64) and the
// given shape whose elements are their index along axis (negative counts
// from the end): Iota(g, tensor.Int64, 0, 4) is [0 1 2 3], and
// Iota(g, tensor.Int32, 1, 2, 3) is [[0 1 2] [0 1 2]] (jax.lax's
// broadcasted_iota). It has no operands: each backend computes it with a
// kernel, and nothing is stored.
func Iota(g *graph.Graph, dt tensor.DType, axis int, shape ...int) *graph.Node {
	if bad := graphReady(g, "Iota"); bad != nil {
		return bad
	}
	ax := axis
	if ax < 0 {
		ax += len(shape)
	}
	if err := graph.CheckType(dt, shape); err != nil {
		return graphFail(g, errors.Unwrap(err), "Iota", "%v", err)
	}
	return applyIn(g, OpIota, opdef.IotaAttr{DType: dt, Shape: tensor.Shape(shape), Axis: ax})
}

// applyIn is Apply for an op without operands: the graph is given, not
// found from the operands.
func applyIn(g *graph.Graph, op graph.Op, attr graph.Attr) *graph.Node {
	d := opdef.Lookup(op)
	attr = opdef.CloneAttr(attr)
	dt, s, err := d.Infer(nil, attr)
	if err != nil {
		return g.Fail(opdef.WrapRule(err, d.Name, nil))
	}
	return g.Add(graph.Spec{Op: op, Attr: attr, DType: dt, Shape: s})
}

package ops

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Op codes of the data-movement ops.
var OpReshape, OpTranspose, OpBroadcastTo, OpConcat, OpSlice, OpPad graph.Op

func init() {
	none := func(*graph.Node) float64 { return 0 } // no arithmetic
	move := func(name, doc string, arity int, sh opdef.ShapeRule, ref func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error), grad opdef.GradRule) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: arity, Kind: opdef.Movement, DType: sameDType(anyType), Shape: sh, Cost: none, Ref: ref, Grad: grad})
	}
	OpReshape = move("Reshape", "the elements in a new shape (row-major order)", 1, shReshape,
		func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			out := opdef.NewValue(n.DType(), n.Shape())
			for p := 0; p < out.Len(); p++ {
				out.Copy(p, in[0], p)
			}
			return out, nil
		},
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return Reshape(g, n.Input(0).Shape()...) })
		})
	OpTranspose = move("Transpose", "axes permuted", 1, shTranspose,
		func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			perm := n.Attr().(opdef.PermAttr).Perm
			src := make([]int, len(perm))
			return opdef.Gather(opdef.NewValue(n.DType(), n.Shape()), in[0], func(idx []int) int {
				for i, ax := range perm {
					src[ax] = idx[i]
				}
				return opdef.Flat(in[0].Shape, src)
			}), nil
		},
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return Transpose(g, InversePerm(n.Attr().(opdef.PermAttr).Perm)...) })
		})
	OpBroadcastTo = move("BroadcastTo", "x expanded to a shape by NumPy's rules", 1, shBroadcastTo,
		func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			out := opdef.NewValue(n.DType(), n.Shape())
			it := opdef.NewBroadcast(out.Shape, in)
			for p := 0; p < out.Len(); p++ {
				out.Copy(p, in[0], it.Next()[0])
			}
			return out, nil
		},
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node { return SumTo(g, n.Input(0).Shape()) })
		})
	OpConcat = move("Concat", "operands joined along an axis", -1, shConcat,
		func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			axis := n.Attr().(opdef.AxisAttr).Axis
			out := opdef.NewValue(n.DType(), n.Shape())
			idx := make([]int, len(out.Shape))
			for p := 0; p < out.Len(); p++ {
				opdef.Index(out.Shape, p, idx)
				k, pos := 0, idx[axis]
				for pos >= in[k].Shape[axis] {
					pos -= in[k].Shape[axis]
					k++
				}
				idx[axis] = pos
				out.Copy(p, in[k], opdef.Flat(in[k].Shape, idx))
			}
			return out, nil
		},
		func(n, g *graph.Node, need []bool) []*graph.Node {
			axis := n.Attr().(opdef.AxisAttr).Axis
			out := make([]*graph.Node, len(n.Inputs()))
			off := 0
			for i, x := range n.Inputs() {
				d := x.Shape()[axis]
				if need[i] {
					rs := make([]Range, axis+1)
					for k := range rs {
						rs[k] = All
					}
					rs[axis] = R(off, off+d)
					out[i] = Slice(g, rs...)
				}
				off += d
			}
			return out
		})
	OpSlice = move("Slice", "x[start:stop:step] along each axis (a negative step walks down, as in Python)", 1, shSlice,
		func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			rs := n.Attr().(opdef.SliceAttr).Ranges
			src := make([]int, len(rs))
			return opdef.Gather(opdef.NewValue(n.DType(), n.Shape()), in[0], func(idx []int) int {
				for i, r := range rs {
					src[i] = r.Start + idx[i]*r.Step
				}
				return opdef.Flat(in[0].Shape, src)
			}), nil
		},
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				x := n.Input(0)
				if n.Shape().Size() == 0 {
					return ZerosLike(x)
				}
				rs := n.Attr().(opdef.SliceAttr).Ranges
				ws := make([]PadWidth, len(rs))
				flip := make([]Range, len(rs))
				for i, r := range rs {
					last := r.Start + (n.Shape()[i]-1)*r.Step
					flip[i] = All
					if r.Step < 0 {
						// The elements were read from start down to last:
						// reversed, they are the positive-step slice
						// last:start+1:-step.
						flip[i] = Range{Start: -1, Stop: End, Step: -1}
						r.Start, last, r.Step = last, r.Start, -r.Step
					}
					ws[i] = PadWidth{Low: r.Start, High: x.Shape()[i] - 1 - last, Interior: r.Step - 1}
				}
				return Pad(Slice(g, flip...), ws...)
			})
		})
	OpPad = move("Pad", "x surrounded by zeros (and with zeros between elements)", 1, shPad,
		func(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
			x := in[0]
			ws := n.Attr().(opdef.PadAttr).Widths
			out := opdef.NewValue(n.DType(), n.Shape())
			idx := make([]int, len(x.Shape))
			for p := 0; p < x.Len(); p++ {
				opdef.Index(x.Shape, p, idx)
				for i, w := range ws {
					idx[i] = w.Low + idx[i]*(w.Interior+1)
				}
				out.Copy(opdef.Flat(out.Shape, idx), x, p)
			}
			return out, nil
		},
		func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				x := n.Input(0)
				ws := n.Attr().(opdef.PadAttr).Widths
				rs := make([]Range, len(ws))
				for i, w := range ws {
					// The operand's elements sit at Low, Low+Interior+1, ...:
					// d of them (Interior plays no part when d <= 1, and may
					// then be as large as an int holds).
					d := x.Shape()[i]
					switch d {
					case 0:
						rs[i] = R(w.Low, w.Low)
					case 1:
						rs[i] = R(w.Low, w.Low+1)
					default:
						rs[i] = RS(w.Low, w.Low+(d-1)*(w.Interior+1)+1, w.Interior+1)
					}
				}
				return Slice(g, rs...)
			})
		})
}

func shReshape(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.ShapeAttr)
	if !ok {
		return nil, argErr("needs a opdef.ShapeAttr attribute, got %T", attr)
	}
	if err := validShape(a.Shape); err != nil {
		return nil, err
	}
	if a.Shape.Size() != in[0].Size() {
		return nil, shapeErr("cannot reshape %v (%d elements) to %v (%d elements)", in[0], in[0].Size(), a.Shape, a.Shape.Size())
	}
	return a.Shape.Clone(), nil
}

// Reshape returns x's elements (row-major order) in a new shape. One
// dimension may be -1: it is inferred from the element count.
func Reshape(x *graph.Node, shape ...int) *graph.Node {
	if _, bad := graph.Operands("Reshape", x); bad != nil {
		return bad
	}
	target, err := resolveReshape(x.Shape(), shape)
	if err != nil {
		return fail(graph.ErrShape, "Reshape", []*graph.Node{x}, "%v", err)
	}
	if target.Equal(x.Shape()) {
		return x
	}
	return Apply(OpReshape, opdef.ShapeAttr{Shape: target}, x)
}

func resolveReshape(from tensor.Shape, shape []int) (tensor.Shape, error) {
	target := tensor.Shape(append([]int{}, shape...))
	infer := -1
	known, nonzero := 1, 1 // the product of the known dims, and of the non-zero ones
	for i, d := range target {
		switch {
		case d == -1 && infer >= 0:
			return nil, fmt.Errorf("target %v has more than one -1", target)
		case d == -1:
			infer = i
		case d < 0:
			return nil, fmt.Errorf("target %v has negative dimension %d", target, d)
		case d == 0:
			known = 0
		default:
			var ok bool
			if nonzero, ok = mulDims(nonzero, d); !ok {
				return nil, fmt.Errorf("target %v has too many elements", target)
			}
			if known != 0 {
				known = nonzero
			}
		}
	}
	n := from.Size()
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			return nil, fmt.Errorf("cannot infer the -1 in %v for %d elements", target, n)
		}
		target[infer] = n / known
	} else if known != n {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", from, n, target, known)
	}
	return target, nil
}

func shTranspose(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.PermAttr)
	if !ok {
		return nil, argErr("needs a opdef.PermAttr attribute, got %T", attr)
	}
	if err := checkPerm(a.Perm, len(in[0])); err != nil {
		return nil, err
	}
	out := make(tensor.Shape, len(a.Perm))
	for i, p := range a.Perm {
		out[i] = in[0][p]
	}
	return out, nil
}

func checkPerm(perm []int, rank int) error {
	if len(perm) != rank {
		return shapeErr("perm %s has %d entries for rank %d", intList(perm), len(perm), rank)
	}
	seen := make([]bool, rank)
	for _, p := range perm {
		if p < 0 || p >= rank || seen[p] {
			return shapeErr("perm %s is not a permutation of 0..%d", intList(perm), rank-1)
		}
		seen[p] = true
	}
	return nil
}

// Transpose permutes the axes of x: result axis i is x's axis perm[i]
// (negative entries count from the end). With no perm it reverses the axes.
func Transpose(x *graph.Node, perm ...int) *graph.Node {
	if _, bad := graph.Operands("Transpose", x); bad != nil {
		return bad
	}
	r := x.Rank()
	p := make([]int, len(perm))
	if len(perm) == 0 {
		p = make([]int, r)
		for i := range p {
			p[i] = r - 1 - i
		}
	}
	for i, v := range perm {
		if v < 0 && v >= -r {
			v += r
		}
		p[i] = v
	}
	if err := checkPerm(p, r); err != nil {
		return fail(graph.ErrShape, "Transpose", []*graph.Node{x}, "%v", err)
	}
	identity := true
	for i, v := range p {
		identity = identity && v == i
	}
	if identity {
		return x
	}
	return Apply(OpTranspose, opdef.PermAttr{Perm: p}, x)
}

// InversePerm returns the permutation that undoes perm, or nil if perm is
// not a permutation of 0..len(perm)-1 (an entry out of range or
// repeated). The inverse of an empty perm is empty (not nil).
func InversePerm(perm []int) []int {
	inv := make([]int, len(perm))
	seen := make([]bool, len(perm))
	for i, p := range perm {
		if p < 0 || p >= len(perm) || seen[p] {
			return nil
		}
		seen[p] = true
		inv[p] = i
	}
	return inv
}

func shBroadcastTo(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.ShapeAttr)
	if !ok {
		return nil, argErr("needs a opdef.ShapeAttr attribute, got %T", attr)
	}
	if err := broadcastsTo(in[0], a.Shape); err != nil {
		return nil, err
	}
	return a.Shape.Clone(), nil
}

// BroadcastTo expands x to shape by the NumPy rules (x's trailing
// dimensions must equal the target's or be 1).
func BroadcastTo(x *graph.Node, shape ...int) *graph.Node {
	if _, bad := graph.Operands("BroadcastTo", x); bad != nil {
		return bad
	}
	if err := broadcastsTo(x.Shape(), shape); err != nil {
		return fail(graph.ErrShape, "BroadcastTo", []*graph.Node{x}, "%v", err)
	}
	if x.Shape().Equal(shape) {
		return x
	}
	return Apply(OpBroadcastTo, opdef.ShapeAttr{Shape: tensor.Shape(shape).Clone()}, x)
}

func shConcat(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.AxisAttr)
	if !ok {
		return nil, argErr("needs an opdef.AxisAttr attribute, got %T", attr)
	}
	first := in[0]
	if a.Axis < 0 || a.Axis >= len(first) {
		return nil, shapeErr("axis %d is out of range for rank %d", a.Axis, len(first))
	}
	out := first.Clone()
	for k, s := range in[1:] {
		if len(s) != len(first) {
			return nil, shapeErr("operand %d has rank %d, operand 0 has rank %d", k+1, len(s), len(first))
		}
		for i := range s {
			if i != a.Axis && s[i] != first[i] {
				return nil, shapeErr("operand %d has shape %v, which differs from %v outside axis %d", k+1, s, first, a.Axis)
			}
		}
		sum, ok := addDims(out[a.Axis], s[a.Axis])
		if !ok {
			return nil, shapeErr("the lengths along axis %d add up to more than an int holds", a.Axis)
		}
		out[a.Axis] = sum
	}
	return out, nil
}

// Concat joins xs along axis (negative counts from the end). The operands
// must agree on every other dimension; their dtypes are promoted within a
// kind.
func Concat(axis int, xs ...*graph.Node) *graph.Node {
	if _, bad := graph.Operands("Concat", xs...); bad != nil {
		return bad
	}
	dt := xs[0].DType()
	for _, x := range xs[1:] {
		var err error
		if dt, err = promote(dt, x.DType()); err != nil {
			return fail(graph.ErrDType, "Concat", xs, "%v", err)
		}
	}
	ax, err := normAxis(axis, xs[0].Rank())
	if err != nil {
		return fail(graph.ErrShape, "Concat", xs, "%v", err)
	}
	if len(xs) == 1 {
		return xs[0]
	}
	cast := make([]*graph.Node, len(xs))
	for i, x := range xs {
		cast[i] = castTo(x, dt)
	}
	return Apply(OpConcat, opdef.AxisAttr{Axis: ax}, cast...)
}

func shSlice(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.SliceAttr)
	if !ok {
		return nil, argErr("needs a opdef.SliceAttr attribute, got %T", attr)
	}
	s := in[0]
	if len(a.Ranges) != len(s) {
		return nil, shapeErr("%d ranges for rank %d", len(a.Ranges), len(s))
	}
	out := make(tensor.Shape, len(s))
	for i, r := range a.Ranges {
		if r.Step < 0 && r.Step != math.MinInt && -1 <= r.Stop && r.Stop <= r.Start && r.Start < s[i] {
			out[i] = sliceLen(r.Stop, r.Start, -r.Step)
			continue
		}
		if r.Step < 1 || r.Start < 0 || r.Start > r.Stop || r.Stop > s[i] {
			return nil, shapeErr("range %d:%d:%d is not normalised for axis %d of length %d", r.Start, r.Stop, r.Step, i, s[i])
		}
		out[i] = sliceLen(r.Start, r.Stop, r.Step)
	}
	return out, nil
}

// sliceLen is the number of indices start, start+step, ... below stop,
// for 0 <= start <= stop and step >= 1, computed without overflow
// (ceil((stop-start)/step) would overflow for a step near MaxInt).
func sliceLen(start, stop, step int) int {
	n := stop - start
	if n == 0 {
		return 0
	}
	return (n-1)/step + 1
}

// Slice selects x[start:stop:step] along each axis, one Range per leading
// axis (axes without a Range are kept whole), as Python and NumPy basic
// slicing do. Indices out of bounds are an error, not clamped (a
// deliberate difference from NumPy, which clamps): after resolving
// negative indices, 0 <= start <= stop <= length for a positive step.
// A negative step walks down from start (included) to stop (excluded), as
// x[start:stop:-k] does: then -1 <= stop <= start < length after
// resolving, and End as the stop means "through index 0" (NumPy's omitted
// stop), so RS(-1, End, -1) reverses an axis (see Flip).
func Slice(x *graph.Node, ranges ...Range) *graph.Node {
	if _, bad := graph.Operands("Slice", x); bad != nil {
		return bad
	}
	s := x.Shape()
	if len(ranges) > len(s) {
		return fail(graph.ErrShape, "Slice", []*graph.Node{x}, "%d ranges for rank %d", len(ranges), len(s))
	}
	norm := make([]Range, len(s))
	identity := true
	for i, d := range s {
		r := All
		if i < len(ranges) {
			r = ranges[i]
		}
		if r.Step == 0 {
			r.Step = 1
		}
		if r.Step < 0 {
			if r.Step == math.MinInt {
				return fail(graph.ErrShape, "Slice", []*graph.Node{x}, "axis %d: step %d has no positive counterpart", i, r.Step)
			}
			start, stop := r.Start, r.Stop
			if start < 0 {
				start += d
			}
			switch {
			case stop == End:
				stop = -1
			case stop < 0:
				stop += d
			}
			if start >= d || stop < -1 || stop > start {
				return fail(graph.ErrShape, "Slice", []*graph.Node{x}, "axis %d: range %s is out of bounds for length %d (a negative step needs -1 <= stop <= start < length after resolving negative indices)", i, fmtRange(r), d)
			}
			norm[i] = Range{Start: start, Stop: stop, Step: r.Step}
			identity = identity && d <= 1 && stop == start-d
			continue
		}
		start, stop := r.Start, r.Stop
		if start < 0 {
			start += d
		}
		if stop == End {
			stop = d
		} else if stop < 0 {
			stop += d
		}
		if start < 0 || stop > d || start > stop {
			return fail(graph.ErrShape, "Slice", []*graph.Node{x}, "axis %d: range %s is out of bounds for length %d", i, fmtRange(r), d)
		}
		norm[i] = Range{Start: start, Stop: stop, Step: r.Step}
		identity = identity && start == 0 && stop == d && (r.Step == 1 || d <= 1)
	}
	if identity {
		return x
	}
	return Apply(OpSlice, opdef.SliceAttr{Ranges: norm}, x)
}

func fmtRange(r Range) string {
	stop := fmt.Sprint(r.Stop)
	if r.Stop == End {
		stop = "End"
	}
	return fmt.Sprintf("%d:%s:%d", r.Start, stop, r.Step)
}

// ExpandDims inserts a dimension of length 1 at axis (negative counts
// from the end of the result).
func ExpandDims(x *graph.Node, axis int) *graph.Node {
	if _, bad := graph.Operands("ExpandDims", x); bad != nil {
		return bad
	}
	ax, err := normAxis(axis, x.Rank()+1)
	if err != nil {
		return fail(graph.ErrShape, "ExpandDims", []*graph.Node{x}, "%v", err)
	}
	s := append(append(append([]int{}, x.Shape()[:ax]...), 1), x.Shape()[ax:]...)
	return Reshape(x, s...)
}

// Squeeze removes the given axes, which must have length 1 (all length-1
// axes if none are given).
func Squeeze(x *graph.Node, axes ...int) *graph.Node {
	if _, bad := graph.Operands("Squeeze", x); bad != nil {
		return bad
	}
	drop := make([]bool, x.Rank())
	if len(axes) == 0 {
		for i, d := range x.Shape() {
			drop[i] = d == 1
		}
	} else {
		ax, err := normAxes(axes, x.Rank())
		if err != nil {
			return fail(graph.ErrShape, "Squeeze", []*graph.Node{x}, "%v", err)
		}
		for _, a := range ax {
			if x.Shape()[a] != 1 {
				return fail(graph.ErrShape, "Squeeze", []*graph.Node{x}, "axis %d has length %d, not 1", a, x.Shape()[a])
			}
			drop[a] = true
		}
	}
	var s []int
	for i, d := range x.Shape() {
		if !drop[i] {
			s = append(s, d)
		}
	}
	return Reshape(x, s...)
}

func shPad(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.PadAttr)
	if !ok {
		return nil, argErr("needs a opdef.PadAttr attribute, got %T", attr)
	}
	s := in[0]
	if len(a.Widths) != len(s) {
		return nil, shapeErr("%d pad widths for rank %d", len(a.Widths), len(s))
	}
	out := make(tensor.Shape, len(s))
	for i, w := range a.Widths {
		if w.Low < 0 || w.High < 0 || w.Interior < 0 {
			return nil, shapeErr("axis %d: negative padding %d:%d:%d", i, w.Low, w.High, w.Interior)
		}
		d, ok := paddedLen(s[i], w)
		if !ok {
			return nil, shapeErr("axis %d: padding %d:%d:%d makes length %d longer than an int holds", i, w.Low, w.High, w.Interior, s[i])
		}
		out[i] = d
	}
	return out, nil
}

// paddedLen is Low + d + High + (d-1)*Interior (no interior padding when
// d <= 1) for non-negative widths, and false if it overflows an int.
func paddedLen(d int, w PadWidth) (int, bool) {
	n, ok := addDims(d, w.Low)
	if ok {
		n, ok = addDims(n, w.High)
	}
	if ok && d > 1 {
		var in int
		if in, ok = mulDims(d-1, w.Interior); ok {
			n, ok = addDims(n, in)
		}
	}
	return n, ok
}

// Pad surrounds x with zeros: per leading axis, Low zeros before, High
// after and Interior between neighbouring elements (axes without a width
// are not padded). It is the adjoint of Slice: Slice's gradient is a Pad
// and Pad's is a Slice.
func Pad(x *graph.Node, widths ...PadWidth) *graph.Node {
	if _, bad := graph.Operands("Pad", x); bad != nil {
		return bad
	}
	if len(widths) > x.Rank() {
		return fail(graph.ErrShape, "Pad", []*graph.Node{x}, "%d pad widths for rank %d", len(widths), x.Rank())
	}
	full := make([]PadWidth, x.Rank())
	copy(full, widths)
	identity := true
	for i, w := range full {
		if w.Low < 0 || w.High < 0 || w.Interior < 0 {
			return fail(graph.ErrShape, "Pad", []*graph.Node{x}, "axis %d: negative padding %d:%d:%d", i, w.Low, w.High, w.Interior)
		}
		identity = identity && w.Low == 0 && w.High == 0 && (w.Interior == 0 || x.Shape()[i] <= 1)
	}
	if identity {
		return x
	}
	return Apply(OpPad, opdef.PadAttr{Widths: full}, x)
}

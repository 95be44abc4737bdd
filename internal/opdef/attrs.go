package opdef

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// The attributes ops carry. Each String is canonical and complete (two
// nodes with the same op, operands and attribute compute the same value);
// CSE compares attributes by value with EqualAttrs, not by their text.

// AxesAttr is the attribute of the reductions: the reduced axes, sorted,
// non-negative and distinct, and whether they are kept as size-1 dims.
type AxesAttr struct {
	Axes     []int
	KeepDims bool
}

func (a AxesAttr) String() string {
	s := "axes=" + IntList(a.Axes)
	if a.KeepDims {
		s += " keepdims"
	}
	return s
}

// AxisAttr is the attribute of Softmax, LogSoftmax and Concat: one
// non-negative axis.
type AxisAttr struct{ Axis int }

func (a AxisAttr) String() string { return fmt.Sprintf("axis=%d", a.Axis) }

// ShapeAttr is the attribute of Reshape and BroadcastTo: the target shape,
// fully resolved (no -1).
type ShapeAttr struct{ Shape tensor.Shape }

func (a ShapeAttr) String() string { return "shape=" + a.Shape.String() }

// PermAttr is the attribute of Transpose: result axis i is operand axis
// Perm[i].
type PermAttr struct{ Perm []int }

func (a PermAttr) String() string { return "perm=" + IntList(a.Perm) }

// CastAttr is the attribute of Cast: the target dtype.
type CastAttr struct{ To tensor.DType }

func (a CastAttr) String() string { return "to=" + a.To.Short() }

// Range selects indices Start, Start+Step, ... below Stop along one axis.
// Negative Start and Stop count from the end (-1 is the last index); Stop
// may be End for "through the last index"; a zero Step means 1. After
// normalisation 0 <= Start <= Stop <= dim and Step >= 1, or, for a
// negative Step (walking down from Start to Stop, Stop excluded),
// -1 <= Stop <= Start < dim.
type Range struct{ Start, Stop, Step int }

// End as a Range's Stop means the axis length.
const End = int(^uint(0) >> 1)

// IotaAttr is the attribute of Iota, which has no operands: the result's
// dtype and shape, and the axis whose index each element holds.
type IotaAttr struct {
	DType tensor.DType
	Shape tensor.Shape
	Axis  int
}

func (a IotaAttr) String() string {
	return fmt.Sprintf("%s axis=%d", tensor.TypeString(a.DType, a.Shape), a.Axis)
}

// EqualAttr compares by value.
func (a IotaAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(IotaAttr)
	return ok && a.DType == c.DType && a.Axis == c.Axis && slices.Equal(a.Shape, c.Shape)
}

// RepeatAttr is the attribute of Repeat and SumRuns: the axis and the
// counts along it (Repeat: how many times each element of the operand
// appears; SumRuns: how many consecutive elements of the operand each
// result element sums).
type RepeatAttr struct {
	Axis   int
	Counts []int
}

func (a RepeatAttr) String() string {
	return fmt.Sprintf("axis=%d counts=%s", a.Axis, IntList(a.Counts))
}

// EqualAttr compares by value.
func (a RepeatAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(RepeatAttr)
	return ok && a.Axis == c.Axis && slices.Equal(a.Counts, c.Counts)
}

// SliceAttr is the attribute of Slice: one normalised Range per axis.
type SliceAttr struct{ Ranges []Range }

func (a SliceAttr) String() string {
	parts := make([]string, len(a.Ranges))
	for i, r := range a.Ranges {
		parts[i] = fmt.Sprintf("%d:%d:%d", r.Start, r.Stop, r.Step)
	}
	return "slice=[" + strings.Join(parts, ",") + "]"
}

// PadWidth pads one axis: Low zeros before the first element, High after
// the last, and Interior between neighbouring elements.
type PadWidth struct{ Low, High, Interior int }

// PadAttr is the attribute of Pad: one PadWidth per axis.
type PadAttr struct{ Widths []PadWidth }

func (a PadAttr) String() string {
	parts := make([]string, len(a.Widths))
	for i, w := range a.Widths {
		parts[i] = fmt.Sprintf("%d:%d:%d", w.Low, w.High, w.Interior)
	}
	return "pad=[" + strings.Join(parts, ",") + "]"
}

// MatMulAttr is the optional attribute of MatMul: the product uses the
// transpose of its first (TransA) or second (TransB) operand's last two
// axes, without materialising it.
type MatMulAttr struct{ TransA, TransB bool }

func (a MatMulAttr) String() string {
	switch {
	case a.TransA && a.TransB:
		return "transA transB"
	case a.TransA:
		return "transA"
	case a.TransB:
		return "transB"
	}
	return ""
}

// CustomAttr is the attribute of CustomGrad: the user's gradient rule.
// Each CustomGradient call gets its own ID, so two custom gradients are
// never merged by common-subexpression elimination.
type CustomAttr struct {
	ID   int64
	Name string
	Rule func(dy *graph.Node) []*graph.Node
}

func (a CustomAttr) String() string { return fmt.Sprintf("custom#%d %q", a.ID, a.Name) }

// EqualAttr reports whether b is a CustomAttr with the same ID (rules are
// functions, which do not compare).
func (a CustomAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(CustomAttr)
	return ok && c.ID == a.ID
}

// IntList formats a list of ints as "[1,2,3]".
func IntList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// attrEqualer is an attribute that compares itself (when reflect's deep
// equality would compare too much or cannot compare a field).
type attrEqualer interface {
	EqualAttr(graph.Attr) bool
}

// EqualAttrs reports whether two attributes are the same value: by their
// EqualAttr method when they have one, else by deep equality (nil equals
// only nil).
func EqualAttrs(a, b graph.Attr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if e, ok := a.(attrEqualer); ok {
		return e.EqualAttr(b)
	}
	return reflect.DeepEqual(a, b)
}

// CloneAttr returns a copy of attr that shares no memory with the
// caller's, for the attribute types of this package, so that a caller
// changing its slices after Apply cannot change a built node (nodes are
// immutable). Other attributes are returned as they are.
func CloneAttr(attr graph.Attr) graph.Attr {
	switch a := attr.(type) {
	case AxesAttr:
		a.Axes = slices.Clone(a.Axes)
		return a
	case ShapeAttr:
		a.Shape = a.Shape.Clone()
		return a
	case PermAttr:
		a.Perm = slices.Clone(a.Perm)
		return a
	case SliceAttr:
		a.Ranges = slices.Clone(a.Ranges)
		return a
	case PadAttr:
		a.Widths = slices.Clone(a.Widths)
		return a
	case RepeatAttr:
		a.Counts = slices.Clone(a.Counts)
		return a
	case IotaAttr:
		a.Shape = a.Shape.Clone()
		return a
	case RandomAttr:
		a.Shape = a.Shape.Clone()
		return a
	case ConvAttr:
		a.Stride, a.Dilation = slices.Clone(a.Stride), slices.Clone(a.Dilation)
		a.PadLo, a.PadHi, a.Size = slices.Clone(a.PadLo), slices.Clone(a.PadHi), slices.Clone(a.Size)
		return a
	case FFTAttr:
		a.Axes = slices.Clone(a.Axes)
		return a
	case PoolAttr:
		a.Kernel, a.Stride, a.Dilation = slices.Clone(a.Kernel), slices.Clone(a.Stride), slices.Clone(a.Dilation)
		a.PadLo, a.PadHi, a.Size = slices.Clone(a.PadLo), slices.Clone(a.PadHi), slices.Clone(a.Size)
		return a
	case *FusedAttr:
		if a == nil {
			return a
		}
		c := &FusedAttr{Domain: a.Domain.Clone(), Nodes: slices.Clone(a.Nodes), Sites: slices.Clone(a.Sites)}
		c.Ops = make([]FusedOp, len(a.Ops))
		for i, o := range a.Ops {
			o.Attr = CloneAttr(o.Attr)
			o.Args = slices.Clone(o.Args)
			c.Ops[i] = o
		}
		if a.Reduce != nil {
			r := *a.Reduce
			r.Axes = slices.Clone(r.Axes)
			c.Reduce = &r
		}
		return c
	}
	return attr
}

// EqualAttr compares by value (nil and empty axis lists are equal).
func (a AxesAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(AxesAttr)
	return ok && a.KeepDims == c.KeepDims && slices.Equal(a.Axes, c.Axes)
}

// EqualAttr compares by value.
func (a ShapeAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(ShapeAttr)
	return ok && slices.Equal(a.Shape, c.Shape)
}

// EqualAttr compares by value.
func (a PermAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(PermAttr)
	return ok && slices.Equal(a.Perm, c.Perm)
}

// EqualAttr compares by value.
func (a SliceAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(SliceAttr)
	return ok && slices.Equal(a.Ranges, c.Ranges)
}

// EqualAttr compares by value.
func (a PadAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(PadAttr)
	return ok && slices.Equal(a.Widths, c.Widths)
}

// ScanAttr is the attribute of the scans (Cumsum, Cumprod, Cummax,
// LogCumSumExp) and of their gradient helpers: the non-negative axis, and
// whether the scan runs from the end of the axis (Reverse) and leaves out
// each position's own element (Exclusive: the result is the inclusive scan
// shifted by one, starting from the op's identity).
type ScanAttr struct {
	Axis               int
	Reverse, Exclusive bool
}

func (a ScanAttr) String() string {
	s := fmt.Sprintf("axis=%d", a.Axis)
	if a.Reverse {
		s += " reverse"
	}
	if a.Exclusive {
		s += " exclusive"
	}
	return s
}

// EqualAttr compares by value.
func (a ScanAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(ScanAttr)
	return ok && a == c
}

// RandomAttr is the attribute of the random ops (ops/random.go): the
// result's dtype and shape, RandomBernoulli's probability of true, and
// the stream: counter words 2 and 3 of the Philox blocks the op draws
// (0 for the values, others for the derived keys of NextKey and FoldIn).
type RandomAttr struct {
	DType  tensor.DType
	Shape  tensor.Shape
	P      float64
	Stream uint64
}

func (a RandomAttr) String() string {
	s := tensor.TypeString(a.DType, a.Shape)
	if a.P != 0 {
		s += fmt.Sprintf(" p=%v", a.P)
	}
	if a.Stream != 0 {
		s += fmt.Sprintf(" stream=%#x", a.Stream)
	}
	return s
}

// EqualAttr compares by value.
func (a RandomAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(RandomAttr)
	return ok && a.DType == c.DType && a.P == c.P && a.Stream == c.Stream && slices.Equal(a.Shape, c.Shape)
}

// SortAttr is the attribute of Sort and ArgSort: the non-negative axis and
// the order (descending puts NaN first, ascending last).
type SortAttr struct {
	Axis       int
	Descending bool
}

func (a SortAttr) String() string {
	if a.Descending {
		return fmt.Sprintf("axis=%d descending", a.Axis)
	}
	return fmt.Sprintf("axis=%d", a.Axis)
}

// EqualAttr compares by value.
func (a SortAttr) EqualAttr(b graph.Attr) bool { c, ok := b.(SortAttr); return ok && a == c }

// TopKAttr is the attribute of TopK: how many elements (0 <= K <= the
// axis' length), the non-negative axis, and whether the largest or the
// smallest are selected.
type TopKAttr struct {
	K, Axis int
	Largest bool
}

func (a TopKAttr) String() string {
	s := fmt.Sprintf("k=%d axis=%d", a.K, a.Axis)
	if a.Largest {
		s += " largest"
	}
	return s
}

// EqualAttr compares by value.
func (a TopKAttr) EqualAttr(b graph.Attr) bool { c, ok := b.(TopKAttr); return ok && a == c }

// SearchSortedAttr is the attribute of SearchSorted: which side of equal
// elements an index is placed (numpy.searchsorted's side="right").
type SearchSortedAttr struct{ Right bool }

func (a SearchSortedAttr) String() string {
	if a.Right {
		return "right"
	}
	return "left"
}

// EqualAttr compares by value.
func (a SearchSortedAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(SearchSortedAttr)
	return ok && a == c
}

// ReduceOp is the reduction of a collective op.
type ReduceOp int

const (
	ReduceSum ReduceOp = iota
	ReduceMean
	ReduceMax
	ReduceMin
)

func (r ReduceOp) String() string {
	switch r {
	case ReduceSum:
		return "sum"
	case ReduceMean:
		return "mean"
	case ReduceMax:
		return "max"
	case ReduceMin:
		return "min"
	}
	return fmt.Sprintf("ReduceOp(%d)", int(r))
}

// CollectiveAttr is the attribute of the collective ops: the number of
// ranks the graph is built for (checked against the communicator at
// Compile), the reduction (AllReduce, ReduceScatter, Reduce), the axis
// (AllGather, ReduceScatter) and the root rank (Broadcast, Reduce).
type CollectiveAttr struct {
	Size   int
	Reduce ReduceOp
	Axis   int
	Root   int
}

func (a CollectiveAttr) String() string {
	return fmt.Sprintf("size=%d reduce=%v axis=%d root=%d", a.Size, a.Reduce, a.Axis, a.Root)
}

// EqualAttr compares by value.
func (a CollectiveAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(CollectiveAttr)
	return ok && a == c
}

package ops

import (
	"math"
	"sort"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Sorting along one axis: Sort, ArgSort, TopK and SearchSorted. TopK's
// values are a TakeAlongAxis of x at its indices, and the gradients of
// Sort and of TopK's values are ScatterAdds into zeros at the indices
// (ops/index.go).
//
// The order, everywhere: ascending by value, NaN after every number
// (numpy.sort's "NaN last"), -0 equal to +0 (they keep their input
// order, as in NumPy's comparison sort), ties kept in index order
// (stable). Descending is the reverse order of the values with NaN still
// counted as the largest, so NaN comes first, and ties still keep index
// order: torch.sort(x, descending=True, stable=True) does both (NumPy
// has no descending sort: np.sort(x)[::-1] also puts NaN first but
// reverses the order of ties). TopK's largest is the first k of that
// descending order, its smallest of the ascending one: equal values come
// lower index first, as jax.lax.top_k documents (torch.topk gives the
// same values and also counts NaN as the largest, but leaves the order of
// equal values to its selection algorithm: torch 1.13 on the CPU gives
// indices [1, 3] for topk([3, NaN, 1, 3, 2], 2), where TopK gives [1, 0]).

// Op codes of the sorting ops.
var OpSort, OpArgSort, OpTopK, OpSearchSorted graph.Op

func init() {
	// sortCost is n·log2(n) per line of length n (0 for a malformed node).
	sortCost := func(n *graph.Node) float64 {
		if !n.Valid() || len(n.Inputs()) != 1 {
			return 0
		}
		s, axis := n.Input(0).Shape(), -1
		switch a := n.Attr().(type) {
		case opdef.SortAttr:
			axis = a.Axis
		case opdef.TopKAttr:
			axis = a.Axis
		}
		if axis < 0 || axis >= len(s) {
			return 0
		}
		return float64(s.Size()) * math.Max(1, math.Log2(float64(s[axis])))
	}
	OpSort = define(&opdef.Def{Name: "Sort", Doc: "the elements sorted along an axis (SortAttr), stable; NaN last (first when descending)",
		Arity: 1, Kind: opdef.Normalisation, DType: sameDType(numeric), Shape: shSort, Cost: sortCost, Ref: refSort,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.SortAttr)
				x := n.Input(0)
				return ScatterAdd(ZerosLike(x), Apply(OpArgSort, a, x), g, a.Axis)
			})
		}})
	OpArgSort = define(&opdef.Def{Name: "ArgSort", Doc: "the int64 indices that sort an axis (SortAttr), stable; NaN last (first when descending)",
		Arity: 1, Kind: opdef.Normalisation, DType: toInt64(numeric), Shape: shSort, Cost: sortCost, Ref: refSort})
	OpTopK = define(&opdef.Def{Name: "TopK", Doc: "the int64 indices of the k largest or smallest elements along an axis (TopKAttr), in order; ties by lower index, NaN largest",
		Arity: 1, Kind: opdef.Normalisation, DType: toInt64(numeric), Shape: shTopK, Cost: sortCost, Ref: refSort})
	OpSearchSorted = define(&opdef.Def{Name: "SearchSorted", Doc: "int64 insertion points of values in the sorted last axis of the first operand (SearchSortedAttr: left or right of equal elements)",
		Arity: 2, Kind: opdef.Normalisation, DType: dtSearchSorted, Shape: shSearchSorted, Ref: refSearchSorted,
		Cost: func(n *graph.Node) float64 {
			if !n.Valid() || len(n.Inputs()) != 2 || n.Input(0).Rank() == 0 {
				return 0
			}
			s := n.Input(0).Shape()
			return float64(n.Shape().Size()) * math.Max(1, math.Log2(float64(s[len(s)-1]+1)))
		}})
}

// ---- rules ----

func shSort(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.SortAttr)
	if !ok {
		return nil, argErr("needs a SortAttr attribute, got %T", attr)
	}
	if a.Axis < 0 || a.Axis >= len(in[0]) {
		return nil, shapeErr("axis %d is out of range for rank %d", a.Axis, len(in[0]))
	}
	return in[0].Clone(), nil
}

func shTopK(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.TopKAttr)
	if !ok {
		return nil, argErr("needs a TopKAttr attribute, got %T", attr)
	}
	if a.Axis < 0 || a.Axis >= len(in[0]) {
		return nil, shapeErr("axis %d is out of range for rank %d", a.Axis, len(in[0]))
	}
	if a.K < 0 || a.K > in[0][a.Axis] {
		return nil, shapeErr("k = %d is out of range for axis %d of length %d (valid: 0..%d)", a.K, a.Axis, in[0][a.Axis], in[0][a.Axis])
	}
	s := in[0].Clone()
	s[a.Axis] = a.K
	return s, nil
}

func dtSearchSorted(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	if _, ok := attr.(opdef.SearchSortedAttr); !ok {
		return 0, argErr("needs a SearchSortedAttr attribute, got %T", attr)
	}
	if err := numeric.Check(in); err != nil {
		return 0, err
	}
	if in[0] != in[1] {
		return 0, mixedErr(in[0], in[1])
	}
	return tensor.Int64, nil
}

// shSearchSorted: the sorted operand is 1-D, or N-D with the values'
// leading dimensions (torch.searchsorted); the result has the values'
// shape.
func shSearchSorted(in []tensor.Shape, _ graph.Attr) (tensor.Shape, error) {
	s, v := in[0], in[1]
	switch {
	case len(s) == 0:
		return nil, shapeErr("the sorted operand is a scalar; it needs rank 1 or more")
	case len(s) > 1 && (len(v) != len(s) || !v[:len(v)-1].Equal(s[:len(s)-1])):
		return nil, shapeErr("a sorted operand of shape %v needs values of shape %v[:-1] + [any], got %v", s, s, v)
	}
	return v.Clone(), nil
}

// ---- builders ----

// Sort returns x sorted along axis (negative counts from the end), in
// ascending order or, with descending, descending: numpy.sort(x, axis,
// kind="stable") and torch.sort(x, dim, descending, stable=True)'s
// values. NaN sorts after every number (NumPy's rule) and so first when
// descending (torch's); -0 and +0 are equal and keep their order. Every
// integer and float dtype is admitted. Its gradient sends each incoming
// gradient back to the position its value came from (a scatter at
// ArgSort's indices).
func Sort(x *graph.Node, axis int, descending bool) *graph.Node {
	ax, bad := axisOf("Sort", x, axis)
	if bad != nil {
		return bad
	}
	return Apply(OpSort, opdef.SortAttr{Axis: ax, Descending: descending}, x)
}

// ArgSort returns the Int64 indices along axis that sort x (Sort's
// order): numpy.argsort(x, axis, kind="stable"), torch.argsort(x, dim,
// descending, stable=True). Equal elements keep their index order in
// both directions; NaN is last ascending, first descending. It is not
// differentiable.
func ArgSort(x *graph.Node, axis int, descending bool) *graph.Node {
	ax, bad := axisOf("ArgSort", x, axis)
	if bad != nil {
		return bad
	}
	return Apply(OpArgSort, opdef.SortAttr{Axis: ax, Descending: descending}, x)
}

// TopK returns the k largest (or, with largest false, smallest) elements
// of x along axis and their Int64 indices, in order (largest first, or
// smallest first): the values of torch.topk(x, k, dim, largest,
// sorted=True), NaN counting as larger than every number; among equal
// values the lower index comes first, as in jax.lax.top_k and
// torch.sort(stable=True)[:k] (torch.topk's own order of ties is
// unspecified). The shapes are x's with axis of length k; 0 <= k <= its length.
// The values are differentiable (the gradient is scattered back to the
// indices); the indices are not.
func TopK(x *graph.Node, k, axis int, largest bool) (values, indices *graph.Node) {
	ax, bad := axisOf("TopK", x, axis)
	if bad != nil {
		return bad, bad
	}
	idx := Apply(OpTopK, opdef.TopKAttr{K: k, Axis: ax, Largest: largest}, x)
	if !idx.Valid() {
		return idx, idx
	}
	return TakeAlongAxis(x, idx, ax), idx
}

// SearchSorted returns, as Int64, where each of values would be inserted
// into the last axis of sorted to keep it sorted: numpy.searchsorted(a,
// v, side) when sorted is 1-D (the result has values' shape), and
// torch.searchsorted when sorted is N-D (values then has sorted's leading
// dimensions; each row of values searches its own row of sorted). With
// right false an index is before any equal elements (the first i with
// sorted[i] >= v), with right true after them (the first i with
// sorted[i] > v). NaN is greater than every number, as in Sort. sorted
// and values have the same integer or float dtype. sorted must be sorted
// ascending; otherwise the result is unspecified (as NumPy's), though
// deterministic.
func SearchSorted(sorted, values *graph.Node, right bool) *graph.Node {
	if _, bad := graph.Operands("SearchSorted", sorted, values); bad != nil {
		return bad
	}
	return Apply(OpSearchSorted, opdef.SearchSortedAttr{Right: right}, sorted, values)
}

// ---- reference evaluators ----

// sortLess is the order of the sorting ops on floats: a before b when
// a < b, or when b is NaN and a is not (NaN last; -0 equals +0).
func sortLess(a, b float64) bool { return a < b || (b != b && a == a) }

// sortPerm returns the stable order of the elements of x at positions
// line: perm[r] is the line index of the r-th element.
func sortPerm(x *opdef.Value, line []int, desc bool) []int {
	less := func(i, j int) bool {
		if x.DType.IsInt() {
			return x.I[line[i]] < x.I[line[j]]
		}
		return sortLess(x.F[line[i]], x.F[line[j]])
	}
	perm := make([]int, len(line))
	for i := range perm {
		perm[i] = i
	}
	sort.SliceStable(perm, func(a, b int) bool {
		if desc {
			return less(perm[b], perm[a])
		}
		return less(perm[a], perm[b])
	})
	return perm
}

// refSort is the reference of Sort, ArgSort and TopK: each line sorted
// stably by comparison (sort.SliceStable) in float64 or int64.
func refSort(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	x := in[0]
	out := opdef.NewValue(n.DType(), n.Shape())
	var axis, k int
	desc := false
	switch a := n.Attr().(type) {
	case opdef.SortAttr:
		axis, desc, k = a.Axis, a.Descending, x.Shape[a.Axis]
	case opdef.TopKAttr:
		axis, desc, k = a.Axis, a.Largest, a.K
	}
	if out.Len() == 0 {
		return out, nil
	}
	var outLines [][]int
	scanLines(out.Shape, opdef.ScanAttr{Axis: axis}, func(line []int) { outLines = append(outLines, append([]int(nil), line...)) })
	i := 0
	scanLines(x.Shape, opdef.ScanAttr{Axis: axis}, func(line []int) {
		perm := sortPerm(x, line, desc)
		ol := outLines[i]
		i++
		for r := range k {
			if n.Op() == OpSort {
				out.Copy(ol[r], x, line[perm[r]])
			} else {
				out.I[ol[r]] = int64(perm[r])
			}
		}
	})
	return out, nil
}

// refSearchSorted bisects each row with the kernels' loop: lo = 0, hi =
// M; while lo < hi, mid = (lo+hi)/2 moves lo past mid when sorted[mid]
// is before v (left) or not after v (right), else hi to mid.
func refSearchSorted(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	s, v := in[0], in[1]
	right := n.Attr().(opdef.SearchSortedAttr).Right
	out := opdef.NewValue(tensor.Int64, n.Shape())
	M := s.Shape[len(s.Shape)-1]
	V := 1
	if len(v.Shape) > 0 {
		V = v.Shape[len(v.Shape)-1]
	}
	before := func(a, b int) bool { // s[a] before v[b] (left); !(v[b] before s[a]) (right)
		if s.DType.IsInt() {
			if right {
				return !(v.I[b] < s.I[a])
			}
			return s.I[a] < v.I[b]
		}
		if right {
			return !sortLess(v.F[b], s.F[a])
		}
		return sortLess(s.F[a], v.F[b])
	}
	for p := range out.Len() {
		row := 0
		if len(s.Shape) > 1 {
			row = p / V
		}
		lo, hi := 0, M
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if before(row*M+mid, p) {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		out.I[p] = int64(lo)
	}
	return out, nil
}

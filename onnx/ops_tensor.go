package onnx

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The tensor-manipulation operators: constants, shapes, movement,
// indexing. Shape-like operands (Reshape's shape, Slice's starts, Pad's
// pads, ...) must be known at import (loom's shapes are static).

func reg(name string, d opDef) {
	d.spec = "Operators.md#" + name
	operators[name] = d
}

func one(y *graph.Node) ([]*graph.Node, error) { return []*graph.Node{y}, nil }

// int64Const is a Const of int64 values with the given shape.
func int64Const(g *graph.Graph, vals []int, shape ...int) *graph.Node {
	v := make([]int64, len(vals))
	for i, x := range vals {
		v[i] = int64(x)
	}
	t, err := tensor.New(v, shape...)
	if err != nil {
		return g.Fail(err)
	}
	return g.Const(t)
}

// normIndices makes negative indices along an axis of length d count from
// the end (ONNX allows [-d, d)).
func normIndices(idx *graph.Node, d int) *graph.Node {
	if v := idx.Value(); idx.Op() == graph.OpConst && v != nil {
		neg := false
		for i := 0; i < v.Size(); i++ {
			if v.Float64(i) < 0 {
				neg = true
				break
			}
		}
		if !neg {
			return idx
		}
	}
	zero := ops.Scalar(idx, 0)
	return ops.Where(ops.Less(idx, zero), ops.Add(idx, ops.Scalar(idx, float64(d))), idx)
}

func init() {
	reg("Constant", opDef{attrs: []string{"value", "value_float", "value_floats", "value_int", "value_ints", "value_string", "value_strings", "sparse_value"}, storageOK: true,
		fn: func(n *onode) ([]*graph.Node, error) {
			if len(n.p.Attrs) != 1 {
				return nil, fmt.Errorf("exactly one value attribute is required, got %d", len(n.p.Attrs))
			}
			a := n.p.Attrs[0]
			var t *tensor.Tensor
			var err error
			switch a.Name {
			case "value":
				if a.T == nil {
					return nil, fmt.Errorf("attribute value holds no tensor")
				}
				t, err = a.T.toTensor(n.im.cfg.dir)
			case "value_float":
				t = tensor.Scalar(a.F)
			case "value_floats":
				t, err = tensor.New(append([]float32(nil), a.Floats...), len(a.Floats))
			case "value_int":
				t = tensor.Scalar(a.I)
			case "value_ints":
				t, err = tensor.New(append([]int64(nil), a.Ints...), len(a.Ints))
			default:
				return nil, fmt.Errorf("attribute %s: %w", a.Name, ErrUnsupported)
			}
			if err != nil {
				return nil, err
			}
			return one(n.g().Const(t))
		}})
	reg("ConstantOfShape", opDef{attrs: []string{"value"}, fn: func(n *onode) ([]*graph.Node, error) {
		shape, err := n.ints(0)
		if err != nil {
			return nil, err
		}
		dt, v := tensor.Float32, 0.0
		if a := n.attr("value"); a != nil && a.T != nil {
			t, err := a.T.toTensor("")
			if err != nil {
				return nil, err
			}
			if t.Size() != 1 {
				return nil, fmt.Errorf("value has %d elements, want 1", t.Size())
			}
			dt, v = t.DType(), t.Float64(0)
		}
		// A scalar broadcast (ops.Full): nothing the size of the result is
		// allocated at import, whatever shape a model asks for.
		return one(ops.Full(n.g(), dt, v, shape...))
	}})
	reg("Shape", opDef{attrs: []string{"start", "end"}, knownAlways: true, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		s := x.Shape()
		r := len(s)
		clamp := func(v int) int {
			if v < 0 {
				v += r
			}
			return min(max(v, 0), r)
		}
		start, end := clamp(n.attrInt("start", 0)), clamp(n.attrInt("end", r))
		if end < start {
			end = start
		}
		return one(int64Const(n.g(), s[start:end], end-start))
	}})
	reg("Size", opDef{knownAlways: true, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		return one(n.g().Const(tensor.Scalar(int64(x.Shape().Size()))))
	}})
	reg("Reshape", opDef{attrs: []string{"allowzero"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		shape, err := n.ints(1)
		if err != nil {
			return nil, err
		}
		if n.attrInt("allowzero", 0) == 0 {
			for i, d := range shape {
				if d == 0 {
					if i >= x.Rank() {
						return nil, fmt.Errorf("shape %v copies dimension %d of %v, which has rank %d", shape, i, x.Shape(), x.Rank())
					}
					shape[i] = x.Shape()[i]
				}
			}
		}
		return one(ops.Reshape(x, shape...))
	}})
	squeezeAxes := func(n *onode) ([]int, bool, error) {
		if n.opset() >= 13 {
			if !n.has(1) {
				return nil, false, nil
			}
			a, err := n.ints(1)
			return a, true, err
		}
		a, ok := n.attrInts("axes")
		return a, ok, nil
	}
	reg("Squeeze", opDef{attrs: []string{"axes"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		as, given, err := squeezeAxes(n)
		if err != nil {
			return nil, err
		}
		if !given {
			for i, d := range x.Shape() {
				if d == 1 {
					as = append(as, i)
				}
			}
		}
		as, err = n.axes(as, x.Rank())
		if err != nil {
			return nil, err
		}
		if len(as) == 0 {
			return one(x)
		}
		return one(ops.Squeeze(x, as...))
	}})
	reg("Unsqueeze", opDef{attrs: []string{"axes"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		as, given, err := squeezeAxes(n)
		if err != nil {
			return nil, err
		}
		if !given {
			return nil, fmt.Errorf("axes are required")
		}
		r := x.Rank() + len(as)
		as, err = n.axes(as, r)
		if err != nil {
			return nil, err
		}
		shape := make([]int, 0, r)
		src := x.Shape()
		k := 0
		for i := 0; i < r; i++ {
			if k2 := indexOf(as, i); k2 >= 0 {
				shape = append(shape, 1)
				continue
			}
			shape = append(shape, src[k])
			k++
		}
		return one(ops.Reshape(x, shape...))
	}})
	reg("Transpose", opDef{attrs: []string{"perm"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		perm, ok := n.attrInts("perm")
		if !ok {
			for i := x.Rank() - 1; i >= 0; i-- {
				perm = append(perm, i)
			}
		}
		return one(ops.Transpose(x, perm...))
	}})
	reg("Concat", opDef{attrs: []string{"axis"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		xs := n.ins()
		if len(xs) == 0 {
			return nil, fmt.Errorf("at least one input is required")
		}
		ax, err := n.axis(n.attrInt("axis", 0), xs[0].Rank())
		if err != nil {
			return nil, err
		}
		if len(xs) == 1 {
			return one(xs[0])
		}
		return one(ops.Concat(ax, xs...))
	}})
	reg("Split", opDef{attrs: []string{"axis", "split"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		ax, err := n.axis(n.attrInt("axis", 0), x.Rank())
		if err != nil {
			return nil, err
		}
		var sizes []int
		if n.opset() >= 13 {
			if n.has(1) {
				if sizes, err = n.ints(1); err != nil {
					return nil, err
				}
			}
		} else {
			sizes, _ = n.attrInts("split")
		}
		d := x.Shape()[ax]
		k := len(n.p.Outputs)
		if sizes == nil {
			if d%k != 0 {
				return nil, fmt.Errorf("axis %d of %v does not split into %d equal parts", ax, x.Shape(), k)
			}
			for i := 0; i < k; i++ {
				sizes = append(sizes, d/k)
			}
		}
		if len(sizes) != k {
			return nil, fmt.Errorf("split has %d sizes for %d outputs", len(sizes), k)
		}
		outs := make([]*graph.Node, k)
		start := 0
		for i, s := range sizes {
			r := make([]ops.Range, x.Rank())
			for j := range r {
				r[j] = ops.All
			}
			r[ax] = ops.R(start, start+s)
			outs[i] = ops.Slice(x, r...)
			start += s
		}
		if start != d {
			return nil, fmt.Errorf("split sizes %v do not add up to %d", sizes, d)
		}
		return outs, nil
	}})
	reg("Slice", opDef{attrs: []string{"starts", "ends", "axes"}, storageOK: true, fn: importSlice})
	reg("Expand", opDef{storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		shape, err := n.ints(1)
		if err != nil {
			return nil, err
		}
		target, err := ops.BroadcastShapes(x.Shape(), tensor.Shape(shape))
		if err != nil {
			return nil, err
		}
		return one(ops.BroadcastTo(x, target...))
	}})
	reg("Tile", opDef{storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		reps, err := n.ints(1)
		if err != nil {
			return nil, err
		}
		return one(ops.Tile(x, reps...))
	}})
	reg("Gather", opDef{attrs: []string{"axis"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, idx := n.in(0), n.in(1)
		if x == nil || idx == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		ax, err := n.axis(n.attrInt("axis", 0), x.Rank())
		if err != nil {
			return nil, err
		}
		return one(ops.Gather(x, idx, ax))
	}})
	reg("GatherElements", opDef{attrs: []string{"axis"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, idx := n.in(0), n.in(1)
		if x == nil || idx == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		ax, err := n.axis(n.attrInt("axis", 0), x.Rank())
		if err != nil {
			return nil, err
		}
		return one(ops.TakeAlongAxis(x, normIndices(idx, x.Shape()[ax]), ax))
	}})
	scatterElems := func(n *onode) ([]*graph.Node, error) {
		x, idx, upd := n.in(0), n.in(1), n.in(2)
		if x == nil || idx == nil || upd == nil {
			return nil, fmt.Errorf("three inputs are required")
		}
		ax, err := n.axis(n.attrInt("axis", 0), x.Rank())
		if err != nil {
			return nil, err
		}
		idx = normIndices(idx, x.Shape()[ax])
		switch n.attrString("reduction", "none") {
		case "none":
			return one(ops.Scatter(x, idx, upd, ax))
		case "add":
			return one(ops.ScatterAdd(x, idx, upd, ax))
		}
		return nil, fmt.Errorf("reduction %q: %w", n.attrString("reduction", ""), ErrUnsupported)
	}
	reg("ScatterElements", opDef{attrs: []string{"axis", "reduction"}, fn: scatterElems})
	reg("Scatter", opDef{attrs: []string{"axis"}, fn: scatterElems})
	reg("GatherND", opDef{attrs: []string{"batch_dims"}, fn: importGatherND})
	reg("ScatterND", opDef{attrs: []string{"reduction"}, fn: importScatterND})
	reg("Pad", opDef{attrs: []string{"mode", "pads", "value"}, fn: importPad})
	reg("Range", opDef{fn: func(n *onode) ([]*graph.Node, error) {
		var v [3]*tensor.Tensor
		for i := range v {
			t, err := n.constant(i)
			if err != nil {
				return nil, err
			}
			if t.Size() != 1 {
				return nil, fmt.Errorf("input %d is not a scalar", i)
			}
			v[i] = t
		}
		dt := v[0].DType()
		start, limit, delta := v[0].Float64(0), v[1].Float64(0), v[2].Float64(0)
		if delta == 0 {
			return nil, fmt.Errorf("delta is 0")
		}
		// Computed by the program (Iota), not stored: numpy.arange's
		// values, ceil((limit-start)/delta) of them, as the spec says.
		return one(ops.Arange(n.g(), dt, start, limit, delta))
	}})
	reg("EyeLike", opDef{attrs: []string{"dtype", "k"}, knownAlways: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		if x.Rank() != 2 {
			return nil, fmt.Errorf("input is %v, want a matrix", x.Shape())
		}
		dt := x.DType()
		if n.hasAttr("dtype") {
			if dt, err = loomDType(int32(n.attrInt("dtype", 0))); err != nil {
				return nil, err
			}
		}
		s := x.Shape()
		return one(ops.Eye(n.g(), dt, s[0], s[1], n.attrInt("k", 0)))
	}})
	reg("Trilu", opDef{attrs: []string{"upper"}, storageOK: true, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		k := 0
		if n.has(1) {
			t, err := n.constant(1)
			if err != nil {
				return nil, err
			}
			k = int(t.Float64(0))
		}
		if n.attrInt("upper", 1) != 0 {
			return one(ops.Triu(x, k))
		}
		return one(ops.Tril(x, k))
	}})
	reg("OneHot", opDef{attrs: []string{"axis"}, fn: func(n *onode) ([]*graph.Node, error) {
		idx, vals := n.in(0), n.in(2)
		if idx == nil || vals == nil {
			return nil, fmt.Errorf("three inputs are required")
		}
		dt, err := n.constant(1)
		if err != nil {
			return nil, err
		}
		depth := int(dt.Float64(0))
		if depth <= 0 {
			return nil, fmt.Errorf("depth %d", depth)
		}
		r := idx.Rank() + 1
		ax, err := n.axis(n.attrInt("axis", -1), r)
		if err != nil {
			return nil, err
		}
		if idx.DType().IsFloat() {
			idx = ops.Cast(idx, tensor.Int64)
		}
		idx = normIndices(idx, depth)
		oh := ops.OneHot(idx, depth, vals.DType())
		if ax != r-1 {
			oh = ops.MoveAxis(oh, r-1, ax)
		}
		off := ops.Reshape(ops.Slice(vals, ops.R(0, 1)))
		on := ops.Reshape(ops.Slice(vals, ops.R(1, 2)))
		return one(ops.Add(off, ops.Mul(oh, ops.Sub(on, off))))
	}})
	argReduce := func(isMax bool) opDef {
		return opDef{attrs: []string{"axis", "keepdims", "select_last_index"}, fn: func(n *onode) ([]*graph.Node, error) {
			x, err := n.need(0)
			if err != nil {
				return nil, err
			}
			ax, err := n.axis(n.attrInt("axis", 0), x.Rank())
			if err != nil {
				return nil, err
			}
			last := n.attrInt("select_last_index", 0) != 0
			src := x
			if last {
				src = ops.Flip(x, ax)
			}
			var y *graph.Node
			if isMax {
				y = ops.ArgMax(src, ax)
			} else {
				y = ops.ArgMin(src, ax)
			}
			if last {
				y = ops.Sub(ops.Scalar(y, float64(x.Shape()[ax]-1)), y)
			}
			if n.attrInt("keepdims", 1) != 0 {
				y = ops.ExpandDims(y, ax)
			}
			return one(y)
		}}
	}
	reg("ArgMax", argReduce(true))
	reg("ArgMin", argReduce(false))
	reg("TopK", opDef{attrs: []string{"axis", "largest", "sorted", "k"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		var k int
		if n.opset() < 10 {
			k = n.attrInt("k", 0)
		} else {
			ks, err := n.ints(1)
			if err != nil {
				return nil, err
			}
			if len(ks) != 1 {
				return nil, fmt.Errorf("K has %d elements, want 1", len(ks))
			}
			k = ks[0]
		}
		ax, err := n.axis(n.attrInt("axis", -1), x.Rank())
		if err != nil {
			return nil, err
		}
		v, i := ops.TopK(x, k, ax, n.attrInt("largest", 1) != 0)
		return []*graph.Node{v, i}, nil
	}})
	reg("CumSum", opDef{attrs: []string{"exclusive", "reverse"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		a, err := n.ints(1)
		if err != nil {
			return nil, err
		}
		if len(a) != 1 {
			return nil, fmt.Errorf("axis has %d elements, want 1", len(a))
		}
		ax, err := n.axis(a[0], x.Rank())
		if err != nil {
			return nil, err
		}
		var opts []ops.ScanOption
		if n.attrInt("exclusive", 0) != 0 {
			opts = append(opts, ops.Exclusive)
		}
		if n.attrInt("reverse", 0) != 0 {
			opts = append(opts, ops.Reverse)
		}
		return one(ops.Cumsum(x, ax, opts...))
	}})
	reg("NonZero", opDef{fn: func(n *onode) ([]*graph.Node, error) {
		t, err := n.constant(0)
		if err != nil {
			return nil, fmt.Errorf("NonZero's result shape depends on its values: %w", err)
		}
		s := t.Shape()
		var hits [][]int
		idx := make([]int, len(s))
		for i := 0; i < t.Size(); i++ {
			rem := i
			for d := len(s) - 1; d >= 0; d-- {
				idx[d] = rem % s[d]
				rem /= s[d]
			}
			nz := t.Float64(i) != 0
			if t.DType().IsComplex() {
				nz = t.Complex128(i) != 0
			}
			if nz {
				hits = append(hits, append([]int(nil), idx...))
			}
		}
		vals := make([]int, 0, len(s)*len(hits))
		for d := range s {
			for _, h := range hits {
				vals = append(vals, h[d])
			}
		}
		return one(int64Const(n.g(), vals, len(s), len(hits)))
	}})
	reg("Compress", opDef{attrs: []string{"axis"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		c, err := n.constant(1)
		if err != nil {
			return nil, fmt.Errorf("Compress's result shape depends on its condition: %w", err)
		}
		var keep []int
		for i := 0; i < c.Size(); i++ {
			if c.Float64(i) != 0 {
				keep = append(keep, i)
			}
		}
		ax := 0
		if n.hasAttr("axis") {
			if ax, err = n.axis(n.attrInt("axis", 0), x.Rank()); err != nil {
				return nil, err
			}
		} else {
			x = ops.Reshape(x, -1)
		}
		if len(keep) > x.Shape()[ax] {
			keep = keep[:0]
			for i := 0; i < min(c.Size(), x.Shape()[ax]); i++ {
				if c.Float64(i) != 0 {
					keep = append(keep, i)
				}
			}
		}
		return one(ops.Gather(x, int64Const(n.g(), keep, len(keep)), ax))
	}})
	reg("ReverseSequence", opDef{attrs: []string{"batch_axis", "time_axis"}, fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		lens, err := n.ints(1)
		if err != nil {
			return nil, err
		}
		ba, ta := n.attrInt("batch_axis", 1), n.attrInt("time_axis", 0)
		if x.Rank() < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta {
			return nil, fmt.Errorf("batch_axis %d and time_axis %d of %v", ba, ta, x.Shape())
		}
		s := x.Shape()
		if len(lens) != s[ba] {
			return nil, fmt.Errorf("%d sequence lengths for batch %d", len(lens), s[ba])
		}
		// An index map over [time, batch] (or [batch, time]) broadcast
		// over the trailing axes, then TakeAlongAxis on the time axis.
		shape := make([]int, x.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[ba], shape[ta] = s[ba], s[ta]
		vals := make([]int, s[ba]*s[ta])
		for b := 0; b < s[ba]; b++ {
			for t := 0; t < s[ta]; t++ {
				src := t
				if t < lens[b] {
					src = lens[b] - 1 - t
				}
				if ta == 0 {
					vals[t*s[ba]+b] = src
				} else {
					vals[b*s[ta]+t] = src
				}
			}
		}
		idx := int64Const(n.g(), vals, shape...)
		return one(ops.TakeAlongAxis(x, ops.BroadcastTo(idx, func() []int {
			out := append([]int(nil), s...)
			return out
		}()...), ta))
	}})
	for name, why := range map[string]string{
		"If": "control flow (If, Loop, Scan) is not imported yet", "Loop": "control flow (If, Loop, Scan) is not imported yet",
		"Scan":       "control flow (If, Loop, Scan) is not imported yet",
		"SequenceAt": "sequence operators are out of scope", "SequenceConstruct": "sequence operators are out of scope",
		"SequenceEmpty": "sequence operators are out of scope", "SequenceErase": "sequence operators are out of scope",
		"SequenceInsert": "sequence operators are out of scope", "SequenceLength": "sequence operators are out of scope",
		"SequenceMap": "sequence operators are out of scope", "SplitToSequence": "sequence operators are out of scope",
		"ConcatFromSequence": "sequence operators are out of scope",
		"Optional":           "optional operators are out of scope", "OptionalGetElement": "optional operators are out of scope",
		"OptionalHasElement": "optional operators are out of scope",
		"StringNormalizer":   "string operators are out of scope (loom has no string tensors)",
		"TfIdfVectorizer":    "string and n-gram operators are out of scope",
		"RandomUniform":      "random operators: loom's generator (Philox) cannot reproduce another runtime's values, and the conformance data compares values",
		"RandomNormal":       "random operators: loom's generator (Philox) cannot reproduce another runtime's values",
		"RandomUniformLike":  "random operators: loom's generator (Philox) cannot reproduce another runtime's values",
		"RandomNormalLike":   "random operators: loom's generator (Philox) cannot reproduce another runtime's values",
		"Bernoulli":          "random operators: loom's generator (Philox) cannot reproduce another runtime's values",
		"Multinomial":        "random operators: loom's generator (Philox) cannot reproduce another runtime's values",
		"Unique":             "its result's shape depends on the values (loom's shapes are static)",
		"NonMaxSuppression":  "its result's shape depends on the values (loom's shapes are static)",
		"QuantizeLinear":     "quantised operators are out of scope (loom has no quantised kernels)",
		"DequantizeLinear":   "quantised operators are out of scope", "DynamicQuantizeLinear": "quantised operators are out of scope",
		"QLinearConv": "quantised operators are out of scope", "QLinearMatMul": "quantised operators are out of scope",
		"ConvInteger": "quantised operators are out of scope", "MatMulInteger": "quantised operators are out of scope",
	} {
		outOfScope[name] = why
	}
}

func indexOf(xs []int, v int) int {
	for i, x := range xs {
		if x == v {
			return i
		}
	}
	return -1
}

// importSlice is Slice: opset < 10 from attributes, then from inputs
// (starts, ends, axes, steps); out-of-range starts and ends are clamped
// as the spec says.
func importSlice(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	var starts, ends, axes, steps []int
	if n.opset() < 10 {
		starts, _ = n.attrInts("starts")
		ends, _ = n.attrInts("ends")
		axes, _ = n.attrInts("axes")
	} else {
		if starts, err = n.ints(1); err != nil {
			return nil, err
		}
		if ends, err = n.ints(2); err != nil {
			return nil, err
		}
		if n.has(3) {
			if axes, err = n.ints(3); err != nil {
				return nil, err
			}
		}
		if n.has(4) {
			if steps, err = n.ints(4); err != nil {
				return nil, err
			}
		}
	}
	if len(starts) != len(ends) {
		return nil, fmt.Errorf("%d starts and %d ends", len(starts), len(ends))
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, i)
		}
	}
	if steps == nil {
		for range starts {
			steps = append(steps, 1)
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, fmt.Errorf("%d starts, %d axes, %d steps", len(starts), len(axes), len(steps))
	}
	s := x.Shape()
	r := make([]ops.Range, x.Rank())
	for i := range r {
		r[i] = ops.All
	}
	for i, a := range axes {
		ax, err := n.axis(a, x.Rank())
		if err != nil {
			return nil, err
		}
		d, st, en, step := s[ax], starts[i], ends[i], steps[i]
		if step == 0 {
			return nil, fmt.Errorf("step 0 on axis %d", a)
		}
		if st < 0 {
			st += d
		}
		if en < 0 {
			en += d
		}
		if step > 0 {
			st, en = min(max(st, 0), d), min(max(en, 0), d)
			if en < st {
				en = st
			}
			r[ax] = ops.RS(st, en, step)
			continue
		}
		st, en = min(max(st, -1), d-1), min(max(en, -1), d-1)
		switch {
		case st < 0 || en >= st: // empty
			r[ax] = ops.R(0, 0)
		case en == -1:
			r[ax] = ops.RS(st, ops.End, step)
		default:
			r[ax] = ops.RS(st, en, step)
		}
	}
	return one(ops.Slice(x, r...))
}

// importPad is Pad: constant, reflect and edge modes; pads from the
// attribute (opset < 11) or the known input.
func importPad(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	var pads []int
	value := 0.0
	if n.opset() < 11 {
		pads, _ = n.attrInts("pads")
		value = n.attrFloat("value", 0)
	} else {
		if pads, err = n.ints(1); err != nil {
			return nil, err
		}
		if n.has(2) {
			t, err := n.constant(2)
			if err != nil {
				return nil, err
			}
			if t.Size() > 0 {
				value = t.Float64(0)
			}
		}
	}
	r := x.Rank()
	if len(pads) != 2*r {
		return nil, fmt.Errorf("pads has %d values for rank %d (want %d)", len(pads), r, 2*r)
	}
	w := make([]ops.PadWidth, r)
	neg := false
	for i := range w {
		w[i] = ops.PadWidth{Low: pads[i], High: pads[i+r]}
		if pads[i] < 0 || pads[i+r] < 0 {
			neg = true
		}
	}
	mode := n.attrString("mode", "constant")
	if neg {
		// Negative pads crop: slice first, then pad the rest.
		rs := make([]ops.Range, r)
		for i := range rs {
			lo, hi := max(-w[i].Low, 0), max(-w[i].High, 0)
			rs[i] = ops.R(lo, x.Shape()[i]-hi)
			w[i].Low, w[i].High = max(w[i].Low, 0), max(w[i].High, 0)
		}
		x = ops.Slice(x, rs...)
	}
	switch mode {
	case "constant":
		return one(ops.PadConstant(x, value, w...))
	case "reflect":
		return one(ops.PadReflect(x, w...))
	case "edge":
		return one(ops.PadEdge(x, w...))
	}
	return nil, fmt.Errorf("mode %q: %w", mode, ErrUnsupported)
}

// linearIndex turns the last axis of idx (k indices into the leading k
// axes of a shape) into row-major linear indices over those axes,
// negative ones counting from the end.
func linearIndex(idx *graph.Node, shape []int) *graph.Node {
	k := len(shape)
	if idx.DType() != tensor.Int64 {
		idx = ops.Cast(idx, tensor.Int64)
	}
	stride := 1
	strides := make([]int, k)
	for j := k - 1; j >= 0; j-- {
		strides[j] = stride
		stride *= shape[j]
	}
	var lin *graph.Node
	lead := idx.Shape()[:idx.Rank()-1]
	for j := 0; j < k; j++ {
		r := make([]ops.Range, idx.Rank())
		for i := range r {
			r[i] = ops.All
		}
		r[idx.Rank()-1] = ops.R(j, j+1)
		c := ops.Reshape(ops.Slice(idx, r...), lead...)
		c = normIndices(c, shape[j])
		term := ops.Mul(c, ops.Scalar(c, float64(strides[j])))
		if lin == nil {
			lin = term
		} else {
			lin = ops.Add(lin, term)
		}
	}
	return lin
}

// importGatherND is GatherND with batch_dims b: the batch axes are
// folded into the indices as a leading linear offset.
func importGatherND(n *onode) ([]*graph.Node, error) {
	x, idx := n.in(0), n.in(1)
	if x == nil || idx == nil {
		return nil, fmt.Errorf("two inputs are required")
	}
	b := n.attrInt("batch_dims", 0)
	xs, is := x.Shape(), idx.Shape()
	if idx.Rank() < 1 {
		return nil, fmt.Errorf("indices are a scalar")
	}
	k := is[len(is)-1]
	if b < 0 || b+k > x.Rank() || b >= idx.Rank() {
		return nil, fmt.Errorf("batch_dims %d with indices %v into %v", b, is, xs)
	}
	for i := 0; i < b; i++ {
		if xs[i] != is[i] {
			return nil, fmt.Errorf("batch dimension %d: %d in data, %d in indices", i, xs[i], is[i])
		}
	}
	batch := tensor.Shape(xs[:b]).Size()
	block := tensor.Shape(xs[b : b+k]).Size()
	rest := xs[b+k:]
	lin := linearIndex(idx, xs[b:b+k]) // shape is[:-1]
	if b > 0 {
		// Offset each batch element's indices by its batch number * block.
		bshape := make([]int, len(is)-1)
		for i := range bshape {
			bshape[i] = 1
		}
		copy(bshape, is[:b])
		off := ops.Iota(n.g(), tensor.Int64, 0, batch)
		off = ops.Reshape(ops.Mul(off, ops.Scalar(off, float64(block))), bshape...)
		lin = ops.Add(lin, off)
	}
	flat := ops.Reshape(x, append([]int{batch * block}, rest...)...)
	return one(ops.Gather(flat, lin, 0))
}

// importScatterND is ScatterND (reduction none or add): the leading axes
// the indices address are flattened and the updates added at the linear
// indices (IndexAdd); "none" first clears the addressed slices.
func importScatterND(n *onode) ([]*graph.Node, error) {
	x, idx, upd := n.in(0), n.in(1), n.in(2)
	if x == nil || idx == nil || upd == nil {
		return nil, fmt.Errorf("three inputs are required")
	}
	xs, is := x.Shape(), idx.Shape()
	k := is[len(is)-1]
	if k > x.Rank() {
		return nil, fmt.Errorf("indices %v address %d axes of %v", is, k, xs)
	}
	lead := tensor.Shape(xs[:k]).Size()
	rest := xs[k:]
	lin := ops.Reshape(linearIndex(idx, xs[:k]), -1)
	m := lin.Shape()[0]
	flat := ops.Reshape(x, append([]int{lead}, rest...)...)
	u := ops.Reshape(upd, append([]int{m}, rest...)...)
	switch n.attrString("reduction", "none") {
	case "add":
		return one(ops.Reshape(ops.IndexAdd(flat, lin, u, 0), xs...))
	case "none":
		ones := ops.OnesLike(u)
		hit := ops.IndexAdd(ops.ZerosLike(flat), lin, ones, 0)
		keep := ops.Where(ops.Greater(hit, ops.Scalar(hit, 0)), ops.ZerosLike(flat), flat)
		return one(ops.Reshape(ops.IndexAdd(keep, lin, u, 0), xs...))
	}
	return nil, fmt.Errorf("reduction %q: %w", n.attrString("reduction", ""), ErrUnsupported)
}

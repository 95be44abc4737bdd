package exectest

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Eval evaluates outputs by a deliberately naive float64 interpreter that
// shares no code with any backend: every op is written from its
// definition, index by index. It is the "float64 reference" that golden
// values in the conformance suite come from. Integer results are exact
// for values below 2^53; float32 results are computed in float64 and
// rounded once at the end of each op.
func Eval(outputs []*graph.Node, feeds map[*graph.Node]*tensor.Tensor) ([]*tensor.Tensor, error) {
	vals := map[*graph.Node]*ref{}
	for _, n := range graph.Ancestors(outputs...) {
		var v *ref
		var err error
		switch n.Op() {
		case graph.OpInput:
			t := feeds[n]
			if t == nil {
				return nil, fmt.Errorf("exectest.Eval: no feed for %s", n)
			}
			v = fromTensor(t)
		case graph.OpConst, graph.OpVariable:
			v = fromTensor(n.Value())
		default:
			ins := make([]*ref, len(n.Inputs()))
			for i, in := range n.Inputs() {
				ins[i] = vals[in]
			}
			v, err = evalOp(n, ins)
			if err != nil {
				return nil, fmt.Errorf("exectest.Eval: %s: %w", n, err)
			}
			v.round()
		}
		vals[n] = v
	}
	out := make([]*tensor.Tensor, len(outputs))
	for i, n := range outputs {
		t, err := tensor.FromFloat64s(n.DType(), vals[n].data, n.Shape()...)
		if err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

// ref is a value of the reference interpreter.
type ref struct {
	dt    tensor.DType
	shape tensor.Shape
	data  []float64
}

func fromTensor(t *tensor.Tensor) *ref {
	return &ref{dt: t.DType(), shape: t.Shape().Clone(), data: t.Float64s()}
}

func newRef(dt tensor.DType, shape tensor.Shape) *ref {
	return &ref{dt: dt, shape: shape.Clone(), data: make([]float64, shape.Size())}
}

// round makes the value representable in its dtype.
func (r *ref) round() {
	for i, v := range r.data {
		switch r.dt {
		case tensor.Float32:
			r.data[i] = float64(float32(v))
		case tensor.Float16:
			r.data[i] = float64(tensor.F16FromFloat32(float32(v)).Float32())
		case tensor.BFloat16:
			r.data[i] = float64(tensor.BF16FromFloat32(float32(v)).Float32())
		case tensor.Int32:
			r.data[i] = float64(int32(int64(v))) // wraps, as two's complement
		case tensor.Int64:
			r.data[i] = float64(int64(v))
		case tensor.Bool:
			if v != 0 {
				r.data[i] = 1
			}
		}
	}
}

// index converts a row-major flat position into a multi-index.
func index(shape tensor.Shape, p int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = p % shape[d]
			p /= shape[d]
		}
	}
	return idx
}

// flat converts a multi-index into a row-major position.
func flat(shape tensor.Shape, idx []int) int {
	p := 0
	for d, i := range idx {
		p = p*shape[d] + i
	}
	return p
}

// at reads r at the broadcast of output index idx (aligned to the right).
func (r *ref) at(idx []int) float64 {
	off := len(idx) - len(r.shape)
	p := 0
	for d, n := range r.shape {
		i := idx[off+d]
		if n == 1 {
			i = 0
		}
		p = p*n + i
	}
	return r.data[p]
}

func evalOp(n *graph.Node, in []*ref) (*ref, error) {
	out := newRef(n.DType(), n.Shape())
	d := ops.Lookup(n.Op())
	switch d.Kind {
	case ops.Elementwise:
		isInt := len(in) > 0 && in[len(in)-1].dt.IsInt()
		f, err := scalarFunc(n.Op(), isInt, n)
		if err != nil {
			return nil, err
		}
		args := make([]float64, len(in))
		for p := range out.data {
			idx := index(out.shape, p)
			for k, x := range in {
				args[k] = x.at(idx)
			}
			out.data[p] = f(args)
		}
		return out, nil
	case ops.Reduction:
		return evalReduce(n, in[0], out)
	case ops.Contraction:
		ta, tb := ops.MatMulFlags(n)
		return evalMatMul(in[0], in[1], out, ta, tb), nil
	case ops.Normalisation:
		return evalSoftmax(n, in[0], out), nil
	case ops.Movement:
		return evalMovement(n, in, out)
	}
	return nil, fmt.Errorf("no reference for %s", n.Op())
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func scalarFunc(op graph.Op, isInt bool, n *graph.Node) (func(a []float64) float64, error) {
	switch op {
	case ops.OpAdd:
		return func(a []float64) float64 { return a[0] + a[1] }, nil
	case ops.OpSub:
		return func(a []float64) float64 { return a[0] - a[1] }, nil
	case ops.OpMul:
		return func(a []float64) float64 { return a[0] * a[1] }, nil
	case ops.OpDiv:
		if isInt {
			return func(a []float64) float64 {
				if a[1] == 0 {
					return 0
				}
				return math.Floor(a[0] / a[1])
			}, nil
		}
		return func(a []float64) float64 { return a[0] / a[1] }, nil
	case ops.OpPow:
		if isInt {
			return func(a []float64) float64 {
				if a[1] < 0 {
					switch a[0] {
					case 1:
						return 1
					case -1:
						return math.Pow(-1, a[1])
					}
					return 0
				}
				return math.Pow(a[0], a[1])
			}, nil
		}
		return func(a []float64) float64 { return math.Pow(a[0], a[1]) }, nil
	case ops.OpMaximum:
		return func(a []float64) float64 {
			if math.IsNaN(a[0]) || math.IsNaN(a[1]) {
				return math.NaN()
			}
			return math.Max(a[0], a[1])
		}, nil
	case ops.OpMinimum:
		return func(a []float64) float64 {
			if math.IsNaN(a[0]) || math.IsNaN(a[1]) {
				return math.NaN()
			}
			return math.Min(a[0], a[1])
		}, nil
	case ops.OpEqual:
		return func(a []float64) float64 { return boolf(a[0] == a[1]) }, nil
	case ops.OpNotEqual:
		return func(a []float64) float64 { return boolf(a[0] != a[1]) }, nil
	case ops.OpLess:
		return func(a []float64) float64 { return boolf(a[0] < a[1]) }, nil
	case ops.OpLessEqual:
		return func(a []float64) float64 { return boolf(a[0] <= a[1]) }, nil
	case ops.OpGreater:
		return func(a []float64) float64 { return boolf(a[0] > a[1]) }, nil
	case ops.OpGreaterEqual:
		return func(a []float64) float64 { return boolf(a[0] >= a[1]) }, nil
	case ops.OpAnd:
		return func(a []float64) float64 { return boolf(a[0] != 0 && a[1] != 0) }, nil
	case ops.OpOr:
		return func(a []float64) float64 { return boolf(a[0] != 0 || a[1] != 0) }, nil
	case ops.OpNot:
		return func(a []float64) float64 { return boolf(a[0] == 0) }, nil
	case ops.OpNeg:
		return func(a []float64) float64 { return -a[0] }, nil
	case ops.OpAbs:
		return func(a []float64) float64 { return math.Abs(a[0]) }, nil
	case ops.OpSign:
		return func(a []float64) float64 {
			switch {
			case a[0] > 0:
				return 1
			case a[0] < 0:
				return -1
			}
			return a[0]
		}, nil
	case ops.OpExp:
		return func(a []float64) float64 { return math.Exp(a[0]) }, nil
	case ops.OpLog:
		return func(a []float64) float64 { return math.Log(a[0]) }, nil
	case ops.OpSqrt:
		return func(a []float64) float64 { return math.Sqrt(a[0]) }, nil
	case ops.OpTanh:
		return func(a []float64) float64 { return math.Tanh(a[0]) }, nil
	case ops.OpSigmoid:
		return func(a []float64) float64 { return 1 / (1 + math.Exp(-a[0])) }, nil
	case ops.OpRelu:
		return func(a []float64) float64 {
			if math.IsNaN(a[0]) {
				return a[0]
			}
			return math.Max(a[0], 0)
		}, nil
	case ops.OpSin:
		return func(a []float64) float64 { return math.Sin(a[0]) }, nil
	case ops.OpCos:
		return func(a []float64) float64 { return math.Cos(a[0]) }, nil
	case ops.OpWhere:
		return func(a []float64) float64 {
			if a[0] != 0 {
				return a[1]
			}
			return a[2]
		}, nil
	case ops.OpStopGradient:
		return func(a []float64) float64 { return a[0] }, nil
	case ops.OpCast:
		to := n.DType()
		return func(a []float64) float64 {
			v := a[0]
			switch {
			case to == tensor.Bool:
				return boolf(v != 0)
			case to == tensor.Int32:
				return float64(tensor.FloatToInt(math.Trunc(v), 32))
			case to == tensor.Int64:
				return float64(tensor.FloatToInt(math.Trunc(v), 64))
			}
			return v
		}, nil
	}
	return nil, fmt.Errorf("no scalar reference for %s", op)
}

func evalReduce(n *graph.Node, x, out *ref) (*ref, error) {
	a := n.Attr().(ops.AxesAttr)
	red := make([]bool, len(x.shape))
	for _, ax := range a.Axes {
		red[ax] = true
	}
	// Output index of each input element; reduced index in row-major
	// order over the reduced axes (for ArgMax).
	var redShape tensor.Shape
	for i, d := range x.shape {
		if red[i] {
			redShape = append(redShape, d)
		}
	}
	keep := out.shape
	seen := make([]bool, len(out.data))
	best := make([]float64, len(out.data))
	for p, v := range x.data {
		idx := index(x.shape, p)
		var oidx, ridx []int
		for i, k := range idx {
			switch {
			case !red[i]:
				oidx = append(oidx, k)
			case a.KeepDims:
				oidx = append(oidx, 0)
			}
			if red[i] {
				ridx = append(ridx, k)
			}
		}
		o := flat(keep, oidx)
		r := flat(redShape, ridx)
		switch n.Op() {
		case ops.OpSum:
			out.data[o] += v
		case ops.OpMax, ops.OpArgMax:
			if !seen[o] || v > best[o] || (math.IsNaN(v) && !math.IsNaN(best[o])) {
				best[o], out.data[o] = v, float64(r)
			}
		case ops.OpMin, ops.OpArgMin:
			if !seen[o] || v < best[o] || (math.IsNaN(v) && !math.IsNaN(best[o])) {
				best[o], out.data[o] = v, float64(r)
			}
		}
		seen[o] = true
	}
	if n.Op() == ops.OpMax || n.Op() == ops.OpMin {
		copy(out.data, best)
	}
	return out, nil
}

func evalMatMul(a, b, out *ref, transA, transB bool) *ref {
	r := len(out.shape)
	k := a.shape[len(a.shape)-1]
	if transA {
		k = a.shape[len(a.shape)-2]
	}
	for p := range out.data {
		idx := index(out.shape, p)
		i, j := idx[r-2], idx[r-1]
		var s float64
		for l := 0; l < k; l++ {
			ai := append(append([]int{}, idx[:r-2]...), i, l)
			if transA {
				ai = append(append([]int{}, idx[:r-2]...), l, i)
			}
			bi := append(append([]int{}, idx[:r-2]...), l, j)
			if transB {
				bi = append(append([]int{}, idx[:r-2]...), j, l)
			}
			s += a.at(ai) * b.at(bi)
		}
		out.data[p] = s
	}
	return out
}

func evalSoftmax(n *graph.Node, x, out *ref) *ref {
	axis := n.Attr().(ops.AxisAttr).Axis
	A := x.shape[axis]
	for p := range x.data {
		idx := index(x.shape, p)
		if idx[axis] != 0 {
			continue
		}
		line := make([]int, A)
		m := math.Inf(-1)
		for i := range line {
			idx[axis] = i
			line[i] = flat(x.shape, idx)
			m = math.Max(m, x.data[line[i]])
		}
		var s float64
		for _, q := range line {
			s += math.Exp(x.data[q] - m)
		}
		for _, q := range line {
			if n.Op() == ops.OpSoftmax {
				out.data[q] = math.Exp(x.data[q]-m) / s
			} else {
				out.data[q] = x.data[q] - m - math.Log(s)
			}
		}
	}
	return out
}

func evalMovement(n *graph.Node, in []*ref, out *ref) (*ref, error) {
	x := in[0]
	switch n.Op() {
	case ops.OpReshape:
		copy(out.data, x.data)
	case ops.OpTranspose:
		perm := n.Attr().(ops.PermAttr).Perm
		for p := range out.data {
			idx := index(out.shape, p)
			src := make([]int, len(idx))
			for i, ax := range perm {
				src[ax] = idx[i]
			}
			out.data[p] = x.data[flat(x.shape, src)]
		}
	case ops.OpBroadcastTo:
		for p := range out.data {
			out.data[p] = x.at(index(out.shape, p))
		}
	case ops.OpSlice:
		rs := n.Attr().(ops.SliceAttr).Ranges
		for p := range out.data {
			idx := index(out.shape, p)
			for i, r := range rs {
				idx[i] = r.Start + idx[i]*r.Step
			}
			out.data[p] = x.data[flat(x.shape, idx)]
		}
	case ops.OpPad:
		ws := n.Attr().(ops.PadAttr).Widths
		for p := range x.data {
			idx := index(x.shape, p)
			for i, w := range ws {
				idx[i] = w.Low + idx[i]*(w.Interior+1)
			}
			out.data[flat(out.shape, idx)] = x.data[p]
		}
	case ops.OpCustomGrad:
		copy(out.data, x.data)
	case ops.OpConcat:
		axis := n.Attr().(ops.AxisAttr).Axis
		for p := range out.data {
			idx := index(out.shape, p)
			k, pos := 0, idx[axis]
			for pos >= in[k].shape[axis] {
				pos -= in[k].shape[axis]
				k++
			}
			idx[axis] = pos
			out.data[p] = in[k].data[flat(in[k].shape, idx)]
		}
	default:
		return nil, fmt.Errorf("no reference for %s", n.Op())
	}
	return out, nil
}

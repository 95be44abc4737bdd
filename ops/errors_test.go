package ops_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestBuildErrors checks every kind of bad input a builder can get: the
// error names the call site (this file), the op and the operand types,
// wraps the right sentinel, is sticky, and nothing panics.
func TestBuildErrors(t *testing.T) {
	site := regexp.MustCompile(`^errors_test\.go:\d+: `)
	cases := []struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		kind  error
		want  []string
	}{
		{"matmul-inner", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 4, 5))
		}, graph.ErrShape, []string{"MatMul(f32[2,3], f32[4,5]): inner dimensions 3 and 4 differ"}},
		{"matmul-batch", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32, 2, 2, 3), g.Input("b", tensor.Float32, 3, 3, 4))
		}, graph.ErrShape, []string{"MatMul(f32[2,2,3], f32[3,3,4])", "batch dimensions [2] and [3] do not broadcast"}},
		{"matmul-scalar", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Float32), g.Input("b", tensor.Float32, 3))
		}, graph.ErrShape, []string{"MatMul(f32[], f32[3])", "ops.Mul"}},
		{"matmul-int", func(g *graph.Graph) *graph.Node {
			return ops.MatMul(g.Input("a", tensor.Int32, 2, 2), g.Input("b", tensor.Int32, 2, 2))
		}, graph.ErrDType, []string{"MatMul(i32[2,2], i32[2,2])", "float"}},
		{"broadcast", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 4))
		}, graph.ErrShape, []string{"Add(f32[2,3], f32[4])", "shapes [2,3] and [4] do not broadcast"}},
		{"broadcast-where", func(g *graph.Graph) *graph.Node {
			return ops.Where(g.Input("c", tensor.Bool, 3), g.Input("a", tensor.Float64, 2, 3), g.Input("b", tensor.Float64, 2))
		}, graph.ErrShape, []string{"Where(b8[3], f64[2,3], f64[2])", "does not broadcast"}},
		{"axis-range", func(g *graph.Graph) *graph.Node {
			return ops.Sum(g.Input("a", tensor.Float32, 2, 3), 2)
		}, graph.ErrShape, []string{"Sum(f32[2,3]): axis 2 is out of range for rank 2 (valid: -2..1)"}},
		{"axis-negative-range", func(g *graph.Graph) *graph.Node {
			return ops.Softmax(g.Input("a", tensor.Float32, 2, 3), -3)
		}, graph.ErrShape, []string{"Softmax(f32[2,3]): axis -3 is out of range"}},
		{"axis-repeated", func(g *graph.Graph) *graph.Node {
			return ops.Max(g.Input("a", tensor.Float32, 2, 3), 1, -1)
		}, graph.ErrShape, []string{"Max(f32[2,3]): axis -1 is repeated in [1,-1]"}},
		{"axis-scalar", func(g *graph.Graph) *graph.Node {
			return ops.Sum(g.Input("a", tensor.Float32), 0)
		}, graph.ErrShape, []string{"Sum(f32[]): axis 0 is out of range for a scalar"}},
		{"max-empty", func(g *graph.Graph) *graph.Node {
			return ops.Max(g.Input("a", tensor.Float32, 0, 3), 0)
		}, graph.ErrShape, []string{"Max(f32[0,3]): axis 0 has length 0"}},
		{"reshape-size", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("a", tensor.Float32, 2, 3), 4, 2)
		}, graph.ErrShape, []string{"Reshape(f32[2,3]): cannot reshape [2,3] (6 elements) to [4,2] (8 elements)"}},
		{"reshape-two-infer", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("a", tensor.Float32, 2, 3), -1, -1)
		}, graph.ErrShape, []string{"Reshape(f32[2,3]): target [-1,-1] has more than one -1"}},
		{"reshape-infer-fails", func(g *graph.Graph) *graph.Node {
			return ops.Reshape(g.Input("a", tensor.Float32, 2, 3), 4, -1)
		}, graph.ErrShape, []string{"cannot infer the -1 in [4,-1] for 6 elements"}},
		{"transpose-perm", func(g *graph.Graph) *graph.Node {
			return ops.Transpose(g.Input("a", tensor.Float32, 2, 3, 4), 0, 0, 1)
		}, graph.ErrShape, []string{"Transpose(f32[2,3,4]): perm [0,0,1] is not a permutation of 0..2"}},
		{"transpose-len", func(g *graph.Graph) *graph.Node {
			return ops.Transpose(g.Input("a", tensor.Float32, 2, 3, 4), 1, 0)
		}, graph.ErrShape, []string{"perm [1,0] has 2 entries for rank 3"}},
		{"slice-bounds", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4, 3), ops.R(0, 2), ops.R(1, 5))
		}, graph.ErrShape, []string{"Slice(f32[4,3]): axis 1: range 1:5:1 is out of bounds for length 3"}},
		{"slice-reversed", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4), ops.R(3, 1))
		}, graph.ErrShape, []string{"axis 0: range 3:1:1 is out of bounds for length 4"}},
		{"slice-negative-step-up", func(g *graph.Graph) *graph.Node {
			// A negative step walks down: its stop may not lie above its start.
			return ops.Slice(g.Input("a", tensor.Float32, 4), ops.RS(0, 3, -1))
		}, graph.ErrShape, []string{"axis 0: range 0:3:-1 is out of bounds for length 4", "-1 <= stop <= start < length"}},
		{"slice-too-many", func(g *graph.Graph) *graph.Node {
			return ops.Slice(g.Input("a", tensor.Float32, 4), ops.All, ops.All)
		}, graph.ErrShape, []string{"2 ranges for rank 1"}},
		{"concat-shapes", func(g *graph.Graph) *graph.Node {
			return ops.Concat(0, g.Input("a", tensor.Float32, 2, 3), g.Input("b", tensor.Float32, 2, 4))
		}, graph.ErrShape, []string{"Concat(f32[2,3], f32[2,4])", "differs from [2,3] outside axis 0"}},
		{"broadcastto", func(g *graph.Graph) *graph.Node {
			return ops.BroadcastTo(g.Input("a", tensor.Float32, 2, 3), 3, 3)
		}, graph.ErrShape, []string{"BroadcastTo(f32[2,3]): cannot broadcast [2,3] to [3,3]"}},
		{"mixed-kinds", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2), g.Input("b", tensor.Int32, 2))
		}, graph.ErrDType, []string{"Add(f32[2], i32[2]): mixed dtypes float32 and int32", "use ops.Cast"}},
		{"bool-arith", func(g *graph.Graph) *graph.Node {
			return ops.Mul(g.Input("a", tensor.Bool, 2), g.Input("b", tensor.Bool, 2))
		}, graph.ErrDType, []string{"Mul(b8[2], b8[2])", "numeric", "use ops.Cast"}},
		{"complex-less", func(g *graph.Graph) *graph.Node {
			return ops.Less(g.Input("a", tensor.Complex64, 2), g.Input("b", tensor.Complex64, 2))
		}, graph.ErrDType, []string{"Less(c64[2], c64[2])", "does not take complex numbers", "ops.Real"}},
		{"int-complex", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Int32, 2), g.Input("b", tensor.Complex64, 2))
		}, graph.ErrDType, []string{"Add(i32[2], c64[2]): mixed dtypes int32 and complex64", "use ops.Cast"}},
		{"int-exp", func(g *graph.Graph) *graph.Node {
			return ops.Exp(g.Input("a", tensor.Int64, 2))
		}, graph.ErrDType, []string{"Exp(i64[2]): requires a float or complex dtype", "use ops.Cast"}},
		{"half-arith", func(g *graph.Graph) *graph.Node {
			return ops.Neg(g.Input("a", tensor.Float16, 2))
		}, graph.ErrDType, []string{"Neg(f16[2])", "storage type"}},
		{"where-cond", func(g *graph.Graph) *graph.Node {
			x := g.Input("a", tensor.Float32, 2)
			return ops.Where(x, x, x)
		}, graph.ErrDType, []string{"Where(f32[2], f32[2], f32[2]): condition must be bool"}},
		{"scalar-int", func(g *graph.Graph) *graph.Node {
			return ops.Scalar(g.Input("a", tensor.Int32, 2), 0.5)
		}, graph.ErrDType, []string{"Scalar(i32[2]): 0.5 is not an integer"}},
		{"nil-operand", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2), nil)
		}, graph.ErrInvalid, []string{"Add(f32[2], nil): operand 1 is nil"}},
		{"other-graph", func(g *graph.Graph) *graph.Node {
			return ops.Add(g.Input("a", tensor.Float32, 2), graph.New().Input("b", tensor.Float32, 2))
		}, graph.ErrInvalid, []string{"Add(f32[2], f32[2]): operand 1 belongs to another graph"}},
		{"duplicate-name", func(g *graph.Graph) *graph.Node {
			g.Input("a", tensor.Float32, 2)
			return g.Input("a", tensor.Float32, 3)
		}, graph.ErrInvalid, []string{`Input(): name "a" is already used by Input f32[2]`}},
		{"nil-variable", func(g *graph.Graph) *graph.Node {
			return g.Variable("w", nil)
		}, graph.ErrInvalid, []string{`Variable(): "w": nil initial value`}},
		{"negative-dim", func(g *graph.Graph) *graph.Node {
			return g.Input("a", tensor.Float32, 2, -1)
		}, graph.ErrShape, []string{`Input(): "a": dimension 1 of shape [2,-1] is negative`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			n := c.build(g)
			if n.Valid() {
				t.Fatalf("built %s without an error", n)
			}
			err := g.Err()
			if err == nil {
				t.Fatalf("no error recorded on the graph")
			}
			if n.Err() == nil || n.Err().Error() != err.Error() {
				t.Errorf("the invalid node carries %v, the graph %v", n.Err(), err)
			}
			msg := err.Error()
			if !site.MatchString(msg) {
				t.Errorf("error %q does not start with this file's call site", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %q does not wrap %v", msg, c.kind)
			}
			var ge *graph.Error
			if !errors.As(err, &ge) || ge.Op == "" {
				t.Errorf("error is not a *graph.Error with an op")
			}
			// Sticky: later builders return invalid nodes, the first error stays.
			later := ops.Neg(g.Input("z", tensor.Float32, 1))
			if later.Valid() || g.Err() != err {
				t.Errorf("the error is not sticky")
			}
			// Methods of invalid nodes do not panic.
			_ = n.Shape().String() + n.Type() + n.String() + later.Name()
			// Other graphs are unaffected.
			h := graph.New()
			if y := ops.Add(h.Input("a", tensor.Float32, 2), h.Input("b", tensor.Float32, 2)); !y.Valid() || h.Err() != nil {
				t.Errorf("a fresh graph is affected: %v", h.Err())
			}
		})
	}
}

// builders calls, for every op of the table, its public builder with the
// given operands (as many as the op takes; two for a variadic op).
// TestNilEverywhere fails when a row of opdef.Defs() has no entry, so a new
// op cannot be left out.
var builders = map[string]func(xs ...*graph.Node) *graph.Node{
	"Add": bin(ops.Add), "Sub": bin(ops.Sub), "Mul": bin(ops.Mul), "Div": bin(ops.Div), "Pow": bin(ops.Pow),
	"Maximum": bin(ops.Maximum), "Minimum": bin(ops.Minimum),
	"Equal": bin(ops.Equal), "NotEqual": bin(ops.NotEqual), "Less": bin(ops.Less), "LessEqual": bin(ops.LessEqual),
	"Greater": bin(ops.Greater), "GreaterEqual": bin(ops.GreaterEqual), "And": bin(ops.And), "Or": bin(ops.Or),
	"Not": un(ops.Not), "Neg": un(ops.Neg), "Abs": un(ops.Abs), "Sign": un(ops.Sign), "Exp": un(ops.Exp),
	"Log": un(ops.Log), "Sqrt": un(ops.Sqrt), "Tanh": un(ops.Tanh), "Sigmoid": un(ops.Sigmoid), "Relu": un(ops.Relu),
	"Sin": un(ops.Sin), "Cos": un(ops.Cos), "StopGradient": un(ops.StopGradient),
	"Where":       func(xs ...*graph.Node) *graph.Node { return ops.Where(xs[0], xs[1], xs[2]) },
	"Cast":        func(xs ...*graph.Node) *graph.Node { return ops.Cast(xs[0], tensor.Float64) },
	"MatMul":      bin(ops.MatMul),
	"Sum":         func(xs ...*graph.Node) *graph.Node { return ops.Sum(xs[0]) },
	"Max":         func(xs ...*graph.Node) *graph.Node { return ops.Max(xs[0]) },
	"Min":         func(xs ...*graph.Node) *graph.Node { return ops.Min(xs[0]) },
	"ArgMax":      func(xs ...*graph.Node) *graph.Node { return ops.ArgMax(xs[0]) },
	"ArgMin":      func(xs ...*graph.Node) *graph.Node { return ops.ArgMin(xs[0]) },
	"Reshape":     func(xs ...*graph.Node) *graph.Node { return ops.Reshape(xs[0], 1) },
	"Transpose":   func(xs ...*graph.Node) *graph.Node { return ops.Transpose(xs[0]) },
	"BroadcastTo": func(xs ...*graph.Node) *graph.Node { return ops.BroadcastTo(xs[0], 2) },
	"Concat":      func(xs ...*graph.Node) *graph.Node { return ops.Concat(0, xs...) },
	"Slice":       func(xs ...*graph.Node) *graph.Node { return ops.Slice(xs[0], ops.R(0, 1)) },
	"Pad":         func(xs ...*graph.Node) *graph.Node { return ops.Pad(xs[0], ops.PadWidth{Low: 1}) },
	"FFT":         func(xs ...*graph.Node) *graph.Node { return ops.FFT(xs[0]) },
	"RFFT":        func(xs ...*graph.Node) *graph.Node { return ops.RFFT(xs[0]) },
	"IRFFT":       func(xs ...*graph.Node) *graph.Node { return ops.IRFFT(xs[0]) },
	// Repeat and SumRuns build their second operand (the offsets)
	// themselves; the primitives take it from Apply.
	"Repeat": func(xs ...*graph.Node) *graph.Node {
		return ops.Apply(ops.OpRepeat, opdef.RepeatAttr{Counts: []int{1, 2}}, xs...)
	},
	"SumRuns": func(xs ...*graph.Node) *graph.Node {
		return ops.Apply(ops.OpSumRuns, opdef.RepeatAttr{Counts: []int{1, 1}}, xs...)
	},
	// indexing (issue 14)
	"Gather":        func(xs ...*graph.Node) *graph.Node { return ops.Gather(xs[0], xs[1], 0) },
	"TakeAlongAxis": func(xs ...*graph.Node) *graph.Node { return ops.TakeAlongAxis(xs[0], xs[1], 0) },
	"Scatter":       func(xs ...*graph.Node) *graph.Node { return ops.Scatter(xs[0], xs[1], xs[2], 0) },
	"ScatterAdd":    func(xs ...*graph.Node) *graph.Node { return ops.ScatterAdd(xs[0], xs[1], xs[2], 0) },
	"IndexAdd":      func(xs ...*graph.Node) *graph.Node { return ops.IndexAdd(xs[0], xs[1], xs[2], 0) },
	"Iota":          func(xs ...*graph.Node) *graph.Node { return ops.Iota(nil, tensor.Int64, 0, 3) }, // no operands: a nil graph
	"Softmax":       func(xs ...*graph.Node) *graph.Node { return ops.Softmax(xs[0], 0) },
	"LogSoftmax":    func(xs ...*graph.Node) *graph.Node { return ops.LogSoftmax(xs[0], 0) },
	"CustomGrad": func(xs ...*graph.Node) *graph.Node {
		return ops.CustomGradient("c", xs[0], xs[1:], func(dy *graph.Node) []*graph.Node { return []*graph.Node{dy} })
	},
	// collectives (issue 18), for one rank
	"AllReduce":     func(xs ...*graph.Node) *graph.Node { return ops.AllReduce(xs[0], ops.ReduceSum, 1) },
	"AllGather":     func(xs ...*graph.Node) *graph.Node { return ops.AllGather(xs[0], 0, 1) },
	"ReduceScatter": func(xs ...*graph.Node) *graph.Node { return ops.ReduceScatter(xs[0], ops.ReduceSum, 0, 1) },
	"Broadcast":     func(xs ...*graph.Node) *graph.Node { return ops.Broadcast(xs[0], 0, 1) },
	"Reduce":        func(xs ...*graph.Node) *graph.Node { return ops.Reduce(xs[0], ops.ReduceSum, 0, 1) },
	// sorting (issue 14)
	"Sort": func(xs ...*graph.Node) *graph.Node { return ops.Sort(xs[0], 0, false) }, "ArgSort": func(xs ...*graph.Node) *graph.Node { return ops.ArgSort(xs[0], 0, true) },
	"TopK": func(xs ...*graph.Node) *graph.Node { _, i := ops.TopK(xs[0], 1, 0, true); return i }, "SearchSorted": bin(func(a, b *graph.Node) *graph.Node { return ops.SearchSorted(a, b, false) }),
	"Fused": func(xs ...*graph.Node) *graph.Node {
		return opdef.Fused(&opdef.FusedAttr{Domain: tensor.Shape{2}, Ops: []opdef.FusedOp{
			{Op: ops.OpAdd, Args: []int{-1, -2}, DType: tensor.Float32},
		}}, xs...)
	}, // random (issue 14): operand 0 is the key
	"RandomBits":      func(xs ...*graph.Node) *graph.Node { return ops.NextKey(xs[0]) },
	"RandomUniform":   func(xs ...*graph.Node) *graph.Node { return ops.RandomUniform(xs[0], tensor.Float32, 3) },
	"RandomNormal":    func(xs ...*graph.Node) *graph.Node { return ops.RandomNormal(xs[0], tensor.Float32, 3) },
	"RandomBernoulli": func(xs ...*graph.Node) *graph.Node { return ops.RandomBernoulli(xs[0], 0.5, 3) },
	// convolutions (issue 15)
	"Conv":          bin(func(a, b *graph.Node) *graph.Node { return ops.Conv(a, b) }),
	"ConvTranspose": bin(func(a, b *graph.Node) *graph.Node { return ops.ConvTranspose(a, b) }),
	"ConvFilterGrad": func(xs ...*graph.Node) *graph.Node {
		return ops.Apply(ops.OpConvFilterGrad, opdef.ConvAttr{Stride: []int{1}, Dilation: []int{1}, PadLo: []int{0}, PadHi: []int{0}, Groups: 1, Size: []int{1}}, xs...)
	},
	// complex numbers (issue 16)
	"Complex": bin(ops.Complex), "Real": un(ops.Real), "Imag": un(ops.Imag), "Conj": un(ops.Conj), "Angle": un(ops.Angle),
	// control flow (issue 22): the operands are the predicate or the
	// carries, then the operands or xs; the functions are trivial.
	"Cond": func(xs ...*graph.Node) *graph.Node {
		same := func(p []*graph.Node) []*graph.Node { return p }
		return ops.Cond(xs[0], same, same, xs[1:]...)[0]
	},
	"While": func(xs ...*graph.Node) *graph.Node {
		return ops.While(func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), ops.Scalar(ops.Sum(c[0]), 3)) },
			func(c []*graph.Node) []*graph.Node { return c }, xs...)[0]
	},
	"Scan": func(xs ...*graph.Node) *graph.Node {
		c, _ := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, x }, xs[:1], xs[1:], -1)
		return c[0]
	},
	"TupleGet": func(xs ...*graph.Node) *graph.Node {
		return ops.Apply(ops.OpTupleGet, opdef.TupleAttr{DType: tensor.Float32, Shape: tensor.Shape{1}}, xs...)
	},
}

// composites are the builders that are not rows of the table, with the
// number of operands they take.
var composites = map[string]struct {
	n int
	f func(xs ...*graph.Node) *graph.Node
}{
	"Square":       {1, un(ops.Square)},
	"ZerosLike":    {1, un(ops.ZerosLike)},
	"OnesLike":     {1, un(ops.OnesLike)},
	"Scalar":       {1, func(xs ...*graph.Node) *graph.Node { return ops.Scalar(xs[0], 1) }},
	"Mean":         {1, func(xs ...*graph.Node) *graph.Node { return ops.Mean(xs[0]) }},
	"MeanKeepDims": {1, func(xs ...*graph.Node) *graph.Node { return ops.MeanKeepDims(xs[0], 0) }},
	"SumKeepDims":  {1, func(xs ...*graph.Node) *graph.Node { return ops.SumKeepDims(xs[0], 0) }},
	"MaxKeepDims":  {1, func(xs ...*graph.Node) *graph.Node { return ops.MaxKeepDims(xs[0], 0) }},
	"MinKeepDims":  {1, func(xs ...*graph.Node) *graph.Node { return ops.MinKeepDims(xs[0], 0) }},
	"SumTo":        {1, func(xs ...*graph.Node) *graph.Node { return ops.SumTo(xs[0], tensor.Shape{1}) }},
	"LogSumExp":    {1, func(xs ...*graph.Node) *graph.Node { return ops.LogSumExp(xs[0]) }},
	"ExpandDims":   {1, func(xs ...*graph.Node) *graph.Node { return ops.ExpandDims(xs[0], 0) }},
	"Squeeze":      {1, func(xs ...*graph.Node) *graph.Node { return ops.Squeeze(xs[0]) }},
	"OneHot":       {1, func(xs ...*graph.Node) *graph.Node { return ops.OneHot(xs[0], 3, tensor.Float32) }},
	"MatMulT":      {2, func(xs ...*graph.Node) *graph.Node { return ops.MatMulT(xs[0], xs[1], true, false) }},
	"SoftmaxCrossEntropy": {2, func(xs ...*graph.Node) *graph.Node {
		return ops.SoftmaxCrossEntropy(xs[0], xs[1], -1)
	}},
	"SparseSoftmaxCrossEntropy": {2, func(xs ...*graph.Node) *graph.Node { return ops.SparseSoftmaxCrossEntropy(xs[0], xs[1]) }},
	"Apply":                     {2, func(xs ...*graph.Node) *graph.Node { return ops.Apply(ops.OpAdd, nil, xs...) }},
	"Clip":                      {3, func(xs ...*graph.Node) *graph.Node { return ops.Clip(xs[0], xs[1], xs[2]) }},
	"LeakyRelu":                 {1, func(xs ...*graph.Node) *graph.Node { return ops.LeakyRelu(xs[0], 0.01) }},
	"Elu":                       {1, func(xs ...*graph.Node) *graph.Node { return ops.Elu(xs[0], 1) }},
	"Repeat-builder":            {1, func(xs ...*graph.Node) *graph.Node { return ops.Repeat(xs[0], []int{1, 2}, 0) }},
	"SumRuns-builder":           {1, func(xs ...*graph.Node) *graph.Node { return ops.SumRuns(xs[0], []int{1, 1}, 0) }},
	"SegmentSum":                {2, func(xs ...*graph.Node) *graph.Node { return ops.SegmentSum(xs[0], xs[1], 2) }},
	"Tril":                      {1, func(xs ...*graph.Node) *graph.Node { return ops.Tril(xs[0], 0) }},
	"Triu":                      {1, func(xs ...*graph.Node) *graph.Node { return ops.Triu(xs[0], 0) }},
	"Stack":                     {2, func(xs ...*graph.Node) *graph.Node { return ops.Stack(0, xs...) }},
	"Split":                     {1, func(xs ...*graph.Node) *graph.Node { return ops.Split(xs[0], 2, 0)[1] }},
	"ArraySplit":                {1, func(xs ...*graph.Node) *graph.Node { return ops.ArraySplit(xs[0], 2, 0)[1] }},
	"SplitAt":                   {1, func(xs ...*graph.Node) *graph.Node { return ops.SplitAt(xs[0], []int{1}, 0)[1] }},
	"Unstack":                   {1, func(xs ...*graph.Node) *graph.Node { return ops.Unstack(xs[0], 0)[0] }},
	"Flip":                      {1, func(xs ...*graph.Node) *graph.Node { return ops.Flip(xs[0]) }},
	"Roll":                      {1, func(xs ...*graph.Node) *graph.Node { return ops.Roll(xs[0], 1) }},
	"RollAxes":                  {1, func(xs ...*graph.Node) *graph.Node { return ops.RollAxes(xs[0], []int{1}, []int{0}) }},
	"Tile":                      {1, func(xs ...*graph.Node) *graph.Node { return ops.Tile(xs[0], 2) }},
	"MoveAxis":                  {1, func(xs ...*graph.Node) *graph.Node { return ops.MoveAxis(xs[0], 0, -1) }},
	"MoveAxes":                  {1, func(xs ...*graph.Node) *graph.Node { return ops.MoveAxes(xs[0], []int{0}, []int{-1}) }},
	"Diagonal":                  {1, func(xs ...*graph.Node) *graph.Node { return ops.Diagonal(xs[0], 0, 0, 1) }},
	"Trace":                     {1, func(xs ...*graph.Node) *graph.Node { return ops.Trace(xs[0], 0, 0, 1) }},
	"PadConstant":               {1, func(xs ...*graph.Node) *graph.Node { return ops.PadConstant(xs[0], 1, ops.PadWidth{Low: 1}) }},
	"PadReflect":                {1, func(xs ...*graph.Node) *graph.Node { return ops.PadReflect(xs[0], ops.PadWidth{Low: 1}) }},
	"PadEdge":                   {1, func(xs ...*graph.Node) *graph.Node { return ops.PadEdge(xs[0], ops.PadWidth{Low: 1}) }},
	"PadWrap":                   {1, func(xs ...*graph.Node) *graph.Node { return ops.PadWrap(xs[0], ops.PadWidth{Low: 1}) }}, "FoldIn": {1, func(xs ...*graph.Node) *graph.Node { return ops.FoldIn(xs[0], 1) }},
	"Dropout":       {2, func(xs ...*graph.Node) *graph.Node { return ops.Dropout(xs[0], xs[1], 0.5) }},
	"Einsum":        {2, func(xs ...*graph.Node) *graph.Node { return ops.Einsum("i,i", xs...) }},
	"ConvBias":      {3, func(xs ...*graph.Node) *graph.Node { return ops.ConvBias(xs[0], xs[1], xs[2]) }},
	"ComplexScalar": {1, func(xs ...*graph.Node) *graph.Node { return ops.ComplexScalar(xs[0], 1i) }},
	"FFTConvolve":   {2, func(xs ...*graph.Node) *graph.Node { return ops.FFTConvolve(xs[0], xs[1], "full") }},
	"FFTShift":      {1, func(xs ...*graph.Node) *graph.Node { return ops.FFTShift(xs[0]) }},
	// control flow (issue 22)
	"WhileMax": {2, func(xs ...*graph.Node) *graph.Node {
		return ops.WhileMax(4, func(c []*graph.Node) *graph.Node { return ops.Less(ops.Sum(c[0]), ops.Scalar(ops.Sum(c[0]), 3)) },
			func(c []*graph.Node) []*graph.Node { return c }, xs...)[0]
	}},
	"Scan-ys": {2, func(xs ...*graph.Node) *graph.Node {
		_, ys := ops.Scan(func(c, x []*graph.Node) ([]*graph.Node, []*graph.Node) { return c, x }, xs[:1], xs[1:], 2, ops.ScanReverse(), ops.ScanRemat())
		return ys[0]
	}},
	"TupleGets": {1, func(xs ...*graph.Node) *graph.Node { return ops.TupleGets(xs[0])[0] }},
}

func un(f func(*graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
	return func(xs ...*graph.Node) *graph.Node { return f(xs[0]) }
}

func bin(f func(a, b *graph.Node) *graph.Node) func(xs ...*graph.Node) *graph.Node {
	return func(xs ...*graph.Node) *graph.Node { return f(xs[0], xs[1]) }
}

// TestNilEverywhere feeds nil and invalid nodes to every builder, the
// table's (every row of opdef.Defs()) and the composites: each returns an
// invalid node carrying an error, without panicking, and an invalid
// operand next to a valid one records the error on the valid one's graph.
func TestNilEverywhere(t *testing.T) {
	type entry struct {
		n int
		f func(xs ...*graph.Node) *graph.Node
	}
	all := map[string]entry{}
	for _, d := range opdef.Defs() {
		f, ok := builders[d.Name]
		if !ok && d.Kind == opdef.Elementwise && d.Arity > 0 && d.Ref == nil {
			// A plain elementwise op's builder is Apply(op, nil, operands...)
			// (binary ops promote first, after the same operand checks).
			op := d.Op
			f, ok = func(xs ...*graph.Node) *graph.Node { return ops.Apply(op, nil, xs...) }, true
		}
		if !ok {
			t.Errorf("op %s has no entry in builders: add a call of its builder", d.Name)
			continue
		}
		n := d.Arity
		if n < 0 {
			n = 2
		}
		all[d.Name] = entry{n, f}
	}
	for name := range builders {
		if opdef.ByName(name) == nil {
			t.Errorf("builders has an entry for %s, which is not an op", name)
		}
	}
	for name, c := range composites {
		all[name] = entry{c.n, c.f}
	}
	detached := ops.Neg(nil) // an invalid node of no graph
	for name, e := range all {
		for _, in := range []*graph.Node{nil, detached} {
			xs := make([]*graph.Node, e.n)
			for i := range xs {
				xs[i] = in
			}
			if out := e.f(xs...); out.Valid() || out.Err() == nil {
				t.Errorf("%s(%v...) = %v, want an invalid node with an error", name, in, out)
			}
		}
		// One valid operand (in each position), the others invalid.
		for pos := 0; pos < e.n && e.n > 1; pos++ {
			g := graph.New()
			xs := make([]*graph.Node, e.n)
			for i := range xs {
				xs[i] = detached
			}
			xs[pos] = g.Input("x", tensor.Float32, 2)
			if out := e.f(xs...); out.Valid() || g.Err() == nil {
				t.Errorf("%s with operand %d valid, the others invalid = %v, graph error %v: want the error recorded", name, pos, out, g.Err())
			}
		}
	}
	if out := ops.Concat(0); out.Valid() {
		t.Errorf("Concat() succeeded")
	}
	if out := ops.Full(nil, tensor.Float32, 1, 2); out.Valid() || !errors.Is(out.Err(), graph.ErrInvalid) {
		t.Errorf("Full(nil graph) = %v, %v", out, out.Err())
	}
}

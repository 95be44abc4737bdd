package ops_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// FuzzBuilders drives the public builders with a program decoded from the
// fuzzer's bytes: inputs of random dtypes and shapes (huge dimensions
// included), then up to maxSteps builder calls with random operands,
// axes, widths, steps, shapes, class counts and attributes (ops.Apply
// with hand-made attributes, gradients of what was built). Whatever the
// input, nothing panics, building allocates less than allocBase bytes
// plus allocPerNode per node built (gradients of gradients legitimately
// grow the graph; what must never happen is an allocation in proportion
// to the size of a value, like OneHot's 24 GB), every node built passes
// graph.Verify, and a build error is a *graph.Error naming this file's
// call site.
//
// Its seeds (f.Add below, including issue 12's reproducers, and
// testdata/fuzz/FuzzBuilders) run as an ordinary test under go test; run
// the fuzzer with
//
//	go test -run '^$' -fuzz FuzzBuilders -fuzztime 3m ./ops/
func FuzzBuilders(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var g *graph.Graph
		var err error
		alloc := allocated(func() { g, err = buildProgram(data) })
		if err != nil {
			t.Fatal(err)
		}
		if limit := uint64(allocBase + allocPerNode*g.Len()); alloc > limit {
			t.Errorf("building %d nodes allocated %d bytes, more than %d", g.Len(), alloc, limit)
		}
		if err := graph.Verify(g); err != nil {
			t.Errorf("a built node fails Verify: %v\n%s", err, graph.Format(g))
		}
		if err := g.Err(); err != nil {
			var ge *graph.Error
			if !errors.As(err, &ge) || !strings.HasPrefix(ge.Site, "fuzz_test.go:") {
				t.Errorf("build error %q is not a *graph.Error naming this file", err)
			}
		}
		_ = graph.Format(g)
	})
}

const (
	maxSteps     = 24
	maxNodes     = 4096    // no more steps once the graph is this large
	allocBase    = 1 << 20 // bytes one input's graph may allocate ...
	allocPerNode = 2 << 10 // ... plus this per node built (about 1 KB is usual)
)

// fuzzReader decodes the fuzzer's bytes; past the end it reads zeros.
type fuzzReader struct{ data []byte }

func (r *fuzzReader) byte() byte {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b
}

// specialInts are the integers most likely to break arithmetic on shapes.
var specialInts = []int{
	math.MaxInt, math.MinInt, math.MaxInt - 1, math.MaxInt / 2, math.MaxInt/2 + 1,
	1 << 31, 1<<31 - 1, 1<<31 + 7, 1 << 32, 1 << 40, 1 << 61, 1 << 62, 1<<62 + 1,
	-1 << 31, -1 << 62, ops.End,
}

// int reads an integer: mostly small (-3..12), sometimes one of
// specialInts, sometimes 8 raw bytes (tag 0xff).
func (r *fuzzReader) int() int {
	b := r.byte()
	switch {
	case b == 0xff:
		var buf [8]byte
		for i := range buf {
			buf[i] = r.byte()
		}
		return int(int64(binary.LittleEndian.Uint64(buf[:])))
	case b >= 0xf0:
		return specialInts[int(b-0xf0)%len(specialInts)]
	}
	return int(b%16) - 3
}

// dim reads a dimension: small non-negative values mostly.
func (r *fuzzReader) dim() int {
	v := r.int()
	if v >= -3 && v < 0 {
		return v + 3 // keep small ones non-negative: 0..2
	}
	return v
}

func (r *fuzzReader) dims() []int {
	n := int(r.byte() % 6)
	out := make([]int, n)
	for i := range out {
		out[i] = r.dim()
	}
	return out
}

func (r *fuzzReader) ints() []int {
	n := int(r.byte() % 6)
	out := make([]int, n)
	for i := range out {
		out[i] = r.int()
	}
	return out
}

// dtype reads a dtype: one of the seven valid ones mostly, Invalid or an
// unknown code sometimes.
func (r *fuzzReader) dtype() tensor.DType {
	b := r.byte()
	switch {
	case b == 0xfe:
		return tensor.DType(99)
	case b%8 == 0 && b >= 0x80:
		return tensor.Invalid
	}
	return tensor.DTypes()[int(b)%len(tensor.DTypes())]
}

func (r *fuzzReader) node(nodes []*graph.Node) *graph.Node {
	b := r.byte()
	if b == 0xfe {
		return nil
	}
	return nodes[int(b)%len(nodes)]
}

// buildProgram decodes and builds one program, returning its graph. It
// returns an error only for a panic, which it recovers to report the step.
func buildProgram(data []byte) (g *graph.Graph, err error) {
	r := &fuzzReader{data: data}
	g = graph.New()
	var nodes []*graph.Node
	step := "inputs"
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in %s: %v\n%s", step, p, graph.Format(g))
		}
	}()
	nIn := 1 + int(r.byte()%3)
	for i := range nIn {
		x := g.Input(string(rune('a'+i)), r.dtype(), r.dims()...)
		if !x.Valid() {
			return g, nil
		}
		nodes = append(nodes, x)
	}
	for k := 0; k < maxSteps && len(r.data) > 0 && g.Err() == nil && g.Len() < maxNodes; k++ {
		op := r.byte() % numFuzzOps
		step = fuzzOpNames[op]
		out := fuzzOp(op, r, g, nodes)
		if out.Valid() {
			nodes = append(nodes, out)
		}
	}
	return g, nil
}

const numFuzzOps = 24

var fuzzOpNames = [numFuzzOps]string{
	"Reshape", "Transpose", "BroadcastTo", "Concat", "Slice", "Pad", "Squeeze", "ExpandDims",
	"reduce", "softmax", "MatMul", "OneHot", "binary", "unary", "Cast", "Where",
	"SumTo", "Scalar", "Full", "cross-entropy", "Grad", "Apply", "Input", "Const",
}

func fuzzOp(op byte, r *fuzzReader, g *graph.Graph, nodes []*graph.Node) *graph.Node {
	x := func() *graph.Node { return r.node(nodes) }
	switch op {
	case 0:
		return ops.Reshape(x(), r.ints()...)
	case 1:
		return ops.Transpose(x(), r.ints()...)
	case 2:
		return ops.BroadcastTo(x(), r.dims()...)
	case 3:
		axis := r.int()
		xs := make([]*graph.Node, 1+r.byte()%4)
		for i := range xs {
			xs[i] = x()
		}
		return ops.Concat(axis, xs...)
	case 4:
		n := x()
		rs := make([]ops.Range, r.byte()%5)
		for i := range rs {
			rs[i] = ops.Range{Start: r.int(), Stop: r.int(), Step: r.int()}
		}
		return ops.Slice(n, rs...)
	case 5:
		n := x()
		ws := make([]ops.PadWidth, r.byte()%5)
		for i := range ws {
			ws[i] = ops.PadWidth{Low: r.int(), High: r.int(), Interior: r.int()}
		}
		return ops.Pad(n, ws...)
	case 6:
		return ops.Squeeze(x(), r.ints()...)
	case 7:
		return ops.ExpandDims(x(), r.int())
	case 8:
		fs := []func(*graph.Node, ...int) *graph.Node{ops.Sum, ops.SumKeepDims, ops.Max, ops.MaxKeepDims, ops.Min,
			ops.MinKeepDims, ops.ArgMax, ops.ArgMin, ops.Mean, ops.MeanKeepDims, ops.LogSumExp}
		f := fs[int(r.byte())%len(fs)]
		return f(x(), r.ints()...)
	case 9:
		if r.byte()%2 == 0 {
			return ops.Softmax(x(), r.int())
		}
		return ops.LogSoftmax(x(), r.int())
	case 10:
		b := r.byte()
		if b%2 == 0 {
			return ops.MatMul(x(), x())
		}
		return ops.MatMulT(x(), x(), b&2 != 0, b&4 != 0)
	case 11:
		return ops.OneHot(x(), r.int(), r.dtype())
	case 12:
		fs := []func(a, b *graph.Node) *graph.Node{ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Pow, ops.Maximum, ops.Minimum,
			ops.Equal, ops.NotEqual, ops.Less, ops.LessEqual, ops.Greater, ops.GreaterEqual, ops.And, ops.Or}
		return fs[int(r.byte())%len(fs)](x(), x())
	case 13:
		fs := []func(*graph.Node) *graph.Node{ops.Neg, ops.Abs, ops.Sign, ops.Exp, ops.Log, ops.Sqrt, ops.Tanh, ops.Sigmoid,
			ops.Relu, ops.Sin, ops.Cos, ops.Not, ops.StopGradient, ops.Square, ops.ZerosLike, ops.OnesLike}
		return fs[int(r.byte())%len(fs)](x())
	case 14:
		return ops.Cast(x(), r.dtype())
	case 15:
		return ops.Where(x(), x(), x())
	case 16:
		return ops.SumTo(x(), r.dims())
	case 17:
		return ops.Scalar(x(), float64(r.int())/2)
	case 18:
		return ops.Full(g, r.dtype(), float64(r.int())/2, r.dims()...)
	case 19:
		if r.byte()%2 == 0 {
			return ops.SoftmaxCrossEntropy(x(), x(), r.int())
		}
		return ops.SparseSoftmaxCrossEntropy(x(), x())
	case 20:
		y := x()
		if !y.Valid() || !y.DType().IsFloat() || y.DType().IsStorage() {
			return nil
		}
		var wrt []*graph.Node
		for _, n := range nodes {
			if n.Op() == graph.OpInput && n.DType() == y.DType() {
				wrt = append(wrt, n)
			}
		}
		gs := autodiff.Grad(ops.Sum(y), wrt...)
		if len(gs) == 0 {
			return nil
		}
		return gs[0]
	case 21:
		defs := opdef.Defs()
		d := defs[int(r.byte())%len(defs)]
		attr := fuzzAttr(r)
		xs := make([]*graph.Node, r.byte()%4)
		for i := range xs {
			xs[i] = x()
		}
		return ops.Apply(d.Op, attr, xs...)
	case 22:
		return g.Input(string(rune('A'+g.Len()%26))+string(rune('a'+g.Len()/26%26)), r.dtype(), r.dims()...)
	case 23:
		dt, shape := r.dtype(), r.dims()
		if tensor.Shape(shape).Size() < 0 || tensor.Shape(shape).Size() > 64 {
			return nil
		}
		t, err := tensor.Make(dt, shape...)
		if err != nil {
			return nil
		}
		for i := range t.Size() {
			t.SetFloat64(i, float64(r.int()))
		}
		return g.Const(t)
	}
	return nil
}

// fuzzAttr reads an attribute of any of the table's types (and some that
// are none of them), with fuzzed contents.
func fuzzAttr(r *fuzzReader) graph.Attr {
	switch r.byte() % 14 {
	case 0:
		return nil
	case 1:
		return opdef.AxesAttr{Axes: r.ints(), KeepDims: r.byte()%2 == 0}
	case 2:
		return opdef.AxisAttr{Axis: r.int()}
	case 3:
		return opdef.ShapeAttr{Shape: r.ints()}
	case 4:
		return opdef.PermAttr{Perm: r.ints()}
	case 5:
		return opdef.CastAttr{To: r.dtype()}
	case 6:
		rs := make([]ops.Range, r.byte()%4)
		for i := range rs {
			rs[i] = ops.Range{Start: r.int(), Stop: r.int(), Step: r.int()}
		}
		return opdef.SliceAttr{Ranges: rs}
	case 7:
		ws := make([]ops.PadWidth, r.byte()%4)
		for i := range ws {
			ws[i] = ops.PadWidth{Low: r.int(), High: r.int(), Interior: r.int()}
		}
		return opdef.PadAttr{Widths: ws}
	case 8:
		b := r.byte()
		return opdef.MatMulAttr{TransA: b&1 != 0, TransB: b&2 != 0}
	case 9:
		if r.byte()%2 == 0 {
			return opdef.CustomAttr{Name: "fuzz"}
		}
		return opdef.CustomAttr{Name: "fuzz", Rule: func(dy *graph.Node) []*graph.Node { return nil }}
	case 10:
		return (*opdef.FusedAttr)(nil)
	case 11, 12:
		a := &opdef.FusedAttr{Domain: r.dims()}
		defs := opdef.Defs()
		for range r.byte() % 4 {
			d := defs[int(r.byte())%len(defs)]
			o := opdef.FusedOp{Op: d.Op, Args: r.ints(), DType: r.dtype()}
			if r.byte()%3 == 0 {
				o.Attr = opdef.CastAttr{To: r.dtype()}
			}
			a.Ops = append(a.Ops, o)
		}
		if b := r.byte(); b%3 == 0 {
			a.Reduce = &opdef.FusedReduce{Op: defs[int(b)%len(defs)].Op, Axes: r.ints(), KeepDims: b&8 != 0}
		}
		return a
	}
	return fuzzUserAttr{}
}

// fuzzUserAttr is an attribute type the table does not know.
type fuzzUserAttr struct{}

func (fuzzUserAttr) String() string { return "user" }

// seed encodes a program in FuzzBuilders' format, for readable seeds.
type seed []byte

func (s seed) op(name string) seed {
	for i, n := range fuzzOpNames {
		if n == name {
			return append(s, byte(i))
		}
	}
	panic("no fuzz op " + name)
}

func (s seed) b(bs ...byte) seed { return append(s, bs...) }

// int encodes v for fuzzReader.int: small values as one byte, others as
// 0xff and 8 bytes.
func (s seed) int(vs ...int) seed {
	for _, v := range vs {
		if v >= -3 && v <= 12 {
			s = append(s, byte(v+3))
			continue
		}
		s = append(s, 0xff)
		s = binary.LittleEndian.AppendUint64(s, uint64(v))
	}
	return s
}

// dims encodes a dimension list (at most 5): its length, then each.
func (s seed) dims(ds ...int) seed { return s.b(byte(len(ds))).int(ds...) }

// dt encodes a valid dtype.
func (s seed) dt(d tensor.DType) seed {
	for i, v := range tensor.DTypes() {
		if v == d {
			return append(s, byte(i))
		}
	}
	panic("bad dtype")
}

// inputs starts a program with inputs of the given types.
func inputs(types ...struct {
	dt    tensor.DType
	shape []int
}) seed {
	s := seed{byte(len(types) - 1)}
	for _, t := range types {
		s = s.dt(t.dt).dims(t.shape...)
	}
	return s
}

func in(dt tensor.DType, shape ...int) struct {
	dt    tensor.DType
	shape []int
} {
	return struct {
		dt    tensor.DType
		shape []int
	}{dt, shape}
}

// fuzzSeeds are the seed programs: issue 12's reproducers first, then one
// ordinary use of each builder.
func fuzzSeeds() [][]byte {
	f32, i64, b8 := tensor.Float32, tensor.Int64, tensor.Bool
	seeds := []seed{
		// Defect 4: OneHot(a, 1<<62, f32) panicked, OneHot(a, 1<<31, f32) allocated 24 GB.
		inputs(in(i64, 3)).op("OneHot").b(0).int(1 << 62).dt(f32),
		inputs(in(i64, 3)).op("OneHot").b(0).int(1 << 31).dt(f32),
		// Defect 6: Pad by MaxInt on each side built f32[1]; Interior 1<<62 built f32[5].
		inputs(in(f32, 3)).op("Pad").b(0, 1).int(math.MaxInt, math.MaxInt, 0),
		inputs(in(f32, 3)).op("Pad").b(0, 1).int(0, 0, 1<<62),
		// Defect 7: Slice(x, RS(0, End, MaxInt)) on f32[5] and f32[2].
		inputs(in(f32, 5)).op("Slice").b(0, 1).int(0, ops.End, math.MaxInt),
		inputs(in(f32, 2)).op("Slice").b(0, 1).int(0, ops.End, math.MaxInt),
		// Defect 1's graphs: a scalar broadcast to 1<<50 and to 1<<62 elements.
		inputs(in(f32)).op("BroadcastTo").b(0).dims(1<<50).op("softmax").b(0, 1).int(0).op("reduce").b(0, 2).dims(),
		inputs(in(f32)).op("BroadcastTo").b(0).dims(1 << 62),
		// Defect 12: Apply(Fused) with an op lacking arguments; Apply(CustomGrad, nil, x) then Grad.
		inputs(in(f32, 2, 2)).op("Apply").b(byte(opdef.OpFused-graph.FirstOp)).b(11).dims(2, 2).b(1).b(byte(ops.OpAdd-graph.FirstOp)).b(0).dt(f32).b(1).b(1).b(1, 0),
		inputs(in(f32, 2)).op("Apply").b(byte(ops.OpCustomGrad-graph.FirstOp)).b(0).b(1, 0).op("Grad").b(1),
		// Shape-rule overflow: Concat of 4 b8[1<<62], Reshape of b8[0] to [0,1<<62,4], MatMul's batch.
		inputs(in(b8, 1<<62)).op("Concat").int(0).b(3).b(0, 0, 0, 0),
		inputs(in(b8, 0)).op("Reshape").b(0).b(3).int(0, 1<<62, 4),
		inputs(in(f32, 1<<31, 1, 0, 3), in(f32, 1, 1<<31, 3, 0)).op("MatMul").b(0, 0, 1),
		// Defects 10 and 11: LogSumExp and the cross-entropies (gradients included).
		inputs(in(f32, 2, 3), in(i64, 2)).op("reduce").b(10, 0, 1).int(1).op("Grad").b(2),
		inputs(in(f32, 2, 3), in(i64, 2)).op("cross-entropy").b(1, 0, 1).op("Grad").b(2),
		inputs(in(f32, 2, 3), in(f32, 2, 3)).op("cross-entropy").b(0, 0, 1).int(-1).op("Grad").b(2),
		// Ordinary uses.
		inputs(in(f32, 2, 3, 4)).op("Reshape").b(0, 2).int(-1, 4).op("Transpose").b(1, 0).op("Grad").b(2),
		inputs(in(f32, 2, 3)).op("Transpose").b(0, 2).int(1, 0),
		inputs(in(f32, 3)).op("BroadcastTo").b(0).dims(2, 3).op("Squeeze").b(1, 0).op("ExpandDims").b(1).int(0),
		inputs(in(f32, 2, 3), in(f32, 2, 3)).op("Concat").int(1).b(1, 0, 1).op("Grad").b(2),
		inputs(in(f32, 4, 5)).op("Slice").b(0, 2).int(1, 3, 1, 0, ops.End, 2).op("Pad").b(1, 2).int(1, 0, 1, 0, 2, 0).op("Grad").b(2),
		inputs(in(f32, 2, 3, 4)).op("reduce").b(2, 0, 2).int(0, 2).op("Grad").b(1),
		inputs(in(f32, 2, 3)).op("softmax").b(0, 0).int(-1).op("Grad").b(1),
		inputs(in(f32, 2, 3), in(f32, 3, 4)).op("MatMul").b(0, 0, 1).op("Grad").b(2),
		inputs(in(f32, 3, 2), in(f32, 4, 3)).op("MatMul").b(7, 0, 1),
		inputs(in(i64, 4)).op("OneHot").b(0).int(10).dt(f32),
		inputs(in(f32, 2, 1), in(f32, 3)).op("binary").b(0, 0, 1).op("unary").b(3, 2).op("Grad").b(3),
		inputs(in(f32, 2), in(b8, 2)).op("Cast").b(0).dt(tensor.Float64).op("Where").b(1, 0, 0),
		inputs(in(f32, 2, 3)).op("SumTo").b(0).dims(1, 3).op("Scalar").b(0).int(4),
		inputs(in(f32)).op("Full").dt(f32).int(2).dims(2, 2).op("Const").dt(i64).dims(2).int(1, 2).op("Input").dt(f32).dims(3),
	}
	out := make([][]byte, len(seeds))
	for i, s := range seeds {
		out[i] = s
	}
	return out
}

package exectest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Rand returns a tensor of dtype dt and the given shape with elements
// drawn uniformly from [lo, hi) by a PCG generator seeded with seed
// (integers are rounded down, bools are v >= (lo+hi)/2).
func Rand(dt tensor.DType, shape tensor.Shape, lo, hi float64, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x10011))
	vals := make([]float64, shape.Size())
	for i := range vals {
		v := lo + (hi-lo)*r.Float64()
		switch {
		case dt.IsInt():
			v = math.Floor(v)
		case dt == tensor.Bool:
			v = opdef.Bool(v >= (lo+hi)/2)
		}
		vals[i] = v
	}
	if shape == nil {
		shape = tensor.Shape{} // a scalar, not a 1-D tensor
	}
	t, err := tensor.FromFloat64s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Tensor builds a tensor from float64 values (a nil shape is 1-D),
// panicking on a mismatch: for building cases.
func Tensor(dt tensor.DType, vals []float64, shape ...int) *tensor.Tensor {
	t, err := tensor.FromFloat64s(dt, vals, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// Inputs declares one Input per tensor (x0, x1, ...) and returns them
// with the feeds.
func Inputs(g *graph.Graph, ts ...*tensor.Tensor) ([]*graph.Node, exec.Feeds) {
	feeds := exec.Feeds{}
	ns := make([]*graph.Node, len(ts))
	for i, t := range ts {
		ns[i] = g.Input(fmt.Sprintf("x%d", i), t.DType(), t.Shape()...)
		feeds[ns[i]] = t
	}
	return ns, feeds
}

// Cases returns the conformance cases.
func Cases() []Case {
	var cs []Case
	cs = append(cs, goldenCases()...)
	cs = append(cs, mathGoldenCases()...)
	cs = append(cs, binaryCases()...)
	cs = append(cs, unaryCases()...)
	cs = append(cs, compareCases()...)
	cs = append(cs, otherElementwiseCases()...)
	cs = append(cs, matmulCases()...)
	cs = append(cs, reduceCases()...)
	cs = append(cs, movementCases()...)
	cs = append(cs, creationMovementCases()...)
	cs = append(cs, softmaxCases()...)
	cs = append(cs, scanCases()...)
	cs = append(cs, smallIntScanCases()...)
	cs = append(cs, randomCases()...) // random (issue 14)
	cs = append(cs, sortCases()...)   // sorting (issue 14)
	cs = append(cs, indexCases()...)
	cs = append(cs, convCases()...)    // convolutions (issue 15)
	cs = append(cs, poolCases()...)    // pooling (issue 15)
	cs = append(cs, complexCases()...) // complex numbers (issue 16)
	cs = append(cs, fftCases()...)     // Fourier transforms (issue 16)
	cs = append(cs, linalgCases()...)  // linear algebra (issue 16)
	cs = append(cs, controlCases()...) // control flow (issue 22)
	cs = append(cs, controlGradCases()...)
	cs = append(cs, collectiveCases()...) // collectives (issue 18)
	return cs
}

var floatTypes = []tensor.DType{tensor.Float32, tensor.Float64}

// shapePairs are the broadcasting patterns every binary op runs on.
var shapePairs = []struct {
	name string
	a, b tensor.Shape
}{
	{"same", tensor.Shape{2, 3}, tensor.Shape{2, 3}},
	{"row", tensor.Shape{2, 3}, tensor.Shape{3}},
	{"outer", tensor.Shape{4, 1}, tensor.Shape{1, 5}},
	{"rank0", tensor.Shape{}, tensor.Shape{}},
	{"scalar-left", tensor.Shape{}, tensor.Shape{3, 2}},
	{"rank4", tensor.Shape{2, 3, 4, 5}, tensor.Shape{3, 1, 5}},
	{"empty", tensor.Shape{0, 3}, tensor.Shape{3}},
	{"large", tensor.Shape{300, 257}, tensor.Shape{257}},
	{"large-col", tensor.Shape{300, 1}, tensor.Shape{300, 257}},
}

// The elementwise ops' cases are made from their declarations: every
// elementwise op without an attribute is run on every dtype its dtype rule
// admits, with operands drawn from its declared test domain
// (opdef.Def.Domain), so a new op needs no case written here.

// computeTypes are the dtypes the generated cases try: every compute
// dtype.
var computeTypes = []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Bool}

// intTypes are the integer dtypes.
var intTypes = []tensor.DType{tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8}

// small reports whether dt is a small integer dtype (int8, int16, uint8).
// Their kernels differ from int32's and int64's only in the element type,
// not in the iteration (broadcasting, strides, blocks), so they run on a
// few of the shapes the other dtypes run on: the suite stays fast enough
// for the CUDA emulator.
func small(dt tensor.DType) bool { return dt.IsInt() && dt.Size() < 4 }

// clampTo narrows [lo, hi) to what integer dtype dt holds (Uint8: no
// negative values), so that sampling draws values of the dtype rather
// than saturating; other dtypes keep it.
func clampTo(dt tensor.DType, lo, hi float64) (float64, float64) {
	if !dt.IsInt() {
		return lo, hi
	}
	l, h := dt.IntRange()
	lo, hi = max(lo, float64(l)), min(hi, float64(h)+1)
	if hi <= lo { // nothing of the range is in dt: its lowest values
		hi = lo + 1
	}
	return lo, hi
}

// resultOf applies d's dtype rule to arity operands of dtype dt (no
// attribute).
func resultOf(d *opdef.Def, dt tensor.DType) (tensor.DType, bool) {
	in := make([]tensor.DType, d.Arity)
	for i := range in {
		in[i] = dt
	}
	out, err := d.DType(in, nil)
	return out, err == nil
}

// elementwiseDefs returns the elementwise ops of arity n that take no
// attribute (Where and Cast have cases of their own).
func elementwiseDefs(n int) []*opdef.Def {
	var out []*opdef.Def
	for _, d := range opdef.Defs() {
		if d.Kind == opdef.Elementwise && d.Arity == n && d.Ref == nil {
			out = append(out, d)
		}
	}
	return out
}

// sample draws operand i of op d: dtype dt, the given shape, from the
// op's test domain (a Signed domain gets random signs).
func sample(d *opdef.Def, i int, dt tensor.DType, shape tensor.Shape, seed uint64) *tensor.Tensor {
	iv := d.SampleDomain(i, dt)
	lo, hi := clampTo(dt, iv.Lo, iv.Hi)
	t := Rand(dt, shape, lo, hi, seed)
	if iv.Signed {
		neg := Rand(tensor.Bool, shape, 0, 1, seed+1000)
		for k := 0; k < t.Size(); k++ {
			if neg.Float64(k) != 0 {
				t.SetFloat64(k, -t.Float64(k))
			}
		}
	}
	return t
}

// seedOf gives each op its own deterministic seeds.
func seedOf(name string) uint64 {
	var h uint64 = 14695981039346656037
	for _, c := range name {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h % 1_000_000 * 100
}

// binaryCases: the elementwise ops of two operands whose result has the
// operands' dtype, on every broadcasting pattern.
func binaryCases() []Case {
	var cs []Case
	for _, d := range elementwiseDefs(2) {
		for _, sp := range shapePairs {
			for _, dt := range computeTypes {
				if out, ok := resultOf(d, dt); !ok || out != dt || dt == tensor.Bool {
					continue
				}
				if dt.IsInt() && (sp.name == "rank4" || sp.name == "large-col") {
					continue
				}
				if small(dt) && sp.name != "same" && sp.name != "row" && sp.name != "scalar-left" {
					continue
				}
				d, sp, dt, seed := d, sp, dt, seedOf(d.Name)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%s/%s", d.Name, sp.name, dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						ns, feeds := Inputs(g, sample(d, 0, dt, sp.a, seed+1), sample(d, 1, dt, sp.b, seed+2))
						return []*graph.Node{ops.Apply(d.Op, nil, ns[0], ns[1])}, feeds
					},
				})
			}
		}
	}
	// Mixed precision promotes within a kind.
	cs = append(cs, Case{
		Name: "Add/promote-f32-f64",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, Rand(tensor.Float32, tensor.Shape{2, 3}, -1, 1, 7), Rand(tensor.Float64, tensor.Shape{3}, -1, 1, 8))
			return []*graph.Node{ops.Add(ns[0], ns[1])}, feeds
		},
	})
	return cs
}

// unaryCases: the elementwise ops of one operand, on every dtype they
// admit.
func unaryCases() []Case {
	shapes := []tensor.Shape{{2, 3}, {}, {2, 3, 4, 5}, {0}, {70001}}
	var cs []Case
	for _, d := range elementwiseDefs(1) {
		for _, s := range shapes {
			for _, dt := range computeTypes {
				if _, ok := resultOf(d, dt); !ok || (!dt.IsFloat() && len(s) == 4) || (small(dt) && len(s) != 2) {
					continue
				}
				d, s, dt, seed := d, s, dt, seedOf(d.Name)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%v/%s", d.Name, s, dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						ns, feeds := Inputs(g, sample(d, 0, dt, s, seed))
						return []*graph.Node{ops.Apply(d.Op, nil, ns[0])}, feeds
					},
				})
			}
		}
	}
	return cs
}

// compareCases: the elementwise ops of two operands with a Bool result
// (comparisons, logic), on small integers so that ties occur.
func compareCases() []Case {
	var cs []Case
	for _, d := range elementwiseDefs(2) {
		for _, sp := range shapePairs[:6] {
			for _, dt := range computeTypes {
				if out, ok := resultOf(d, dt); !ok || out != tensor.Bool || (small(dt) && sp.name != "row") {
					continue
				}
				d, sp, dt, seed := d, sp, dt, seedOf(d.Name)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%s/%s", d.Name, sp.name, dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						lo, hi := clampTo(dt, -2, 3)
						if dt == tensor.Bool {
							lo, hi = 0, 1
						}
						a := Rand(dt, sp.a, lo, hi, seed+1)
						b := Rand(dt, sp.b, lo, hi, seed+2)
						if dt.IsFloat() {
							a, b = floorT(a), floorT(b)
						}
						ns, feeds := Inputs(g, a, b)
						return []*graph.Node{ops.Apply(d.Op, nil, ns[0], ns[1])}, feeds
					},
				})
			}
		}
	}
	return cs
}

func floorT(t *tensor.Tensor) *tensor.Tensor {
	for i := 0; i < t.Size(); i++ {
		t.SetFloat64(i, math.Floor(t.Float64(i)))
	}
	return t
}

func otherElementwiseCases() []Case {
	var cs []Case
	whereShapes := [][3]tensor.Shape{
		{{2, 3}, {2, 3}, {2, 3}},
		{{2, 1, 3}, {4, 3}, {}},
		{{}, {2, 2}, {2, 2}},
		{{3, 4, 1, 2}, {4, 5, 1}, {1, 2}},
		{{500, 1}, {500, 200}, {200}},
	}
	for i, ws := range whereShapes {
		for _, dt := range computeTypes {
			if small(dt) && i != 1 {
				continue
			}
			ws, dt, i := ws, dt, i
			cs = append(cs, Case{
				Name: fmt.Sprintf("Where/%d/%s", i, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					lo, hi := clampTo(dt, -5, 5)
					ns, feeds := Inputs(g, Rand(tensor.Bool, ws[0], 0, 1, 3), Rand(dt, ws[1], lo, hi, 4), Rand(dt, ws[2], lo, hi, 5))
					return []*graph.Node{ops.Where(ns[0], ns[1], ns[2])}, feeds
				},
			})
		}
	}
	// Every pair of dtypes. The values reach past the small integers'
	// ranges (-1000 to 1000 where the source holds them), so that casts
	// to them wrap (from integers) and saturate (from floats).
	all := tensor.DTypes()
	for _, from := range all {
		for _, to := range all {
			if from == to || from.IsComplex() || to.IsComplex() { // complex casts: complexCases
				continue
			}
			from, to := from, to
			cs = append(cs, Case{
				Name: fmt.Sprintf("Cast/%s-%s", from.Short(), to.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					lo, hi := clampTo(from, -1000, 1000)
					ns, feeds := Inputs(g, Rand(from, tensor.Shape{3, 7}, lo, hi, 6))
					return []*graph.Node{ops.Cast(ns[0], to)}, feeds
				},
			})
		}
	}
	return cs
}

func matmulCases() []Case {
	pairs := []struct {
		name string
		a, b tensor.Shape
	}{
		{"2d", tensor.Shape{2, 3}, tensor.Shape{3, 4}},
		{"vec-mat", tensor.Shape{5}, tensor.Shape{5, 2}},
		{"mat-vec", tensor.Shape{3, 4}, tensor.Shape{4}},
		{"vec-vec", tensor.Shape{4}, tensor.Shape{4}},
		{"batched", tensor.Shape{2, 3, 4}, tensor.Shape{4, 5}},
		{"broadcast-batch", tensor.Shape{2, 1, 3, 4}, tensor.Shape{5, 4, 2}},
		{"batch-vec", tensor.Shape{3, 2, 4}, tensor.Shape{4}},
		{"one", tensor.Shape{1, 1}, tensor.Shape{1, 1}},
		{"k0", tensor.Shape{2, 0}, tensor.Shape{0, 3}},
		{"m0", tensor.Shape{0, 4}, tensor.Shape{4, 3}},
		{"large", tensor.Shape{64, 100}, tensor.Shape{100, 70}},
	}
	var cs []Case
	// Transposition flags (what the compiler folds Transposes into).
	flagged := []struct {
		name   string
		a, b   tensor.Shape
		ta, tb bool
	}{
		{"transA", tensor.Shape{5, 3}, tensor.Shape{5, 4}, true, false},
		{"transB", tensor.Shape{3, 5}, tensor.Shape{4, 5}, false, true},
		{"transAB", tensor.Shape{5, 3}, tensor.Shape{4, 5}, true, true},
		{"transA-batch", tensor.Shape{2, 1, 6, 3}, tensor.Shape{4, 6, 2}, true, false},
		{"transB-large", tensor.Shape{64, 100}, tensor.Shape{70, 100}, false, true},
	}
	for _, f := range flagged {
		for _, dt := range floatTypes {
			f, dt := f, dt
			cs = append(cs, Case{
				Name: fmt.Sprintf("MatMul/%s/%s", f.name, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, f.a, -1, 1, 13), Rand(dt, f.b, -1, 1, 14))
					return []*graph.Node{ops.MatMulT(ns[0], ns[1], f.ta, f.tb)}, feeds
				},
			})
		}
	}
	for _, p := range pairs {
		for _, dt := range floatTypes {
			p, dt := p, dt
			cs = append(cs, Case{
				Name: fmt.Sprintf("MatMul/%s/%s", p.name, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, p.a, -1, 1, 11), Rand(dt, p.b, -1, 1, 12))
					return []*graph.Node{ops.MatMul(ns[0], ns[1])}, feeds
				},
			})
		}
	}
	return cs
}

func reduceCases() []Case {
	type red struct {
		name string
		f    func(*graph.Node, ...int) *graph.Node
	}
	reds := []red{
		{"Sum", ops.Sum}, {"SumKeepDims", ops.SumKeepDims}, {"Max", ops.Max}, {"MaxKeepDims", ops.MaxKeepDims},
		{"Min", ops.Min}, {"MinKeepDims", ops.MinKeepDims}, {"ArgMax", ops.ArgMax}, {"ArgMin", ops.ArgMin},
		{"Mean", ops.Mean}, {"MeanKeepDims", ops.MeanKeepDims},
	}
	patterns := []struct {
		shape tensor.Shape
		axes  []int
	}{
		{tensor.Shape{2, 3, 4}, nil},
		{tensor.Shape{2, 3, 4}, []int{0}},
		{tensor.Shape{2, 3, 4}, []int{-1}},
		{tensor.Shape{2, 3, 4}, []int{0, 2}},
		{tensor.Shape{2, 3, 4, 5}, []int{1, 3}},
		{tensor.Shape{2, 3, 4, 5}, []int{3, 0, 1}},
		{tensor.Shape{}, nil},
		{tensor.Shape{5, 1}, []int{1}},
		{tensor.Shape{100, 80}, []int{0}},  // column reduction
		{tensor.Shape{1, 70000}, []int{1}}, // one long row: blocked
		{tensor.Shape{40, 3000}, []int{1}}, // many rows, parallel
	}
	var cs []Case
	for ri, r := range reds {
		for pi, p := range patterns {
			for _, dt := range append([]tensor.DType{tensor.Float32, tensor.Float64}, intTypes...) {
				if dt.IsInt() && (r.name == "Mean" || r.name == "MeanKeepDims" || pi > 5) {
					continue
				}
				if small(dt) && pi != 0 && pi != 3 && pi != 5 { // all axes, two axes, three of rank 4
					continue
				}
				r, p, dt, seed := r, p, dt, uint64(ri*50+pi)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%v%v/%s", r.name, p.shape, p.axes, dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						lo, hi := -2.0, 2.0
						if dt.IsInt() {
							lo, hi = clampTo(dt, -3, 4) // small, with ties
						}
						ns, feeds := Inputs(g, Rand(dt, p.shape, lo, hi, seed))
						return []*graph.Node{r.f(ns[0], p.axes...)}, feeds
					},
				})
			}
		}
	}
	// ops.Sum of a small integer dtype casts to Int64 first (see its doc);
	// the op itself keeps the dtype and wraps: large values, so that the
	// sums overflow the dtype.
	for _, dt := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Uint8} {
		for pi, p := range []struct {
			shape tensor.Shape
			axes  []int
		}{
			{tensor.Shape{2, 3, 4, 5}, []int{1, 3}},
			{tensor.Shape{300, 7}, []int{0}},
		} {
			dt, p, seed := dt, p, uint64(900+pi)
			cs = append(cs, Case{
				Name: fmt.Sprintf("OpSum-wraps/%v%v/%s", p.shape, p.axes, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					lo, hi := dt.IntRange()
					ns, feeds := Inputs(g, Rand(dt, p.shape, float64(lo), float64(hi)+1, seed))
					return []*graph.Node{ops.Apply(ops.OpSum, opdef.AxesAttr{Axes: p.axes}, ns[0])}, feeds
				},
			})
		}
	}
	// Sums over an empty axis are zero.
	cs = append(cs, Case{
		Name: "Sum/empty",
		Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, Rand(tensor.Float32, tensor.Shape{0, 3}, 0, 1, 1))
			return []*graph.Node{ops.Sum(ns[0], 0), ops.Sum(ns[0], 1)}, feeds
		},
	})
	return cs
}

func movementCases() []Case {
	type mv struct {
		name  string
		shape []tensor.Shape
		f     func(ns []*graph.Node) *graph.Node
	}
	mvs := []mv{
		{"Reshape/infer", []tensor.Shape{{2, 3, 4}}, func(ns []*graph.Node) *graph.Node { return ops.Reshape(ns[0], 4, -1) }},
		{"Reshape/to-scalar", []tensor.Shape{{1, 1}}, func(ns []*graph.Node) *graph.Node { return ops.Reshape(ns[0]) }},
		{"Reshape/rank4", []tensor.Shape{{24}}, func(ns []*graph.Node) *graph.Node { return ops.Reshape(ns[0], 1, 2, 3, 4) }},
		{"Transpose/2d", []tensor.Shape{{3, 5}}, func(ns []*graph.Node) *graph.Node { return ops.Transpose(ns[0]) }},
		{"Transpose/3d", []tensor.Shape{{2, 3, 4}}, func(ns []*graph.Node) *graph.Node { return ops.Transpose(ns[0], 2, 0, 1) }},
		{"Transpose/rank4", []tensor.Shape{{2, 3, 4, 5}}, func(ns []*graph.Node) *graph.Node { return ops.Transpose(ns[0], 1, 3, 0, 2) }},
		{"Transpose/large", []tensor.Shape{{300, 257}}, func(ns []*graph.Node) *graph.Node { return ops.Transpose(ns[0]) }},
		{"BroadcastTo/col", []tensor.Shape{{3, 1}}, func(ns []*graph.Node) *graph.Node { return ops.BroadcastTo(ns[0], 2, 3, 4) }},
		{"BroadcastTo/scalar", []tensor.Shape{{}}, func(ns []*graph.Node) *graph.Node { return ops.BroadcastTo(ns[0], 2, 3) }},
		{"BroadcastTo/rank4", []tensor.Shape{{3, 1, 5}}, func(ns []*graph.Node) *graph.Node { return ops.BroadcastTo(ns[0], 2, 3, 4, 5) }},
		{"Concat/axis0", []tensor.Shape{{2, 3}, {1, 3}}, func(ns []*graph.Node) *graph.Node { return ops.Concat(0, ns...) }},
		{"Concat/axis1-three", []tensor.Shape{{2, 1}, {2, 3}, {2, 2}}, func(ns []*graph.Node) *graph.Node { return ops.Concat(1, ns...) }},
		{"Concat/rank4", []tensor.Shape{{2, 3, 4, 5}, {2, 3, 1, 5}}, func(ns []*graph.Node) *graph.Node { return ops.Concat(-2, ns...) }},
		{"Concat/empty-part", []tensor.Shape{{2, 0}, {2, 3}}, func(ns []*graph.Node) *graph.Node { return ops.Concat(1, ns...) }},
		{"Slice/steps", []tensor.Shape{{10, 6}}, func(ns []*graph.Node) *graph.Node {
			return ops.Slice(ns[0], ops.RS(1, 8, 3), ops.RS(-4, ops.End, 2))
		}},
		{"Slice/rank4", []tensor.Shape{{2, 3, 4, 5}}, func(ns []*graph.Node) *graph.Node {
			return ops.Slice(ns[0], ops.All, ops.R(1, 3), ops.RS(0, 4, 3), ops.R(-2, -1))
		}},
		{"Slice/empty", []tensor.Shape{{4, 3}}, func(ns []*graph.Node) *graph.Node { return ops.Slice(ns[0], ops.R(2, 2)) }},
		{"Pad/interior", []tensor.Shape{{3, 4}}, func(ns []*graph.Node) *graph.Node {
			return ops.Pad(ns[0], ops.PadWidth{Low: 1, High: 2, Interior: 1}, ops.PadWidth{Low: 0, High: 1, Interior: 2})
		}},
		{"Pad/rank4", []tensor.Shape{{2, 3, 1, 2}}, func(ns []*graph.Node) *graph.Node {
			return ops.Pad(ns[0], ops.PadWidth{}, ops.PadWidth{Low: 2}, ops.PadWidth{High: 1}, ops.PadWidth{Interior: 3})
		}},
		{"Pad/large", []tensor.Shape{{300, 200}}, func(ns []*graph.Node) *graph.Node {
			return ops.Pad(ns[0], ops.PadWidth{Low: 1, High: 1}, ops.PadWidth{Interior: 1})
		}},
		{"CustomGrad", []tensor.Shape{{2, 3}}, func(ns []*graph.Node) *graph.Node {
			return ops.CustomGradient("id", ops.Neg(ops.Neg(ns[0])), nil, func(dy *graph.Node) []*graph.Node { return nil })
		}},
	}
	var cs []Case
	for mi, m := range mvs {
		for _, dt := range append([]tensor.DType{tensor.Float32, tensor.Float64, tensor.Bool, tensor.Float16}, intTypes...) {
			// Movement copies elements by their size: the small integers
			// run one case of each op (of the first of its name).
			if small(dt) && mi > 0 && strings.Split(mvs[mi-1].name, "/")[0] == strings.Split(m.name, "/")[0] {
				continue
			}
			if m.name == "CustomGrad" && (dt != tensor.Float32 && dt != tensor.Float64) {
				continue
			}
			m, dt, mi := m, dt, mi
			cs = append(cs, Case{
				Name: fmt.Sprintf("%s/%s", m.name, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ts := make([]*tensor.Tensor, len(m.shape))
					lo, hi := clampTo(dt, -10, 10)
					for i, s := range m.shape {
						ts[i] = Rand(dt, s, lo, hi, uint64(mi*10+i))
					}
					ns, feeds := Inputs(g, ts...)
					return []*graph.Node{m.f(ns)}, feeds
				},
			})
		}
	}
	return cs
}

func softmaxCases() []Case {
	pats := []struct {
		shape  tensor.Shape
		axis   int
		lo, hi float64
	}{
		{tensor.Shape{3, 5}, -1, -3, 3},
		{tensor.Shape{4, 3}, 0, -3, 3},
		{tensor.Shape{2, 3, 4}, 1, -3, 3},
		{tensor.Shape{2, 3, 4, 5}, 2, -3, 3},
		{tensor.Shape{7}, 0, 9990, 10010},      // magnitude 1e4: stable
		{tensor.Shape{2, 6}, 1, -10010, -9990}, // and -1e4
		{tensor.Shape{300, 200}, 1, -5, 5},
	}
	var cs []Case
	for pi, p := range pats {
		for _, dt := range floatTypes {
			p, dt, pi := p, dt, pi
			cs = append(cs, Case{
				Name: fmt.Sprintf("Softmax-LogSoftmax/%v/%d/%s", p.shape, p.axis, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, p.shape, p.lo, p.hi, uint64(pi)))
					return []*graph.Node{ops.Softmax(ns[0], p.axis), ops.LogSoftmax(ns[0], p.axis)}, feeds
				},
			})
		}
	}
	return cs
}

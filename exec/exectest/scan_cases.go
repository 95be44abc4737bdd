package exectest

import (
	"fmt"
	"math"
	"strings"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// scanCases are the cases of the reductions Prod, Any and All, the
// statistics Var and Std, the scans Cumsum, Cumprod, Cummax and
// LogCumSumExp, and the scans' gradient helpers. Expected values are
// Eval's (the float64 references of ops/scan.go) but for the goldens,
// worked out by hand.
// smallIntScanCases run Prod, Any, All and the integer scans in Int8,
// Int16 and Uint8 against the reference (exact: integers wrap). Prod,
// Cumsum and Cumprod are built with ops.Apply, since their builders cast
// small integers to Int64 first (numpy's rule); operands span the whole
// dtype so that the products and sums wrap. Two small layouts each: the
// kernels differ from int32's only in the element type.
func smallIntScanCases() []Case {
	var cs []Case
	layouts := []struct {
		shape tensor.Shape
		axis  int
		sa    opdef.ScanAttr
	}{
		{tensor.Shape{2, 5, 3}, 1, opdef.ScanAttr{Axis: 1}},
		{tensor.Shape{4, 9}, 1, opdef.ScanAttr{Axis: 1, Reverse: true, Exclusive: true}},
	}
	for _, dt := range []tensor.DType{tensor.Int8, tensor.Int16, tensor.Uint8} {
		for li, l := range layouts {
			dt, l, seed := dt, l, uint64(1700+li)
			lo, hi := dt.IntRange()
			build := func(f func(x *graph.Node) []*graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					ns, feeds := Inputs(g, Rand(dt, l.shape, float64(lo), float64(hi)+1, seed))
					return f(ns[0]), feeds
				}
			}
			name := func(op string) string { return fmt.Sprintf("%s/small/%v/%s", op, l.shape, dt.Short()) }
			cs = append(cs,
				Case{Name: name("Prod"), Build: build(func(x *graph.Node) []*graph.Node {
					return []*graph.Node{ops.Apply(ops.OpProd, opdef.AxesAttr{Axes: []int{l.axis}}, x)}
				})},
				Case{Name: name("AnyAll"), Build: build(func(x *graph.Node) []*graph.Node {
					return []*graph.Node{ops.AnyOf(x, l.axis), ops.AllOf(x, 0)}
				})},
				Case{Name: name("Scans"), Build: build(func(x *graph.Node) []*graph.Node {
					return []*graph.Node{
						ops.Apply(ops.OpCumsum, l.sa, x),
						ops.Apply(ops.OpCumprod, l.sa, x),
						ops.Cummax(x, l.axis),
					}
				})},
			)
		}
	}
	return cs
}

func scanCases() []Case {
	var cs []Case
	cs = append(cs, scanGoldens()...)
	cs = append(cs, foldCases()...)
	cs = append(cs, statCases()...)
	cs = append(cs, scanOpCases()...)
	cs = append(cs, scanGradCases()...)
	return cs
}

func scanGoldens() []Case {
	f32, f64, i32, b8 := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Bool
	nan, inf := math.NaN(), math.Inf(1)
	one := func(name, source string, want *tensor.Tensor, in *tensor.Tensor, f func(x *graph.Node) *graph.Node) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, in)
			return []*graph.Node{f(ns[0])}, feeds
		}}
	}
	return []Case{
		one("prod-zero", "hand: row products of [[1,2,3],[4,0,6]] are 6 and 0",
			Tensor(f32, []float64{6, 0}, 2), Tensor(f32, []float64{1, 2, 3, 4, 0, 6}, 2, 3),
			func(x *graph.Node) *graph.Node { return ops.Prod(x, 1) }),
		one("prod-empty", "hand: the product over an empty axis is 1",
			Tensor(f64, []float64{1, 1, 1}, 3), Tensor(f64, nil, 0, 3),
			func(x *graph.Node) *graph.Node { return ops.Prod(x, 0) }),
		one("prod-int-wrap", "hand: 65536*32768 = 2^31 wraps to -2^31 in int32",
			Tensor(i32, []float64{-2147483648}), Tensor(i32, []float64{65536, 32768}),
			func(x *graph.Node) *graph.Node { return ops.Reshape(ops.Prod(x), 1) }),
		one("any-nan", "hand: Any per row of [[0,0],[0,NaN],[-0,2]]: NaN is nonzero, -0 is zero",
			Tensor(b8, []float64{0, 1, 1}, 3), Tensor(f64, []float64{0, 0, 0, nan, math.Copysign(0, -1), 2}, 3, 2),
			func(x *graph.Node) *graph.Node { return ops.AnyOf(x, 1) }),
		one("all-nan", "hand: All per row of [[1,0],[3,NaN],[-0,2]]",
			Tensor(b8, []float64{0, 1, 0}, 3), Tensor(f32, []float64{1, 0, 3, nan, math.Copysign(0, -1), 2}, 3, 2),
			func(x *graph.Node) *graph.Node { return ops.AllOf(x, 1) }),
		one("any-all-empty", "hand: Any over nothing is false, All true",
			Tensor(b8, []float64{0, 0, 1, 1}, 2, 2), Tensor(i32, nil, 2, 0),
			func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.Reshape(ops.AnyOf(x, 1), 1, 2), ops.Reshape(ops.AllOf(x, 1), 1, 2))
			}),
		one("var-std", "hand: [1,2,3,4]: mean 2.5, squared deviations sum to 5; var 5/4, 5/3; std sqrt(5/3) = 1.2909944487358056",
			Tensor(f64, []float64{1.25, 5.0 / 3, 1.2909944487358056}, 3), Tensor(f64, []float64{1, 2, 3, 4}),
			func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.Reshape(ops.Var(x, 0), 1), ops.Reshape(ops.Var(x, 1), 1), ops.Reshape(ops.Std(x, 1), 1))
			}),
		one("cumsum-variants", "hand: numpy.cumsum([1,2,3,4]) = [1,3,6,10]; reversed [10,9,7,4]; exclusive [0,1,3,6]; both [9,7,4,0]",
			Tensor(f32, []float64{1, 3, 6, 10, 10, 9, 7, 4, 0, 1, 3, 6, 9, 7, 4, 0}, 4, 4), Tensor(f32, []float64{1, 2, 3, 4}, 1, 4),
			func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.Cumsum(x, 1), ops.Cumsum(x, 1, ops.Reverse), ops.Cumsum(x, 1, ops.Exclusive), ops.Cumsum(x, 1, ops.Reverse, ops.Exclusive))
			}),
		one("cumsum-axis0", "hand: running column sums of [[1,2],[3,4],[5,6]]",
			Tensor(i32, []float64{1, 2, 4, 6, 9, 12}, 3, 2), Tensor(i32, []float64{1, 2, 3, 4, 5, 6}, 3, 2),
			func(x *graph.Node) *graph.Node { return ops.Cumsum(x, 0) }),
		one("cumprod-zero", "hand: numpy.cumprod([1,2,0,4]) = [1,2,0,0]; exclusive [1,1,2,0]",
			Tensor(f64, []float64{1, 2, 0, 0, 1, 1, 2, 0}, 2, 4), Tensor(f64, []float64{1, 2, 0, 4}, 1, 4),
			func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.Cumprod(x, 1), ops.Cumprod(x, 1, ops.Exclusive))
			}),
		one("cummax-nan", "hand: torch.cummax([1,3,2,NaN,5]).values = [1,3,3,NaN,NaN]; exclusive [-Inf,1,3,3,NaN]",
			Tensor(f32, []float64{1, 3, 3, nan, nan, -inf, 1, 3, 3, nan}, 2, 5), Tensor(f32, []float64{1, 3, 2, nan, 5}, 1, 5),
			func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.Cummax(x, 1), ops.Cummax(x, 1, ops.Exclusive))
			}),
		one("cummax-int-exclusive", "hand: an exclusive int32 Cummax starts at the minimum, -2^31",
			Tensor(i32, []float64{-2147483648, -5, 7}), Tensor(i32, []float64{-5, 7, 2}),
			func(x *graph.Node) *graph.Node { return ops.Cummax(x, 0, ops.Exclusive) }),
		one("logcumsumexp-large", "hand: log(e^1000 + e^1000) = 1000 + ln 2 = 1000.6931471805599, no overflow; then + e^-Inf adds nothing",
			Tensor(f64, []float64{1000, 1000.6931471805599, 1000.6931471805599}), Tensor(f64, []float64{1000, 1000, -inf}),
			func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0) }),
		one("logcumsumexp-reverse-exclusive", "hand: reversed exclusive over [0,0,0]: [log 2, log 1, -Inf] = [0.6931471805599453, 0, -Inf]",
			Tensor(f32, []float64{0.6931471805599453, 0, -inf}), Tensor(f32, []float64{0, 0, 0}),
			func(x *graph.Node) *graph.Node { return ops.LogCumSumExp(x, 0, ops.Reverse, ops.Exclusive) }),
		one("cumprodgrad-zeros", "hand: Cumprod([2,0,3]) with cotangent [1,1,1]: dx0 = 1 + x1 + x1*x2 = 1, dx1 = x0 + x0*x2 = 8, dx2 = x0*x1 = 0",
			Tensor(f64, []float64{1, 8, 0}), Tensor(f64, []float64{2, 0, 3}),
			func(x *graph.Node) *graph.Node {
				return ops.Apply(ops.OpCumprodGrad, opdef.ScanAttr{}, x, ops.OnesLike(x))
			}),
		one("cummaxgrad-ties", "hand: Cummax([1,3,3,2]) takes y1 from index 1 and y2, y3 from index 2 (the last of the tie): with cotangent [1,2,4,8], [1,2,12,0]",
			Tensor(f32, []float64{1, 2, 12, 0}), Tensor(f32, []float64{1, 3, 3, 2}),
			func(x *graph.Node) *graph.Node {
				w := x.Graph().Const(Tensor(f32, []float64{1, 2, 4, 8}))
				return ops.Apply(ops.OpCummaxGrad, opdef.ScanAttr{}, x, w)
			}),
	}
}

// zeroish draws values of which a fraction p are zero and the others in
// [1, 4) (with random signs for signed types; true for Bool).
func zeroish(dt tensor.DType, shape tensor.Shape, p float64, seed uint64) *tensor.Tensor {
	u := Rand(tensor.Float64, shape, 0, 1, seed)
	v := make([]float64, shape.Size())
	for i := range v {
		r := u.Float64(i)
		switch {
		case r < p:
		case dt == tensor.Bool:
			v[i] = 1
		default:
			v[i] = math.Floor(1 + 3*(r-p)/(1-p))
			if int(r*1e6)%2 == 1 {
				v[i] = -v[i]
			}
		}
	}
	return Tensor(dt, v, shape...)
}

func foldCases() []Case {
	pats := []struct {
		shape tensor.Shape
		axes  []int
	}{
		{tensor.Shape{2, 3, 4}, nil},
		{tensor.Shape{2, 3, 4}, []int{0}},
		{tensor.Shape{2, 3, 4}, []int{-1}},
		{tensor.Shape{2, 3, 4, 5}, []int{3, 0, 1}},
		{tensor.Shape{}, nil},
		{tensor.Shape{0, 3}, []int{0}},
		{tensor.Shape{100, 80}, []int{0}},
		{tensor.Shape{40, 300}, []int{1}},
	}
	type red struct {
		name string
		f    func(*graph.Node, ...int) *graph.Node
		dts  []tensor.DType
		in   func(dt tensor.DType, s tensor.Shape, seed uint64) *tensor.Tensor
	}
	num := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64}
	all := append(num, tensor.Bool)
	reds := []red{
		// Factors near 1 keep long products finite; integers wrap exactly.
		{"Prod", ops.Prod, num, func(dt tensor.DType, s tensor.Shape, seed uint64) *tensor.Tensor {
			if dt.IsInt() {
				return Rand(dt, s, -3, 4, seed)
			}
			return Rand(dt, s, 0.9, 1.1, seed)
		}},
		{"ProdKeepDims", ops.ProdKeepDims, num, func(dt tensor.DType, s tensor.Shape, seed uint64) *tensor.Tensor {
			return Rand(dt, s, -2, 2, seed)
		}},
		// Mostly zeros for Any and mostly nonzero for All, so that both
		// results occur.
		{"Any", ops.AnyOf, all, func(dt tensor.DType, s tensor.Shape, seed uint64) *tensor.Tensor { return zeroish(dt, s, 0.9, seed) }},
		{"AllKeepDims", ops.AllOfKeepDims, all, func(dt tensor.DType, s tensor.Shape, seed uint64) *tensor.Tensor {
			return zeroish(dt, s, 0.06, seed)
		}},
	}
	var cs []Case
	// Prod ending a fused group (with the optimising passes): factors
	// 1 + x/10 near 1, over rows, columns, everything and nothing.
	for pi, p := range []struct {
		shape tensor.Shape
		axes  []int
	}{{tensor.Shape{40, 300}, []int{1}}, {tensor.Shape{100, 80}, []int{0}}, {tensor.Shape{6, 7}, nil}, {tensor.Shape{0, 5}, []int{0}}, {tensor.Shape{2, 70000}, []int{1}}} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32} {
			if dt != tensor.Float32 && pi%2 == 1 { // fewer emulator modules (below)
				continue
			}
			cs = append(cs, Case{
				Name: fmt.Sprintf("Prod/fused/%v%v/%s", p.shape, p.axes, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					if dt.IsInt() {
						ns, feeds := Inputs(g, Rand(dt, p.shape, -3, 4, uint64(300+pi)))
						return []*graph.Node{ops.Prod(ops.Add(ops.Mul(ns[0], ns[0]), ops.Scalar(ns[0], -2)), p.axes...)}, feeds
					}
					ns, feeds := Inputs(g, Rand(dt, p.shape, -1, 1, uint64(300+pi)))
					return []*graph.Node{ops.Prod(ops.Add(ops.Mul(ns[0], ops.Scalar(ns[0], 0.1)), ops.Scalar(ns[0], 1)), p.axes...)}, feeds
				},
			})
		}
	}
	for ri, r := range reds {
		for pi, p := range pats {
			for _, dt := range r.dts {
				// Every dtype on the small patterns (0..5); float32 alone
				// on the large ones, and the KeepDims variants on the
				// first three: each case is a module of the CUDA
				// emulator, which holds 256 fiber stacks (512 memory
				// maps) per module with a block-wide barrier while the
				// backend lives, so the suite keeps to what tests
				// something new.
				if (pi > 5 && dt != tensor.Float32) || (strings.HasSuffix(r.name, "KeepDims") && pi > 2) {
					continue
				}
				seed := uint64(ri*50 + pi)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%v%v/%s", r.name, p.shape, p.axes, dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						ns, feeds := Inputs(g, r.in(dt, p.shape, seed))
						return []*graph.Node{r.f(ns[0], p.axes...)}, feeds
					},
				})
			}
		}
	}
	return cs
}

func statCases() []Case {
	pats := []struct {
		shape      tensor.Shape
		axes       []int
		correction float64
	}{
		{tensor.Shape{3, 5}, nil, 0},
		{tensor.Shape{3, 5}, []int{1}, 1},
		{tensor.Shape{2, 3, 4}, []int{0, 2}, 1},
		{tensor.Shape{64, 200}, []int{0}, 0},
	}
	var cs []Case
	for pi, p := range pats {
		for _, dt := range floatTypes {
			cs = append(cs, Case{
				Name: fmt.Sprintf("Var-Std/%v%v/%g/%s", p.shape, p.axes, p.correction, dt.Short()),
				Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
					// values far from zero: the two-pass form stays exact
					ns, feeds := Inputs(g, Rand(dt, p.shape, 100, 104, uint64(pi)))
					return []*graph.Node{ops.Var(ns[0], p.correction, p.axes...), ops.StdKeepDims(ns[0], p.correction, p.axes...)}, feeds
				},
			})
		}
	}
	return cs
}

// scanShapes are the layouts every scan runs on: the axis last (rows),
// first and in the middle (strided lines), long and wide, and empty.
var scanShapes = []struct {
	shape tensor.Shape
	axis  int
	opts  []ops.ScanOption
}{
	{tensor.Shape{7}, 0, nil},
	{tensor.Shape{3, 5}, -1, []ops.ScanOption{ops.Reverse}},
	{tensor.Shape{4, 3}, 0, []ops.ScanOption{ops.Exclusive}},
	{tensor.Shape{2, 3, 4}, 1, []ops.ScanOption{ops.Reverse, ops.Exclusive}},
	{tensor.Shape{30, 600}, 0, nil},                            // more inner indices than a work item's lanes
	{tensor.Shape{300, 257}, 1, []ops.ScanOption{ops.Reverse}}, // many rows, parallel
	{tensor.Shape{1, 5000}, 1, []ops.ScanOption{ops.Exclusive}},
	{tensor.Shape{0, 3}, 1, nil},
	{tensor.Shape{2, 0}, 1, []ops.ScanOption{ops.Reverse}},
}

func scanOpCases() []Case {
	type scan struct {
		name   string
		f      func(*graph.Node, int, ...ops.ScanOption) *graph.Node
		ints   bool
		lo, hi float64
	}
	scans := []scan{
		{"Cumsum", ops.Cumsum, true, -2, 2},
		{"Cumprod", ops.Cumprod, true, 0.8, 1.2}, // long products stay finite
		{"Cummax", ops.Cummax, true, -3, 3},
		{"LogCumSumExp", ops.LogCumSumExp, false, -3, 3},
	}
	var cs []Case
	for si, s := range scans {
		dts := floatTypes
		if s.ints {
			dts = []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64}
		}
		for pi, p := range scanShapes {
			for _, dt := range dts {
				if dt.IsInt() && p.shape.Size() > 100 {
					continue // integers on the small layouts (see foldCases)
				}
				seed := uint64(si*40 + pi)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%v/%d%s/%s", s.name, p.shape, p.axis, optName(p.opts), dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						lo, hi := s.lo, s.hi
						if dt.IsInt() {
							lo, hi = -3, 4 // small, with ties; products wrap
						}
						ns, feeds := Inputs(g, Rand(dt, p.shape, lo, hi, seed))
						return []*graph.Node{s.f(ns[0], p.axis, p.opts...)}, feeds
					},
				})
			}
		}
		// Every combination of the options on one small shape.
		for oi, opts := range [][]ops.ScanOption{nil, {ops.Reverse}, {ops.Exclusive}, {ops.Reverse, ops.Exclusive}} {
			for _, dt := range floatTypes {
				seed := uint64(si*40 + 30 + oi)
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/options/%s/%s", s.name, optName(opts), dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						ns, feeds := Inputs(g, Rand(dt, tensor.Shape{3, 6, 2}, s.lo, s.hi, seed))
						return []*graph.Node{s.f(ns[0], 1, opts...)}, feeds
					},
				})
			}
		}
	}
	return cs
}

func optName(opts []ops.ScanOption) string {
	s := ""
	for _, o := range opts {
		switch o {
		case ops.Reverse:
			s += "-reverse"
		case ops.Exclusive:
			s += "-exclusive"
		}
	}
	return s
}

// scanGradCases run the gradient helpers directly, on operands with zeros
// (CumprodGrad) and ties (CummaxGrad: values on a grid of halves).
func scanGradCases() []Case {
	var cs []Case
	for pi, p := range scanShapes {
		for _, dt := range floatTypes {
			for _, op := range []graph.Op{ops.OpCumprodGrad, ops.OpCummaxGrad} {
				seed := uint64(200 + pi)
				a := opdef.ScanAttr{Axis: (p.axis + len(p.shape)) % len(p.shape)}
				for _, o := range p.opts {
					a.Reverse = a.Reverse || o == ops.Reverse
					a.Exclusive = a.Exclusive || o == ops.Exclusive
				}
				cs = append(cs, Case{
					Name: fmt.Sprintf("%s/%v/%v/%s", op, p.shape, a, dt.Short()),
					Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
						x := Rand(tensor.Float64, p.shape, -3, 3, seed)
						for k := 0; k < x.Size(); k++ {
							v := x.Float64(k)
							switch {
							case op == ops.OpCummaxGrad:
								x.SetFloat64(k, math.Floor(2*v)/2) // ties
							case k%5 == 2:
								x.SetFloat64(k, 0) // zeros
							case p.shape.Size() > 100:
								x.SetFloat64(k, 1+v/30) // long products stay finite
							}
						}
						xt, err := tensor.FromFloat64s(dt, mustValues(x), p.shape...)
						if err != nil {
							panic(err)
						}
						ns, feeds := Inputs(g, xt, Rand(dt, p.shape, -1, 1, seed+7))
						return []*graph.Node{ops.Apply(op, a, ns[0], ns[1])}, feeds
					},
				})
			}
		}
	}
	return cs
}

func mustValues(t *tensor.Tensor) []float64 {
	v := make([]float64, t.Size())
	for i := range v {
		v[i] = t.Float64(i)
	}
	return v
}

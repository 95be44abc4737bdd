package ops_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// seq is the float64 tensor 0, 1, ..., of the given shape.
func seq(shape ...int) *tensor.Tensor {
	n := tensor.Shape(shape).Size()
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	t, err := tensor.New(v, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// TestCreationAndMovementValues checks every creation and movement
// composite against values worked out by hand from NumPy's definitions
// (each case says how), computed on the CPU.
func TestCreationAndMovementValues(t *testing.T) {
	type tc struct {
		name  string
		build func(g *graph.Graph) *graph.Node
		shape []int
		want  []float64
	}
	x23 := func(g *graph.Graph) *graph.Node { return g.Const(seq(2, 3)) } // [[0 1 2] [3 4 5]]
	cases := []tc{
		// Iota: each element's index along the axis.
		{"iota/axis1", func(g *graph.Graph) *graph.Node { return ops.Iota(g, tensor.Int32, 1, 2, 3) }, []int{2, 3}, []float64{0, 1, 2, 0, 1, 2}},
		{"iota/axis0", func(g *graph.Graph) *graph.Node { return ops.Iota(g, tensor.Int64, -2, 2, 3) }, []int{2, 3}, []float64{0, 0, 0, 1, 1, 1}},
		{"iota/middle", func(g *graph.Graph) *graph.Node { return ops.Iota(g, tensor.Int64, 1, 2, 2, 2) }, []int{2, 2, 2}, []float64{0, 0, 1, 1, 0, 0, 1, 1}},
		// Arange: ceil((stop-start)/step) elements start + i*step.
		{"arange/int", func(g *graph.Graph) *graph.Node { return ops.Arange(g, tensor.Int32, 2, 11, 3) }, []int{3}, []float64{2, 5, 8}},               // ceil(9/3)=3
		{"arange/neg-step", func(g *graph.Graph) *graph.Node { return ops.Arange(g, tensor.Int64, 5, 0, -2) }, []int{3}, []float64{5, 3, 1}},          // ceil(-5/-2)=3
		{"arange/float", func(g *graph.Graph) *graph.Node { return ops.Arange(g, tensor.Float64, 0, 1, 0.25) }, []int{4}, []float64{0, .25, .5, .75}}, // 1 excluded
		{"arange/frac-count", func(g *graph.Graph) *graph.Node { return ops.Arange(g, tensor.Float32, 1, 2.1, 0.5) }, []int{3}, []float64{1, 1.5, 2}}, // ceil(2.2)=3
		{"arange/empty", func(g *graph.Graph) *graph.Node { return ops.Arange(g, tensor.Float32, 3, 1, 1) }, []int{0}, nil},                           // stop below start
		{"arange/long", func(g *graph.Graph) *graph.Node { return ops.Sum(ops.Arange(g, tensor.Int64, 0, 1000, 1)) }, []int{}, []float64{499500}},     // 999*1000/2
		// Linspace: start + i*(stop-start)/(num-1), last exactly stop.
		{"linspace/endpoint", func(g *graph.Graph) *graph.Node { return ops.Linspace(g, tensor.Float64, 2, 3, 5, true) }, []int{5}, []float64{2, 2.25, 2.5, 2.75, 3}},
		{"linspace/no-endpoint", func(g *graph.Graph) *graph.Node { return ops.Linspace(g, tensor.Float64, 2, 3, 4, false) }, []int{4}, []float64{2, 2.25, 2.5, 2.75}},
		{"linspace/one", func(g *graph.Graph) *graph.Node { return ops.Linspace(g, tensor.Float32, 2, 3, 1, true) }, []int{1}, []float64{2}},
		// 0.1*3 rounds to 0.30000000000000004 in float64; the endpoint is exactly 0.3.
		{"linspace/exact-stop", func(g *graph.Graph) *graph.Node { return ops.Linspace(g, tensor.Float64, 0, 0.3, 4, true) }, []int{4}, []float64{0, 0.09999999999999999, 0.19999999999999998, 0.3}},
		// Eye: 1 where j - i == k.
		{"eye/k1", func(g *graph.Graph) *graph.Node { return ops.Eye(g, tensor.Float32, 3, 4, 1) }, []int{3, 4}, []float64{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}},
		{"eye/k-2", func(g *graph.Graph) *graph.Node { return ops.Eye(g, tensor.Int32, 3, 2, -2) }, []int{3, 2}, []float64{0, 0, 0, 0, 1, 0}},
		// Tril/Triu keep j - i <= k / >= k.
		{"tril/k0", func(g *graph.Graph) *graph.Node { return ops.Tril(x23(g), 0) }, []int{2, 3}, []float64{0, 0, 0, 3, 4, 0}},
		{"tril/k-1-batched", func(g *graph.Graph) *graph.Node { return ops.Tril(g.Const(seq(2, 2, 2)), -1) }, []int{2, 2, 2}, []float64{0, 0, 2, 0, 0, 0, 6, 0}},
		{"triu/k1", func(g *graph.Graph) *graph.Node { return ops.Triu(x23(g), 1) }, []int{2, 3}, []float64{0, 1, 2, 0, 0, 5}},
		// Stack, Split, Unstack.
		{"stack/axis1", func(g *graph.Graph) *graph.Node {
			return ops.Stack(1, g.Const(seq(2)), ops.Add(g.Const(seq(2)), ops.Scalar(g.Const(seq(2)), 10)))
		}, []int{2, 2}, []float64{0, 10, 1, 11}},
		{"split/second", func(g *graph.Graph) *graph.Node { return ops.Split(g.Const(seq(6)), 3, 0)[1] }, []int{2}, []float64{2, 3}},
		{"arraysplit/first-longer", func(g *graph.Graph) *graph.Node { return ops.ArraySplit(g.Const(seq(5)), 3, 0)[0] }, []int{2}, []float64{0, 1}},   // 5 = 2+2+1
		{"arraysplit/last-short", func(g *graph.Graph) *graph.Node { return ops.ArraySplit(g.Const(seq(5)), 3, 0)[2] }, []int{1}, []float64{4}},        // 5 = 2+2+1
		{"splitat/middle", func(g *graph.Graph) *graph.Node { return ops.SplitAt(x23(g), []int{1, -1}, 1)[1] }, []int{2, 1}, []float64{1, 4}},          // x[:,1:2]
		{"splitat/decreasing", func(g *graph.Graph) *graph.Node { return ops.SplitAt(g.Const(seq(5)), []int{3, 1}, 0)[1] }, []int{0}, nil},             // x[3:1] is empty
		{"splitat/tail", func(g *graph.Graph) *graph.Node { return ops.SplitAt(g.Const(seq(5)), []int{3, 1}, 0)[2] }, []int{4}, []float64{1, 2, 3, 4}}, // x[1:]
		{"unstack/axis1", func(g *graph.Graph) *graph.Node { return ops.Unstack(x23(g), 1)[2] }, []int{2}, []float64{2, 5}},
		// Flip and negative slice steps.
		{"flip/all", func(g *graph.Graph) *graph.Node { return ops.Flip(x23(g)) }, []int{2, 3}, []float64{5, 4, 3, 2, 1, 0}},
		{"flip/axis1", func(g *graph.Graph) *graph.Node { return ops.Flip(x23(g), -1) }, []int{2, 3}, []float64{2, 1, 0, 5, 4, 3}},
		{"slice/neg-step", func(g *graph.Graph) *graph.Node { return ops.Slice(g.Const(seq(10)), ops.RS(8, 1, -3)) }, []int{3}, []float64{8, 5, 2}},             // x[8:1:-3]
		{"slice/neg-step-to-0", func(g *graph.Graph) *graph.Node { return ops.Slice(g.Const(seq(10)), ops.RS(-2, ops.End, -4)) }, []int{3}, []float64{8, 4, 0}}, // x[-2::-4]
		{"slice/neg-empty", func(g *graph.Graph) *graph.Node { return ops.Slice(g.Const(seq(10)), ops.RS(3, 3, -1)) }, []int{0}, nil},
		// Roll: out[(i + shift) % d] = x[i].
		{"roll/flat", func(g *graph.Graph) *graph.Node { return ops.Roll(x23(g), 2) }, []int{2, 3}, []float64{4, 5, 0, 1, 2, 3}},
		{"roll/axis1-neg", func(g *graph.Graph) *graph.Node { return ops.Roll(x23(g), -1, 1) }, []int{2, 3}, []float64{1, 2, 0, 4, 5, 3}},
		{"roll/axes", func(g *graph.Graph) *graph.Node { return ops.RollAxes(x23(g), []int{1, 4}, []int{0, 1}) }, []int{2, 3}, []float64{5, 3, 4, 2, 0, 1}}, // rows swap, cols by 4%3=1
		// Tile, Repeat.
		{"tile/2d", func(g *graph.Graph) *graph.Node { return ops.Tile(g.Const(seq(2)), 2, 2) }, []int{2, 4}, []float64{0, 1, 0, 1, 0, 1, 0, 1}},
		{"tile/short-reps", func(g *graph.Graph) *graph.Node { return ops.Tile(x23(g), 2) }, []int{2, 6}, []float64{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
		{"repeat/scalar-flat", func(g *graph.Graph) *graph.Node { return ops.Repeat(x23(g), []int{2}) }, []int{12}, []float64{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}},
		{"repeat/each-axis1", func(g *graph.Graph) *graph.Node { return ops.Repeat(x23(g), []int{1, 0, 2}, 1) }, []int{2, 3}, []float64{0, 2, 2, 3, 5, 5}},
		{"repeat/runs", func(g *graph.Graph) *graph.Node { return ops.Repeat(g.Const(seq(4)), []int{2, 2, 1, 3}, 0) }, []int{8}, []float64{0, 0, 1, 1, 2, 3, 3, 3}},
		// MoveAxis, Diagonal, Trace.
		{"moveaxis/0-to-end", func(g *graph.Graph) *graph.Node { return ops.MoveAxis(g.Const(seq(2, 1, 3)), 0, -1) }, []int{1, 3, 2}, []float64{0, 3, 1, 4, 2, 5}},
		{"moveaxes", func(g *graph.Graph) *graph.Node { return ops.MoveAxes(g.Const(seq(2, 3, 1)), []int{0, 1}, []int{2, 0}) }, []int{3, 1, 2}, []float64{0, 3, 1, 4, 2, 5}},
		{"diagonal/main", func(g *graph.Graph) *graph.Node { return ops.Diagonal(g.Const(seq(3, 3)), 0, 0, 1) }, []int{3}, []float64{0, 4, 8}},
		{"diagonal/above", func(g *graph.Graph) *graph.Node { return ops.Diagonal(x23(g), 1, 0, 1) }, []int{2}, []float64{1, 5}},
		{"diagonal/below", func(g *graph.Graph) *graph.Node { return ops.Diagonal(g.Const(seq(3, 2)), -1, 0, 1) }, []int{2}, []float64{2, 5}},
		{"diagonal/outside", func(g *graph.Graph) *graph.Node { return ops.Diagonal(x23(g), 3, 0, 1) }, []int{0}, nil},
		// seq(2,2,3): x[i,j,k] = 6i+3j+k; axes (0, 2): d[j, t] = x[t, j, t] = 7t+3j.
		{"diagonal/axes0-2", func(g *graph.Graph) *graph.Node { return ops.Diagonal(g.Const(seq(2, 2, 3)), 0, 0, 2) }, []int{2, 2}, []float64{0, 7, 3, 10}},
		{"trace", func(g *graph.Graph) *graph.Node { return ops.Trace(g.Const(seq(3, 3)), 0, 0, 1) }, []int{}, []float64{12}},         // 0+4+8
		{"trace/offset", func(g *graph.Graph) *graph.Node { return ops.Trace(g.Const(seq(3, 3)), -1, 0, 1) }, []int{}, []float64{10}}, // 3+7
		// Pad modes (numpy.pad's examples on [0 1 2]).
		{"pad/constant", func(g *graph.Graph) *graph.Node {
			return ops.PadConstant(g.Const(seq(3)), 7, ops.PadWidth{Low: 1, High: 2})
		}, []int{6}, []float64{7, 0, 1, 2, 7, 7}},
		{"pad/reflect", func(g *graph.Graph) *graph.Node {
			return ops.PadReflect(g.Const(seq(3)), ops.PadWidth{Low: 2, High: 2})
		}, []int{7}, []float64{2, 1, 0, 1, 2, 1, 0}},
		// Reflection of [0 1 2] has period 4 (0 1 2 1); padding 5 goes round again.
		{"pad/reflect-wide", func(g *graph.Graph) *graph.Node {
			return ops.PadReflect(g.Const(seq(3)), ops.PadWidth{Low: 5, High: 4})
		}, []int{12}, []float64{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2}},
		{"pad/reflect-len1", func(g *graph.Graph) *graph.Node {
			return ops.PadReflect(g.Const(seq(1)), ops.PadWidth{Low: 2, High: 1})
		}, []int{4}, []float64{0, 0, 0, 0}},
		{"pad/reflect-len2", func(g *graph.Graph) *graph.Node {
			return ops.PadReflect(g.Const(seq(2)), ops.PadWidth{Low: 3, High: 0})
		}, []int{5}, []float64{1, 0, 1, 0, 1}},
		{"pad/edge", func(g *graph.Graph) *graph.Node { return ops.PadEdge(g.Const(seq(3)), ops.PadWidth{Low: 2, High: 1}) }, []int{6}, []float64{0, 0, 0, 1, 2, 2}},
		{"pad/wrap", func(g *graph.Graph) *graph.Node { return ops.PadWrap(g.Const(seq(3)), ops.PadWidth{Low: 2, High: 2}) }, []int{7}, []float64{1, 2, 0, 1, 2, 0, 1}},
		{"pad/wrap-wide", func(g *graph.Graph) *graph.Node { return ops.PadWrap(g.Const(seq(2)), ops.PadWidth{Low: 3, High: 3}) }, []int{8}, []float64{1, 0, 1, 0, 1, 0, 1, 0}},
		{"pad/reflect-2d", func(g *graph.Graph) *graph.Node {
			return ops.PadReflect(x23(g), ops.PadWidth{Low: 1}, ops.PadWidth{High: 1})
		}, []int{3, 4}, []float64{3, 4, 5, 4, 0, 1, 2, 1, 3, 4, 5, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			out := c.build(g)
			if err := g.Err(); err != nil {
				t.Fatal(err)
			}
			if !out.Shape().Equal(c.shape) {
				t.Fatalf("shape %v, want %v", out.Shape(), c.shape)
			}
			got, err := compute([]*graph.Node{out}, nil)
			if err != nil {
				t.Fatal(err)
			}
			vals := got[0].Float64s()
			if len(vals) != len(c.want) {
				t.Fatalf("got %v, want %v", vals, c.want)
			}
			for i := range vals {
				if vals[i] != c.want[i] && math.Abs(vals[i]-c.want[i]) > 1e-6*math.Abs(c.want[i]) {
					t.Fatalf("got %v, want %v", vals, c.want)
				}
			}
		})
	}
}

// TestCreationAndMovementErrors checks that bad arguments are build
// errors naming the op, the operand types and this file, not panics.
func TestCreationAndMovementErrors(t *testing.T) {
	cases := []struct {
		name, want string
		kind       error
		build      func(g *graph.Graph)
	}{
		{"iota-dtype", "Iota(): dtype float32 is not i32 or i64", graph.ErrDType, func(g *graph.Graph) { ops.Iota(g, tensor.Float32, 0, 3) }},
		{"iota-axis", "Iota(): axis 2 is out of range for shape [3,4]", graph.ErrShape, func(g *graph.Graph) { ops.Iota(g, tensor.Int64, 2, 3, 4) }},
		{"iota-scalar", "axis 0 is out of range for shape []", graph.ErrShape, func(g *graph.Graph) { ops.Iota(g, tensor.Int64, 0) }},
		{"iota-negative", "Iota", graph.ErrShape, func(g *graph.Graph) { ops.Iota(g, tensor.Int64, 0, -3) }},
		{"arange-step0", "Arange", graph.ErrInvalid, func(g *graph.Graph) { ops.Arange(g, tensor.Float32, 0, 1, 0) }},
		{"arange-inf", "must be finite", graph.ErrInvalid, func(g *graph.Graph) { ops.Arange(g, tensor.Float32, 0, math.Inf(1), 1) }},
		{"arange-bool", "not numeric", graph.ErrDType, func(g *graph.Graph) { ops.Arange(g, tensor.Bool, 0, 2, 1) }},
		{"arange-int-frac", "not an integer", graph.ErrInvalid, func(g *graph.Graph) { ops.Arange(g, tensor.Int32, 0, 2, 0.5) }},
		{"arange-int8-overflow", "overflows", graph.ErrInvalid, func(g *graph.Graph) { ops.Arange(g, tensor.Int8, 0, 300, 1) }},
		{"linspace-int", "not a float dtype", graph.ErrDType, func(g *graph.Graph) { ops.Linspace(g, tensor.Int32, 0, 1, 3, true) }},
		{"linspace-neg", "num -1 is negative", graph.ErrInvalid, func(g *graph.Graph) { ops.Linspace(g, tensor.Float32, 0, 1, -1, true) }},
		{"eye-neg", "negative", graph.ErrShape, func(g *graph.Graph) { ops.Eye(g, tensor.Float32, -1, 2, 0) }},
		{"tril-vector", "Tril(f32[3]): needs at least 2 axes", graph.ErrShape, func(g *graph.Graph) { ops.Tril(g.Input("x", tensor.Float32, 3), 0) }},
		{"stack-shapes", "Stack(f32[2], f32[3])", graph.ErrShape, func(g *graph.Graph) {
			ops.Stack(0, g.Input("a", tensor.Float32, 2), g.Input("b", tensor.Float32, 3))
		}},
		{"stack-axis", "axis 3 is out of range", graph.ErrShape, func(g *graph.Graph) { ops.Stack(3, g.Input("a", tensor.Float32, 2)) }},
		{"split-unequal", "does not divide into 3 equal sections", graph.ErrShape, func(g *graph.Graph) { ops.Split(g.Input("a", tensor.Float32, 5), 3, 0) }},
		{"split-zero", "sections 0 is not positive", graph.ErrInvalid, func(g *graph.Graph) { ops.ArraySplit(g.Input("a", tensor.Float32, 5), 0, 0) }},
		{"split-huge", "1099511627776 sections for axis 0 of length 5", graph.ErrInvalid, func(g *graph.Graph) { ops.ArraySplit(g.Input("a", tensor.Float32, 5), 1<<40, 0) }},
		{"unstack-axis", "Unstack(f32[5])", graph.ErrShape, func(g *graph.Graph) { ops.Unstack(g.Input("a", tensor.Float32, 5), 1) }},
		{"flip-axis", "Flip(f32[2,3]): axis 2 is out of range", graph.ErrShape, func(g *graph.Graph) { ops.Flip(g.Input("a", tensor.Float32, 2, 3), 2) }},
		{"slice-neg-oob", "out of bounds", graph.ErrShape, func(g *graph.Graph) { ops.Slice(g.Input("a", tensor.Float32, 4), ops.RS(1, 3, -1)) }},
		{"slice-neg-start", "out of bounds", graph.ErrShape, func(g *graph.Graph) { ops.Slice(g.Input("a", tensor.Float32, 4), ops.RS(4, ops.End, -1)) }},
		{"roll-axes", "2 shifts for 1 axes", graph.ErrInvalid, func(g *graph.Graph) { ops.RollAxes(g.Input("a", tensor.Float32, 4), []int{1, 2}, []int{0}) }},
		{"tile-neg", "negative", graph.ErrShape, func(g *graph.Graph) { ops.Tile(g.Input("a", tensor.Float32, 4), -1) }},
		{"tile-huge", "Tile(f32[4])", graph.ErrShape, func(g *graph.Graph) { ops.Tile(g.Input("a", tensor.Float32, 4), math.MaxInt/2) }},
		{"repeat-counts", "3 counts for axis 0 of length 4", graph.ErrShape, func(g *graph.Graph) { ops.Repeat(g.Input("a", tensor.Float32, 4), []int{1, 2, 3}, 0) }},
		{"repeat-neg", "count -1", graph.ErrInvalid, func(g *graph.Graph) { ops.Repeat(g.Input("a", tensor.Float32, 4), []int{-1}, 0) }},
		{"moveaxis-repeat", "repeated", graph.ErrShape, func(g *graph.Graph) { ops.MoveAxes(g.Input("a", tensor.Float32, 4, 2), []int{0, -2}, []int{0, 1}) }},
		{"diagonal-same-axis", "axis1 and axis2 are both axis 1", graph.ErrShape, func(g *graph.Graph) { ops.Diagonal(g.Input("a", tensor.Float32, 4, 2), 0, 1, -1) }},
		{"trace-vector", "Trace(f32[4]): needs at least 2 axes", graph.ErrShape, func(g *graph.Graph) { ops.Trace(g.Input("a", tensor.Float32, 4), 0, 0, 1) }},
		{"pad-empty-axis", "PadReflect(f32[0,2]): axis 0 is empty", graph.ErrShape, func(g *graph.Graph) { ops.PadReflect(g.Input("a", tensor.Float32, 0, 2), ops.PadWidth{Low: 1}) }},
		{"pad-interior", "interior padding", graph.ErrShape, func(g *graph.Graph) { ops.PadWrap(g.Input("a", tensor.Float32, 3), ops.PadWidth{Interior: 1}) }},
		{"pad-negative", "negative padding", graph.ErrShape, func(g *graph.Graph) { ops.PadEdge(g.Input("a", tensor.Float32, 3), ops.PadWidth{Low: -1}) }},
		{"pad-const-value", "PadConstant(i32[3]): value", graph.ErrDType, func(g *graph.Graph) { ops.PadConstant(g.Input("a", tensor.Int32, 3), 0.5, ops.PadWidth{Low: 1}) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := graph.New()
			c.build(g)
			err := g.Err()
			if err == nil {
				t.Fatal("no error")
			}
			var ge *graph.Error
			if !errors.As(err, &ge) || !errors.Is(err, c.kind) {
				t.Fatalf("%v: not a graph.Error of kind %v", err, c.kind)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, "rearrange_test.go") {
				t.Fatalf("error %q does not name %q and the call site", msg, c.want)
			}
		})
	}
}

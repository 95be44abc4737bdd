package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestShiftReferences checks the int64 references of the shifts against
// NumPy's rules (npy_lshift, npy_rshift: a count outside [0, width) gives
// 0, or -1 for a negative value shifted right), computed by hand.
func TestShiftReferences(t *testing.T) {
	cases := []struct {
		a, c, left, right int64
	}{
		{1, 3, 8, 0},             // 1<<3 = 8; 1>>3 = 0
		{-8, 1, -16, -4},         // arithmetic right shift keeps the sign
		{-1, 63, -1 << 63, -1},   // into the sign bit; all sign bits
		{5, 64, 0, 0},            // count = 64: 0 both ways
		{-5, 64, 0, -1},          // a negative value shifted out is -1
		{7, -1, 0, 0},            // negative count: as one >= the width
		{-7, -3, 0, -1},          // negative count, negative value
		{200, 1, 400, 100},       // a uint8 200 (zero-extended): logical
		{1 << 62, 2, 0, 1 << 60}, // bits shifted out are lost
		{-9223372036854775808, 0, -1 << 63, -1 << 63}, // count 0: unchanged
	}
	for _, c := range cases {
		if got := ops.ShiftLeft64(c.a, c.c); got != c.left {
			t.Errorf("ShiftLeft64(%d, %d) = %d, want %d", c.a, c.c, got, c.left)
		}
		if got := ops.ShiftRight64(c.a, c.c); got != c.right {
			t.Errorf("ShiftRight64(%d, %d) = %d, want %d", c.a, c.c, got, c.right)
		}
	}
	// Narrow dtypes: the int64 result wrapped to the dtype is NumPy's.
	// int8: 1<<8 -> 256 wraps to 0 (count = width); 3<<7 = 384 -> -128.
	if got := tensor.Int8.Wrap(ops.ShiftLeft64(1, 8)); got != 0 {
		t.Errorf("int8 1<<8 = %d, want 0", got)
	}
	if got := tensor.Int8.Wrap(ops.ShiftLeft64(3, 7)); got != -128 {
		t.Errorf("int8 3<<7 = %d, want -128", got)
	}
}

// TestBitwiseDTypes: the logical ops take bools and integers (promoted as
// arithmetic is), the shifts integers only; floats and mixed kinds are
// errors that name the op.
func TestBitwiseDTypes(t *testing.T) {
	g := graph.New()
	i8 := g.Input("a", tensor.Int8, 3)
	u8 := g.Input("b", tensor.Uint8, 3)
	b := g.Input("c", tensor.Bool, 3)
	for _, c := range []struct {
		n    *graph.Node
		want tensor.DType
	}{
		{ops.And(i8, i8), tensor.Int8}, {ops.Or(u8, u8), tensor.Uint8}, {ops.Xor(b, b), tensor.Bool},
		{ops.Not(u8), tensor.Uint8}, {ops.Not(b), tensor.Bool},
		{ops.And(i8, u8), tensor.Int16}, // int8 with uint8 promotes to int16
		{ops.LeftShift(i8, i8), tensor.Int8}, {ops.RightShift(u8, u8), tensor.Uint8},
	} {
		if c.n.DType() != c.want || g.Err() != nil {
			t.Errorf("%v: dtype %v, want %v (%v)", c.n, c.n.DType(), c.want, g.Err())
		}
	}
	for name, build := range map[string]func(g *graph.Graph) *graph.Node{
		"And": func(g *graph.Graph) *graph.Node {
			return ops.And(g.Input("x", tensor.Float32, 2), g.Input("y", tensor.Float32, 2))
		},
		"Xor": func(g *graph.Graph) *graph.Node {
			return ops.Xor(g.Input("x", tensor.Bool, 2), g.Input("y", tensor.Int8, 2))
		},
		"Not": func(g *graph.Graph) *graph.Node { return ops.Not(g.Input("x", tensor.Float64, 2)) },
		"LeftShift": func(g *graph.Graph) *graph.Node {
			return ops.LeftShift(g.Input("x", tensor.Bool, 2), g.Input("y", tensor.Bool, 2))
		},
		"RightShift": func(g *graph.Graph) *graph.Node {
			return ops.RightShift(g.Input("x", tensor.Float32, 2), g.Input("y", tensor.Float32, 2))
		},
	} {
		g := graph.New()
		build(g)
		err := g.Err()
		if err == nil || !errors.Is(err, graph.ErrDType) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v, want a dtype error naming %s", name, err, name)
		}
	}
	for _, op := range []graph.Op{ops.OpAnd, ops.OpOr, ops.OpXor, ops.OpNot, ops.OpLeftShift, ops.OpRightShift} {
		if opdef.Lookup(op).Differentiable() {
			t.Errorf("%v is differentiable", op)
		}
	}
}

// TestSumDTypes: ops.Sum, Prod, Cumsum and Cumprod of int8, int16 and
// uint8 are int64 (NumPy's and PyTorch's rule); int32, int64 and floats
// keep their dtype; SumTo, Cummax and the op OpSum itself keep the small
// dtypes.
func TestSumDTypes(t *testing.T) {
	g := graph.New()
	for _, c := range []struct{ in, want tensor.DType }{
		{tensor.Int8, tensor.Int64}, {tensor.Int16, tensor.Int64}, {tensor.Uint8, tensor.Int64},
		{tensor.Int32, tensor.Int32}, {tensor.Int64, tensor.Int64}, {tensor.Float32, tensor.Float32},
	} {
		x := g.Input("x"+c.in.Short(), c.in, 2, 3)
		if got := ops.Sum(x, 1).DType(); got != c.want {
			t.Errorf("Sum of %v is %v, want %v", c.in, got, c.want)
		}
		if got := ops.SumKeepDims(x).DType(); got != c.want {
			t.Errorf("SumKeepDims of %v is %v, want %v", c.in, got, c.want)
		}
		for name, y := range map[string]*graph.Node{
			"Prod": ops.Prod(x, 0), "ProdKeepDims": ops.ProdKeepDims(x), "Cumsum": ops.Cumsum(x, 1), "Cumprod": ops.Cumprod(x, 0),
		} {
			if got := y.DType(); got != c.want {
				t.Errorf("%s of %v is %v, want %v", name, c.in, got, c.want)
			}
		}
		if got := ops.Cummax(x, 1).DType(); got != c.in {
			t.Errorf("Cummax of %v is %v, want %v", c.in, got, c.in)
		}
		if got := ops.SumTo(x, tensor.Shape{3}).DType(); got != c.in {
			t.Errorf("SumTo of %v is %v, want %v", c.in, got, c.in)
		}
		if got := ops.Apply(ops.OpSum, opdef.AxesAttr{Axes: []int{0}}, x).DType(); got != c.in {
			t.Errorf("OpSum of %v is %v, want %v", c.in, got, c.in)
		}
	}
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
}

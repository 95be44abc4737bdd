package cudagen

import (
	"strings"
	"testing"

	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestTable checks the table against the declarations: every declared op
// has a row, of its kind (an expression for an elementwise op, the
// arithmetic for a reduction, a generator for the others), and every row
// is a declared op. Whether each expression renders, compiles and
// computes the reference in every dtype the declarations admit is
// exec/cuda's TestElementwiseTable.
func TestTable(t *testing.T) {
	var missing []string
	for _, d := range opdef.Defs() {
		e := table[d.Op]
		switch {
		case e == nil:
			missing = append(missing, d.Name+" ("+d.Kind.String()+"): no row")
		case e.check == nil || e.gen == nil:
			missing = append(missing, d.Name+": a row without check or gen")
		case (d.Kind == opdef.Elementwise) != (e.expr != nil):
			missing = append(missing, d.Name+" ("+d.Kind.String()+"): an expression row must be exactly an elementwise op's")
		case (d.Kind == opdef.Reduction) != (e.red != nil):
			missing = append(missing, d.Name+" ("+d.Kind.String()+"): a reduction row must be exactly a reduction's")
		}
	}
	if len(missing) > 0 {
		t.Errorf("ops of the declarations (internal/opdef) without their row in cudagen's table:\n%s", strings.Join(missing, "\n"))
	}
	for op := range table {
		if opdef.Lookup(op) == nil {
			t.Errorf("row for %v, which is not a declared op", op)
		}
	}
	if len(table) != len(opdef.Defs()) {
		t.Errorf("%d rows for %d declared ops", len(table), len(opdef.Defs()))
	}
}

// TestRender checks the templates' placeholders on a few ops, with the
// expressions written out by hand.
func TestRender(t *testing.T) {
	f32, f64, i32, i64, b := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64, tensor.Bool
	c64, c128 := tensor.Complex64, tensor.Complex128
	cases := []struct {
		o    opdef.FusedOp
		dts  []tensor.DType
		want string // "" for an error
	}{
		{opdef.FusedOp{Op: ops.OpTanh, DType: f32}, []tensor.DType{f32}, "tanhf(a0)"},
		{opdef.FusedOp{Op: ops.OpTanh, DType: f64}, []tensor.DType{f64}, "tanh(a0)"},
		{opdef.FusedOp{Op: ops.OpAbs, DType: f32}, []tensor.DType{f32}, "fabsf(a0)"},
		{opdef.FusedOp{Op: ops.OpAbs, DType: i64}, []tensor.DType{i64}, "loom_abs_i64(a0)"},
		{opdef.FusedOp{Op: ops.OpAdd, DType: f64}, []tensor.DType{f64, f64}, "a0 + a1"},
		{opdef.FusedOp{Op: ops.OpAdd, DType: i32}, []tensor.DType{i32, i32}, "loom_add_i32(a0, a1)"},
		{opdef.FusedOp{Op: ops.OpPow, DType: f32}, []tensor.DType{f32, f32}, "loom_pow_f32(a0, a1)"},
		{opdef.FusedOp{Op: ops.OpMaximum, DType: i64}, []tensor.DType{i64, i64}, "(a0 > a1 ? a0 : a1)"},
		{opdef.FusedOp{Op: ops.OpSigmoid, DType: f64}, []tensor.DType{f64}, "loom_sigmoid_f64(a0)"},
		{opdef.FusedOp{Op: ops.OpSign, DType: i64}, []tensor.DType{i64}, "(long long)(a0 > 0 ? 1 : (a0 == 0 ? 0 : -1))"},
		{opdef.FusedOp{Op: ops.OpRelu, DType: i64}, []tensor.DType{i64}, "(a0 > 0 ? a0 : 0LL)"},
		{opdef.FusedOp{Op: ops.OpLess, DType: b}, []tensor.DType{i32, i32}, "(unsigned char)(a0 < a1)"},
		{opdef.FusedOp{Op: ops.OpWhere, DType: i64}, []tensor.DType{b, i64, i64}, "(a0 != 0 ? a1 : a2)"},
		{opdef.FusedOp{Op: ops.OpNot, DType: b}, []tensor.DType{b}, "(unsigned char)(a0 ^ 1)"},
		{opdef.FusedOp{Op: ops.OpCast, DType: tensor.Float16}, []tensor.DType{i32}, "loom_f32_to_f16((float)a0)"},
		{opdef.FusedOp{Op: ops.OpStopGradient, DType: tensor.BFloat16}, []tensor.DType{tensor.BFloat16}, "a0"},
		// Complex: the prelude's operators and helpers (complex.go).
		{opdef.FusedOp{Op: ops.OpMul, DType: c64}, []tensor.DType{c64, c64}, "a0 * a1"},
		{opdef.FusedOp{Op: ops.OpDiv, DType: c128}, []tensor.DType{c128, c128}, "loom_div_c128(a0, a1)"},
		{opdef.FusedOp{Op: ops.OpExp, DType: c64}, []tensor.DType{c64}, "loom_exp_c64(a0)"},
		{opdef.FusedOp{Op: ops.OpAbs, DType: f64}, []tensor.DType{c128}, "loom_abs_c128(a0)"},
		{opdef.FusedOp{Op: ops.OpNotEqual, DType: b}, []tensor.DType{c64, c64}, "(unsigned char)(a0 != a1)"},
		{opdef.FusedOp{Op: ops.OpWhere, DType: c128}, []tensor.DType{b, c128, c128}, "(a0 != 0 ? a1 : a2)"},
		{opdef.FusedOp{Op: ops.OpCast, DType: c128}, []tensor.DType{tensor.Float16}, "loom_complex_f64((double)loom_f16_to_f32(a0), 0.0)"},
		{opdef.FusedOp{Op: ops.OpCast, DType: c64}, []tensor.DType{c128}, "loom_c128_to_c64(a0)"},
		{opdef.FusedOp{Op: ops.OpCast, DType: i32}, []tensor.DType{c64}, "loom_d2i32((double)(a0).re)"},
		{opdef.FusedOp{Op: ops.OpCast, DType: tensor.BFloat16}, []tensor.DType{c128}, "loom_f32_to_bf16((float)(a0).re)"},
		{opdef.FusedOp{Op: ops.OpCast, DType: b}, []tensor.DType{c64}, "(unsigned char)(loom_c128_of(a0) != loom_complex_f64(0.0, 0.0))"},
		// Complex numbers are not ordered.
		{opdef.FusedOp{Op: ops.OpLess, DType: b}, []tensor.DType{c64, c64}, ""},
		{opdef.FusedOp{Op: ops.OpMaximum, DType: c64}, []tensor.DType{c64, c64}, ""},
		// No variant: a float function of integers, logic of floats.
		{opdef.FusedOp{Op: ops.OpTanh, DType: i32}, []tensor.DType{i32}, ""},
		{opdef.FusedOp{Op: ops.OpAnd, DType: f32}, []tensor.DType{f32, f32}, ""},
		// Not elementwise, or the wrong number of operands.
		{opdef.FusedOp{Op: ops.OpSum, DType: f32}, []tensor.DType{f32}, ""},
		{opdef.FusedOp{Op: ops.OpAdd, DType: f32}, []tensor.DType{f32}, ""},
	}
	for _, c := range cases {
		args := []string{"a0", "a1", "a2"}[:len(c.dts)]
		got, err := opExpr(c.o, c.dts, args)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%v%v = %q, want an error", c.o.Op, c.dts, got)
		case c.want == "" && !strings.Contains(err.Error(), c.o.Op.String()):
			t.Errorf("%v%v: error %v does not name the op", c.o.Op, c.dts, err)
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("%v%v = %q, %v; want %q", c.o.Op, c.dts, got, err, c.want)
		}
	}
}

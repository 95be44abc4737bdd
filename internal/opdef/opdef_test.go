package opdef_test

import (
	"testing"

	"github.com/loomgraph/loom/internal/opdef"
	_ "github.com/loomgraph/loom/ops" // declares the ops
	"github.com/loomgraph/loom/tensor"
)

// TestEveryDeclarationIsComplete lists every op whose declaration lacks a
// part the rest of loom relies on: a doc line (the README's table), a
// reference evaluator (the conformance oracle and constant folding; the
// compiler's Fused groups are evaluated through their ops), sane test
// domains, and a gradient rule's consistency with the kind.
func TestEveryDeclarationIsComplete(t *testing.T) {
	defs := opdef.Defs()
	if len(defs) < 40 {
		t.Fatalf("only %d ops are declared", len(defs))
	}
	for _, d := range defs {
		if d.Doc == "" {
			t.Errorf("%s: no Doc line", d.Name)
		}
		if !d.HasRef() && d.Op != opdef.OpFused {
			t.Errorf("%s: no reference evaluator (F64/I64 for an elementwise op, else Ref)", d.Name)
		}
		if opdef.Lookup(d.Op) != d || opdef.ByName(d.Name) != d {
			t.Errorf("%s: not found under its code %d or its name", d.Name, d.Op)
		}
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Int32} {
			for i := 0; i < max(d.Arity, 1); i++ {
				if iv := d.SampleDomain(i, dt); !(iv.Lo < iv.Hi) {
					t.Errorf("%s: empty test domain %v for operand %d of %v", d.Name, iv, i, dt)
				}
			}
		}
	}
}

// TestRegisterRefusesIncompleteOrDuplicate: registration panics (a bug in
// loom, at initialisation) for a declaration without rules and for a name
// used twice.
func TestRegisterRefusesIncompleteOrDuplicate(t *testing.T) {
	for name, d := range map[string]*opdef.Def{
		"incomplete": {Name: "NoRules", Kind: opdef.Elementwise},
		"duplicate":  {Name: "Add", Kind: opdef.Elementwise, DType: opdef.SameDType(opdef.Numeric), Shape: opdef.ShapeSame},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			opdef.Register(d)
		}()
	}
}

// TestReferenceIntegersExact: the reference evaluator holds int64 values
// exactly above 2^53, where float64 cannot: (2^62 + 1) - 2^62 is 1 (hand),
// and an int32 sum wraps as two's complement: MaxInt32 + 1 = MinInt32.
func TestReferenceIntegersExact(t *testing.T) {
	add := opdef.ByName("Add")
	sub := opdef.ByName("Sub")
	if add == nil || sub == nil {
		t.Fatal("Add or Sub is not declared")
	}
	if got := sub.I64([]int64{1<<62 + 1, 1 << 62}); got != 1 {
		t.Errorf("Sub(2^62+1, 2^62) = %d, want 1", got)
	}
	v := opdef.NewValue(tensor.Int32, tensor.Shape{1})
	v.I[0] = add.I64([]int64{1<<31 - 1, 1})
	v.Round()
	if v.I[0] != -1<<31 {
		t.Errorf("int32 MaxInt32+1 = %d, want %d", v.I[0], -1<<31)
	}
}

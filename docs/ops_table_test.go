package docs

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	_ "github.com/loomgraph/loom/ops" // registers the ops
	"github.com/loomgraph/loom/tensor"
)

var update = flag.Bool("update", false, "rewrite README.md's generated op table")

// The op table of README.md is generated from the ops' declarations
// (internal/opdef): one row per op, grouped by kind in declaration order,
// with the dtypes its rule admits, whether it has a gradient, and its
// one-line semantics.
const (
	tableBegin = "<!-- op table: generated from the op declarations by `go test ./docs -run TestOpTable -update`; do not edit -->"
	tableEnd   = "<!-- end of the op table -->"
)

// opTable renders the table.
func opTable() string {
	var b strings.Builder
	b.WriteString("| op | kind | dtypes | gradient | semantics |\n|---|---|---|---|---|\n")
	defs := opdef.Defs()
	sort.SliceStable(defs, func(i, j int) bool { return defs[i].Kind < defs[j].Kind })
	for _, d := range defs {
		grad := "no"
		if d.Differentiable() {
			grad = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", d.Name, d.Kind, admitted(d), grad, strings.ReplaceAll(d.Doc, "|", "\\|"))
	}
	return b.String()
}

// admitted lists the dtypes d's rule accepts for operands all of one
// dtype ("any" when the rule needs an attribute to say).
func admitted(d *opdef.Def) string {
	var names []string
	for _, dt := range tensor.DTypes() {
		n := max(d.Arity, 1)
		in := make([]tensor.DType, n)
		for i := range in {
			in[i] = dt
		}
		if d.Arity == 3 { // Where: a bool condition
			in[0] = tensor.Bool
		}
		var attr graph.Attr
		if d.Name == "Iota" { // no operands: the attribute names the dtype
			in, attr = nil, opdef.IotaAttr{DType: dt, Shape: tensor.Shape{1}}
		}
		if d.Kind == opdef.Random { // operand: the key; the attribute names the dtype
			in, attr = []tensor.DType{tensor.Int32}, opdef.RandomAttr{DType: dt, Shape: tensor.Shape{1}, P: opdef.Bool(dt == tensor.Bool)}
		}
		_, err := d.DType(in, attr)
		if err != nil && n >= 2 {
			// Operand 1 may be an index or offsets operand (i64): Repeat,
			// SumRuns, the indexing ops.
			in = make([]tensor.DType, n)
			for i := range in {
				in[i] = dt
			}
			in[1] = tensor.Int64
			_, err = d.DType(in, attr)
		}
		if err == nil {
			names = append(names, dt.Short())
		}
	}
	if len(names) == 0 {
		return "any"
	}
	return strings.Join(names, " ")
}

// TestOpTable fails when README.md's op table differs from the
// declarations; -update rewrites it.
func TestOpTable(t *testing.T) {
	src, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(src, []byte(tableBegin)), bytes.Index(src, []byte(tableEnd))
	if i < 0 || j < i {
		t.Fatalf("README.md has no generated op table (the markers %q ... %q)", tableBegin, tableEnd)
	}
	want := tableBegin + "\n\n" + opTable() + "\n" + tableEnd
	got := string(src[i : j+len(tableEnd)])
	if got == want {
		return
	}
	if *update {
		out := append(append(append([]byte{}, src[:i]...), want...), src[j+len(tableEnd):]...)
		if err := os.WriteFile("../README.md", out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's op table is stale: run go test ./docs -run TestOpTable -update\ngot:\n%s\nwant:\n%s", got, want)
}

package onnx

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/ONNX.md's generated operator table")

const (
	tableBegin = "<!-- operator table: generated from onnx's operator definitions by `go test ./onnx -run TestOperatorTable -update`; do not edit -->"
	tableEnd   = "<!-- end of the operator table -->"
	specURL    = "https://github.com/onnx/onnx/blob/rel-1.12.0/docs/"
)

// operatorTable is the markdown table of every imported operator (its
// spec section and the attributes it takes) and of the operators refused
// on purpose, with the reason.
func operatorTable() string {
	var b strings.Builder
	b.WriteString("| ONNX operator (spec) | attributes imported |\n|---|---|\n")
	names := make([]string, 0, len(operators))
	for n := range operators {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := operators[n]
		attrs := append([]string(nil), d.attrs...)
		sort.Strings(attrs)
		a := "-"
		if len(attrs) > 0 {
			a = "`" + strings.Join(attrs, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| [%s](%s%s) | %s |\n", n, specURL, d.spec, a)
	}
	b.WriteString("\nRefused on purpose (an import error wrapping `ErrUnsupported` that says why):\n\n| ONNX operator | why |\n|---|---|\n")
	names = names[:0]
	for n := range outOfScope {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "| %s | %s |\n", n, outOfScope[n])
	}
	return b.String()
}

// TestOperatorTable fails when docs/ONNX.md's table differs from the
// operator definitions.
func TestOperatorTable(t *testing.T) {
	for n, d := range operators {
		if d.spec == "" || !strings.HasPrefix(d.spec, "Operators.md#") {
			t.Errorf("operator %s has no spec section", n)
		}
		if _, both := outOfScope[n]; both {
			t.Errorf("operator %s is both imported and out of scope", n)
		}
	}
	const path = "../docs/ONNX.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated table (the markers %q ... %q)", path, tableBegin, tableEnd)
	}
	want := operatorTable()
	got := s[i+len(tableBegin)+1 : j]
	if got == want {
		return
	}
	if *update {
		s = s[:i+len(tableBegin)+1] + want + s[j:]
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's operator table is stale: run go test ./onnx -run TestOperatorTable -update", path)
}

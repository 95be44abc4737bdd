// Package docs holds loom's documentation (the files next to this one and
// the README at the repository root) and the tests that keep its Go code
// true: every ```go block is a complete program that compiles against this
// working tree, unless its fence says "```go fragment".
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// block is one fenced Go block of a Markdown file.
type block struct {
	file     string // relative to the repository root
	line     int    // of the opening fence
	fragment bool   // the fence says "go fragment"
	code     string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// goBlocks returns the ```go blocks of a Markdown file, in order. A block
// opens with a line starting with ``` and closes with a line that is only
// ``` (as in CommonMark); the opening fence's first word is the language,
// and a second word "fragment" marks a Go block that is not a complete
// program. A fence with a language inside a Go block is an error (a
// forgotten closing fence).
func goBlocks(name string, src []byte) ([]block, error) {
	var (
		blocks []block
		cur    *block
		body   strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(src))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "```") {
			if cur != nil {
				body.WriteString(line)
				body.WriteByte('\n')
			}
			continue
		}
		info := strings.Fields(strings.TrimPrefix(line, "```"))
		switch {
		case cur != nil: // a closing fence
			if len(info) != 0 {
				return nil, fmt.Errorf("%s:%d: a fence opens inside the block of line %d", name, n, cur.line)
			}
			cur.code = body.String()
			blocks = append(blocks, *cur)
			cur = nil
			body.Reset()
		case len(info) > 0 && info[0] == "go":
			cur = &block{file: name, line: n}
			switch {
			case len(info) == 1:
			case len(info) == 2 && info[1] == "fragment":
				cur.fragment = true
			default:
				return nil, fmt.Errorf("%s:%d: fence %q: want ```go or ```go fragment", name, n, line)
			}
		default: // another language: skip to its closing fence
			for sc.Scan() {
				n++
				if strings.TrimSpace(sc.Text()) == "```" {
					break
				}
			}
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the block is never closed", name, cur.line)
	}
	return blocks, sc.Err()
}

// docFiles returns README.md and docs/*.md, relative to the repository
// root, which is "..".
func docFiles(t *testing.T) []string {
	t.Helper()
	mds, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"README.md"}
	for _, md := range mds {
		files = append(files, filepath.Join("docs", md))
	}
	return files
}

func allBlocks(t *testing.T) []block {
	t.Helper()
	var all []block
	for _, f := range docFiles(t) {
		src, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := goBlocks(f, src)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, bs...)
	}
	return all
}

// TestGoBlocksCompile writes every complete program of the documentation
// into its own directory of a scratch module that requires loom from this
// working tree, then builds and vets them all with the go command. A block
// that is not marked as a fragment must start with "package main".
func TestGoBlocksCompile(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	blocks := allBlocks(t)
	tmp := t.TempDir()
	gomod := "module loom.test/docblocks\n\ngo 1.25.0\n\n" +
		"require github.com/loomgraph/loom v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/loomgraph/loom => " + root + "\n"
	if err := os.WriteFile(filepath.Join(tmp, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	// loom's own go.sum holds the checksums of everything loom needs.
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	programs := 0
	isProgram := regexp.MustCompile(`(?m)\A(\s*//[^\n]*\n)*\s*package main\b`)
	for _, b := range blocks {
		if b.fragment {
			continue
		}
		if !isProgram.MatchString(b.code) {
			t.Errorf("%s: a ```go block that is not a complete program (package main): complete it, or mark its fence ```go fragment", b)
			continue
		}
		// The directory names the block, so that compiler messages point
		// at it: "README.md_L42/main.go:7:2: ...".
		dir := filepath.Join(tmp, strings.ReplaceAll(b.file, "/", "_")+fmt.Sprintf("_L%d", b.line))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.code), 0o644); err != nil {
			t.Fatal(err)
		}
		programs++
	}
	if programs == 0 {
		t.Fatalf("no complete program in %v: the README's example must be one", docFiles(t))
	}
	for _, args := range [][]string{{"build", "-o", os.DevNull, "./..."}, {"vet", "./..."}} {
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = tmp
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s in the scratch module of the documentation's programs (directories named file_Lline): %v\n%s",
				strings.Join(args, " "), err, out)
		}
	}
}

// TestReadmeProgramIsExample: the README's first complete program (its
// first Go block not marked as a fragment) is examples/readme/main.go,
// byte for byte; that program's Example (in the examples module) checks
// its output.
func TestReadmeProgramIsExample(t *testing.T) {
	var prog *block
	for _, b := range allBlocks(t) {
		if b.file == "README.md" && !b.fragment {
			prog = &b
			break
		}
	}
	if prog == nil {
		t.Fatal("README.md has no complete Go program")
	}
	want, err := os.ReadFile(filepath.Join("..", "examples", "readme", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if got := prog.code; got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		g, w := "(end)", "(end)"
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		t.Errorf("%s differs from examples/readme/main.go, first at line %d of the block:\n README: %q\n file:   %q\ncopy the file into the README (or the block into the file)", prog, i+1, g, w)
	}
}

// TestGoBlocks checks the block parser on a small document.
func TestGoBlocks(t *testing.T) {
	doc := "text\n```go\npackage main\n```\n\n```sh\n```go\n```\n```go fragment\nx := 1\n```\n"
	bs, err := goBlocks("d.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	// The "```go" line is part of the sh block, which the next line closes.
	if len(bs) != 2 || bs[0].line != 2 || bs[0].code != "package main\n" || bs[0].fragment ||
		bs[1].line != 9 || bs[1].code != "x := 1\n" || !bs[1].fragment {
		t.Errorf("blocks %+v", bs)
	}
	for _, bad := range []string{"```go\nx\n", "```go frag\n```\n", "```go\n```go\n```\n"} {
		if _, err := goBlocks("d.md", []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

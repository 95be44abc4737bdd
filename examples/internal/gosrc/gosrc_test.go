package gosrc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRoot writes files (path under src/ -> content) into a temporary
// GOROOT and returns it.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		p = filepath.Join(root, "src", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// tree is a small GOROOT/src. The files Load reads are numbered in the
// order it must read them, lexical path order worked out by hand
// (os.ReadDir sorts by name, so the folder b/ comes before b.go, '.'
// sorts before '_', and io/fs/ before io/io.go); each holds a letter of
// its own, a to u (a twice in the first, so that bytes and files
// differ). The others are tests, testdata, vendored code and a file that
// is not Go, which Load must skip; their bytes (! # $ %) occur nowhere
// else, so a skipped file read by mistake would show in the vocabulary.
var tree = map[string]string{
	"a.go":                             "aa", // 1
	"a_test.go":                        "!",
	"b/b.go":                           "b", // 2
	"b/b_test.go":                      "!",
	"b/c.go":                           "c", // 3
	"b/doc.txt":                        "%",
	"b/testdata/t.go":                  "#",
	"b.go":                             "d", // 4
	"cmd/go/main.go":                   "e", // 5
	"cmd/go/testdata/script.go":        "#",
	"cmd/go/work.go":                   "f", // 6
	"cmd/vendor/golang.org/x/mod/m.go": "$",
	"cmd/x.go":                         "g", // 7
	"errors/errors.go":                 "h", // 8
	"errors/wrap.go":                   "i", // 9
	"fmt/doc.go":                       "j", // 10
	"fmt/format.go":                    "k", // 11
	"fmt/print.go":                     "l", // 12
	"fmt/scan.go":                      "m", // 13
	"io/fs/fs.go":                      "n", // 14
	"io/io.go":                         "o", // 15
	"net/http/client.go":               "p", // 16
	"net/http/server.go":               "q", // 17
	"net/net.go":                       "r", // 18
	"os/file.go":                       "s", // 19
	"os/file_test.go":                  "!",
	"os/file_unix.go":                  "t", // 20: the validation split
	"vendor/golang.org/x/net/n.go":     "$",
	"z.go":                             "u", // 21
	"z.go.orig":                        "%",
}

// decode maps tokens back to bytes.
func decode(c *Corpus, toks []byte) string {
	b := make([]byte, len(toks))
	for i, t := range toks {
		b[i] = c.Vocab[t]
	}
	return string(b)
}

// checkCorpus compares c with the text and vocabulary worked out by hand
// and checks that IDs inverts Vocab.
func checkCorpus(t *testing.T, c *Corpus, root string, files int, train, val, vocab string) {
	t.Helper()
	if c.Files != files || c.Root != filepath.Join(root, "src") {
		t.Errorf("Files %d, Root %q; want %d and %q", c.Files, c.Root, files, filepath.Join(root, "src"))
	}
	if string(c.Vocab) != vocab {
		t.Errorf("vocabulary %q, want %q", c.Vocab, vocab)
	}
	if got := decode(c, c.Train); got != train {
		t.Errorf("training text %q, want %q", got, train)
	}
	if got := decode(c, c.Val); got != val {
		t.Errorf("validation text %q, want %q", got, val)
	}
	for b, id := range c.IDs {
		if want := strings.IndexByte(vocab, byte(b)); id != want {
			t.Errorf("IDs[%q] = %d, want %d", b, id, want)
		}
	}
}

// TestLoad: all 21 files of tree are read, the 20th (os/file_unix.go,
// "t") held out, the others trained on in order; the vocabulary is the
// letters a to u, the skipped files' bytes absent (ID -1).
func TestLoad(t *testing.T) {
	root := fakeRoot(t, tree)
	c, err := Load(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkCorpus(t, c, root, 21, "aabcdefghijklmnopqrsu", "t", "abcdefghijklmnopqrstu")
}

// TestLoadLimit: the limit counts bytes, not files, and Load stops after
// the file that reaches it. The 20 files up to os/file_unix.go hold 21
// bytes (a.go has two), so a limit of 21 reads them and stops before
// z.go ("u" is then not in the vocabulary); 22 or more reads everything;
// 20 stops after os/file.go, the 19th, and leaves no validation file.
func TestLoadLimit(t *testing.T) {
	root := fakeRoot(t, tree)
	c, err := Load(root, 21)
	if err != nil {
		t.Fatal(err)
	}
	checkCorpus(t, c, root, 20, "aabcdefghijklmnopqrs", "t", "abcdefghijklmnopqrst")

	if c, err = Load(root, 1000); err != nil {
		t.Fatal(err)
	}
	checkCorpus(t, c, root, 21, "aabcdefghijklmnopqrsu", "t", "abcdefghijklmnopqrstu")

	_, err = Load(root, 20)
	if err == nil || !strings.Contains(err.Error(), "too few .go files (19)") {
		t.Errorf("Load with a limit of 20 bytes: error %v, want too few .go files (19)", err)
	}
}

// TestLoadTooFew: 19 Go files and their 19 tests make no validation
// split (tests are not counted); a root without src is an error too.
func TestLoadTooFew(t *testing.T) {
	files := map[string]string{}
	for i := range 19 {
		files[string(rune('a'+i))+".go"] = "x"
		files[string(rune('a'+i))+"_test.go"] = "y"
	}
	_, err := Load(fakeRoot(t, files), 0)
	if err == nil || !strings.Contains(err.Error(), "too few .go files (19)") {
		t.Errorf("19 files: error %v, want too few .go files (19)", err)
	}
	if _, err := Load(t.TempDir(), 0); err == nil {
		t.Error("no error for a GOROOT without src")
	}
}

// TestNewCorpus: the tokens of "abcde" are 0 to 4, every other byte's ID
// is -1, and Encode maps bytes to tokens in place.
func TestNewCorpus(t *testing.T) {
	c := NewCorpus([]byte("abcde"))
	for b, id := range c.IDs {
		if want := strings.IndexByte("abcde", byte(b)); id != want {
			t.Errorf("IDs[%q] = %d, want %d", b, id, want)
		}
	}
	b := []byte("cabed")
	if got := c.Encode(b); string(got) != "\x02\x00\x01\x04\x03" || &got[0] != &b[0] {
		t.Errorf("Encode(cabed) = %v, want [2 0 1 4 3] in place", got)
	}
	mustPanic(t, "Encode of a byte not in the vocabulary", func() { c.Encode([]byte("abz")) })
	mustPanic(t, "NewCorpus with a repeated byte", func() { NewCorpus([]byte("aba")) })
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

// TestGoroot: the answer is a folder with a src folder, the one Load
// reads.
func TestGoroot(t *testing.T) {
	root, err := Goroot()
	if err != nil {
		t.Skip(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "src")); err != nil || !fi.IsDir() {
		t.Errorf("Goroot() = %q, which has no src folder (%v)", root, err)
	}
}

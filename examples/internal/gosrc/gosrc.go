// Package gosrc is the text the language-model examples (charlm, grulm)
// train on: the Go standard library's own source, the .go files under
// $(go env GOROOT)/src with tests, testdata and vendored code left out,
// as a sequence of byte tokens. It is on every machine that can build the
// examples, so they need no download.
//
// The files are read in lexical path order and every HeldOut-th of them
// goes to the validation split, the others to training. The split is a
// function of the file list alone, not of a random draw or of how much is
// read, so it is the same on every machine with the same Go release, and
// a validation loss can be compared between runs, devices and programs; a
// new Go release changes the files, and with them the split and the
// numbers.
//
// The vocabulary is the byte values that occur, in increasing order,
// and a token is the index of its byte in it: Go source is mostly ASCII,
// and the UTF-8 of comments and strings adds the rest (with Go 1.26, 110
// byte values in the first MB, 176 in all 49 MB of it). [Batcher] draws
// training windows from a split.
package gosrc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// HeldOut is the validation share: the HeldOut-th, 2·HeldOut-th, ...
// file read goes to the validation split.
const HeldOut = 20

// Corpus is the training and validation text as tokens, and the
// vocabulary that maps tokens to bytes and back.
type Corpus struct {
	Train, Val []byte   // token ids (indices into Vocab), not raw bytes
	Vocab      []byte   // Vocab[id] is the byte of token id
	IDs        [256]int // IDs[b] is the token of byte b, -1 if b is not in Vocab
	Files      int      // the number of files read
	Root       string   // the directory read: GOROOT/src
}

// Goroot returns $(go env GOROOT): runtime.GOROOT when it has a src
// folder, else the go command's answer.
func Goroot() (string, error) {
	if r := runtime.GOROOT(); r != "" { //nolint:staticcheck // the toolchain's root is what we want
		if fi, err := os.Stat(filepath.Join(r, "src")); err == nil && fi.IsDir() {
			return r, nil
		}
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("finding GOROOT: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Load reads every .go file under root/src except tests (_test.go),
// testdata and vendor folders, in lexical path order (filepath.WalkDir's),
// and splits them: every HeldOut-th file read goes to the validation
// split, the others to training. With limit > 0 it stops after the file
// that brings the text read to limit bytes or more (so it reads the same
// first files as a full read, and the same split of them); with limit 0
// it reads all. The vocabulary is built from both splits. It is an error
// if either split is empty: fewer than HeldOut files, or a limit that
// stops before the HeldOut-th.
func Load(root string, limit int) (*Corpus, error) {
	src := filepath.Join(root, "src")
	var train, val []byte
	n := 0
	errLimit := errors.New("limit")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if n%HeldOut == 0 {
			val = append(val, b...)
		} else {
			train = append(train, b...)
		}
		if limit > 0 && len(train)+len(val) >= limit {
			return errLimit
		}
		return nil
	})
	if err != nil && err != errLimit {
		return nil, err
	}
	if len(train) == 0 || len(val) == 0 {
		return nil, fmt.Errorf("%s: too few .go files (%d) for a training and a validation split", src, n)
	}
	var seen [256]bool
	for _, b := range train {
		seen[b] = true
	}
	for _, b := range val {
		seen[b] = true
	}
	var vocab []byte
	for b, ok := range seen {
		if ok {
			vocab = append(vocab, byte(b))
		}
	}
	c := NewCorpus(vocab)
	c.Files, c.Root = n, src
	c.Train, c.Val = c.Encode(train), c.Encode(val)
	return c, nil
}

// NewCorpus returns a Corpus with the vocabulary vocab (token i is the
// byte vocab[i]), the IDs that invert it (-1 for the bytes not in it),
// and no text: for tests, which want a small known vocabulary. It panics
// if a byte occurs twice in vocab.
func NewCorpus(vocab []byte) *Corpus {
	c := &Corpus{Vocab: vocab}
	for i := range c.IDs {
		c.IDs[i] = -1
	}
	for id, b := range vocab {
		if c.IDs[b] >= 0 {
			panic(fmt.Sprintf("gosrc: byte %q twice in the vocabulary %q", b, vocab))
		}
		c.IDs[b] = id
	}
	return c
}

// Encode replaces the bytes of b by their tokens, in place, and returns
// b. It panics on a byte that is not in the vocabulary.
func (c *Corpus) Encode(b []byte) []byte {
	for i, x := range b {
		id := c.IDs[x]
		if id < 0 {
			panic(fmt.Sprintf("gosrc: byte %q is not in the vocabulary", x))
		}
		b[i] = byte(id)
	}
	return b
}

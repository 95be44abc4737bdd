// Command templatematch finds a small template in a large noisy image by
// normalised cross-correlation (NCC) computed with FFTs, what the seed
// library tme does for cryo-EM template matching, and checks the result
// against the same NCC computed directly (a convolution).
//
// For every image size it makes a synthetic scene (a smooth random field
// of blobs and ridges), cuts the template out of the clean scene at a
// random place, adds Gaussian noise to the scene, and computes
//
//	ncc[y, x] = Σ (f[y+u, x+v] − μ(y, x)) t₀[u, v] / (σ(y, x) ‖t₀‖ √m)
//
// over every valid placement, where t₀ is the template minus its mean, m
// its number of pixels, and μ, σ the image's mean and standard deviation
// under the window. Both paths are one loom graph each:
//
//   - FFT: the correlation and the window sums Σf and Σf² are products of
//     spectra: IRFFT2(RFFT2(f) · conj(RFFT2(t))) over a padded size that
//     FFTs well (5-smooth), cropped to the valid placements;
//   - direct: ops.Conv (a cross-correlation, as PyTorch's) of the image with
//     t₀ and with a window of ones.
//
// It prints, per size, where each path finds the peak (and where the
// template really is), the largest difference between the two NCC maps,
// the median time of each path and the FFT path's speed-up, and writes
// match.png (the noisy image of the last size with the match framed) to
// -out. The last line is "all matches found" or says which missed.
package main

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loomgraph/loom/examples/internal/device"
	"github.com/loomgraph/loom/examples/internal/report"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// problem is one image size and template size.
type problem struct{ size, tsize int }

type config struct {
	problems []problem
	noise    float64 // the noise's standard deviation (the scene's is 1)
	repeats  int     // timed runs of each path (the median is reported)
	device   string
	seed     uint64
	outDir   string // where match.png goes ("": nowhere)
}

func main() {
	report.Main("templatematch", parseFlags, func(stdout io.Writer, c config, _ bool) error {
		_, err := run(stdout, c)
		return err
	})
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	c := config{}
	fs := flag.NewFlagSet("templatematch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "256:32,512:48,1024:64", "image:template sizes (square, in pixels), comma-separated")
	fs.Float64Var(&c.noise, "noise", 1, "standard deviation of the Gaussian noise added to the image (the scene's is 1)")
	fs.IntVar(&c.repeats, "repeats", 5, "timed runs of each path (the median is reported)")
	fs.StringVar(&c.device, "device", "", device.Usage)
	fs.Uint64Var(&c.seed, "seed", 1, "random seed (scene, template place, noise)")
	fs.StringVar(&c.outDir, "out", ".", "directory for match.png (empty: do not write it)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, s := range strings.Split(*sizes, ",") {
		a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
		n, err1 := strconv.Atoi(a)
		m, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || m < 2 || n < 2*m {
			return c, fmt.Errorf("bad -sizes entry %q: want image:template with image >= 2*template >= 4", s)
		}
		c.problems = append(c.problems, problem{n, m})
	}
	if c.repeats < 1 {
		return c, fmt.Errorf("-repeats %d: want at least 1", c.repeats)
	}
	return c, nil
}

// outcome is what one problem gives.
type outcome struct {
	problem
	truth, fft, direct [2]int    // (x, y) of the template, and of each path's peak
	peak               float64   // the FFT path's NCC at its peak
	maxDiff            float64   // max |ncc_fft − ncc_direct|
	tFFT, tDirect      float64   // median seconds per run
	img                []float32 // the noisy image
	sd                 float64   // its standard deviation
}

func run(out io.Writer, c config) ([]outcome, error) {
	be, err := device.Open(c.device)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	fmt.Fprintf(out, "device: %s\n", be.Device())
	rng := rand.New(rand.NewPCG(c.seed, 0x7e3a))
	var res []outcome
	missed := 0
	for _, p := range c.problems {
		o, err := solve(be, p, c, rng)
		if err != nil {
			return res, err
		}
		res = append(res, o)
		fmt.Fprintf(out, "image %dx%d, template %dx%d: FFT finds (%d, %d) with NCC %.3f, direct (%d, %d), truth (%d, %d); max |NCC difference| %.1e; FFT %s, direct %s: %.1fx\n",
			p.size, p.size, p.tsize, p.tsize, o.fft[0], o.fft[1], o.peak, o.direct[0], o.direct[1], o.truth[0], o.truth[1],
			o.maxDiff, dur(o.tFFT), dur(o.tDirect), o.tDirect/o.tFFT)
		if o.fft != o.truth || o.direct != o.truth {
			missed++
		}
	}
	if c.outDir != "" && len(res) > 0 {
		last := res[len(res)-1]
		path := filepath.Join(c.outDir, "match.png")
		if err := writePNG(path, last); err != nil {
			return res, err
		}
		fmt.Fprintf(out, "wrote %s\n", path)
	}
	if missed > 0 {
		fmt.Fprintf(out, "%d of %d matches missed\n", missed, len(res))
		return res, nil
	}
	fmt.Fprintln(out, "all matches found")
	return res, nil
}

func dur(s float64) string { return time.Duration(s * 1e9).Round(10 * time.Microsecond).String() }

// scene is a random field of unit variance with structure at every place:
// many small Gaussian blobs (radius 1 to 4 pixels, one per 16 pixels) over
// a few broad oriented ridges.
func scene(n int, rng *rand.Rand) []float64 {
	f := make([]float64, n*n)
	for k := 0; k < n*n/16; k++ {
		cx, cy := rng.Float64()*float64(n), rng.Float64()*float64(n)
		r := 1 + 3*rng.Float64()
		a := rng.NormFloat64()
		x0, x1 := max(0, int(cx-3*r)), min(n, int(cx+3*r)+1)
		y0, y1 := max(0, int(cy-3*r)), min(n, int(cy+3*r)+1)
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				dx, dy := float64(x)-cx, float64(y)-cy
				f[y*n+x] += a * math.Exp(-(dx*dx+dy*dy)/(2*r*r))
			}
		}
	}
	for k := 0; k < 6; k++ {
		th, fr, ph := rng.Float64()*math.Pi, 0.02+0.1*rng.Float64(), rng.Float64()*2*math.Pi
		a := 0.3 * rng.NormFloat64()
		for y := 0; y < n; y++ {
			for x := 0; x < n; x++ {
				f[y*n+x] += a * math.Sin(fr*(math.Cos(th)*float64(x)+math.Sin(th)*float64(y))+ph)
			}
		}
	}
	var s, s2 float64
	for _, v := range f {
		s += v
		s2 += v * v
	}
	mu := s / float64(len(f))
	sd := math.Sqrt(s2/float64(len(f)) - mu*mu)
	for i := range f {
		f[i] = (f[i] - mu) / sd
	}
	return f
}

func solve(be exec.Backend, p problem, c config, rng *rand.Rand) (outcome, error) {
	n, m := p.size, p.tsize
	o := outcome{problem: p}
	clean := scene(n, rng)
	tx, ty := rng.IntN(n-m+1), rng.IntN(n-m+1)
	o.truth = [2]int{tx, ty}
	o.sd = math.Sqrt(1 + c.noise*c.noise)
	tmpl := make([]float32, m*m)
	for v := 0; v < m; v++ {
		for u := 0; u < m; u++ {
			tmpl[v*m+u] = float32(clean[(ty+v)*n+tx+u])
		}
	}
	o.img = make([]float32, n*n)
	for i, v := range clean {
		o.img[i] = float32(v + c.noise*rng.NormFloat64())
	}
	imgT, err := tensor.New(o.img, n, n)
	if err != nil {
		return o, err
	}
	tmplT, err := tensor.New(tmpl, m, m)
	if err != nil {
		return o, err
	}

	var maps [2][]float32
	var times [2]float64
	for k, build := range []func(f, t *graph.Node) *graph.Node{nccFFT, nccDirect} {
		g := graph.New()
		f := g.Input("image", tensor.Float32, n, n)
		t := g.Input("template", tensor.Float32, m, m)
		ncc := build(f, t)
		if err := g.Err(); err != nil {
			return o, err
		}
		prog, err := exec.Compile(be, []*graph.Node{ncc})
		if err != nil {
			return o, err
		}
		feeds := exec.Feeds{f: imgT, t: tmplT}
		var ts []float64
		var r []*tensor.Tensor
		for i := 0; i <= c.repeats; i++ { // the first run is a warm-up
			start := time.Now()
			r, err = prog.Run(context.Background(), feeds)
			if err != nil {
				prog.Close()
				return o, err
			}
			if i > 0 {
				ts = append(ts, time.Since(start).Seconds())
			}
		}
		prog.Close()
		slices.Sort(ts)
		times[k] = ts[len(ts)/2]
		if maps[k], err = tensor.Values[float32](r[0]); err != nil {
			return o, err
		}
	}
	o.tFFT, o.tDirect = times[0], times[1]
	w := n - m + 1
	var pk int
	o.fft, pk = argmax(maps[0], w)
	o.peak = float64(maps[0][pk])
	o.direct, _ = argmax(maps[1], w)
	for i := range maps[0] {
		o.maxDiff = max(o.maxDiff, math.Abs(float64(maps[0][i]-maps[1][i])))
	}
	return o, nil
}

// argmax returns the (x, y) of the largest value of a w-wide map, and its
// index.
func argmax(a []float32, w int) ([2]int, int) {
	best := 0
	for i, v := range a {
		if v > a[best] {
			best = i
		}
	}
	return [2]int{best % w, best / w}, best
}

// normalise turns the window correlation c = Σ f·t₀ and the window sums
// s1 = Σf, s2 = Σf² (all over the valid placements) into the NCC: c /
// (√(s2 − s1²/m) ‖t₀‖), with the image's variance under the window
// clamped away from zero (a flat window has NCC 0, not NaN).
func normalise(c, s1, s2, t0 *graph.Node, m int) *graph.Node {
	v := ops.Sub(s2, ops.Div(ops.Mul(s1, s1), ops.Scalar(s1, float64(m))))
	v = ops.Maximum(v, ops.Scalar(v, 1e-6*float64(m)))
	tn := ops.Sqrt(ops.Sum(ops.Mul(t0, t0)))
	return ops.Div(c, ops.Mul(ops.Sqrt(v), tn))
}

// centred returns the template minus its mean.
func centred(t *graph.Node) *graph.Node { return ops.Sub(t, ops.Mean(t)) }

// nccDirect is the NCC map by direct correlation: three ops.Conv of the
// image (as a 1-channel batch of 1) with t₀ and with a window of ones.
func nccDirect(f, t *graph.Node) *graph.Node {
	n, m := f.Shape()[0], t.Shape()[0]
	t0 := centred(t)
	x := ops.Reshape(f, 1, 1, n, n)
	corr := func(img, k *graph.Node) *graph.Node {
		return ops.Reshape(ops.Conv(img, ops.Reshape(k, 1, 1, m, m)), n-m+1, n-m+1)
	}
	ones := ops.OnesLike(t)
	return normalise(corr(x, t0), corr(x, ones), corr(ops.Mul(x, x), ones), t0, m*m)
}

// nccFFT is the NCC map by FFT: each correlation is the inverse real FFT
// of the image's spectrum times the conjugate of the kernel's, over a
// padded size P >= n that FFTs well; a valid placement (y, x <= n−m) never
// wraps around, so cropping the circular correlation to them is exact.
func nccFFT(f, t *graph.Node) *graph.Node {
	n, m := f.Shape()[0], t.Shape()[0]
	p := goodSize(n)
	t0 := centred(t)
	spec := func(x *graph.Node) *graph.Node { return ops.RFFT2(x, ops.FFTLengths(p, p)) }
	F, F2 := spec(f), spec(ops.Mul(f, f))
	corr := func(img, k *graph.Node) *graph.Node {
		c := ops.IRFFT2(ops.Mul(img, ops.Conj(spec(k))), ops.FFTLengths(p, p))
		return ops.Slice(c, ops.R(0, n-m+1), ops.R(0, n-m+1))
	}
	ones := ops.OnesLike(t)
	return normalise(corr(F, t0), corr(F, ones), corr(F2, ones), t0, m*m)
}

// goodSize is the smallest n' >= n whose prime factors are 2, 3 and 5.
func goodSize(n int) int {
	for ; ; n++ {
		k := n
		for _, p := range []int{2, 3, 5} {
			for k%p == 0 {
				k /= p
			}
		}
		if k == 1 {
			return n
		}
	}
}

// writePNG writes o's noisy image in grey (±3 standard deviations to
// black and white) with the FFT path's match framed in red.
func writePNG(path string, o outcome) error {
	n, m := o.size, o.tsize
	im := image.NewRGBA(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			v := (float64(o.img[y*n+x])/o.sd + 3) / 6
			g := uint8(math.Round(255 * min(1, max(0, v))))
			im.SetRGBA(x, y, color.RGBA{g, g, g, 255})
		}
	}
	red := color.RGBA{230, 20, 20, 255}
	x0, y0 := o.fft[0], o.fft[1]
	for k := 0; k < m; k++ {
		for w := 0; w < 2; w++ {
			im.SetRGBA(x0+k, y0+w, red)
			im.SetRGBA(x0+k, y0+m-1-w, red)
			im.SetRGBA(x0+w, y0+k, red)
			im.SetRGBA(x0+m-1-w, y0+k, red)
		}
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(fh, im); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

package main

import (
	"bytes"
	"context"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// TestSmoke is the example's smoke test: two small problems on the CPU;
// both paths must find the template where it was cut out, agree to 1e-3
// (float32 FFTs of a 128-point image: errors of a few 1e-5 are expected),
// write a PNG that decodes to the image's size, and end with "all matches
// found".
func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	c := config{problems: []problem{{96, 16}, {128, 24}}, noise: 0.5, repeats: 1, device: "cpu", seed: 3, outDir: dir}
	var out bytes.Buffer
	res, err := run(&out, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	for _, o := range res {
		if o.fft != o.truth || o.direct != o.truth {
			t.Errorf("%dx%d: FFT %v, direct %v, truth %v", o.size, o.tsize, o.fft, o.direct, o.truth)
		}
		// An NCC is a cosine: at most 1; at the true place with noise of
		// the scene's size it stays well above chance.
		if !(o.peak > 0.3 && o.peak <= 1.0001) {
			t.Errorf("%dx%d: peak NCC %v, want in (0.3, 1]", o.size, o.tsize, o.peak)
		}
		if !(o.maxDiff < 1e-3) {
			t.Errorf("%dx%d: the FFT and direct maps differ by %v", o.size, o.tsize, o.maxDiff)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != "all matches found" {
		t.Errorf("last line %q", last)
	}
	fh, err := os.Open(filepath.Join(dir, "match.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	im, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	if b := im.Bounds(); b.Dx() != 128 || b.Dy() != 128 {
		t.Errorf("match.png is %v, want 128x128", b)
	}
}

// TestNCCAgainstFloat64 checks both graphs against the NCC formula
// evaluated directly in float64 (loops over every placement) on a small
// random image.
func TestNCCAgainstFloat64(t *testing.T) {
	const n, m = 13, 4
	rng := rand.New(rand.NewPCG(5, 6))
	img := make([]float32, n*n)
	for i := range img {
		img[i] = float32(rng.NormFloat64())
	}
	tm := make([]float32, m*m)
	for i := range tm {
		tm[i] = float32(rng.NormFloat64())
	}
	// The float64 reference.
	var tmean float64
	for _, v := range tm {
		tmean += float64(v) / (m * m)
	}
	var tnorm float64
	for _, v := range tm {
		tnorm += (float64(v) - tmean) * (float64(v) - tmean)
	}
	tnorm = math.Sqrt(tnorm)
	w := n - m + 1
	want := make([]float64, w*w)
	for y := 0; y < w; y++ {
		for x := 0; x < w; x++ {
			var s1, s2, c float64
			for v := 0; v < m; v++ {
				for u := 0; u < m; u++ {
					f := float64(img[(y+v)*n+x+u])
					s1 += f
					s2 += f * f
					c += f * (float64(tm[v*m+u]) - tmean)
				}
			}
			want[y*w+x] = c / (math.Sqrt(s2-s1*s1/(m*m)) * tnorm)
		}
	}
	be, err := exec.Open("cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	imgT, _ := tensor.New(img, n, n)
	tmT, _ := tensor.New(tm, m, m)
	for name, build := range map[string]func(f, t *graph.Node) *graph.Node{"fft": nccFFT, "direct": nccDirect} {
		g := graph.New()
		f := g.Input("image", tensor.Float32, n, n)
		tt := g.Input("template", tensor.Float32, m, m)
		ncc := build(f, tt)
		prog, err := exec.Compile(be, []*graph.Node{ncc})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		r, err := prog.Run(context.Background(), exec.Feeds{f: imgT, tt: tmT})
		prog.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, _ := tensor.Values[float32](r[0])
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		for i := range want {
			// float32 sums of 16 products and a cancelling variance: a few 1e-6
			// expected; 2e-4 allows for the FFT path's rounding.
			if math.Abs(float64(got[i])-want[i]) > 2e-4 {
				t.Errorf("%s: ncc[%d] = %v, float64 reference %v", name, i, got[i], want[i])
			}
		}
	}
}

// TestGoodSize: the smallest 5-smooth size at or above n (hand-checked:
// 7 -> 8, 11 -> 12, 13 -> 15, 97 -> 100, 121 -> 125, 1024 -> 1024).
func TestGoodSize(t *testing.T) {
	for n, want := range map[int]int{1: 1, 7: 8, 11: 12, 13: 15, 97: 100, 121: 125, 1024: 1024} {
		if got := goodSize(n); got != want {
			t.Errorf("goodSize(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestFlags(t *testing.T) {
	var stderr bytes.Buffer
	c, err := parseFlags([]string{"-sizes", "64:8, 100:20", "-repeats", "2"}, &stderr)
	if err != nil || len(c.problems) != 2 || c.problems[1] != (problem{100, 20}) || c.repeats != 2 {
		t.Errorf("parseFlags: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-sizes", "10:8"}, {"-sizes", "64"}, {"-repeats", "0"}, {"extra"}} {
		if _, err := parseFlags(bad, &stderr); err == nil {
			t.Errorf("parseFlags(%q): no error", bad)
		}
	}
}

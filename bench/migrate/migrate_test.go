package migrate

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loomgraph/loom/interop/gorgoniaconv"
	"gorgonia.org/tensor"
)

// tol is the relative tolerance between the Gorgonia and loom versions.
// Both compute in float64 from the same data and weights, but not in the
// same order (loom's blocked matrix products and fused reductions against
// Gorgonia's gonum BLAS and separate ops; loom's fused softmax
// cross-entropy against Gorgonia's LogSoftMax, product and sum), so the
// results differ by rounding: a few units of 1e-16 per op, which 60 Adam
// steps (m̂/(√v̂+ε) divides by small numbers as the gradients shrink) grow
// to about 1e-15 here (the tests log the largest difference). 1e-9 leaves
// room for other BLAS and summation orders and is still far below what a
// real difference in the maths (another update rule, a missing term) makes.
const tol = 1e-9

func near(a, b float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func sameSlices(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values and %d", what, len(a), len(b))
	}
	worst := 0.0
	for i := range a {
		if !near(a[i], b[i]) {
			t.Errorf("%s[%d]: gorgonia %v, loom %v", what, i, a[i], b[i])
		}
		worst = math.Max(worst, math.Abs(a[i]-b[i]))
	}
	t.Logf("%s: largest difference %.3g over %d values", what, worst, len(a))
}

// TestGrad: both versions give f(x) = sum(x² sin x) and df/dx = 2x sin x +
// x² cos x, evaluated here by those formulas with package math.
func TestGrad(t *testing.T) {
	xs := []float64{0.5, -1, 2, 0, 3.25}
	wantF, wantG := 0.0, make([]float64, len(xs))
	for i, x := range xs {
		wantF += x * x * math.Sin(x)
		wantG[i] = 2*x*math.Sin(x) + x*x*math.Cos(x)
	}
	gf, gg, err := GradGorgonia(xs)
	if err != nil {
		t.Fatal(err)
	}
	lf, lg, err := GradLoom(xs)
	if err != nil {
		t.Fatal(err)
	}
	sameSlices(t, "f: formula vs gorgonia", []float64{wantF}, []float64{gf})
	sameSlices(t, "f: formula vs loom", []float64{wantF}, []float64{lf})
	sameSlices(t, "df/dx: formula vs gorgonia", wantG, gg)
	sameSlices(t, "df/dx: formula vs loom", wantG, lg)
}

// TestLinReg: the same losses step by step and the same w and b; the first
// loss (w = 0, b = 0) is mean(y²); the fit lands near the data's
// 2, -3 and 0.5.
func TestLinReg(t *testing.T) {
	xs, ys := LinRegData(8)
	const steps, lr = 200, 0.5
	gl, gw, gb, err := LinRegGorgonia(xs, ys, steps, lr)
	if err != nil {
		t.Fatal(err)
	}
	ll, lw, lb, err := LinRegLoom(xs, ys, steps, lr)
	if err != nil {
		t.Fatal(err)
	}
	mean2 := 0.0
	for _, y := range ys {
		mean2 += y * y / float64(len(ys))
	}
	sameSlices(t, "first loss: mean(y²) vs gorgonia", []float64{mean2}, gl[:1])
	sameSlices(t, "losses", gl, ll)
	// Gorgonia's weights to loom, to compare tensors.
	gwt, err := gorgoniaconv.FromDense(gw)
	if err != nil {
		t.Fatal(err)
	}
	if gwt.Type() != lw.Type() {
		t.Fatalf("w: gorgonia %s, loom %s", gwt.Type(), lw.Type())
	}
	sameSlices(t, "w", gwt.Float64s(), lw.Float64s())
	sameSlices(t, "b", []float64{gb}, []float64{lb})
	for i, want := range []float64{2, -3, 0.5} {
		got := append(lw.Float64s(), lb)[i]
		if math.Abs(got-want) > 0.1 {
			t.Errorf("parameter %d = %v, want about %v (the data's)", i, got, want)
		}
	}
	if ll[steps-1] > mean2/100 {
		t.Errorf("the loss went from %v to %v only", mean2, ll[steps-1])
	}
}

// xentRef is the classifier's mean softmax cross-entropy, in plain Go.
func xentRef(xs, onehot []float64, w []*tensor.Dense) float64 {
	w0, b0 := w[0].Data().([]float64), w[1].Data().([]float64)
	w1, b1 := w[2].Data().([]float64), w[3].Data().([]float64)
	n := len(xs) / MLPIn
	total := 0.0
	for r := 0; r < n; r++ {
		h := make([]float64, MLPHidden)
		for j := range h {
			s := b0[j]
			for k := 0; k < MLPIn; k++ {
				s += xs[r*MLPIn+k] * w0[k*MLPHidden+j]
			}
			h[j] = math.Max(s, 0)
		}
		logits := make([]float64, MLPClasses)
		m := math.Inf(-1)
		for c := range logits {
			s := b1[c]
			for j := range h {
				s += h[j] * w1[j*MLPClasses+c]
			}
			logits[c] = s
			m = math.Max(m, s)
		}
		z := 0.0
		for _, l := range logits {
			z += math.Exp(l - m)
		}
		for c, l := range logits {
			total -= onehot[r*MLPClasses+c] * (l - m - math.Log(z))
		}
	}
	return total / float64(n)
}

// TestMLP: the same losses step by step and the same final weights; the
// first loss is the plain-Go cross-entropy of the initial weights;
// training cuts the loss at least tenfold; neither version changes the
// init tensors.
func TestMLP(t *testing.T) {
	xs, onehot := MLPData(10)
	const steps, lr = 60, 0.05
	init := MLPInit()
	before := make([][]float64, len(init))
	for i, d := range init {
		before[i] = append([]float64(nil), d.Data().([]float64)...)
	}
	gl, gw, err := MLPGorgonia(xs, onehot, init, steps, lr)
	if err != nil {
		t.Fatal(err)
	}
	ll, lw, err := MLPLoom(xs, onehot, init, steps, lr)
	if err != nil {
		t.Fatal(err)
	}
	sameSlices(t, "first loss: plain Go vs gorgonia", []float64{xentRef(xs, onehot, init)}, gl[:1])
	sameSlices(t, "losses", gl, ll)
	for i := range gw {
		if !equalShape(gw[i].Shape(), lw[i].Shape()) {
			t.Fatalf("weight %d: gorgonia %v, loom %v", i, gw[i].Shape(), lw[i].Shape())
		}
		sameSlices(t, "weight "+[]string{"w0", "b0", "w1", "b1"}[i], gw[i].Data().([]float64), lw[i].Data().([]float64))
	}
	if ll[steps-1] > ll[0]/10 {
		t.Errorf("the loss went from %v to %v only", ll[0], ll[steps-1])
	}
	for i, d := range init {
		if got := d.Data().([]float64); !equalFloats(got, before[i]) {
			t.Errorf("init[%d] changed: %v, was %v", i, got, before[i])
		}
	}
	// The final weights' loss, in plain Go, is below the last step's (that
	// step's update went down hill).
	if f := xentRef(xs, onehot, lw); f >= ll[steps-1] {
		t.Errorf("loss of the final weights %v, not below the last step's %v", f, ll[steps-1])
	}
}

func equalShape(a tensor.Shape, b tensor.Shape) bool { return a.Eq(b) }

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGuideExcerpts: every ```go fragment block of
// docs/MIGRATING_FROM_GORGONIA.md is a piece of this package's programs
// (or of interop/gorgoniaconv's), verbatim.
func TestGuideExcerpts(t *testing.T) {
	var src strings.Builder
	for _, pat := range []string{"*.go", "../../interop/gorgoniaconv/*.go"} {
		files, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
			src.WriteByte('\n')
		}
	}
	all := src.String()
	const guide = "../../docs/MIGRATING_FROM_GORGONIA.md"
	f, err := os.Open(guide)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		blocks []string
		cur    *strings.Builder
		start  int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```go"):
			if strings.TrimSpace(line) != "```go fragment" {
				t.Errorf("%s:%d: %q: the guide's Go blocks are excerpts, fenced ```go fragment", guide, n, line)
			}
			cur, start = &strings.Builder{}, n
		case cur != nil && line == "```":
			if !strings.Contains(all, cur.String()) {
				t.Errorf("%s:%d: the excerpt is not in bench/migrate's or interop/gorgoniaconv's files verbatim:\n%s", guide, start, cur)
			}
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: block never closed", guide, start)
	}
	if len(blocks) < 6 {
		t.Errorf("%s has %d Go excerpts; want the side-by-side programs (6 or more)", guide, len(blocks))
	}
}

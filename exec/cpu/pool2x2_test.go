package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// TestMaxPool2x2Rows: the 2x2 fast paths of MaxPool and MaxPoolGrad
// (the AVX-512 row pairs of pool_amd64.s where the machine has them,
// with their masked tails past 16 windows, and the Go loops) against the
// general arg-max (argMax, the op's definition: the first maximum, -0
// and +0 equal, the last NaN), on planes of odd and even sizes whose
// values are ties of a few levels with signed zeros, with and without
// NaN.
func TestMaxPool2x2Rows(t *testing.T) {
	t.Logf("assembly: %v", pool2x2Asm())
	levels := []float32{-1, -0.5, float32(math.Copysign(0, -1)), 0, 0.5, 1}
	rng := rand.New(rand.NewPCG(3, 4))
	a := opdef.PoolAttr{Kernel: []int{2, 2}, Stride: []int{2, 2}, Dilation: []int{1, 1}, PadLo: []int{0, 0}, PadHi: []int{0, 0}}
	for _, h := range []int{2, 3, 7, 14, 28} {
		for _, w := range []int{2, 3, 7, 14, 28, 31, 32, 33, 34, 65, 66} {
			for _, nan := range []bool{false, true} {
				p, err := newPoolPlan(a, tensor.Shape{1, 1, h, w})
				if err != nil {
					t.Fatal(err)
				}
				if !p.fast2x2 {
					t.Fatalf("%dx%d: not the 2x2 fast path", h, w)
				}
				x := make([]float32, h*w)
				for i := range x {
					x[i] = levels[rng.IntN(len(levels))]
					if nan && rng.IntN(40) == 0 {
						x[i] = float32(math.NaN())
					}
				}
				g := make([]float32, p.outPlane)
				for i := range g {
					g[i] = float32(i + 1)
				}
				y, dx := make([]float32, p.outPlane), make([]float32, h*w)
				for i := range dx {
					dx[i] = 99 // every element must be written
				}
				maxRows(p, x, y, float32(math.Inf(-1)), 0, p.outRows(), 0, p.out[2])
				maxGradPlane(p, x, g, dx)
				wantDx := make([]float32, h*w)
				for oh := range p.out[1] {
					for ow := range p.out[2] {
						at, m := argMax(p, x, 0, oh, ow, float32(math.Inf(-1)))
						o := oh*p.out[2] + ow
						got := y[o]
						if m != m {
							if got == got {
								t.Errorf("%dx%d: y[%d] = %v, want NaN", h, w, o, got)
							}
						} else if math.Float32bits(got) != math.Float32bits(m) {
							t.Errorf("%dx%d nan=%v: y[%d] = %v, want %v", h, w, nan, o, got, m)
						}
						wantDx[at] = g[o]
					}
				}
				for i := range dx {
					if dx[i] != wantDx[i] {
						t.Errorf("%dx%d nan=%v: dx[%d] = %v, want %v", h, w, nan, i, dx[i], wantDx[i])
						break
					}
				}
			}
		}
	}
}

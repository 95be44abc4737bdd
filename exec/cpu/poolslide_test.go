package cpu

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestSlideMaxPool: MaxPool on the sliding path (poolslide.go) gives the
// bits of argMax, the direct window scan, for every output: 1-D and 2-D
// pools with dilation, strides that are multiples of it, padding that
// empties some windows' rows, ceil mode, column blocks (one plane) and
// row blocks (many rows), on values with ties of -0 and +0, -Inf and NaN;
// float32, float64 and int32; one and two threads.
func TestSlideMaxPool(t *testing.T) {
	cases := []struct {
		shape           []int
		k, s, d, lo, hi []int
		ceil            bool
	}{
		{[]int{1, 2, 300}, []int{40}, []int{4}, []int{2}, []int{5}, []int{7}, false},
		{[]int{1, 1, 1000}, []int{50}, []int{10}, []int{10}, []int{25}, []int{23}, true},
		{[]int{1, 1, 200, 180}, []int{12, 16}, []int{5, 5}, []int{5, 5}, []int{5, 8}, []int{5, 8}, false},
		{[]int{2, 3, 33, 29}, []int{5, 4}, []int{2, 3}, []int{1, 1}, []int{2, 1}, []int{2, 2}, true},
		{[]int{1, 2, 17, 19}, []int{4, 4}, []int{1, 1}, []int{1, 1}, []int{0, 0}, []int{0, 0}, false},
		{[]int{1, 1, 40, 41}, []int{6, 6}, []int{4, 2}, []int{2, 2}, []int{3, 3}, []int{3, 2}, true},
		{[]int{1, 1, 7, 300}, []int{1, 20}, []int{1, 10}, []int{1, 10}, []int{0, 3}, []int{0, 3}, false},
		{[]int{3, 1, 400, 20}, []int{17, 1}, []int{1, 1}, []int{1, 1}, []int{8, 0}, []int{8, 0}, false},
	}
	for ci, c := range cases {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32} {
			for _, threads := range []int{1, 2} {
				t.Run(fmt.Sprintf("%d/%v/threads%d", ci, dt, threads), func(t *testing.T) {
					g := graph.New()
					x := g.Input("x", dt, c.shape...)
					opts := []ops.WindowOption{ops.Stride(c.s...), ops.Dilation(c.d...), ops.PaddingLoHi(c.lo, c.hi)}
					if c.ceil {
						opts = append(opts, ops.CeilMode)
					}
					y := ops.MaxPool(x, c.k, opts...)
					if err := g.Err(); err != nil {
						t.Fatal(err)
					}
					a := y.Attr().(opdef.PoolAttr)
					p, err := newPoolPlan(a, x.Shape())
					if err != nil {
						t.Fatal(err)
					}
					if newSlidePlan(p) == nil {
						t.Fatal("not on the sliding path")
					}
					xt := exectest.Rand(dt, c.shape, -4, 4, uint64(ci))
					for i := 0; i < xt.Size(); i++ {
						v := math.Round(xt.Float64(i)) // ties, and zeros
						switch {
						case dt == tensor.Int32:
						case i%97 == 5:
							v = math.NaN()
						case i%89 == 3:
							v = math.Inf(-1)
						case v == 0 && i%2 == 1:
							v = math.Copysign(0, -1)
						}
						xt.SetFloat64(i, v)
					}
					be, err := New(Threads(threads))
					if err != nil {
						t.Fatal(err)
					}
					defer be.Close()
					prog, err := exec.Compile(be, []*graph.Node{y})
					if err != nil {
						t.Fatal(err)
					}
					defer prog.Close()
					got, err := prog.Run(context.Background(), exec.Feeds{x: xt})
					if err != nil {
						t.Fatal(err)
					}
					check := func(want func(plane, oh, ow int) float64) {
						for i := 0; i < p.planes; i++ {
							for oh := 0; oh < p.out[1]; oh++ {
								for ow := 0; ow < p.out[2]; ow++ {
									k := (i*p.out[1]+oh)*p.out[2] + ow
									g, w := got[0].Float64(k), want(i, oh, ow)
									if math.Float64bits(g) != math.Float64bits(w) && !(g != g && w != w) {
										t.Fatalf("plane %d output (%d, %d): %v, want %v (argMax)", i, oh, ow, g, w)
									}
									if g != g && w != w && math.Float64bits(g) != math.Float64bits(w) {
										t.Fatalf("plane %d output (%d, %d): NaN %#x, want %#x", i, oh, ow, math.Float64bits(g), math.Float64bits(w))
									}
								}
							}
						}
					}
					switch dt {
					case tensor.Float32:
						xs := make([]float32, xt.Size())
						for i := range xs {
							xs[i] = float32(xt.Float64(i))
						}
						check(func(i, oh, ow int) float64 {
							_, v := argMax(p, xs[i*p.inPlane:(i+1)*p.inPlane], 0, oh, ow, float32(math.Inf(-1)))
							return float64(v)
						})
					case tensor.Float64:
						xs := xt.Float64s()
						check(func(i, oh, ow int) float64 {
							_, v := argMax(p, xs[i*p.inPlane:(i+1)*p.inPlane], 0, oh, ow, math.Inf(-1))
							return v
						})
					case tensor.Int32:
						xs := make([]int32, xt.Size())
						for i := range xs {
							xs[i] = int32(xt.Float64(i))
						}
						check(func(i, oh, ow int) float64 {
							_, v := argMax(p, xs[i*p.inPlane:(i+1)*p.inPlane], 0, oh, ow, int32(math.MinInt32))
							return float64(v)
						})
					}
				})
			}
		}
	}
}

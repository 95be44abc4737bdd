package onnx

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Tests of GridSample and RoiAlign off the backend data's paths: every
// mode, padding and alignment of GridSample and both coordinate modes,
// both pooling modes and the adaptive grid of RoiAlign, against float64
// loops written from PyTorch's grid_sampler (GridSample's test data are
// PyTorch's) and the spec's RoiAlign reference, plus hand-computed values
// and the refusals.

// gridRef is grid_sample in float64, one output at a time.
func gridRef(x []float64, N, C, H, W int, grid []float64, Ho, Wo int, mode, pad string, ac bool) []float64 {
	unnorm := func(c float64, size int) float64 {
		if ac {
			return (c + 1) / 2 * float64(size-1)
		}
		return ((c+1)*float64(size) - 1) / 2
	}
	clip := func(c float64, size int) float64 { return math.Min(math.Max(c, 0), float64(size-1)) }
	reflect := func(c, twiceLo, twiceHi float64) float64 {
		if twiceLo == twiceHi {
			return 0
		}
		lo, span := twiceLo/2, (twiceHi-twiceLo)/2
		c = math.Abs(c - lo)
		extra := math.Mod(c, span)
		if int(math.Floor(c/span))%2 == 0 {
			return extra + lo
		}
		return span - extra + lo
	}
	padc := func(c float64, size int) float64 {
		switch pad {
		case "border":
			return clip(c, size)
		case "reflection":
			if ac {
				return clip(reflect(c, 0, float64(2*(size-1))), size)
			}
			return clip(reflect(c, -1, float64(2*size-1)), size)
		}
		return c
	}
	at := func(n, ch int, xi, yi float64) float64 {
		if xi < 0 || xi > float64(W-1) || yi < 0 || yi > float64(H-1) {
			return 0
		}
		return x[((n*C+ch)*H+int(yi))*W+int(xi)]
	}
	cc1 := func(t float64) float64 { return ((-0.75+2)*t-(-0.75+3))*t*t + 1 }
	cc2 := func(t float64) float64 { return ((-0.75*t-5*-0.75)*t+8*-0.75)*t - 4*-0.75 }
	out := make([]float64, N*C*Ho*Wo)
	for n := range N {
		for h := range Ho {
			for w := range Wo {
				gi := ((n*Ho+h)*Wo + w) * 2
				ix, iy := unnorm(grid[gi], W), unnorm(grid[gi+1], H)
				for ch := range C {
					var v float64
					switch mode {
					case "nearest":
						v = at(n, ch, math.RoundToEven(padc(ix, W)), math.RoundToEven(padc(iy, H)))
					case "bilinear":
						px, py := padc(ix, W), padc(iy, H)
						x0, y0 := math.Floor(px), math.Floor(py)
						tx, ty := px-x0, py-y0
						v = at(n, ch, x0, y0)*(1-tx)*(1-ty) + at(n, ch, x0+1, y0)*tx*(1-ty) +
							at(n, ch, x0, y0+1)*(1-tx)*ty + at(n, ch, x0+1, y0+1)*tx*ty
					case "bicubic":
						x0, y0 := math.Floor(ix), math.Floor(iy)
						tx, ty := ix-x0, iy-y0
						wx := []float64{cc2(tx + 1), cc1(tx), cc1(1 - tx), cc2(2 - tx)}
						wy := []float64{cc2(ty + 1), cc1(ty), cc1(1 - ty), cc2(2 - ty)}
						for i := range 4 {
							for j := range 4 {
								v += wy[i] * wx[j] * at(n, ch, padc(x0-1+float64(j), W), padc(y0-1+float64(i), H))
							}
						}
					}
					out[((n*C+ch)*Ho+h)*Wo+w] = v
				}
			}
		}
	}
	return out
}

func TestGridSampleAgainstReference(t *testing.T) {
	const N, C, H, W, Ho, Wo = 2, 3, 4, 5, 3, 4
	x := seqVals(N*C*H*W, 0.4)
	grid := seqVals(N*Ho*Wo*2, 1.1)
	for i := range grid {
		grid[i] *= 1.4 // some samples outside [-1, 1]: the padding
	}
	grid[0], grid[1] = 0, 0 // a tie of nearest's rounding at the centre of an even length
	for _, mode := range []string{"bilinear", "nearest", "bicubic"} {
		for _, pad := range []string{"zeros", "border", "reflection"} {
			for _, ac := range []int{0, 1} {
				what := fmt.Sprintf("%s/%s/align_corners=%d", mode, pad, ac)
				got, err := runNode(t, 16, "GridSample", []*attrProto{sattr("mode", mode), sattr("padding_mode", pad), iattr("align_corners", ac)},
					[]tin{{name: "X", t: f64(t, x, N, C, H, W), feed: true}, {name: "grid", t: f64(t, grid, N, Ho, Wo, 2), feed: true}}, 1)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				checkClose(t, what, got[0], gridRef(x, N, C, H, W, grid, Ho, Wo, mode, pad, ac != 0), []int{N, C, Ho, Wo}, 1e-12)
			}
		}
	}
}

func TestGridSampleHandValues(t *testing.T) {
	// X = [[1 2] [3 4]]; the grid's points (x, y): (0, 0), (-1, -1), (1, 1), (2, 0)
	x := f64(t, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
	grid := f64(t, []float64{0, 0, -1, -1, 1, 1, 2, 0}, 1, 1, 4, 2)
	cases := []struct {
		attrs []*attrProto
		want  []float64
	}{
		// align_corners=1: -1 and 1 are the corner pixels' centres, 0 the
		// middle (the mean of the four, 2.5); (2, 0) is pixel (1.5, 0.5):
		// half of the right column's mean (3), the taps beyond it zero: 1.5
		{[]*attrProto{iattr("align_corners", 1)}, []float64{2.5, 1, 4, 1.5}},
		// align_corners=0: -1 and 1 are the outer edges, pixel -0.5 and
		// 1.5: (-1,-1) weighs pixel (0,0) by 1/4, (1,1) pixel (1,1) by 1/4;
		// (2, 0) is x = 2.5, y = 0.5: zero taps
		{nil, []float64{2.5, 0.25, 1, 0}},
		// border: coordinates clipped to [0, 1] pixel: (2, 0) is x = 1, y = 0.5: mean of 2 and 4
		{[]*attrProto{sattr("padding_mode", "border")}, []float64{2.5, 1, 4, 3}},
		// reflection, align_corners=0: x = 2.5 mirrors at 1.5 to 0.5: the
		// mean of the four
		{[]*attrProto{sattr("padding_mode", "reflection")}, []float64{2.5, 1, 4, 2.5}},
		// nearest, align_corners=1: 0.5 rounds to even, 0: pixel (0, 0)
		{[]*attrProto{sattr("mode", "nearest"), iattr("align_corners", 1)}, []float64{1, 1, 4, 0}},
	}
	for i, c := range cases {
		got, err := runNode(t, 16, "GridSample", c.attrs, []tin{{name: "X", t: x, feed: true}, {name: "grid", t: grid, feed: true}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, fmt.Sprintf("case %d", i), got[0], c.want, []int{1, 1, 1, 4}, 1e-12)
	}
	// nearest on integers is exact, zeros outside
	xi, _ := tensor.New([]int32{7, -8, 9, 10}, 1, 1, 2, 2)
	got, err := runNode(t, 16, "GridSample", []*attrProto{sattr("mode", "nearest"), iattr("align_corners", 1)},
		[]tin{{name: "X", t: xi, feed: true}, {name: "grid", t: grid, feed: true}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].DType() != tensor.Int32 {
		t.Fatalf("nearest on int32 gave %s", got[0].DType())
	}
	checkClose(t, "nearest int32", got[0], []float64{7, 7, 10, 0}, []int{1, 1, 1, 4}, 0)
}

// roiRef is the spec's RoiAlign reference in float64.
func roiRef(x []float64, C, H, W int, rois []float64, bi []int, Ho, Wo, sr int, scale float64, half bool, mode string) []float64 {
	R := len(bi)
	out := make([]float64, R*C*Ho*Wo)
	off := 0.0
	if half {
		off = 0.5
	}
	for r := range R {
		sw, sh := rois[4*r]*scale-off, rois[4*r+1]*scale-off
		rw, rh := rois[4*r+2]*scale-off-sw, rois[4*r+3]*scale-off-sh
		if !half {
			rw, rh = math.Max(rw, 1), math.Max(rh, 1)
		}
		bh, bw := rh/float64(Ho), rw/float64(Wo)
		gh, gw := sr, sr
		if sr == 0 {
			gh, gw = int(math.Ceil(rh/float64(Ho))), int(math.Ceil(rw/float64(Wo)))
		}
		count := math.Max(float64(gh*gw), 1)
		for c := range C {
			plane := x[(bi[r]*C+c)*H*W:]
			for ph := range Ho {
				for pw := range Wo {
					acc, first := 0.0, true
					for iy := range gh {
						for ix := range gw {
							y := sh + float64(ph)*bh + (float64(iy)+0.5)*bh/float64(gh)
							xx := sw + float64(pw)*bw + (float64(ix)+0.5)*bw/float64(gw)
							var taps [4]float64
							if !(y < -1 || y > float64(H) || xx < -1 || xx > float64(W)) {
								y, xx = math.Max(y, 0), math.Max(xx, 0)
								yl, xl := int(y), int(xx)
								yh, xh := yl+1, xl+1
								if yl >= H-1 {
									yl, yh, y = H-1, H-1, float64(H-1)
								}
								if xl >= W-1 {
									xl, xh, xx = W-1, W-1, float64(W-1)
								}
								ly, lx := y-float64(yl), xx-float64(xl)
								taps = [4]float64{(1 - ly) * (1 - lx) * plane[yl*W+xl], (1 - ly) * lx * plane[yl*W+xh],
									ly * (1 - lx) * plane[yh*W+xl], ly * lx * plane[yh*W+xh]}
							}
							if mode == "avg" {
								acc += taps[0] + taps[1] + taps[2] + taps[3]
								continue
							}
							m := math.Max(math.Max(taps[0], taps[1]), math.Max(taps[2], taps[3]))
							if first {
								acc, first = m, false
							} else {
								acc = math.Max(acc, m)
							}
						}
					}
					if mode == "avg" {
						acc /= count
					}
					out[((r*C+c)*Ho+ph)*Wo+pw] = acc
				}
			}
		}
	}
	return out
}

func TestRoiAlignAgainstReference(t *testing.T) {
	const N, C, H, W, Ho, Wo = 2, 2, 6, 7, 3, 2
	x := seqVals(N*C*H*W, 0.9)
	// boxes inside, across the edges, far outside, tiny, and reversed (with
	// half_pixel and sampling_ratio 0 its grid is empty: 0)
	rois := []float64{0.5, 1, 5.5, 4.2, -2, -1.5, 3, 7.9, 5.1, 0.2, 9.5, 3, 2, 2, 2.1, 2.05, 3, 3, 1, 1}
	bi := []int{0, 1, 1, 0, 1}
	bt, _ := tensor.New([]int64{0, 1, 1, 0, 1})
	for _, opset := range []int{10, 16} {
		for _, half := range []bool{false, true} {
			if half && opset < 16 {
				continue
			}
			for _, mode := range []string{"avg", "max"} {
				for _, sr := range []int{0, 2, 3} {
					for _, scale := range []float64{1, 0.75} {
						what := fmt.Sprintf("opset %d/half_pixel=%v/%s/sampling_ratio=%d/scale=%v", opset, half, mode, sr, scale)
						attrs := []*attrProto{sattr("mode", mode), iattr("output_height", Ho), iattr("output_width", Wo),
							iattr("sampling_ratio", sr), fattr("spatial_scale", scale)}
						if opset >= 16 && !half {
							attrs = append(attrs, sattr("coordinate_transformation_mode", "output_half_pixel"))
						}
						// sampling_ratio 0 needs the boxes at import: a constant
						got, err := runNode(t, opset, "RoiAlign", attrs, []tin{{name: "X", t: f64(t, x, N, C, H, W), feed: true},
							{name: "rois", t: f64(t, rois, 5, 4), feed: sr > 0}, {name: "bi", t: bt, feed: true}}, 1)
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						checkClose(t, what, got[0], roiRef(x, C, H, W, rois, bi, Ho, Wo, sr, scale, half, mode), []int{5, C, Ho, Wo}, 1e-12)
					}
				}
			}
		}
	}
}

func TestRoiAlignHandValue(t *testing.T) {
	// X = [[1 2] [3 4]], one box (0, 0)-(1, 1), one 1x1 bin, 2x2 samples,
	// output_half_pixel: samples at 0.25 and 0.75 on each axis; the
	// bilinear surface is 1 + x + 2y, so their mean is 1 + 0.5 + 1 = 2.5;
	// max mode takes the largest weighted tap: at (0.75, 0.75) the tap
	// of 4 weighs 0.5625: 2.25
	x := f64(t, []float64{1, 2, 3, 4}, 1, 1, 2, 2)
	rois := f64(t, []float64{0, 0, 1, 1}, 1, 4)
	bi, _ := tensor.New([]int64{0})
	for mode, want := range map[string]float64{"avg": 2.5, "max": 2.25} {
		got, err := runNode(t, 16, "RoiAlign", []*attrProto{sattr("mode", mode), iattr("sampling_ratio", 2), sattr("coordinate_transformation_mode", "output_half_pixel")},
			[]tin{{name: "X", t: x, feed: true}, {name: "rois", t: rois, feed: true}, {name: "bi", t: bi, feed: true}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, mode, got[0], []float64{want}, []int{1, 1, 1, 1}, 1e-12)
	}
}

func TestSamplingRefusals(t *testing.T) {
	x := f64(t, make([]float64, 16), 1, 1, 4, 4)
	grid := f64(t, make([]float64, 8), 1, 2, 2, 2)
	rois := f64(t, []float64{0, 0, 1, 1}, 1, 4)
	bi, _ := tensor.New([]int64{0})
	x3 := f64(t, make([]float64, 4), 1, 1, 4)
	cases := []struct {
		op     string
		opset  int
		attrs  []*attrProto
		ins    []tin
		is     error
		substr string
	}{
		{"GridSample", 16, []*attrProto{sattr("mode", "area")}, []tin{{"X", x, true}, {"g", grid, true}}, ErrUnsupported, `mode "area"`},
		{"GridSample", 16, []*attrProto{sattr("padding_mode", "wrap")}, []tin{{"X", x, true}, {"g", grid, true}}, ErrUnsupported, `padding_mode "wrap"`},
		{"GridSample", 16, nil, []tin{{"X", x3, true}, {"g", grid, true}}, nil, "4-D"},
		{"GridSample", 16, nil, []tin{{"X", x, true}, {"g", x, true}}, nil, "(1, H_out, W_out, 2)"},
		{"RoiAlign", 16, nil, []tin{{"X", x, true}, {"r", rois, true}, {"b", bi, true}}, ErrDynamic, "sampling_ratio 0"},
		{"RoiAlign", 10, []*attrProto{sattr("coordinate_transformation_mode", "half_pixel")}, []tin{{"X", x, true}, {"r", rois, false}, {"b", bi, true}}, ErrUnsupported, "before opset 16"},
		{"RoiAlign", 16, []*attrProto{sattr("mode", "sum")}, []tin{{"X", x, true}, {"r", rois, false}, {"b", bi, true}}, ErrUnsupported, `mode "sum"`},
		{"RoiAlign", 16, []*attrProto{iattr("output_height", 0)}, []tin{{"X", x, true}, {"r", rois, false}, {"b", bi, true}}, nil, "must be >= 1"},
		{"RoiAlign", 16, nil, []tin{{"X", x, true}, {"r", x, false}, {"b", bi, true}}, nil, "(num_rois, 4)"},
	}
	for _, c := range cases {
		_, err := runNode(t, c.opset, c.op, c.attrs, c.ins, 1)
		if err == nil {
			t.Fatalf("%s %v: no error", c.op, c.attrs)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v does not wrap %v", c.op, err, c.is)
		}
		if !strings.Contains(err.Error(), c.substr) || !strings.Contains(err.Error(), c.op) {
			t.Errorf("%s: %v: want the operator and %q", c.op, err, c.substr)
		}
	}
}

// TestGridSampleGradients: the imported GridSample differentiates with
// respect to X and the grid (a spatial transformer trains both): the
// gradients of sum(w · GridSample(X, grid)) match central finite
// differences of the float64 reference (h = 1e-6; no sample lies within
// 1e-3 of a pixel boundary, where the bilinear surface has a kink).
func TestGridSampleGradients(t *testing.T) {
	const N, C, H, W, Ho, Wo = 1, 2, 3, 4, 2, 3
	x := seqVals(N*C*H*W, 0.2)
	grid := seqVals(N*Ho*Wo*2, 2.3)
	wts := seqVals(N*C*Ho*Wo, 3.1)
	for _, c := range []struct{ mode, pad string }{{"bilinear", "zeros"}, {"bilinear", "reflection"}, {"bicubic", "border"}} {
		t.Run(c.mode+"/"+c.pad, func(t *testing.T) {
			loss := func(x, grid []float64) float64 {
				y := gridRef(x, N, C, H, W, grid, Ho, Wo, c.mode, c.pad, false)
				s := 0.0
				for i, v := range y {
					s += wts[i] * v
				}
				return s
			}
			for i, g := range grid {
				for _, size := range []int{W, H} {
					p := ((g+1)*float64(size) - 1) / 2
					if d := p - math.Round(p); math.Abs(d) < 1e-3 {
						t.Fatalf("grid value %d (%v) is at a pixel boundary: pick other values", i, g)
					}
				}
			}
			outs, feeds, err := buildNode(16, "GridSample", []*attrProto{sattr("mode", c.mode), sattr("padding_mode", c.pad)},
				[]tin{{name: "X", t: f64(t, x, N, C, H, W), feed: true}, {name: "grid", t: f64(t, grid, N, Ho, Wo, 2), feed: true}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			var xn, gn *graph.Node
			for n := range feeds {
				if n.Rank() == 4 && n.Shape()[3] == 2 {
					gn = n
				} else {
					xn = n
				}
			}
			y := outs[0]
			wt := f64(t, wts, N, C, Ho, Wo)
			l := ops.Sum(ops.Mul(y, y.Graph().Const(wt)))
			grads := autodiff.Grad(l, xn, gn)
			p, err := exec.Compile(cpuBackend(t), grads)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			got, err := p.Run(context.Background(), feeds)
			if err != nil {
				t.Fatal(err)
			}
			fd := func(v []float64, i int, f func([]float64) float64) float64 {
				const h = 1e-6
				a, b := slices.Clone(v), slices.Clone(v)
				a[i] += h
				b[i] -= h
				return (f(a) - f(b)) / (2 * h)
			}
			dx := make([]float64, len(x))
			for i := range x {
				dx[i] = fd(x, i, func(v []float64) float64 { return loss(v, grid) })
			}
			dg := make([]float64, len(grid))
			for i := range grid {
				dg[i] = fd(grid, i, func(v []float64) float64 { return loss(x, v) })
			}
			checkClose(t, "d/dX", got[0], dx, []int{N, C, H, W}, 1e-6)
			checkClose(t, "d/dgrid", got[1], dg, []int{N, Ho, Wo, 2}, 1e-6)
		})
	}
}

package onnx

import (
	"errors"
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Sampling operators: GridSample (opset 16) and RoiAlign (10, 16). Both
// are composed of loom's elementwise ops and gathers: the graph computes
// each output's sample coordinates from the grid or the boxes, the taps
// around them and their weights, gathers the taps from X (TakeAlongAxis
// or Gather over the flattened pixels) and sums the weighted taps (or,
// RoiAlign's max mode, takes their maximum). They run on every backend,
// and their gradients are loom's (a gather's transpose is a scatter-add).

func init() {
	reg("GridSample", opDef{attrs: []string{"align_corners", "mode", "padding_mode"}, fn: gridSampleOp})
	reg("RoiAlign", opDef{attrs: []string{"coordinate_transformation_mode", "mode", "output_height",
		"output_width", "sampling_ratio", "spatial_scale"}, fn: roiAlignOp})
}

// sampler builds coordinate arithmetic in one float dtype.
type sampler struct{ like *graph.Node }

func (s sampler) c(v float64) *graph.Node { return ops.Scalar(s.like, v) }

// clip is PyTorch's clip_coordinates: c within [0, size-1].
func (s sampler) clip(c *graph.Node, size int) *graph.Node {
	return ops.Minimum(ops.Maximum(c, s.c(0)), s.c(float64(size-1)))
}

// reflect is PyTorch's reflect_coordinates: c mirrored at twiceLo/2 and
// twiceHi/2 until it lies between them.
func (s sampler) reflect(c *graph.Node, twiceLo, twiceHi float64) *graph.Node {
	if twiceLo == twiceHi {
		return ops.ZerosLike(c)
	}
	lo, span := twiceLo/2, (twiceHi-twiceLo)/2
	in := ops.Abs(ops.Sub(c, s.c(lo)))
	extra := ops.Remainder(in, s.c(span)) // in >= 0: C's fmod
	flips := ops.Floor(ops.Div(in, s.c(span)))
	even := ops.Equal(ops.Remainder(flips, s.c(2)), s.c(0))
	return ops.Where(even, ops.Add(extra, s.c(lo)), ops.Add(ops.Sub(s.c(span), extra), s.c(lo)))
}

// pad is PyTorch's compute_coordinates: the padding mode's map of a
// coordinate along an axis of the given size (zeros leaves it).
func (s sampler) pad(c *graph.Node, size int, mode string, alignCorners bool) *graph.Node {
	switch mode {
	case "border":
		return s.clip(c, size)
	case "reflection":
		if alignCorners {
			c = s.reflect(c, 0, float64(2*(size-1)))
		} else {
			c = s.reflect(c, -1, float64(2*size-1))
		}
		return s.clip(c, size)
	}
	return c
}

// inRange reports 0 <= c <= size-1, elementwise.
func (s sampler) inRange(c *graph.Node, size int) *graph.Node {
	return ops.And(ops.GreaterEqual(c, s.c(0)), ops.LessEqual(c, s.c(float64(size-1))))
}

// ---- GridSample ----

// gridSampleOp is GridSample-16 (4-D X only, as in opset 16), with
// PyTorch's grid_sample semantics, from which the spec and its test data
// come: grid[n, h, w] = (x, y) in [-1, 1] (outside reads the padding),
// unnormalised with or without align_corners; bilinear and nearest (ties
// to even) sample the padded coordinate, bicubic (A = -0.75) pads each of
// its 16 taps' coordinates; with zeros padding a tap outside X reads 0.
func gridSampleOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	grid, err := n.need(1)
	if err != nil {
		return nil, err
	}
	if x.Rank() != 4 {
		return nil, fmt.Errorf("X is %v; GridSample (opset 16) samples 4-D inputs (N, C, H, W)", x.Shape())
	}
	xs, gs := x.Shape(), grid.Shape()
	if grid.Rank() != 4 || gs[3] != 2 || gs[0] != xs[0] {
		return nil, fmt.Errorf("grid is %v; for X %v it must be (%d, H_out, W_out, 2)", gs, xs, xs[0])
	}
	if !grid.DType().IsFloat() {
		return nil, fmt.Errorf("grid is %s; it must be a float type", grid.DType())
	}
	mode := n.attrString("mode", "bilinear")
	padMode := n.attrString("padding_mode", "zeros")
	ac := n.attrInt("align_corners", 0) != 0
	switch mode {
	case "bilinear", "nearest", "bicubic":
	default:
		return nil, fmt.Errorf("%w: mode %q (want bilinear, nearest or bicubic)", ErrUnsupported, mode)
	}
	switch padMode {
	case "zeros", "border", "reflection":
	default:
		return nil, fmt.Errorf("%w: padding_mode %q (want zeros, border or reflection)", ErrUnsupported, padMode)
	}
	if mode != "nearest" && !x.DType().IsFloat() {
		return nil, fmt.Errorf("%w: %s sampling of %s (loom interpolates floats; integer rounding is not specified)", ErrUnsupported, mode, x.DType())
	}
	N, C, H, W := xs[0], xs[1], xs[2], xs[3]
	Ho, Wo := gs[1], gs[2]
	if H == 0 || W == 0 {
		return nil, fmt.Errorf("X is %v; GridSample needs pixels to sample", xs)
	}
	ct := grid.DType()
	if x.DType().IsFloat() {
		ct = x.DType()
	}
	g := ops.Cast(grid, ct)
	// coordinates as (N, 1, Ho·Wo): they broadcast against (N, C, Ho·Wo)
	coord := func(i int) *graph.Node {
		return ops.Reshape(ops.Gather(g, int64Const(n.g(), []int{i}), 3), N, 1, Ho*Wo)
	}
	s := sampler{like: g}
	unnorm := func(c *graph.Node, size int) *graph.Node {
		if ac {
			return ops.Mul(ops.Div(ops.Add(c, s.c(1)), s.c(2)), s.c(float64(size-1)))
		}
		return ops.Div(ops.Sub(ops.Mul(ops.Add(c, s.c(1)), s.c(float64(size))), s.c(1)), s.c(2))
	}
	ix, iy := unnorm(coord(0), W), unnorm(coord(1), H)
	xf := ops.Reshape(x, N, C, H*W)
	// tap reads X at integer-valued coordinates (cx, cy), 0 outside X.
	tap := func(cx, cy *graph.Node) (*graph.Node, *graph.Node) {
		ok := ops.And(s.inRange(cx, W), s.inRange(cy, H))
		xi := ops.Cast(ops.Where(ok, cx, s.c(0)), tensor.Int64)
		yi := ops.Cast(ops.Where(ok, cy, s.c(0)), tensor.Int64)
		lin := ops.Add(ops.Mul(yi, ops.Scalar(yi, float64(W))), xi)
		return ops.TakeAlongAxis(xf, lin, 2), ok
	}
	// weighed is Σ w·v over the taps, a tap outside X adding nothing.
	weighed := func(vs, oks, ws []*graph.Node) *graph.Node {
		var sum *graph.Node
		for i, v := range vs {
			t := ops.Where(oks[i], ops.Mul(v, ws[i]), ops.Scalar(v, 0))
			if sum == nil {
				sum = t
			} else {
				sum = ops.Add(sum, t)
			}
		}
		return sum
	}
	var y *graph.Node
	switch mode {
	case "nearest":
		v, ok := tap(ops.Round(s.pad(ix, W, padMode, ac)), ops.Round(s.pad(iy, H, padMode, ac)))
		y = ops.Where(ok, v, ops.Scalar(v, 0))
	case "bilinear":
		ix, iy = s.pad(ix, W, padMode, ac), s.pad(iy, H, padMode, ac)
		x0, y0 := ops.Floor(ix), ops.Floor(iy)
		x1, y1 := ops.Add(x0, s.c(1)), ops.Add(y0, s.c(1))
		// PyTorch's forms of the weights: (x1 - x)(y1 - y) and so on
		wx0, wx1 := ops.Sub(x1, ix), ops.Sub(ix, x0)
		wy0, wy1 := ops.Sub(y1, iy), ops.Sub(iy, y0)
		var vs, oks []*graph.Node
		for _, c := range [][2]*graph.Node{{x0, y0}, {x1, y0}, {x0, y1}, {x1, y1}} {
			v, ok := tap(c[0], c[1])
			vs, oks = append(vs, v), append(oks, ok)
		}
		y = weighed(vs, oks, []*graph.Node{ops.Mul(wx0, wy0), ops.Mul(wx1, wy0), ops.Mul(wx0, wy1), ops.Mul(wx1, wy1)})
	case "bicubic":
		x0, y0 := ops.Floor(ix), ops.Floor(iy)
		cx, cy := s.cubic(ops.Sub(ix, x0)), s.cubic(ops.Sub(iy, y0))
		rows := make([]*graph.Node, 4)
		for i := range 4 {
			ty := s.pad(ops.Add(y0, s.c(float64(i-1))), H, padMode, ac)
			var vs, oks []*graph.Node
			for j := range 4 {
				tx := s.pad(ops.Add(x0, s.c(float64(j-1))), W, padMode, ac)
				v, ok := tap(tx, ty)
				vs, oks = append(vs, v), append(oks, ok)
			}
			rows[i] = weighed(vs, oks, cx)
		}
		y = ops.Add(ops.Add(ops.Add(ops.Mul(rows[0], cy[0]), ops.Mul(rows[1], cy[1])), ops.Mul(rows[2], cy[2])), ops.Mul(rows[3], cy[3]))
	}
	return []*graph.Node{ops.Reshape(y, N, C, Ho, Wo)}, nil
}

// cubic is the four weights of the taps at -1, 0, 1 and 2 from a point
// t in [0, 1) past tap 0: Keys' cubic convolution with A = -0.75
// (PyTorch's get_cubic_upsample_coefficients).
func (s sampler) cubic(t *graph.Node) []*graph.Node {
	const a = -0.75
	near := func(x *graph.Node) *graph.Node { // ((A+2)x - (A+3))x² + 1, |x| <= 1
		return ops.Add(ops.Mul(ops.Mul(ops.Sub(ops.Mul(s.c(a+2), x), s.c(a+3)), x), x), s.c(1))
	}
	far := func(x *graph.Node) *graph.Node { // ((Ax - 5A)x + 8A)x - 4A, 1 < |x| < 2
		return ops.Sub(ops.Mul(ops.Add(ops.Mul(ops.Sub(ops.Mul(s.c(a), x), s.c(5*a)), x), s.c(8*a)), x), s.c(4*a))
	}
	u := ops.Sub(s.c(1), t)
	return []*graph.Node{far(ops.Add(t, s.c(1))), near(t), near(u), far(ops.Add(u, s.c(1)))}
}

// ---- RoiAlign ----

// roiAlignOp is RoiAlign-10 and -16 as the spec's reference (onnxruntime's
// kernel): output bin (ph, pw) of box r averages (mode avg) or maximises
// (mode max: the largest weighted tap of any sample, not divided) the
// bilinear samples at the centres of a grid of sampling_ratio² cells, or
// ceil(box/bin)² when sampling_ratio is 0, which needs the boxes at import
// (loom's shapes are static); a sample more than a pixel outside X reads 0.
func roiAlignOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	rois, err := n.need(1)
	if err != nil {
		return nil, err
	}
	bi, err := n.need(2)
	if err != nil {
		return nil, err
	}
	if x.Rank() != 4 || !x.DType().IsFloat() {
		return nil, fmt.Errorf("X is %s %v; RoiAlign needs a 4-D float input (N, C, H, W)", x.DType(), x.Shape())
	}
	if rois.Rank() != 2 || rois.Shape()[1] != 4 || !rois.DType().IsFloat() {
		return nil, fmt.Errorf("rois is %s %v; it must be float (num_rois, 4)", rois.DType(), rois.Shape())
	}
	R := rois.Shape()[0]
	if bi.Rank() != 1 || bi.Shape()[0] != R || !bi.DType().IsInt() {
		return nil, fmt.Errorf("batch_indices is %s %v; it must be integers (%d)", bi.DType(), bi.Shape(), R)
	}
	halfPixel := false
	if n.opset() >= 16 {
		switch m := n.attrString("coordinate_transformation_mode", "half_pixel"); m {
		case "half_pixel":
			halfPixel = true
		case "output_half_pixel":
		default:
			return nil, fmt.Errorf("%w: coordinate_transformation_mode %q (want half_pixel or output_half_pixel)", ErrUnsupported, m)
		}
	} else if n.hasAttr("coordinate_transformation_mode") {
		return nil, fmt.Errorf("%w: attribute \"coordinate_transformation_mode\" before opset 16", ErrUnsupported)
	}
	mode := n.attrString("mode", "avg")
	if mode != "avg" && mode != "max" {
		return nil, fmt.Errorf("%w: mode %q (want avg or max)", ErrUnsupported, mode)
	}
	Ho, Wo := n.attrInt("output_height", 1), n.attrInt("output_width", 1)
	sr := n.attrInt("sampling_ratio", 0)
	scale := n.attrFloat("spatial_scale", 1)
	if Ho < 1 || Wo < 1 || sr < 0 {
		return nil, fmt.Errorf("output_height %d, output_width %d and sampling_ratio %d: the sizes must be >= 1 and the ratio >= 0", Ho, Wo, sr)
	}
	N, C, H, W := x.Shape()[0], x.Shape()[1], x.Shape()[2], x.Shape()[3]
	if H == 0 || W == 0 {
		return nil, fmt.Errorf("X is %v; RoiAlign needs pixels to sample", x.Shape())
	}
	ct := x.DType()
	off := 0.0
	if halfPixel {
		off = 0.5
	}

	// The sample grid of each box: gh[r] × gw[r] cells, Gh × Gw the largest.
	gh, gw := make([]int, R), make([]int, R)
	Gh, Gw := sr, sr
	if sr == 0 {
		t, err := n.constant(1)
		if err != nil {
			var de *DynamicError
			if errors.As(err, &de) {
				return nil, fmt.Errorf("sampling_ratio 0 samples each box on a grid its size sets: %w", err)
			}
			return nil, err
		}
		Gh, Gw = 0, 0
		f32 := ct == tensor.Float32
		for r := range R {
			v := func(k int) float64 { return t.Float64(4*r + k) }
			h := roiLen(v(1), v(3), scale, off, halfPixel, f32)
			w := roiLen(v(0), v(2), scale, off, halfPixel, f32)
			gh[r] = max(0, int(math.Ceil(roundTo(h/float64(Ho), f32))))
			gw[r] = max(0, int(math.Ceil(roundTo(w/float64(Wo), f32))))
			Gh, Gw = max(Gh, gh[r]), max(Gw, gw[r])
		}
		Gh, Gw = max(Gh, 1), max(Gw, 1)
	} else {
		for r := range R {
			gh[r], gw[r] = sr, sr
		}
	}

	g := n.g()
	rf := ops.Cast(rois, ct)
	s := sampler{like: rf}
	col := func(k int) *graph.Node { // box coordinate k of every box, (R,)
		return ops.Sub(ops.Mul(ops.Reshape(ops.Gather(rf, int64Const(g, []int{k}), 1), R), s.c(scale)), s.c(off))
	}
	x1, y1, x2, y2 := col(0), col(1), col(2), col(3)
	// axisSamples is one axis's sample coordinates, shaped to broadcast
	// over (R, Ho, Wo, Gh, Gw): at (outAxis, gridAxis) its bins and cells.
	axisSamples := func(lo, hi *graph.Node, bins int, cells []int, G, outAxis, gridAxis int) *graph.Node {
		length := ops.Sub(hi, lo)
		if !halfPixel {
			length = ops.Maximum(length, s.c(1)) // malformed boxes are 1x1
		}
		bin := ops.Div(length, s.c(float64(bins)))
		shape := []int{R, 1, 1, 1, 1}
		b5 := func(v *graph.Node) *graph.Node { return ops.Reshape(v, shape...) }
		p := make([]float64, bins)
		for i := range p {
			p[i] = float64(i)
		}
		ps := []int{1, 1, 1, 1, 1}
		ps[outAxis] = bins
		pc, _ := tensor.FromFloat64s(ct, p, ps...)
		q := make([]float64, G)
		for i := range q {
			q[i] = float64(i) + 0.5
		}
		qs := []int{1, 1, 1, 1, 1}
		qs[gridAxis] = G
		qc, _ := tensor.FromFloat64s(ct, q, qs...)
		cf := make([]float64, R)
		for r := range cf {
			cf[r] = float64(max(cells[r], 1))
		}
		cc, _ := tensor.FromFloat64s(ct, cf, shape...)
		// start + p·bin + (i+0.5)·bin/cells, in the reference's order
		return ops.Add(ops.Add(b5(lo), ops.Mul(g.Const(pc), b5(bin))), ops.Div(ops.Mul(g.Const(qc), b5(bin)), g.Const(cc)))
	}
	sy := axisSamples(y1, y2, Ho, gh, Gh, 1, 3) // (R, Ho, 1, Gh, 1)
	sx := axisSamples(x1, x2, Wo, gw, Gw, 2, 4) // (R, 1, Wo, 1, Gw)
	// axisTaps is the reference's bilinear set-up along one axis: the low
	// and high pixels (int64) and their weights, and whether the sample
	// is within a pixel of X.
	axisTaps := func(c *graph.Node, size int) (lo, hi *graph.Node, wlo, whi *graph.Node, ok *graph.Node) {
		ok = ops.And(ops.GreaterEqual(c, s.c(-1)), ops.LessEqual(c, s.c(float64(size))))
		c = ops.Where(ok, ops.Maximum(c, s.c(0)), s.c(0))
		l := ops.Floor(c)
		top := ops.GreaterEqual(l, s.c(float64(size-1)))
		last := s.c(float64(size - 1))
		l = ops.Where(top, last, l)
		h := ops.Where(top, last, ops.Add(l, s.c(1)))
		c = ops.Where(top, last, c)
		frac := ops.Sub(c, l)
		return ops.Cast(l, tensor.Int64), ops.Cast(h, tensor.Int64), ops.Sub(s.c(1), frac), frac, ok
	}
	yl, yh, hy, ly, oky := axisTaps(sy, H)
	xl, xh, hx, lx, okx := axisTaps(sx, W)
	ok := ops.And(oky, okx) // (R, Ho, Wo, Gh, Gw)
	K := R * Ho * Wo * Gh * Gw
	base := ops.Mul(ops.Reshape(ops.Cast(bi, tensor.Int64), R, 1, 1, 1, 1), int64Const(g, []int{H * W}, 1, 1, 1, 1, 1))
	wc := int64Const(g, []int{W}, 1, 1, 1, 1, 1)
	// X as (N·H·W, C): a sample's taps are rows
	xt := ops.Reshape(ops.Transpose(x, 0, 2, 3, 1), N*H*W, C)
	var taps []*graph.Node
	for _, t := range []struct{ y, x, wy, wx *graph.Node }{{yl, xl, hy, hx}, {yl, xh, hy, lx}, {yh, xl, ly, hx}, {yh, xh, ly, lx}} {
		pos := ops.Add(base, ops.Where(ok, ops.Add(ops.Mul(t.y, wc), t.x), int64Const(g, []int{0}, 1, 1, 1, 1, 1)))
		pos = ops.Reshape(ops.BroadcastTo(pos, R, Ho, Wo, Gh, Gw), K)
		w := ops.Reshape(ops.BroadcastTo(ops.Where(ok, ops.Mul(t.wy, t.wx), s.c(0)), R, Ho, Wo, Gh, Gw), K, 1)
		taps = append(taps, ops.Mul(w, ops.Gather(xt, pos, 0))) // (K, C)
	}
	// cells past a box's own grid take no part (sampling_ratio 0)
	var cellMask *graph.Node
	empty := false
	if sr == 0 {
		mv := make([]bool, R*Gh*Gw)
		for r := range R {
			empty = empty || gh[r]*gw[r] == 0
			for i := range gh[r] {
				for j := range gw[r] {
					mv[(r*Gh+i)*Gw+j] = true
				}
			}
		}
		mt, _ := tensor.New(mv, R, 1, Gh*Gw, 1)
		cellMask = g.Const(mt)
	}
	var y *graph.Node // (R, Ho·Wo, C)
	if mode == "avg" {
		sum := ops.Add(ops.Add(ops.Add(taps[0], taps[1]), taps[2]), taps[3])
		sum = ops.Reshape(sum, R, Ho*Wo, Gh*Gw, C)
		if cellMask != nil {
			sum = ops.Where(cellMask, sum, ops.Scalar(sum, 0))
		}
		cnt := make([]float64, R)
		for r := range cnt {
			cnt[r] = float64(max(gh[r]*gw[r], 1))
		}
		ctn, _ := tensor.FromFloat64s(ct, cnt, R, 1, 1)
		y = ops.Div(ops.Sum(sum, 2), g.Const(ctn))
	} else {
		m := ops.Maximum(ops.Maximum(ops.Maximum(taps[0], taps[1]), taps[2]), taps[3])
		m = ops.Reshape(m, R, Ho*Wo, Gh*Gw, C)
		if cellMask != nil {
			m = ops.Where(cellMask, m, ops.Scalar(m, math.Inf(-1)))
		}
		y = ops.Max(m, 2)
		if empty {
			ev := make([]bool, R)
			for r := range R {
				ev[r] = gh[r]*gw[r] == 0
			}
			et, _ := tensor.New(ev, R, 1, 1)
			y = ops.Where(g.Const(et), ops.Scalar(y, 0), y) // the reference's initial 0
		}
	}
	return []*graph.Node{ops.Transpose(ops.Reshape(y, R, Ho, Wo, C), 0, 3, 1, 2)}, nil
}

// roiLen is a box's length along one axis as the reference computes it
// (in float32 when the model's data is float32), for the grid sizes.
func roiLen(lo, hi, scale, off float64, halfPixel, f32 bool) float64 {
	lo = roundTo(roundTo(lo*scale, f32)-off, f32)
	hi = roundTo(roundTo(hi*scale, f32)-off, f32)
	l := roundTo(hi-lo, f32)
	if !halfPixel {
		l = max(l, 1)
	}
	return l
}

// roundTo rounds v to float32 when f32 is set.
func roundTo(v float64, f32 bool) float64 {
	if f32 {
		return float64(float32(v))
	}
	return v
}

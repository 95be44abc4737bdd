package onnx

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Resampling, spectral and window operators: Resize (opsets 10 to 13),
// Upsample (7 to 9), DFT and STFT (17), HannWindow, HammingWindow,
// BlackmanWindow and MelWeightMatrix (17), and Det.
//
// Resize is separable: along each resized axis the output index o reads
// k input elements (k = 1 nearest, 2 linear, 4 cubic) with weights
// computed at import from the coordinate transformation, so one axis is a
// Gather of a [out, k] index table, a product with the [out, k] weights
// and a sum over k. The scales or sizes must be known at import.

func init() {
	reg := func(name string, d opDef) {
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	reg("Resize", opDef{attrs: []string{"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
		"extrapolation_value", "mode", "nearest_mode"}, fn: resizeOp})
	reg("Upsample", opDef{attrs: []string{"mode", "scales"}, fn: upsampleOp})
	reg("DFT", opDef{attrs: []string{"axis", "inverse", "onesided"}, fn: dftOp})
	reg("STFT", opDef{attrs: []string{"onesided"}, fn: stftOp})
	reg("HannWindow", windowOp([]float64{0.5, -0.5}))
	reg("HammingWindow", windowOp([]float64{25.0 / 46, -21.0 / 46}))
	reg("BlackmanWindow", windowOp([]float64{0.42, -0.5, 0.08}))
	reg("MelWeightMatrix", opDef{attrs: []string{"output_datatype"}, fn: melOp})
	reg("Det", opDef{fn: func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		if x.Rank() < 2 || x.Shape()[x.Rank()-1] != x.Shape()[x.Rank()-2] {
			return nil, fmt.Errorf("the input is %v; Det needs square matrices in its last two axes", x.Shape())
		}
		if !x.DType().IsFloat() {
			return nil, fmt.Errorf("the input is %s; Det needs a float type", x.DType())
		}
		return []*graph.Node{ops.Det(x)}, nil
	}})
}

// resizeSpec is one Resize or Upsample, its attributes resolved.
type resizeSpec struct {
	mode    string // nearest, linear, cubic
	coord   string // coordinate_transformation_mode
	nearest string // nearest_mode
	cubicA  float64
	exclude bool
	extrap  float64
	roi     []float64 // starts then ends, for tf_crop_and_resize
	scales  []float64 // per axis
	sizes   []int     // per axis (the output shape)
	lens    []float64 // per axis, the resized length before rounding
}

func resizeOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	r := x.Rank()
	s := resizeSpec{mode: n.attrString("mode", "nearest")}
	if n.opset() < 11 {
		for _, a := range []string{"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value", "nearest_mode"} {
			if n.hasAttr(a) {
				return nil, fmt.Errorf("%w: attribute %q before opset 11", ErrUnsupported, a)
			}
		}
		sc, err := knownFloats(n, 1, "scales")
		if err != nil {
			return nil, err
		}
		s.scales = sc
		return resizeV10(x, s)
	}
	s.coord = n.attrString("coordinate_transformation_mode", "half_pixel")
	s.nearest = n.attrString("nearest_mode", "round_prefer_floor")
	s.cubicA = n.attrFloat("cubic_coeff_a", -0.75)
	s.exclude = n.attrInt("exclude_outside", 0) != 0
	s.extrap = n.attrFloat("extrapolation_value", 0)
	var scales []float64
	if n.has(2) {
		if scales, err = knownFloats(n, 2, "scales"); err != nil {
			return nil, err
		}
	}
	var sizes []int
	if n.has(3) {
		if sizes, err = n.ints(3); err != nil {
			return nil, fmt.Errorf("sizes: %w", err)
		}
	}
	if s.coord == "tf_crop_and_resize" {
		roi, err := knownFloats(n, 1, "roi")
		if err != nil {
			return nil, err
		}
		if len(roi) != 2*r {
			return nil, fmt.Errorf("roi %v has %d values; tf_crop_and_resize needs %d (starts and ends of each of %d axes)", roi, len(roi), 2*r, r)
		}
		s.roi = roi
	}
	switch {
	case len(scales) > 0 && len(sizes) > 0:
		return nil, fmt.Errorf("both scales %v and sizes %v are given; the spec allows one", scales, sizes)
	case len(scales) > 0:
		if len(scales) != r {
			return nil, fmt.Errorf("scales %v has %d values for an input of rank %d", scales, len(scales), r)
		}
		s.scales = scales
		for i, v := range scales {
			if !(v > 0) {
				return nil, fmt.Errorf("scales %v: every scale must be positive", scales)
			}
			l := float64(x.Shape()[i]) * v
			if s.roi != nil {
				// The output covers the crop: in·(end-start)·scale.
				l *= s.roi[r+i] - s.roi[i]
			}
			s.sizes = append(s.sizes, int(math.Floor(l)))
			s.lens = append(s.lens, l)
		}
	case len(sizes) > 0:
		if len(sizes) != r {
			return nil, fmt.Errorf("sizes %v has %d values for an input of rank %d", sizes, len(sizes), r)
		}
		s.sizes = sizes
		for i, v := range sizes {
			if v < 0 {
				return nil, fmt.Errorf("sizes %v: a size is negative", sizes)
			}
			s.scales = append(s.scales, float64(v)/float64(x.Shape()[i]))
			s.lens = append(s.lens, float64(v))
		}
	default:
		return nil, fmt.Errorf("neither scales nor sizes is given")
	}
	y, err := resizeBuild(x, s)
	if err != nil {
		return nil, err
	}
	return []*graph.Node{y}, nil
}

// resizeV10 is Resize-10 and Upsample: asymmetric coordinates, nearest
// by floor (the mapping of the Upsample spec), output floor(in·scale).
func resizeV10(x *graph.Node, s resizeSpec) ([]*graph.Node, error) {
	if len(s.scales) != x.Rank() {
		return nil, fmt.Errorf("scales %v has %d values for an input of rank %d", s.scales, len(s.scales), x.Rank())
	}
	switch s.mode {
	case "nearest", "linear":
	case "bilinear": // Upsample-7's other name for linear
		s.mode = "linear"
	default:
		return nil, fmt.Errorf("%w: mode %q (want nearest or linear)", ErrUnsupported, s.mode)
	}
	s.coord = "asymmetric"
	s.nearest = "floor"
	for i, v := range s.scales {
		if !(v > 0) {
			return nil, fmt.Errorf("scales %v: every scale must be positive", s.scales)
		}
		if s.mode == "nearest" && v < 1 {
			return nil, fmt.Errorf("%w: nearest downsampling (scale %g) before opset 11: the spec does not define its rounding", ErrUnsupported, v)
		}
		l := float64(x.Shape()[i]) * v
		s.sizes = append(s.sizes, int(math.Floor(l)))
		s.lens = append(s.lens, l)
	}
	y, err := resizeBuild(x, s)
	if err != nil {
		return nil, err
	}
	return []*graph.Node{y}, nil
}

func upsampleOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	s := resizeSpec{mode: n.attrString("mode", "nearest")}
	switch {
	case n.opset() < 7:
		return nil, fmt.Errorf("%w: Upsample before opset 7 (height_scale/width_scale)", ErrUnsupported)
	case n.opset() < 9:
		sc, ok := n.attrFloats("scales")
		if !ok {
			return nil, fmt.Errorf("attribute scales is required")
		}
		s.scales = sc
	default:
		if n.hasAttr("scales") {
			return nil, fmt.Errorf("%w: attribute scales from opset 9 (scales is an input)", ErrUnsupported)
		}
		sc, err := knownFloats(n, 1, "scales")
		if err != nil {
			return nil, err
		}
		s.scales = sc
	}
	for _, v := range s.scales {
		if v < 1 {
			return nil, fmt.Errorf("scales %v: Upsample's scales must be >= 1", s.scales)
		}
	}
	return resizeV10(x, s)
}

// knownFloats reads input i, known at import, as float64s.
func knownFloats(n *onode, i int, what string) ([]float64, error) {
	t, err := n.constant(i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !t.DType().IsFloat() {
		return nil, fmt.Errorf("%s is %s; want floats", what, t.DType())
	}
	out := make([]float64, t.Size())
	for k := range out {
		out[k] = t.Float64(k)
	}
	return out, nil
}

// resizeBuild applies the resize axis by axis.
func resizeBuild(x *graph.Node, s resizeSpec) (*graph.Node, error) {
	switch s.mode {
	case "nearest", "linear", "cubic":
	default:
		return nil, fmt.Errorf("%w: mode %q (want nearest, linear or cubic)", ErrUnsupported, s.mode)
	}
	switch s.coord {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize":
	default:
		return nil, fmt.Errorf("%w: coordinate_transformation_mode %q", ErrUnsupported, s.coord)
	}
	switch s.nearest {
	case "", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil":
	default:
		return nil, fmt.Errorf("%w: nearest_mode %q", ErrUnsupported, s.nearest)
	}
	if s.mode != "nearest" && !x.DType().IsFloat() {
		return nil, fmt.Errorf("%w: %s interpolation of %s (loom interpolates floats; integer rounding is not specified)", ErrUnsupported, s.mode, x.DType())
	}
	y := x
	for ax := range x.Rank() {
		in, out := x.Shape()[ax], s.sizes[ax]
		if in == 0 || out == 0 {
			if in != out {
				return nil, fmt.Errorf("axis %d: resizing length %d to %d", ax, in, out)
			}
			continue
		}
		idx, w, outside := resizeTable(s, ax, in, out)
		y = resizeAxis(y, ax, idx, w, outside, s.extrap)
	}
	return y, nil
}

// resizeTable computes, for each output position along axis ax, the
// input indices it reads (clamped to the axis: the spec's edge padding),
// their weights, and whether the position lies outside the crop
// (tf_crop_and_resize: the extrapolation value).
func resizeTable(s resizeSpec, ax, in, out int) (idx [][]int, w [][]float64, outside []bool) {
	scale := s.scales[ax]
	// The resized length in the coordinate formulas is in·scale, not
	// rounded (as the ONNX reference: it matters for align_corners with
	// scales); with sizes it is the size.
	fin, fout := float64(in), s.lens[ax]
	idx = make([][]int, out)
	w = make([][]float64, out)
	outside = make([]bool, out)
	clamp := func(i int) int { return min(max(i, 0), in-1) }
	for o := range out {
		xo := float64(o)
		var xi float64
		switch s.coord {
		case "half_pixel":
			xi = (xo+0.5)/scale - 0.5
		case "pytorch_half_pixel":
			if fout > 1 {
				xi = (xo+0.5)/scale - 0.5
			}
		case "align_corners":
			if fout > 1 {
				xi = xo * (fin - 1) / (fout - 1)
			}
		case "asymmetric":
			xi = xo / scale
		case "tf_half_pixel_for_nn":
			xi = (xo + 0.5) / scale
		case "tf_crop_and_resize":
			r := len(s.roi) / 2
			start, end := s.roi[ax], s.roi[r+ax]
			if fout > 1 {
				xi = start*(fin-1) + xo*(end-start)*(fin-1)/(fout-1)
			} else {
				xi = 0.5 * (start + end) * (fin - 1)
			}
			if xi < 0 || xi > fin-1 {
				outside[o] = true
			}
		}
		if s.mode == "nearest" {
			var k float64
			switch {
			case xi == math.Trunc(xi):
				k = xi
			case s.nearest == "floor":
				k = math.Floor(xi)
			case s.nearest == "ceil":
				k = math.Ceil(xi)
			case s.nearest == "round_prefer_ceil":
				k = math.Floor(xi + 0.5)
			default: // round_prefer_floor
				k = math.Ceil(xi - 0.5)
			}
			idx[o] = []int{clamp(int(k))}
			w[o] = []float64{1}
			continue
		}
		// base and ratio in (0, 1]: the reference prefers the left pixel.
		base := math.Ceil(xi) - 1
		t := xi - base
		b := int(base)
		var taps []int
		var cs []float64
		if s.mode == "linear" {
			taps = []int{b, b + 1}
			cs = []float64{1 - t, t}
		} else {
			a := s.cubicA
			taps = []int{b - 1, b, b + 1, b + 2}
			cs = []float64{
				((a*(t+1)-5*a)*(t+1)+8*a)*(t+1) - 4*a,
				((a+2)*t-(a+3))*t*t + 1,
				((a+2)*(1-t)-(a+3))*(1-t)*(1-t) + 1,
				((a*(2-t)-5*a)*(2-t)+8*a)*(2-t) - 4*a,
			}
		}
		if s.exclude {
			sum := 0.0
			for j, tp := range taps {
				if tp < 0 || tp >= in {
					cs[j] = 0
				}
				sum += cs[j]
			}
			for j := range cs {
				cs[j] /= sum
			}
		}
		for j := range taps {
			taps[j] = clamp(taps[j])
		}
		idx[o], w[o] = taps, cs
	}
	return idx, w, outside
}

// resizeAxis gathers and weighs x along axis ax.
func resizeAxis(x *graph.Node, ax int, idx [][]int, w [][]float64, outside []bool, extrap float64) *graph.Node {
	in, out := x.Shape()[ax], len(idx)
	// Collapse to one tap per row where the weights allow it (scale 1,
	// nearest, integer positions): a plain Gather, exact for any dtype.
	single := make([]int, out)
	ok := true
	for o := range out {
		single[o] = -1
		for j, v := range w[o] {
			switch {
			case v == 0:
			case v == 1 && single[o] < 0:
				single[o] = idx[o][j]
			default:
				ok = false
			}
		}
		if single[o] < 0 {
			// all weights zero (cannot happen for finite inputs): read tap 0
			ok = false
		}
	}
	var y *graph.Node
	g := x.Graph()
	if ok {
		identity := in == out
		for o, i := range single {
			identity = identity && i == o
		}
		if identity {
			y = x
		} else {
			y = ops.Gather(x, constInts(g, single, out), ax)
		}
	} else {
		k := len(idx[0])
		flat := make([]int, 0, out*k)
		wf := make([]float64, 0, out*k)
		for o := range out {
			flat = append(flat, idx[o]...)
			wf = append(wf, w[o]...)
		}
		gathered := ops.Gather(x, constInts(g, flat, out, k), ax) // [..., out, k, ...]
		shape := make([]int, gathered.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[ax], shape[ax+1] = out, k
		wt, _ := tensor.FromFloat64s(x.DType(), wf, shape...)
		y = ops.Sum(ops.Mul(gathered, g.Const(wt)), ax+1)
	}
	anyOut := false
	for _, b := range outside {
		anyOut = anyOut || b
	}
	if anyOut {
		shape := make([]int, x.Rank())
		for i := range shape {
			shape[i] = 1
		}
		shape[ax] = out
		mv := make([]bool, out)
		copy(mv, outside)
		mt, _ := tensor.New(mv, shape...)
		y = ops.Where(g.Const(mt), ops.Scalar(y, extrap), y)
	}
	return y
}

// constInts is an int64 constant of the given shape.
func constInts(g *graph.Graph, v []int, shape ...int) *graph.Node {
	vs := make([]int64, len(v))
	for i, x := range v {
		vs[i] = int64(x)
	}
	t, _ := tensor.New(vs, shape...)
	return g.Const(t)
}

// ---- spectral ----

// complexIn turns an ONNX signal with a trailing dimension of 1 (real) or
// 2 (real, imaginary) into a loom operand without it: real or complex.
func complexIn(x *graph.Node, what string) (*graph.Node, bool, error) {
	r := x.Rank()
	if r < 2 {
		return nil, false, fmt.Errorf("%s is %v; it needs a trailing dimension of 1 (real) or 2 (complex)", what, x.Shape())
	}
	if !x.DType().IsFloat() {
		return nil, false, fmt.Errorf("%s is %s; want a float type", what, x.DType())
	}
	switch x.Shape()[r-1] {
	case 1:
		return ops.Squeeze(x, r-1), false, nil
	case 2:
		parts := ops.Split(x, 2, r-1)
		return ops.Complex(ops.Squeeze(parts[0], r-1), ops.Squeeze(parts[1], r-1)), true, nil
	}
	return nil, false, fmt.Errorf("%s is %v; its trailing dimension must be 1 (real) or 2 (complex)", what, x.Shape())
}

// complexOut stacks the real and imaginary parts of z on a new last axis.
func complexOut(z *graph.Node) *graph.Node {
	return ops.Stack(-1, ops.Real(z), ops.Imag(z))
}

func knownScalarInt(n *onode, i int, what string) (int, error) {
	v, err := n.ints(i)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("%s has %d values; want a scalar", what, len(v))
	}
	return v[0], nil
}

func dftOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	dt := x.DType()
	r := x.Rank()
	axis := n.attrInt("axis", 1)
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r-1 {
		return nil, fmt.Errorf("axis %d is out of range for an input of rank %d (the last axis holds the real and imaginary parts)", n.attrInt("axis", 1), r)
	}
	z, isComplex, err := complexIn(x, "the input")
	if err != nil {
		return nil, err
	}
	length := z.Shape()[axis]
	if n.has(1) {
		if length, err = knownScalarInt(n, 1, "dft_length"); err != nil {
			return nil, err
		}
		if length < 1 {
			return nil, fmt.Errorf("dft_length %d must be positive", length)
		}
	}
	inverse := n.attrInt("inverse", 0) != 0
	onesided := n.attrInt("onesided", 0) != 0
	if onesided && (isComplex || inverse) {
		return nil, fmt.Errorf("%w: onesided with a complex input or inverse (the spec defines the one-sided output of a real forward transform)", ErrUnsupported)
	}
	// The transform runs in float64 (complex128) whatever the input's
	// precision: a float32 FFT of a long signal leaves residues of
	// eps·|x|·log n where the exact result is zero, beyond the backend
	// tests' tolerance; the result is cast back.
	if z.DType() == tensor.Float32 {
		z = ops.Cast(z, tensor.Float64)
	} else if z.DType() == tensor.Complex64 {
		z = ops.Cast(z, tensor.Complex128)
	}
	opts := []ops.FFTOption{ops.FFTAxes(axis), ops.FFTLengths(length)}
	var y *graph.Node
	if inverse {
		y = ops.IFFT(z, opts...)
	} else {
		y = ops.FFT(z, opts...)
	}
	if onesided {
		rs := make([]ops.Range, axis+1)
		for i := range rs {
			rs[i] = ops.All
		}
		rs[axis] = ops.R(0, length/2+1)
		y = ops.Slice(y, rs...)
	}
	out := complexOut(y)
	if out.DType() != dt {
		out = ops.Cast(out, dt)
	}
	return []*graph.Node{out}, nil
}

func stftOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	dt := x.DType()
	if x.Rank() != 3 {
		return nil, fmt.Errorf("the signal is %v; want [batch, length, 1 or 2]", x.Shape())
	}
	z, isComplex, err := complexIn(x, "the signal")
	if err != nil {
		return nil, err
	}
	step, err := knownScalarInt(n, 1, "frame_step")
	if err != nil {
		return nil, err
	}
	if step < 1 {
		return nil, fmt.Errorf("frame_step %d must be positive", step)
	}
	win := n.in(2)
	frame := -1
	if win != nil {
		if win.Rank() != 1 {
			return nil, fmt.Errorf("the window is %v; want one dimension", win.Shape())
		}
		frame = win.Shape()[0]
	}
	if n.has(3) {
		fl, err := knownScalarInt(n, 3, "frame_length")
		if err != nil {
			return nil, err
		}
		if frame >= 0 && fl != frame {
			return nil, fmt.Errorf("frame_length %d differs from the window's length %d", fl, frame)
		}
		frame = fl
	}
	if frame < 1 {
		return nil, fmt.Errorf("neither a window nor frame_length gives the frame length (or it is not positive)")
	}
	onesided := n.attrInt("onesided", 1) != 0
	if onesided && isComplex {
		return nil, fmt.Errorf("%w: onesided with a complex signal (the spec allows it for real signals only)", ErrUnsupported)
	}
	L := z.Shape()[1]
	if L < frame {
		return nil, fmt.Errorf("the signal has %d samples, fewer than a frame (%d)", L, frame)
	}
	frames := (L-frame)/step + 1
	idx := make([]int, 0, frames*frame)
	for f := range frames {
		for j := range frame {
			idx = append(idx, f*step+j)
		}
	}
	fr := ops.Gather(z, constInts(n.g(), idx, frames, frame), 1) // [batch, frames, frame]
	if win != nil {
		if win.DType() != fr.DType() {
			win = ops.Cast(win, fr.DType())
		}
		fr = ops.Mul(fr, win)
	}
	y := ops.FFT(fr, ops.FFTAxes(2))
	if onesided {
		y = ops.Slice(y, ops.All, ops.All, ops.R(0, frame/2+1))
	}
	out := complexOut(y)
	if out.DType() != dt {
		out = ops.Cast(out, dt)
	}
	return []*graph.Node{out}, nil
}

// outputDType is the output_datatype attribute (default float).
func outputDType(n *onode) (tensor.DType, error) {
	dt, err := loomDType(int32(n.attrInt("output_datatype", 1)))
	if err != nil {
		return tensor.Invalid, fmt.Errorf("output_datatype: %w: %w", err, ErrUnsupported)
	}
	return dt, nil
}

// windowOp is a generalised cosine window: sum_k a[k]·cos(2πkn/N), N the
// size (periodic) or size-1 (symmetric).
func windowOp(a []float64) opDef {
	return opDef{attrs: []string{"output_datatype", "periodic"}, knownAlways: true, fn: func(n *onode) ([]*graph.Node, error) {
		size, err := knownScalarInt(n, 0, "size")
		if err != nil {
			return nil, err
		}
		if size < 0 {
			return nil, fmt.Errorf("size %d is negative", size)
		}
		dt, err := outputDType(n)
		if err != nil {
			return nil, err
		}
		N := float64(size)
		if n.attrInt("periodic", 1) == 0 {
			N = float64(size - 1)
		}
		v := make([]float64, size)
		for i := range v {
			for k, c := range a {
				v[i] += c * math.Cos(2*math.Pi*float64(k)*float64(i)/N)
			}
			if size == 1 {
				v[i] = 1 // N = 0 for a symmetric window of one sample
			}
		}
		t, err := tensor.FromFloat64s(dt, v, size)
		if err != nil {
			return nil, err
		}
		return []*graph.Node{n.g().Const(t)}, nil
	}}
}

// melOp is MelWeightMatrix: triangular filters between mel-spaced
// frequency bins, as the operator's definition computes them.
func melOp(n *onode) ([]*graph.Node, error) {
	bins, err := knownScalarInt(n, 0, "num_mel_bins")
	if err != nil {
		return nil, err
	}
	dftLen, err := knownScalarInt(n, 1, "dft_length")
	if err != nil {
		return nil, err
	}
	rate, err := knownScalarInt(n, 2, "sample_rate")
	if err != nil {
		return nil, err
	}
	lo, err := knownFloats(n, 3, "lower_edge_hertz")
	if err != nil {
		return nil, err
	}
	hi, err := knownFloats(n, 4, "upper_edge_hertz")
	if err != nil {
		return nil, err
	}
	if len(lo) != 1 || len(hi) != 1 {
		return nil, fmt.Errorf("lower_edge_hertz and upper_edge_hertz must be scalars")
	}
	if bins < 1 || dftLen < 1 || rate < 1 {
		return nil, fmt.Errorf("num_mel_bins %d, dft_length %d and sample_rate %d must be positive", bins, dftLen, rate)
	}
	dt, err := outputDType(n)
	if err != nil {
		return nil, err
	}
	spec := dftLen/2 + 1
	mel := func(hz float64) float64 { return 2595 * math.Log10(1+hz/700) }
	lowMel, highMel := mel(lo[0]), mel(hi[0])
	step := (highMel - lowMel) / float64(bins+2)
	fb := make([]int, bins+2)
	for i := range fb {
		hz := 700 * (math.Pow(10, (float64(i)*step+lowMel)/2595) - 1)
		fb[i] = int(math.Floor(float64(dftLen+1) * hz / float64(rate)))
		if fb[i] < 0 || fb[i] >= spec {
			return nil, fmt.Errorf("frequency bin %d lies outside the %d spectrogram bins (upper_edge_hertz %g above sample_rate/2?)", fb[i], spec, hi[0])
		}
	}
	v := make([]float64, spec*bins)
	for i := range bins {
		l, c, h := fb[i], fb[i+1], fb[i+2]
		if c == l {
			v[c*bins+i] = 1
		} else {
			for j := l; j <= c; j++ {
				v[j*bins+i] = float64(j-l) / float64(c-l)
			}
		}
		if h > c {
			for j := c; j < h; j++ {
				v[j*bins+i] = float64(h-j) / float64(h-c)
			}
		}
	}
	t, err := tensor.FromFloat64s(dt, v, spec, bins)
	if err != nil {
		return nil, err
	}
	return []*graph.Node{n.g().Const(t)}, nil
}

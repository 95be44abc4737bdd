package onnx

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The neural-network operators: Gemm, MatMul, Einsum, the convolutions
// (Conv, ConvTranspose) and the pools (MaxPool, AveragePool, LpPool and
// their global forms). Layouts are ONNX's, channels first: x [N, C,
// S...], which is loom's. The windowed ops take ONNX's pads
// ([x1_begin, x2_begin, ..., x1_end, x2_end, ...]) and auto_pad; the
// pools' result sizes are ONNX's, checked against loom's after building.

func init() {
	reg := func(name string, d opDef) {
		d.spec = "Operators.md#" + name
		operators[name] = d
	}
	reg("Gemm", opDef{attrs: []string{"alpha", "beta", "transA", "transB", "broadcast"}, fn: gemmOp})
	reg("MatMul", opDef{fn: func(n *onode) ([]*graph.Node, error) {
		a, b := n.in(0), n.in(1)
		if a == nil || b == nil {
			return nil, fmt.Errorf("two inputs are required")
		}
		y, err := matmul(a, b)
		if err != nil {
			return nil, err
		}
		return []*graph.Node{y}, nil
	}})
	reg("Einsum", opDef{attrs: []string{"equation"}, fn: func(n *onode) ([]*graph.Node, error) {
		if !n.hasAttr("equation") {
			return nil, fmt.Errorf("the equation attribute is required")
		}
		xs := n.ins()
		if len(xs) == 0 {
			return nil, fmt.Errorf("at least one input is required")
		}
		return []*graph.Node{ops.Einsum(n.attrString("equation", ""), xs...)}, nil
	}})
	reg("Conv", opDef{attrs: []string{"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}, fn: convOp})
	reg("ConvTranspose", opDef{attrs: []string{"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}, fn: convTransposeOp})
	reg("MaxPool", opDef{attrs: []string{"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}, fn: maxPoolOp})
	reg("AveragePool", opDef{attrs: []string{"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}, fn: avgPoolOp})
	reg("MaxUnpool", opDef{attrs: []string{"kernel_shape", "pads", "strides"}, fn: maxUnpoolOp})
	reg("LpPool", opDef{attrs: []string{"auto_pad", "kernel_shape", "p", "pads", "strides"}, fn: lpPoolOp})
	reg("Flatten", opDef{attrs: []string{"axis"}, storageOK: true, fn: flattenOp})
	reg("DepthToSpace", opDef{attrs: []string{"blocksize", "mode"}, storageOK: true, fn: depthToSpaceOp})
	reg("SpaceToDepth", opDef{attrs: []string{"blocksize"}, storageOK: true, fn: spaceToDepthOp})
	reg("GlobalAveragePool", opDef{fn: globalPool(func(n *onode, x *graph.Node, axes []int) (*graph.Node, error) {
		return ops.MeanKeepDims(x, axes...), nil
	})})
	reg("GlobalMaxPool", opDef{fn: globalPool(func(n *onode, x *graph.Node, axes []int) (*graph.Node, error) {
		return ops.MaxKeepDims(x, axes...), nil
	})})
	reg("GlobalLpPool", opDef{attrs: []string{"p"}, fn: globalPool(func(n *onode, x *graph.Node, axes []int) (*graph.Node, error) {
		p, err := lpOrder(n)
		if err != nil {
			return nil, err
		}
		return lpRoot(ops.SumKeepDims(lpPower(x, p), axes...), p), nil
	})})
}

// ---- Gemm, MatMul ----

// gemmOp is Y = alpha·op(A)·op(B) + beta·C, A and B matrices, C
// broadcast unidirectionally to [M, N] (Gemm-6's broadcast attribute is
// that rule too; without it the shapes must already agree).
func gemmOp(n *onode) ([]*graph.Node, error) {
	a, b := n.in(0), n.in(1)
	if a == nil || b == nil {
		return nil, fmt.Errorf("inputs A and B are required")
	}
	if a.Rank() != 2 || b.Rank() != 2 {
		return nil, fmt.Errorf("A %v and B %v must be matrices", a.Shape(), b.Shape())
	}
	if a.DType() != b.DType() {
		return nil, fmt.Errorf("A is %s and B %s: Gemm needs one type", a.DType(), b.DType())
	}
	ta, tb := n.attrInt("transA", 0) != 0, n.attrInt("transB", 0) != 0
	var y *graph.Node
	if a.DType().IsFloat() {
		y = ops.MatMulT(a, b, ta, tb)
	} else {
		ea, eb := "ik", "kj"
		if ta {
			ea = "ki"
		}
		if tb {
			eb = "jk"
		}
		y = ops.Einsum(ea+","+eb+"->ij", a, b)
	}
	if !y.Valid() {
		return nil, n.im.g.Err()
	}
	if alpha := n.attrFloat("alpha", 1); alpha != 1 {
		if !y.DType().IsFloat() && alpha != math.Trunc(alpha) {
			return nil, fmt.Errorf("%w: alpha %v on %s operands", ErrUnsupported, alpha, y.DType())
		}
		y = ops.Mul(y, scalarLike(y, alpha))
	}
	if c := n.in(2); c != nil {
		if c.DType() != y.DType() {
			return nil, fmt.Errorf("C is %s, A and B %s: Gemm needs one type", c.DType(), y.DType())
		}
		if _, err := ops.BroadcastShapes(c.Shape(), y.Shape()); err != nil || c.Rank() > 2 {
			return nil, fmt.Errorf("C %v does not broadcast to the product's shape %v", c.Shape(), y.Shape())
		}
		if beta := n.attrFloat("beta", 1); beta != 1 {
			if !y.DType().IsFloat() && beta != math.Trunc(beta) {
				return nil, fmt.Errorf("%w: beta %v on %s operands", ErrUnsupported, beta, y.DType())
			}
			c = ops.Mul(c, scalarLike(c, beta))
		}
		sum := ops.Add(y, c)
		if sum.Valid() && !sum.Shape().Equal(y.Shape()) {
			return nil, fmt.Errorf("C %v does not broadcast to the product's shape %v", c.Shape(), y.Shape())
		}
		y = sum
	} else if n.opset() < 11 {
		return nil, fmt.Errorf("input C is required before opset 11")
	}
	return []*graph.Node{y}, nil
}

// matmul is numpy.matmul for float and integer operands (loom's MatMul
// takes floats; integers go through Einsum).
func matmul(a, b *graph.Node) (*graph.Node, error) {
	if a.DType() != b.DType() {
		return nil, fmt.Errorf("operands are %s and %s: MatMul needs one type", a.DType(), b.DType())
	}
	if a.Rank() == 0 || b.Rank() == 0 {
		return nil, fmt.Errorf("operands %v and %v must have rank >= 1", a.Shape(), b.Shape())
	}
	if a.DType().IsFloat() {
		return ops.MatMul(a, b), nil
	}
	vecA, vecB := a.Rank() == 1, b.Rank() == 1
	if vecA {
		a = ops.Reshape(a, 1, a.Shape()[0])
	}
	if vecB {
		b = ops.Reshape(b, b.Shape()[0], 1)
	}
	y := ops.Einsum("...ik,...kj->...ij", a, b)
	if !y.Valid() {
		return y, nil
	}
	s := append(tensor.Shape{}, y.Shape()...)
	switch {
	case vecA && vecB:
		s = s[:len(s)-2]
	case vecA:
		s = append(s[:len(s)-2], s[len(s)-1])
	case vecB:
		s = s[:len(s)-1]
	default:
		return y, nil
	}
	return ops.Reshape(y, s...), nil
}

// ---- windows ----

// window is the spatial settings of an ONNX convolution or pool: one
// entry per spatial dim.
type window struct {
	kernel, strides, dilations []int
	lo, hi                     []int // padding before and after
	autoPad                    string
}

// perDim reads an attribute of one value per spatial dim, def where
// absent.
func (n *onode) perDim(name string, sp, def int) ([]int, error) {
	v, ok := n.attrInts(name)
	if !ok {
		v = make([]int, sp)
		for i := range v {
			v[i] = def
		}
		return v, nil
	}
	if len(v) != sp {
		return nil, fmt.Errorf("%s %v has %d values for %d spatial dims", name, v, len(v), sp)
	}
	return v, nil
}

// window reads strides, dilations (when dilated), pads and auto_pad for
// the spatial size in and the kernel. SAME_UPPER and SAME_LOWER pad so
// that the result has ceil(in/stride) positions, the odd pad after
// (UPPER) or before (LOWER); VALID is no padding.
func (n *onode) window(in, kernel []int, dilated bool) (window, error) {
	sp := len(in)
	w := window{kernel: kernel, autoPad: n.attrString("auto_pad", "NOTSET")}
	var err error
	if w.strides, err = n.perDim("strides", sp, 1); err != nil {
		return w, err
	}
	w.dilations = make([]int, sp)
	for i := range w.dilations {
		w.dilations[i] = 1
	}
	if dilated {
		if w.dilations, err = n.perDim("dilations", sp, 1); err != nil {
			return w, err
		}
	}
	for i := range sp {
		if w.strides[i] < 1 || w.dilations[i] < 1 || kernel[i] < 1 {
			return w, fmt.Errorf("strides %v, dilations %v and kernel %v must be >= 1", w.strides, w.dilations, kernel)
		}
	}
	w.lo, w.hi = make([]int, sp), make([]int, sp)
	switch w.autoPad {
	case "NOTSET":
		if p, ok := n.attrInts("pads"); ok {
			if len(p) != 2*sp {
				return w, fmt.Errorf("pads %v has %d values for %d spatial dims (want %d)", p, len(p), sp, 2*sp)
			}
			for i := range sp {
				w.lo[i], w.hi[i] = p[i], p[sp+i]
				if w.lo[i] < 0 || w.hi[i] < 0 {
					return w, fmt.Errorf("pads %v must be >= 0", p)
				}
			}
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		for i := range sp {
			out := (in[i] + w.strides[i] - 1) / w.strides[i]
			total := max(0, (out-1)*w.strides[i]+w.span(i)-in[i])
			small := total / 2
			if w.autoPad == "SAME_UPPER" {
				w.lo[i], w.hi[i] = small, total-small
			} else {
				w.lo[i], w.hi[i] = total-small, small
			}
		}
	default:
		return w, fmt.Errorf("auto_pad %q: want NOTSET, SAME_UPPER, SAME_LOWER or VALID", w.autoPad)
	}
	return w, nil
}

// span is the extent of the dilated kernel in spatial dim i.
func (w window) span(i int) int { return w.dilations[i]*(w.kernel[i]-1) + 1 }

// options are loom's WindowOptions for w (strides, dilations, padding).
func (w window) options() []ops.WindowOption {
	return []ops.WindowOption{ops.Stride(w.strides...), ops.Dilation(w.dilations...), ops.PaddingLoHi(w.lo, w.hi)}
}

// poolOut is ONNX's pooled size of spatial dim i of length in (the
// shape inference of ONNX 1.12): ceil(in/stride) with SAME padding,
// else floor (or ceil with ceil_mode) of (in + pads - span)/stride,
// plus 1.
func (w window) poolOut(i, in int, ceil bool) int {
	s := w.strides[i]
	if w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER" {
		return (in + s - 1) / s
	}
	num := in + w.lo[i] + w.hi[i] - w.span(i)
	if num < 0 {
		return 0
	}
	if ceil {
		return (num+s-1)/s + 1
	}
	return num/s + 1
}

// spatialOperand checks that x is [N, C, S...] with 1 to 3 spatial dims.
func spatialOperand(x *graph.Node, what string) error {
	if x.Rank() < 3 {
		return fmt.Errorf("%s %v must be [N, C, S...] with at least one spatial dim", what, x.Shape())
	}
	if x.Rank() > 5 {
		return fmt.Errorf("%w: %s %v has %d spatial dims; loom's convolutions and pools take 1 to 3", ErrUnsupported, what, x.Shape(), x.Rank()-2)
	}
	return nil
}

// filterKernel checks kernel_shape against the filter's spatial shape.
func (n *onode) filterKernel(w *graph.Node) ([]int, error) {
	k := []int(w.Shape()[2:])
	if ks, ok := n.attrInts("kernel_shape"); ok && !tensor.Shape(ks).Equal(k) {
		return nil, fmt.Errorf("kernel_shape %v differs from the filter's spatial shape %v", ks, k)
	}
	return k, nil
}

// ---- Conv, ConvTranspose ----

// convOperands checks Conv's and ConvTranspose's X and W and returns
// them with W's kernel shape.
func convOperands(n *onode) (x, w *graph.Node, k []int, err error) {
	x, w = n.in(0), n.in(1)
	if x == nil || w == nil {
		return nil, nil, nil, fmt.Errorf("inputs X and W are required")
	}
	if err := spatialOperand(x, "X"); err != nil {
		return nil, nil, nil, err
	}
	if w.Rank() != x.Rank() {
		return nil, nil, nil, fmt.Errorf("X %v and W %v need the same rank", x.Shape(), w.Shape())
	}
	k, err = n.filterKernel(w)
	return x, w, k, err
}

func convOp(n *onode) ([]*graph.Node, error) {
	x, w, k, err := convOperands(n)
	if err != nil {
		return nil, err
	}
	win, err := n.window(x.Shape()[2:], k, true)
	if err != nil {
		return nil, err
	}
	opts := append(win.options(), ops.Groups(n.attrInt("group", 1)))
	if b := n.in(2); b != nil {
		return []*graph.Node{ops.ConvBias(x, w, b, opts...)}, nil
	}
	return []*graph.Node{ops.Conv(x, w, opts...)}, nil
}

// convTransposeOp computes the transposed convolution without padding
// (the "full" result, F = stride·(in-1) + span per dim) and selects the
// ONNX result from it: position j is the full result's j + pads_begin,
// zero beyond it (output_padding, an output_shape larger than F). Where
// the padding is loom's (both pads >= 0 and output_padding below
// max(stride, dilation)) loom's ConvTranspose pads directly.
func convTransposeOp(n *onode) ([]*graph.Node, error) {
	x, w, k, err := convOperands(n)
	if err != nil {
		return nil, err
	}
	in := []int(x.Shape()[2:])
	sp := len(in)
	autoPad := n.attrString("auto_pad", "NOTSET")
	// Read strides and dilations (pads are handled here, not by window).
	win, err := n.window(in, k, true)
	if err != nil {
		return nil, err
	}
	outPad, err := n.perDim("output_padding", sp, 0)
	if err != nil {
		return nil, err
	}
	full := make([]int, sp)
	for i := range sp {
		full[i] = win.strides[i]*(in[i]-1) + win.span(i)
		if outPad[i] < 0 {
			return nil, fmt.Errorf("output_padding %v must be >= 0", outPad)
		}
	}
	lo, hi := make([]int, sp), make([]int, sp)
	outShape, hasOut := n.attrInts("output_shape")
	if hasOut && len(outShape) == sp+2 {
		outShape = outShape[2:]
	}
	if hasOut && len(outShape) != sp {
		return nil, fmt.Errorf("output_shape %v has %d values for %d spatial dims", outShape, len(outShape), sp)
	}
	switch {
	case hasOut || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
		if !hasOut {
			outShape = make([]int, sp)
			for i := range sp {
				outShape[i] = in[i] * win.strides[i]
			}
		}
		for i := range sp {
			total := full[i] + outPad[i] - outShape[i]
			half := floorDiv(total, 2)
			if autoPad == "SAME_UPPER" {
				lo[i], hi[i] = half, total-half
			} else {
				lo[i], hi[i] = total-half, half
			}
		}
	case autoPad == "NOTSET":
		if p, ok := n.attrInts("pads"); ok {
			if len(p) != 2*sp {
				return nil, fmt.Errorf("pads %v has %d values for %d spatial dims (want %d)", p, len(p), sp, 2*sp)
			}
			copy(lo, p[:sp])
			copy(hi, p[sp:])
		}
	case autoPad == "VALID":
	default:
		return nil, fmt.Errorf("auto_pad %q: want NOTSET, SAME_UPPER, SAME_LOWER or VALID", autoPad)
	}
	size := make([]int, sp)
	native := true
	for i := range sp {
		size[i] = full[i] + outPad[i] - lo[i] - hi[i]
		if size[i] < 1 {
			return nil, fmt.Errorf("the result would have size %d in spatial dim %d (input %v, kernel %v, pads %v/%v, output_padding %v)", size[i], i, in, k, lo, hi, outPad)
		}
		st := win.strides[i]
		if lo[i] < 0 || hi[i] < 0 || outPad[i] >= max(st, win.dilations[i]) || hi[i] < outPad[i]/st*st {
			native = false
		}
	}
	group := n.attrInt("group", 1)
	opts := []ops.WindowOption{ops.Stride(win.strides...), ops.Dilation(win.dilations...), ops.Groups(group)}
	var y *graph.Node
	if native {
		y = ops.ConvTranspose(x, w, append(opts, ops.PaddingLoHi(lo, hi), ops.OutputPadding(outPad...))...)
	} else {
		y = ops.ConvTranspose(x, w, opts...)
		if !y.Valid() {
			return nil, n.im.g.Err()
		}
		rs := []ops.Range{ops.All, ops.All}
		ws := []ops.PadWidth{{}, {}}
		for i := range sp {
			start, stop := max(lo[i], 0), min(full[i], size[i]+lo[i])
			if stop <= start {
				return nil, fmt.Errorf("%w: pads %v/%v select nothing of the transposed convolution", ErrUnsupported, lo, hi)
			}
			rs = append(rs, ops.R(start, stop))
			ws = append(ws, ops.PadWidth{Low: max(-lo[i], 0), High: size[i] + lo[i] - stop})
		}
		y = ops.Pad(ops.Slice(y, rs...), ws...)
	}
	if b := n.in(2); b != nil && y.Valid() {
		if b.Rank() != 1 || b.Shape()[0] != y.Shape()[1] {
			return nil, fmt.Errorf("the bias B %v must be [%d], one per output channel", b.Shape(), y.Shape()[1])
		}
		bs := make([]int, y.Rank()-1)
		for i := range bs {
			bs[i] = 1
		}
		bs[0] = y.Shape()[1]
		y = ops.Add(y, ops.Reshape(b, bs...))
	}
	return []*graph.Node{y}, nil
}

// floorDiv is a/b rounded toward -Inf (b > 0), as Python's //.
func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ---- pools ----

// poolWindow reads a pool's kernel_shape and window for x.
func (n *onode) poolWindow(x *graph.Node, dilated bool) (window, error) {
	if err := spatialOperand(x, "X"); err != nil {
		return window{}, err
	}
	k, ok := n.attrInts("kernel_shape")
	if !ok {
		return window{}, fmt.Errorf("the kernel_shape attribute is required")
	}
	if len(k) != x.Rank()-2 {
		return window{}, fmt.Errorf("kernel_shape %v has %d values for X %v with %d spatial dims", k, len(k), x.Shape(), x.Rank()-2)
	}
	return n.window(x.Shape()[2:], k, dilated)
}

// maxUnpoolOp is MaxUnpool (Operators.md#MaxUnpool): zeros of the
// default output shape ((in-1)·stride - pads + kernel per spatial dim)
// with X's values at the linear indices I (MaxPool's second output:
// row-major positions in the whole tensor, N and C included), a Scatter
// over the flattened output. A larger output_shape pads the result with
// zeros after each spatial dim, the indices keeping their positions in
// the default shape (as the spec's reference implementation and test).
func maxUnpoolOp(n *onode) ([]*graph.Node, error) {
	x, idx := n.in(0), n.in(1)
	if x == nil || idx == nil {
		return nil, fmt.Errorf("inputs X and I are required")
	}
	if !idx.Shape().Equal(x.Shape()) || !idx.DType().IsInt() {
		return nil, fmt.Errorf("I %v (%s) must be integers of X's shape %v", idx.Shape(), idx.DType(), x.Shape())
	}
	w, err := n.poolWindow(x, false)
	if err != nil {
		return nil, err
	}
	def := append([]int(nil), x.Shape()[:2]...)
	size := def[0] * def[1]
	for i, d := range x.Shape()[2:] {
		o := (d-1)*w.strides[i] - w.lo[i] - w.hi[i] + w.kernel[i]
		if o < 1 {
			return nil, fmt.Errorf("the output of X %v with kernel %v, strides %v and pads %v/%v would be empty", x.Shape(), w.kernel, w.strides, w.lo, w.hi)
		}
		def = append(def, o)
		size *= o
	}
	flat := ops.Scatter(ops.Full(n.g(), x.DType(), 0, size), normIndices(ops.Reshape(idx, -1), size), ops.Reshape(x, -1), 0)
	y := ops.Reshape(flat, def...)
	if !n.has(2) {
		return one(y)
	}
	shape, err := n.ints(2)
	if err != nil {
		return nil, err
	}
	if len(shape) != x.Rank() || shape[0] != def[0] || shape[1] != def[1] {
		return nil, fmt.Errorf("output_shape %v must be [%d %d ...] with %d dims", shape, def[0], def[1], x.Rank())
	}
	pads := make([]ops.PadWidth, len(shape))
	for i := 2; i < len(shape); i++ {
		if shape[i] < def[i] {
			return nil, fmt.Errorf("output_shape %v is smaller than the default %v", shape, def)
		}
		pads[i].High = shape[i] - def[i]
	}
	return one(ops.Pad(y, pads...))
}

// ceilMode reads ceil_mode (opset 10 on).
func (n *onode) ceilMode() bool { return n.attrInt("ceil_mode", 0) != 0 }

// pooledShape is ONNX's result shape of a pool of x.
func (w window) pooledShape(x *graph.Node, ceil bool) tensor.Shape {
	s := x.Shape().Clone()
	for i := range w.kernel {
		s[2+i] = w.poolOut(i, s[2+i], ceil)
	}
	return s
}

// fitsLoom reports whether loom's pools take w's padding (at most half
// the kernel, PyTorch's rule).
func (w window) fitsLoom() bool {
	for i, k := range w.kernel {
		if w.lo[i] > k/2 || w.hi[i] > k/2 {
			return false
		}
	}
	return true
}

// padSpatial pads x's spatial dims by w's padding with value v.
func (w window) padSpatial(x *graph.Node, v float64) *graph.Node {
	ws := []ops.PadWidth{{}, {}}
	for i := range w.kernel {
		ws = append(ws, ops.PadWidth{Low: w.lo[i], High: w.hi[i]})
	}
	return ops.PadConstant(x, v, ws...)
}

// unpadded is w without padding (after padSpatial).
func (w window) unpadded() window {
	u := w
	u.lo, u.hi = make([]int, len(w.kernel)), make([]int, len(w.kernel))
	u.autoPad = "NOTSET"
	return u
}

// checkPooled refuses a pool whose loom result differs in shape from
// ONNX's (ceil_mode windows starting in the trailing padding, which
// PyTorch's rule drops and ONNX 1.12 keeps).
func checkPooled(y *graph.Node, want tensor.Shape, ceil bool) error {
	if !y.Valid() || y.Shape().Equal(want) {
		return nil
	}
	if ceil {
		return fmt.Errorf("%w: ceil_mode gives %v in ONNX but %v in loom, which drops a last window starting in the padding (PyTorch's rule)", ErrUnsupported, want, y.Shape())
	}
	return fmt.Errorf("the pooled shape is %v in loom, %v in ONNX (a bug in loom's importer)", y.Shape(), want)
}

// lowest is the value max-pool padding takes in dtype dt.
func lowest(dt tensor.DType) float64 {
	if dt.IsInt() {
		lo, _ := dt.IntRange()
		return float64(lo)
	}
	return math.Inf(-1)
}

func maxPoolOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	win, err := n.poolWindow(x, true)
	if err != nil {
		return nil, err
	}
	order := n.attrInt("storage_order", 0)
	if order != 0 && order != 1 {
		return nil, fmt.Errorf("storage_order %d: want 0 (row major) or 1 (column major)", order)
	}
	ceil := n.ceilMode()
	want := win.pooledShape(x, ceil)
	var y *graph.Node
	if win.fitsLoom() {
		opts := win.options()
		if ceil {
			opts = append(opts, ops.CeilMode)
		}
		y = ops.MaxPool(x, win.kernel, opts...)
	} else {
		u := win.unpadded()
		opts := u.options()
		if ceil {
			opts = append(opts, ops.CeilMode)
		}
		y = ops.MaxPool(win.padSpatial(x, lowest(x.DType())), win.kernel, opts...)
	}
	if err := checkPooled(y, want, ceil); err != nil {
		return nil, err
	}
	outs := []*graph.Node{y}
	if len(n.p.Outputs) > 1 && n.p.Outputs[1] != "" {
		idx, err := maxPoolIndices(n, x, win, want, order == 1)
		if err != nil {
			return nil, err
		}
		outs = append(outs, idx)
	}
	return outs, nil
}

// maxPoolIndices is MaxPool's Indices output: for each window, the
// flat index into x (row-major over [N, C, S...], or with the spatial
// dims column-major for storage_order 1) of its first maximum. The
// windows' taps are gathered by strided slices of the padded x, one per
// kernel position, stacked on a last axis; ArgMax over it picks the tap,
// from which the position follows.
func maxPoolIndices(n *onode, x *graph.Node, win window, want tensor.Shape, colMajor bool) (*graph.Node, error) {
	g := n.im.g
	sp := len(win.kernel)
	in := x.Shape()[2:]
	out := want[2:]
	// Pad so that every tap of every window is inside.
	p := win
	p.lo, p.hi = append([]int(nil), win.lo...), append([]int(nil), win.hi...)
	for i := range sp {
		need := (out[i]-1)*win.strides[i] + win.span(i)
		if have := in[i] + p.lo[i] + p.hi[i]; need > have {
			p.hi[i] += need - have
		}
	}
	xp := p.padSpatial(x, lowest(x.DType()))
	taps := 1
	for _, k := range win.kernel {
		taps *= k
	}
	var slices []*graph.Node
	pos := make([]int, sp)
	for t := 0; t < taps; t++ {
		r := t
		for i := sp - 1; i >= 0; i-- {
			pos[i] = r % win.kernel[i]
			r /= win.kernel[i]
		}
		rs := []ops.Range{ops.All, ops.All}
		for i := range sp {
			start := pos[i] * win.dilations[i]
			rs = append(rs, ops.Range{Start: start, Stop: start + (out[i]-1)*win.strides[i] + 1, Step: win.strides[i]})
		}
		slices = append(slices, ops.Slice(xp, rs...))
	}
	tap := ops.ArgMax(ops.Stack(-1, slices...), -1) // int64 [N, C, out...]
	shape := []int(want)
	i64 := func(v int) *graph.Node { return ops.Scalar(tap, float64(v)) }
	// Flat index: (n·C + c)·prod(S) + the spatial offset.
	plane := 1
	for _, s := range in {
		plane *= s
	}
	idx := ops.Mul(ops.Add(ops.Mul(ops.Iota(g, tensor.Int64, 0, shape...), i64(want[1])), ops.Iota(g, tensor.Int64, 1, shape...)), i64(plane))
	below := taps // the number of taps of the dims after i
	for i := range sp {
		below /= win.kernel[i]
		k := ops.Remainder(ops.Div(tap, i64(below)), i64(win.kernel[i]))
		coord := ops.Add(ops.Mul(ops.Iota(g, tensor.Int64, 2+i, shape...), i64(win.strides[i])), ops.Mul(k, i64(win.dilations[i])))
		coord = ops.Sub(coord, i64(win.lo[i]))
		stride := 1
		if colMajor {
			for _, s := range in[:i] {
				stride *= s
			}
		} else {
			for _, s := range in[i+1:] {
				stride *= s
			}
		}
		idx = ops.Add(idx, ops.Mul(coord, i64(stride)))
	}
	return idx, nil
}

func avgPoolOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	win, err := n.poolWindow(x, false)
	if err != nil {
		return nil, err
	}
	ceil := n.ceilMode()
	include := n.attrInt("count_include_pad", 0) != 0
	want := win.pooledShape(x, ceil)
	var y *graph.Node
	if win.fitsLoom() {
		opts := win.options()[:1] // AvgPool has no dilation
		opts = append(opts, ops.PaddingLoHi(win.lo, win.hi))
		if ceil {
			opts = append(opts, ops.CeilMode)
		}
		if !include {
			opts = append(opts, ops.ExcludePad)
		}
		y = ops.AvgPool(x, win.kernel, opts...)
	} else {
		// The padding exceeds loom's limit: pad with zeros first. Not
		// counting the padding, the mean is the padded sum over the
		// padded count of the input's positions.
		u := win.unpadded()
		opts := []ops.WindowOption{ops.Stride(u.strides...)}
		if ceil {
			opts = append(opts, ops.CeilMode)
		}
		y = ops.AvgPool(win.padSpatial(x, 0), win.kernel, opts...)
		if !include && y.Valid() {
			count := ops.AvgPool(win.padSpatial(ops.OnesLike(x), 0), win.kernel, opts...)
			y = ops.Div(y, count)
		}
	}
	if err := checkPooled(y, want, ceil); err != nil {
		return nil, err
	}
	return []*graph.Node{y}, nil
}

// lpOrder reads p of LpPool and GlobalLpPool: a float before opset 2,
// an integer after.
func lpOrder(n *onode) (float64, error) {
	var p float64
	if n.opset() < 2 {
		p = n.attrFloat("p", 2)
	} else {
		p = float64(n.attrInt("p", 2))
	}
	if p <= 0 || math.IsNaN(p) || math.IsInf(p, 0) {
		return 0, fmt.Errorf("p %v must be positive", p)
	}
	return p, nil
}

// lpPower is |x|^p; lpRoot is s^(1/p).
func lpPower(x *graph.Node, p float64) *graph.Node {
	switch p {
	case 1:
		return ops.Abs(x)
	case 2:
		return ops.Mul(x, x)
	}
	return ops.Pow(ops.Abs(x), scalarLike(x, p))
}

func lpRoot(s *graph.Node, p float64) *graph.Node {
	switch p {
	case 1:
		return s
	case 2:
		return ops.Sqrt(s)
	}
	return ops.Pow(s, scalarLike(s, 1/p))
}

// lpPoolOp is (sum of |x|^p over each window)^(1/p), the padding adding
// zeros: an average pool counting the padding, times the kernel's size.
func lpPoolOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	p, err := lpOrder(n)
	if err != nil {
		return nil, err
	}
	win, err := n.poolWindow(x, false)
	if err != nil {
		return nil, err
	}
	want := win.pooledShape(x, false)
	xp := lpPower(x, p)
	var y *graph.Node
	if win.fitsLoom() {
		y = ops.AvgPool(xp, win.kernel, ops.Stride(win.strides...), ops.PaddingLoHi(win.lo, win.hi))
	} else {
		y = ops.AvgPool(win.padSpatial(xp, 0), win.kernel, ops.Stride(win.strides...))
	}
	if err := checkPooled(y, want, false); err != nil {
		return nil, err
	}
	size := 1
	for _, k := range win.kernel {
		size *= k
	}
	return []*graph.Node{lpRoot(ops.Mul(y, scalarLike(y, float64(size))), p)}, nil
}

// globalPool reduces x [N, C, S...] over its spatial dims, keeping them
// with length 1.
func globalPool(f func(n *onode, x *graph.Node, axes []int) (*graph.Node, error)) func(n *onode) ([]*graph.Node, error) {
	return func(n *onode) ([]*graph.Node, error) {
		x, err := n.need(0)
		if err != nil {
			return nil, err
		}
		if x.Rank() < 3 {
			return nil, fmt.Errorf("X %v must be [N, C, S...] with at least one spatial dim", x.Shape())
		}
		axes := make([]int, x.Rank()-2)
		for i := range axes {
			axes[i] = 2 + i
		}
		y, err := f(n, x, axes)
		if err != nil {
			return nil, err
		}
		return []*graph.Node{y}, nil
	}
}

// ---- layout ----

// flattenOp reshapes x to the matrix [prod(d[:axis]), prod(d[axis:])]
// (axis default 1, in [-r, r]).
func flattenOp(n *onode) ([]*graph.Node, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, err
	}
	r := x.Rank()
	a := n.attrInt("axis", 1)
	if a < -r || a > r {
		return nil, fmt.Errorf("axis %d is out of range for rank %d (want -%d to %d)", a, r, r, r)
	}
	if a < 0 {
		a += r
	}
	rows, cols := 1, 1
	for i, d := range x.Shape() {
		if i < a {
			rows *= d
		} else {
			cols *= d
		}
	}
	return []*graph.Node{ops.Reshape(x, rows, cols)}, nil
}

// blockOperand checks x [N, C, H, W] and reads blocksize.
func blockOperand(n *onode) (*graph.Node, int, error) {
	x, err := n.need(0)
	if err != nil {
		return nil, 0, err
	}
	if x.Rank() != 4 {
		return nil, 0, fmt.Errorf("the input %v must be [N, C, H, W]", x.Shape())
	}
	b := n.attrInt("blocksize", 0)
	if b < 1 {
		return nil, 0, fmt.Errorf("the blocksize attribute is required and must be >= 1, got %d", b)
	}
	return x, b, nil
}

// depthToSpaceOp moves blocks of b·b channels to b×b spatial blocks:
// the channel is (row, column, c) in mode DCR (the default) and (c, row,
// column) in mode CRD.
func depthToSpaceOp(n *onode) ([]*graph.Node, error) {
	x, b, err := blockOperand(n)
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	N, C, H, W := s[0], s[1], s[2], s[3]
	if C%(b*b) != 0 {
		return nil, fmt.Errorf("the input's %d channels are not a multiple of blocksize² = %d", C, b*b)
	}
	c := C / (b * b)
	var y *graph.Node
	switch mode := n.attrString("mode", "DCR"); mode {
	case "DCR":
		y = ops.Transpose(ops.Reshape(x, N, b, b, c, H, W), 0, 3, 4, 1, 5, 2)
	case "CRD":
		y = ops.Transpose(ops.Reshape(x, N, c, b, b, H, W), 0, 1, 4, 2, 5, 3)
	default:
		return nil, fmt.Errorf("mode %q: want DCR or CRD", mode)
	}
	return []*graph.Node{ops.Reshape(y, N, c, H*b, W*b)}, nil
}

// spaceToDepthOp is DepthToSpace's inverse in mode DCR.
func spaceToDepthOp(n *onode) ([]*graph.Node, error) {
	x, b, err := blockOperand(n)
	if err != nil {
		return nil, err
	}
	s := x.Shape()
	N, C, H, W := s[0], s[1], s[2], s[3]
	if H%b != 0 || W%b != 0 {
		return nil, fmt.Errorf("the input's spatial size %dx%d is not a multiple of blocksize %d", H, W, b)
	}
	y := ops.Transpose(ops.Reshape(x, N, C, H/b, b, W/b, b), 0, 3, 5, 1, 2, 4)
	return []*graph.Node{ops.Reshape(y, N, C*b*b, H/b, W/b)}, nil
}

package ops

import (
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// Discrete Fourier transforms, as numpy.fft: three primitives, each over a
// set of axes with an opdef.FFTAttr (axes, direction, norm mode, IRFFT's
// output length):
//
//   - FFT: complex to complex (forward, or inverse with Inverse set);
//   - RFFT: real to complex, the last listed axis (the real axis) going from
//     n to n/2+1 elements (the non-negative frequencies), the others
//     complex transforms (numpy.fft.rfftn);
//   - IRFFT: its inverse, complex to real, the real axis going from N/2+1
//     to N elements; the imaginary parts of the zero and (even N) Nyquist
//     frequencies of the real axis are ignored, as numpy.fft.irfftn
//     ignores them.
//
// Every builder (FFT, IFFT, RFFT, IRFFT, FFT2, ..., IRFFTN) resizes the
// operand first to the lengths of FFTLengths (NumPy's n and s: crop, or
// pad with zeros at the end) and promotes a real operand of FFT and IFFT
// (and IRFFT) to complex. The transforms are linear; their gradients are
// the adjoint transforms, with the Hermitian weights of RFFT and IRFFT
// (JAX's rules): RFFT's gradient is IRFFT of the cotangent with the
// frequencies other than 0 and N/2 halved, IRFFT's is RFFT of the
// cotangent with them doubled, each with the dual norm mode (a 1/N scale
// stays 1/N).

// Op codes of the Fourier transforms.
var OpFFT, OpRFFT, OpIRFFT graph.Op

func init() {
	dtC2C, shC2C := fftRules(kindC2C)
	dtR2C, shR2C := fftRules(kindR2C)
	dtC2R, shC2R := fftRules(kindC2R)
	OpFFT = define(&opdef.Def{Name: "FFT", Doc: "discrete Fourier transform, complex to complex, over axes (FFTAttr: direction, norm), as numpy.fft.fftn",
		Arity: 1, Kind: opdef.Normalisation, DType: dtC2C, Shape: shC2C, Cost: fftCost, Ref: refFFT,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.FFTAttr)
				return Apply(OpFFT, opdef.FFTAttr{Axes: a.Axes, Inverse: !a.Inverse, Norm: opdef.DualNorm(a.Norm)}, g)
			})
		}})
	OpRFFT = define(&opdef.Def{Name: "RFFT", Doc: "discrete Fourier transform of a real array (FFTAttr), the last axis listed halved to n/2+1 frequencies, as numpy.fft.rfftn",
		Arity: 1, Kind: opdef.Normalisation, DType: dtR2C, Shape: shR2C, Cost: fftCost, Ref: refFFT,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.FFTAttr)
				x := n.Input(0)
				ax := a.Axes[len(a.Axes)-1]
				nr := x.Shape()[ax]
				w := hermitianWeights(g, ax, nr, 0.5)
				return Apply(OpIRFFT, opdef.FFTAttr{Axes: a.Axes, Norm: opdef.DualNorm(a.Norm), N: nr}, Mul(g, w))
			})
		}})
	OpIRFFT = define(&opdef.Def{Name: "IRFFT", Doc: "inverse of RFFT (FFTAttr: norm, real length n): complex to real, the last axis listed from n/2+1 frequencies to n, as numpy.fft.irfftn",
		Arity: 1, Kind: opdef.Normalisation, DType: dtC2R, Shape: shC2R, Cost: fftCost, Ref: refFFT,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			return each(need, func() *graph.Node {
				a := n.Attr().(opdef.FFTAttr)
				ax := a.Axes[len(a.Axes)-1]
				w := hermitianWeights(n.Input(0), ax, a.N, 2)
				return Mul(Apply(OpRFFT, opdef.FFTAttr{Axes: a.Axes, Norm: opdef.DualNorm(a.Norm)}, g), w)
			})
		}})
}

// hermitianWeights is a constant of like's complex dtype, of shape
// [1, ..., n/2+1 at axis, ..., 1]: 1 at the zero frequency and (even n) at
// the Nyquist one, mid elsewhere.
func hermitianWeights(like *graph.Node, axis, n int, mid float64) *graph.Node {
	h := n/2 + 1
	vals := make([]complex128, h)
	for k := range vals {
		vals[k] = complex(mid, 0)
	}
	vals[0] = 1
	if n%2 == 0 {
		vals[h-1] = 1
	}
	shape := make([]int, like.Rank())
	for i := range shape {
		shape[i] = 1
	}
	shape[axis] = h
	dt := like.DType()
	if !dt.IsComplex() {
		dt = dt.ComplexDType()
	}
	t, err := tensor.FromComplex128s(dt, vals, shape...)
	if err != nil {
		return fail(graph.ErrInvalid, "FFT gradient", []*graph.Node{like}, "%v", err)
	}
	return like.Graph().Const(t)
}

// ---- rules ----

// fftRules are the dtype and shape rules of the op of one kind: FFT keeps
// a complex dtype, RFFT makes float32/float64 complex, IRFFT makes a
// complex dtype real; RFFT halves the real axis to n/2+1, IRFFT takes it
// from N/2+1 to N.
func fftRules(kind fftKind) (opdef.DTypeRule, opdef.ShapeRule) {
	dt := func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		if _, ok := attr.(opdef.FFTAttr); !ok {
			return 0, argErr("needs an FFTAttr attribute, got %T", attr)
		}
		switch kind {
		case kindC2C:
			return in[0], opdef.Complexes.Check(in)
		case kindR2C:
			return in[0].ComplexDType(), floats.Check(in)
		}
		return in[0].RealDType(), opdef.Complexes.Check(in)
	}
	sh := func(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
		a, ok := attr.(opdef.FFTAttr)
		if !ok {
			return nil, argErr("needs an FFTAttr attribute, got %T", attr)
		}
		if err := a.Check(len(in[0]), kind != kindC2C, kind == kindC2R); err != nil {
			return nil, err
		}
		s := in[0].Clone()
		for _, ax := range a.Axes {
			if s[ax] < 1 {
				return nil, shapeErr("axis %d has length %d; a transform needs at least one element", ax, s[ax])
			}
		}
		ax := a.Axes[len(a.Axes)-1]
		switch kind {
		case kindR2C:
			s[ax] = s[ax]/2 + 1
		case kindC2R:
			if s[ax] != a.N/2+1 {
				return nil, shapeErr("axis %d has %d frequencies; an output length n = %d needs n/2+1 = %d", ax, s[ax], a.N, a.N/2+1)
			}
			s[ax] = a.N
		}
		return s, nil
	}
	return dt, sh
}

// fftCost is 5·N·log2(N) per transformed line set: 5·size·log2(Π lengths).
func fftCost(n *graph.Node) float64 {
	if !n.Valid() || len(n.Inputs()) != 1 {
		return 0
	}
	a, ok := n.Attr().(opdef.FFTAttr)
	if !ok {
		return 0
	}
	s := n.Input(0).Shape()
	if n.Op() == OpIRFFT {
		s = n.Shape()
	}
	logN := 0.0
	for _, ax := range a.Axes {
		if ax >= 0 && ax < len(s) {
			logN += math.Log2(float64(max(s[ax], 1)))
		}
	}
	size := float64(max(n.Shape().Size(), n.Input(0).Shape().Size()))
	return 5 * size * math.Max(1, logN)
}

// ---- the float64 reference ----

// refFFT evaluates the three ops in float64 (complex128), with its own
// transform (refDFT): radix-2 for powers of two, Bluestein's algorithm
// over a radix-2 convolution otherwise; independent of internal/fft,
// which the CPU backend runs.
func refFFT(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a, ok := n.Attr().(opdef.FFTAttr)
	if !ok {
		return nil, fmt.Errorf("refFFT: attribute %T", n.Attr())
	}
	x := in[0]
	switch n.Op() {
	case OpFFT:
		out := opdef.NewValue(n.DType(), n.Shape())
		copy(out.C, x.C)
		total := 1
		for _, ax := range a.Axes {
			refFFTAlong(out.C, x.Shape, ax, a.Inverse)
			total *= x.Shape[ax]
		}
		refScale(out, opdef.FFTScale(a.Norm, a.Inverse, total))
		return out, nil
	case OpRFFT:
		full := make([]complex128, x.Len())
		for i := range full {
			full[i] = complex(x.Float(i), 0)
		}
		total := 1
		for _, ax := range a.Axes {
			refFFTAlong(full, x.Shape, ax, false)
			total *= x.Shape[ax]
		}
		out := opdef.NewValue(n.DType(), n.Shape())
		refCrop(out.C, n.Shape(), full, x.Shape)
		refScale(out, opdef.FFTScale(a.Norm, false, total))
		return out, nil
	case OpIRFFT:
		// The complex axes first (numpy's irfftn), then the real one from
		// its Hermitian extension.
		tmp := append([]complex128(nil), x.C...)
		ax := a.Axes[len(a.Axes)-1]
		total := a.N
		for _, o := range a.Axes[:len(a.Axes)-1] {
			refFFTAlong(tmp, x.Shape, o, true)
			total *= x.Shape[o]
		}
		ys := n.Shape()
		ext := make([]complex128, ys.Size())
		outer, inner := ys[:ax].Size(), ys[ax+1:].Size()
		h, N := x.Shape[ax], a.N
		for o := range outer {
			for c := range inner {
				at := func(k int) complex128 { return tmp[(o*h+k)*inner+c] }
				set := func(k int, v complex128) { ext[(o*N+k)*inner+c] = v }
				set(0, complex(real(at(0)), 0))
				for k := 1; k < h; k++ {
					v := at(k)
					if 2*k == N {
						set(k, complex(real(v), 0))
						continue
					}
					set(k, v)
					set(N-k, cmplx.Conj(v))
				}
			}
		}
		refFFTAlong(ext, ys, ax, true)
		out := opdef.NewValue(n.DType(), ys)
		s := opdef.FFTScale(a.Norm, true, total)
		for i, v := range ext {
			out.SetFloat(i, real(v)*s)
		}
		out.Round()
		return out, nil
	}
	return nil, fmt.Errorf("refFFT: not a Fourier transform: %v", n.Op())
}

func refScale(v *opdef.Value, s float64) {
	if s != 1 {
		for i := range v.C {
			v.C[i] *= complex(s, 0)
		}
	}
	v.Round()
}

// refCrop copies the leading part of src (shape ss) into dst (shape ds,
// each dim at most ss's).
func refCrop(dst []complex128, ds tensor.Shape, src []complex128, ss tensor.Shape) {
	idx := make([]int, len(ds))
	for i := range dst {
		p := 0
		for d := range ds {
			p = p*ss[d] + idx[d]
		}
		dst[i] = src[p]
		for d := len(ds) - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < ds[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// refFFTAlong transforms every line of x (shape s) along axis, in place.
func refFFTAlong(x []complex128, s tensor.Shape, axis int, inverse bool) {
	n := s[axis]
	outer, inner := s[:axis].Size(), s[axis+1:].Size()
	line := make([]complex128, n)
	for o := range outer {
		for c := range inner {
			for i := range n {
				line[i] = x[(o*n+i)*inner+c]
			}
			y := refDFT(line, inverse)
			for i := range n {
				x[(o*n+i)*inner+c] = y[i]
			}
		}
	}
}

// refDFT is the unnormalised DFT of x (exp(∓2πi·jk/n)).
func refDFT(x []complex128, inverse bool) []complex128 {
	n := len(x)
	sign := -1.0
	if inverse {
		sign = 1
	}
	switch {
	case n <= 16:
		y := make([]complex128, n)
		for k := range n {
			var s complex128
			for j := range n {
				s += x[j] * cmplx.Rect(1, sign*2*math.Pi*float64((j*k)%n)/float64(n))
			}
			y[k] = s
		}
		return y
	case n&(n-1) == 0:
		even, odd := make([]complex128, n/2), make([]complex128, n/2)
		for i := range n / 2 {
			even[i], odd[i] = x[2*i], x[2*i+1]
		}
		e, o := refDFT(even, inverse), refDFT(odd, inverse)
		y := make([]complex128, n)
		for k := range n / 2 {
			t := cmplx.Rect(1, sign*2*math.Pi*float64(k)/float64(n)) * o[k]
			y[k], y[k+n/2] = e[k]+t, e[k]-t
		}
		return y
	}
	// Bluestein: jk = (j² + k² - (k-j)²)/2.
	m := 1
	for m < 2*n-1 {
		m *= 2
	}
	w := make([]complex128, n)
	for k := range n {
		w[k] = cmplx.Rect(1, sign*math.Pi*float64((int64(k)*int64(k))%int64(2*n))/float64(n))
	}
	a, b := make([]complex128, m), make([]complex128, m)
	for k := range n {
		a[k] = x[k] * w[k]
		b[k] = cmplx.Conj(w[k])
		if k > 0 {
			b[m-k] = cmplx.Conj(w[k])
		}
	}
	fa, fb := refDFT(a, false), refDFT(b, false)
	for i := range fa {
		fa[i] *= fb[i]
	}
	c := refDFT(fa, true)
	y := make([]complex128, n)
	for k := range n {
		y[k] = c[k] * w[k] / complex(float64(m), 0)
	}
	return y
}

// ---- options and builders ----

// FFTOption sets one setting of a Fourier transform builder: FFTAxes,
// FFTLengths, FFTNorm.
type FFTOption func(*fftOptions)

type fftOptions struct {
	axes, lengths []int
	hasAxes       bool
	norm          string
	err           error
}

// FFTAxes lists the axes to transform (negative counts from the end):
// one for FFT, IFFT, RFFT and IRFFT (default -1), two for the 2-D forms
// (default -2, -1), any number for the N-D forms (default: all axes, or
// the last len(FFTLengths) ones). For the real transforms the last listed
// axis is the real one.
func FFTAxes(axes ...int) FFTOption {
	axes = slices.Clone(axes)
	return func(o *fftOptions) { o.axes, o.hasAxes = axes, true }
}

// FFTLengths sets the transform length of each listed axis (NumPy's n
// for the 1-D forms, s for the others): the operand is cropped or padded
// with zeros at the end to it; for IRFFT it is the length of the real
// result (default 2·(m-1) for m input frequencies), the operand's real
// axis being resized to n/2+1.
func FFTLengths(n ...int) FFTOption {
	n = slices.Clone(n)
	return func(o *fftOptions) {
		for _, v := range n {
			if v < 1 && o.err == nil {
				o.err = fmt.Errorf("FFTLengths(%s): every length must be >= 1", intList(n))
			}
		}
		o.lengths = n
	}
}

// FFTNorm sets the normalisation: "backward" (the default: the forward
// transform unscaled, the inverse by 1/n), "ortho" (both by 1/√n) or
// "forward" (the forward by 1/n, the inverse unscaled), n being the
// product of the transformed lengths, as numpy.fft's norm.
func FFTNorm(mode string) FFTOption {
	return func(o *fftOptions) {
		switch mode {
		case opdef.NormBackward, opdef.NormOrtho, opdef.NormForward:
		default:
			if o.err == nil {
				o.err = fmt.Errorf("FFTNorm(%q): the mode is \"backward\", \"ortho\" or \"forward\"", mode)
			}
		}
		o.norm = mode
	}
}

type fftKind int

const (
	kindC2C fftKind = iota
	kindR2C
	kindC2R
)

// fftBuild resolves the options of the builder named name (dims: 1, 2, or
// 0 for N-D), resizes and promotes x, and applies the op.
func fftBuild(name string, kind fftKind, inverse bool, dims int, x *graph.Node, opts []FFTOption) *graph.Node {
	if _, bad := graph.Operands(name, x); bad != nil {
		return bad
	}
	ops := []*graph.Node{x}
	o := fftOptions{norm: opdef.NormBackward}
	for i, f := range opts {
		if f == nil {
			return fail(graph.ErrInvalid, name, ops, "option %d is nil", i)
		}
		f(&o)
	}
	if o.err != nil {
		return fail(graph.ErrInvalid, name, ops, "%v", o.err)
	}
	rank := x.Rank()
	axes := o.axes
	if !o.hasAxes {
		switch {
		case dims == 1:
			axes = []int{-1}
		case dims == 2:
			axes = []int{-2, -1}
		case len(o.lengths) > 0:
			for i := range o.lengths {
				axes = append(axes, i-len(o.lengths))
			}
		default:
			for i := range rank {
				axes = append(axes, i)
			}
		}
	}
	if dims > 0 && len(axes) != dims {
		return fail(graph.ErrInvalid, name, ops, "%d axes given; %s transforms %d", len(axes), name, dims)
	}
	if len(axes) == 0 {
		return fail(graph.ErrShape, name, ops, "no axes to transform (a scalar operand?)")
	}
	if len(o.lengths) > 0 && len(o.lengths) != len(axes) {
		return fail(graph.ErrInvalid, name, ops, "%d lengths for %d axes", len(o.lengths), len(axes))
	}
	norm := make([]int, len(axes))
	for i, ax := range axes {
		a, err := normAxis(ax, rank)
		if err != nil {
			return fail(graph.ErrShape, name, ops, "%v", err)
		}
		if slices.Contains(norm[:i], a) {
			return fail(graph.ErrShape, name, ops, "axis %d is given twice in %s", ax, intList(axes))
		}
		norm[i] = a
	}
	dt := x.DType()
	switch {
	case kind == kindR2C && dt.IsComplex():
		return fail(graph.ErrDType, name, ops, "the operand is %v; the real transform needs a real one (use FFT, or Real first)", dt)
	case kind == kindR2C && !dt.IsFloat():
		return fail(graph.ErrDType, name, ops, "the operand is %v; it needs a float dtype", dt)
	case kind != kindR2C && !dt.IsComplex():
		if !dt.IsFloat() {
			return fail(graph.ErrDType, name, ops, "the operand is %v; it needs a float or complex dtype", dt)
		}
		x = Cast(x, dt.ComplexDType())
	}
	if kind == kindR2C && dt != tensor.Float32 && dt != tensor.Float64 {
		x = Cast(x, tensor.Float32)
	}
	if !x.Valid() {
		return x
	}
	// Resize to the lengths (the real axis of IRFFT to n/2+1).
	realAx := norm[len(norm)-1]
	N := 0
	if kind == kindC2R {
		m := x.Shape()[realAx]
		N = 2 * (m - 1)
		if len(o.lengths) > 0 {
			N = o.lengths[len(o.lengths)-1]
		}
		if N < 1 {
			return fail(graph.ErrShape, name, ops, "axis %d has %d frequencies: the default output length 2·(m-1) = %d is not positive (give FFTLengths)", realAx, m, N)
		}
	}
	for i, ax := range norm {
		want := x.Shape()[ax]
		if len(o.lengths) > 0 {
			want = o.lengths[i]
		}
		if kind == kindC2R && ax == realAx {
			want = N/2 + 1
		}
		x = resizeAxis(x, ax, want)
	}
	for _, ax := range norm {
		if x.Valid() && x.Shape()[ax] == 0 {
			return fail(graph.ErrShape, name, ops, "axis %d has length 0; a transform needs at least one element", ax)
		}
	}
	a := opdef.FFTAttr{Axes: norm, Norm: o.norm, N: N}
	switch kind {
	case kindC2C:
		a.Inverse = inverse
		return Apply(OpFFT, a, x)
	case kindR2C:
		return Apply(OpRFFT, a, x)
	}
	return Apply(OpIRFFT, a, x)
}

// resizeAxis crops x along axis to n, or pads it with zeros at the end.
func resizeAxis(x *graph.Node, axis, n int) *graph.Node {
	if !x.Valid() {
		return x
	}
	m := x.Shape()[axis]
	switch {
	case n < m:
		return sliceAxis(x, axis, R(0, n))
	case n > m:
		w := make([]PadWidth, x.Rank())
		w[axis].High = n - m
		return Pad(x, w...)
	}
	return x
}

// FFT is the discrete Fourier transform along one axis (default the last;
// FFTAxes, FFTLengths for NumPy's n, FFTNorm): numpy.fft.fft. A real
// operand is promoted to complex (float64 to complex128, the others to
// complex64).
func FFT(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("FFT", kindC2C, false, 1, x, opts)
}

// IFFT is the inverse discrete Fourier transform along one axis
// (numpy.fft.ifft; scaled by 1/n unless FFTNorm says otherwise).
func IFFT(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("IFFT", kindC2C, true, 1, x, opts)
}

// RFFT is the Fourier transform of a real operand along one axis, its
// n/2+1 non-negative frequencies (numpy.fft.rfft). A complex operand is an
// error.
func RFFT(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("RFFT", kindR2C, false, 1, x, opts)
}

// IRFFT is the inverse of RFFT along one axis (numpy.fft.irfft): a real
// result of length n (FFTLengths; default 2·(m-1) for m frequencies).
func IRFFT(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("IRFFT", kindC2R, false, 1, x, opts)
}

// FFT2 is FFT over two axes (default the last two): numpy.fft.fft2.
func FFT2(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("FFT2", kindC2C, false, 2, x, opts)
}

// IFFT2 is IFFT over two axes: numpy.fft.ifft2.
func IFFT2(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("IFFT2", kindC2C, true, 2, x, opts)
}

// RFFT2 is RFFT over two axes, the last one halved: numpy.fft.rfft2.
func RFFT2(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("RFFT2", kindR2C, false, 2, x, opts)
}

// IRFFT2 is IRFFT over two axes: numpy.fft.irfft2.
func IRFFT2(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("IRFFT2", kindC2R, false, 2, x, opts)
}

// FFTN is FFT over any axes (default all): numpy.fft.fftn.
func FFTN(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("FFTN", kindC2C, false, 0, x, opts)
}

// IFFTN is IFFT over any axes (default all): numpy.fft.ifftn.
func IFFTN(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("IFFTN", kindC2C, true, 0, x, opts)
}

// RFFTN is RFFT over any axes (default all, the last one halved):
// numpy.fft.rfftn.
func RFFTN(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("RFFTN", kindR2C, false, 0, x, opts)
}

// IRFFTN is IRFFT over any axes: numpy.fft.irfftn.
func IRFFTN(x *graph.Node, opts ...FFTOption) *graph.Node {
	return fftBuild("IRFFTN", kindC2R, false, 0, x, opts)
}

// FFTShift moves the zero frequency to the centre of the listed axes
// (default all): a roll by n/2 (numpy.fft.fftshift).
func FFTShift(x *graph.Node, axes ...int) *graph.Node {
	return fftShift("FFTShift", x, axes, false)
}

// IFFTShift undoes FFTShift: a roll by -(n/2) (numpy.fft.ifftshift).
func IFFTShift(x *graph.Node, axes ...int) *graph.Node {
	return fftShift("IFFTShift", x, axes, true)
}

func fftShift(name string, x *graph.Node, axes []int, inverse bool) *graph.Node {
	if _, bad := graph.Operands(name, x); bad != nil {
		return bad
	}
	axes, err := normAxes(axes, x.Rank())
	if err != nil {
		return fail(graph.ErrShape, name, []*graph.Node{x}, "%v", err)
	}
	shifts := make([]int, len(axes))
	for i, ax := range axes {
		shifts[i] = x.Shape()[ax] / 2
		if inverse {
			shifts[i] = -shifts[i]
		}
	}
	return RollAxes(x, shifts, axes)
}

// FFTConvolve is the N-D convolution of a and b (same rank) computed with
// FFTs, as scipy.signal.fftconvolve: mode "full" (every overlap: size
// a+b-1 per axis), "same" (a's size, centred on the full result) or
// "valid" (the overlaps without zero padding: |a-b|+1 per axis, one
// operand at least as large as the other on every axis). Real operands
// use the real transforms; a complex one makes the result complex.
func FFTConvolve(a, b *graph.Node, mode string) *graph.Node {
	const name = "FFTConvolve"
	if _, bad := graph.Operands(name, a, b); bad != nil {
		return bad
	}
	ops := []*graph.Node{a, b}
	if a.Rank() != b.Rank() {
		return fail(graph.ErrShape, name, ops, "the operands need the same rank, got %d and %d", a.Rank(), b.Rank())
	}
	if a.Rank() == 0 {
		return Mul(a, b)
	}
	sa, sb := a.Shape(), b.Shape()
	full := make([]int, a.Rank())
	axes := make([]int, a.Rank())
	for i := range full {
		if sa[i] == 0 || sb[i] == 0 {
			return fail(graph.ErrShape, name, ops, "axis %d is empty", i)
		}
		full[i], axes[i] = sa[i]+sb[i]-1, i
	}
	var out []int
	switch mode {
	case "full":
		out = full
	case "same":
		out = slices.Clone([]int(sa))
	case "valid":
		aBig, bBig := true, true
		for i := range sa {
			aBig = aBig && sa[i] >= sb[i]
			bBig = bBig && sb[i] >= sa[i]
		}
		if !aBig && !bBig {
			return fail(graph.ErrShape, name, ops, "mode \"valid\" needs one operand at least as large as the other on every axis, got %v and %v", sa, sb)
		}
		out = make([]int, len(sa))
		for i := range sa {
			out[i] = max(sa[i], sb[i]) - min(sa[i], sb[i]) + 1
		}
	default:
		return fail(graph.ErrInvalid, name, ops, "mode %q is not one of \"full\", \"same\", \"valid\"", mode)
	}
	dt, err := opdef.Promote(a.DType(), b.DType())
	if err != nil {
		return fail(graph.ErrDType, name, ops, "%v", err)
	}
	if !dt.IsComplex() && !dt.IsFloat() {
		return fail(graph.ErrDType, name, ops, "the operands are %v and %v; they need float or complex dtypes", a.DType(), b.DType())
	}
	a, b = Cast(a, dt), Cast(b, dt)
	var y *graph.Node
	if dt.IsComplex() {
		y = IFFTN(Mul(FFTN(a, FFTAxes(axes...), FFTLengths(full...)), FFTN(b, FFTAxes(axes...), FFTLengths(full...))), FFTAxes(axes...))
	} else {
		fa := RFFTN(a, FFTAxes(axes...), FFTLengths(full...))
		fb := RFFTN(b, FFTAxes(axes...), FFTLengths(full...))
		y = IRFFTN(Mul(fa, fb), FFTAxes(axes...), FFTLengths(full...))
	}
	rs := make([]Range, len(full))
	for i := range full {
		start := (full[i] - out[i]) / 2
		rs[i] = R(start, start+out[i])
	}
	return Slice(y, rs...)
}

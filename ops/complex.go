package ops

import (
	"math/cmplx"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The complex numbers' own ops: Complex builds complex64 or complex128
// from real and imaginary parts; Real, Imag, Angle take them apart; Conj
// conjugates. The arithmetic, Exp, Log, Sqrt, Abs, Equal, Where, Cast,
// Sum, Prod and MatMul admit complex operands too (their declarations
// say so).
//
// Gradients follow PyTorch and JAX for real-valued losses of complex
// intermediates: the cotangent of z = x+iy is dL/dx + i dL/dy (so
// z - lr*grad descends), and a holomorphic f passes dz = dy*conj(f'(z)).

// Op codes of the complex ops.
var OpComplex, OpReal, OpImag, OpConj, OpAngle graph.Op

func init() {
	cunary := func(name, doc string, dt opdef.DTypeRule, f func(complex128) complex128, grad func(n, x, g *graph.Node) *graph.Node) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Elementwise, DType: dt, Shape: shSame,
			C128: func(x []complex128) complex128 { return f(x[0]) },
			Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
				return each(need, func() *graph.Node { return grad(n, n.Input(0), g) })
			}})
	}
	OpReal = cunary("Real", "the real part of a complex x", dtToReal(opdef.Complexes),
		func(z complex128) complex128 { return complex(real(z), 0) },
		func(n, x, g *graph.Node) *graph.Node { return Complex(g, ZerosLike(g)) })
	OpImag = cunary("Imag", "the imaginary part of a complex x", dtToReal(opdef.Complexes),
		func(z complex128) complex128 { return complex(imag(z), 0) },
		func(n, x, g *graph.Node) *graph.Node { return Complex(ZerosLike(g), g) })
	OpConj = cunary("Conj", "the complex conjugate x-iy of x+iy", sameDType(opdef.Complexes), cmplx.Conj,
		func(n, x, g *graph.Node) *graph.Node { return Conj(g) })
	// Angle = atan2(y, x): dL/dx + i dL/dy = g*(-y + ix)/|z|^2 = g*iz/|z|^2
	// (0 at 0, where the angle is not differentiable).
	OpAngle = cunary("Angle", "the argument atan2(imag, real) of a complex x, in [-pi, pi]", dtToReal(opdef.Complexes),
		func(z complex128) complex128 { return complex(cmplx.Phase(z), 0) },
		func(n, x, g *graph.Node) *graph.Node {
			zero := ZerosLike(x)
			r2 := Add(Square(Real(x)), Square(Imag(x)))
			safe := Where(Equal(r2, ZerosLike(r2)), OnesLike(r2), r2)
			d := Mul(Complex(Neg(Imag(x)), Real(x)), Cast(Div(g, safe), x.DType()))
			return Where(Equal(x, zero), zero, d)
		})
	OpComplex = define(&opdef.Def{Name: "Complex", Doc: "re + i*im: complex64 from float32 parts, complex128 from float64", Arity: 2, Kind: opdef.Elementwise,
		DType: dtComplex, Shape: shBroadcast, Ref: refComplex,
		Grad: func(n, g *graph.Node, need []bool) []*graph.Node {
			re, im := n.Input(0), n.Input(1)
			return each(need,
				func() *graph.Node { return SumTo(Real(g), re.Shape()) },
				func() *graph.Node { return SumTo(Imag(g), im.Shape()) })
		}})
}

// dtToReal is the rule of an op from s whose result is real: a complex
// operand gives its parts' dtype, a real one its own.
func dtToReal(s opdef.DTypeSet) opdef.DTypeRule {
	return func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		if err := noAttr(attr); err != nil {
			return 0, err
		}
		if err := s.Check(in); err != nil {
			return 0, err
		}
		return in[0].RealDType(), nil
	}
}

// dtComplex is Complex's rule: two float parts of one dtype.
func dtComplex(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
	if err := noAttr(attr); err != nil {
		return 0, err
	}
	if err := opdef.AllEqual(in); err != nil {
		return 0, err
	}
	if err := floats.Check(in); err != nil {
		return 0, err
	}
	return in[0].ComplexDType(), nil
}

func refComplex(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	out := opdef.NewValue(n.DType(), n.Shape())
	it := opdef.NewBroadcast(out.Shape, in)
	for p := range out.C {
		o := it.Next()
		out.C[p] = complex(in[0].F[o[0]], in[1].F[o[1]])
	}
	return out, nil
}

// cj is x's conjugate for a complex x, x itself for a real one: the
// gradient rules' conj(f'(z)).
func cj(x *graph.Node) *graph.Node {
	if x.DType().IsComplex() {
		return Conj(x)
	}
	return x
}

// Complex returns re + i*im, with NumPy broadcasting: complex64 from
// float32 parts, complex128 from float64 ones (the parts are promoted to
// one float dtype first).
func Complex(re, im *graph.Node) *graph.Node { return binary(OpComplex, re, im) }

// Real returns the real part of x: a float tensor for a complex x, x
// itself for a real one.
func Real(x *graph.Node) *graph.Node {
	if x.Valid() && !x.DType().IsComplex() {
		return x
	}
	return Apply(OpReal, nil, x)
}

// Imag returns the imaginary part of x: a float tensor for a complex x,
// zeros of x's dtype for a real one.
func Imag(x *graph.Node) *graph.Node {
	if x.Valid() && !x.DType().IsComplex() && x.DType().IsFloat() {
		return ZerosLike(x)
	}
	return Apply(OpImag, nil, x)
}

// Conj returns the complex conjugate of x (x itself for a real x).
func Conj(x *graph.Node) *graph.Node {
	if x.Valid() && (x.DType().IsFloat() || x.DType().IsInt()) {
		return x
	}
	return Apply(OpConj, nil, x)
}

// Angle returns the argument of x, atan2(imag, real), in [-pi, pi]: a
// float tensor for a complex x; for a real float x, 0 where x >= +0 and
// pi where x <= -0 (NumPy's angle).
func Angle(x *graph.Node) *graph.Node {
	if x.Valid() && x.DType().IsFloat() {
		return Atan2(ZerosLike(x), x)
	}
	return Apply(OpAngle, nil, x)
}

// ComplexScalar returns a rank-0 constant of like's complex dtype holding
// v, in like's graph (Scalar takes real values only).
func ComplexScalar(like *graph.Node, v complex128) *graph.Node {
	g, bad := graph.Operands("ComplexScalar", like)
	if bad != nil {
		return bad
	}
	if !like.DType().IsComplex() {
		return fail(graph.ErrDType, "ComplexScalar", []*graph.Node{like}, "%v is not a complex dtype", like.DType())
	}
	t, err := tensor.FromComplex128s(like.DType(), []complex128{v}, []int{}...)
	if err != nil {
		return fail(graph.ErrDType, "ComplexScalar", []*graph.Node{like}, "%v", err)
	}
	return g.Add(graph.Spec{Op: graph.OpConst, DType: like.DType(), Shape: tensor.Shape{}, Value: t})
}

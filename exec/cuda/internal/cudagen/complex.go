package cudagen

import (
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// Complex numbers on the device. NVRTC has no <complex> (and no headers
// at all here), so the prelude declares its own types: loom_c64 and
// loom_c128, a struct of the real and the imaginary part, float or
// double, aligned to their size as cuFloatComplex and cuDoubleComplex
// are (so that device memory holds exactly tensor's complex64 and
// complex128, and cuBLAS's Cgemm and Zgemm read the same bytes), with
// inline operators for + - * (unary -) == != += *=, so that the
// templates of the real floats (Add's "$0 + $1", the reductions'
// "acc += v") serve them unchanged.
//
// Semantics are Go's (the CPU backend's): products as Go computes them
// (complex64 in double, rounded once; no fused multiply-add, which the
// backend's --fmad=false forbids anyway), division by Smith's method with
// C99 Annex G's recovery of infinities and zeros when both parts come out
// NaN, and Exp, Log, Sqrt, Abs, Angle and Pow with math/cmplx's special
// values.
// complex64's functions compute in complex128 and round once, as the
// prelude's float32 helpers compute in double.

// complexPrelude is the prelude's complex part: the types, their
// construction and conversion, then the arithmetic of each type
// (complexArith) and the functions (complexFuncs).
func complexPrelude() string {
	var b strings.Builder
	b.WriteString(complexTypes)
	for _, t := range []struct{ typ, real, mk, sfx, wide string }{
		{"loom_c64", "float", "loom_complex_f32", "c64", "double"},
		{"loom_c128", "double", "loom_complex_f64", "c128", "double"},
	} {
		r := strings.NewReplacer("CT", t.typ, "RT", t.real, "MK", t.mk, "SFX", t.sfx, "WT", t.wide)
		b.WriteString(r.Replace(complexArith))
	}
	b.WriteString(complexFuncs)
	return b.String()
}

const complexTypes = `
// Complex numbers (cudagen's complex.go): the real part, then the
// imaginary part, aligned as cuFloatComplex and cuDoubleComplex. loom_b128
// is the 16 bytes of a complex128 element for the movement kernels.
struct __align__(8) loom_c64 { float re, im; };
struct __align__(16) loom_c128 { double re, im; };
struct __align__(16) loom_b128 { unsigned long long lo, hi; };
__device__ __forceinline__ loom_b128 loom_b128_zero() { loom_b128 b; b.lo = 0ull; b.hi = 0ull; return b; }
__device__ __forceinline__ loom_c64 loom_complex_f32(float re, float im) { loom_c64 z; z.re = re; z.im = im; return z; }
__device__ __forceinline__ loom_c128 loom_complex_f64(double re, double im) { loom_c128 z; z.re = re; z.im = im; return z; }
__device__ __forceinline__ loom_c128 loom_c64_to_c128(loom_c64 z) { return loom_complex_f64((double)z.re, (double)z.im); }
__device__ __forceinline__ loom_c64 loom_c128_to_c64(loom_c128 z) { return loom_complex_f32((float)z.re, (float)z.im); }
// A reduction's accumulator from an element or from a partial result.
__device__ __forceinline__ loom_c128 loom_c128_of(loom_c64 z) { return loom_c64_to_c128(z); }
__device__ __forceinline__ loom_c128 loom_c128_of(loom_c128 z) { return z; }
`

// complexArith is one complex type's arithmetic: CT the type, RT its
// part's type, MK its constructor, SFX its helper suffix, WT the type the
// products are computed in (double: complex64's products as Go computes
// them, in float64 rounded once).
const complexArith = `
__device__ __forceinline__ CT operator+(CT a, CT b) { return MK(a.re + b.re, a.im + b.im); }
__device__ __forceinline__ CT operator-(CT a, CT b) { return MK(a.re - b.re, a.im - b.im); }
__device__ __forceinline__ CT operator-(CT a) { return MK(-a.re, -a.im); }
__device__ __forceinline__ CT operator*(CT a, CT b)
{
    WT ar = a.re, ai = a.im, br = b.re, bi = b.im;
    return MK((RT)(ar * br - ai * bi), (RT)(ar * bi + ai * br));
}
__device__ __forceinline__ CT& operator+=(CT& a, CT b) { a = a + b; return a; }
__device__ __forceinline__ CT& operator*=(CT& a, CT b) { a = a * b; return a; }
__device__ __forceinline__ bool operator==(CT a, CT b) { return a.re == b.re && a.im == b.im; }
__device__ __forceinline__ bool operator!=(CT a, CT b) { return a.re != b.re || a.im != b.im; }
__device__ __forceinline__ CT loom_conj_SFX(CT z) { return MK(z.re, -z.im); }
`

// complexFuncs are the functions of complex128, and complex64's through
// them.
const complexFuncs = `
// Division by Smith's method (the larger of the divisor's parts divides
// the other, so nothing overflows early); when both parts come out NaN,
// C99 Annex G's recovery: x/0 is an infinity for x != 0, inf/finite an
// infinity, finite/inf a zero, with the signs the formula gives.
__device__ __forceinline__ loom_c128 loom_div_c128(loom_c128 x, loom_c128 y)
{
    double a = x.re, b = x.im, c = y.re, d = y.im, e, f;
    if (fabs(c) >= fabs(d)) {
        double r = d / c, den = c + r * d;
        e = (a + b * r) / den;
        f = (b - a * r) / den;
    } else {
        double r = c / d, den = d + r * c;
        e = (a * r + b) / den;
        f = (b * r - a) / den;
    }
    if (e != e && f != f) {
        const double inf = loom_inf_f64();
        if (c == 0.0 && d == 0.0 && (a == a || b == b)) {
            e = copysign(inf, c) * a;
            f = copysign(inf, c) * b;
        } else if ((fabs(a) == inf || fabs(b) == inf) && fabs(c) < inf && fabs(d) < inf) {
            a = copysign(fabs(a) == inf ? 1.0 : 0.0, a);
            b = copysign(fabs(b) == inf ? 1.0 : 0.0, b);
            e = inf * (a * c + b * d);
            f = inf * (b * c - a * d);
        } else if ((fabs(c) == inf || fabs(d) == inf) && fabs(a) < inf && fabs(b) < inf) {
            c = copysign(fabs(c) == inf ? 1.0 : 0.0, c);
            d = copysign(fabs(d) == inf ? 1.0 : 0.0, d);
            e = 0.0 * (a * c + b * d);
            f = 0.0 * (b * c - a * d);
        }
    }
    return loom_complex_f64(e, f);
}

// |z| without overflow or underflow (hypot), arg z = atan2(im, re).
__device__ __forceinline__ double loom_abs_c128(loom_c128 z) { return hypot(z.re, z.im); }
__device__ __forceinline__ double loom_angle_c128(loom_c128 z) { return atan2(z.im, z.re); }

// e^z = e^re (cos im + i sin im), with math/cmplx's special values: e^(+inf
// + 0i) is itself, e^(±inf + i inf or NaN) is 0 (the sign of im kept) for
// -inf and inf + i NaN for +inf, e^(NaN + 0i) keeps the zero.
__device__ __forceinline__ loom_c128 loom_exp_c128(loom_c128 z)
{
    const double inf = loom_inf_f64();
    if (fabs(z.re) == inf) {
        if (z.re > 0.0 && z.im == 0.0) return z;
        if (fabs(z.im) == inf || z.im != z.im) {
            if (z.re < 0.0) return loom_complex_f64(0.0, copysign(0.0, z.im));
            return loom_complex_f64(inf, loom_nan_f64());
        }
    } else if (z.re != z.re && z.im == 0.0) {
        return loom_complex_f64(z.re, z.im);
    }
    double r = exp(z.re);
    return loom_complex_f64(r * cos(z.im), r * sin(z.im));
}

// log z = log|z| + i arg z (the principal branch: arg in (-pi, pi]).
__device__ __forceinline__ loom_c128 loom_log_c128(loom_c128 z) { return loom_complex_f64(log(loom_abs_c128(z)), loom_angle_c128(z)); }

// The principal square root (re >= 0, im with the sign of z.im):
// t = sqrt((|re| + |z|)/2), then (t, im/2t) for re >= 0, else
// (|im|/2t, ±t), with the parts scaled into range first; a real z (im
// zero, either sign) and an infinite im as math/cmplx gives them.
__device__ __forceinline__ loom_c128 loom_sqrt_c128(loom_c128 z)
{
    double a = z.re, b = z.im;
    if (b == 0.0) {
        if (a == 0.0) return loom_complex_f64(0.0, b);
        if (a < 0.0) return loom_complex_f64(0.0, copysign(sqrt(-a), b));
        return loom_complex_f64(sqrt(a), b);
    }
    if (fabs(b) == loom_inf_f64()) return loom_complex_f64(loom_inf_f64(), b);
    // Scale by a power of 4 (so that the root scales by a power of 2,
    // exactly): down when a part is large, up when both are tiny.
    double s = 1.0;
    double m = fmax(fabs(a), fabs(b));
    // (NVRTC takes no hexadecimal floats: 2^108 = 3.2451855365842673e32,
    // 2^-54 = 5.551115123125783e-17, exactly.)
    if (m > 1e300) {
        a *= 0.0625;
        b *= 0.0625;
        s = 4.0;
    } else if (m < 1e-300) {
        a *= 3.2451855365842673e32;
        b *= 3.2451855365842673e32;
        s = 5.551115123125783e-17;
    }
    double t = sqrt(0.5 * (fabs(a) + hypot(a, b)));
    double u = fabs(b) / (2.0 * t);
    if (a >= 0.0) return loom_complex_f64(s * t, copysign(s * u, b));
    return loom_complex_f64(s * u, copysign(s * t, b));
}

// 1/z, as 1 + 0i divided by z.
__device__ __forceinline__ loom_c128 loom_reciprocal_c128(loom_c128 z) { return loom_div_c128(loom_complex_f64(1.0, 0.0), z); }

// The principal value of x^y = e^(y log x), in polar form: |x|^re(y)
// e^(-im(y) arg x) at the angle re(y) arg x + im(y) log|x|. x = 0 as
// math/cmplx.Pow: 1 for re(y) = 0, 0 for re(y) > 0, inf (real y) or
// inf + i inf for re(y) < 0, NaN for a NaN y (and, where Go panics, a
// NaN re(y) with an infinite im(y)).
__device__ __forceinline__ loom_c128 loom_pow_c128(loom_c128 x, loom_c128 y)
{
    const double inf = loom_inf_f64();
    if (x.re == 0.0 && x.im == 0.0) {
        // A NaN y (a NaN part, neither part infinite) gives NaN; then
        // the sign of re(y) decides.
        if ((y.re != y.re || y.im != y.im) && fabs(y.re) != inf && fabs(y.im) != inf) return loom_complex_f64(loom_nan_f64(), loom_nan_f64());
        if (y.re == 0.0) return loom_complex_f64(1.0, 0.0);
        if (y.re > 0.0) return loom_complex_f64(0.0, 0.0);
        if (y.re < 0.0) return y.im == 0.0 ? loom_complex_f64(inf, 0.0) : loom_complex_f64(inf, inf);
        return loom_complex_f64(loom_nan_f64(), loom_nan_f64());
    }
    double m = loom_abs_c128(x), a = loom_angle_c128(x);
    double r = pow(m, y.re), t = y.re * a;
    if (y.im != 0.0) {
        r *= exp(-y.im * a);
        t += y.im * log(m);
    }
    return loom_complex_f64(r * cos(t), r * sin(t));
}

__device__ __forceinline__ loom_c64 loom_div_c64(loom_c64 x, loom_c64 y) { return loom_c128_to_c64(loom_div_c128(loom_c64_to_c128(x), loom_c64_to_c128(y))); }
__device__ __forceinline__ float loom_abs_c64(loom_c64 z) { return (float)loom_abs_c128(loom_c64_to_c128(z)); }
__device__ __forceinline__ float loom_angle_c64(loom_c64 z) { return (float)loom_angle_c128(loom_c64_to_c128(z)); }
__device__ __forceinline__ loom_c64 loom_exp_c64(loom_c64 z) { return loom_c128_to_c64(loom_exp_c128(loom_c64_to_c128(z))); }
__device__ __forceinline__ loom_c64 loom_log_c64(loom_c64 z) { return loom_c128_to_c64(loom_log_c128(loom_c64_to_c128(z))); }
__device__ __forceinline__ loom_c64 loom_sqrt_c64(loom_c64 z) { return loom_c128_to_c64(loom_sqrt_c128(loom_c64_to_c128(z))); }
__device__ __forceinline__ loom_c64 loom_reciprocal_c64(loom_c64 z) { return loom_c128_to_c64(loom_reciprocal_c128(loom_c64_to_c128(z))); }
__device__ __forceinline__ loom_c64 loom_pow_c64(loom_c64 x, loom_c64 y) { return loom_c128_to_c64(loom_pow_c128(loom_c64_to_c128(x), loom_c64_to_c128(y))); }
`

// complexCast converts x between dtypes from and to, one of them complex,
// as the CPU's Cast: a real value becomes (x, 0) (the storage floats
// through float32, integers and bool through the part's type);
// complex64 and complex128 convert part by part; a complex value becomes
// a real one by its real part (NumPy's ComplexWarning case), converted as
// that real float would be (saturating to integers; bool too, re != 0, as
// the CPU's Cast and the reference do, where NumPy's bool is z != 0).
func complexCast(from, to tensor.DType, x string) string {
	if from.IsComplex() && to.IsComplex() {
		return "loom_" + cInfos[from].sfx + "_to_" + cInfos[to].sfx + "(" + x + ")"
	}
	if to.IsComplex() {
		part := to.RealDType()
		return "loom_complex_" + cInfos[part].sfx + "(" + castExpr(from, part, x) + ", " + zeroOf(cType(part)) + ")"
	}
	if to == tensor.Bool { // z != 0: either part non-zero, as NumPy
		return "(unsigned char)(loom_c128_of(" + x + ") != loom_complex_f64(0.0, 0.0))"
	}
	return castExpr(from.RealDType(), to, "("+x+").re")
}

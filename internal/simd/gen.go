//go:build ignore

// gen writes the assembly kernels of package simd and their Go
// declarations. Run it with `go generate` in internal/simd (the directive
// is in simd.go; it runs `go run gen.go`):
//
//	go generate ./internal/...
//
// It writes simd_amd64.s (every kernel, AVX2+FMA and AVX-512), kernels.go
// (the kernel table and the exported API, built everywhere) and
// kernels_amd64.go (the assembly stubs and the tables of each level). It is
// a plain text emitter with no dependency: the kernels are a loop skeleton
// (a main loop unrolled over several vectors, a one-vector loop and a masked
// tail) around a body that computes on registers.
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"os"
	"sort"
	"strings"
)

// ---- levels and element types ----

type level struct {
	name string // AVX2, AVX512
	r    string // vector register prefix: Y or Z
	vb   int    // vector bytes
	z    bool   // AVX-512
}

var (
	avx2   = &level{"AVX2", "Y", 32, false}
	avx512 = &level{"AVX512", "Z", 64, true}
	levels = []*level{avx2, avx512}
)

type ftype struct {
	name string // F32, F64
	gt   string // float32, float64
	size int
	p    string // PS, PD
	s    string // SS, SD
	iw   string // D, Q: integer lane width
	mant int    // explicit mantissa bits
}

var (
	f32   = &ftype{"F32", "float32", 4, "PS", "SS", "D", 23}
	f64   = &ftype{"F64", "float64", 8, "PD", "SD", "Q", 52}
	types = []*ftype{f32, f64}
)

func (t *ftype) scale() string { return fmt.Sprint(t.size) }

// lanes is the number of elements in one vector.
func lanes(l *level, t *ftype) int { return l.vb / t.size }

// ---- emitter ----

type gen struct {
	s      bytes.Buffer
	consts map[string][]byte
	stubs  bytes.Buffer
	tables map[string]*bytes.Buffer // level name -> table assignments
}

type E struct {
	g  *gen
	l  *level
	t  *ftype
	nl int // labels
}

func (e *E) I(mn string, ops ...string) {
	if e.l != nil && e.l.z {
		mn = e.broadcast(mn, ops)
	}
	if len(ops) == 0 {
		fmt.Fprintf(&e.g.s, "\t%s\n", mn)
		return
	}
	fmt.Fprintf(&e.g.s, "\t%s %s\n", mn, strings.Join(ops, ", "))
}

// broadcast rewrites an AVX-512 instruction that reads a constant (the
// c32_/c64_ tables, 64 bytes but only 32-byte aligned by the linker, so
// that a full load may split a cache line) to read one element with an
// embedded broadcast.
func (e *E) broadcast(mn string, ops []string) string {
	hasConst := false
	for _, o := range ops {
		if strings.HasPrefix(o, "c32_") || strings.HasPrefix(o, "c64_") {
			hasConst = true
		}
	}
	if !hasConst || strings.HasPrefix(ops[len(ops)-1], "X") || strings.HasPrefix(ops[len(ops)-1], "Y") {
		return mn
	}
	base, suffix, _ := strings.Cut(mn, ".")
	switch base {
	case "VMOVUPS":
		base = "VBROADCASTSS"
	case "VMOVUPD":
		base = "VBROADCASTSD"
	default:
		if suffix != "" {
			panic("broadcast: " + mn)
		}
		return base + ".BCST"
	}
	if suffix != "" {
		return base + "." + suffix
	}
	return base
}

// op3 emits a three-operand instruction given in Intel order (dst, src1,
// src2); Go's assembler takes them reversed.
func (e *E) op3(mn, dst, s1, s2 string) { e.I(mn, s2, s1, dst) }

func (e *E) label(l string) { fmt.Fprintf(&e.g.s, "%s:\n", l) }

func (e *E) V(i int) string { return fmt.Sprintf("%s%d", e.l.r, i) }

// P appends the packed type suffix: VADD -> VADDPS.
func (e *E) P(mn string) string { return mn + e.t.p }

// iop is an integer lane op of the element width: VPADD -> VPADDD.
func (e *E) iop(mn string) string { return mn + e.t.iw }

func (g *gen) constant(name string, lane []byte) string {
	if _, ok := g.consts[name]; !ok {
		b := make([]byte, 0, 64)
		for len(b) < 64 {
			b = append(b, lane...)
		}
		g.consts[name] = b
	}
	return name + "<>(SB)"
}

// cf is a float constant of the element type, replicated over 64 bytes.
func (e *E) cf(v float64) string {
	if e.t == f32 {
		return e.ci(uint64(math.Float32bits(float32(v))))
	}
	return e.ci(math.Float64bits(v))
}

// ci is an integer constant of the element width.
func (e *E) ci(bits uint64) string {
	if e.t == f32 {
		b := []byte{byte(bits), byte(bits >> 8), byte(bits >> 16), byte(bits >> 24)}
		return e.g.constant(fmt.Sprintf("c32_%08x", uint32(bits)), b)
	}
	b := make([]byte, 8)
	for i := range b {
		b[i] = byte(bits >> (8 * i))
	}
	return e.g.constant(fmt.Sprintf("c64_%016x", bits), b)
}

func (e *E) signBit() uint64 {
	if e.t == f32 {
		return 1 << 31
	}
	return 1 << 63
}

func (e *E) ld(dst, src string) { e.I(e.P("VMOVU"), src, dst) }

// cmp sets mask m to a pred b (m is a vector register on AVX2, a K
// register on AVX-512).
func (e *E) cmp(pred int, m, a, b string) { e.I(e.P("VCMP"), fmt.Sprintf("$%d", pred), b, a, m) }

// blend sets dst = m ? src : dst.
func (e *E) blend(dst, m, src string) {
	if strings.HasPrefix(m, "K") {
		e.I(e.P("VMOVU"), src, m, dst)
		return
	}
	e.I(e.P("VBLENDV"), m, src, dst, dst)
}

// setNaN sets the lanes of m in dst to all ones (a NaN).
func (e *E) setNaN(dst, m string) {
	if strings.HasPrefix(m, "K") {
		e.I(e.iop("VPTERNLOG"), "$0xff", dst, dst, m, dst)
		return
	}
	e.op3(e.P("VOR"), dst, dst, m)
}

// keep sets dst = m ? src : 0.
func (e *E) keep(dst, m, src string) {
	if strings.HasPrefix(m, "K") {
		e.I(e.P("VMOVU")+".Z", src, m, dst)
		return
	}
	e.op3(e.P("VAND"), dst, src, m)
}

// horner sets p = poly(x) with coefficients from the highest degree down.
func (e *E) horner(p, x string, cs []float64) {
	e.ld(p, e.cf(cs[0]))
	for _, c := range cs[1:] {
		e.op3(e.P("VFMADD213"), p, x, e.cf(c))
	}
}

// Comparison predicates of VCMPPS.
const (
	predEQ    = 0  // EQ_OQ
	predLT    = 1  // LT_OS
	predLE    = 2  // LE_OS
	predUNORD = 3  // UNORD_Q
	predNE    = 4  // NEQ_UQ
	predNGE   = 9  // NGE_US: !(a >= b), true for NaN
	predGE    = 13 // GE_OS
	predGT    = 14 // GT_OS
)

// ---- bodies ----

// A body computes on registers: in are the vector inputs (a scalar operand
// is a register shared by all copies: do not write it), t the vector
// temporaries and m the masks. It returns the register of the result.
type body func(e *E, in, t, m []string) string

type bodySpec struct {
	f      body
	nv, nm int // temporaries and masks per copy
	unroll int
}

func simple(mn string) bodySpec {
	return bodySpec{f: func(e *E, in, t, m []string) string {
		e.op3(e.P(mn), in[0], in[0], in[1])
		return in[0]
	}, unroll: 4}
}

// rsimple is s op a with s the scalar in in[1].
func rsimple(mn string) bodySpec {
	return bodySpec{f: func(e *E, in, t, m []string) string {
		e.op3(e.P(mn), in[0], in[1], in[0])
		return in[0]
	}, unroll: 4}
}

// maxmin computes dst = max(a, b) (or min) with Go's semantics: NaN if
// either is NaN, -0 < +0. MAXPS(a, b) returns b when the operands are
// equal (so also for -0 and +0) or unordered; MAXPS(b, a) returns a. Their
// AND (max) or OR (min) orders the zeros, and the unordered mask, all ones,
// makes the NaN.
func (e *E) maxmin(isMax bool, dst, a, b, t0, t1, m string) {
	mn, lg := "VMAX", "VAND"
	if !isMax {
		mn, lg = "VMIN", "VOR"
	}
	e.op3(e.P(mn), t0, a, b)
	e.op3(e.P(mn), t1, b, a)
	e.cmp(predUNORD, m, a, b)
	e.op3(e.P(lg), dst, t0, t1)
	e.setNaN(dst, m)
}

func maxminBody(isMax bool) bodySpec {
	return bodySpec{f: func(e *E, in, t, m []string) string {
		e.maxmin(isMax, in[0], in[0], in[1], t[0], t[1], m[0])
		return in[0]
	}, nv: 2, nm: 1, unroll: 4}
}

var fmaBody = bodySpec{f: func(e *E, in, t, m []string) string {
	e.op3(e.P("VFMADD213"), in[0], in[1], in[2]) // a = b*a + c
	return in[0]
}, unroll: 4}

var negBody = bodySpec{f: func(e *E, in, t, m []string) string {
	e.op3(e.P("VXOR"), in[0], in[0], e.ci(e.signBit()))
	return in[0]
}, unroll: 4}

var absBody = bodySpec{f: func(e *E, in, t, m []string) string {
	e.op3(e.P("VAND"), in[0], in[0], e.ci(e.signBit()-1))
	return in[0]
}, unroll: 4}

var sqrtBody = bodySpec{f: func(e *E, in, t, m []string) string {
	e.I(e.P("VSQRT"), in[0], in[0])
	return in[0]
}, unroll: 4}

// Exp coefficients. float32: Cephes expf, e^r = 1 + r + r^2 q(r) on
// |r| <= ln2/2. float64: Taylor to degree 13 (truncation < 5e-18 there).
var (
	expQ32 = []float64{1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1}
	expQ64 []float64
)

func init() {
	for k := 13; k >= 2; k-- {
		f := 1.0
		for j := 2; j <= k; j++ {
			f *= float64(j)
		}
		expQ64 = append(expQ64, 1/f)
	}
}

// exp computes e^x in place of x's registers; t needs 4 registers (3 on
// AVX2 or with noScale). noScale: x is known to lie in [0, 45] (no clamp,
// no overflow, no underflow). It returns the result register.
func (e *E) exp(x string, t []string, noScale bool) string {
	T, A, B := t[0], t[1], t[2]
	var lo, hi, magic, c1, c2 float64
	var q []float64
	var magicBits uint64
	if e.t == f32 {
		lo, hi, magic = -104, 89, 0x1.8p23
		c1, c2 = 0.693359375, -2.12194440e-4
		q = expQ32
		magicBits = uint64(math.Float32bits(float32(magic)))
	} else {
		lo, hi, magic = -746, 710, 0x1.8p52
		c1, c2 = 6.93147180369123816490e-01, 1.90821492927058770002e-10
		q = expQ64
		magicBits = math.Float64bits(magic)
	}
	if !noScale {
		// Clamp, keeping a NaN: MAXPS returns its second source (x) when
		// either is NaN.
		e.ld(T, e.cf(lo))
		e.op3(e.P("VMAX"), x, T, x)
		e.ld(T, e.cf(hi))
		e.op3(e.P("VMIN"), x, T, x)
	}
	// n = round(x*log2e) by the magic number; T keeps n in its low bits.
	e.ld(T, e.cf(magic))
	e.op3(e.P("VFMADD231"), T, x, e.cf(math.Log2E))
	e.op3(e.P("VSUB"), A, T, e.cf(magic))
	// r = x - n*ln2, in two steps
	e.op3(e.P("VFNMADD231"), x, A, e.cf(c1))
	e.op3(e.P("VFNMADD231"), x, A, e.cf(c2))
	Q, Z := A, B
	if e.l.z && !noScale {
		Q, Z = B, t[3]
	}
	e.horner(Q, x, q)
	e.op3(e.P("VMUL"), Z, x, x)
	e.op3(e.P("VFMADD213"), Q, Z, x) // r + r^2 q
	e.op3(e.P("VADD"), Q, Q, e.cf(1))
	sh := fmt.Sprintf("$%d", e.t.mant)
	switch {
	case noScale:
		// 2^n from the bits of T (bias folded into the subtraction); a
		// multiply, not an integer add to Q's exponent, keeps a NaN
		bias := uint64(127)
		if e.t == f64 {
			bias = 1023
		}
		e.op3(e.iop("VPSUB"), T, T, e.ci(magicBits-bias))
		e.I(e.iop("VPSLL"), sh, T, T)
		e.op3(e.P("VMUL"), Q, Q, T)
	case e.l.z:
		e.op3(e.P("VSCALEF"), Q, Q, A) // Q * 2^n, rounding denormals once
	default:
		// Q * 2^n1 * 2^n2 with n1 + n2 = n, both powers normal: the first
		// product is exact, the second rounds once into the denormals.
		if e.t == f32 {
			e.op3("VPSUBD", T, T, e.ci(magicBits)) // n
			e.I("VPSRAD", "$1", T, B)              // n1 = n>>1
			e.op3("VPSUBD", T, T, B)               // n2 = n - n1
			e.op3("VPADDD", B, B, e.ci(127))
			e.op3("VPADDD", T, T, e.ci(127))
		} else {
			// no 64-bit arithmetic shift on AVX2: k = n + 2048 >= 0
			e.op3("VPSUBQ", T, T, e.ci(magicBits-2048))
			e.I("VPSRLQ", "$1", T, B) // k1 = n1 + 1024
			e.op3("VPSUBQ", T, T, B)  // k - k1 = n2 + 1024
			e.op3("VPSUBQ", B, B, e.ci(1))
			e.op3("VPSUBQ", T, T, e.ci(1))
		}
		e.I(e.iop("VPSLL"), sh, B, B)
		e.I(e.iop("VPSLL"), sh, T, T)
		e.op3(e.P("VMUL"), Q, Q, B)
		e.op3(e.P("VMUL"), Q, Q, T)
	}
	return Q
}

var expBody = bodySpec{f: func(e *E, in, t, m []string) string {
	return e.exp(in[0], t, false)
}, nv: 4, unroll: 2}

// log coefficients. float32: Cephes logf, log(1+f) = f - f^2/2 + f^3 P(f)
// on [sqrt(1/2)-1, sqrt(2)-1]. float64: fdlibm (Go's math.Log).
var logP32 = []float64{7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1}

const (
	logL1 = 6.666666666666735130e-01
	logL2 = 3.999999999940941908e-01
	logL3 = 2.857142874366239149e-01
	logL4 = 2.222219843214978396e-01
	logL5 = 1.818357216161805012e-01
	logL6 = 1.531383769920937332e-01
	logL7 = 1.479819860511658591e-01
	ln2Hi = 6.93147180369123816490e-01
	ln2Lo = 1.90821492927058770002e-10
)

// logSpecial fixes the lanes of x (the input after denormal scaling) that
// are +Inf (+Inf), zero (-Inf), negative or NaN (NaN).
func (e *E) logSpecial(r, x, m string) {
	e.cmp(predEQ, m, x, e.cf(math.Inf(1)))
	e.blend(r, m, x)
	e.cmp(predEQ, m, x, e.cf(0))
	e.blend(r, m, e.cf(math.Inf(-1)))
	e.cmp(predNGE, m, x, e.cf(0))
	e.setNaN(r, m)
}

var log32Body = bodySpec{f: func(e *E, in, t, m []string) string {
	x, T1, T2, T3, T4, M := in[0], t[0], t[1], t[2], t[3], m[0]
	// denormals: scale by 2^23
	e.cmp(predLT, M, x, e.cf(0x1p-126))
	e.op3("VMULPS", T1, x, e.cf(0x1p23))
	e.blend(x, M, T1)
	// x = 2^k z, z in [sqrt(1/2), sqrt(2))
	e.op3("VPSUBD", T1, x, e.ci(0x3f3504f3))
	e.I("VPSRAD", "$23", T1, T2)
	e.op3("VANDPS", T1, T1, e.ci(0xff800000))
	e.op3("VPSUBD", T1, x, T1)
	e.I("VCVTDQ2PS", T2, T2)
	if e.l.z {
		e.I("VSUBPS", e.cf(23), T2, M, T2)
	} else {
		e.op3("VANDPS", M, M, e.cf(23))
		e.op3("VSUBPS", T2, T2, M)
	}
	e.op3("VSUBPS", T1, T1, e.cf(1)) // f
	e.horner(T3, T1, logP32)
	e.op3("VMULPS", T4, T1, T1)
	e.op3("VMULPS", T3, T3, T1)
	e.op3("VMULPS", T3, T3, T4)                        // f^3 P(f)
	e.op3("VFMADD231PS", T3, T2, e.cf(-2.12194440e-4)) // + k*ln2lo
	e.op3("VFNMADD231PS", T3, T4, e.cf(0.5))           // - f^2/2
	e.op3("VADDPS", T1, T1, T3)
	e.op3("VFMADD231PS", T1, T2, e.cf(0.693359375)) // + k*ln2hi
	e.logSpecial(T1, x, M)
	return T1
}, nv: 4, nm: 1, unroll: 2}

var log64Body = bodySpec{f: func(e *E, in, t, m []string) string {
	x, K, F, S, S2, S4, U, V, M := in[0], t[0], t[1], t[2], t[3], t[4], t[5], t[6], m[0]
	e.cmp(predLT, M, x, e.cf(0x1p-1022))
	e.op3("VMULPD", K, x, e.cf(0x1p52))
	e.blend(x, M, K)
	// ix = bits - bits(sqrt(1/2)) + 2^62 >= 0; k+1024 = ix>>52;
	// z = bits - (ix & top12) + 2^62
	e.op3("VPADDQ", K, x, e.ci(0x4000000000000000-0x3FE6A09E667F3BCD))
	e.op3("VANDPD", F, K, e.ci(0xFFF0000000000000))
	e.op3("VPSUBQ", F, x, F)
	e.op3("VPADDQ", F, F, e.ci(0x4000000000000000))
	e.I("VPSRLQ", "$52", K, K)
	e.op3("VORPD", K, K, e.ci(0x4330000000000000))
	e.op3("VSUBPD", K, K, e.cf(0x1p52+1024)) // k
	if e.l.z {
		e.I("VSUBPD", e.cf(52), K, M, K)
	} else {
		e.op3("VANDPD", M, M, e.cf(52))
		e.op3("VSUBPD", K, K, M)
	}
	e.op3("VSUBPD", F, F, e.cf(1)) // f
	e.op3("VADDPD", S, F, e.cf(2))
	e.op3("VDIVPD", S, F, S) // s = f/(2+f)
	e.op3("VMULPD", S2, S, S)
	e.op3("VMULPD", S4, S2, S2)
	e.horner(U, S4, []float64{logL7, logL5, logL3, logL1})
	e.op3("VMULPD", U, U, S2) // t1
	e.horner(V, S4, []float64{logL6, logL4, logL2})
	e.op3("VMULPD", V, V, S4) // t2
	e.op3("VADDPD", U, U, V)  // R
	e.op3("VMULPD", V, F, F)
	e.op3("VMULPD", V, V, e.cf(0.5)) // hfsq
	e.op3("VADDPD", U, U, V)         // hfsq + R
	e.op3("VMULPD", S2, K, e.cf(ln2Lo))
	e.op3("VFMADD231PD", S2, S, U) // s*(hfsq+R) + k*ln2Lo
	e.op3("VSUBPD", V, V, S2)
	e.op3("VSUBPD", V, V, F)
	e.op3("VFMSUB231PD", V, K, e.cf(ln2Hi)) // k*ln2Hi - (...)
	e.logSpecial(V, x, M)
	return V
}, nv: 7, nm: 1, unroll: 1}

// tanh coefficients: |x| < 0.625 (Cephes tanhf; Go's math.Tanh for
// float64), else 1 - 2/(e^2|x| + 1).
var (
	tanhP32 = []float64{-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1}
	tanhP64 = []float64{-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3}
	tanhQ64 = []float64{1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3}
)

var tanh32Body = bodySpec{f: func(e *E, in, t, m []string) string {
	x, S, W, T, A, B, M := in[0], t[0], t[1], t[2], t[3], t[4], m[0]
	e.op3("VANDPS", S, x, e.ci(e.signBit()))
	e.op3("VXORPS", x, x, S) // z = |x|
	e.ld(W, e.cf(9.5))
	e.op3("VMINPS", W, W, x) // keeps a NaN
	e.op3("VADDPS", W, W, W)
	E := e.exp(W, []string{T, A, B}, true)
	e.op3("VADDPS", E, E, e.cf(1))
	e.ld(T, e.cf(-2))
	e.op3("VDIVPS", T, T, E)
	e.op3("VADDPS", T, T, e.cf(1)) // 1 - 2/(e+1)
	e.op3("VMULPS", W, x, x)
	e.horner(A, W, tanhP32)
	e.op3("VMULPS", A, A, W)
	e.op3("VFMADD213PS", A, x, x) // z + z*s*P(s)
	e.cmp(predLT, M, x, e.cf(0.625))
	e.blend(T, M, A)
	e.op3("VORPS", T, T, S)
	return T
}, nv: 5, nm: 1, unroll: 2}

var tanh64Body = bodySpec{f: func(e *E, in, t, m []string) string {
	x, S, W, T, A, B, C, M := in[0], t[0], t[1], t[2], t[3], t[4], t[5], m[0]
	e.op3("VANDPD", S, x, e.ci(e.signBit()))
	e.op3("VXORPD", x, x, S)
	e.ld(W, e.cf(20))
	e.op3("VMINPD", W, W, x)
	e.op3("VADDPD", W, W, W)
	E := e.exp(W, []string{T, A, B}, true)
	e.ld(T, e.cf(-2))              // numerator, large |x|
	e.op3("VADDPD", E, E, e.cf(1)) // denominator
	e.op3("VMULPD", W, x, x)       // s
	e.horner(B, W, tanhP64)
	e.op3("VMULPD", B, B, W)
	e.op3("VMULPD", B, B, x) // z*s*P(s)
	e.op3("VADDPD", C, W, e.cf(tanhQ64[0]))
	e.op3("VFMADD213PD", C, W, e.cf(tanhQ64[1]))
	e.op3("VFMADD213PD", C, W, e.cf(tanhQ64[2])) // Q(s)
	e.cmp(predLT, M, x, e.cf(0.625))
	e.blend(T, M, B)
	e.blend(E, M, C)
	e.op3("VDIVPD", T, T, E)
	e.ld(W, e.cf(1))
	e.blend(W, M, x)
	e.op3("VADDPD", T, T, W) // z + z*s*P/Q for small |x|, 1 - 2/(e+1) else
	e.op3("VORPD", T, T, S)
	return T
}, nv: 6, nm: 1, unroll: 1}

// sigmoid: t = e^-|x|; 1/(1+t) for x >= 0, t/(1+t) otherwise.
var sigmoidBody = bodySpec{f: func(e *E, in, t, m []string) string {
	x, W, M := in[0], t[0], m[0]
	e.op3(e.P("VOR"), W, x, e.ci(e.signBit()))
	E := e.exp(W, t[1:5], false)
	e.op3(e.P("VADD"), W, E, e.cf(1))
	e.cmp(predGE, M, x, e.cf(0))
	e.blend(E, M, e.cf(1))
	e.op3(e.P("VDIV"), E, E, W)
	return E
}, nv: 5, nm: 1, unroll: 2}

// ---- ops ----

type opdef struct {
	field  string // kernel table field prefix: add -> addF32
	name   string // exported name prefix: Add -> AddF32
	kind   string // vv, vs, vvv, un
	doc    string // with %s for the element type
	goLoop string // the pure-Go loop of purego.go (level go)
	bodies map[*ftype]bodySpec
}

func both(b bodySpec) map[*ftype]bodySpec { return map[*ftype]bodySpec{f32: b, f64: b} }

var ops = []opdef{
	{"add", "Add", "vv", "sets d[i] = a[i] + b[i].", "addGo", both(simple("VADD"))},
	{"sub", "Sub", "vv", "sets d[i] = a[i] - b[i].", "subGo", both(simple("VSUB"))},
	{"mul", "Mul", "vv", "sets d[i] = a[i] * b[i].", "mulGo", both(simple("VMUL"))},
	{"div", "Div", "vv", "sets d[i] = a[i] / b[i].", "divGo", both(simple("VDIV"))},
	{"max", "Max", "vv", "sets d[i] = max(a[i], b[i]) with Go's semantics: NaN if either is NaN, -0 < +0.", "maxGo", both(maxminBody(true))},
	{"min", "Min", "vv", "sets d[i] = min(a[i], b[i]) with Go's semantics: NaN if either is NaN, -0 < +0.", "minGo", both(maxminBody(false))},
	{"addS", "AddS", "vs", "sets d[i] = a[i] + s.", "addSGo", both(simple("VADD"))},
	{"subS", "SubS", "vs", "sets d[i] = a[i] - s.", "subSGo", both(simple("VSUB"))},
	{"rsubS", "RSubS", "vs", "sets d[i] = s - a[i].", "rsubSGo", both(rsimple("VSUB"))},
	{"mulS", "MulS", "vs", "sets d[i] = a[i] * s.", "mulSGo", both(simple("VMUL"))},
	{"divS", "DivS", "vs", "sets d[i] = a[i] / s.", "divSGo", both(simple("VDIV"))},
	{"rdivS", "RDivS", "vs", "sets d[i] = s / a[i].", "rdivSGo", both(rsimple("VDIV"))},
	{"maxS", "MaxS", "vs", "sets d[i] = max(a[i], s) with Go's semantics: NaN if either is NaN, -0 < +0.", "maxSGo", both(maxminBody(true))},
	{"minS", "MinS", "vs", "sets d[i] = min(a[i], s) with Go's semantics: NaN if either is NaN, -0 < +0.", "minSGo", both(maxminBody(false))},
	{"fma", "FMA", "vvv", "sets d[i] = a[i]*b[i] + c[i] with a single rounding.", "fmaGo", both(fmaBody)},
	{"neg", "Neg", "un", "sets d[i] = -a[i] (flips the sign bit).", "negGo", both(negBody)},
	{"abs", "Abs", "un", "sets d[i] = |a[i]| (clears the sign bit).", "absGo", both(absBody)},
	{"sqrt", "Sqrt", "un", "sets d[i] = sqrt(a[i]), correctly rounded.", "sqrtGo", both(sqrtBody)},
	{"exp", "Exp", "un", "DOC_EXP", "expGo", both(expBody)},
	{"log", "Log", "un", "DOC_LOG", "logGo", map[*ftype]bodySpec{f32: log32Body, f64: log64Body}},
	{"tanh", "Tanh", "un", "DOC_TANH", "tanhGo", map[*ftype]bodySpec{f32: tanh32Body, f64: tanh64Body}},
	{"sigmoid", "Sigmoid", "un", "DOC_SIGMOID", "sigmoidGo", both(sigmoidBody)},
}

// ---- elementwise skeleton ----

// loops emits the loop skeleton over AX (the element index) up to CX: a
// main loop of U vectors of step elements, a loop of one vector, and a
// tail of r = CX-AX < step elements (r in R10) when tail is not nil.
func (e *E) loops(step, U int, vec func(u, off int), tail func()) {
	e.I("XORQ", "AX", "AX")
	if U > 1 {
		e.I("MOVQ", "CX", "BX")
		e.I("SUBQ", fmt.Sprintf("$%d", U*step), "BX")
		e.I("JL", "one")
		e.label("loopU")
		for u := 0; u < U; u++ {
			vec(u, u*step)
		}
		e.I("ADDQ", fmt.Sprintf("$%d", U*step), "AX")
		e.I("CMPQ", "AX", "BX")
		e.I("JLE", "loopU")
		e.label("one")
	}
	e.I("MOVQ", "CX", "BX")
	e.I("SUBQ", fmt.Sprintf("$%d", step), "BX")
	e.I("CMPQ", "AX", "BX")
	e.I("JG", "tail")
	e.label("loop1")
	vec(0, 0)
	e.I("ADDQ", fmt.Sprintf("$%d", step), "AX")
	e.I("CMPQ", "AX", "BX")
	e.I("JLE", "loop1")
	e.label("tail")
	e.I("CMPQ", "AX", "CX")
	e.I("JGE", "done")
	e.I("MOVQ", "CX", "R10")
	e.I("SUBQ", "AX", "R10")
	tail()
	e.label("done")
	e.I("VZEROUPPER")
	e.I("RET")
}

func mem(off int, base string, scale int) string {
	if off == 0 {
		return fmt.Sprintf("(%s)(AX*%d)", base, scale)
	}
	return fmt.Sprintf("%d(%s)(AX*%d)", off, base, scale)
}

// tailMask sets the tail mask for R10 lanes of elements of size bytes:
// K7 on AVX-512, Y14 (and X14) on AVX2. It clobbers R10 and R11.
func (e *E) tailMask(size int) {
	if e.l.z {
		e.I("LEAQ", "kmask<>(SB)", "R11")
		e.I("KMOVQ", "(R11)(R10*8)", "K7")
		return
	}
	tab, end := "masks32", 128
	if size == 8 {
		tab, end = "masks64", 256
	}
	e.I("LEAQ", fmt.Sprintf("%s<>+%d(SB)", tab, end), "R11")
	e.I("SHLQ", fmt.Sprintf("$%d", log2(size)), "R10")
	e.I("SUBQ", "R10", "R11")
	e.I("VMOVDQU", "(R11)", "Y14")
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

func (g *gen) elementwise(op opdef, l *level, t *ftype) {
	b := op.bodies[t]
	e := &E{g: g, l: l, t: t}
	name := op.field + t.name + l.name
	nin := map[string]int{"vv": 2, "vs": 1, "vvv": 3, "un": 1}[op.kind]
	scalar := op.kind == "vs"
	var args, sig string
	var argsize int
	gt := t.gt
	switch op.kind {
	case "vv":
		args, sig, argsize = "d+0(FP) a+8(FP) b+16(FP) n+24(FP)", fmt.Sprintf("d, a, b *%s, n int", gt), 32
	case "vs":
		args, sig, argsize = "d+0(FP) a+8(FP) n+16(FP) s+24(FP)", fmt.Sprintf("d, a *%s, n int, s %s", gt, gt), 24+t.size
	case "vvv":
		args, sig, argsize = "d+0(FP) a+8(FP) b+16(FP) c+24(FP) n+32(FP)", fmt.Sprintf("d, a, b, c *%s, n int", gt), 40
	case "un":
		args, sig, argsize = "d+0(FP) a+8(FP) n+16(FP)", fmt.Sprintf("d, a *%s, n int", gt), 24
	}
	fmt.Fprintf(&g.stubs, "//go:noescape\nfunc %s(%s)\n\n", name, sig)
	fmt.Fprintf(g.tables[l.name], "\tk.%s%s = %s\n", op.field, t.name, name)
	fmt.Fprintf(&g.s, "\n// func %s(%s)\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, sig, name, argsize)
	regs := []string{"DI", "SI", "DX", "R8"}
	fields := strings.Fields(args)
	for i, f := range fields {
		switch {
		case strings.HasPrefix(f, "n+"):
			e.I("MOVQ", f, "CX")
		case strings.HasPrefix(f, "s+"):
		default:
			e.I("MOVQ", f, regs[i])
		}
	}
	S := ""
	if scalar {
		S = e.V(15)
		if l.z {
			S = e.V(31)
		}
		bc := "VBROADCASTSS"
		if t == f64 {
			bc = "VBROADCASTSD"
		}
		e.I(bc, fields[3], S)
	}
	// registers per copy
	K := nin + b.nv
	avail := 14
	if l.z {
		avail = 30
	} else {
		K += b.nm
	}
	U := b.unroll
	if U < 1 {
		U = 1
	}
	for U > 1 && (U*K > avail || (l.z && U*b.nm > 6)) {
		U--
	}
	copyRegs := func(u int) (in, tm, ms []string) {
		base := u * K
		for i := 0; i < nin; i++ {
			in = append(in, e.V(base+i))
		}
		if scalar {
			in = append(in, S)
		}
		for i := 0; i < b.nv; i++ {
			tm = append(tm, e.V(base+nin+i))
		}
		for i := 0; i < b.nm; i++ {
			if l.z {
				ms = append(ms, fmt.Sprintf("K%d", 1+u*b.nm+i))
			} else {
				ms = append(ms, e.V(base+nin+b.nv+i))
			}
		}
		return
	}
	L := lanes(l, t)
	srcs := []string{"SI", "DX", "R8"}
	mov := e.P("VMOVU")
	e.loops(L, U, func(u, off int) {
		in, tm, ms := copyRegs(u)
		for i := 0; i < nin; i++ {
			e.I(mov, mem(off*t.size, srcs[i], t.size), in[i])
		}
		out := b.f(e, in, tm, ms)
		e.I(mov, out, mem(off*t.size, "DI", t.size))
	}, func() {
		e.tailMask(t.size)
		in, tm, ms := copyRegs(0)
		for i := 0; i < nin; i++ {
			if l.z {
				e.I(mov+".Z", mem(0, srcs[i], t.size), "K7", in[i])
			} else {
				e.I(e.P("VMASKMOV"), mem(0, srcs[i], t.size), "Y14", in[i])
			}
		}
		out := b.f(e, in, tm, ms)
		if l.z {
			e.I(mov, out, "K7", mem(0, "DI", t.size))
		} else {
			e.I(e.P("VMASKMOV"), out, "Y14", mem(0, "DI", t.size))
		}
	})
	if U*K > avail {
		panic(name + ": too many registers")
	}
}

// ---- comparisons ----

var cmpOps = []struct {
	name string
	pred int
}{{"Eq", predEQ}, {"Ne", predNE}, {"Lt", predLT}, {"Le", predLE}, {"Gt", predGT}, {"Ge", predGE}}

func (g *gen) compare(scalar bool, ci int, l *level, t *ftype) {
	e := &E{g: g, l: l, t: t}
	c := cmpOps[ci]
	field := "cmp" + t.name
	if scalar {
		field = "cmpS" + t.name
	}
	name := fmt.Sprintf("cmp%s%s%s%s", map[bool]string{true: "S", false: ""}[scalar], c.name, t.name, l.name)
	var sig string
	var argsize int
	if scalar {
		sig, argsize = fmt.Sprintf("d *uint8, a *%s, n int, s %s", t.gt, t.gt), 24+t.size
	} else {
		sig, argsize = fmt.Sprintf("d *uint8, a, b *%s, n int", t.gt), 32
	}
	fmt.Fprintf(&g.stubs, "//go:noescape\nfunc %s(%s)\n\n", name, sig)
	fmt.Fprintf(g.tables[l.name], "\tk.%s[%s] = %s\n", field, c.name, name)
	fmt.Fprintf(&g.s, "\n// func %s(%s)\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, sig, name, argsize)
	e.I("MOVQ", "d+0(FP)", "DI")
	e.I("MOVQ", "a+8(FP)", "SI")
	S := e.V(15)
	if scalar {
		e.I("MOVQ", "n+16(FP)", "CX")
		bc := "VBROADCASTS" + t.s[1:]
		e.I(bc, "s+24(FP)", S)
	} else {
		e.I("MOVQ", "b+16(FP)", "DX")
		e.I("MOVQ", "n+24(FP)", "CX")
	}
	L := lanes(l, t)
	mov := e.P("VMOVU")
	pred := fmt.Sprintf("$%d", c.pred)
	if !l.z {
		e.I("LEAQ", "spread<>(SB)", "R9")
	}
	e.loops(L, 4, func(u, off int) {
		a, k := e.V(u), fmt.Sprintf("K%d", u+1)
		e.I(mov, mem(off*t.size, "SI", t.size), a)
		b := S
		if !scalar {
			b = mem(off*t.size, "DX", t.size)
		}
		if l.z {
			e.I(e.P("VCMP"), pred, b, a, k)
			x := fmt.Sprintf("X%d", u+4)
			e.I("VMOVDQU8.Z", "ones8<>(SB)", k, x)
			if t == f32 {
				e.I("VMOVDQU", x, mem(off, "DI", 1))
			} else {
				e.I("VMOVQ", x, mem(off, "DI", 1))
			}
			return
		}
		e.I(e.P("VCMP"), pred, b, a, a)
		e.I(e.P("VMOVMSK"), a, "R10")
		e.I("MOVQ", "(R9)(R10*8)", "R10")
		if t == f32 {
			e.I("MOVQ", "R10", mem(off, "DI", 1))
		} else {
			e.I("MOVL", "R10", mem(off, "DI", 1))
		}
	}, func() {
		e.tailMask(t.size)
		a, b := e.V(0), e.V(1)
		if l.z {
			e.I(mov+".Z", mem(0, "SI", t.size), "K7", a)
			if scalar {
				b = S
			} else {
				e.I(mov+".Z", mem(0, "DX", t.size), "K7", b)
			}
			e.I(e.P("VCMP"), pred, b, a, "K7", "K1")
			e.I("VMOVDQU8.Z", "ones8<>(SB)", "K1", "X2")
			e.I("VMOVDQU8", "X2", "K7", mem(0, "DI", 1))
			return
		}
		e.I(e.P("VMASKMOV"), mem(0, "SI", t.size), "Y14", a)
		if scalar {
			b = S
		} else {
			e.I(e.P("VMASKMOV"), mem(0, "DX", t.size), "Y14", b)
		}
		e.I(e.P("VCMP"), pred, b, a, a)
		e.I(e.P("VMOVMSK"), a, "R10")
		e.I("MOVQ", "(R9)(R10*8)", "R10")
		e.label("bytes")
		e.I("MOVB", "R10", "(DI)(AX*1)")
		e.I("SHRQ", "$8", "R10")
		e.I("INCQ", "AX")
		e.I("CMPQ", "AX", "CX")
		e.I("JLT", "bytes")
	})
}

// ---- select ----

func (g *gen) selectK(scalar bool, size int, l *level) {
	e := &E{g: g, l: l, t: f32}
	if size == 8 {
		e.t = f64
	}
	ut := fmt.Sprintf("uint%d", size*8)
	un := fmt.Sprintf("U%d", size*8)
	field := "sel" + un
	if scalar {
		field = "selS" + un
	}
	name := field + l.name
	var sig string
	var argsize int
	if scalar {
		sig, argsize = fmt.Sprintf("d *%s, c *uint8, x *%s, n int, s %s", ut, ut, ut), 32+size
	} else {
		sig, argsize = fmt.Sprintf("d *%s, c *uint8, x, y *%s, n int", ut, ut), 40
	}
	fmt.Fprintf(&g.stubs, "//go:noescape\nfunc %s(%s)\n\n", name, sig)
	fmt.Fprintf(g.tables[l.name], "\tk.%s = %s\n", field, name)
	fmt.Fprintf(&g.s, "\n// func %s(%s)\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, sig, name, argsize)
	e.I("MOVQ", "d+0(FP)", "DI")
	e.I("MOVQ", "c+8(FP)", "R9")
	e.I("MOVQ", "x+16(FP)", "SI")
	S := e.V(15)
	if l.z {
		S = e.V(31)
	}
	dq := map[int]string{4: "D", 8: "Q"}[size]
	if scalar {
		e.I("MOVQ", "n+24(FP)", "CX")
		if size == 4 {
			e.I("MOVL", "s+32(FP)", "R12")
			e.I("VMOVD", "R12", "X15")
		} else {
			e.I("MOVQ", "s+32(FP)", "R12")
			e.I("VMOVQ", "R12", "X15")
		}
		e.I("VPBROADCAST"+dq, "X15", S)
	} else {
		e.I("MOVQ", "y+24(FP)", "DX")
		e.I("MOVQ", "n+32(FP)", "CX")
	}
	L := l.vb / size
	movz := "VMOVDQU" + map[int]string{4: "32", 8: "64"}[size]
	if !l.z {
		e.I("VPXOR", "Y13", "Y13", "Y13")
	}
	e.loops(L, 4, func(u, off int) {
		c, r := e.V(u), e.V(u+4)
		if l.z {
			k := fmt.Sprintf("K%d", u+1)
			x := fmt.Sprintf("X%d", u)
			if size == 4 {
				e.I("VMOVDQU", mem(off, "R9", 1), x)
			} else {
				e.I("VMOVQ", mem(off, "R9", 1), x)
			}
			e.I("VPTESTMB", x, x, k)
			y := S
			if !scalar {
				y = e.V(u + 8)
				e.I(movz, mem(off*size, "DX", size), y)
			}
			e.I("VPBLENDM"+dq, mem(off*size, "SI", size), y, k, r)
			e.I(movz, r, mem(off*size, "DI", size))
			return
		}
		if size == 4 {
			e.I("VPMOVZXBD", mem(off, "R9", 1), c)
			e.I("VPCMPEQD", "Y13", c, c)
		} else {
			e.I("VPMOVZXBQ", mem(off, "R9", 1), c)
			e.I("VPCMPEQQ", "Y13", c, c)
		}
		e.I("VMOVDQU", mem(off*size, "SI", size), r)
		y := S
		if !scalar {
			y = mem(off*size, "DX", size)
		}
		e.I("VPBLENDVB", c, y, r, r)
		e.I("VMOVDQU", r, mem(off*size, "DI", size))
	}, func() {
		if l.z {
			e.tailMask(size)
			e.I("VMOVDQU8.Z", mem(0, "R9", 1), "K7", "X0")
			e.I("VPTESTMB", "X0", "X0", "K7", "K1")
			if scalar {
				e.I("VMOVDQA64", S, "Z1")
			} else {
				e.I("VMOVDQU"+map[int]string{4: "32", 8: "64"}[size]+".Z", mem(0, "DX", size), "K7", "Z1")
			}
			mv := "VMOVDQU" + map[int]string{4: "32", 8: "64"}[size]
			e.I(mv, mem(0, "SI", size), "K1", "Z1")
			e.I(mv, "Z1", "K7", mem(0, "DI", size))
			return
		}
		mv, cmov := "MOVL", "CMOVLEQ"
		if size == 8 {
			mv, cmov = "MOVQ", "CMOVQEQ"
		}
		e.label("scalar")
		e.I("MOVBLZX", "(R9)(AX*1)", "R10")
		e.I(mv, mem(0, "SI", size), "R11")
		e.I("TESTL", "R10", "R10")
		if scalar {
			e.I(cmov, "R12", "R11")
		} else {
			e.I(cmov, mem(0, "DX", size), "R11")
		}
		e.I(mv, "R11", mem(0, "DI", size))
		e.I("INCQ", "AX")
		e.I("CMPQ", "AX", "CX")
		e.I("JLT", "scalar")
	})
}

// ---- reductions ----

// sum: 32 lanes of float64, element i added to lane i mod 32, then the
// lanes are added in a fixed tree (see sumLanes in purego.go): the result is
// the same on every level.
func (g *gen) sum(l *level, t *ftype) {
	e := &E{g: g, l: l, t: f64}
	name := "redSum" + t.name + l.name
	sig := fmt.Sprintf("a *%s, n int) float64", t.gt)
	fmt.Fprintf(&g.stubs, "//go:noescape\nfunc %s(%s\n\n", name, sig)
	fmt.Fprintf(g.tables[l.name], "\tk.redSum%s = %s\n", t.name, name)
	fmt.Fprintf(&g.s, "\n// func %s(%s\nTEXT ·%s(SB), NOSPLIT, $0-24\n", name, sig, name)
	e.I("MOVQ", "a+0(FP)", "SI")
	e.I("MOVQ", "n+8(FP)", "CX")
	nacc := 8 // vectors of float64 making 32 lanes
	if l.z {
		nacc = 4
	}
	per := 32 / nacc // float64 lanes per accumulator
	for k := 0; k < nacc; k++ {
		e.I("VXORPD", e.V(k), e.V(k), e.V(k))
	}
	tmp := func(k int) string { return e.V(8 + k%8) }
	e.loops(32, 1, func(u, off int) {
		for k := 0; k < nacc; k++ {
			src := mem(k*per*t.size, "SI", t.size)
			if t == f32 {
				e.I("VCVTPS2PD", src, tmp(k))
				e.op3("VADDPD", e.V(k), e.V(k), tmp(k))
			} else {
				e.op3("VADDPD", e.V(k), e.V(k), src)
			}
		}
	}, func() {
		e.I("LEAQ", fmt.Sprintf("(SI)(AX*%d)", t.size), "SI")
		if l.z {
			e.I("LEAQ", "kmask<>(SB)", "R11")
			e.I("MOVQ", "(R11)(R10*8)", "R10")
			for k := 0; k < nacc; k++ {
				e.I("KMOVB", "R10", "K1")
				e.I("SHRQ", "$8", "R10")
				src := fmt.Sprintf("%d(SI)", k*per*t.size)
				if t == f32 {
					e.I("VCVTPS2PD.Z", src, "K1", tmp(k))
				} else {
					e.I("VMOVUPD.Z", src, "K1", tmp(k))
				}
				e.op3("VADDPD", e.V(k), e.V(k), tmp(k))
			}
			return
		}
		// masks from the table: lane j of vector k is on iff 4k+j < r
		tab, end := "masks64", 256
		if t == f32 {
			tab, end = "masks32", 128
		}
		e.I("LEAQ", fmt.Sprintf("%s<>+%d(SB)", tab, end), "R11")
		e.I("SHLQ", fmt.Sprintf("$%d", log2(t.size)), "R10")
		e.I("SUBQ", "R10", "R11")
		for k := 0; k < nacc; k++ {
			off := k * per * t.size
			if t == f32 {
				e.I("VMOVDQU", fmt.Sprintf("%d(R11)", off), "X14")
				e.I("VMASKMOVPS", fmt.Sprintf("%d(SI)", off), "X14", "X15")
				e.I("VCVTPS2PD", "X15", "Y15")
			} else {
				e.I("VMOVDQU", fmt.Sprintf("%d(R11)", off), "Y14")
				e.I("VMASKMOVPD", fmt.Sprintf("%d(SI)", off), "Y14", "Y15")
			}
			e.op3("VADDPD", e.V(k), e.V(k), "Y15")
		}
	})
	// the loops skeleton ended with RET: reduce before it
	g.trimRet()
	if l.z {
		e.op3("VADDPD", "Z0", "Z0", "Z2")
		e.op3("VADDPD", "Z1", "Z1", "Z3")
		e.op3("VADDPD", "Z0", "Z0", "Z1")
		e.I("VEXTRACTF64X4", "$1", "Z0", "Y1")
		e.op3("VADDPD", "Y0", "Y0", "Y1")
	} else {
		for k := 0; k < 4; k++ {
			e.op3("VADDPD", e.V(k), e.V(k), e.V(k+4))
		}
		e.op3("VADDPD", "Y0", "Y0", "Y2")
		e.op3("VADDPD", "Y1", "Y1", "Y3")
		e.op3("VADDPD", "Y0", "Y0", "Y1")
	}
	e.I("VEXTRACTF128", "$1", "Y0", "X1")
	e.op3("VADDPD", "X0", "X0", "X1")
	e.I("VPERMILPD", "$1", "X0", "X1")
	e.op3("VADDSD", "X0", "X0", "X1")
	e.I("VMOVSD", "X0", "ret+16(FP)")
	e.I("VZEROUPPER")
	e.I("RET")
}

// trimRet removes the trailing "done: VZEROUPPER; RET" the loop skeleton
// emitted, so that code can follow the label done.
func (g *gen) trimRet() {
	s := g.s.String()
	suffix := "done:\n\tVZEROUPPER\n\tRET\n"
	if !strings.HasSuffix(s, suffix) {
		panic("trimRet")
	}
	g.s.Truncate(len(s) - len(suffix))
	g.s.WriteString("done:\n")
}

// maxmin reduction: 4 accumulator vectors, initialised to -Inf (max) or
// +Inf (min).
func (g *gen) redMaxMin(isMax bool, l *level, t *ftype) {
	e := &E{g: g, l: l, t: t}
	op := "Min"
	init := math.Inf(1)
	if isMax {
		op, init = "Max", math.Inf(-1)
	}
	name := "red" + op + t.name + l.name
	sig := fmt.Sprintf("a *%s, n int) %s", t.gt, t.gt)
	fmt.Fprintf(&g.stubs, "//go:noescape\nfunc %s(%s\n\n", name, sig)
	fmt.Fprintf(g.tables[l.name], "\tk.red%s%s = %s\n", op, t.name, name)
	fmt.Fprintf(&g.s, "\n// func %s(%s\nTEXT ·%s(SB), NOSPLIT, $0-%d\n", name, sig, name, 16+t.size)
	e.I("MOVQ", "a+0(FP)", "SI")
	e.I("MOVQ", "n+8(FP)", "CX")
	for k := 0; k < 4; k++ {
		e.ld(e.V(k), e.cf(init))
	}
	L := lanes(l, t)
	X, T0, T1, M := e.V(4), e.V(5), e.V(6), e.V(7)
	if l.z {
		M = "K2"
	}
	e.loops(4*L, 1, func(u, off int) {
		for k := 0; k < 4; k++ {
			e.ld(X, mem(k*L*t.size, "SI", t.size))
			e.maxmin(isMax, e.V(k), e.V(k), X, T0, T1, M)
		}
	}, func() {
		e.I("LEAQ", fmt.Sprintf("(SI)(AX*%d)", t.size), "SI")
		if l.z {
			e.I("LEAQ", "kmask<>(SB)", "R11")
			e.I("MOVQ", "(R11)(R10*8)", "R10")
			for k := 0; k < 4; k++ {
				e.I("KMOVQ", "R10", "K1")
				e.I("SHRQ", fmt.Sprintf("$%d", L), "R10")
				e.ld(X, e.V(k))
				e.I(e.P("VMOVU"), fmt.Sprintf("%d(SI)", k*L*t.size), "K1", X)
				e.maxmin(isMax, e.V(k), e.V(k), X, T0, T1, M)
			}
			return
		}
		tab, end := "masks64", 256
		if t == f32 {
			tab, end = "masks32", 128
		}
		e.I("LEAQ", fmt.Sprintf("%s<>+%d(SB)", tab, end), "R11")
		e.I("SHLQ", fmt.Sprintf("$%d", log2(t.size)), "R10")
		e.I("SUBQ", "R10", "R11")
		for k := 0; k < 4; k++ {
			off := k * L * t.size
			e.I("VMOVDQU", fmt.Sprintf("%d(R11)", off), "Y14")
			e.I(e.P("VMASKMOV"), fmt.Sprintf("%d(SI)", off), "Y14", X)
			// x = mask ? x : acc
			e.I(e.P("VBLENDV"), "Y14", X, e.V(k), X)
			e.maxmin(isMax, e.V(k), e.V(k), X, T0, T1, M)
		}
	})
	g.trimRet()
	// horizontal: accumulators, then halves, in the AVX2 form
	lv := avx2
	eh := &E{g: g, l: lv, t: t}
	if l.z {
		e.maxmin(isMax, "Z0", "Z0", "Z1", "Z5", "Z6", "K2")
		e.maxmin(isMax, "Z2", "Z2", "Z3", "Z5", "Z6", "K2")
		e.maxmin(isMax, "Z0", "Z0", "Z2", "Z5", "Z6", "K2")
		e.I(map[*ftype]string{f32: "VEXTRACTF32X8", f64: "VEXTRACTF64X4"}[t], "$1", "Z0", "Y1")
		eh.maxmin(isMax, "Y0", "Y0", "Y1", "Y5", "Y6", "Y7")
	} else {
		eh.maxmin(isMax, "Y0", "Y0", "Y1", "Y5", "Y6", "Y7")
		eh.maxmin(isMax, "Y2", "Y2", "Y3", "Y5", "Y6", "Y7")
		eh.maxmin(isMax, "Y0", "Y0", "Y2", "Y5", "Y6", "Y7")
	}
	e.I("VEXTRACTF128", "$1", "Y0", "X1")
	eh.maxmin(isMax, "X0", "X0", "X1", "X5", "X6", "X7")
	if t == f32 {
		e.I("VPERMILPS", "$0x4e", "X0", "X1")
		eh.maxmin(isMax, "X0", "X0", "X1", "X5", "X6", "X7")
		e.I("VPERMILPS", "$0xb1", "X0", "X1")
		eh.maxmin(isMax, "X0", "X0", "X1", "X5", "X6", "X7")
		e.I("VMOVSS", "X0", "ret+16(FP)")
	} else {
		e.I("VPERMILPD", "$1", "X0", "X1")
		eh.maxmin(isMax, "X0", "X0", "X1", "X5", "X6", "X7")
		e.I("VMOVSD", "X0", "ret+16(FP)")
	}
	e.I("VZEROUPPER")
	e.I("RET")
}

// ---- tables and output ----

func (g *gen) tablesData() {
	put := func(name string, b []byte) {
		for i := 0; i < len(b); i += 8 {
			var v uint64
			for j := 0; j < 8; j++ {
				v |= uint64(b[i+j]) << (8 * j)
			}
			fmt.Fprintf(&g.s, "DATA %s<>+%d(SB)/8, $0x%016x\n", name, i, v)
		}
		fmt.Fprintf(&g.s, "GLOBL %s<>(SB), RODATA|NOPTR, $%d\n\n", name, len(b))
	}
	// masks32: 32 dwords of ones, 32 of zeros; masks64 the same in qwords
	var m32, m64 []byte
	for i := 0; i < 64; i++ {
		v := byte(0)
		if i < 32 {
			v = 0xff
		}
		m32 = append(m32, v, v, v, v)
		m64 = append(m64, v, v, v, v, v, v, v, v)
	}
	g.s.WriteString("\n// ---- tables ----\n\n")
	put("masks32", m32)
	put("masks64", m64)
	// kmask[r] = 1<<r - 1
	var km []byte
	for r := 0; r <= 64; r++ {
		v := uint64(1)<<uint(r) - 1
		if r == 64 {
			v = ^uint64(0)
		}
		for j := 0; j < 8; j++ {
			km = append(km, byte(v>>(8*j)))
		}
	}
	km = append(km, make([]byte, 8)...) // pad to a multiple of 16
	put("kmask", km)
	// spread[m]: byte j is bit j of m
	var sp []byte
	for m := 0; m < 256; m++ {
		for j := 0; j < 8; j++ {
			sp = append(sp, byte(m>>j&1))
		}
	}
	put("spread", sp)
	ones := bytes.Repeat([]byte{1}, 64)
	put("ones8", ones)
	g.s.WriteString("// ---- constants ----\n\n")
	names := make([]string, 0, len(g.consts))
	for n := range g.consts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		put(n, g.consts[n])
	}
}

func main() {
	g := &gen{consts: map[string][]byte{}, tables: map[string]*bytes.Buffer{}}
	for _, l := range levels {
		g.tables[l.name] = &bytes.Buffer{}
	}
	g.s.WriteString("// Code generated by gen.go; DO NOT EDIT.\n\n//go:build !noasm\n\n#include \"textflag.h\"\n")
	for _, l := range levels {
		for _, t := range types {
			for _, op := range ops {
				g.elementwise(op, l, t)
			}
			for _, scalar := range []bool{false, true} {
				for ci := range cmpOps {
					g.compare(scalar, ci, l, t)
				}
			}
			g.sum(l, t)
			g.redMaxMin(true, l, t)
			g.redMaxMin(false, l, t)
		}
		for _, size := range []int{4, 8} {
			g.selectK(false, size, l)
			g.selectK(true, size, l)
		}
	}
	g.tablesData()
	if err := os.WriteFile("simd_amd64.s", g.s.Bytes(), 0o644); err != nil {
		panic(err)
	}

	var k bytes.Buffer
	k.WriteString("// Code generated by gen.go; DO NOT EDIT.\n\n//go:build !noasm\n\npackage simd\n\n")
	k.Write(g.stubs.Bytes())
	for _, l := range levels {
		fmt.Fprintf(&k, "// set%s installs the %s kernels in k.\nfunc set%s(k *kernels) {\n", l.name, l.name, l.name)
		k.Write(g.tables[l.name].Bytes())
		k.WriteString("}\n\n")
	}
	writeGo("kernels_amd64.go", k.Bytes())
	writeGo("kernels.go", api())
}

func writeGo(name string, src []byte) {
	out, err := format.Source(src)
	if err != nil {
		os.WriteFile(name, src, 0o644)
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	if err := os.WriteFile(name, out, 0o644); err != nil {
		panic(err)
	}
}

// ---- the Go API ----

// docs of the approximations, with the errors measured by ulp_test.go
// (AVX2 and AVX-512 give the same bits: TestLevelsAgree). "ulp" is the
// distance from the correctly rounded result; "from the exact value" is
// |result - exact| in ulp of the exact value.
var docs = map[string]string{
	"ExpF32": `sets d[i] = e^a[i].
//
// Assembly: x = n*ln2 + r, |r| <= ln2/2 (two-step Cody-Waite reduction with
// FMA), e^r = 1 + r + r^2*q(r) with q of degree 5 (Cephes expf), times 2^n
// (VSCALEFPS on AVX-512; two exact power-of-two products on AVX2, so that a
// denormal result is rounded once). Error: at most 1 ulp (1.01 ulp from the
// exact value), measured on all 2^32 inputs. The result is +Inf above
// 88.72283, 0 below -103.97208; exp(±0) = 1, exp(-Inf) = 0, exp(+Inf) =
// +Inf, exp(NaN) = NaN. Level go: float32(math.Exp) (0 ulp on
// the sweeps).`,
	"LogF32": `sets d[i] = ln a[i].
//
// Assembly: denormals scaled by 2^23; x = 2^k*z with z in [sqrt(1/2),
// sqrt(2)), f = z-1 (exact), ln(1+f) = f - f^2/2 + f^3*P(f) with P of
// degree 8 (Cephes logf), plus k*ln2 in two parts. Error: at most 1 ulp
// (0.83 ulp from the exact value), measured on all 2^32 inputs. log(±0) =
// -Inf, log(x < 0) = NaN, log(+Inf) = +Inf, log(NaN) = NaN, log(1) = 0.
// Level go: float32(math.Log) (0 ulp on
// the sweeps).`,
	"TanhF32": `sets d[i] = tanh a[i].
//
// Assembly: for |x| < 0.625, x + x*s*P(s) with s = x^2 and P of degree 4
// (Cephes tanhf); else 1 - 2/(e^(2|x|) + 1) with ExpF32's algorithm (|x|
// clamped at 9.5, where tanh rounds to 1) and x's sign. Error: at most 1 ulp
// (1.33 ulp from the exact value), measured on all 2^32 inputs, saturation
// included. tanh(±0) = ±0, tanh(±Inf) = ±1, tanh(NaN) = NaN. Level go:
// float32(math.Tanh) (0 ulp on the sweeps).`,
	"SigmoidF32": `sets d[i] = 1/(1+e^-a[i]).
//
// Assembly: t = e^-|x| (ExpF32's algorithm), then 1/(1+t) for x >= 0 and
// t/(1+t) otherwise, so that nothing overflows. Error: at most 2 ulp (2.40
// ulp from the exact value), measured on all 2^32 inputs. sigmoid(-Inf) =
// 0, sigmoid(+Inf) = 1, sigmoid(±0) = 0.5, sigmoid(NaN) = NaN; results are
// denormal below -87.3 and 0 below -103.97. Level go: the float64 formula
// rounded (0 ulp on the sweeps).`,
	"ExpF64": `sets d[i] = e^a[i].
//
// Assembly: x = n*ln2 + r, |r| <= ln2/2 (two-step Cody-Waite reduction with
// FMA), e^r = 1 + r + r^2*q(r) with the Taylor coefficients to degree 13
// (truncation below 5e-18), times 2^n (VSCALEFPD, or two exact
// power-of-two products on AVX2). Error: at most 1 ulp (0.94 ulp from the
// exact value) on a sweep of 75,000 inputs over every binade of both signs
// against a big.Float reference. The result is +Inf above ln(MaxFloat64) =
// 709.782712893384, 0 below -745.1332191019412; exp(±0) = 1, exp(-Inf) = 0,
// exp(+Inf) = +Inf, exp(NaN) = NaN. Level go: math.Exp (up to 2 ulp on
// amd64), made finite up to ln(MaxFloat64): Go's amd64 math.Exp overflows
// from 709.75.`,
	"LogF64": `sets d[i] = ln a[i].
//
// Assembly: fdlibm's algorithm (Go's math.Log): denormals scaled by 2^52;
// x = 2^k*(1+f), 1+f in [sqrt(1/2), sqrt(2)); s = f/(2+f); ln(1+f) = f -
// f^2/2 + s*(f^2/2 + R(s^2)) with R of degree 7; plus k*ln2 in two parts.
// Error: at most 1 ulp (0.76 ulp from the exact value) on a sweep of 95,000
// inputs over every binade, denormals included, against a big.Float
// reference. log(±0) = -Inf, log(x < 0) = NaN, log(+Inf) = +Inf, log(NaN) =
// NaN, log(1) = 0. Level go: math.Log, but for denormals (where Go's amd64
// math.Log is far off) ln(x*2^54) - 54*ln2.`,
	"TanhF64": `sets d[i] = tanh a[i].
//
// Assembly: as Go's math.Tanh (Cephes): for |x| < 0.625, x + x*s*P(s)/Q(s)
// with s = x^2; else 1 - 2/(e^(2|x|) + 1) with ExpF64's algorithm (|x|
// clamped at 20, where tanh rounds to 1), one division for both, and x's
// sign. Error: at most 1 ulp (1.20 ulp from the exact value) on a sweep of
// 75,000 inputs over every binade of both signs against a big.Float
// reference. tanh(±0) = ±0, tanh(±Inf) = ±1, tanh(NaN) = NaN. Level go:
// math.Tanh.`,
	"SigmoidF64": `sets d[i] = 1/(1+e^-a[i]).
//
// Assembly: t = e^-|x| (ExpF64's algorithm), then 1/(1+t) for x >= 0 and
// t/(1+t) otherwise, so that nothing overflows. Error: at most 2 ulp (1.86
// ulp from the exact value) on a sweep of 75,000 inputs over every binade of
// both signs against a big.Float reference. sigmoid(-Inf) = 0,
// sigmoid(+Inf) = 1, sigmoid(±0) = 0.5, sigmoid(NaN) = NaN. Level go: the
// same formula with math.Exp (up to 2 ulp).`,
}

func api() []byte {
	var b bytes.Buffer
	b.WriteString("// Code generated by gen.go; DO NOT EDIT.\n\npackage simd\n\n")
	// kernel table
	b.WriteString("// kernels holds the assembly kernels of the level in use; a nil entry\n// means the pure-Go loop (purego.go).\ntype kernels struct {\n")
	for _, t := range types {
		gt := t.gt
		for _, op := range ops {
			var sig string
			switch op.kind {
			case "vv":
				sig = fmt.Sprintf("func(d, a, b *%s, n int)", gt)
			case "vs":
				sig = fmt.Sprintf("func(d, a *%s, n int, s %s)", gt, gt)
			case "vvv":
				sig = fmt.Sprintf("func(d, a, b, c *%s, n int)", gt)
			case "un":
				sig = fmt.Sprintf("func(d, a *%s, n int)", gt)
			}
			fmt.Fprintf(&b, "\t%s%s %s\n", op.field, t.name, sig)
		}
		fmt.Fprintf(&b, "\tcmp%s [6]func(d *uint8, a, b *%s, n int)\n", t.name, gt)
		fmt.Fprintf(&b, "\tcmpS%s [6]func(d *uint8, a *%s, n int, s %s)\n", t.name, gt, gt)
		fmt.Fprintf(&b, "\tredSum%s func(a *%s, n int) float64\n", t.name, gt)
		fmt.Fprintf(&b, "\tredMax%s func(a *%s, n int) %s\n", t.name, gt, gt)
		fmt.Fprintf(&b, "\tredMin%s func(a *%s, n int) %s\n", t.name, gt, gt)
	}
	for _, u := range []string{"U32", "U64"} {
		ut := "uint" + u[1:]
		fmt.Fprintf(&b, "\tsel%s func(d *%s, c *uint8, x, y *%s, n int)\n", u, ut, ut)
		fmt.Fprintf(&b, "\tselS%s func(d *%s, c *uint8, x *%s, n int, s %s)\n", u, ut, ut, ut)
	}
	b.WriteString("}\n\n")

	for _, t := range types {
		gt := t.gt
		for _, op := range ops {
			name := op.name + t.name
			f := op.field + t.name
			doc := op.doc
			if strings.HasPrefix(doc, "DOC_") {
				doc = docs[name]
			}
			ref := op.goLoop
			if op.field == "fma" {
				ref = "fmaGo" + t.name[1:]
			}
			fmt.Fprintf(&b, "// %s %s\n", name, doc)
			switch op.kind {
			case "vv":
				fmt.Fprintf(&b, "func %s(d, a, b []%s) {\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_, _ = a[n-1], b[n-1]\n", name, gt)
				fmt.Fprintf(&b, "\tif f := kern.%s; f != nil {\n\t\tf(&d[0], &a[0], &b[0], n)\n\t\treturn\n\t}\n\t%s(d, a, b)\n}\n\n", f, ref)
			case "vs":
				fmt.Fprintf(&b, "func %s(d, a []%s, s %s) {\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_ = a[n-1]\n", name, gt, gt)
				fmt.Fprintf(&b, "\tif f := kern.%s; f != nil {\n\t\tf(&d[0], &a[0], n, s)\n\t\treturn\n\t}\n\t%s(d, a, s)\n}\n\n", f, ref)
			case "vvv":
				fmt.Fprintf(&b, "func %s(d, a, b, c []%s) {\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_, _, _ = a[n-1], b[n-1], c[n-1]\n", name, gt)
				fmt.Fprintf(&b, "\tif f := kern.%s; f != nil {\n\t\tf(&d[0], &a[0], &b[0], &c[0], n)\n\t\treturn\n\t}\n\t%s(d, a, b, c)\n}\n\n", f, ref)
			case "un":
				fmt.Fprintf(&b, "func %s(d, a []%s) {\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_ = a[n-1]\n", name, gt)
				fmt.Fprintf(&b, "\tif f := kern.%s; f != nil {\n\t\tf(&d[0], &a[0], n)\n\t\treturn\n\t}\n\t%s(d, a)\n}\n\n", f, ref)
			}
		}
		fmt.Fprintf(&b, "// Cmp%s sets d[i] to 1 if a[i] op b[i] holds, else 0 (false for NaN\n// operands except with Ne).\n", t.name)
		fmt.Fprintf(&b, "func Cmp%s(op CmpOp, d []uint8, a, b []%s) {\n\tf := kern.cmp%s[op]\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_, _ = a[n-1], b[n-1]\n", t.name, gt, t.name)
		fmt.Fprintf(&b, "\tif f != nil {\n\t\tf(&d[0], &a[0], &b[0], n)\n\t\treturn\n\t}\n\tcmpGo(op, d, a, b)\n}\n\n")
		fmt.Fprintf(&b, "// CmpS%s sets d[i] to 1 if a[i] op s holds, else 0.\n", t.name)
		fmt.Fprintf(&b, "func CmpS%s(op CmpOp, d []uint8, a []%s, s %s) {\n\tf := kern.cmpS%s[op]\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_ = a[n-1]\n", t.name, gt, gt, t.name)
		fmt.Fprintf(&b, "\tif f != nil {\n\t\tf(&d[0], &a[0], n, s)\n\t\treturn\n\t}\n\tcmpSGo(op, d, a, s)\n}\n\n")
		fmt.Fprintf(&b, "// ReduceSum%s returns the sum of a, accumulated in float64 in 32 lanes\n// (element i in lane i mod 32) added up in a fixed tree: the result is the\n// same on every level, and usually closer to the exact sum than a\n// sequential loop's.\n", t.name)
		fmt.Fprintf(&b, "func ReduceSum%s(a []%s) float64 {\n\tif len(a) == 0 {\n\t\treturn 0\n\t}\n\tif f := kern.redSum%s; f != nil {\n\t\treturn f(&a[0], len(a))\n\t}\n\treturn sumGo(a)\n}\n\n", t.name, gt, t.name)
		for _, mm := range []struct{ op, empty, neg string }{{"Max", "-Inf", "-1"}, {"Min", "+Inf", "1"}} {
			fmt.Fprintf(&b, "// Reduce%s%s returns the %s of a with Go's semantics (NaN if any\n// element is NaN, -0 < +0); %s for an empty slice.\n", mm.op, t.name, strings.ToLower(mm.op)+"imum", mm.empty)
			fmt.Fprintf(&b, "func Reduce%s%s(a []%s) %s {\n\tif len(a) == 0 {\n\t\treturn %s(math.Inf(%s))\n\t}\n\tif f := kern.red%s%s; f != nil {\n\t\treturn f(&a[0], len(a))\n\t}\n\treturn red%sGo(a)\n}\n\n", mm.op, t.name, gt, gt, gt, mm.neg, mm.op, t.name, mm.op)
		}
	}
	for _, u := range []string{"U32", "U64"} {
		ut := "uint" + u[1:]
		fmt.Fprintf(&b, "// Select%s sets d[i] = x[i] if c[i] != 0, else y[i].\n", u)
		fmt.Fprintf(&b, "func Select%s(d []%s, c []uint8, x, y []%s) {\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_, _, _ = c[n-1], x[n-1], y[n-1]\n", u, ut, ut)
		fmt.Fprintf(&b, "\tif f := kern.sel%s; f != nil {\n\t\tf(&d[0], &c[0], &x[0], &y[0], n)\n\t\treturn\n\t}\n\tselGo(d, c, x, y)\n}\n\n", u)
		fmt.Fprintf(&b, "// SelectS%s sets d[i] = x[i] if c[i] != 0, else s.\n", u)
		fmt.Fprintf(&b, "func SelectS%s(d []%s, c []uint8, x []%s, s %s) {\n\tn := len(d)\n\tif n == 0 {\n\t\treturn\n\t}\n\t_, _ = c[n-1], x[n-1]\n", u, ut, ut, ut)
		fmt.Fprintf(&b, "\tif f := kern.selS%s; f != nil {\n\t\tf(&d[0], &c[0], &x[0], n, s)\n\t\treturn\n\t}\n\tselSGo(d, c, x, s)\n}\n\n", u)
	}
	src := b.String()
	src = strings.Replace(src, "package simd\n\n", "package simd\n\nimport \"math\"\n\n", 1)
	return []byte(src)
}

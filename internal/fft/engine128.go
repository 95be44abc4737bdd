package fft

// This file is the template of engine64.go (see gen.go): every identifier
// ending in 128 becomes the same name ending in 64, and real128 becomes
// float32. Keep float64 for twiddle arithmetic only.

type (
	cplx128 = complex128
	real128 = float64
)

// Plan128 transforms complex128 vectors of one length in one direction.
type Plan128 struct {
	n       int
	inverse bool
	stages  []stage128
	blue    *bluestein128
}

// stage128 is one Stockham pass: groups of radix points, spaced m·s apart,
// combined into radix outputs spaced s apart and multiplied by twiddles.
type stage128 struct {
	radix, m, s int
	tw          []cplx128 // tw[p*(radix-1)+k-1] = w^(p·k), w = exp(∓2πi/(radix·m))
	wr          []cplx128 // generic radix: exp(∓2πi·j/radix), j < radix
}

type bluestein128 struct {
	m        int
	chirp    []cplx128 // exp(∓iπk²/n), k < n
	kernel   []cplx128 // forward FFT of the conjugate chirp, divided by m
	fwd, inv *Plan128
}

// NewPlan128 returns the (cached) plan for complex128 transforms of length
// n ≥ 1, forward (exp(-2πi·jk/n)) or inverse (exp(+2πi·jk/n)),
// unnormalised.
func NewPlan128(n int, inverse bool) *Plan128 {
	return cached(planKey{n, inverse, 0}, func() *Plan128 { return newPlan128(n, inverse) })
}

func newPlan128(n int, inverse bool) *Plan128 {
	p := &Plan128{n: n, inverse: inverse}
	sign := direction(inverse)
	radices := factor(n)
	if radices == nil {
		m := bluesteinLen(n)
		b := &bluestein128{m: m, fwd: NewPlan128(m, false), inv: NewPlan128(m, true)}
		b.chirp = make([]cplx128, n)
		for k := range n {
			b.chirp[k] = cplx128(chirp(k, n, sign))
		}
		h := make([]cplx128, m)
		for k := range n {
			c := chirp(k, n, -sign) / complex(float64(m), 0)
			h[k] = cplx128(c)
			if k > 0 {
				h[m-k] = cplx128(c)
			}
		}
		b.kernel = make([]cplx128, m)
		b.fwd.Transform(b.kernel, h, make([]cplx128, b.fwd.WorkLen()))
		p.blue = b
		return p
	}
	cur, s := n, 1
	for _, r := range radices {
		m := cur / r
		st := stage128{radix: r, m: m, s: s}
		st.tw = make([]cplx128, (r-1)*m)
		for q := range m {
			for k := 1; k < r; k++ {
				st.tw[q*(r-1)+k-1] = cplx128(twiddle(q*k, cur, sign))
			}
		}
		if r > 5 {
			st.wr = make([]cplx128, r)
			for j := range r {
				st.wr[j] = cplx128(twiddle(j, r, sign))
			}
		}
		p.stages = append(p.stages, st)
		cur, s = m, s*r
	}
	return p
}

// Len is the transform length.
func (p *Plan128) Len() int { return p.n }

// WorkLen is the number of scratch elements Transform needs.
func (p *Plan128) WorkLen() int {
	if p.blue != nil {
		return 2*p.blue.m + p.blue.fwd.WorkLen()
	}
	return p.n
}

// Transform writes the transform of src (length Len) to dst (length
// Len); dst may be src. work holds at least WorkLen elements and must not
// overlap dst or src.
func (p *Plan128) Transform(dst, src, work []cplx128) {
	n := p.n
	dst, src = dst[:n], src[:n]
	if p.blue != nil {
		p.bluestein(dst, src, work)
		return
	}
	ns := len(p.stages)
	if ns == 0 {
		dst[0] = src[0]
		return
	}
	work = work[:n]
	// The last stage writes dst; going back, stages alternate between
	// work and dst, so stage 0 writes dst when ns is odd.
	in := src
	if ns%2 == 1 && &src[0] == &dst[0] {
		copy(work, src)
		in = work
	}
	for i := range p.stages {
		out := dst
		if (ns-1-i)%2 == 1 {
			out = work
		}
		p.stages[i].run(out, in, p.inverse)
		in = out
	}
}

func (p *Plan128) bluestein(dst, src, work []cplx128) {
	b := p.blue
	n, m := p.n, b.m
	a, f, w := work[:m], work[m:2*m], work[2*m:]
	for k := range n {
		a[k] = src[k] * b.chirp[k]
	}
	clear(a[n:])
	b.fwd.Transform(f, a, w)
	for k := range f {
		f[k] *= b.kernel[k]
	}
	b.inv.Transform(a, f, w)
	for k := range n {
		dst[k] = a[k] * b.chirp[k]
	}
}

// mulNegI128 is -i·x, and i·x when inverse.
func rotate128(x cplx128, inverse bool) cplx128 {
	if inverse {
		return complex(-imag(x), real(x))
	}
	return complex(imag(x), -real(x))
}

func scale128(x cplx128, c real128) cplx128 { return complex(real(x)*c, imag(x)*c) }

// mul128 is a·b in the element precision (Go widens complex64 products
// to float64, which costs conversions).
func mul128(a, b cplx128) cplx128 {
	ar, ai, br, bi := real(a), imag(a), real(b), imag(b)
	return complex(ar*br-ai*bi, ar*bi+ai*br)
}

func (st *stage128) run(y, x []cplx128, inverse bool) {
	switch st.radix {
	case 4:
		st.radix4(y, x, inverse)
	case 2:
		st.radix2(y, x)
	case 3:
		st.radix3(y, x, inverse)
	case 5:
		st.radix5(y, x, inverse)
	default:
		st.generic(y, x)
	}
}

func (st *stage128) radix2(y, x []cplx128) {
	m, s := st.m, st.s
	for p := range m {
		w := st.tw[p]
		x0, x1 := x[s*p:s*p+s], x[s*(p+m):s*(p+m)+s]
		y0, y1 := y[s*2*p:s*2*p+s], y[s*(2*p+1):s*(2*p+1)+s]
		if useAVX2 && s%vec128 == 0 {
			radix2x128(&x0[0], &x1[0], &y0[0], &y1[0], s, &st.tw[p])
			continue
		}
		x1, y0, y1 = x1[:len(x0)], y0[:len(x0)], y1[:len(x0)]
		for q := range x0 {
			a, b := x0[q], x1[q]
			y0[q] = a + b
			y1[q] = mul128(a-b, w)
		}
	}
}

func (st *stage128) radix4(y, x []cplx128, inverse bool) {
	m, s := st.m, st.s
	if s == 1 {
		for p := range m {
			tw := st.tw[3*p : 3*p+3 : 3*p+3]
			a0, a1, a2, a3 := x[p], x[p+m], x[p+2*m], x[p+3*m]
			t0, t1 := a0+a2, a0-a2
			t2, t3 := a1+a3, rotate128(a1-a3, inverse)
			yy := y[4*p : 4*p+4 : 4*p+4]
			yy[0] = t0 + t2
			yy[1] = mul128(t1+t3, tw[0])
			yy[2] = mul128(t0-t2, tw[1])
			yy[3] = mul128(t1-t3, tw[2])
		}
		return
	}
	for p := range m {
		tw := st.tw[3*p : 3*p+3 : 3*p+3]
		w1, w2, w3 := tw[0], tw[1], tw[2]
		x0 := x[s*p : s*p+s]
		x1 := x[s*(p+m) : s*(p+m)+s]
		x2 := x[s*(p+2*m) : s*(p+2*m)+s]
		x3 := x[s*(p+3*m) : s*(p+3*m)+s]
		yb := y[s*4*p : s*4*p+4*s]
		y0, y1, y2, y3 := yb[:s], yb[s:2*s], yb[2*s:3*s], yb[3*s:4*s]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		y0, y1, y2, y3 = y0[:len(x0)], y1[:len(x0)], y2[:len(x0)], y3[:len(x0)]
		if useAVX2 && s%vec128 == 0 {
			radix4x128(&x0[0], &x1[0], &x2[0], &x3[0], &y0[0], &y1[0], &y2[0], &y3[0], s, &tw[0], rot128(inverse))
			continue
		}
		if p == 0 {
			for q := range x0 {
				a0, a1, a2, a3 := x0[q], x1[q], x2[q], x3[q]
				t0, t1 := a0+a2, a0-a2
				t2, t3 := a1+a3, rotate128(a1-a3, inverse)
				y0[q] = t0 + t2
				y1[q] = t1 + t3
				y2[q] = t0 - t2
				y3[q] = t1 - t3
			}
			continue
		}
		for q := range x0 {
			a0, a1, a2, a3 := x0[q], x1[q], x2[q], x3[q]
			t0, t1 := a0+a2, a0-a2
			t2, t3 := a1+a3, rotate128(a1-a3, inverse)
			y0[q] = t0 + t2
			y1[q] = mul128(t1+t3, w1)
			y2[q] = mul128(t0-t2, w2)
			y3[q] = mul128(t1-t3, w3)
		}
	}
}

func (st *stage128) radix3(y, x []cplx128, inverse bool) {
	m, s := st.m, st.s
	const half = 0.5
	sin60 := real128(0.86602540378443864676372317075293618)
	for p := range m {
		w1, w2 := st.tw[2*p], st.tw[2*p+1]
		x0 := x[s*p : s*p+s]
		x1 := x[s*(p+m) : s*(p+m)+s]
		x2 := x[s*(p+2*m) : s*(p+2*m)+s]
		yb := y[s*3*p : s*3*p+3*s]
		y0, y1, y2 := yb[:s], yb[s:2*s], yb[2*s:3*s]
		x1, x2 = x1[:len(x0)], x2[:len(x0)]
		y0, y1, y2 = y0[:len(x0)], y1[:len(x0)], y2[:len(x0)]
		for q := range x0 {
			a0, a1, a2 := x0[q], x1[q], x2[q]
			t1 := a1 + a2
			t2 := a0 - scale128(t1, half)
			t3 := scale128(rotate128(a1-a2, inverse), sin60)
			y0[q] = a0 + t1
			y1[q] = mul128(t2+t3, w1)
			y2[q] = mul128(t2-t3, w2)
		}
	}
}

func (st *stage128) radix5(y, x []cplx128, inverse bool) {
	m, s := st.m, st.s
	c1 := real128(0.30901699437494742410229341718281906)  // cos(2π/5)
	c2 := real128(-0.80901699437494742410229341718281906) // cos(4π/5)
	s1 := real128(0.95105651629515357211643933337938214)  // sin(2π/5)
	s2 := real128(0.58778525229247312916870595463907277)  // sin(4π/5)
	for p := range m {
		tw := st.tw[4*p : 4*p+4 : 4*p+4]
		x0 := x[s*p : s*p+s]
		x1 := x[s*(p+m) : s*(p+m)+s]
		x2 := x[s*(p+2*m) : s*(p+2*m)+s]
		x3 := x[s*(p+3*m) : s*(p+3*m)+s]
		x4 := x[s*(p+4*m) : s*(p+4*m)+s]
		yb := y[s*5*p : s*5*p+5*s]
		y0, y1, y2, y3, y4 := yb[:s], yb[s:2*s], yb[2*s:3*s], yb[3*s:4*s], yb[4*s:5*s]
		if useAVX2 && s%vec128 == 0 {
			radix5x128(&x0[0], &x1[0], &x2[0], &x3[0], &x4[0], &y0[0], &y1[0], &y2[0], &y3[0], &y4[0], s, &tw[0], rot128(inverse), &r5c128[0])
			continue
		}
		x1, x2, x3, x4 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)], x4[:len(x0)]
		y0, y1, y2, y3, y4 = y0[:len(x0)], y1[:len(x0)], y2[:len(x0)], y3[:len(x0)], y4[:len(x0)]
		w1, w2, w3, w4 := tw[0], tw[1], tw[2], tw[3]
		for q := range x0 {
			a0, a1, a2, a3, a4 := x0[q], x1[q], x2[q], x3[q], x4[q]
			b1, b2 := a1+a4, a2+a3
			d1, d2 := a1-a4, a2-a3
			e1 := a0 + scale128(b1, c1) + scale128(b2, c2)
			e2 := a0 + scale128(b1, c2) + scale128(b2, c1)
			// f = -i·(s1 d1 + s2 d2) forward, +i inverse
			f1 := rotate128(scale128(d1, s1)+scale128(d2, s2), inverse)
			f2 := rotate128(scale128(d1, s2)-scale128(d2, s1), inverse)
			y0[q] = a0 + b1 + b2
			y1[q] = mul128(e1+f1, w1)
			y2[q] = mul128(e2+f2, w2)
			y3[q] = mul128(e2-f2, w3)
			y4[q] = mul128(e1-f1, w4)
		}
	}
}

func (st *stage128) generic(y, x []cplx128) {
	r, m, s := st.radix, st.m, st.s
	var a, t [maxRadix]cplx128
	for p := range m {
		tw := st.tw[(r-1)*p : (r-1)*(p+1)]
		for q := range s {
			for j := range r {
				a[j] = x[q+s*(p+j*m)]
			}
			for k := range r {
				sum := a[0]
				idx := 0
				for j := 1; j < r; j++ {
					idx += k
					if idx >= r {
						idx -= r
					}
					sum += mul128(a[j], st.wr[idx])
				}
				t[k] = sum
			}
			base := q + s*r*p
			y[base] = t[0]
			for k := 1; k < r; k++ {
				y[base+s*k] = mul128(t[k], tw[k-1])
			}
		}
	}
}

// AxisWorkLen is the scratch Axis needs for arrays with inner elements
// after the transformed axis.
func (p *Plan128) AxisWorkLen(inner int) int {
	if inner == 1 {
		return p.WorkLen()
	}
	return p.WorkLen() + 2*columnBlock*p.n
}

// Axis transforms along the middle axis of a row-major [outer, Len, inner]
// array: dst and src hold outer·Len·inner elements (dst may be src); work
// holds AxisWorkLen(inner).
func (p *Plan128) Axis(dst, src []cplx128, outer, inner int, work []cplx128) {
	p.AxisRange(dst, src, outer, inner, 0, AxisItems(outer, inner), work)
}

// AxisRange is Axis restricted to items [lo, hi) of AxisItems(outer,
// inner): disjoint ranges touch disjoint elements, so they may run in
// parallel, each with its own work.
func (p *Plan128) AxisRange(dst, src []cplx128, outer, inner, lo, hi int, work []cplx128) {
	n := p.n
	if inner == 1 {
		for o := lo; o < hi; o++ {
			p.Transform(dst[o*n:(o+1)*n], src[o*n:(o+1)*n], work)
		}
		return
	}
	w := work[:p.WorkLen()]
	in := work[len(w) : len(w)+columnBlock*n]
	out := work[len(w)+columnBlock*n : len(w)+2*columnBlock*n]
	blocks := (inner + columnBlock - 1) / columnBlock
	for it := lo; it < hi; it++ {
		o, c0 := it/blocks, (it%blocks)*columnBlock
		base := o * n * inner
		nb := min(columnBlock, inner-c0)
		for i := range n {
			row := src[base+i*inner+c0 : base+i*inner+c0+nb]
			for b, v := range row {
				in[b*n+i] = v
			}
		}
		for b := range nb {
			p.Transform(out[b*n:(b+1)*n], in[b*n:(b+1)*n], w)
		}
		for i := range n {
			row := dst[base+i*inner+c0 : base+i*inner+c0+nb]
			for b := range row {
				row[b] = out[b*n+i]
			}
		}
	}
}

// RealPlan128 transforms real (real128) vectors of length n to their n/2+1
// non-negative frequencies (Forward, r2c) and back (Inverse, c2r,
// unnormalised: Inverse(Forward(x)) = n·x).
type RealPlan128 struct {
	n        int
	half     *Plan128  // forward, n/2 (even n)
	halfInv  *Plan128  // inverse, n/2 (even n)
	full     *Plan128  // forward, n (odd n)
	fullInv  *Plan128  // inverse, n (odd n)
	tw       []cplx128 // exp(-2πi·k/n), k ≤ n/4 ... n/2
	workLen  int
	complexN int
}

// NewRealPlan128 returns the (cached) real-input plan of length n ≥ 1.
func NewRealPlan128(n int) *RealPlan128 {
	return cached(planKey{n, false, 2}, func() *RealPlan128 {
		rp := &RealPlan128{n: n, complexN: n/2 + 1}
		if n%2 == 0 {
			h := n / 2
			rp.half, rp.halfInv = NewPlan128(h, false), NewPlan128(h, true)
			rp.tw = make([]cplx128, h)
			for k := range h {
				rp.tw[k] = cplx128(twiddle(k, n, -1))
			}
			rp.workLen = h + max(rp.half.WorkLen(), rp.halfInv.WorkLen())
		} else {
			rp.full, rp.fullInv = NewPlan128(n, false), NewPlan128(n, true)
			rp.workLen = 2*n + max(rp.full.WorkLen(), rp.fullInv.WorkLen())
		}
		return rp
	})
}

// Len is the real length n; the complex side has n/2+1 elements.
func (rp *RealPlan128) Len() int { return rp.n }

// WorkLen is the scratch Forward and Inverse need.
func (rp *RealPlan128) WorkLen() int { return rp.workLen }

// Forward writes the n/2+1 first frequencies of the real src (length n)
// to dst.
func (rp *RealPlan128) Forward(dst []cplx128, src []real128, work []cplx128) {
	rp.forward(dst, src, 1, work)
}

// forward is Forward reading src[i·stride].
func (rp *RealPlan128) forward(dst []cplx128, src []real128, stride int, work []cplx128) {
	n := rp.n
	if n%2 == 1 {
		z, out, w := work[:n], work[n:2*n], work[2*n:]
		for i := range z {
			z[i] = complex(src[i*stride], 0)
		}
		rp.full.Transform(out, z, w)
		copy(dst[:n/2+1], out)
		return
	}
	h := n / 2
	z, w := work[:h], work[h:]
	for k := range h {
		z[k] = complex(src[2*k*stride], src[(2*k+1)*stride])
	}
	d := dst[:h+1]
	rp.half.Transform(d[:h], z, w)
	z0 := d[0]
	d[0] = complex(real(z0)+imag(z0), 0)
	d[h] = complex(real(z0)-imag(z0), 0)
	for k := 1; 2*k <= h; k++ {
		zk, zh := d[k], d[h-k]
		czh := complex(real(zh), -imag(zh))
		e := scale128(zk+czh, 0.5)
		o := scale128(rotate128(zk-czh, false), 0.5)
		wo := rp.tw[k] * o
		d[k] = e + wo
		v := e - wo
		d[h-k] = complex(real(v), -imag(v))
	}
}

// Inverse writes the real length-n signal whose non-negative frequencies
// are src (n/2+1 of them; the imaginary parts of the zero frequency and,
// for even n, of the Nyquist one are ignored, as NumPy's irfft) to dst,
// unnormalised. src is not modified.
func (rp *RealPlan128) Inverse(dst []real128, src []cplx128, work []cplx128) {
	rp.inverse(dst, 1, src, 1, work)
}

// inverse is Inverse reading src[k·sstride] and writing dst[i·dstride].
func (rp *RealPlan128) inverse(dst []real128, dstride int, src []cplx128, sstride int, work []cplx128) {
	n := rp.n
	if n%2 == 1 {
		z, out, w := work[:n], work[n:2*n], work[2*n:]
		h := n / 2
		z[0] = complex(real(src[0]), 0)
		for k := 1; k <= h; k++ {
			v := src[k*sstride]
			z[k] = v
			z[n-k] = complex(real(v), -imag(v))
		}
		rp.fullInv.Transform(out, z, w)
		for i := range n {
			dst[i*dstride] = real(out[i])
		}
		return
	}
	h := n / 2
	z, w := work[:h], work[h:]
	x0, xh := real(src[0]), real(src[h*sstride])
	z[0] = complex(x0+xh, x0-xh)
	for k := 1; k < h; k++ {
		xk, xr := src[k*sstride], src[(h-k)*sstride]
		cxr := complex(real(xr), -imag(xr))
		e := xk + cxr
		tw := rp.tw[k]
		o := (xk - cxr) * complex(real(tw), -imag(tw))
		z[k] = e + rotate128(o, true)
	}
	rp.halfInv.Transform(z, z, w)
	for k := range h {
		dst[2*k*dstride] = real(z[k])
		dst[(2*k+1)*dstride] = imag(z[k])
	}
}

// AxisWorkLen is the scratch AxisForward and AxisInverse need for arrays
// with inner elements after the real axis.
func (rp *RealPlan128) AxisWorkLen(inner int) int {
	if inner == 1 {
		return rp.workLen
	}
	return rp.workLen + rp.n/2 + 1
}

// AxisForward is Forward along the middle axis of row-major arrays, src
// [outer, n, inner] and dst [outer, n/2+1, inner], for items [lo, hi) of
// AxisItems(outer, inner) (see Plan128.AxisRange).
func (rp *RealPlan128) AxisForward(dst []cplx128, src []real128, outer, inner, lo, hi int, work []cplx128) {
	n, m := rp.n, rp.n/2+1
	if inner == 1 {
		for o := lo; o < hi; o++ {
			rp.forward(dst[o*m:(o+1)*m], src[o*n:(o+1)*n], 1, work)
		}
		return
	}
	line, w := work[rp.workLen:rp.workLen+m], work[:rp.workLen]
	blocks := (inner + columnBlock - 1) / columnBlock
	for it := lo; it < hi; it++ {
		o, c0 := it/blocks, (it%blocks)*columnBlock
		for c := c0; c < min(c0+columnBlock, inner); c++ {
			rp.forward(line, src[o*n*inner+c:], inner, w)
			for k, v := range line {
				dst[(o*m+k)*inner+c] = v
			}
		}
	}
}

// AxisInverse is Inverse along the middle axis: src [outer, n/2+1, inner]
// to dst [outer, n, inner], items [lo, hi) of AxisItems(outer, inner).
func (rp *RealPlan128) AxisInverse(dst []real128, src []cplx128, outer, inner, lo, hi int, work []cplx128) {
	n, m := rp.n, rp.n/2+1
	if inner == 1 {
		for o := lo; o < hi; o++ {
			rp.inverse(dst[o*n:(o+1)*n], 1, src[o*m:(o+1)*m], 1, work)
		}
		return
	}
	blocks := (inner + columnBlock - 1) / columnBlock
	for it := lo; it < hi; it++ {
		o, c0 := it/blocks, (it%blocks)*columnBlock
		for c := c0; c < min(c0+columnBlock, inner); c++ {
			rp.inverse(dst[o*n*inner+c:], inner, src[o*m*inner+c:], inner, work)
		}
	}
}

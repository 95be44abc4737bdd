package gemm

import (
	"fmt"
	"unsafe"
)

// Shifted products: the micro-kernels of a stride-1 convolution that reads
// its zero-padded input in place. For a row of output positions, column
// j of the implicit column matrix is x[j:] shifted by each tap, so
//
//	c[i·ldc + j] = Σ_r a[r·lda + i] · x[off[r] + j]   (i < m, j < n)
//
// is a product whose B operand needs no packing: row r of B is the
// contiguous run of x from off[r]. A convolution calls Shift once per
// output row with a (its filter transposed: ck × og) and off (per row r =
// (channel, tap) of the filter, the channel's plane plus the tap's shift
// in the padded input). The sums run over r in order from zero for every
// element, so results do not depend on how the caller tiles its output.
//
// Only AVX-512 machines have these kernels (ShiftAvailable); elsewhere the
// caller keeps its column-matrix products.

// shiftFn is a micro-kernel: rows ≤ its mr rows, the columns of masks;
// bias (rows elements) or nil and relu are RunEpi's.
type shiftFn[T float32 | float64] func(k int, a *T, lda int, x *T, off *int32, c *T, ldc, rows int, masks uint64, bias *T, relu int)

type shiftKernels[T float32 | float64] struct {
	wide, narrow shiftFn[T] // 8 rows × 2 vectors, 16 rows × 1 vector
	lanes        int
}

var (
	shift32 shiftKernels[float32]
	shift64 shiftKernels[float64]
)

func shiftOf[T float32 | float64]() *shiftKernels[T] {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return any(&shift32).(*shiftKernels[T])
	}
	return any(&shift64).(*shiftKernels[T])
}

// ShiftAvailable reports whether this machine has the shifted-product
// kernels for the element type.
func ShiftAvailable[T float32 | float64]() bool { return shiftOf[T]().wide != nil }

// ShiftRows is m rounded up to the kernels' row blocks (16): the length
// each row of Shift's a must be readable for.
func ShiftRows(m int) int { return (m + 15) / 16 * 16 }

// ShiftPlan is a prepared shifted product (Shift) of fixed sizes and
// offsets: NewShift checks them once, Run checks only its slices' lengths.
type ShiftPlan[T float32 | float64] struct {
	m, n, lda, ldc int
	off            []int32
	xLen, cLen     int // elements of x and c a run reaches from their starts
	fn             shiftFn[T]
	mr, w          int
	masks          []uint64 // per column tile
}

// NewShift prepares c[i·ldc + j] = Σ_r a[r·lda + i] · x[off[r] + j] for
// i < m, j < n, r < len(off). a holds len(off) rows of lda ≥ m elements,
// and the kernels read whole blocks of rows: the last row of a must
// extend to m rounded up to 16 (ShiftRows(m) ≤ lda makes that so). It
// panics on bad arguments and when !ShiftAvailable.
func NewShift[T float32 | float64](m, n, lda, ldc int, off []int32) *ShiftPlan[T] {
	sk := shiftOf[T]()
	p := newShift(sk, m, n, lda, ldc, off)
	p.fn, p.mr, p.w = sk.wide, 8, 2*sk.lanes
	if n <= sk.lanes {
		// Narrow rows (at most one vector) take 16 rows at a time; wider
		// ones 8 rows of two vectors.
		p.fn, p.mr, p.w = sk.narrow, 16, sk.lanes
	}
	l := sk.lanes
	for j0 := 0; j0 < n; j0 += p.w {
		cols, masks := min(p.w, n-j0), uint64(0)
		for v := 0; v*l < cols; v++ {
			masks |= (uint64(1)<<min(l, cols-v*l) - 1) << (16 * v)
		}
		p.masks = append(p.masks, masks)
	}
	p.cLen = (m-1)*ldc + n
	return p
}

func newShift[T float32 | float64](sk *shiftKernels[T], m, n, lda, ldc int, off []int32) *ShiftPlan[T] {
	if sk.wide == nil {
		panic("gemm: shifted products without AVX-512")
	}
	if m <= 0 || n <= 0 || lda < m || ldc < n {
		panic(fmt.Sprintf("gemm: NewShift: bad sizes m=%d n=%d lda=%d ldc=%d", m, n, lda, ldc))
	}
	p := &ShiftPlan[T]{m: m, n: n, lda: lda, ldc: ldc, off: off}
	for _, o := range off {
		if o < 0 {
			panic(fmt.Sprintf("gemm: NewShift: negative offset %d", o))
		}
		p.xLen = max(p.xLen, int(o)+n)
	}
	return p
}

// Run computes the product of a and x into c (see NewShift): x from its
// start, c's row i from c[i·ldc]. It panics when a slice is too short.
func (p *ShiftPlan[T]) Run(a, x, c []T) { p.RunEpi(a, x, c, nil, false) }

// RunEpi is Run followed, for each element as it is stored, by a
// convolution's epilogue: bias[i] added to row i when bias is not nil
// (the sum first, c = s + bias[i]), then max(c, 0) when relu, with the
// bits of simd's Add and Relu over the stored result: a NaN becomes the
// all-ones NaN, -0 becomes +0. bias has at least m elements.
func (p *ShiftPlan[T]) RunEpi(a, x, c, bias []T, relu bool) {
	k := len(p.off)
	if k > 0 && len(a) < (k-1)*p.lda+(p.m-1)/p.mr*p.mr+p.mr || len(x) < p.xLen || len(c) < p.cLen || bias != nil && len(bias) < p.m {
		panic(fmt.Sprintf("gemm: ShiftPlan.Run: %d, %d, %d, %d elements for a %d×%d product with k=%d", len(a), len(x), len(c), len(bias), p.m, p.n, k))
	}
	var pa, pb *T
	var pOff *int32
	if k > 0 {
		pa, pOff = &a[0], &p.off[0]
	}
	r := 0
	if relu {
		r = 1
	}
	for t, masks := range p.masks {
		j0 := t * p.w
		px := &x[j0]
		for i0 := 0; i0 < p.m; i0 += p.mr {
			if k > 0 {
				pa = &a[i0]
			}
			if bias != nil {
				pb = &bias[i0]
			}
			p.fn(k, pa, p.lda, px, pOff, &c[i0*p.ldc+j0], p.ldc, min(p.mr, p.m-i0), masks, pb, r)
		}
	}
}

// Shift runs NewShift(m, n, lda, ldc, off).Run(a, x, c): one product,
// for tests and casual use.
func Shift[T float32 | float64](m, n int, a []T, lda int, x []T, off []int32, c []T, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	NewShift[T](m, n, lda, ldc, off).Run(a, x, c)
}

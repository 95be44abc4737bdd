package gemm

import "unsafe"

type float interface{ ~float32 | ~float64 }

// kernel is a micro-kernel with its register block (mr×nr) and the cache
// blocking that suits it.
type kernel[T float] struct {
	name   string
	mr, nr int
	// fn computes C[0:mr, 0:nr] = alpha·(A·B) + beta·C from a packed A
	// sliver (k steps of mr values) and a packed B sliver (k steps of nr
	// values); C is not read when beta == ±0. Every element of the block
	// goes through the same operations.
	fn func(k int, a, b, c *T, ldc int, alpha, beta T)
	// Blocking: the largest k block (the k blocks of a product depend on k
	// and kcMax only, never on the task split), the rows of A packed at a
	// time (multiple of mr) and the columns of B packed at a time (multiple
	// of nr).
	kcMax, mc, nc int
	// narrow, if not nil, is a kernel with the same mr and a smaller nr
	// (dividing this nr) for the last sliver of B when it has at most
	// narrow.nr columns. It must compute exactly the same values.
	narrow *kernel[T]
	// vec, if not nil, computes products with m == 1 or n == 1.
	vec *vecKernels[T]
}

// vecKernels are the matrix-vector kernels (see vec.go).
type vecKernels[T float] struct {
	lanes int // vector lanes; axpy does 8·lanes columns, axpyRem 4·lanes
	// axpy: c[j] = alpha·Σ_l u[l]·w[l·ldw+j] + beta·c[j] (j < 8·lanes), with
	// the micro-kernels' arithmetic; axpyRem: the same for 4·lanes columns
	// under lane masks (16 bits per vector).
	axpy, axpyRem func(k int, u, w *T, ldw int, c *T, masks uint64, alpha, beta T)
	// dot: out[i·ldo] = Σ_l w[i·ldw+l]·u[l] for i < rows.
	dot func(k int, w *T, ldw, rows int, u, out *T, ldo int, tailMask uint64)
}

// Selected kernels, set by init in the kernels_*.go files.
var (
	kern32 *kernel[float32]
	kern64 *kernel[float64]
)

// Portable kernels, 2×4 with the accumulators in scalar registers (the Go
// compiler keeps 8 accumulators in registers on amd64; with 16 it spills).
// They are not generic: the generic form runs ~25% slower.
var (
	goKern32 = &kernel[float32]{name: "go2x4-f32", mr: 2, nr: 4, fn: kernGoS2x4, kcMax: 256, mc: 64, nc: 1024}
	goKern64 = &kernel[float64]{name: "go2x4-f64", mr: 2, nr: 4, fn: kernGoD2x4, kcMax: 256, mc: 64, nc: 1024}
)

func kernGoS2x4(k int, pa, pb, pc *float32, ldc int, alpha, beta float32) {
	a := unsafe.Slice(pa, 2*k)
	b := unsafe.Slice(pb, 4*k)
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	for i := 0; i < k; i++ {
		aa := a[2*i : 2*i+2 : 2*i+2]
		bb := b[4*i : 4*i+4 : 4*i+4]
		a0, a1 := aa[0], aa[1]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	c := unsafe.Slice(pc, ldc+4)
	store4(c[0:4], c00, c01, c02, c03, alpha, beta)
	store4(c[ldc:ldc+4], c10, c11, c12, c13, alpha, beta)
}

func kernGoD2x4(k int, pa, pb, pc *float64, ldc int, alpha, beta float64) {
	a := unsafe.Slice(pa, 2*k)
	b := unsafe.Slice(pb, 4*k)
	var c00, c01, c02, c03, c10, c11, c12, c13 float64
	for i := 0; i < k; i++ {
		aa := a[2*i : 2*i+2 : 2*i+2]
		bb := b[4*i : 4*i+4 : 4*i+4]
		a0, a1 := aa[0], aa[1]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	c := unsafe.Slice(pc, ldc+4)
	store4(c[0:4], c00, c01, c02, c03, alpha, beta)
	store4(c[ldc:ldc+4], c10, c11, c12, c13, alpha, beta)
}

func store4[T float](c []T, x0, x1, x2, x3, alpha, beta T) {
	_ = c[3]
	x0, x1, x2, x3 = alpha*x0, alpha*x1, alpha*x2, alpha*x3
	if beta == 0 {
		c[0], c[1], c[2], c[3] = x0, x1, x2, x3
		return
	}
	c[0] = x0 + beta*c[0]
	c[1] = x1 + beta*c[1]
	c[2] = x2 + beta*c[2]
	c[3] = x3 + beta*c[3]
}

//go:build amd64 && !noasm

package fft

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly butterflies (kernels_amd64.s).
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// The sign masks of the rotation by -i (forward: negate the imaginary
// lanes after swapping the parts) and +i (inverse: the real lanes).
var (
	rotFwd64  = [8]uint32{0, 1 << 31, 0, 1 << 31, 0, 1 << 31, 0, 1 << 31}
	rotInv64  = [8]uint32{1 << 31, 0, 1 << 31, 0, 1 << 31, 0, 1 << 31, 0}
	rotFwd128 = [4]uint64{0, 1 << 63, 0, 1 << 63}
	rotInv128 = [4]uint64{1 << 63, 0, 1 << 63, 0}
)

// vec64 and vec128 are the elements of one vector; the assembly loops
// need n to be a positive multiple.
const (
	vec64  = 4
	vec128 = 2
)

//go:noescape
func radix4x64(x0, x1, x2, x3, y0, y1, y2, y3 *complex64, n int, w *complex64, rot *uint32)

//go:noescape
func radix4x128(x0, x1, x2, x3, y0, y1, y2, y3 *complex128, n int, w *complex128, rot *uint64)

//go:noescape
func radix2x64(x0, x1, y0, y1 *complex64, n int, w *complex64)

//go:noescape
func radix2x128(x0, x1, y0, y1 *complex128, n int, w *complex128)

func rot64(inverse bool) *uint32 {
	if inverse {
		return &rotInv64[0]
	}
	return &rotFwd64[0]
}

func rot128(inverse bool) *uint64 {
	if inverse {
		return &rotInv128[0]
	}
	return &rotFwd128[0]
}

//go:noescape
func radix5x64(x0, x1, x2, x3, x4, y0, y1, y2, y3, y4 *complex64, n int, w *complex64, rot *uint32, c *float32)

//go:noescape
func radix5x128(x0, x1, x2, x3, x4, y0, y1, y2, y3, y4 *complex128, n int, w *complex128, rot *uint64, c *float64)

// The radix-5 constants cos(2π/5), cos(4π/5), sin(2π/5), sin(4π/5).
var (
	r5c64  = [4]float32{0.30901699437494742410229341718281906, -0.80901699437494742410229341718281906, 0.95105651629515357211643933337938214, 0.58778525229247312916870595463907277}
	r5c128 = [4]float64{0.30901699437494742410229341718281906, -0.80901699437494742410229341718281906, 0.95105651629515357211643933337938214, 0.58778525229247312916870595463907277}
)

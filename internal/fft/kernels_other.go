//go:build !amd64 || noasm

package fft

const useAVX2 = false

const (
	vec64  = 4
	vec128 = 2
)

func radix4x64(x0, x1, x2, x3, y0, y1, y2, y3 *complex64, n int, w *complex64, rot *uint32) {
	panic("fft: no assembly")
}

func radix4x128(x0, x1, x2, x3, y0, y1, y2, y3 *complex128, n int, w *complex128, rot *uint64) {
	panic("fft: no assembly")
}

func radix2x64(x0, x1, y0, y1 *complex64, n int, w *complex64) { panic("fft: no assembly") }

func radix2x128(x0, x1, y0, y1 *complex128, n int, w *complex128) { panic("fft: no assembly") }

func rot64(bool) *uint32  { return nil }
func rot128(bool) *uint64 { return nil }

func radix5x64(x0, x1, x2, x3, x4, y0, y1, y2, y3, y4 *complex64, n int, w *complex64, rot *uint32, c *float32) {
	panic("fft: no assembly")
}

func radix5x128(x0, x1, x2, x3, x4, y0, y1, y2, y3, y4 *complex128, n int, w *complex128, rot *uint64, c *float64) {
	panic("fft: no assembly")
}

var (
	r5c64  [4]float32
	r5c128 [4]float64
)

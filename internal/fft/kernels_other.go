//go:build !amd64 || noasm

package fft

const useAVX2 = false

const (
	vec64  = 4
	vec128 = 2
)

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

func radix4s1x64(x, y *complex64, m, count int, w *complex64, rot *uint32) { panic("fft: no assembly") }

func radix4s1x128(x, y *complex128, m, count int, w *complex128, rot *uint64) {
	panic("fft: no assembly")
}

func radix4stage64(x, y *complex64, m, s int, tw *complex64, rot *uint32) { panic("fft: no assembly") }

func radix4stage128(x, y *complex128, m, s int, tw *complex128, rot *uint64) {
	panic("fft: no assembly")
}

func radix2stage64(x, y *complex64, m, s int, tw *complex64) { panic("fft: no assembly") }

func radix2stage128(x, y *complex128, m, s int, tw *complex128) { panic("fft: no assembly") }

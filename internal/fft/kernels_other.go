//go:build !amd64 || noasm

package fft

const useAVX2 = false

const (
	vec64  = 4
	vec128 = 2
)

func rot64(bool) *uint32  { return nil }
func rot128(bool) *uint64 { return nil }

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

func radix5stage64(x, y *complex64, m, s int, tw *complex64, rot *uint32, c *float32) {
	panic("fft: no assembly")
}

func radix5stage128(x, y *complex128, m, s int, tw *complex128, rot *uint64, c *float64) {
	panic("fft: no assembly")
}

package fft

import (
	"fmt"
	"testing"
)

func BenchmarkComplex64(b *testing.B) {
	for _, n := range []int{1000, 1024, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p := NewPlan64(n, false)
			x := make([]complex64, n)
			for i := range x {
				x[i] = complex(float32(i%7), float32(i%5))
			}
			y := make([]complex64, n)
			w := make([]complex64, p.WorkLen())
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				p.Transform(y, x, w)
			}
		})
	}
}

func BenchmarkReal2D(b *testing.B) {
	const n = 1024
	rp := NewRealPlan64(n)
	cp := NewPlan64(n, false)
	x := make([]float32, n*n)
	y := make([]complex64, n*(n/2+1))
	w := make([]complex64, max(rp.WorkLen(), cp.AxisWorkLen(n/2+1)))
	for b.Loop() {
		for r := range n {
			rp.Forward(y[r*(n/2+1):(r+1)*(n/2+1)], x[r*n:(r+1)*n], w)
		}
		cp.Axis(y, y, 1, n/2+1, w)
	}
}

func BenchmarkComplex2D(b *testing.B) {
	const n = 4096
	p := NewPlan64(n, false)
	x := make([]complex64, n*n)
	w := make([]complex64, p.AxisWorkLen(n))
	for b.Loop() {
		p.Axis(x, x, n, 1, w)
		p.Axis(x, x, 1, n, w)
	}
}

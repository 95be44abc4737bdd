package cpu

import (
	"runtime"
	"testing"
)

// BenchmarkDispatch is the cost of one parallel loop split into two parts
// of negligible work: what a kernel pays for using a second worker
// (handing a part over, the worker's start, and the wait for it). Between
// loops the caller does "gap" of its own serial work, as a step's other
// kernels do; with a long gap an idle worker (and its CPU) falls asleep.
func BenchmarkDispatch(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs GOMAXPROCS >= 2")
	}
	for _, gap := range []int{0, 2000, 50000} {
		b.Run("gap="+itoa(gap), func(b *testing.B) {
			p := newPool(2)
			defer p.close()
			var j job
			var sink [2]int
			fn := func(lo, hi, part int) { sink[part] += hi - lo }
			for i := 0; i < b.N; i++ {
				p.For(2, 1, 2, 0, &j, nil, nil, fn)
				spin(gap)
			}
		})
		b.Run("gap="+itoa(gap)+"/serial", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				spin(gap)
			}
		})
	}
}

var spinSink int

// spin does about n ns of serial work (an integer chain).
func spin(n int) {
	x := spinSink
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	spinSink = x
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

package gemm

import (
	"math/rand/v2"
	"testing"
)

// DgemmSerial gives Dgemm's results bit for bit (one task either way for
// one thread) and allocates nothing.
func TestDgemmSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, d := range [][3]int{{1, 1, 1}, {3, 2, 4}, {1, 300, 70}, {300, 1, 70}, {130, 90, 300}, {7, 513, 2}} {
		m, n, k := d[0], d[1], d[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			a, b := make([]float64, m*k), make([]float64, k*n)
			for i := range a {
				a[i] = r.Float64()
			}
			for i := range b {
				b[i] = r.Float64()
			}
			lda, ldb := k, n
			if tr[0] {
				lda = m
			}
			if tr[1] {
				ldb = k
			}
			c1, c2 := make([]float64, m*n), make([]float64, m*n)
			for i := range c1 {
				c1[i], c2[i] = float64(i), float64(i)
			}
			Dgemm(tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, 2, c1, n)
			ws := make([]float64, SerialWorkspace64(max(m, n, k)))
			allocs := testing.AllocsPerRun(2, func() {
				copy(c2, c1[:0])
				DgemmSerial(tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, 2, c2, n, ws)
			})
			c2 = make([]float64, m*n)
			for i := range c2 {
				c2[i] = float64(i)
			}
			DgemmSerial(tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, 2, c2, n, ws)
			for i := range c1 {
				if c1[i] != c2[i] {
					t.Fatalf("%v %v: element %d: %v, Dgemm %v", d, tr, i, c2[i], c1[i])
				}
			}
			if allocs != 0 {
				t.Errorf("%v %v: %v allocations", d, tr, allocs)
			}
		}
	}
}

package bench

import (
	"math"
	"testing"
)

// The linalg workloads compute what they claim at a small size: the
// Cholesky factor reproduces the matrix, the solution solves the system.
func TestLinalgWorkloads(t *testing.T) {
	const n = 9
	a, b := LinalgMatrix(n)
	for _, op := range []string{"cholesky", "solve"} {
		l, err := NewLinalgLoom(op, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Time(1); err != nil {
			t.Fatal(err)
		}
		y := l.out[0]
		for i := range n {
			if op == "solve" {
				s := 0.0
				for k := range n {
					s += a[i*n+k] * y.Float64(k)
				}
				if math.Abs(s-b[i]) > 1e-12 {
					t.Errorf("solve: row %d of A·x is %v, want %v", i, s, b[i])
				}
				continue
			}
			for j := range n {
				s := 0.0
				for k := range n {
					s += y.Float64(i*n+k) * y.Float64(j*n+k)
				}
				if math.Abs(s-a[i*n+j]) > 1e-12 {
					t.Errorf("cholesky: (L·Lᵀ)[%d,%d] = %v, want %v", i, j, s, a[i*n+j])
				}
			}
		}
		l.Close()
	}
}

package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loomgraph/loom/internal/simd"
)

// TestShift checks the shifted products against a float64 reference
// (plain sums in float64 of the same products) on every tile shape: row
// counts around the 8- and 16-row blocks, widths around one and two
// vectors, k from 0 (c becomes zero) to a 3×3×8 filter's 72. It also checks
// that a value does not depend on its tile: computing rows and columns in
// pieces gives the same bits.
func TestShift(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testShift[float32](t, 1e-5) })
	t.Run("float64", func(t *testing.T) { testShift[float64](t, 1e-13) })
}

func testShift[T float32 | float64](t *testing.T, tol float64) {
	if !ShiftAvailable[T]() {
		t.Skip("no AVX-512 shifted-product kernels on this machine")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{1, 5, 8, 9, 15, 16, 17, 24, 33} {
		for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 50, 64, 70} {
			for _, k := range []int{0, 1, 9, 72} {
				lda := ShiftRows(m)
				a := make([]T, max(k, 1)*lda+16) // slack: the row-at-a-time pass reads 16 rows from a[i:]
				for i := range a {
					a[i] = T(rng.Float64()*2 - 1)
				}
				x := make([]T, 320)
				for i := range x {
					x[i] = T(rng.Float64()*2 - 1)
				}
				off := make([]int32, k)
				for r := range off {
					off[r] = int32(rng.IntN(len(x) - n + 1))
				}
				ldc := n + 3
				c := make([]T, m*ldc)
				for i := range c {
					c[i] = T(math.NaN()) // every kept element must be written
				}
				Shift(m, n, a, lda, x, off, c, ldc)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						want := 0.0
						for r := 0; r < k; r++ {
							want += float64(a[r*lda+i]) * float64(x[int(off[r])+j])
						}
						if got := float64(c[i*ldc+j]); !(math.Abs(got-want) <= tol*(1+math.Abs(want))) {
							t.Fatalf("m=%d n=%d k=%d: c[%d,%d] = %v, want %v (float64 reference)", m, n, k, i, j, got, want)
						}
					}
					for j := n; j < ldc && i < m-1; j++ {
						if !math.IsNaN(float64(c[i*ldc+j])) {
							t.Fatalf("m=%d n=%d k=%d: c[%d,%d] written outside the columns", m, n, k, i, j)
						}
					}
				}
				// The same product one row and a few columns at a time.
				piece := make([]T, len(c))
				for i := 0; i < m; i++ {
					for j0 := 0; j0 < n; j0 += 5 {
						cols := min(5, n-j0)
						Shift(1, cols, a[i:], lda, x[j0:], off, piece[i*ldc+j0:], ldc)
					}
				}
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						if piece[i*ldc+j] != c[i*ldc+j] {
							t.Fatalf("m=%d n=%d k=%d: c[%d,%d] = %v in pieces, %v whole", m, n, k, i, j, piece[i*ldc+j], c[i*ldc+j])
						}
					}
				}
			}
		}
	}
}

// TestShiftEpi checks RunEpi's bias and ReLU against Run followed by the
// elementwise passes they replace (simd's Add of the row's bias, then
// Relu), bit for bit: with a NaN in x (the columns it reaches), a NaN
// bias (its row) and sums of both signs, for row counts around the 8-
// and 16-row blocks.
func TestShiftEpi(t *testing.T) {
	t.Run("float32", func(t *testing.T) { testShiftEpi[float32](t) })
	t.Run("float64", func(t *testing.T) { testShiftEpi[float64](t) })
}

func testShiftEpi[T float32 | float64](t *testing.T) {
	if !ShiftAvailable[T]() {
		t.Skip("no AVX-512 shifted-product kernels on this machine")
	}
	add, _, _ := simd.Binary[T](simd.Add)
	relu := simd.Unary[T](simd.Relu)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 7, 8, 9, 16, 17, 24} {
		for _, n := range []int{5, 16, 28, 33} {
			for _, k := range []int{0, 9} {
				lda := ShiftRows(m)
				a := make([]T, max(k, 1)*lda)
				for i := range a {
					a[i] = T(rng.Float64()*2 - 1)
				}
				x := make([]T, 200)
				for i := range x {
					x[i] = T(rng.Float64()*2 - 1)
				}
				x[150] = T(math.NaN())
				off := make([]int32, k)
				for r := range off {
					off[r] = int32(rng.IntN(len(x) - n + 1))
				}
				bias := make([]T, m)
				for i := range bias {
					bias[i] = T(rng.Float64() - 0.5)
				}
				bias[m/2] = T(math.NaN())
				ldc := n + 2
				for _, withBias := range []bool{false, true} {
					for _, withRelu := range []bool{false, true} {
						if !withBias && !withRelu {
							continue
						}
						p := NewShift[T](m, n, lda, ldc, off)
						want := make([]T, m*ldc)
						p.Run(a, x, want)
						for i := 0; i < m; i++ {
							row := want[i*ldc : i*ldc+n]
							if withBias {
								b := make([]T, n)
								for j := range b {
									b[j] = bias[i]
								}
								add(row, row, b)
							}
							if withRelu {
								relu(row, row)
							}
						}
						got := make([]T, m*ldc)
						var bs []T
						if withBias {
							bs = bias
						}
						p.RunEpi(a, x, got, bs, withRelu)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								g, w := got[i*ldc+j], want[i*ldc+j]
								if bitsOf(g) != bitsOf(w) {
									t.Fatalf("m=%d n=%d k=%d bias=%v relu=%v: c[%d,%d] = %v (%#x), want %v (%#x) from Run, Add, Relu", m, n, k, withBias, withRelu, i, j, g, bitsOf(g), w, bitsOf(w))
								}
							}
						}
					}
				}
			}
		}
	}
}

// bitsOf is v's bit pattern.
func bitsOf[T float32 | float64](v T) uint64 {
	switch v := any(v).(type) {
	case float32:
		return uint64(math.Float32bits(v))
	case float64:
		return math.Float64bits(v)
	}
	return 0
}

// BenchmarkShift times the shifted products at examples/onnx's CNN
// layers (one output row: 8 channels × 28 columns from 9 rows, 16 × 14
// from 72), in L1; GFLOP/s counts 2 per multiply-add.
func BenchmarkShift(b *testing.B) {
	if !ShiftAvailable[float32]() {
		b.Skip("no AVX-512 shifted-product kernels on this machine")
	}
	for _, c := range []struct{ m, n, k int }{{8, 28, 9}, {16, 14, 72}} {
		b.Run(fmt.Sprintf("%dx%dx%d", c.m, c.n, c.k), func(b *testing.B) {
			lda := ShiftRows(c.m)
			a, x, cc := make([]float32, c.k*lda), make([]float32, 1024), make([]float32, c.m*c.n)
			off := make([]int32, c.k)
			for r := range off {
				off[r] = int32(r * 11 % 900)
			}
			p := NewShift[float32](c.m, c.n, lda, c.n, off)
			for range b.N {
				p.Run(a, x, cc)
			}
			b.ReportMetric(2*float64(c.m*c.n*c.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

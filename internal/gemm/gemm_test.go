package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"unsafe"
)

// sentinel marks the padding of C (past n in each row, up to ldc): it must
// stay untouched. The padding of A and B holds NaN: reading it would show.
const sentinel = -12345.5

type mats[T float] struct {
	transA, transB bool
	m, n, k        int
	a, b, c        []T
	lda, ldb, ldc  int
}

// newMats makes random operands with leading dimensions padded by pad
// (NaN in A's and B's padding, sentinel in C's) and C filled with random
// values, or NaN when nanC.
func newMats[T float](rng *rand.Rand, transA, transB bool, m, n, k, pad int, nanC bool) *mats[T] {
	x := &mats[T]{transA: transA, transB: transB, m: m, n: n, k: k}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	fill := func(rows, cols, pad int, padVal T, val func() T) ([]T, int) {
		ld := max(cols, 1) + pad
		s := make([]T, max(rows*ld, 1))
		for i := range s {
			if i%ld < cols {
				s[i] = val()
			} else {
				s[i] = padVal
			}
		}
		return s, ld
	}
	rnd := func() T { return T(rng.Float64()*2 - 1) }
	nan := T(math.NaN())
	x.a, x.lda = fill(ar, ac, pad, nan, rnd)
	x.b, x.ldb = fill(br, bc, pad, nan, rnd)
	cv := rnd
	if nanC {
		cv = func() T { return nan }
	}
	x.c, x.ldc = fill(m, n, pad, sentinel, cv)
	return x
}

func (x *mats[T]) opA(i, l int) float64 {
	if x.transA {
		return float64(x.a[l*x.lda+i])
	}
	return float64(x.a[i*x.lda+l])
}

func (x *mats[T]) opB(l, j int) float64 {
	if x.transB {
		return float64(x.b[j*x.ldb+l])
	}
	return float64(x.b[l*x.ldb+j])
}

// check compares got (the C after the product) with the float64 reference
// computed from x (the C before), within a rounding-error bound.
func (x *mats[T]) check(t *testing.T, what string, alpha, beta T, got []T) {
	t.Helper()
	var u float64 = 0x1p-53
	if unsafe.Sizeof(T(0)) == 4 {
		u = 0x1p-24
	}
	bad := 0
	for i := 0; i < x.m; i++ {
		for j := 0; j < x.ldc; j++ {
			idx := i*x.ldc + j
			if j >= x.n {
				if got[idx] != sentinel {
					t.Errorf("%s: C padding [%d,%d] changed to %v", what, i, j, got[idx])
					return
				}
				continue
			}
			var s, mag float64
			if alpha != 0 {
				for l := 0; l < x.k; l++ {
					p := x.opA(i, l) * x.opB(l, j)
					s += p
					mag += math.Abs(p)
				}
			}
			want := float64(alpha) * s
			mag = math.Abs(float64(alpha)) * mag
			if beta != 0 {
				want += float64(beta) * float64(x.c[idx])
				mag += math.Abs(float64(beta) * float64(x.c[idx]))
			}
			tol := 2 * float64(x.k+4) * u * mag
			g := float64(got[idx])
			if math.IsNaN(g) || math.Abs(g-want) > tol {
				t.Errorf("%s: C[%d,%d] = %v, want %v (tolerance %g)", what, i, j, g, want, tol)
				if bad++; bad > 5 {
					return
				}
			}
		}
	}
}

// candidate marks the kernels that are not used (tuning candidates): they
// are tested with fewer parameter combinations.
var candidate = map[any]bool{}

// kernels32/64 are the kernels to test: the portable one and every one
// this machine runs (see kernels_amd64.go).
func kernels32() []*kernel[float32] { return append([]*kernel[float32]{goKern32}, extraKernels32()...) }
func kernels64() []*kernel[float64] { return append([]*kernel[float64]{goKern64}, extraKernels64()...) }

// gemmWith runs the product with kernel kern on `threads` goroutines.
func gemmWith[T float](kern *kernel[T], transA, transB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int, threads int) {
	p := newPlan(kern, transA, transB, m, n, k, threads)
	runAll(&p, alpha, a, lda, b, ldb, beta, c, ldc, threads)
}

type shape struct{ m, n, k int }

func testShapes(short bool) []shape {
	small := []int{1, 2, 7, 17, 33}
	var s []shape
	for _, m := range small {
		for _, n := range small {
			for _, k := range small {
				s = append(s, shape{m, n, k})
			}
		}
	}
	s = append(s,
		shape{65, 65, 65}, shape{129, 33, 257}, shape{33, 129, 65}, shape{257, 17, 129},
		shape{1, 257, 129}, shape{257, 1, 129}, shape{129, 129, 1}, shape{65, 257, 7},
		shape{64, 256, 784}, shape{64, 10, 256}, shape{784, 256, 64}, shape{64, 256, 10},
		shape{1, 228, 530}, shape{531, 1, 260}, shape{1, 1, 1000}, shape{1, 128, 40}, shape{2, 1, 300},
	)
	if !short {
		s = append(s,
			shape{257, 257, 257}, shape{300, 70, 600}, // m > mc, several k blocks
			shape{9, 2200, 20}, // n > nc
			shape{129, 257, 513},
		)
	}
	return s
}

func testProducts[T float](t *testing.T, kern *kernel[T]) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sh := range testShapes(testing.Short()) {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, pad := range []int{0, 3} {
				for _, ab := range [][2]T{{1, 0}, {-0.5, 1}, {2.5, -0.5}, {1, 1}, {0, -0.5}, {0, 0}, {-0.5, 0}} {
					alpha, beta := ab[0], ab[1]
					big := sh.m*sh.n*sh.k > 100000
					if big && (candidate[kern] || raceEnabled) {
						continue
					}
					if (big || candidate[kern] || raceEnabled) && (pad != 3 || ab != [2]T{-0.5, 1}) {
						continue // big shapes, candidate kernels, race detector: one combination
					}
					x := newMats[T](rng, tr[0], tr[1], sh.m, sh.n, sh.k, pad, beta == 0)
					c := append([]T(nil), x.c...)
					what := fmt.Sprintf("%s tA=%v tB=%v m=%d n=%d k=%d pad=%d alpha=%v beta=%v",
						kern.name, tr[0], tr[1], sh.m, sh.n, sh.k, pad, alpha, beta)
					gemmWith(kern, tr[0], tr[1], sh.m, sh.n, sh.k, alpha, x.a, x.lda, x.b, x.ldb, beta, c, x.ldc, 1)
					x.check(t, what, alpha, beta, c)
					if t.Failed() {
						return
					}
				}
			}
		}
	}
}

func TestProducts32(t *testing.T) {
	for _, k := range kernels32() {
		if raceEnabled && k != kern32 {
			continue
		}
		t.Run(k.name, func(t *testing.T) { testProducts(t, k) })
	}
}

func TestProducts64(t *testing.T) {
	for _, k := range kernels64() {
		if raceEnabled && k != kern64 {
			continue
		}
		t.Run(k.name, func(t *testing.T) { testProducts(t, k) })
	}
}

// The public entry points, with the selected kernels.
func TestSgemmDgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range []shape{{1, 1, 1}, {3, 5, 2}, {64, 256, 784}, {100, 37, 300}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			x := newMats[float32](rng, tr[0], tr[1], sh.m, sh.n, sh.k, 2, false)
			c := append([]float32(nil), x.c...)
			Sgemm(tr[0], tr[1], sh.m, sh.n, sh.k, 0.75, x.a, x.lda, x.b, x.ldb, -0.5, c, x.ldc)
			x.check(t, fmt.Sprint("Sgemm", sh, tr), 0.75, -0.5, c)
			y := newMats[float64](rng, tr[0], tr[1], sh.m, sh.n, sh.k, 2, false)
			d := append([]float64(nil), y.c...)
			DgemmThreads(tr[0], tr[1], sh.m, sh.n, sh.k, 0.75, y.a, y.lda, y.b, y.ldb, -0.5, d, y.ldc, 2)
			y.check(t, fmt.Sprint("Dgemm", sh, tr), 0.75, -0.5, d)
		}
	}
}

func TestEmpty(t *testing.T) {
	// m or n zero: nothing happens, even with nil slices.
	Sgemm(false, false, 0, 5, 3, 1, nil, 3, make([]float32, 15), 5, 0, nil, 5)
	Sgemm(false, false, 5, 0, 3, 1, make([]float32, 15), 3, nil, 1, 0, nil, 1)
	// k zero: C = beta·C, NaN-free when beta is zero.
	c := []float32{1, 2, float32(math.NaN()), 4}
	Sgemm(false, false, 2, 2, 0, 1, nil, 1, nil, 2, 0, c, 2)
	for i, v := range c {
		if v != 0 {
			t.Fatalf("k=0 beta=0: c[%d] = %v", i, v)
		}
	}
	d := []float64{1, 2, 3, 4}
	Dgemm(true, true, 2, 2, 0, 1, nil, 2, nil, 1, -0.5, d, 2)
	for i, v := range d {
		if v != -0.5*float64(i+1) {
			t.Fatalf("k=0 beta=-0.5: d[%d] = %v", i, v)
		}
	}
	for _, threads := range []int{1, 4} {
		p := NewPlan32(false, false, 0, 7, 7, threads)
		if p.Tasks() < 1 {
			t.Fatalf("Tasks() = %d", p.Tasks())
		}
		for i := 0; i < p.Tasks(); i++ {
			p.Run(i, 1, nil, 7, make([]float32, 49), 7, 0, nil, 7, nil)
		}
	}
}

// alpha == 0: A and B are not used (NaN there does not matter).
func TestAlphaZero(t *testing.T) {
	a := make([]float32, 40*50)
	for i := range a {
		a[i] = float32(math.NaN())
	}
	c := make([]float32, 40*40)
	for i := range c {
		c[i] = float32(i)
	}
	Sgemm(false, false, 40, 40, 50, 0, a, 50, a, 40, 2, c, 40)
	for i, v := range c {
		if v != 2*float32(i) {
			t.Fatalf("c[%d] = %v, want %v", i, v, 2*float32(i))
		}
	}
}

func testDeterminism[T float](t *testing.T, kern *kernel[T]) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sh := range []shape{{64, 256, 784}, {300, 301, 530}, {8, 1000, 100}, {257, 65, 33}, {1000, 9, 700},
		{1, 3000, 300}, {3000, 1, 300}, {1, 1, 5000}} {
		for _, tr := range [][2]bool{{false, false}, {true, true}} {
			x := newMats[T](rng, tr[0], tr[1], sh.m, sh.n, sh.k, 1, false)
			var ref []T
			for _, threads := range []int{1, 2, 3, 4, 7, 16} {
				c := append([]T(nil), x.c...)
				gemmWith(kern, tr[0], tr[1], sh.m, sh.n, sh.k, 0.5, x.a, x.lda, x.b, x.ldb, 0.25, c, x.ldc, threads)
				if ref == nil {
					ref = c
					continue
				}
				for i := range c {
					if math.Float64bits(float64(c[i])) != math.Float64bits(float64(ref[i])) {
						t.Fatalf("%s %v %v threads=%d: C[%d] = %v, with 1 thread %v",
							kern.name, sh, tr, threads, i, c[i], ref[i])
					}
				}
			}
		}
	}
}

func TestDeterminism(t *testing.T) {
	for _, k := range kernels32() {
		if raceEnabled && k != kern32 {
			continue
		}
		t.Run(k.name, func(t *testing.T) { testDeterminism(t, k) })
	}
	for _, k := range kernels64() {
		if raceEnabled && k != kern64 {
			continue
		}
		t.Run(k.name, func(t *testing.T) { testDeterminism(t, k) })
	}
}

// A column's value does not depend on the number of columns of the
// product (narrow edge kernels compute exactly what the wide ones do), nor
// a row's on the number of rows, outside tiny products (m·n·k <= smallWork,
// computed by plain loops) and matrix-vector products computed as dot
// products (n == 1).
func testWidthIndependence[T float](t *testing.T, kern *kernel[T]) {
	rng := rand.New(rand.NewPCG(9, 10))
	const m, k, nBig = 37, 300, 96
	x := newMats[T](rng, false, false, m, nBig, k, 0, false)
	ref := append([]T(nil), x.c...)
	gemmWith(kern, false, false, m, nBig, k, 1.5, x.a, x.lda, x.b, x.ldb, 0.5, ref, x.ldc, 1)
	for _, n := range []int{1, 3, 8, 9, 17, 33, 40, 65} {
		for _, mm := range []int{1, 5, m} {
			if mm*n*k <= smallWork || n == 1 {
				continue
			}
			c := append([]T(nil), x.c...) // C rows keep stride nBig
			gemmWith(kern, false, false, mm, n, k, 1.5, x.a, x.lda, x.b, x.ldb, 0.5, c, x.ldc, 1)
			for i := 0; i < mm; i++ {
				for j := 0; j < n; j++ {
					if c[i*nBig+j] != ref[i*nBig+j] {
						t.Fatalf("%s m=%d n=%d: C[%d,%d] = %v, in the %d×%d product %v",
							kern.name, mm, n, i, j, c[i*nBig+j], m, nBig, ref[i*nBig+j])
					}
				}
			}
		}
	}
}

func TestWidthIndependence(t *testing.T) {
	for _, k := range kernels32() {
		if raceEnabled && k != kern32 {
			continue
		}
		t.Run(k.name, func(t *testing.T) { testWidthIndependence(t, k) })
	}
	for _, k := range kernels64() {
		if raceEnabled && k != kern64 {
			continue
		}
		t.Run(k.name, func(t *testing.T) { testWidthIndependence(t, k) })
	}
}

// The Plan API with tasks on goroutines, each with its own workspace, in
// an order that differs from run to run.
func TestPlanConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sh := range []shape{{64, 256, 784}, {784, 256, 64}, {64, 10, 256}, {200, 300, 400}, {1, 3000, 400}, {3000, 1, 400}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}} {
			x := newMats[float32](rng, tr[0], tr[1], sh.m, sh.n, sh.k, 0, false)
			want := append([]float32(nil), x.c...)
			Sgemm(tr[0], tr[1], sh.m, sh.n, sh.k, 1, x.a, x.lda, x.b, x.ldb, 1, want, x.ldc)
			for _, threads := range []int{2, 4} {
				p := NewPlan32(tr[0], tr[1], sh.m, sh.n, sh.k, threads)
				if sh.m*sh.n*sh.k >= 1<<20 && p.Tasks() < threads {
					t.Errorf("%v threads=%d: only %d tasks", sh, threads, p.Tasks())
				}
				c := append([]float32(nil), x.c...)
				var wg sync.WaitGroup
				next := make(chan int, p.Tasks())
				for _, i := range rng.Perm(p.Tasks()) {
					next <- i
				}
				close(next)
				for w := 0; w < threads; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ws := make([]float32, p.WorkspaceFloats())
						for i := range next {
							p.Run(i, 1, x.a, x.lda, x.b, x.ldb, 1, c, x.ldc, ws)
						}
					}()
				}
				wg.Wait()
				for i := range c {
					if c[i] != want[i] {
						t.Fatalf("%v %v threads=%d: C[%d] = %v, want %v", sh, tr, threads, i, c[i], want[i])
					}
				}
			}
		}
	}
}

func TestRunAllocs(t *testing.T) {
	for _, sh := range []shape{{64, 256, 784}, {3, 3, 3}, {64, 10, 256}} {
		x := newMats[float32](rand.New(rand.NewPCG(1, 1)), false, true, sh.m, sh.n, sh.k, 0, false)
		p := NewPlan32(false, true, sh.m, sh.n, sh.k, 2)
		ws := make([]float32, p.WorkspaceFloats())
		allocs := testing.AllocsPerRun(5, func() {
			for i := 0; i < p.Tasks(); i++ {
				p.Run(i, 1, x.a, x.lda, x.b, x.ldb, 0, x.c, x.ldc, ws)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per run", sh, allocs)
		}
	}
}

// Workspaces at any alignment.
func TestWorkspaceAlignment(t *testing.T) {
	x := newMats[float64](rand.New(rand.NewPCG(1, 1)), false, false, 50, 70, 90, 0, false)
	p := NewPlan64(false, false, 50, 70, 90, 1)
	var want []float64
	for off := 0; off < 8; off++ {
		ws := make([]float64, p.WorkspaceFloats()+off)[off:]
		c := append([]float64(nil), x.c...)
		for i := 0; i < p.Tasks(); i++ {
			p.Run(i, 1, x.a, x.lda, x.b, x.ldb, 1, c, x.ldc, ws)
		}
		if want == nil {
			want = c
			x.check(t, "alignment", 1, 1, c)
		}
		for i := range c {
			if c[i] != want[i] {
				t.Fatalf("offset %d: C[%d] = %v, want %v", off, i, c[i], want[i])
			}
		}
	}
}

func TestTasks(t *testing.T) {
	for _, c := range []struct {
		m, n, k, threads, min int
	}{
		{64, 256, 784, 2, 2}, {784, 256, 64, 2, 2}, {2048, 2048, 2048, 2, 4},
		{2048, 2048, 2048, 16, 16}, {64, 256, 784, 1, 1}, {1, 1, 1, 8, 1},
	} {
		p := NewPlan32(false, false, c.m, c.n, c.k, c.threads)
		if p.Tasks() < c.min {
			t.Errorf("%d×%d×%d on %d threads: %d tasks, want at least %d", c.m, c.n, c.k, c.threads, p.Tasks(), c.min)
		}
		if c.threads == 1 && p.Tasks() != 1 {
			t.Errorf("%d×%d×%d on 1 thread: %d tasks", c.m, c.n, c.k, p.Tasks())
		}
	}
}

func TestPanics(t *testing.T) {
	mustPanic := func(what string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", what)
			}
		}()
		f()
	}
	a := make([]float32, 100)
	mustPanic("negative m", func() { NewPlan32(false, false, -1, 2, 2, 1) })
	mustPanic("short lda", func() { Sgemm(false, false, 10, 10, 10, 1, a, 9, a, 10, 0, a, 10) })
	mustPanic("short a", func() { Sgemm(false, false, 10, 10, 11, 1, a, 11, a, 10, 0, a, 10) })
	mustPanic("short c", func() { Sgemm(false, false, 12, 9, 9, 1, make([]float32, 108), 9, a, 9, 0, a, 9) })
	p := NewPlan32(false, false, 100, 100, 100, 1)
	mustPanic("short ws", func() {
		b := make([]float32, 10000)
		p.Run(0, 1, b, 100, b, 100, 0, make([]float32, 10000), 100, nil)
	})
	mustPanic("bad task", func() {
		b := make([]float32, 10000)
		p.Run(p.Tasks(), 1, b, 100, b, 100, 0, make([]float32, 10000), 100, make([]float32, p.WorkspaceFloats()))
	})
}

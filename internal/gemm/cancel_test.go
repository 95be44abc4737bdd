package gemm

import (
	"math"
	"sync/atomic"
	"testing"

	"github.com/loomgraph/loom/internal/stop"
)

// Cancellation (issue 12, defect 19): RunUntil checks its done channel
// between blocks of bounded work, stops at the first check after done is
// closed, and otherwise computes exactly what Run does.

// cancelCase is a product taking one of the plan's paths.
type cancelCase struct {
	name    string
	m, n, k int
	// per: the most multiply-adds (elements of C for k == 0) between two
	// checks that the path promises, with slack: a packed block of A
	// against a panel of B is at most mc·kc·nc (2^26 on AVX-512); the
	// matrix-vector paths and scale check every 2^20.
	per int
}

func cancelCases() []cancelCase {
	return []cancelCase{
		{"blocked", 1024, 1024, 1024, 1 << 26},
		{"m=1", 1, 8192, 1024, 1 << 21},
		{"n=1", 8192, 1, 1024, 1 << 21},
		{"k=0", 4096, 1024, 0, 1 << 21},
	}
}

// cancelFill returns n float32 values in [-1, 1) from a fixed sequence.
func cancelFill(n int) []float32 {
	v := make([]float32, n)
	x := uint32(12345)
	for i := range v {
		x = x*1664525 + 1013904223
		v[i] = float32(x>>8)/float32(1<<23) - 1
	}
	return v
}

// TestRunUntil: for each path, RunUntil with an open channel gives
// bit-identical results to Run and checks done at least once per `per` of
// its work (0 checks without checks in the loops); closing done at the
// middle check stops the task there: RunUntil reports false after at most
// one more check.
func TestRunUntil(t *testing.T) {
	var checks atomic.Int64
	var at atomic.Int64 // the check at which to close done (0: none)
	var done chan struct{}
	defer stop.SetHook(func() {
		if checks.Add(1) == at.Load() {
			close(done)
		}
	})()
	for _, c := range cancelCases() {
		t.Run(c.name, func(t *testing.T) {
			p := NewPlan32(false, false, c.m, c.n, c.k, 1)
			if p.Tasks() != 1 {
				t.Fatalf("%d tasks, want 1", p.Tasks())
			}
			a, b := cancelFill(c.m*c.k), cancelFill(c.k*c.n)
			ws := make([]float32, p.WorkspaceFloats())
			want, got := cancelFill(c.m*c.n), cancelFill(c.m*c.n)
			// beta 0.5: C is read (k == 0 scales it)
			p.Run(0, 1, a, max(1, c.k), b, c.n, 0.5, want, c.n, ws)

			done = make(chan struct{})
			checks.Store(0)
			at.Store(0)
			if !p.RunUntil(done, 0, 1, a, max(1, c.k), b, c.n, 0.5, got, c.n, ws) {
				t.Fatal("RunUntil stopped with done open")
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("C[%d] = %v, Run gives %v", i, got[i], want[i])
				}
			}
			n := checks.Load()
			work := max(c.m*c.n*c.k, c.m*c.n)
			if n < int64(work/c.per) {
				t.Errorf("%d checks, want at least %d (one per %d of %d)", n, work/c.per, c.per, work)
			}

			checks.Store(0)
			at.Store(n/2 + 1)
			if p.RunUntil(done, 0, 1, a, max(1, c.k), b, c.n, 0.5, got, c.n, ws) {
				t.Errorf("RunUntil ran to the end though done was closed at check %d of %d", n/2+1, n)
			}
			if after := checks.Load() - (n/2 + 1); after > 1 {
				t.Errorf("%d checks after done was closed", after)
			}
			t.Logf("%d checks for %d multiply-adds (or elements)", n, work)
		})
	}
}

// TestRunUntilClosed: with done already closed, a large task returns at
// its first check, leaving C untouched (the blocked path checks before its
// first block).
func TestRunUntilClosed(t *testing.T) {
	const m, n, k = 512, 512, 512
	p := NewPlan64(false, false, m, n, k, 1)
	a, b := make([]float64, m*k), make([]float64, k*n)
	c := make([]float64, m*n)
	for i := range c {
		c[i] = 7
	}
	done := make(chan struct{})
	close(done)
	if p.RunUntil(done, 0, 1, a, k, b, n, 0, c, n, make([]float64, p.WorkspaceFloats())) {
		t.Fatal("RunUntil ran with done closed")
	}
	for i, v := range c {
		if v != 7 {
			t.Fatalf("C[%d] = %v: written after done was closed", i, v)
		}
	}
}

package gosrc

import (
	"slices"
	"testing"

	"github.com/loomgraph/loom/tensor"
)

// TestSplitmix64: the first two outputs of the reference SplitMix64
// (Vigna's splitmix64.c, compiled with gcc) seeded with 0 are
// 0xe220a8397b1dcdaf and 0x6e789e6aa1b965f4; splitmix64(z) is its output
// from the state z.
func TestSplitmix64(t *testing.T) {
	if got := splitmix64(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("splitmix64(0) = %#x, want 0xe220a8397b1dcdaf", got)
	}
	if got := splitmix64(0x9e3779b97f4a7c15); got != 0x6e789e6aa1b965f4 {
		t.Errorf("splitmix64(0x9e3779b97f4a7c15) = %#x, want 0x6e789e6aa1b965f4", got)
	}
}

// rows returns the rows of a [batch, ctx] int32 tensor.
func rows(t *testing.T, x *tensor.Tensor, batch, ctx int) [][]int32 {
	t.Helper()
	v, err := tensor.Values[int32](x)
	if err != nil || len(v) != batch*ctx {
		t.Fatalf("%d int32 elements (%v), want %d", len(v), err, batch*ctx)
	}
	r := make([][]int32, batch)
	for i := range r {
		r[i] = slices.Clone(v[i*ctx : (i+1)*ctx])
	}
	return r
}

// TestBatcher: on data whose token i is i, a row of X must be
// data[s:s+ctx] for the s in its first element and the row of Y
// data[s+1:s+ctx+1]. The starts of seed 1, steps 0 to 2, are those that
// the hash in C (the reference splitmix64 of TestSplitmix64, applied as
// Fill applies it: h = sm(1 ^ sm(step<<20 | row)), start = h mod 191)
// computes for 200 tokens and ctx 8.
func TestBatcher(t *testing.T) {
	const batch, ctx = 4, 8
	data := make([]byte, 200)
	for i := range data {
		data[i] = byte(i)
	}
	b := NewBatcher(data, batch, ctx)
	for step, want := range [][]int32{{137, 164, 117, 47}, {15, 33, 54, 58}, {50, 120, 112, 69}} {
		b.Fill(1, step)
		x, y := rows(t, b.X, batch, ctx), rows(t, b.Y, batch, ctx)
		var starts []int32
		for i := range batch {
			s := x[i][0]
			starts = append(starts, s)
			for j := range ctx {
				if x[i][j] != s+int32(j) || y[i][j] != s+int32(j)+1 {
					t.Fatalf("step %d row %d: x %v, y %v; want the window of %d tokens from %d and the same shifted by one", step, i, x[i], y[i], ctx, s)
				}
			}
		}
		if !slices.Equal(starts, want) {
			t.Errorf("step %d: windows start at %v, want %v", step, starts, want)
		}
	}
}

// TestBatcherRepeat: a batch is a function of the seed and the step
// alone: filling step 5 again after other steps gives it again, so does
// a new Batcher, and other steps and seeds give other batches.
func TestBatcherRepeat(t *testing.T) {
	const batch, ctx = 16, 32
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(splitmix64(uint64(i)) % 97)
	}
	b := NewBatcher(data, batch, ctx)
	fill := func(seed uint64, step int) [][]int32 {
		b.Fill(seed, step)
		return append(rows(t, b.X, batch, ctx), rows(t, b.Y, batch, ctx)...)
	}
	first := fill(7, 5)
	for _, o := range []struct {
		seed uint64
		step int
	}{{7, 4}, {7, 6}, {8, 5}, {^uint64(7), 5}} {
		if slices.EqualFunc(fill(o.seed, o.step), first, slices.Equal) {
			t.Errorf("seed %d step %d gives the batch of seed 7 step 5", o.seed, o.step)
		}
	}
	if again := fill(7, 5); !slices.EqualFunc(again, first, slices.Equal) {
		t.Error("seed 7 step 5 gives another batch the second time")
	}
	other := NewBatcher(data, batch, ctx)
	other.Fill(7, 5)
	if !slices.EqualFunc(append(rows(t, other.X, batch, ctx), rows(t, other.Y, batch, ctx)...), first, slices.Equal) {
		t.Error("a new Batcher gives another batch for seed 7 step 5")
	}
}

// TestBatcherAllocs: Fill allocates nothing.
func TestBatcherAllocs(t *testing.T) {
	b := NewBatcher(make([]byte, 1000), 16, 32)
	step := 0
	if allocs := testing.AllocsPerRun(100, func() { b.Fill(1, step); step++ }); allocs != 0 {
		t.Errorf("%v allocations per Fill, want 0", allocs)
	}
}

// TestNewBatcherShort: data must hold a window of ctx+1 tokens with room
// to draw it (ctx+2); batch and ctx must be positive.
func TestNewBatcherShort(t *testing.T) {
	NewBatcher(make([]byte, 10), 1, 8)
	mustPanic(t, "NewBatcher of 9 tokens, ctx 8", func() { NewBatcher(make([]byte, 9), 1, 8) })
	mustPanic(t, "NewBatcher of batch 0", func() { NewBatcher(make([]byte, 10), 0, 8) })
	mustPanic(t, "NewBatcher of ctx 0", func() { NewBatcher(make([]byte, 10), 1, 0) })
}

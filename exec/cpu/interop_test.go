package cpu

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// wavesOf compiles outs on be and returns the program and its waves.
func wavesOf(t *testing.T, be *Backend, outs []*graph.Node) (*exec.Program, []wave) {
	t.Helper()
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := be.Lower(p.Plan()) // the same lowering as the Program's
	if err != nil {
		t.Fatal(err)
	}
	return p, ex.(*executable).waves
}

// TestWaves: five Exps of 16K float32, each estimated at 3.9 µs (8 FLOPs
// per element at 50 GFLOP/s plus 128 KB at 100 GB/s: grain.go), too small
// for a second worker, independent, and 19.7 µs together: one wave of
// five steps on two threads, none on one. A chain (each Exp reading the
// previous one's result) has no wave: every step reads its predecessor's
// bytes. The results are the same bits on one and two threads, and equal
// to the float64 reference rounded to float32 within an ulp or two.
func TestWaves(t *testing.T) {
	g := graph.New()
	var xs, outs []*graph.Node
	feeds := exec.Feeds{}
	for i := range 5 {
		x := g.Input(string(rune('a'+i)), tensor.Float32, 16, 1024)
		xs = append(xs, x)
		outs = append(outs, ops.Exp(x))
		feeds[x] = exectest.Rand(tensor.Float32, tensor.Shape{16, 1024}, -2, 2, uint64(i))
	}
	chain := ops.Exp(ops.Neg(ops.Exp(ops.Neg(ops.Exp(xs[0])))))
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	multi := func(ws []wave) (n int) {
		for _, w := range ws {
			if w.hi-w.lo > 1 {
				n++
			}
		}
		return n
	}
	var results [][]*tensor.Tensor
	for _, threads := range []int{1, 2} {
		be, err := New(Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		p, ws := wavesOf(t, be, outs)
		want := 0
		if threads > 1 {
			want = 1
		}
		if got := multi(ws); got != want || (want == 1 && len(ws) != 1) {
			t.Errorf("%d threads: waves %v, want %d of several steps", threads, ws, want)
		}
		got, err := p.Run(context.Background(), feeds)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, got)
		pc, wc := wavesOf(t, be, []*graph.Node{chain})
		if multi(wc) != 0 {
			t.Errorf("%d threads: a chain in waves %v", threads, wc)
		}
		p.Close()
		pc.Close()
		be.Close()
	}
	ref, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	for i := range outs {
		a, _ := tensor.Values[float32](results[0][i])
		b, _ := tensor.Values[float32](results[1][i])
		r, _ := tensor.Values[float32](ref[i])
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("output %d element %d: %v on one thread, %v on two", i, k, a[k], b[k])
			}
			if d := a[k] - r[k]; d > 2e-7*r[k] || -d > 2e-7*r[k] {
				t.Fatalf("output %d element %d: %v, reference %v", i, k, a[k], r[k])
			}
		}
	}
}

// TestWaveConflicts: the memory rule on hand-made accesses. Arena bytes
// [0,100) written by one step conflict with a step reading [50,60) and
// not with one reading [100,200); a variable's current value conflicts
// with a write of its next value (the same key); two outputs are two
// buffers; reads never conflict with reads.
func TestWaveConflicts(t *testing.T) {
	w := func(rs ...region) stepAccess { return stepAccess{writes: rs} }
	r := func(rs ...region) stepAccess { return stepAccess{reads: rs} }
	arena := func(lo, hi int64) region { return region{arenaKey, lo, hi} }
	v3 := region{regionKey{exec.InVar, 3}, 0, 16}
	for _, c := range []struct {
		name string
		a, b stepAccess
		want bool
	}{
		{"write/read overlap", w(arena(0, 100)), r(arena(50, 60)), true},
		{"write/read apart", w(arena(0, 100)), r(arena(100, 200)), false},
		{"read/write overlap", r(arena(0, 100)), w(arena(99, 200)), true},
		{"write/write", w(arena(0, 8)), w(arena(4, 12)), true},
		{"reads only", r(arena(0, 100)), r(arena(0, 100)), false},
		{"variable", r(v3), w(v3), true},
		{"other variable", r(v3), w(region{regionKey{exec.InVar, 4}, 0, 16}), false},
		{"outputs", w(region{regionKey{exec.InOutput, 0}, 0, 64}), w(region{regionKey{exec.InOutput, 1}, 0, 64}), false},
		{"arena and output", w(arena(0, 64)), w(region{regionKey{exec.InOutput, 0}, 0, 64}), false},
	} {
		if got := c.a.conflicts(c.b); got != c.want {
			t.Errorf("%s: conflicts %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRegionOf: where a plan's values live, for the rule above: feeds and
// constants are read-only (no region), outputs are their own buffers,
// and a step's result in the arena is its bytes there.
func TestRegionOf(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 4)
	y := ops.Exp(ops.Add(x, ops.Scalar(x, 1)))
	z := ops.Neg(ops.Tanh(y))
	be, err := New(Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	p, err := exec.Compile(be, []*graph.Node{z, y}, exec.DisablePasses("fuse"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	plan := p.Plan()
	for i, v := range plan.Values {
		r, ok := regionOf(plan, i)
		switch v.Storage {
		case exec.InInput, exec.InConst:
			if ok {
				t.Errorf("value %d (%v): a region %v", i, v.Storage, r)
			}
		case exec.InOutput:
			if !ok || r.key != (regionKey{exec.InOutput, v.Index}) || r.hi-r.lo != v.Bytes {
				t.Errorf("value %d (output %d): region %v", i, v.Index, r)
			}
		case exec.InArena:
			if v.Alias < 0 && (!ok || r.key != arenaKey || r.lo != v.Offset || r.hi != v.Offset+v.Bytes) {
				t.Errorf("value %d (arena at %d, %d bytes): region %v", i, v.Offset, v.Bytes, r)
			}
		}
	}
}

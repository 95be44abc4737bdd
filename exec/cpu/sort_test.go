package cpu_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// sortData draws n values of dt, a third from {±0, ±1, ±Inf, NaN} (floats)
// and the rest from a few dozen levels, so lines have many ties, NaNs and
// zeros of both signs on every path of the kernels (insertion, radix,
// heap).
func sortData(dt tensor.DType, shape tensor.Shape, seed uint64) *tensor.Tensor {
	r := rand.New(rand.NewPCG(seed, 99))
	vals := make([]float64, shape.Size())
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN()}
	for i := range vals {
		switch {
		case dt.IsFloat() && r.IntN(3) == 0:
			vals[i] = special[r.IntN(len(special))]
		case dt.IsFloat():
			vals[i] = float64(r.IntN(60)-30) * 0.37
		default:
			lo, hi := dt.IntRange()
			vals[i] = float64(max(lo, -1000) + r.Int64N(min(hi, 1000)-max(lo, -1000)+1))
			if r.IntN(2) == 0 {
				vals[i] = float64(r.IntN(5))
			}
		}
	}
	return exectest.Tensor(dt, vals, shape...)
}

// sameBits compares outputs exactly: equal values, the same sign of zero,
// NaN where NaN is wanted.
func sameBits(got, want *tensor.Tensor) error {
	g, w := got.Float64s(), want.Float64s()
	if len(g) != len(w) {
		return fmt.Errorf("%d elements, want %d", len(g), len(w))
	}
	for i := range g {
		if math.IsNaN(w[i]) != math.IsNaN(g[i]) || (!math.IsNaN(w[i]) && (g[i] != w[i] || math.Signbit(g[i]) != math.Signbit(w[i]))) {
			return fmt.Errorf("element %d: got %v, want %v", i, g[i], w[i])
		}
	}
	return nil
}

// TestSortAgainstReference runs Sort, ArgSort, TopK and SearchSorted on
// lines of every length class (insertion up to 48, radix beyond, TopK's
// heap when k*8 <= n) with many ties, NaN and -0, along the last and an
// outer axis, at 1 and 3 threads (a long line's TopK split in pieces), against exectest.Eval (the comparison
// sort of ops/sort.go's reference), bit for bit.
func TestSortAgainstReference(t *testing.T) {
	shapes := []struct {
		shape tensor.Shape
		axis  int
	}{
		{tensor.Shape{1}, 0}, {tensor.Shape{5, 2}, 1}, {tensor.Shape{3, 47}, 1}, {tensor.Shape{3, 48}, 1},
		{tensor.Shape{2, 49}, 1}, {tensor.Shape{200, 3}, 0}, {tensor.Shape{2, 3000}, 1}, {tensor.Shape{4, 260, 2}, 1},
		{tensor.Shape{1, 70000}, 1}, // TopK's heap split in two at 3 threads
	}
	dts := []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}
	for _, threads := range []int{1, 3} {
		if raceEnabled && threads == 1 {
			continue // one thread has no races to find; make test's -race run is long enough
		}
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		for _, dt := range dts {
			for si, s := range shapes {
				L := s.shape[s.axis]
				name := fmt.Sprintf("%d/%s/%v/axis%d", threads, dt.Short(), s.shape, s.axis)
				t.Run(name, func(t *testing.T) {
					g := graph.New()
					x := g.Input("x", dt, s.shape...)
					outs := []*graph.Node{ops.Sort(x, s.axis, false), ops.Sort(x, s.axis, true), ops.ArgSort(x, s.axis, false), ops.ArgSort(x, s.axis, true)}
					for _, k := range []int{1, max(1, L/8), L} {
						v, i := ops.TopK(x, k, s.axis, true)
						sv, si := ops.TopK(x, k, s.axis, false)
						outs = append(outs, v, i, sv, si)
					}
					sorted := ops.Sort(x, -1, false)
					outs = append(outs, ops.SearchSorted(sorted, x, false), ops.SearchSorted(sorted, x, true))
					if err := g.Err(); err != nil {
						t.Fatal(err)
					}
					feeds := exec.Feeds{x: sortData(dt, s.shape, uint64(si))}
					want, err := exectest.Eval(outs, feeds)
					if err != nil {
						t.Fatal(err)
					}
					p, err := exec.Compile(be, outs)
					if err != nil {
						t.Fatal(err)
					}
					defer p.Close()
					got, err := p.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					for i := range outs {
						if err := sameBits(got[i], want[i]); err != nil {
							t.Errorf("output %d (%s): %v", i, outs[i].Op(), err)
						}
					}
				})
			}
		}
	}
}

// TestSortEmpty: empty lines, k = 0 and empty values give empty results
// (and no kernel reads past its operands).
func TestSortEmpty(t *testing.T) {
	be, err := cpu.New(cpu.Threads(4))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1, 1<<17)
	e := g.Input("e", tensor.Float32, 3, 0)
	v, i := ops.TopK(x, 0, 1, true)
	ev, ei := ops.TopK(e, 0, 1, false)
	outs := []*graph.Node{v, i, ev, ei, ops.Sort(e, 1, false), ops.ArgSort(e, 0, true), ops.SearchSorted(e, g.Input("w", tensor.Float32, 3, 2), true)}
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{x: sortData(tensor.Float32, x.Shape(), 1), e: tensor.Zeros(tensor.Float32, 3, 0), outs[6].Input(1): exectest.Tensor(tensor.Float32, []float64{1, 2, 3, 4, 5, 6}, 3, 2)}
	got, err := p.Run(context.Background(), feeds)
	if err != nil {
		t.Fatal(err)
	}
	// SearchSorted in empty rows: every value goes at 0 (hand).
	if err := sameBits(got[6], exectest.Tensor(tensor.Int64, []float64{0, 0, 0, 0, 0, 0}, 3, 2)); err != nil {
		t.Error(err)
	}
	for k, o := range got[:6] {
		if o.Size() != 0 {
			t.Errorf("output %d: %v, want empty", k, o)
		}
	}
}

// TestSortAllocs: a run of the sorting kernels allocates nothing (their
// buffers are the parts' own, made when the kernel binds), with TopK's
// heap split across threads too.
func TestSortAllocs(t *testing.T) {
	be, err := cpu.New(cpu.Threads(2))
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g := graph.New()
	x := g.Input("x", tensor.Float32, 1, 1<<17)
	v, i := ops.TopK(x, 10, 1, true)
	outs := []*graph.Node{ops.Sort(x, 1, true), ops.ArgSort(x, 1, false), v, i, ops.SearchSorted(ops.Sort(x, 1, false), x, true)}
	p, err := exec.Compile(be, outs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	feeds := exec.Feeds{x: sortData(tensor.Float32, x.Shape(), 5)}
	res := make([]*tensor.Tensor, len(outs))
	for k, o := range outs {
		res[k] = tensor.Zeros(o.DType(), o.Shape()...)
	}
	ctx := context.Background()
	if err := p.RunInto(ctx, feeds, res); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() {
		if err := p.RunInto(ctx, feeds, res); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestParallelSortLine: a line of parSortMin+12345 elements (one line,
// so two threads sort it in parallel chunks) gives the same bits on one
// and two threads, and is the input sorted: for float32 with NaNs, ±0
// and ±Inf, against slices.SortStableFunc with NaN after every number
// (first when descending) and -0 equal to +0 in input order (Sort's
// rules, ops/sort.go), ascending and descending; for int64 and
// int8 (64-bit keys, 8 passes; many equal keys, passes skipped) against
// slices.Sort.
func TestParallelSortLine(t *testing.T) {
	n := parSortMin + 12345
	r := rand.New(rand.NewPCG(5, 6))
	f := make([]float32, n)
	for i := range f {
		switch r.IntN(50) {
		case 0:
			f[i] = float32(math.NaN())
		case 1:
			f[i] = float32(math.Copysign(0, -1))
		case 2:
			f[i] = 0
		case 3:
			f[i] = float32(math.Inf(2*r.IntN(2) - 1))
		default:
			f[i] = float32(r.NormFloat64() * 1e3)
		}
	}
	i64 := make([]int64, n)
	i8 := make([]int8, n)
	for i := range i64 {
		i64[i] = r.Int64() >> r.IntN(60)
		i8[i] = int8(r.IntN(256) - 128)
	}
	less := func(a, b float32) int { // NaN after every number; -0 == +0
		an, bn := a != a, b != b
		switch {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	wantF := slices.Clone(f)
	slices.SortStableFunc(wantF, less)
	wantI64, wantI8 := slices.Clone(i64), slices.Clone(i8)
	slices.Sort(wantI64)
	slices.Sort(wantI8)
	x32, _ := tensor.New(f, n)
	x64, _ := tensor.New(i64, n)
	x8, _ := tensor.New(i8, n)
	for _, c := range []struct {
		name string
		x    *tensor.Tensor
		desc bool
	}{{"float32", x32, false}, {"float32 descending", x32, true}, {"int64", x64, false}, {"int8", x8, false}} {
		var got []*tensor.Tensor
		for _, threads := range []int{1, 2} {
			be, err := New(Threads(threads))
			if err != nil {
				t.Fatal(err)
			}
			g := graph.New()
			in := g.Input("x", c.x.DType(), n)
			y := ops.Sort(in, 0, c.desc)
			p, err := exec.Compile(be, []*graph.Node{y})
			if err != nil {
				t.Fatal(err)
			}
			out, err := p.Run(context.Background(), exec.Feeds{in: c.x})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, out[0])
			p.Close()
			be.Close()
		}
		if !slices.Equal(got[0].Bytes(), got[1].Bytes()) {
			t.Errorf("%s: one and two threads differ", c.name)
		}
		switch c.x.DType() {
		case tensor.Float32:
			v, _ := tensor.Values[float32](got[1])
			want := wantF
			if c.desc {
				want = slices.Clone(f)
				slices.SortStableFunc(want, func(a, b float32) int { return -less(a, b) })
			}
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(want[i]) && !(v[i] != v[i] && want[i] != want[i]) {
					t.Fatalf("%s: element %d is %v, want %v", c.name, i, v[i], want[i])
				}
			}
		case tensor.Int64:
			v, _ := tensor.Values[int64](got[1])
			if !slices.Equal(v, wantI64) {
				t.Errorf("%s: not sorted", c.name)
			}
		case tensor.Int8:
			v, _ := tensor.Values[int8](got[1])
			if !slices.Equal(v, wantI8) {
				t.Errorf("%s: not sorted", c.name)
			}
		}
	}
}

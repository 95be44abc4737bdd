package cpu_test

import (
	"context"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestFusedPeriodicOperands: fused groups whose broadcast operands repeat
// over the domain (a per-channel [1, C, 1, 1] and a [C, 1, 1] over
// [N, C, H, W], and a row [W]: expanded once per run and read in place by
// every chunk), elementwise and with a trailing row and column
// reduction, over several chunks, against the float64 reference, with
// the same bits on 1 and 2 threads.
func TestFusedPeriodicOperands(t *testing.T) {
	s := []int{4, 6, 30, 30} // 21600 elements: 11 chunks; periods 5400 and 30
	g := graph.New()
	x := g.Input("x", tensor.Float32, s...)
	sc := g.Input("scale", tensor.Float32, 1, 6, 1, 1)
	sh := g.Input("shift", tensor.Float32, 6, 1, 1)
	row := g.Input("row", tensor.Float32, 30)
	y := ops.Add(ops.Mul(x, sc), sh)
	outs := []*graph.Node{
		ops.Add(ops.Relu(y), row),
		ops.Sum(ops.Mul(y, row), 3),
		ops.Sum(ops.Mul(x, sc), 0),
	}
	feeds := exec.Feeds{
		x:   exectest.Rand(tensor.Float32, s, -1, 1, 1),
		sc:  exectest.Rand(tensor.Float32, []int{1, 6, 1, 1}, -2, 2, 2),
		sh:  exectest.Rand(tensor.Float32, []int{6, 1, 1}, -1, 1, 3),
		row: exectest.Rand(tensor.Float32, []int{30}, -1, 1, 4),
	}
	want, err := exectest.Eval(outs, feeds)
	if err != nil {
		t.Fatal(err)
	}
	var first []*tensor.Tensor
	for _, threads := range []int{1, 2} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		p, err := exec.Compile(be, outs)
		if err != nil {
			t.Fatal(err)
		}
		for run := 0; run < 2; run++ { // the second run re-expands
			got, err := p.Run(context.Background(), feeds)
			if err != nil {
				t.Fatal(err)
			}
			for k := range outs {
				if err := exectest.Compare(got[k], want[k], 1e-5); err != nil {
					t.Errorf("%d threads, output %d: %v", threads, k, err)
				}
				if first == nil {
					continue
				}
				if err := exectest.Compare(got[k], first[k], 0); err != nil {
					t.Errorf("output %d: 2 threads differ from 1: %v", k, err)
				}
			}
			if first == nil && threads == 1 {
				first = got
			}
		}
		p.Close()
		be.Close()
	}
}

// TestElementwisePeriodicOperands: standalone elementwise ops (one op
// per program, so nothing fuses) with operands that repeat over the
// output (periodicElementwise: expanded once per run, the vector kernel
// over chunks), in either operand position and in float32, float64 and
// int32, over several chunks, against the float64 reference, with the
// same bits on 1 and 2 threads.
func TestElementwisePeriodicOperands(t *testing.T) {
	s := []int{4, 6, 30, 30}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32} {
		cases := []struct {
			name string
			a, b []int
			f    func(a, b *graph.Node) *graph.Node
		}{
			{"sub per-channel", s, []int{1, 6, 1, 1}, ops.Sub},
			{"add channel first", []int{6, 1, 1}, s, ops.Add},
			{"mul row", s, []int{30}, ops.Mul},
			{"max column", []int{30, 1}, s, ops.Maximum},
		}
		for ci, c := range cases {
			g := graph.New()
			a := g.Input("a", dt, c.a...)
			b := g.Input("b", dt, c.b...)
			outs := []*graph.Node{c.f(a, b)}
			feeds := exec.Feeds{
				a: exectest.Rand(dt, c.a, -50, 50, uint64(2*ci+1)),
				b: exectest.Rand(dt, c.b, -50, 50, uint64(2*ci+2)),
			}
			want, err := exectest.Eval(outs, feeds)
			if err != nil {
				t.Fatal(err)
			}
			var first *tensor.Tensor
			for _, threads := range []int{1, 2} {
				be, err := cpu.New(cpu.Threads(threads))
				if err != nil {
					t.Fatal(err)
				}
				p, err := exec.Compile(be, outs)
				if err != nil {
					t.Fatal(err)
				}
				for run := 0; run < 2; run++ {
					got, err := p.Run(context.Background(), feeds)
					if err != nil {
						t.Fatal(err)
					}
					if err := exectest.Compare(got[0], want[0], 1e-12); err != nil {
						t.Errorf("%s %v, %d threads: %v", c.name, dt, threads, err)
					}
					if first == nil {
						first = got[0]
					} else if err := exectest.Compare(got[0], first, 0); err != nil {
						t.Errorf("%s %v: runs or thread counts differ: %v", c.name, dt, err)
					}
				}
				p.Close()
				be.Close()
			}
		}
	}
}

package cpu_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/exec/exectest"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestIndexRunErrorNamesCallSite: an index out of range fed at run time
// fails Run with an error naming the op, the index and the line of this
// file that built the Gather.
func TestIndexRunErrorNamesCallSite(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	table := g.Input("table", tensor.Float32, 5, 2)
	ids := g.Input("ids", tensor.Int32, 3)
	y := ops.Gather(table, ids, 0) // the call site the error names
	prog, err := exec.Compile(be, []*graph.Node{y})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	feeds := exec.Feeds{table: tensor.Zeros(tensor.Float32, 5, 2), ids: exectest.Tensor(tensor.Int32, []float64{4, -6, 0}, 3)}
	_, err = prog.Run(context.Background(), feeds)
	if err == nil {
		t.Fatal("Run succeeded with index -6 for an axis of length 5")
	}
	if !errors.Is(err, exec.ErrIndexOutOfRange) {
		t.Errorf("%v does not wrap ErrIndexOutOfRange", err)
	}
	for _, want := range []string{"Gather", "index_test.go:29", "index -6 (element 1 of the indices)", "axis 0 of length 5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestIndexBuildErrorForConstIndices: indices held in a Const are checked
// when the graph is built.
func TestIndexBuildErrorForConstIndices(t *testing.T) {
	g := graph.New()
	x := g.Input("x", tensor.Float32, 3, 4)
	idx := g.Const(exectest.Tensor(tensor.Int64, []float64{0, 4}, 2))
	ops.Gather(x, idx, 1)
	err := g.Err()
	if err == nil || !strings.Contains(err.Error(), "index 4 (element 1 of the indices) is outside axis 1 of length 4") || !strings.Contains(err.Error(), "index_test.go:") {
		t.Errorf("Gather with a constant index 4 on an axis of 4: %v", err)
	}
}

// TestScatterAddThreadIndependent: the scatter-add of many rows into few,
// split across threads, gives bit-identical float32 results whatever the
// thread count (each destination element is added in index order): into
// 16 rows of 256 (split by inner chunks), into 2000 rows (split by
// destination ranges), and a 1-D SegmentSum into 7 (ranges of one row).
func TestScatterAddThreadIndependent(t *testing.T) {
	const n = 10000
	x := exectest.Rand(tensor.Float32, tensor.Shape{16, 256}, -1, 1, 3)
	src := exectest.Rand(tensor.Float32, tensor.Shape{n, 256}, -1, 1, 4)
	ids := exectest.Rand(tensor.Int64, tensor.Shape{n}, -16, 16, 5)
	big := exectest.Rand(tensor.Int32, tensor.Shape{n}, 0, 2000, 8)
	src1 := exectest.Rand(tensor.Float32, tensor.Shape{4 * n}, -1, 1, 6)
	ids1 := exectest.Rand(tensor.Int32, tensor.Shape{4 * n}, 0, 7, 7)
	var first []*tensor.Tensor
	for _, threads := range []int{1, 2, 3, 8} {
		be, err := cpu.New(cpu.Threads(threads))
		if err != nil {
			t.Fatal(err)
		}
		g := graph.New()
		xs, feeds := exectest.Inputs(g, x, ids, src, src1, ids1, big)
		outs := []*graph.Node{
			ops.IndexAdd(xs[0], xs[1], xs[2], 0),
			ops.SegmentSum(xs[3], xs[4], 7),
			ops.SegmentSum(xs[2], xs[5], 2000),
		}
		prog, err := exec.Compile(be, outs)
		if err != nil {
			t.Fatal(err)
		}
		got, err := prog.Run(context.Background(), feeds)
		prog.Close()
		be.Close()
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = got
			// Against the float64 reference: float32 sums of up to about
			// 5700 terms in [-1,1).
			want, err := exectest.Eval(outs, feeds)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if err := exectest.Compare(got[i], want[i], 1e-4); err != nil {
					t.Errorf("output %d against the reference: %v", i, err)
				}
			}
			continue
		}
		for i := range got {
			a, b := first[i].Float64s(), got[i].Float64s()
			for k := range a {
				if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
					t.Fatalf("%d threads: output %d element %d is %v, with 1 thread %v", threads, i, k, b[k], a[k])
				}
			}
		}
	}
}

// TestIndexCompileErrorWhenFolded: indices computed from constants are
// checked when constant folding evaluates the op (a compile error naming
// the op and where it was built).
func TestIndexCompileErrorWhenFolded(t *testing.T) {
	be, err := cpu.New()
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New()
	x := g.Const(exectest.Tensor(tensor.Float32, []float64{1, 2, 3}, 3))
	idx := ops.Add(g.Const(exectest.Tensor(tensor.Int32, []float64{0, 2}, 2)), g.Const(exectest.Tensor(tensor.Int32, []float64{1, 1}, 2)))
	y := ops.Gather(x, idx, 0) // index 3 once folded
	_, err = exec.Compile(be, []*graph.Node{y})
	if err == nil || !errors.Is(err, exec.ErrIndexOutOfRange) || !strings.Contains(err.Error(), "index 3 (element 1 of the indices)") || !strings.Contains(err.Error(), "index_test.go:") {
		t.Errorf("compiling a Gather of folded index 3 on an axis of 3: %v", err)
	}
}

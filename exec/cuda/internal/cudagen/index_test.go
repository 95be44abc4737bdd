package cudagen

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// TestIndexingLaunches pins the launches of the indexing ops (sizes by
// hand from the rules in index.go) and their index check.
func TestIndexingLaunches(t *testing.T) {
	g := graph.New()
	in := func(dt tensor.DType, shape ...int) *graph.Node {
		return g.Input(fmt.Sprintf("x%d", g.Len()), dt, shape...)
	}
	one := func(grid, block uint32, args string) launchWant {
		return launchWant{[3]uint32{grid, 1, 1}, [3]uint32{block, 1, 1}, 0, args}
	}
	table := in(tensor.Float32, 50000, 512)
	ids := in(tensor.Int64, 8192)
	// 8192*512 results, 256 per block: 16384 blocks capped at 32 per
	// multiprocessor (4224); then the one-thread search for a bad index.
	gather := ops.Gather(table, ids, 0)
	checkLaunches(t, gather, h100, 0, one(4224, 256, "[in0 in1 out status]"), one(1, 1, "[in1 status]"))
	// The copy of x (capped grid), then 512 lines × 264 destination
	// ranges (ceil(132*4*256 / 512)) = 135168 threads: 528 blocks.
	add := ops.IndexAdd(table, ids, in(tensor.Float32, 8192, 512), 0)
	checkLaunches(t, add, h100, 0, one(4224, 256, "[in0 out]"), one(528, 256, "[in1 in2 out status]"), one(1, 1, "[in1 status]"))
	// 7*300 = 2100 lines, fewer than 135168 threads: the axis of 5 is cut
	// into 5 ranges, 10500 threads (42 blocks); the copy of 10500
	// elements is 42 blocks too.
	sa := ops.ScatterAdd(in(tensor.Int16, 7, 5, 300), in(tensor.Int32, 7, 9, 300), in(tensor.Int16, 7, 9, 300), 1)
	checkLaunches(t, sa, h100, 0, one(42, 256, "[in0 out]"), one(42, 256, "[in1 in2 out status]"), one(1, 1, "[in1 status]"))
	// Empty: nothing to launch, nothing to check.
	empty := ops.Gather(table, in(tensor.Int32, 0), 0)
	checkLaunches(t, empty, h100, 0)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}

	k, err := Generate(gather, h100)
	if err != nil {
		t.Fatal(err)
	}
	if k.Check == nil || *k.Check != (IndexCheck{Op: "Gather", Axis: 0, Len: 50000}) {
		t.Fatalf("Gather's check: %+v", k.Check)
	}
	if err := k.Check.Err([]int64{0, 0, 0}); err != nil {
		t.Errorf("clear status: %v", err)
	}
	err = k.Check.Err([]int64{1, 17, -50001})
	if !errors.Is(err, opdef.ErrIndexOutOfRange) || !strings.Contains(err.Error(), "Gather: index out of range: index -50001 (element 17 of the indices) is outside axis 0 of length 50000") {
		t.Errorf("status {1, 17, -50001}: %v", err)
	}
	if k, err := Generate(empty, h100); err != nil || k.Check != nil {
		t.Errorf("empty Gather: %+v, %v", k, err)
	}
	if k, err := Generate(ops.Exp(table), h100); err != nil || k.Check != nil {
		t.Errorf("Exp has no index check: %+v, %v", k, err)
	}
}

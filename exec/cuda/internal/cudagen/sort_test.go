package cudagen

import (
	"strings"
	"testing"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// sortTestNodes builds TestSupports' nodes of the sorting ops in dtype dt
// (ok false for the other ops).
func sortTestNodes(op graph.Op, dt tensor.DType, in func(dt tensor.DType, shape ...int) *graph.Node) ([]*graph.Node, bool) {
	switch op {
	case ops.OpSort:
		return []*graph.Node{ops.Sort(in(dt, 2, 3), 1, false), ops.Sort(in(dt, 5000, 3), 0, true)}, true
	case ops.OpArgSort:
		return []*graph.Node{ops.ArgSort(in(dt, 2, 3), 0, true)}, true
	case ops.OpTopK:
		_, i := ops.TopK(in(dt, 2, 3), 2, 1, true)
		return []*graph.Node{i}, true
	case ops.OpSearchSorted:
		return []*graph.Node{ops.SearchSorted(in(dt, 2, 3), in(dt, 2, 4), true), ops.SearchSorted(in(dt, 3), in(dt, 4), false)}, true
	}
	return nil, false
}

// TestSortLaunches checks the sort's two shapes: a block per line in
// shared memory up to sortTile pairs, and the scratch passes beyond.
func TestSortLaunches(t *testing.T) {
	g := graph.New()
	short := ops.Sort(g.Input("a", tensor.Float32, 3, 1000), 1, false)
	k, err := Generate(short, h100)
	if err != nil {
		t.Fatal(err)
	}
	// One launch: 3 blocks of 256 threads, 1024 pairs of 12 bytes.
	if len(k.Launches) != 1 || k.Launches[0].Grid[0] != 3 || k.Launches[0].Block[0] != 256 || k.Launches[0].Shared != 1024*12 || k.ScratchBytes != 0 {
		t.Errorf("short lines: %+v, scratch %d", k.Launches, k.ScratchBytes)
	}
	long := ops.ArgSort(g.Input("b", tensor.Int64, 2, 5000), 1, true)
	if k, err = Generate(long, h100); err != nil {
		t.Fatal(err)
	}
	// P = 8192 = 4 tiles: encode, tile sort, stage 4096 (j = 2048, then
	// the tile), stage 8192 (j = 4096, 2048, then the tile), write.
	var names []string
	for _, l := range k.Launches {
		names = append(names, strings.Split(l.Func, "_")[2])
	}
	want := "encode tile step tile step step tile write"
	if got := strings.Join(names, " "); got != want || k.ScratchBytes != 2*8192*12 {
		t.Errorf("long lines: launches %q, want %q; scratch %d, want %d", got, want, k.ScratchBytes, 2*8192*12)
	}
}

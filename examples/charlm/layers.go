package main

import (
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// embed looks up the rows of table [V,D] for ids [B,T]: [B,T,D]
// (ops.Gather; its gradient scatter-adds into the table's rows).
func embed(table, ids *graph.Node) *graph.Node { return ops.Gather(table, ids, 0) }

// dropper hands every dropout site of a training step its own key,
// folded (ops.FoldIn) from one key Variable that advances once per Run
// (exec.AdvanceKey), so that every step draws fresh masks without host
// work; a nil dropper applies no dropout. The key Variable is saved with
// the checkpoints, so a resumed run draws the masks the uninterrupted run
// would have drawn.
type dropper struct {
	key   *graph.Node
	sites uint32
}

// newDropper creates the key Variable "dropout/key", seeded with seed.
func newDropper(g *graph.Graph, seed uint64) *dropper {
	return &dropper{key: g.Variable("dropout/key", ops.KeyTensor(seed))}
}

// advance is the option that moves the key on after every Run.
func (d *dropper) advance() []exec.Option { return []exec.Option{exec.AdvanceKey(d.key)} }

// apply is ops.Dropout with the next site's key.
func (d *dropper) apply(x *graph.Node, rate float64) *graph.Node {
	if d == nil || rate == 0 {
		return x
	}
	d.sites++
	return ops.Dropout(x, ops.FoldIn(d.key, d.sites), rate)
}

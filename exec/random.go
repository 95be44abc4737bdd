package exec

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// AdvanceKey updates the key Variable key (i32[2], made with
// g.Variable(name, ops.KeyTensor(seed))) to ops.NextKey(key) after every
// Run: Update(key, ops.NextKey(key)). Random ops that read key draw fresh
// values each Run (new dropout masks every training step) with no host
// work, and the sequence of keys, hence of values, is reproducible from
// the seed (a checkpoint saves the key with the other Variables).
func AdvanceKey(key *graph.Node) Option {
	return Update(key, ops.NextKey(key))
}

package bench

import (
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// charlmEmbed looks up the rows of table [V,D] for ids [B,T]: [B,T,D]
// (ops.Gather, as examples/charlm).
func charlmEmbed(table, ids *graph.Node) *graph.Node { return ops.Gather(table, ids, 0) }

// charlmDropper applies ops.Dropout at rate, with a key per site folded
// from one key Variable advanced once per Run (as examples/charlm).
type charlmDropper struct {
	key   *graph.Node
	rate  float64
	sites uint32
}

func newCharLMDropper(g *graph.Graph, seed uint64, rate float64) *charlmDropper {
	d := &charlmDropper{rate: rate}
	if rate > 0 {
		d.key = g.Variable("dropout/key", ops.KeyTensor(seed))
	}
	return d
}

func (d *charlmDropper) apply(x *graph.Node) *graph.Node {
	if d.rate == 0 {
		return x
	}
	d.sites++
	return ops.Dropout(x, ops.FoldIn(d.key, d.sites), d.rate)
}

func (d *charlmDropper) advance() []exec.Option {
	if d.key == nil {
		return nil
	}
	return []exec.Option{exec.AdvanceKey(d.key)}
}

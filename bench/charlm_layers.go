package bench

import (
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// charlmEmbed looks up the rows of table [V,D] for ids [B,T]: [B,T,D].
//
// Stand-in until ops.Gather lands: a one-hot matrix product, as
// examples/charlm does meanwhile.
func charlmEmbed(table, ids *graph.Node, vocab int) *graph.Node {
	B, T := ids.Shape()[0], ids.Shape()[1]
	oh := ops.Reshape(ops.OneHot(ids, vocab, table.DType()), B*T, vocab)
	return ops.Reshape(ops.MatMul(oh, table), B, T, table.Shape()[1])
}

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

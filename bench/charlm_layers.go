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

// charlmDropper applies dropout at rate with its own key per site.
//
// Stand-in until ops.Dropout lands: no dropout.
type charlmDropper struct {
	rate  float64
	sites uint32
}

func newCharLMDropper(g *graph.Graph, seed uint64, rate float64) *charlmDropper {
	return &charlmDropper{rate: rate}
}

func (d *charlmDropper) apply(x *graph.Node) *graph.Node { return x }

func (d *charlmDropper) advance() []exec.Option { return nil }

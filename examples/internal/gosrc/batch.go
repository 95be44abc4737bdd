package gosrc

import (
	"fmt"

	"github.com/loomgraph/loom/tensor"
)

// Batcher draws random windows of ctx+1 tokens from a split, batch of
// them per training step: the first ctx tokens of a window are a row of
// the inputs X, the last ctx (the same shifted by one) the row of the
// targets Y, the tokens that follow.
type Batcher struct {
	X, Y *tensor.Tensor // [batch, ctx] int32: the feeds, rewritten by Fill

	data       []byte
	batch, ctx int
	x, y       []int32 // the elements of X and Y
}

// NewBatcher returns a Batcher of [batch, ctx] windows of data (token
// ids, a Corpus's Train or Val). It panics unless batch and ctx are
// positive and data is at least ctx+2 tokens long.
func NewBatcher(data []byte, batch, ctx int) *Batcher {
	if batch < 1 || ctx < 1 || len(data) < ctx+2 {
		panic(fmt.Sprintf("gosrc: batches of %d windows of %d tokens from %d tokens", batch, ctx, len(data)))
	}
	b := &Batcher{data: data, batch: batch, ctx: ctx,
		X: tensor.Zeros(tensor.Int32, batch, ctx), Y: tensor.Zeros(tensor.Int32, batch, ctx)}
	b.x, _ = tensor.Values[int32](b.X)
	b.y, _ = tensor.Values[int32](b.Y)
	return b
}

// Fill writes the windows of training step step into X and Y. Where row
// i's window starts is a hash (splitmix64) of the seed, the step and i
// alone, not a generator's state, so a resumed run sees the batches that
// the uninterrupted run would have seen, and filling allocates nothing.
// The starts are the hash modulo len(data)-ctx-1, so the last window of
// data (starting at len(data)-ctx-1) is never drawn; and a batch must
// have fewer than 2^20 rows, or row i+2^20 of step s would be row i of
// step s+1.
func (b *Batcher) Fill(seed uint64, step int) {
	span := uint64(len(b.data) - b.ctx - 1)
	for i := 0; i < b.batch; i++ {
		h := splitmix64(seed ^ splitmix64(uint64(step)<<20|uint64(i)))
		start := int(h % span)
		w := b.data[start : start+b.ctx+1]
		for t := 0; t < b.ctx; t++ {
			b.x[i*b.ctx+t] = int32(w[t])
			b.y[i*b.ctx+t] = int32(w[t+1])
		}
	}
}

// splitmix64 is the output function of Steele, Lea and Flood's SplitMix64
// generator (the state advance included): a bijective mix of 64 bits.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

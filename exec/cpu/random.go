package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/scalar"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// prepareRandom fills the result of a random op (ops/random.go) from the
// Philox stream of its key: the loop runs over Philox blocks (4 words),
// each giving 4/w elements for an op of w words per element, so every
// element is computed from its own counter whatever the split into
// threads. The key is read when the kernel runs (it may be a Variable).
func prepareRandom(n *graph.Node) (*kernel, error) {
	at := n.Attr().(opdef.RandomAttr)
	size := n.Shape().Size()
	w := ops.RandomWords(n.Op(), n.DType())
	per := 4 / w
	blocks := (size + per - 1) / per
	s := at.Stream
	var fill func(out []byte, k [2]uint32, lo, hi int)
	switch op, dt := n.Op(), n.DType(); {
	case op == ops.OpRandomBits:
		fill = func(out []byte, k [2]uint32, lo, hi int) {
			dst := as[int32](out)
			randomBlocks(k, s, lo, hi, size, 4, func(i int, r *[4]uint32, j int) { dst[i] = int32(r[j]) })
		}
	case op == ops.OpRandomBernoulli:
		t := scalar.BernoulliThreshold(at.P)
		fill = func(out []byte, k [2]uint32, lo, hi int) {
			dst := as[uint8](out)
			randomBlocks(k, s, lo, hi, size, 4, func(i int, r *[4]uint32, j int) {
				var v uint8
				if uint64(r[j]) < t {
					v = 1
				}
				dst[i] = v
			})
		}
	case op == ops.OpRandomUniform && dt == tensor.Float32:
		fill = func(out []byte, k [2]uint32, lo, hi int) {
			dst := as[float32](out)
			randomBlocks(k, s, lo, hi, size, 4, func(i int, r *[4]uint32, j int) { dst[i] = scalar.Uniform32(r[j]) })
		}
	case op == ops.OpRandomUniform && dt == tensor.Float64:
		fill = func(out []byte, k [2]uint32, lo, hi int) {
			dst := as[float64](out)
			randomBlocks(k, s, lo, hi, size, 2, func(i int, r *[4]uint32, j int) { dst[i] = scalar.Uniform64(r[2*j], r[2*j+1]) })
		}
	case op == ops.OpRandomNormal && dt == tensor.Float32:
		fill = func(out []byte, k [2]uint32, lo, hi int) {
			dst := as[float32](out)
			randomBlocks(k, s, lo, hi, size, 2, func(i int, r *[4]uint32, j int) { dst[i] = scalar.Normal32(r[2*j], r[2*j+1]) })
		}
	case op == ops.OpRandomNormal && dt == tensor.Float64:
		fill = func(out []byte, k [2]uint32, lo, hi int) {
			dst := as[float64](out)
			randomBlocks(k, s, lo, hi, size, 1, func(i int, r *[4]uint32, _ int) { dst[i] = scalar.Normal64(r[0], r[1], r[2], r[3]) })
		}
	default:
		return nil, fmt.Errorf("no %v kernel for %v", n.Op(), n.DType())
	}
	// A block costs about as much as a few dozen elements of a cheap
	// elementwise op.
	grain := max(1, grainElems/32)
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			kb := as[int32](a.In(0))
			fill(a.Out(), [2]uint32{uint32(kb[0]), uint32(kb[1])}, lo, hi)
		})
		return func() {
			if blocks > 0 {
				l.Run(blocks, grain, max(grain, stepElems/32))
			}
		}
	}}, nil
}

// randomBlocks computes the Philox blocks [lo, hi) of stream s under key
// k and hands each of their per elements (below size) to set, with the
// element's index and its position j in the block.
func randomBlocks(k [2]uint32, s uint64, lo, hi, size, per int, set func(i int, r *[4]uint32, j int)) {
	for b := lo; b < hi; b++ {
		r := scalar.PhiloxBlock(k, s, uint64(b))
		i := b * per
		for j := 0; j < per && i+j < size; j++ {
			set(i+j, &r, j)
		}
	}
}

package cpu

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/scalar"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The random kernels' element maps (ops/random.go).
type randomMap uint8

const (
	mapBits randomMap = iota
	mapBernoulli
	mapUniform32
	mapUniform64
	mapNormal32
	mapNormal64
)

// randomChunk is the Philox blocks a kernel generates at a time, into a
// buffer on the stack, before mapping them to elements.
const randomChunk = 256

// prepareRandom fills the result of a random op (ops/random.go) from the
// Philox stream of its key: the loop runs over Philox blocks (4 words),
// each giving 4/w elements for an op of w words per element, so every
// element is computed from its own counter whatever the split into
// threads. Each part generates chunks of blocks (internal/scalar's
// PhiloxFill, two blocks at a time) and maps their words to elements in a
// plain loop. The key is read when the kernel runs (it may be a
// Variable).
func prepareRandom(n *graph.Node) (*kernel, error) {
	at := n.Attr().(opdef.RandomAttr)
	size := n.Shape().Size()
	w := ops.RandomWords(n.Op(), n.DType())
	per := 4 / w
	blocks := (size + per - 1) / per
	var m randomMap
	switch op, dt := n.Op(), n.DType(); {
	case op == ops.OpRandomBits:
		m = mapBits
	case op == ops.OpRandomBernoulli:
		m = mapBernoulli
	case op == ops.OpRandomUniform && dt == tensor.Float32:
		m = mapUniform32
	case op == ops.OpRandomUniform && dt == tensor.Float64:
		m = mapUniform64
	case op == ops.OpRandomNormal && dt == tensor.Float32:
		m = mapNormal32
	case op == ops.OpRandomNormal && dt == tensor.Float64:
		m = mapNormal64
	default:
		return nil, fmt.Errorf("no %v kernel for %v", n.Op(), n.DType())
	}
	t := scalar.BernoulliThreshold(at.P)
	// A block costs about as much as a few dozen elements of a cheap
	// elementwise op (a normal several times more).
	grain := max(1, grainElems/32)
	return &kernel{bind: func(a *args) func() {
		l := a.Loop(func(lo, hi, _ int) {
			kb := as[int32](a.In(0))
			k := [2]uint32{uint32(kb[0]), uint32(kb[1])}
			out := a.Out()
			var buf [4 * randomChunk]uint32
			for b := lo; b < hi; b += randomChunk {
				nb := min(randomChunk, hi-b)
				scalar.PhiloxFill(buf[:4*nb], k, at.Stream, uint64(b))
				base := b * per
				cnt := min(nb*per, size-base)
				mapWords(m, out, buf[:], base, cnt, t)
			}
		})
		return func() {
			if blocks > 0 {
				l.Run(blocks, grain, max(grain, stepElems/32))
			}
		}
	}}, nil
}

// mapWords writes elements base ... base+cnt-1 of out from the words of
// buf (the first of them at buf[0]).
func mapWords(m randomMap, out []byte, buf []uint32, base, cnt int, t uint64) {
	switch m {
	case mapBits:
		dst := as[int32](out)[base : base+cnt]
		for j := range dst {
			dst[j] = int32(buf[j])
		}
	case mapBernoulli:
		dst := as[uint8](out)[base : base+cnt]
		for j := range dst {
			var v uint8
			if uint64(buf[j]) < t {
				v = 1
			}
			dst[j] = v
		}
	case mapUniform32:
		dst := as[float32](out)[base : base+cnt]
		for j := range dst {
			dst[j] = scalar.Uniform32(buf[j])
		}
	case mapUniform64:
		dst := as[float64](out)[base : base+cnt]
		for j := range dst {
			dst[j] = scalar.Uniform64(buf[2*j], buf[2*j+1])
		}
	case mapNormal32:
		dst := as[float32](out)[base : base+cnt]
		for j := range dst {
			dst[j] = scalar.Normal32(buf[2*j], buf[2*j+1])
		}
	case mapNormal64:
		dst := as[float64](out)[base : base+cnt]
		for j := range dst {
			dst[j] = scalar.Normal64(buf[4*j], buf[4*j+1], buf[4*j+2], buf[4*j+3])
		}
	}
}

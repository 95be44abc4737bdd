package exectest

import (
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// randomCases are the cases of the random ops (ops/random.go) in every
// dtype they produce, Dropout, and Einsum's lowering. The key is fed (an
// Input), so the kernels run rather than constant folding. Expected
// values are Eval's, which computes the same Philox4x32-10 stream: the
// raw words (RandomBits, compared exactly as integers), the uniforms and
// Bernoulli draws are exact on every backend; the normals go through the
// backend's log and cos (within the suite's tolerance).
func randomCases() []Case {
	keyed := func(name string, seed uint64, f func(key *graph.Node) []*graph.Node) Case {
		return Case{Name: "random/" + name, Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			key := g.Input("key", tensor.Int32, 2)
			return f(key), exec.Feeds{key: ops.KeyTensor(seed)}
		}}
	}
	bits := func(key *graph.Node, shape ...int) *graph.Node {
		return ops.Apply(ops.OpRandomBits, opdef.RandomAttr{DType: tensor.Int32, Shape: shape}, key)
	}
	cs := []Case{
		{Name: "random/golden-philox", Source: "Random123's known-answer vector for Philox4x32-10, counter 0 and key 0 (Salmon et al., SC 2011): 6627e8d5 e169c58d bc57ac4c 9b00dbd8",
			Want: []*tensor.Tensor{Tensor(tensor.Int32, []float64{int32Bits(0x6627e8d5), int32Bits(0xe169c58d), int32Bits(0xbc57ac4c), int32Bits(0x9b00dbd8)}, 4)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				key := g.Input("key", tensor.Int32, 2)
				return []*graph.Node{bits(key, 4)}, exec.Feeds{key: ops.KeyTensor(0)}
			}},
		keyed("bits", 1, func(k *graph.Node) []*graph.Node {
			return []*graph.Node{bits(k, 3, 1001), bits(k, 1<<14+3), bits(k), bits(k, 0, 4), ops.NextKey(k), ops.FoldIn(k, 3), ops.FoldIn(ops.NextKey(k), 0xffffffff)}
		}),
		keyed("bernoulli", 2, func(k *graph.Node) []*graph.Node {
			return []*graph.Node{ops.RandomBernoulli(k, 0.3, 7, 129), ops.RandomBernoulli(k, 1, 5), ops.RandomBernoulli(k, 0, 5)}
		}),
	}
	for _, dt := range floatTypes {
		cs = append(cs,
			keyed("uniform/"+dt.Short(), 3, func(k *graph.Node) []*graph.Node {
				return []*graph.Node{ops.RandomUniform(k, dt, 5, 203), ops.RandomUniform(k, dt, 1<<13+1), ops.RandomUniform(k, dt)}
			}),
			keyed("normal/"+dt.Short(), 4, func(k *graph.Node) []*graph.Node {
				return []*graph.Node{ops.RandomNormal(k, dt, 5, 203), ops.RandomNormal(k, dt, 1<<13+1), ops.RandomNormal(ops.NextKey(k), dt, 3)}
			}),
			Case{Name: "random/dropout/" + dt.Short(), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				key := g.Input("key", tensor.Int32, 2)
				x := g.Input("x", dt, 33, 65)
				y := ops.Dropout(ops.Tanh(x), key, 0.4)
				return []*graph.Node{y, ops.Sum(ops.Mul(y, y))}, exec.Feeds{key: ops.KeyTensor(5), x: Rand(dt, tensor.Shape{33, 65}, -2, 2, 1401)}
			}},
		)
	}
	// Einsum's lowering (a composite of Diagonal, Sum, Transpose, Reshape
	// and MatMul or Mul) on every backend.
	for i, c := range []struct {
		eq     string
		shapes []tensor.Shape
	}{
		{"bhqd,bhkd->bhqk", []tensor.Shape{{2, 3, 5, 4}, {2, 3, 6, 4}}},
		{"bn,anm,bm->ba", []tensor.Shape{{2, 3}, {4, 3, 5}, {2, 5}}},
		{"iij,jk->ki", []tensor.Shape{{3, 3, 4}, {4, 2}}},
		{"...ij,...jk", []tensor.Shape{{2, 3, 4}, {4, 5}}},
	} {
		for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Int32} {
			cs = append(cs, Case{Name: fmt.Sprintf("einsum/%s/%s", c.eq, dt.Short()), Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				var ts []*tensor.Tensor
				for j, s := range c.shapes {
					ts = append(ts, Rand(dt, s, -3, 3, uint64(1500+10*i+j)))
				}
				xs, feeds := Inputs(g, ts...)
				return []*graph.Node{ops.Einsum(c.eq, xs...)}, feeds
			}})
		}
	}
	return cs
}

// int32Bits is the int32 value of the bits of a uint32 word, as a float64
// for Tensor.
func int32Bits(w uint32) float64 { return float64(int32(w)) }

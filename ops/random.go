package ops

import (
	"errors"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/internal/scalar"
	"github.com/loomgraph/loom/tensor"
)

// Random numbers in the graph, counter-based and stateless: Philox4x32-10
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011;
// the generator of JAX and of PyTorch's CUDA backend; internal/scalar
// holds it). A key is an Int32 node of shape [2] holding two uint32 words'
// bits (JAX's raw key layout). A random op's value is a function of its
// key and attribute alone: the stream word j is lane j%4 of the Philox
// block of counter (lo32(j/4), hi32(j/4), stream words), and element i of
// a result that takes w words per element reads words w·i ... w·i+w-1
// (w = 1 for bits, float32 uniforms and Bernoulli draws, 2 for float64
// uniforms and float32 normals, 4 for float64 normals). So the values do
// not depend on the thread count or the backend (the CPU and CUDA
// kernels give the same raw words, bit for bit), two random ops with the
// same key and attribute are the same values (the compiler may merge
// them), and fresh values come from a fresh key: NextKey, FoldIn, or a
// key Variable advanced by exec.AdvanceKey once per Run.

// Op codes of the random ops.
var OpRandomBits, OpRandomUniform, OpRandomNormal, OpRandomBernoulli graph.Op

// The streams (counter words 2 and 3): the values' and the derived keys'.
const (
	streamValues = 0
	streamNext   = 1 << 32
	streamFold   = 2 << 32 // | n
)

func init() {
	random := func(name, doc string, flops float64, ok func(a opdef.RandomAttr) error) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 1, Kind: opdef.Random, FLOPs: flops,
			DType: dtRandom(ok), Shape: shRandom, Ref: refRandom})
	}
	OpRandomBits = random("RandomBits", "the raw Philox4x32-10 stream of a key (i32[2]) as i32 bits (RandomAttr; NextKey and FoldIn)", 8,
		func(a opdef.RandomAttr) error {
			if a.DType != tensor.Int32 {
				return dtypeErr("the raw words are i32, not %v", a.DType)
			}
			return nil
		})
	OpRandomUniform = random("RandomUniform", "uniform values in [0, 1) from a key (i32[2]): 24 random bits for f32, 53 for f64 (RandomAttr)", 10,
		floatResult)
	OpRandomNormal = random("RandomNormal", "standard normal values from a key (i32[2]) by Box-Muller, computed in f64 (RandomAttr)", 40,
		floatResult)
	OpRandomBernoulli = random("RandomBernoulli", "bool values, true with probability p (to 2⁻³²), from a key (i32[2]) (RandomAttr)", 8,
		func(a opdef.RandomAttr) error {
			if a.DType != tensor.Bool {
				return dtypeErr("the result is bool, not %v", a.DType)
			}
			if !(a.P >= 0 && a.P <= 1) {
				return argErr("probability %v is not in [0, 1]", a.P)
			}
			return nil
		})
}

func floatResult(a opdef.RandomAttr) error {
	if a.DType != tensor.Float32 && a.DType != tensor.Float64 {
		return dtypeErr("dtype %v is not f32 or f64", a.DType)
	}
	return nil
}

// dtRandom checks the key's dtype and the attribute (ok checks its dtype
// and probability) and gives the attribute's dtype.
func dtRandom(ok func(a opdef.RandomAttr) error) opdef.DTypeRule {
	return func(in []tensor.DType, attr graph.Attr) (tensor.DType, error) {
		a, isAttr := attr.(opdef.RandomAttr)
		if !isAttr {
			return 0, argErr("needs an opdef.RandomAttr attribute, got %T", attr)
		}
		if in[0] != tensor.Int32 {
			return 0, dtypeErr("the key is %v; a key is i32[2] (ops.Key, ops.KeyTensor)", in[0])
		}
		if a.P != 0 && a.DType != tensor.Bool {
			return 0, argErr("a probability (%v) is only RandomBernoulli's", a.P)
		}
		if err := ok(a); err != nil {
			return 0, err
		}
		return a.DType, nil
	}
}

func shRandom(in []tensor.Shape, attr graph.Attr) (tensor.Shape, error) {
	a, ok := attr.(opdef.RandomAttr)
	if !ok {
		return nil, argErr("needs an opdef.RandomAttr attribute, got %T", attr)
	}
	if !in[0].Equal(tensor.Shape{2}) {
		return nil, shapeErr("the key has shape %v; a key is i32[2] (ops.Key, ops.KeyTensor)", in[0])
	}
	if err := validShape(a.Shape); err != nil {
		return nil, err
	}
	return a.Shape.Clone(), nil
}

// RandomWords is the number of stream words one element of op's result
// in dtype dt takes (1, 2 or 4).
func RandomWords(op graph.Op, dt tensor.DType) int {
	switch {
	case op == OpRandomUniform && dt == tensor.Float64, op == OpRandomNormal && dt == tensor.Float32:
		return 2
	case op == OpRandomNormal:
		return 4
	}
	return 1
}

// KeyWords returns the two words of a key's value (a tensor of i32[2]).
func keyWords(v *opdef.Value) [2]uint32 {
	return [2]uint32{uint32(v.I[0]), uint32(v.I[1])}
}

// refRandom is the random ops' reference: the stream, block by block,
// mapped to values as internal/scalar's functions say.
func refRandom(n *graph.Node, in []*opdef.Value) (*opdef.Value, error) {
	a := n.Attr().(opdef.RandomAttr)
	k := keyWords(in[0])
	out := opdef.NewValue(n.DType(), n.Shape())
	w := RandomWords(n.Op(), n.DType())
	words := make([]uint32, (out.Len()*w+3)/4*4)
	for b := 0; b < len(words)/4; b++ {
		blk := scalar.PhiloxBlock(k, a.Stream, uint64(b))
		copy(words[4*b:], blk[:])
	}
	t := scalar.BernoulliThreshold(a.P)
	for i := 0; i < out.Len(); i++ {
		x := words[w*i : w*i+w]
		switch {
		case n.Op() == OpRandomBits:
			out.I[i] = int64(int32(x[0]))
		case n.Op() == OpRandomBernoulli:
			out.F[i] = b2f(uint64(x[0]) < t)
		case n.Op() == OpRandomUniform && w == 1:
			out.F[i] = float64(scalar.Uniform32(x[0]))
		case n.Op() == OpRandomUniform:
			out.F[i] = scalar.Uniform64(x[0], x[1])
		case w == 2:
			out.F[i] = float64(scalar.Normal32(x[0], x[1]))
		default:
			out.F[i] = scalar.Normal64(x[0], x[1], x[2], x[3])
		}
	}
	return out, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ---- builders ----

// KeyTensor returns the key of seed as a tensor, i32[2] holding the
// high and the low 32 bits of seed (JAX's jax.random.PRNGKey(seed) raw
// layout), to initialise a key Variable:
// g.Variable("key", ops.KeyTensor(1)).
func KeyTensor(seed uint64) *tensor.Tensor {
	t, err := tensor.New([]int32{int32(uint32(seed >> 32)), int32(uint32(seed))}, 2)
	if err != nil {
		panic(err) // two int32s always make a tensor
	}
	return t
}

// Key returns the key of seed as a constant of g (see KeyTensor).
func Key(g *graph.Graph, seed uint64) *graph.Node {
	if bad := graphReady(g, "Key"); bad != nil {
		return bad
	}
	return g.Const(KeyTensor(seed))
}

// NextKey returns a new key derived from key (two words of a Philox
// stream of key that no random op's values use), so that the values drawn
// with it are independent of those drawn with key. As jax.random.split's
// first half; exec.AdvanceKey updates a key Variable with it.
func NextKey(key *graph.Node) *graph.Node {
	return Apply(OpRandomBits, opdef.RandomAttr{DType: tensor.Int32, Shape: tensor.Shape{2}, Stream: streamNext}, key)
}

// FoldIn returns the key derived from key and the number n
// (jax.random.fold_in): a different key for every n, and different from
// NextKey(key), so that per-layer or per-step keys come from one.
func FoldIn(key *graph.Node, n uint32) *graph.Node {
	return Apply(OpRandomBits, opdef.RandomAttr{DType: tensor.Int32, Shape: tensor.Shape{2}, Stream: streamFold | uint64(n)}, key)
}

// RandomUniform returns values of float dtype dt (Float32 or Float64)
// and the given shape drawn uniformly from [0, 1) with key: multiples of
// 2⁻²⁴ for Float32 and of 2⁻⁵³ for Float64 (jax.random.uniform,
// torch.rand). The same key gives the same values.
func RandomUniform(key *graph.Node, dt tensor.DType, shape ...int) *graph.Node {
	return randomOp("RandomUniform", OpRandomUniform, key, opdef.RandomAttr{DType: dt, Shape: tensor.Shape(shape)})
}

// RandomNormal returns standard normal values (mean 0, variance 1) of
// float dtype dt and the given shape drawn with key (jax.random.normal,
// torch.randn), by the Box-Muller transform √(-2 ln u₁)·cos(2π u₂) of
// two uniforms (u₁ in (0, 1], so the largest magnitude is √(2·24 ln 2) ≈
// 5.77 in Float32 and √(2·53 ln 2) ≈ 8.57 in Float64), computed in
// float64.
func RandomNormal(key *graph.Node, dt tensor.DType, shape ...int) *graph.Node {
	return randomOp("RandomNormal", OpRandomNormal, key, opdef.RandomAttr{DType: dt, Shape: tensor.Shape(shape)})
}

// RandomBernoulli returns Bool values of the given shape, each true with
// probability p (in [0, 1]; exactly floor(p·2³²)/2³²), drawn with key
// (jax.random.bernoulli).
func RandomBernoulli(key *graph.Node, p float64, shape ...int) *graph.Node {
	return randomOp("RandomBernoulli", OpRandomBernoulli, key, opdef.RandomAttr{DType: tensor.Bool, Shape: tensor.Shape(shape), P: p})
}

func randomOp(name string, op graph.Op, key *graph.Node, a opdef.RandomAttr) *graph.Node {
	if _, bad := graph.Operands(name, key); bad != nil {
		return bad
	}
	if err := graph.CheckType(a.DType, a.Shape); err != nil {
		return fail(errors.Unwrap(err), name, []*graph.Node{key}, "%v", err)
	}
	return Apply(op, a, key)
}

// Dropout zeroes each element of x with probability rate and scales the
// others by 1/(1-rate) (inverted dropout, torch.nn.functional.dropout in
// training mode), with the mask drawn by RandomBernoulli(key, 1-rate):
// Where(mask, x·scale, 0), so its gradient is the same mask times the
// scale. rate 0 returns x; rate 1 returns x·0 (zeros for finite x, as
// PyTorch). x is Float32 or Float64; rate must be in [0, 1]. Use a fresh
// key each step (exec.AdvanceKey) and a different one per layer (FoldIn).
func Dropout(x, key *graph.Node, rate float64) *graph.Node {
	if _, bad := graph.Operands("Dropout", x, key); bad != nil {
		return bad
	}
	if dt := x.DType(); dt != tensor.Float32 && dt != tensor.Float64 {
		return fail(graph.ErrDType, "Dropout", []*graph.Node{x, key}, "x is %v; dropout needs f32 or f64", dt)
	}
	if !(rate >= 0 && rate <= 1) {
		return fail(graph.ErrInvalid, "Dropout", []*graph.Node{x, key}, "rate %v is not in [0, 1]", rate)
	}
	if rate == 0 {
		return x
	}
	if rate == 1 {
		return Mul(x, Scalar(x, 0))
	}
	keep := randomOp("Dropout", OpRandomBernoulli, key, opdef.RandomAttr{DType: tensor.Bool, Shape: x.Shape(), P: 1 - rate})
	return Where(keep, Mul(x, Scalar(x, 1/(1-rate))), ZerosLike(x))
}

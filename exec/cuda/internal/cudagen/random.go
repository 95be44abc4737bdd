package cudagen

import (
	"fmt"
	"math"
	"strconv"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The random ops (ops/random.go): one thread per Philox4x32-10 block of
// the stream (counter (lo32(b), hi32(b), stream)), the ten rounds written
// out in C with 64-bit products for the high halves, each block giving 4/w
// elements of w words, mapped to values by the same arithmetic as
// internal/scalar's Uniform32, Uniform64, Normal32, Normal64 and
// BernoulliThreshold. The raw words are bit-identical to the CPU's; the
// normals go through the device's double log and cos (within an ulp or
// two of Go's), and the uniforms and Bernoulli draws are exact.

// Philox4x32-10's round multipliers and Weyl key increments (Salmon et
// al., SC 2011; internal/scalar's, which this package may not import).
const (
	philoxM0, philoxM1 = 0xD2511F53, 0xCD9E8D57
	philoxW0, philoxW1 = 0x9E3779B9, 0xBB67AE85
)

// bernoulliThreshold is internal/scalar's BernoulliThreshold: a word w
// is true when w < floor(p·2³²) (2³² for p = 1).
func bernoulliThreshold(p float64) uint64 {
	switch {
	case !(p > 0):
		return 0
	case p >= 1:
		return 1 << 32
	}
	return uint64(math.Floor(p * (1 << 32)))
}

// checkRandom admits the dtypes the random ops produce.
func checkRandom(n *graph.Node) error {
	switch op, dt := n.Op(), n.DType(); {
	case op == ops.OpRandomBits && dt == tensor.Int32,
		op == ops.OpRandomBernoulli && dt == tensor.Bool,
		(op == ops.OpRandomUniform || op == ops.OpRandomNormal) && (dt == tensor.Float32 || dt == tensor.Float64):
		return nil
	}
	return fmt.Errorf("no %v kernel for %v", n.Op(), n.DType())
}

// f64 is a float64 as a C literal that reads back to the same double.
func f64(x float64) string { return strconv.FormatFloat(x, 'e', -1, 64) }

func (g *gen) random(n *graph.Node) {
	a := n.Attr().(opdef.RandomAttr)
	size := int64(n.Shape().Size())
	if t := bernoulliThreshold(a.P); n.Op() == ops.OpRandomBernoulli && (t == 0 || t == 1<<32) {
		// p = 0 or 1: a constant (and no comparison of a word with 0,
		// which NVRTC warns is pointless)
		g.fillWith(tensor.Bool, size, map[bool]string{true: "1", false: "0"}[t != 0])
		return
	}
	w := int64(ops.RandomWords(n.Op(), n.DType()))
	per := 4 / w
	blocks := ceilDiv(size, per)
	ct := cType(n.DType())
	const two24, two53 = "5.9604644775390625e-08", "1.1102230246251565e-16" // 2⁻²⁴, 2⁻⁵³
	var c code
	c.gridStride("b", blocks)
	c.line("unsigned int k0 = (unsigned int)in0[0], k1 = (unsigned int)in0[1];")
	c.line("unsigned int c0 = (unsigned int)b, c1 = (unsigned int)((unsigned long long)b >> 32), c2 = %du, c3 = %du;", uint32(a.Stream), uint32(a.Stream>>32))
	c.line("for (int r = 0; r < 10; r++) {")
	c.line("if (r > 0) {")
	c.line("k0 += 0x%08Xu;", uint32(philoxW0))
	c.line("k1 += 0x%08Xu;", uint32(philoxW1))
	c.line("}")
	// 32x32 -> 64-bit products (mul.wide.u32 on the device).
	c.line("const unsigned long long p0 = (unsigned long long)0x%08Xu * c0;", uint32(philoxM0))
	c.line("const unsigned long long p1 = (unsigned long long)0x%08Xu * c2;", uint32(philoxM1))
	c.line("c0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0;")
	c.line("c1 = (unsigned int)p1;")
	c.line("c2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;")
	c.line("c3 = (unsigned int)p0;")
	c.line("}")
	c.line("const unsigned int wd[4] = {c0, c1, c2, c3};")
	c.line("for (int j = 0; j < %d; j++) {", per)
	c.line("const long long i = b * %s + j;", ll(per))
	c.line("if (i >= %s) break;", ll(size))
	switch op, dt := n.Op(), n.DType(); {
	case op == ops.OpRandomBits:
		c.line("out[i] = (int)wd[j];")
	case op == ops.OpRandomBernoulli:
		c.line("out[i] = (unsigned long long)wd[j] < %dULL ? 1 : 0;", bernoulliThreshold(a.P))
	case op == ops.OpRandomUniform && dt == tensor.Float32:
		c.line("out[i] = (float)(wd[j] >> 8) * %sf;", two24)
	case op == ops.OpRandomUniform:
		c.line("out[i] = (double)(((unsigned long long)wd[2 * j] << 21) | (unsigned long long)(wd[2 * j + 1] >> 11)) * %s;", two53)
	case dt == tensor.Float32:
		c.line("const double u1 = (double)((wd[2 * j] >> 8) + 1u) * %s;", two24)
		c.line("const double u2 = (double)(wd[2 * j + 1] >> 8) * %s;", two24)
		c.line("out[i] = (float)(sqrt(-2.0 * log(u1)) * cos(%s * u2));", f64(2*math.Pi))
	default:
		c.line("const double u1 = (double)((((unsigned long long)wd[0] << 21) | (unsigned long long)(wd[1] >> 11)) + 1ULL) * %s;", two53)
		c.line("const double u2 = (double)(((unsigned long long)wd[2] << 21) | (unsigned long long)(wd[3] >> 11)) * %s;", two53)
		c.line("out[i] = sqrt(-2.0 * log(u1)) * cos(%s * u2);", f64(2*math.Pi))
	}
	c.line("}")
	c.line("}")
	fn := g.function("random", "const int* __restrict__ in0, "+ct+"* __restrict__ out", c.String())
	bs := int64(g.t.block())
	g.launch(fn, g.gridFor(blocks, bs), [3]int{int(bs), 1, 1}, 0, Arg{Kind: In}, Arg{Kind: Out})
}

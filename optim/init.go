package optim

import (
	"fmt"
	"math"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/tensor"
)

// Rand is the deterministic generator of the initialisers: PCG-XSH-RR with
// 64-bit state and 32-bit output (O'Neill's pcg32), whose output for a
// seed is fixed by its definition, unlike math/rand's derived methods.
// Not safe for concurrent use. Create one with NewRand; the methods of a
// nil *Rand return 0 (and the initialisers refuse it).
type Rand struct {
	state, inc uint64
	spare      float64 // the second normal sample of the polar method
	hasSpare   bool
}

// NewRand returns a generator seeded with seed (on pcg32's stream 0x5eed).
func NewRand(seed uint64) *Rand { return newPCG(seed, 0x5eed) }

// newPCG is pcg32_srandom(initstate, initseq).
func newPCG(initstate, initseq uint64) *Rand {
	r := &Rand{inc: initseq<<1 | 1}
	r.Uint32()
	r.state += initstate
	r.Uint32()
	return r
}

// Uint32 returns the next 32 random bits.
func (r *Rand) Uint32() uint32 {
	if r == nil {
		return 0
	}
	old := r.state
	r.state = old*6364136223846793005 + r.inc
	xorshifted := uint32(((old >> 18) ^ old) >> 27)
	rot := uint32(old >> 59)
	return xorshifted>>rot | xorshifted<<((-rot)&31)
}

// Float64 returns a uniform float64 in [0, 1) with 53 random bits.
func (r *Rand) Float64() float64 {
	if r == nil {
		return 0
	}
	hi, lo := uint64(r.Uint32()), uint64(r.Uint32())
	return float64((hi<<32|lo)>>11) * (1.0 / (1 << 53))
}

// Normal returns a standard normal sample by Marsaglia's polar method. It
// uses only IEEE-exact operations (every product and quotient rounded
// explicitly, so no platform fuses them into FMAs), sqrt, and log2e, our
// own deterministic logarithm, so a seed gives the same samples
// everywhere.
func (r *Rand) Normal() float64 {
	if r == nil {
		return 0
	}
	if r.hasSpare {
		r.hasSpare = false
		return r.spare
	}
	for {
		u := float64(2*r.Float64()) - 1
		v := float64(2*r.Float64()) - 1
		s := float64(u*u) + float64(v*v)
		if s == 0 || s >= 1 {
			continue
		}
		f := math.Sqrt(float64(-2*detLog(s)) / s)
		r.spare, r.hasSpare = float64(v*f), true
		return float64(u * f)
	}
}

// detLog is the natural logarithm of x > 0 computed by range reduction
// (x = m 2^e with m in [1/√2, √2)) and the series
// log m = 2 atanh(u) = 2u (1 + u²/3 + u⁴/5 + ...), u = (m-1)/(m+1),
// with |u| < 0.172, evaluated by Horner's rule (12 terms reach full
// precision), plus e·ln2 with ln2 split in two (fdlibm's constants) so the
// product is exact. Every operation is rounded explicitly: the result
// depends only on IEEE arithmetic. It is within 2 ulp of math.Log.
func detLog(x float64) float64 {
	const ln2Hi, ln2Lo = 6.93147180369123816490e-01, 1.90821492927058770002e-10
	m, e := math.Frexp(x) // m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	u := float64(m-1) / float64(m+1)
	u2 := float64(u * u)
	p := 1.0 / 25
	for k := 23; k >= 1; k -= 2 {
		p = float64(p*u2) + 1/float64(k)
	}
	lm := float64(2 * float64(u*p))
	fe := float64(e)
	return float64(fe*ln2Hi) + (lm + float64(fe*ln2Lo))
}

// fill makes a tensor of dt and shape from next's values.
func fill(dt tensor.DType, shape []int, next func() float64) (*tensor.Tensor, error) {
	if !dt.IsFloat() {
		return nil, fmt.Errorf("optim: initialisers make float tensors, not %v", dt)
	}
	if err := graph.CheckType(dt, shape); err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	t, err := tensor.Make(dt, shape...)
	if err != nil {
		return nil, fmt.Errorf("optim: %w", err)
	}
	for i := 0; i < t.Size(); i++ {
		t.SetFloat64(i, next())
	}
	return t, nil
}

// Zeros returns a zero tensor (biases, optimiser state).
func Zeros(dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	return fill(dt, shape, func() float64 { return 0 })
}

// Uniform returns values drawn uniformly from [lo, hi): lo <= hi, both
// finite, with a finite width hi-lo (lo == hi gives lo everywhere).
func Uniform(r *Rand, lo, hi float64, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	if r == nil {
		return nil, fmt.Errorf("optim: Uniform: nil *Rand (use NewRand)")
	}
	if !(lo <= hi) || math.IsInf(hi-lo, 0) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, fmt.Errorf("optim: Uniform: need finite lo <= hi with a finite width, got lo %v and hi %v", lo, hi)
	}
	return fill(dt, shape, func() float64 { return lo + float64((hi-lo)*r.Float64()) })
}

// Normal returns values drawn from N(mean, std²): mean finite, std
// finite and non-negative.
func Normal(r *Rand, mean, std float64, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	if r == nil {
		return nil, fmt.Errorf("optim: Normal: nil *Rand (use NewRand)")
	}
	if math.IsNaN(mean) || math.IsInf(mean, 0) || !(std >= 0) || math.IsInf(std, 0) {
		return nil, fmt.Errorf("optim: Normal: need a finite mean and a finite std >= 0, got mean %v and std %v", mean, std)
	}
	return fill(dt, shape, func() float64 { return mean + float64(std*r.Normal()) })
}

// fans returns the fan-in and fan-out of a weight of the given shape, for
// loom's x·W convention: [fanIn, fanOut] for a matrix; for higher ranks
// the leading dimensions multiply both (a receptive field); for a vector
// both are its length. They are float64s, so that no product overflows; a
// fan of 0 means the weight has no elements.
func fans(dt tensor.DType, shape []int) (in, out float64, err error) {
	if len(shape) == 0 {
		return 0, 0, fmt.Errorf("optim: a scalar has no fan-in")
	}
	if err := graph.CheckType(dt, shape); err != nil {
		return 0, 0, fmt.Errorf("optim: %w", err)
	}
	if len(shape) == 1 {
		return float64(shape[0]), float64(shape[0]), nil
	}
	rf := 1.0
	for _, d := range shape[:len(shape)-2] {
		rf *= float64(d)
	}
	return float64(shape[len(shape)-2]) * rf, float64(shape[len(shape)-1]) * rf, nil
}

// scale is sqrt(k/fan), or 0 for a fan of 0 (a weight with no elements).
func scale(k, fan float64) float64 {
	if fan == 0 {
		return 0
	}
	return math.Sqrt(k / fan)
}

// GlorotUniform (Xavier) draws from U(-l, l) with l = sqrt(6/(fanIn+fanOut)).
func GlorotUniform(r *Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, out, err := fans(dt, shape)
	if err != nil {
		return nil, err
	}
	l := scale(6, in+out)
	return Uniform(r, -l, l, dt, shape...)
}

// GlorotNormal draws from N(0, 2/(fanIn+fanOut)).
func GlorotNormal(r *Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, out, err := fans(dt, shape)
	if err != nil {
		return nil, err
	}
	return Normal(r, 0, scale(2, in+out), dt, shape...)
}

// HeUniform (Kaiming, for ReLU layers) draws from U(-l, l) with
// l = sqrt(6/fanIn).
func HeUniform(r *Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, _, err := fans(dt, shape)
	if err != nil {
		return nil, err
	}
	l := scale(6, in)
	return Uniform(r, -l, l, dt, shape...)
}

// HeNormal draws from N(0, 2/fanIn).
func HeNormal(r *Rand, dt tensor.DType, shape ...int) (*tensor.Tensor, error) {
	in, _, err := fans(dt, shape)
	if err != nil {
		return nil, err
	}
	return Normal(r, 0, scale(2, in), dt, shape...)
}

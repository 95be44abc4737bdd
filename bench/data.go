package bench

import "math"

// mix is splitmix64's finaliser applied to seed and element index i.
func mix(seed uint64, i int) uint64 {
	z := seed*0xD1B54A32D192ED03 + uint64(i+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Uniform returns n float32 values in [lo, hi): element i is
// lo + (hi-lo)*u with u the top 24 bits of mix(seed, i) over 2^24, computed
// in float64 and rounded once to float32. torch_bench.py's uniform() gives
// the same bits.
func Uniform(seed uint64, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		u := float64(mix(seed, i)>>40) / (1 << 24)
		// The explicit conversion forbids fusing into an FMA, which numpy
		// would not do.
		out[i] = float32(float64((hi-lo)*u) + lo)
	}
	return out
}

// Classes returns n class indices in [0, k): ((mix>>40)*k)>>24.
func Classes(seed uint64, n, k int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = int(((mix(seed, i) >> 40) * uint64(k)) >> 24)
	}
	return out
}

// OneHot returns the [len(cls), k] one-hot matrix of cls.
func OneHot(cls []int, k int) []float32 {
	out := make([]float32, len(cls)*k)
	for i, c := range cls {
		out[i*k+c] = 1
	}
	return out
}

// initScale is the bound of the uniform initialisation of a layer with
// fan-in in inputs (PyTorch's nn.Linear default).
func initScale(in int) float64 { return 1 / math.Sqrt(float64(in)) }

package bench

import (
	"fmt"
	"math"
	"sort"
)

// CheckSpecs are the small cases on which every engine must agree with
// loom: both MLPs, the chains on [1,1024] and [4,1024], two matrix
// products, the cross-entropy, the small charlm, sort, top-k, the
// embedding, four small convolutions and the CNN step.
func CheckSpecs() []Spec {
	return []Spec{
		MLPSpec(64, 784, 256, 10),
		MLPSpec(256, 784, 1024, 1024, 10),
		ChainSpec(1<<10, false),
		ChainSpec(1<<10, true),
		ChainSpec(4<<10, false),
		ChainSpec(4<<10, true),
		MatMulSpec(64),
		MatMulSpec(256),
		XentSpec(256, 1000),
		CharLMCheckSpec(),
		SortSpec(4096),
		TopKSpec(4096, 100),
		EmbedSpec(1000, 64, 4096),
		// issue 15: a plain, a strided depthwise, a pointwise and a
		// grouped convolution, and the example CNN's training step.
		ConvSpec(2, 4, 6, 9, 3, 1, 1, 1),
		ConvSpec(2, 6, 6, 9, 3, 2, 1, 6),
		ConvSpec(2, 4, 8, 7, 1, 1, 0, 1),
		ConvSpec(2, 4, 6, 9, 3, 1, 1, 2),
		CNNSpec(8),
	}
}

// Diff is the agreement of one output of one workload between an engine
// and the reference engine.
type Diff struct {
	Workload, Engine, Output string
	// MaxRel is max|a-b| / max|b| over the output's elements, b the
	// reference (so a plain relative difference for a scalar).
	MaxRel float64
	// Ref is max|b|, for scale.
	Ref float64
}

// RelDiff returns max|a-b| / max|b| and max|b|.
func RelDiff(a, b []float64) (float64, float64, error) {
	if len(a) != len(b) {
		return 0, 0, fmt.Errorf("length %d, reference %d", len(a), len(b))
	}
	var d, m float64
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
			return math.Inf(1), 0, nil
		}
		d = math.Max(d, math.Abs(a[i]-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	if m == 0 {
		if d == 0 {
			return 0, 0, nil
		}
		return math.Inf(1), 0, nil
	}
	return d / m, m, nil
}

// Compare runs Check on s with a fresh instance of ref and of other and
// returns the difference of every output of ref (sorted by output name).
func Compare(ref, other Engine, s Spec) ([]Diff, error) {
	a, err := checkOf(ref, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", ref.Name(), s.Name, err)
	}
	b, err := checkOf(other, s)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", other.Name(), s.Name, err)
	}
	names := make([]string, 0, len(a))
	for k := range a {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Diff
	for _, k := range names {
		bv, ok := b[k]
		if !ok {
			return nil, fmt.Errorf("%s: %s: no output %q", other.Name(), s.Name, k)
		}
		rel, m, err := RelDiff(bv, a[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: output %q: %w", other.Name(), s.Name, k, err)
		}
		out = append(out, Diff{Workload: s.Name, Engine: other.Name(), Output: k, MaxRel: rel, Ref: m})
	}
	return out, nil
}

func checkOf(e Engine, s Spec) (map[string][]float64, error) {
	in, err := e.New(s)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	return in.Check()
}

package mnist

import "github.com/loomgraph/loom/optim"

// Shuffle permutes order in place (Fisher-Yates) with the seeded
// generator, so that a seed gives the same batches everywhere.
func Shuffle(r *optim.Rand, order []int) {
	for i := len(order) - 1; i > 0; i-- {
		j := int(uint64(r.Uint32()) * uint64(i+1) >> 32)
		order[i], order[j] = order[j], order[i]
	}
}

// Batch copies the examples idx of d into x (len(idx)×Pixels pixels) and
// y (len(idx) labels).
func (d *Dataset) Batch(idx []int, x []float32, y []int32) {
	for i, j := range idx {
		copy(x[i*Pixels:(i+1)*Pixels], d.X[j*Pixels:(j+1)*Pixels])
		y[i] = int32(d.Y[j])
	}
}

// EvalBatch is the evaluation batch size for d: the largest of 1000, 500,
// 250, 100, 50 and 10 that divides d.N (so every example is evaluated),
// else 1.
func (d *Dataset) EvalBatch() int {
	for _, b := range []int{1000, 500, 250, 100, 50, 10} {
		if d.N%b == 0 {
			return b
		}
	}
	return 1
}

package bench

import (
	"errors"
	"math"
	"runtime"
	"time"
)

// ErrUnavailable marks an engine that cannot run here (PyTorch not
// installed, ...): the runner prints "n/a" and the tests skip it.
var ErrUnavailable = errors.New("engine unavailable")

// Engine is one peer: loom, Gorgonia or PyTorch.
type Engine interface {
	Name() string
	// Version says which release runs (for the table header and JSON).
	Version() string
	// New builds the workload s, ready to run.
	New(s Spec) (Instance, error)
	Close() error
}

// Instance is one workload built by one engine.
type Instance interface {
	// Run performs iters iterations back to back and returns their wall
	// time and the heap allocations per iteration (NaN where the engine
	// cannot count them).
	Run(iters int) (time.Duration, float64, error)
	// Check runs the workload on a fresh instance (before any Run) and
	// returns its outputs by name, for comparison across engines:
	//
	//	mlp:    "loss": the losses of three successive steps (before any
	//	        update, after one, after two); "dW<l>", "db<l>": the change
	//	        of each parameter made by the first step (-LR × gradient).
	//	chain:  "out": the chain's output.
	//	matmul: "out": the product.
	//	xent:   "loss": the loss; "grad": its gradient with respect to the logits.
	//	charlm: "loss": the losses of three successive training steps.
	//	conv:   "out": the convolution; "dx", "dw": its gradients by the
	//	        input and the filter for the upstream gradient.
	//	cnn:    "loss": the losses of three successive training steps.
	//	sort:   "out": the sorted values.
	//	topk:   "values", "indices": the k largest and their indices.
	//
	// Outputs longer than CheckMax are subsampled.
	Check() (map[string][]float64, error)
	Close() error
}

// goRun times iters calls of step and counts the heap allocations they
// make (all goroutines', as testing.B does).
func goRun(iters int, step func() error) (time.Duration, float64, error) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for i := 0; i < iters; i++ {
		if err := step(); err != nil {
			return 0, math.NaN(), err
		}
	}
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return d, float64(after.Mallocs-before.Mallocs) / float64(iters), nil
}

// CheckMax is the number of elements a check output keeps at most: longer
// outputs are subsampled with a fixed stride (the same on every engine).
const CheckMax = 4096

// subsample returns v (float32) as float64, every stride-th element where
// stride = ceil(len/CheckMax).
func subsample(v []float32) []float64 {
	stride := (len(v) + CheckMax - 1) / CheckMax
	if stride < 1 {
		stride = 1
	}
	out := make([]float64, 0, (len(v)+stride-1)/stride)
	for i := 0; i < len(v); i += stride {
		out = append(out, float64(v[i]))
	}
	return out
}

// delta returns subsample(after - before).
func delta(after, before []float32) []float64 {
	d := make([]float32, len(after))
	for i := range d {
		d[i] = after[i] - before[i]
	}
	return subsample(d)
}

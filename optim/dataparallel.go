package optim

import (
	"fmt"
	"slices"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// DataParallel averages gradients over the ranks of a data-parallel job:
// every rank holds the same parameters and computes its loss on its own
// part of the batch (the mean over that part); the mean of the ranks'
// gradients is then the gradient of the whole batch's mean loss (for equal
// parts), and every rank applies the same update. The gradients are
// concatenated into buckets of at most BucketBytes, one AllReduce each,
// in the order the backward pass produces them (the last layers' first);
// the compiler runs each bucket's AllReduce as soon as its gradients are
// computed. The programs must be compiled with exec.WithCommunicator.
//
// The result is the same bits on every rank (an AllReduce gives every
// rank the same result), and from run to run as far as the
// communicator's reduction order is fixed (MPI's is, for a given number
// of ranks, message size and library configuration).
type DataParallel struct {
	// Size is the number of ranks (the communicator's Size).
	Size int
	// BucketBytes bounds a bucket (default 4 MiB). 0 < BucketBytes
	// smaller than one gradient puts each gradient in a bucket of its own.
	BucketBytes int64
	// AloneBytes: a gradient of at least this many bytes (default 256
	// KiB) is all-reduced by itself, where it lies, instead of being
	// copied into a bucket and back: buckets save the latency of many
	// small collectives, which a large one does not pay for. Negative:
	// every gradient goes into buckets.
	AloneBytes int64
}

const (
	defaultBucketBytes = 4 << 20
	defaultAloneBytes  = 256 << 10
)

// AllReduce returns grads averaged over the ranks, in grads' order.
// Gradients of different dtypes go into different buckets.
func (dp DataParallel) AllReduce(grads []*graph.Node) ([]*graph.Node, error) {
	if dp.Size < 1 {
		return nil, fmt.Errorf("optim: DataParallel: Size %d: the number of ranks must be at least 1", dp.Size)
	}
	if dp.BucketBytes < 0 {
		return nil, fmt.Errorf("optim: DataParallel: BucketBytes %d is negative", dp.BucketBytes)
	}
	limit := dp.BucketBytes
	if limit == 0 {
		limit = defaultBucketBytes
	}
	alone := dp.AloneBytes
	if alone == 0 {
		alone = defaultAloneBytes
	}
	for i, g := range grads {
		if g == nil {
			return nil, fmt.Errorf("optim: DataParallel: gradient %d is nil", i)
		}
		if err := g.Err(); err != nil {
			return nil, err
		}
		if !g.DType().IsFloat() && !g.DType().IsComplex() {
			return nil, fmt.Errorf("optim: DataParallel: gradient %d is %s: only float and complex gradients are averaged", i, g.Type())
		}
	}
	// Readiness order: the backward pass makes the last layers' gradients
	// first, and node IDs grow with creation, so the gradient built first
	// (the smallest ID) is ready first.
	order := make([]int, len(grads))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return grads[a].ID() - grads[b].ID() })
	out := make([]*graph.Node, len(grads))
	var bucket []int
	var bytes int64
	var dt tensor.DType
	flush := func() {
		if len(bucket) == 0 {
			return
		}
		dp.reduceBucket(grads, bucket, out)
		bucket, bytes = bucket[:0], 0
	}
	for _, i := range order {
		g := grads[i]
		b := int64(g.Shape().Size() * g.DType().Size())
		if alone > 0 && b >= alone {
			out[i] = dp.mean(g)
			continue
		}
		if len(bucket) > 0 && (g.DType() != dt || bytes+b > limit) {
			flush()
		}
		bucket = append(bucket, i)
		bytes += b
		dt = g.DType()
	}
	flush()
	for _, g := range out {
		if err := g.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reduceBucket concatenates the flattened gradients of bucket, averages
// them over the ranks, and cuts the result back into out.
func (dp DataParallel) reduceBucket(grads []*graph.Node, bucket []int, out []*graph.Node) {
	if len(bucket) == 1 {
		i := bucket[0]
		out[i] = dp.mean(grads[i])
		return
	}
	flat := make([]*graph.Node, len(bucket))
	for k, i := range bucket {
		flat[k] = ops.Reshape(grads[i], grads[i].Shape().Size())
	}
	sum := dp.mean(ops.Concat(0, flat...))
	at := 0
	for _, i := range bucket {
		n := grads[i].Shape().Size()
		out[i] = ops.Reshape(ops.Slice(sum, ops.Range{Start: at, Stop: at + n, Step: 1}), grads[i].Shape()...)
		at += n
	}
}

// mean is the mean of g over the ranks: a sum-AllReduce times 1/Size, an
// elementwise scaling that fusion merges into the optimiser's update
// (one rank: none at all).
func (dp DataParallel) mean(g *graph.Node) *graph.Node {
	s := ops.AllReduce(g, ops.ReduceSum, dp.Size)
	if dp.Size == 1 {
		return s
	}
	return ops.Mul(s, ops.Scalar(s, 1/float64(dp.Size)))
}

// MinimizeDataParallel is Minimize for one rank of a data-parallel job:
// the gradients of loss (this rank's part of the batch) are averaged over
// the ranks (dp) before opt applies them.
func MinimizeDataParallel(opt Optimizer, dp DataParallel, loss *graph.Node, params ...*graph.Node) ([]exec.Option, error) {
	if opt == nil {
		return nil, fmt.Errorf("optim: MinimizeDataParallel: nil Optimizer")
	}
	if len(params) == 0 {
		return nil, fmt.Errorf("optim: MinimizeDataParallel: no parameters")
	}
	grads := autodiff.Grad(loss, params...)
	if g := loss.Graph(); g != nil && g.Err() != nil {
		return nil, g.Err()
	}
	avg, err := dp.AllReduce(grads)
	if err != nil {
		return nil, err
	}
	return opt.Apply(params, avg)
}

// Package dist is what loom's collective ops (ops.AllReduce, AllGather,
// ReduceScatter, Broadcast) run on: a Communicator, a group of processes
// (ranks) that exchange host memory through an engine the field already
// trusts: MPI (package dist/mpi, Open MPI's libmpi loaded at run time
// without cgo) for CPU processes. A Program gets its Communicator at
// Compile (exec.WithCommunicator). Local is the one-process group.
//
// Every collective takes the context of the Run that calls it: a
// deadline or a cancellation ends the wait with an error (wrapping
// ErrTimeout or the context's error) instead of hanging on a rank that
// died or hangs. After such an error the group is broken: its ranks must
// not call another collective on it.
package dist

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/loomgraph/loom/tensor"
)

// ReduceOp is the reduction of AllReduce and ReduceScatter.
type ReduceOp int

const (
	Sum ReduceOp = iota
	Max
	Min
)

func (o ReduceOp) String() string {
	switch o {
	case Sum:
		return "sum"
	case Max:
		return "max"
	case Min:
		return "min"
	}
	return fmt.Sprintf("ReduceOp(%d)", int(o))
}

// Communicator is a group of ranks. Its collectives are called by every
// rank in the same order with buffers of the same sizes; each blocks
// until the rank's part is done. Buffers are host memory holding
// elements of dt, contiguous. Implementations are safe for use by one
// goroutine at a time per group (the executors serialise their calls).
type Communicator interface {
	// Name is the engine ("mpi", "local").
	Name() string
	// Rank is this process's number in the group, 0 <= Rank < Size.
	Rank() int
	// Size is the number of ranks.
	Size() int
	// AllReduce reduces buf elementwise over the ranks, in place: every
	// rank gets the same bits.
	AllReduce(ctx context.Context, buf []byte, dt tensor.DType, op ReduceOp) error
	// AllGather concatenates every rank's send, in rank order, into
	// recv (Size times len(send) bytes).
	AllGather(ctx context.Context, send, recv []byte) error
	// ReduceScatter reduces send (Size equal blocks) elementwise over the
	// ranks and leaves block Rank of the result in recv.
	ReduceScatter(ctx context.Context, send, recv []byte, dt tensor.DType, op ReduceOp) error
	// Broadcast copies root's buf into every rank's buf.
	Broadcast(ctx context.Context, buf []byte, root int) error
	// Barrier returns when every rank has called it.
	Barrier(ctx context.Context) error
}

// ErrTimeout is wrapped by the error of a collective that did not
// complete in time (a rank died, hangs, or called another collective).
var ErrTimeout = errors.New("dist: collective timed out")

// ErrMismatch is wrapped by the error of ranks that compiled different
// programs (their graph fingerprints differ at the first collective).
var ErrMismatch = errors.New("dist: ranks run different programs")

// Local is the group of one rank: every collective is a copy (or
// nothing). A graph with collectives compiled with it runs as the
// one-process case of the same program.
type Local struct{}

func (Local) Name() string { return "local" }
func (Local) Rank() int    { return 0 }
func (Local) Size() int    { return 1 }

func (Local) AllReduce(ctx context.Context, buf []byte, dt tensor.DType, op ReduceOp) error {
	return ctx.Err()
}

func (Local) AllGather(ctx context.Context, send, recv []byte) error {
	if len(recv) != len(send) {
		return fmt.Errorf("dist: AllGather: %d bytes received for %d sent by 1 rank", len(recv), len(send))
	}
	copy(recv, send)
	return ctx.Err()
}

func (Local) ReduceScatter(ctx context.Context, send, recv []byte, dt tensor.DType, op ReduceOp) error {
	if len(recv) != len(send) {
		return fmt.Errorf("dist: ReduceScatter: %d bytes received for %d sent by 1 rank", len(recv), len(send))
	}
	copy(recv, send)
	return ctx.Err()
}

func (Local) Broadcast(ctx context.Context, buf []byte, root int) error {
	if root != 0 {
		return fmt.Errorf("dist: Broadcast: root %d of a group of 1", root)
	}
	return ctx.Err()
}

func (Local) Barrier(ctx context.Context) error { return ctx.Err() }

// ParseTimeout reads a collective timeout as $LOOM_DIST_TIMEOUT gives it:
// seconds ("90", "0.5") or a Go duration ("5m", "300ms"), positive.
func ParseTimeout(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f <= 0 {
			return 0, errors.New("not positive")
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = errors.New("not positive")
	}
	return d, err
}

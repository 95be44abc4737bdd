// Package collective runs a collective op (ops/collective.go) on host
// memory with a communicator: the code both backends share (the CPU calls
// it on its arena; CUDA on page-locked staging copies of the operand and
// result).
package collective

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Plan is a collective node's layout, computed once.
type Plan struct {
	n            *graph.Node
	a            opdef.CollectiveAttr
	dt           tensor.DType
	outer, inner int // elements before the axis; bytes of one slice from the axis on
	reduce       dist.ReduceOp
	packed       bool
}

// New plans node n, a collective op.
func New(n *graph.Node) (*Plan, error) {
	a, ok := n.Attr().(opdef.CollectiveAttr)
	if !ok {
		return nil, fmt.Errorf("%s is not a collective op", n.Op())
	}
	p := &Plan{n: n, a: a, dt: n.DType()}
	es := p.dt.Size()
	x := n.Input(0).Shape()
	p.outer, p.inner = 1, x.Size()*es
	if (n.Op() == ops.OpAllGather || n.Op() == ops.OpReduceScatter) && a.Axis > 0 {
		p.outer = x[:a.Axis].Size()
		p.inner = x[a.Axis:].Size() * es
	}
	p.reduce = dist.Sum
	switch a.Reduce {
	case ops.ReduceMax:
		p.reduce = dist.Max
	case ops.ReduceMin:
		p.reduce = dist.Min
	}
	p.packed = p.outer > 1 && a.Size > 1
	return p, nil
}

// Scratch is the bytes of scratch memory Run needs.
func (p *Plan) Scratch() int {
	if p.packed {
		return p.a.Size * p.outer * p.inner
	}
	return 0
}

// Run computes the op: in is the operand's bytes, out the result's,
// scratch Scratch() bytes. The error names the op, the ranks and the
// engine.
func (p *Plan) Run(ctx context.Context, comm dist.Communicator, in, out, scratch []byte) error {
	if comm == nil {
		return fmt.Errorf("no communicator: compile with exec.WithCommunicator")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	n, a := p.n, p.a
	outer, inner := p.outer, p.inner
	var err error
	switch n.Op() {
	case ops.OpAllReduce, ops.OpReduce:
		copyIn(out, in)
		err = comm.AllReduce(ctx, out, p.dt, p.reduce)
		if err == nil && n.Op() == ops.OpReduce && comm.Rank() != a.Root {
			clear(out)
		}
	case ops.OpBroadcast:
		copyIn(out, in)
		err = comm.Broadcast(ctx, out, a.Root)
	case ops.OpAllGather:
		if !p.packed {
			err = comm.AllGather(ctx, in, out)
			break
		}
		recv := scratch[:len(out)]
		if err = comm.AllGather(ctx, in, recv); err == nil {
			// recv is [rank][outer][inner]; out is [outer][rank][inner].
			for r := 0; r < a.Size; r++ {
				for o := 0; o < outer; o++ {
					copy(out[(o*a.Size+r)*inner:][:inner], recv[(r*outer+o)*inner:][:inner])
				}
			}
		}
	case ops.OpReduceScatter:
		send := in
		if p.packed {
			// in is [outer][rank][chunk]; send is [rank][outer][chunk].
			chunk := inner / a.Size
			send = scratch[:len(in)]
			for r := 0; r < a.Size; r++ {
				for o := 0; o < outer; o++ {
					copy(send[(r*outer+o)*chunk:][:chunk], in[o*inner+r*chunk:][:chunk])
				}
			}
		}
		err = comm.ReduceScatter(ctx, send, out, p.dt, p.reduce)
	}
	if err != nil {
		return fmt.Errorf("%s over %d ranks (rank %d, %s): %w", n.Op(), comm.Size(), comm.Rank(), comm.Name(), err)
	}
	if a.Reduce == ops.ReduceMean && n.Op() != ops.OpAllGather && n.Op() != ops.OpBroadcast {
		divide(out, p.dt, float64(comm.Size()))
	}
	return nil
}

// copyIn copies the operand into the result, unless the memory plan put
// the result over the operand (in place).
func copyIn(out, in []byte) {
	if len(in) > 0 && &out[0] == &in[0] {
		return
	}
	copy(out, in)
}

// divide divides the elements of b (a float or complex dtype) by d.
func divide(b []byte, dt tensor.DType, d float64) {
	switch dt {
	case tensor.Float32, tensor.Complex64: // complex64: its float32 parts
		xs := tensor.View[float32](b)
		for i, v := range xs {
			xs[i] = v / float32(d)
		}
	case tensor.Float64, tensor.Complex128:
		xs := tensor.View[float64](b)
		for i, v := range xs {
			xs[i] = v / d
		}
	}
}

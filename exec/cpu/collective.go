package cpu

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The collective ops (ops/collective.go) call the Program's communicator
// (Plan.Comm) on host memory: the operand is copied into the result (or
// packed into scratch, for an axis other than the first), the
// communicator combines it in place over the ranks, and a mean is divided
// by the ranks after the sum. A collective step runs alone, never in a
// wave (interop.go), so every rank calls its communicator in plan order.
func prepareCollective(n *graph.Node) (*kernel, error) {
	a := n.Attr().(opdef.CollectiveAttr)
	dt := n.DType()
	es := dt.Size()
	x := n.Input(0).Shape()
	// outer: the elements before the axis; inner: the bytes of one
	// operand slice from the axis on.
	outer, inner := 1, x.Size()*es
	if (n.Op() == ops.OpAllGather || n.Op() == ops.OpReduceScatter) && a.Axis > 0 {
		outer = x[:a.Axis].Size()
		inner = x[a.Axis:].Size() * es
	}
	reduce := dist.Sum
	switch a.Reduce {
	case ops.ReduceMax:
		reduce = dist.Max
	case ops.ReduceMin:
		reduce = dist.Min
	}
	k := &kernel{alone: true}
	packed := outer > 1 && a.Size > 1
	if packed {
		k.scratch = a.Size * outer * inner
	}
	k.bind = func(args *args) func() {
		return func() {
			comm := args.inst.exe.plan.Comm
			if comm == nil {
				args.Fail(fmt.Errorf("no communicator: compile with exec.WithCommunicator"))
				return
			}
			ctx := args.inst.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			in, out := args.In(0), args.Out()
			var err error
			switch n.Op() {
			case ops.OpAllReduce, ops.OpReduce:
				copy(out, in)
				err = comm.AllReduce(ctx, out, dt, reduce)
				if err == nil && n.Op() == ops.OpReduce && comm.Rank() != a.Root {
					clear(out)
				}
			case ops.OpBroadcast:
				copy(out, in)
				err = comm.Broadcast(ctx, out, a.Root)
			case ops.OpAllGather:
				if !packed {
					err = comm.AllGather(ctx, in, out)
					break
				}
				recv := args.scratch[:len(out)]
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
				if packed {
					// in is [outer][rank][chunk]; send is [rank][outer][chunk].
					chunk := inner / a.Size
					send = args.scratch[:len(in)]
					for r := 0; r < a.Size; r++ {
						for o := 0; o < outer; o++ {
							copy(send[(r*outer+o)*chunk:][:chunk], in[o*inner+r*chunk:][:chunk])
						}
					}
				}
				err = comm.ReduceScatter(ctx, send, out, dt, reduce)
			}
			if err != nil {
				args.Fail(fmt.Errorf("%s over %d ranks (rank %d, %s): %w", n.Op(), comm.Size(), comm.Rank(), comm.Name(), err))
				return
			}
			if a.Reduce == ops.ReduceMean && n.Op() != ops.OpAllGather && n.Op() != ops.OpBroadcast {
				divide(out, dt, float64(comm.Size()))
			}
		}
	}
	return k, nil
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

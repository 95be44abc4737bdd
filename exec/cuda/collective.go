//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/loomgraph/loom/dist"
	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/collective"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// collStep runs a collective op (ops/collective.go) in one of two ways.
//
// With an *NCCL communicator of this backend (NewNCCL) and a dtype NCCL
// reduces, the NCCL call is enqueued on the program's stream with the
// device pointers of the operand and the result: no staging, no
// synchronisation. AllReduce, ReduceScatter and Reduce map to their NCCL
// namesakes (ReduceMean to ncclAvg; complex as float pairs), Reduce's
// non-root ranks then get zeros (cuMemsetD8Async), Broadcast and
// AllGather move bytes. AllGather and ReduceScatter along an axis > 0
// (their ranks' blocks interleave along the outer axes: the "packed"
// layouts of internal/collective) run NCCL on a scratch buffer in rank
// order, rearranged on the device by outer·size device-to-device copies.
//
// Otherwise (another communicator, or int16 reductions with NCCL) the
// operand is copied to page-locked memory, the stream drained (the
// communicator needs the bytes now), the collective run on the host
// (internal/collective, the CPU's code), and the result copied back on
// the stream: one synchronisation per collective.
type collStep struct {
	plan           *collective.Plan
	node           *graph.Node
	a              opdef.CollectiveAttr
	host           []byte // pinned: operand, result, scratch
	in, out, extra []byte

	// The NCCL path, chosen at setup.
	nc      *NCCL
	dt      cu.NCCLDataType
	op      cu.NCCLRedOp
	es      int64 // bytes of an NCCL element
	what    string
	outer   int64 // elements before the axis (AllGather, ReduceScatter)
	inner   int64 // bytes of one rank's operand slice from the axis on
	packed  bool
	scratch cu.DevicePtr
}

// hostStaged counts the collectives run through host memory (tests check
// that the NCCL path stages nothing).
var hostStaged atomic.Int64

func newCollStep(n *graph.Node) (*collStep, error) {
	p, err := collective.New(n)
	if err != nil {
		return nil, err
	}
	a, _ := n.Attr().(opdef.CollectiveAttr)
	return &collStep{plan: p, node: n, a: a}, nil
}

func (c *collStep) funcs() []cudagen.Func { return nil }

// setup chooses the NCCL path when the program's communicator is an NCCL
// of this backend and NCCL can do the op's dtype.
func (c *collStep) setup(e *executable, _ cu.Module) error {
	nc, ok := e.plan.Comm.(*NCCL)
	if !ok || nc.be != e.be {
		return nil
	}
	n, a := c.node, c.a
	dt := n.DType()
	x := n.Input(0).Shape()
	reduce := dist.Sum
	switch a.Reduce {
	case ops.ReduceMax:
		reduce = dist.Max
	case ops.ReduceMin:
		reduce = dist.Min
	}
	switch n.Op() {
	case ops.OpAllGather, ops.OpBroadcast:
		c.dt, c.es = cu.NCCLUint8, 1
	default:
		t, mult, ok := ncclType(dt, reduce)
		if !ok || dt == tensor.Bool || dt == tensor.Int16 {
			return nil // host-staged
		}
		c.dt, c.es = t, int64(dt.Size())/mult
		c.op = ncclOp(reduce)
		if a.Reduce == ops.ReduceMean {
			c.op = cu.NCCLAvg
		}
	}
	c.outer, c.inner = 1, int64(x.Size()*dt.Size())
	if (n.Op() == ops.OpAllGather || n.Op() == ops.OpReduceScatter) && a.Axis > 0 {
		c.outer = int64(x[:a.Axis].Size())
		c.inner = int64(x[a.Axis:].Size() * dt.Size())
	}
	c.packed = c.outer > 1 && a.Size > 1
	if c.packed {
		var err error
		if c.scratch, err = e.ownedAlloc(int64(a.Size) * c.outer * c.inner); err != nil {
			return err
		}
	}
	c.nc = nc
	c.what = fmt.Sprintf("%s %s (built at %s)", n.Op(), n.Type(), n.Site())
	return nil
}

// stage allocates the pinned buffers on first use (their sizes come from
// the step's values).
func (c *collStep) stage(e *executable, i int) error {
	if c.host != nil {
		return nil
	}
	s := e.plan.Steps[i]
	nin, nout := e.plan.Values[s.In[0]].Bytes, e.plan.Values[s.Out].Bytes
	nx := int64(c.plan.Scratch())
	mem, err := e.be.lib.drv.MemAllocHost(max(1, nin+nout+nx))
	if err != nil {
		return fmt.Errorf("allocating %d bytes of pinned staging memory: %w", nin+nout+nx, err)
	}
	c.host = mem
	c.in, c.out, c.extra = mem[:nin], mem[nin:nin+nout], mem[nin+nout:nin+nout+nx]
	return nil
}

func (c *collStep) enqueue(e *executable, i int) error {
	if c.nc != nil {
		return c.enqueueNCCL(e, i)
	}
	if err := c.stage(e, i); err != nil {
		return err
	}
	hostStaged.Add(1)
	d := e.be.lib.drv
	s := e.plan.Steps[i]
	if len(c.in) > 0 {
		if err := d.MemcpyDtoHAsync(ptrOf(c.in), e.ptr[s.In[0]], int64(len(c.in)), e.stream); err != nil {
			return fmt.Errorf("copying the operand to the host: %w", err)
		}
	}
	if err := d.StreamSynchronize(e.stream); err != nil {
		return e.asyncErr(err)
	}
	comm := e.plan.Comm
	if nc, ok := comm.(*NCCL); ok && nc.be == e.be {
		comm = onDevice{nc} // this goroutine is nc's device goroutine
	}
	if err := c.plan.Run(e.root().ctx, comm, c.in, c.out, c.extra); err != nil {
		return err
	}
	if len(c.out) > 0 {
		if err := d.MemcpyHtoDAsync(e.ptr[s.Out], ptrOf(c.out), int64(len(c.out)), e.stream); err != nil {
			return fmt.Errorf("copying the result to the device: %w", err)
		}
	}
	return nil
}

// enqueueNCCL puts the NCCL call (and the packed layouts' copies) on the
// stream, arming the run's watchdog at its first NCCL call.
func (c *collStep) enqueueNCCL(e *executable, i int) error {
	nc, a := c.nc, c.a
	if err := nc.usable(); err != nil {
		return fmt.Errorf("nccl: %s on rank %d of %d: %w", c.what, nc.rank, nc.size, err)
	}
	root := e.root()
	if root.watch == nil {
		root.watch = nc.arm(root.ctx, c.what)
	} else {
		root.watch.enqueued(c.what)
	}
	d := e.be.lib.drv
	s := e.plan.Steps[i]
	in, out := e.ptr[s.In[0]], e.ptr[s.Out]
	inBytes, outBytes := e.plan.Values[s.In[0]].Bytes, e.plan.Values[s.Out].Bytes
	var err error
	switch c.node.Op() {
	case ops.OpAllReduce:
		err = nc.lib.AllReduce(in, out, inBytes/c.es, c.dt, c.op, nc.comm, e.stream)
	case ops.OpReduce:
		err = nc.lib.Reduce(in, out, inBytes/c.es, c.dt, c.op, a.Root, nc.comm, e.stream)
		if err == nil && nc.rank != a.Root && outBytes > 0 {
			// The op's value on the other ranks is zeros (ops.Reduce).
			err = d.MemsetD8Async(out, 0, outBytes, e.stream)
		}
	case ops.OpBroadcast:
		err = nc.lib.Broadcast(in, out, inBytes, c.dt, a.Root, nc.comm, e.stream)
	case ops.OpAllGather:
		if !c.packed {
			err = nc.lib.AllGather(in, out, inBytes, c.dt, nc.comm, e.stream)
			break
		}
		// scratch is [rank][outer][inner]; out is [outer][rank][inner].
		if err = nc.lib.AllGather(in, c.scratch, inBytes, c.dt, nc.comm, e.stream); err == nil {
			err = c.interleave(d, e.stream, out, c.scratch, c.inner, false)
		}
	case ops.OpReduceScatter:
		if !c.packed {
			err = nc.lib.ReduceScatter(in, out, outBytes/c.es, c.dt, c.op, nc.comm, e.stream)
			break
		}
		// in is [outer][rank][chunk]; scratch is [rank][outer][chunk].
		chunk := c.inner / int64(a.Size)
		if err = c.interleave(d, e.stream, c.scratch, in, chunk, true); err == nil {
			err = nc.lib.ReduceScatter(c.scratch, out, outBytes/c.es, c.dt, c.op, nc.comm, e.stream)
		}
	}
	if err != nil {
		if f := root.watch.fired.Load(); f != nil {
			return *f
		}
		var ne *cu.NCCLError
		if errors.As(err, &ne) {
			return fmt.Errorf("nccl: %s on rank %d of %d: %w", c.what, nc.rank, nc.size, err)
		}
		return err
	}
	return nil
}

// interleave copies blocks of b bytes between the outer-major layout
// [outer][rank][b] and the rank-major one [rank][outer][b]: to rank-major
// when toRanks (ReduceScatter's operand into its send buffer), else from
// it (AllGather's receive buffer into the result).
func (c *collStep) interleave(d *cu.Driver, s cu.Stream, dst, src cu.DevicePtr, b int64, toRanks bool) error {
	size := int64(c.a.Size)
	for r := range size {
		for o := range c.outer {
			om, rm := (o*size+r)*b, (r*c.outer+o)*b
			dOff, sOff := om, rm
			if toRanks {
				dOff, sOff = rm, om
			}
			if err := d.MemcpyDtoDAsync(dst+cu.DevicePtr(dOff), src+cu.DevicePtr(sOff), b, s); err != nil {
				return fmt.Errorf("rearranging the blocks of %d ranks: %w", size, err)
			}
		}
	}
	return nil
}

func (c *collStep) check() error { return nil }

func (c *collStep) free(e *executable) error {
	if c.host == nil {
		return nil
	}
	err := e.be.lib.drv.MemFreeHost(c.host)
	c.host = nil
	return err
}

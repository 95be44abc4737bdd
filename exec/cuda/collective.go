//go:build linux

package cuda

import (
	"fmt"

	"github.com/loomgraph/loom/exec/cuda/internal/cu"
	"github.com/loomgraph/loom/exec/cuda/internal/cudagen"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/collective"
)

// collStep runs a collective op (ops/collective.go) with the program's
// communicator on the host: the operand is copied to page-locked memory,
// the stream drained (the communicator needs the bytes now), the
// collective run (internal/collective, the CPU's code), and the result
// copied back on the stream. One synchronisation per collective; NCCL,
// which would run on the stream, is not used yet.
type collStep struct {
	plan           *collective.Plan
	host           []byte // pinned: operand, result, scratch
	in, out, extra []byte
}

func newCollStep(n *graph.Node) (*collStep, error) {
	p, err := collective.New(n)
	if err != nil {
		return nil, err
	}
	return &collStep{plan: p}, nil
}

func (c *collStep) funcs() []cudagen.Func { return nil }

func (c *collStep) setup(e *executable, _ cu.Module) error {
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
	if err := c.stage(e, i); err != nil {
		return err
	}
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
	if err := c.plan.Run(e.ctx, e.plan.Comm, c.in, c.out, c.extra); err != nil {
		return err
	}
	if len(c.out) > 0 {
		if err := d.MemcpyHtoDAsync(e.ptr[s.Out], ptrOf(c.out), int64(len(c.out)), e.stream); err != nil {
			return fmt.Errorf("copying the result to the device: %w", err)
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

package cpu

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/collective"
)

// The collective ops (ops/collective.go) call the Program's communicator
// (Plan.Comm) on the arena's bytes (internal/collective). A collective
// step runs alone, never in a wave (interop.go), so every rank calls its
// communicator in plan order.
func prepareCollective(n *graph.Node) (*kernel, error) {
	p, err := collective.New(n)
	if err != nil {
		return nil, err
	}
	k := &kernel{alone: true, scratch: p.Scratch()}
	k.bind = func(args *args) func() {
		return func() {
			if err := p.Run(args.inst.ctx, args.inst.exe.plan.Comm, args.In(0), args.Out(), args.scratch); err != nil {
				args.Fail(err)
			}
		}
	}
	return k, nil
}

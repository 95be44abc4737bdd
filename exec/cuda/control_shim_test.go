//go:build linux

package cuda

// TEMPORARY: until the compiler fills Plan.Bodies (issue 22's compile
// side, branch cf-exec), this compiles each body of a control-flow op
// with exec.Compile on a backend that only keeps the plan, so that the
// CUDA lowering can be tested. It does nothing to a plan whose bodies are
// filled, and goes when the compiler's side is merged.

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

type planOnly struct {
	*Backend
	plan *exec.Plan
}

type nopExe struct{}

func (nopExe) Run(context.Context, *exec.Frame) error { return nil }
func (nopExe) Close() error                           { return nil }

func (p *planOnly) Lower(pl *exec.Plan) (exec.Executable, error) { p.plan = pl; return nopExe{}, nil }
func (p *planOnly) NewBuffer(*tensor.Tensor) (exec.Buffer, error) {
	return nil, fmt.Errorf("no")
}

func fillBodies(b *Backend, p *exec.Plan) error {
	for _, s := range p.Steps {
		a, ok := s.Node.Attr().(*opdef.ControlAttr)
		if !ok || s.Kind != exec.KernelStep {
			continue
		}
		if p.Bodies[s.Node] != nil {
			continue
		}
		if p.Bodies == nil {
			p.Bodies = map[*graph.Node][]*exec.BodyPlan{}
		}
		var bps []*exec.BodyPlan
		for _, bd := range a.Bodies {
			po := &planOnly{Backend: b}
			prog, err := exec.Compile(po, bd.Results, exec.IgnoreUnusedFeeds())
			if err != nil {
				return err
			}
			prog.Close()
			bp := &exec.BodyPlan{Plan: po.plan}
			for _, in := range po.plan.InputNodes {
				idx := -1
				for j, q := range bd.Params {
					if q == in {
						idx = j
					}
				}
				if idx < 0 {
					return fmt.Errorf("input %s is no param", in)
				}
				bp.Params = append(bp.Params, idx)
			}
			if err := fillBodies(b, po.plan); err != nil {
				return err
			}
			bps = append(bps, bp)
		}
		p.Bodies[s.Node] = bps
	}
	return nil
}

func init() {
	planHook = fillBodies
}

package migrate

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	lt "github.com/loomgraph/loom/tensor"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// GradGorgonia returns f(x) = sum(x² sin x) and its gradient
// df/dx = 2x sin x + x² cos x, computed by Gorgonia: a symbolic gradient
// (G.Grad adds its nodes to the graph) run by a TapeMachine.
func GradGorgonia(xs []float64) (f float64, grad []float64, err error) {
	defer func() {
		if r := recover(); r != nil { // G.Must panics on a build error
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(len(xs)), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(len(xs)), tensor.WithBacking(append([]float64(nil), xs...)))))
	fx := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Square(x)), G.Must(G.Sin(x))))))
	if _, err := G.Grad(fx, x); err != nil {
		return 0, nil, err
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return 0, nil, err
	}
	dx, err := x.Grad()
	if err != nil {
		return 0, nil, err
	}
	return fx.Value().Data().(float64), append([]float64(nil), dx.Data().([]float64)...), nil
}

// GradLoom is GradGorgonia with loom: the gradient is nodes of the graph
// too (autodiff.Grad), compiled with f into one Program.
func GradLoom(xs []float64) (f float64, grad []float64, err error) {
	g := graph.New()
	x := g.Input("x", lt.Float64, len(xs))
	fx := ops.Sum(ops.Mul(ops.Square(x), ops.Sin(x)))
	dx := autodiff.Grad(fx, x)[0]

	be, err := cpu.New()
	if err != nil {
		return 0, nil, err
	}
	defer be.Close()
	prog, err := exec.Compile(be, []*graph.Node{fx, dx})
	if err != nil {
		return 0, nil, err
	}
	defer prog.Close()
	xt, err := lt.New(xs, len(xs))
	if err != nil {
		return 0, nil, err
	}
	outs, err := prog.Run(context.Background(), exec.Feeds{x: xt})
	if err != nil {
		return 0, nil, err
	}
	return outs[0].Float64(0), outs[1].Float64s(), nil
}

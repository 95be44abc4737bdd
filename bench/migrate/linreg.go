package migrate

import (
	"context"
	"fmt"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	lt "github.com/loomgraph/loom/tensor"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LinRegData is n points of 2 features and a target close to
// 2 x0 - 3 x1 + 0.5 (off by ±0.05, alternately), row-major.
func LinRegData(n int) (x, y []float64) {
	x, y = make([]float64, 2*n), make([]float64, n)
	for i := 0; i < n; i++ {
		x0 := float64(i)/float64(n) - 0.5
		x1 := float64((3*i)%n)/float64(n) - 0.5
		x[2*i], x[2*i+1] = x0, x1
		y[i] = 2*x0 - 3*x1 + 0.5 + 0.05*float64(1-2*(i%2))
	}
	return x, y
}

// LinRegGorgonia fits y ≈ x·w + b, w and b starting at zero, by steps of
// plain gradient descent on the mean squared error with learning rate lr
// (Gorgonia's VanillaSolver). It returns the loss of every step (computed
// before that step's update), w and b.
func LinRegGorgonia(xs, ys []float64, steps int, lr float64) (losses []float64, w *tensor.Dense, b float64, err error) {
	defer func() {
		if r := recover(); r != nil { // G.Must panics on a build error
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	n := len(ys)
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, 2), G.WithName("x"))
	y := G.NewVector(g, tensor.Float64, G.WithShape(n), G.WithName("y"))
	wn := G.NewVector(g, tensor.Float64, G.WithShape(2), G.WithName("w"), G.WithInit(G.Zeroes()))
	bn := G.NewScalar(g, tensor.Float64, G.WithName("b"), G.WithValue(0.0))
	pred := G.Must(G.Add(G.Must(G.Mul(x, wn)), bn)) // Mul of a matrix and a vector: matrix-vector product
	loss := G.Must(G.Mean(G.Must(G.Square(G.Must(G.Sub(pred, y))))))
	if _, err := G.Grad(loss, wn, bn); err != nil {
		return nil, nil, 0, err
	}

	vm := G.NewTapeMachine(g, G.BindDualValues(wn, bn))
	defer vm.Close()
	solver := G.NewVanillaSolver(G.WithLearnRate(lr))
	xd := tensor.New(tensor.WithShape(n, 2), tensor.WithBacking(xs))
	yd := tensor.New(tensor.WithShape(n), tensor.WithBacking(ys))
	for i := 0; i < steps; i++ {
		if err := G.Let(x, xd); err != nil {
			return nil, nil, 0, err
		}
		if err := G.Let(y, yd); err != nil {
			return nil, nil, 0, err
		}
		if err := vm.RunAll(); err != nil {
			return nil, nil, 0, err
		}
		losses = append(losses, loss.Value().Data().(float64))
		if err := solver.Step(G.NodesToValueGrads(G.Nodes{wn, bn})); err != nil {
			return nil, nil, 0, err
		}
		vm.Reset()
	}
	return losses, wn.Value().(*tensor.Dense).Clone().(*tensor.Dense), bn.Value().Data().(float64), nil
}

// LinRegLoom is LinRegGorgonia with loom: the update is part of the
// Program (optim.Minimize), the data are feeds of each Run.
func LinRegLoom(xs, ys []float64, steps int, lr float64) (losses []float64, w *lt.Tensor, b float64, err error) {
	n := len(ys)
	g := graph.New()
	x := g.Input("x", lt.Float64, n, 2)
	y := g.Input("y", lt.Float64, n)
	wn := g.Variable("w", lt.Zeros(lt.Float64, 2))
	bn := g.Variable("b", lt.Scalar(0.0))
	pred := ops.Add(ops.MatMul(x, wn), bn) // MatMul of a matrix and a vector: matrix-vector product
	loss := ops.Mean(ops.Square(ops.Sub(pred, y)))
	updates, err := optim.Minimize(optim.SGD{LR: lr}, loss, wn, bn)
	if err != nil {
		return nil, nil, 0, err
	}

	be, err := cpu.New()
	if err != nil {
		return nil, nil, 0, err
	}
	defer be.Close()
	prog, err := exec.Compile(be, []*graph.Node{loss}, updates...)
	if err != nil {
		return nil, nil, 0, err
	}
	defer prog.Close()
	xt, err := lt.New(xs, n, 2)
	if err != nil {
		return nil, nil, 0, err
	}
	yt, err := lt.New(ys, n)
	if err != nil {
		return nil, nil, 0, err
	}
	feeds := exec.Feeds{x: xt, y: yt}
	for i := 0; i < steps; i++ {
		outs, err := prog.Run(context.Background(), feeds)
		if err != nil {
			return nil, nil, 0, err
		}
		losses = append(losses, outs[0].Float64(0))
	}
	if w, err = prog.Read(wn); err != nil {
		return nil, nil, 0, err
	}
	bt, err := prog.Read(bn)
	if err != nil {
		return nil, nil, 0, err
	}
	return losses, w, bt.Float64(0), nil
}

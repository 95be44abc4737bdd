package migrate

import (
	"context"
	"fmt"
	"math"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/exec/cpu"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/interop/gorgoniaconv"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/optim"
	lt "github.com/loomgraph/loom/tensor"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The classifier: 2 features, MLPHidden hidden units with ReLU, 3 classes.
const (
	MLPIn      = 2
	MLPHidden  = 8
	MLPClasses = 3
)

// MLPData is 3 interleaved spiral arms of perPoints points each: the
// features (rows of 2) and the one-hot classes (rows of 3).
func MLPData(perClass int) (x, onehot []float64) {
	for c := 0; c < MLPClasses; c++ {
		for k := 0; k < perClass; k++ {
			r := float64(k+1) / float64(perClass)
			a := float64(c)*2*math.Pi/MLPClasses + 2*r
			x = append(x, r*math.Cos(a), r*math.Sin(a))
			row := make([]float64, MLPClasses)
			row[c] = 1
			onehot = append(onehot, row...)
		}
	}
	return x, onehot
}

// MLPInit is the classifier's initial weights as Gorgonia Dense tensors,
// w0 (2, 8), b0 (8), w1 (8, 3), b1 (3): a fixed pattern standing for
// weights that a Gorgonia program initialised (or trained) before moving
// to loom.
func MLPInit() []*tensor.Dense {
	shapes := [][]int{{MLPIn, MLPHidden}, {MLPHidden}, {MLPHidden, MLPClasses}, {MLPClasses}}
	out := make([]*tensor.Dense, len(shapes))
	for l, s := range shapes {
		n := 1
		for _, d := range s {
			n *= d
		}
		v := make([]float64, n)
		for i := range v {
			v[i] = 0.6 * math.Sin(1.7*float64(i)+0.9*float64(l)+0.3)
		}
		out[l] = tensor.New(tensor.WithShape(s...), tensor.WithBacking(v))
	}
	return out
}

// MLPGorgonia trains the classifier from init for the given steps with
// Adam at learning rate lr, on the whole batch; the loss is the mean
// softmax cross-entropy. It returns the loss of every step (before that
// step's update) and the final weights in init's order. init is not
// changed.
func MLPGorgonia(xs, onehot []float64, init []*tensor.Dense, steps int, lr float64) (losses []float64, weights []*tensor.Dense, err error) {
	defer func() {
		if r := recover(); r != nil { // G.Must panics on a build error
			err = fmt.Errorf("gorgonia: %v", r)
		}
	}()
	n := len(xs) / MLPIn
	g := G.NewGraph()
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(n, MLPIn), G.WithName("x"),
		G.WithValue(tensor.New(tensor.WithShape(n, MLPIn), tensor.WithBacking(xs))))
	y := G.NewMatrix(g, tensor.Float64, G.WithShape(n, MLPClasses), G.WithName("y"),
		G.WithValue(tensor.New(tensor.WithShape(n, MLPClasses), tensor.WithBacking(onehot))))
	// The solver updates a node's value in place: start from copies.
	w0 := G.NewMatrix(g, tensor.Float64, G.WithShape(MLPIn, MLPHidden), G.WithName("w0"), G.WithValue(init[0].Clone()))
	b0 := G.NewVector(g, tensor.Float64, G.WithShape(MLPHidden), G.WithName("b0"), G.WithValue(init[1].Clone()))
	w1 := G.NewMatrix(g, tensor.Float64, G.WithShape(MLPHidden, MLPClasses), G.WithName("w1"), G.WithValue(init[2].Clone()))
	b1 := G.NewVector(g, tensor.Float64, G.WithShape(MLPClasses), G.WithName("b1"), G.WithValue(init[3].Clone()))
	params := G.Nodes{w0, b0, w1, b1}

	h := G.Must(G.Rectify(G.Must(G.BroadcastAdd(G.Must(G.Mul(x, w0)), b0, nil, []byte{0}))))
	logits := G.Must(G.BroadcastAdd(G.Must(G.Mul(h, w1)), b1, nil, []byte{0}))
	// No fused cross-entropy: -mean over rows of sum(y * log softmax(logits)).
	rows := G.Must(G.Sum(G.Must(G.HadamardProd(y, G.Must(G.LogSoftMax(logits)))), 1))
	loss := G.Must(G.Neg(G.Must(G.Mean(rows))))
	if _, err := G.Grad(loss, params...); err != nil {
		return nil, nil, err
	}

	vm := G.NewTapeMachine(g, G.BindDualValues(params...))
	defer vm.Close()
	solver := G.NewAdamSolver(G.WithLearnRate(lr))
	for i := 0; i < steps; i++ {
		if err := vm.RunAll(); err != nil {
			return nil, nil, err
		}
		losses = append(losses, loss.Value().Data().(float64))
		if err := solver.Step(G.NodesToValueGrads(params)); err != nil {
			return nil, nil, err
		}
		vm.Reset()
	}
	for _, p := range params {
		weights = append(weights, p.Value().(*tensor.Dense).Clone().(*tensor.Dense))
	}
	return losses, weights, nil
}

// MLPLoom is MLPGorgonia with loom. The initial weights are Gorgonia's
// Dense tensors, brought over with gorgoniaconv.FromDense (no copy; the
// Variable then starts from a copy of its own); the final weights go back
// to Gorgonia with gorgoniaconv.ToDense.
func MLPLoom(xs, onehot []float64, init []*tensor.Dense, steps int, lr float64) (losses []float64, weights []*tensor.Dense, err error) {
	n := len(xs) / MLPIn
	g := graph.New()
	x := g.Input("x", lt.Float64, n, MLPIn)
	y := g.Input("y", lt.Float64, n, MLPClasses)
	var params []*graph.Node
	for i, name := range []string{"w0", "b0", "w1", "b1"} {
		t, err := gorgoniaconv.FromDense(init[i])
		if err != nil {
			return nil, nil, err
		}
		params = append(params, g.Variable(name, t))
	}
	w0, b0, w1, b1 := params[0], params[1], params[2], params[3]

	h := ops.Relu(ops.Add(ops.MatMul(x, w0), b0)) // Add broadcasts b0 over the rows
	logits := ops.Add(ops.MatMul(h, w1), b1)
	loss := ops.Mean(ops.SoftmaxCrossEntropy(logits, y, -1))
	updates, err := optim.Minimize(optim.Adam{LR: lr}, loss, params...)
	if err != nil {
		return nil, nil, err
	}

	be, err := cpu.New()
	if err != nil {
		return nil, nil, err
	}
	defer be.Close()
	prog, err := exec.Compile(be, []*graph.Node{loss}, updates...)
	if err != nil {
		return nil, nil, err
	}
	defer prog.Close()
	xt, err := lt.New(xs, n, MLPIn)
	if err != nil {
		return nil, nil, err
	}
	yt, err := lt.New(onehot, n, MLPClasses)
	if err != nil {
		return nil, nil, err
	}
	feeds := exec.Feeds{x: xt, y: yt}
	for i := 0; i < steps; i++ {
		outs, err := prog.Run(context.Background(), feeds)
		if err != nil {
			return nil, nil, err
		}
		losses = append(losses, outs[0].Float64(0))
	}
	for _, p := range params {
		t, err := prog.Read(p)
		if err != nil {
			return nil, nil, err
		}
		d, err := gorgoniaconv.ToDense(t)
		if err != nil {
			return nil, nil, err
		}
		weights = append(weights, d)
	}
	return losses, weights, nil
}

package optim

import (
	"fmt"

	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// Optimizer builds the updates of one training step.
type Optimizer interface {
	// Apply returns the exec.Update options that move each parameter
	// given its gradient (same shape and dtype), creating the optimiser's
	// state Variables in the parameters' graph.
	Apply(params, grads []*graph.Node) ([]exec.Option, error)
}

// Minimize differentiates loss with respect to params and applies opt: the
// usual way to build a training step.
func Minimize(opt Optimizer, loss *graph.Node, params ...*graph.Node) ([]exec.Option, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("optim: Minimize: no parameters")
	}
	grads := autodiff.Grad(loss, params...)
	if g := loss.Graph(); g != nil && g.Err() != nil {
		return nil, g.Err()
	}
	return opt.Apply(params, grads)
}

// check validates params and grads.
func check(name string, params, grads []*graph.Node) error {
	if len(params) != len(grads) {
		return fmt.Errorf("optim: %s: %d parameters but %d gradients", name, len(params), len(grads))
	}
	for i, p := range params {
		if p.Op() != graph.OpVariable {
			return fmt.Errorf("optim: %s: parameter %d (%s) is not a Variable", name, i, p)
		}
		if !p.DType().IsFloat() || p.DType().IsStorage() {
			return fmt.Errorf("optim: %s: parameter %q has dtype %v; only float32 and float64 parameters can be trained", name, p.Name(), p.DType())
		}
		g := grads[i]
		if err := g.Err(); err != nil {
			return err
		}
		if g.DType() != p.DType() || !g.Shape().Equal(p.Shape()) {
			return fmt.Errorf("optim: %s: gradient %d is %s, parameter %q is %s", name, i, g.Type(), p.Name(), p.Type())
		}
	}
	return nil
}

// state creates a zero-initialised Variable next to param, named
// "<param>/<suffix>".
func state(p *graph.Node, suffix string) *graph.Node {
	return p.Graph().Variable(p.Name()+"/"+suffix, tensor.Zeros(p.DType(), p.Shape()...))
}

func scalar(like *graph.Node, v float64) *graph.Node { return ops.Scalar(like, v) }

// SGD is stochastic gradient descent, with optional momentum (PyTorch's
// form: v <- Momentum*v + g; w <- w - LR*v, or with Nesterov
// w <- w - LR*(g + Momentum*v)) and L2 weight decay (g <- g + WeightDecay*w).
type SGD struct {
	LR          float64
	Momentum    float64
	Nesterov    bool
	WeightDecay float64
	// LRNode, when set, is a scalar node (an Input fed every run, or a
	// Variable) used as the learning rate instead of LR: learning-rate
	// schedules without recompiling.
	LRNode *graph.Node
}

// Apply implements Optimizer.
func (o SGD) Apply(params, grads []*graph.Node) ([]exec.Option, error) {
	if err := check("SGD", params, grads); err != nil {
		return nil, err
	}
	if (o.LR <= 0 && o.LRNode == nil) || o.Momentum < 0 || o.WeightDecay < 0 {
		return nil, fmt.Errorf("optim: SGD: LR must be positive and Momentum and WeightDecay non-negative (got %+v)", o)
	}
	var opts []exec.Option
	for i, w := range params {
		g := grads[i]
		if o.WeightDecay != 0 {
			g = ops.Add(g, ops.Mul(scalar(w, o.WeightDecay), w))
		}
		step := g
		if o.Momentum != 0 {
			v := state(w, "momentum")
			vNext := ops.Add(ops.Mul(scalar(v, o.Momentum), v), g)
			opts = append(opts, exec.Update(v, vNext))
			step = vNext
			if o.Nesterov {
				step = ops.Add(g, ops.Mul(scalar(v, o.Momentum), vNext))
			}
		}
		opts = append(opts, exec.Update(w, ops.Sub(w, ops.Mul(learningRate(w, o.LR, o.LRNode), step))))
	}
	return opts, graphErr(params)
}

// learningRate is the learning rate as a scalar of w's dtype: the node
// when given (cast if needed), else the constant.
func learningRate(w *graph.Node, lr float64, node *graph.Node) *graph.Node {
	if node == nil {
		return scalar(w, lr)
	}
	if node.Rank() != 0 {
		return w.Graph().Fail(graph.NewError(graph.ErrShape, "optim", []*graph.Node{node}, "the learning-rate node must be a scalar, got %s", node.Type()))
	}
	return ops.Cast(node, w.DType())
}

// Adam is the Adam optimiser with bias correction (Kingma and Ba; PyTorch's
// form). Zero Beta1, Beta2 and Eps take the defaults 0.9, 0.999 and 1e-8.
// WeightDecay adds an L2 term to the gradient, or with Decoupled (AdamW)
// shrinks the weights directly: w <- w - LR*(m̂/(√v̂+Eps) + WeightDecay*w).
// The step count is a Variable "<first param>/adam_step" of the first
// parameter's dtype.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	WeightDecay           float64
	Decoupled             bool
	// LRNode, when set, is a scalar node used as the learning rate
	// instead of LR (see SGD.LRNode).
	LRNode *graph.Node
}

func (o Adam) defaults() Adam {
	if o.Beta1 == 0 {
		o.Beta1 = 0.9
	}
	if o.Beta2 == 0 {
		o.Beta2 = 0.999
	}
	if o.Eps == 0 {
		o.Eps = 1e-8
	}
	return o
}

// Apply implements Optimizer.
func (o Adam) Apply(params, grads []*graph.Node) ([]exec.Option, error) {
	if err := check("Adam", params, grads); err != nil {
		return nil, err
	}
	o = o.defaults()
	if (o.LR <= 0 && o.LRNode == nil) || o.Beta1 < 0 || o.Beta1 >= 1 || o.Beta2 < 0 || o.Beta2 >= 1 || o.Eps <= 0 || o.WeightDecay < 0 {
		return nil, fmt.Errorf("optim: Adam: need LR > 0, 0 <= Beta1, Beta2 < 1, Eps > 0, WeightDecay >= 0 (got %+v)", o)
	}
	first := params[0]
	t := first.Graph().Variable(first.Name()+"/adam_step", tensor.Zeros(first.DType()))
	tNext := ops.Add(t, scalar(t, 1))
	opts := []exec.Option{exec.Update(t, tNext)}
	for i, w := range params {
		g := grads[i]
		if o.WeightDecay != 0 && !o.Decoupled {
			g = ops.Add(g, ops.Mul(scalar(w, o.WeightDecay), w))
		}
		tw := ops.Cast(tNext, w.DType())
		m, v := state(w, "adam_m"), state(w, "adam_v")
		mNext := ops.Add(ops.Mul(scalar(m, o.Beta1), m), ops.Mul(scalar(g, 1-o.Beta1), g))
		vNext := ops.Add(ops.Mul(scalar(v, o.Beta2), v), ops.Mul(scalar(g, 1-o.Beta2), ops.Mul(g, g)))
		// Bias corrections 1 - beta^t, as scalars.
		c1 := ops.Sub(scalar(tw, 1), ops.Pow(scalar(tw, o.Beta1), tw))
		c2 := ops.Sub(scalar(tw, 1), ops.Pow(scalar(tw, o.Beta2), tw))
		mHat := ops.Div(mNext, c1)
		vHat := ops.Div(vNext, c2)
		step := ops.Div(mHat, ops.Add(ops.Sqrt(vHat), scalar(w, o.Eps)))
		if o.WeightDecay != 0 && o.Decoupled {
			step = ops.Add(step, ops.Mul(scalar(w, o.WeightDecay), w))
		}
		opts = append(opts,
			exec.Update(m, mNext), exec.Update(v, vNext),
			exec.Update(w, ops.Sub(w, ops.Mul(learningRate(w, o.LR, o.LRNode), step))))
	}
	return opts, graphErr(params)
}

func graphErr(params []*graph.Node) error {
	if g := params[0].Graph(); g != nil {
		return g.Err()
	}
	return nil
}

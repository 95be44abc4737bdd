package optim

import (
	"fmt"
	"math"

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
	if opt == nil {
		return nil, fmt.Errorf("optim: Minimize: nil Optimizer")
	}
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
	if len(params) == 0 {
		return fmt.Errorf("optim: %s: no parameters", name)
	}
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
		if p.Graph() != params[0].Graph() {
			return fmt.Errorf("optim: %s: parameter %q belongs to another graph than parameter %q", name, p.Name(), params[0].Name())
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
// Apply refuses, with an error naming the field, an LR that is not
// positive and finite (unless LRNode is set), a negative or non-finite
// Momentum or WeightDecay, and Nesterov without a Momentum.
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

// validate checks the hyper-parameters: LR positive (or LRNode a float
// scalar of the parameters' graph), Momentum and WeightDecay non-negative,
// all finite, and Nesterov only with a momentum.
func (o SGD) validate(g *graph.Graph) error {
	if err := checkLR("SGD", o.LR, o.LRNode, g); err != nil {
		return err
	}
	if err := nonNegative("SGD", "Momentum", o.Momentum); err != nil {
		return err
	}
	if err := nonNegative("SGD", "WeightDecay", o.WeightDecay); err != nil {
		return err
	}
	if o.Nesterov && o.Momentum == 0 {
		return fmt.Errorf("optim: SGD: Nesterov needs a Momentum > 0")
	}
	return nil
}

// checkLR validates a learning rate: a positive finite LR, or an LRNode
// that is a float scalar of graph g (LR is then ignored, but must still be
// finite and non-negative).
func checkLR(opt string, lr float64, node *graph.Node, g *graph.Graph) error {
	if node == nil {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return fmt.Errorf("optim: %s: LR must be positive and finite, got %v", opt, lr)
		}
		return nil
	}
	if err := nonNegative(opt, "LR", lr); err != nil {
		return err
	}
	switch {
	case !node.Valid():
		return fmt.Errorf("optim: %s: LRNode is invalid: %w", opt, node.Err())
	case node.Graph() != g:
		return fmt.Errorf("optim: %s: LRNode %s belongs to another graph than the parameters", opt, node)
	case node.Rank() != 0 || !node.DType().IsFloat():
		return fmt.Errorf("optim: %s: LRNode must be a float scalar, got %s", opt, node.Type())
	}
	return nil
}

// nonNegative checks that a hyper-parameter is finite and >= 0.
func nonNegative(opt, field string, v float64) error {
	if !(v >= 0) || math.IsInf(v, 0) {
		return fmt.Errorf("optim: %s: %s must be non-negative and finite, got %v", opt, field, v)
	}
	return nil
}

// Apply implements Optimizer.
func (o SGD) Apply(params, grads []*graph.Node) ([]exec.Option, error) {
	if err := check("SGD", params, grads); err != nil {
		return nil, err
	}
	if err := o.validate(params[0].Graph()); err != nil {
		return nil, err
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
// when given (cast if needed), else the constant
// (validate has checked the node).
func learningRate(w *graph.Node, lr float64, node *graph.Node) *graph.Node {
	if node == nil {
		return scalar(w, lr)
	}
	return ops.Cast(node, w.DType())
}

// Adam is the Adam optimiser with bias correction (Kingma and Ba; PyTorch's
// form). Zero Beta1, Beta2 and Eps take the defaults 0.9, 0.999 and 1e-8.
// WeightDecay adds an L2 term to the gradient, or with Decoupled (AdamW)
// shrinks the weights directly: w <- w - LR*(m̂/(√v̂+Eps) + WeightDecay*w).
// The step count is a Variable "<first param>/adam_step" of the first
// parameter's dtype. Apply refuses, with an error naming the field, an LR
// that is not positive and finite (unless LRNode is set), Beta1 or Beta2
// outside [0, 1), an Eps that is not positive and finite, and a negative
// or non-finite WeightDecay; NaN fails every check.
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

// validate checks the hyper-parameters (after defaults): LR as for SGD,
// 0 <= Beta1, Beta2 < 1, Eps > 0 and WeightDecay >= 0, all finite.
func (o Adam) validate(g *graph.Graph) error {
	if err := checkLR("Adam", o.LR, o.LRNode, g); err != nil {
		return err
	}
	for _, b := range []struct {
		name string
		v    float64
	}{{"Beta1", o.Beta1}, {"Beta2", o.Beta2}} {
		if !(b.v >= 0 && b.v < 1) {
			return fmt.Errorf("optim: Adam: %s must be in [0, 1), got %v", b.name, b.v)
		}
	}
	if !(o.Eps > 0) || math.IsInf(o.Eps, 0) {
		return fmt.Errorf("optim: Adam: Eps must be positive and finite, got %v", o.Eps)
	}
	return nonNegative("Adam", "WeightDecay", o.WeightDecay)
}

// Apply implements Optimizer.
func (o Adam) Apply(params, grads []*graph.Node) ([]exec.Option, error) {
	if err := check("Adam", params, grads); err != nil {
		return nil, err
	}
	o = o.defaults()
	if err := o.validate(params[0].Graph()); err != nil {
		return nil, err
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

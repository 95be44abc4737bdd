// Package optim holds optimisers written as graph-level updates and the
// initialisers of model parameters.
//
// An optimiser turns a loss and its parameters (Variables) into
// exec.Update options: the new value of every parameter, and of every
// piece of optimiser state (momentum buffers, Adam's moments, the step
// count), is a graph node, so the whole step runs on the device with the
// rest of the program and the state lives there too, as Variables:
//
//	opt := optim.Adam{LR: 1e-3}
//	updates, err := optim.Minimize(opt, loss, params...)
//	step, err := exec.Compile(be, []*graph.Node{loss}, updates...)
//
// The conventions are PyTorch's (SGD with momentum: v <- mu v + g,
// w <- w - lr v; Adam with bias correction; weight decay as an L2 term
// added to the gradient, or decoupled for AdamW).
//
// The initialisers (Zeros, Uniform, Normal, GlorotUniform, GlorotNormal,
// HeUniform, HeNormal) draw from a generator of our own (PCG-XSH-RR with
// its own deterministic log for normal samples) so that a seed gives the
// same values, bit for bit, on every run, Go version and platform.
package optim

// Package autodiff differentiates graphs in reverse mode. It holds only the
// walk: each op's gradient rule sits in its row of the ops table, written
// with the ops builders, so a gradient is an ordinary graph node that is
// optimised and executed like any other, on any backend, and can be
// differentiated again (Grad of a Grad, Hessian, HVP).
//
// Conventions:
//   - Grad(y, xs...) needs a float scalar y; VJP handles other outputs.
//   - Every gradient has exactly its x's shape and dtype: a broadcast in
//     the forward pass is summed back over the broadcast axes.
//   - An x that y does not depend on gets zeros of its shape.
//   - Only what the requested gradients need is built: the walk visits the
//     nodes on paths from the xs to y, and asks each rule only for the
//     operands on such a path.
//   - Comparisons, logic, ArgMax/ArgMin and Cast to an integer or bool
//     type are not differentiable: a gradient that would flow through them
//     is a build error naming the op, never a silent zero. Where's
//     condition receives no gradient, so Where(x > 0, x, 0) is fine.
//   - Kinks follow JAX and PyTorch: Relu'(0) = 0, Abs'(0) = 0; ties of
//     Maximum/Minimum go to the first operand, ties of Max/Min to the first
//     extremal element (the one ArgMax picks).
//   - ops.StopGradient blocks a path; ops.CustomGradient replaces the
//     gradient of a subgraph with a rule of your own.
//
// Shapes: Jacobian(y, x) is y's shape followed by x's shape; Hessian(y, x)
// is x's shape twice; HVP(y, x, v) has x's shape.
package autodiff

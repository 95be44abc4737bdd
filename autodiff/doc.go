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
// Control flow (ops.Cond, ops.Scan, ops.WhileMax): a control-flow op's
// results are the TupleGet nodes of one tuple-valued node; the walk
// collects their cotangents and calls the op's rule once
// (ops/control_grad.go). The rules differentiate the bodies with this
// walk and build their result with the same builders, so higher order
// works through them:
//   - Cond: a Cond on the same predicate whose branches recompute their
//     branch and return its VJP.
//   - Scan: a Scan in the other direction over per-step residuals that an
//     extended copy of the forward Scan saves (the compiler computes the
//     two as one loop); with ops.ScanRemat only the step's incoming
//     carries are saved and the backward body recomputes the step. Values
//     that depend only on captures and constants are not saved.
//   - WhileMax: the equivalent Scan of maxTrips steps that stop changing
//     the carry once the condition is false. A While without a bound is a
//     build error.
//   - Integer and bool results of a control-flow op (a trip counter) get
//     no cotangent, and are not on a path to y.
//
// Shapes: Jacobian(y, x) is y's shape followed by x's shape; Hessian(y, x)
// is x's shape twice; HVP(y, x, v) has x's shape.
package autodiff

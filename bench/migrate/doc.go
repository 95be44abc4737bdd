// Package migrate holds the side-by-side programs of
// docs/MIGRATING_FROM_GORGONIA.md: each task written once with Gorgonia
// (gorgonia.org/gorgonia v0.9.18, its TapeMachine) and once with loom, on
// the same data and the same initial weights, in float64. The guide's code
// excerpts are copied from these files (TestGuideExcerpts checks that they
// still appear here verbatim), and TestAgree runs both versions of each
// task and checks that they compute the same numbers.
//
//   - grad.go:   the gradient of a scalar function, f(x) = sum(x² sin x);
//   - linreg.go: linear regression trained by plain gradient descent
//     (Gorgonia's VanillaSolver, loom's optim.SGD);
//   - mlp.go:    a two-layer classifier trained with Adam, whose initial
//     weights are Gorgonia Dense tensors brought to loom with
//     interop/gorgoniaconv.
//
// It is in the bench module, beside the peer benchmarks, so that the main
// module never depends on Gorgonia.
package migrate

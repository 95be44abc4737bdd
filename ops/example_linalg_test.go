package ops_test

import (
	"fmt"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/ops"
)

// Solve finds x with a·x = b; Det and Inv as NumPy's. For a = [[3 1] [1
// 2]] and b = [9 8]: x = [2 3], det 5, inverse [[0.4 -0.2] [-0.2 0.6]]
// (by hand; NumPy 1.24 agrees).
func ExampleSolve() {
	g := graph.New()
	a := g.Const(mustNew64([]float64{3, 1, 1, 2}, 2, 2))
	b := g.Const(mustNew64([]float64{9, 8}, 2))
	out, err := compute([]*graph.Node{ops.Solve(a, b), ops.Det(a), ops.Inv(a)}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		show4(o)
	}
	// Output:
	// f64[2] [2.0000 3.0000]
	// f64[] [5.0000]
	// f64[2,2] [0.4000 -0.2000 -0.2000 0.6000]
}

// Eigh returns the eigenvalues of a symmetric matrix in ascending order
// and the eigenvectors as columns, each with its largest component
// positive: [[2 1] [1 2]] has eigenvalues 1 and 3 with vectors
// (1, -1)/√2 and (1, 1)/√2 (by hand; NumPy 1.24's eigh returns the first
// with the opposite sign, which LAPACK leaves free). Cholesky of [[4 2] [2 3]] is
// [[2 0] [1 √2]].
func ExampleEigh() {
	g := graph.New()
	w, v := ops.Eigh(g.Const(mustNew64([]float64{2, 1, 1, 2}, 2, 2)))
	l := ops.Cholesky(g.Const(mustNew64([]float64{4, 2, 2, 3}, 2, 2)))
	out, err := compute([]*graph.Node{w, v, l}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range out {
		show4(o)
	}
	// Output:
	// f64[2] [1.0000 3.0000]
	// f64[2,2] [0.7071 0.7071 -0.7071 0.7071]
	// f64[2,2] [2.0000 0.0000 1.0000 1.4142]
}

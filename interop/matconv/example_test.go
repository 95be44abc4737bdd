package matconv_test

import (
	"context"
	"fmt"
	"log"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/interop/matconv"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/mat"
)

// FromDense wraps a Dense's memory when its rows are contiguous, and
// copies a narrower slice of one.
func ExampleFromDense() {
	m := mat.NewDense(2, 3, []float64{
		1, 2, 3,
		4, 5, 6,
	})
	t, err := matconv.FromDense(m)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t)
	m.Set(0, 0, 10) // visible through t: they share memory
	fmt.Println(t.Float64(0), matconv.Shares(t, m))

	right := m.Slice(0, 2, 1, 3).(*mat.Dense) // columns 1-2: rows not contiguous
	u, err := matconv.FromDense(right)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(u.Type(), u.Float64s(), matconv.Shares(u, m))
	// Output:
	// f64[2,3]
	// [[1 2 3]
	//  [4 5 6]]
	// 10 true
	// f64[2,2] [2 3 5 6] false
}

// ToDense shares a float64 tensor's memory and converts other dtypes into
// a new Dense; a tensor of the wrong rank is an error.
func ExampleToDense() {
	data := []float64{1, 2, 3, 4}
	t, _ := tensor.New(data, 2, 2)
	m, err := matconv.ToDense(t)
	if err != nil {
		log.Fatal(err)
	}
	m.Set(1, 1, 40) // visible through t and data
	fmt.Println(data, matconv.Shares(t, m))

	i32, _ := tensor.New([]int32{1, -2, 3, -4, 5, -6}, 3, 2)
	c, err := matconv.ToDense(i32) // converted: a new Dense
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v\n", mat.Formatted(c))

	vec, _ := tensor.New([]float64{1, 2, 3})
	_, err = matconv.ToDense(vec)
	fmt.Println(err)
	// Output:
	// [1 2 3 40] true
	// ⎡ 1  -2⎤
	// ⎢ 3  -4⎥
	// ⎣ 5  -6⎦
	// matconv: ToDense: tensor f64[3] has rank 1, need a rank-2 matrix (use ToVecDense for a vector)
}

// A least-squares line fit: loom computes the normal equations' AᵀA and
// Aᵀb, and gonum's Cholesky factorisation (LAPACK's dpotrf) solves them.
// The points lie on y = 1 + 2x, so the fit is intercept 1, slope 2.
func Example_leastSquares() {
	// Rows [1, x] for x = 0, 1, 2, 3, and y = 1 + 2x.
	A := mat.NewDense(4, 2, []float64{
		1, 0,
		1, 1,
		1, 2,
		1, 3,
	})
	y := mat.NewVecDense(4, []float64{1, 3, 5, 7})

	g := graph.New()
	a := g.Input("A", tensor.Float64, 4, 2)
	b := g.Input("y", tensor.Float64, 4)
	at := ops.Transpose(a)
	ata := ops.MatMul(at, a)                    // [2,2]
	aty := ops.MatMul(at, ops.Reshape(b, 4, 1)) // [2,1]
	if err := g.Err(); err != nil {
		log.Fatal(err)
	}
	be, err := exec.Open("cpu")
	if err != nil {
		log.Fatal(err)
	}
	defer be.Close()
	prog, err := exec.Compile(be, []*graph.Node{ata, aty})
	if err != nil {
		log.Fatal(err)
	}
	defer prog.Close()

	ta, _ := matconv.FromDense(A) // no copies on the way in
	ty, _ := matconv.FromVecDense(y)
	outs, err := prog.Run(context.Background(), exec.Feeds{a: ta, b: ty})
	if err != nil {
		log.Fatal(err)
	}

	normal, err := matconv.ToSymDense(outs[0]) // AᵀA is symmetric: no copy
	if err != nil {
		log.Fatal(err)
	}
	rhs, err := matconv.ToDense(outs[1])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("AᵀA = %v\nAᵀy = %v\n", mat.Formatted(normal, mat.Prefix("      "), mat.Squeeze()), mat.Formatted(rhs.T(), mat.Squeeze()))

	var ch mat.Cholesky
	if !ch.Factorize(normal) {
		log.Fatal("AᵀA is not positive definite")
	}
	var coef mat.Dense
	if err := ch.SolveTo(&coef, rhs); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("intercept %.6f, slope %.6f\n", coef.At(0, 0), coef.At(1, 0))
	// Output:
	// AᵀA = ⎡4   6⎤
	//       ⎣6  14⎦
	// Aᵀy = [16  34]
	// intercept 1.000000, slope 2.000000
}

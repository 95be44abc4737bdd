package gorgoniaconv_test

import (
	"fmt"

	"github.com/loomgraph/loom/interop/gorgoniaconv"
	lt "github.com/loomgraph/loom/tensor"
	"gorgonia.org/tensor"
)

// Gorgonia's weights become a loom Tensor sharing their memory, and a
// loom result becomes a Dense that Gorgonia's functions read.
func Example() {
	w := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6}))
	x, err := gorgoniaconv.FromDense(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Type(), x.Float64s())

	// Shared: Gorgonia's write is loom's value.
	if err := w.SetAt(60.0, 1, 2); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(x.Float64(5))

	// A transpose that Gorgonia only recorded is copied in row-major order.
	if err := w.T(); err != nil {
		fmt.Println(err)
		return
	}
	wt, err := gorgoniaconv.FromDense(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(wt.Type(), wt.Float64s())

	// And back: loom's rank-0 tensor is Gorgonia's scalar.
	d, err := gorgoniaconv.ToDense(lt.Scalar(float32(0.5)))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Shape(), d.Dtype(), d.Data())
	// Output:
	// f64[2,3] [1 2 3 4 5 6]
	// 60
	// f64[3,2] [1 4 2 5 3 60]
	// () float32 0.5
}

package tensor_test

import (
	"bytes"
	"fmt"

	"github.com/loomgraph/loom/tensor"
)

// New wraps a slice without copying it; Values returns a typed view of the
// same memory; String prints the type and the elements, NumPy style.
func ExampleNew() {
	data := []float32{1, 2, 3, 4, 5, 6}
	t, err := tensor.New(data, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t)
	v, _ := tensor.Values[float32](t)
	v[0] = 10 // writes through to t (and data)
	fmt.Println(t.Type(), data[0], t.Float64(0))

	_, err = tensor.New([]float32{1, 2, 3}, 2, 2)
	fmt.Println(err)
	_, err = tensor.Values[int64](t)
	fmt.Println(err)
	// Output:
	// f32[2,3]
	// [[1 2 3]
	//  [4 5 6]]
	// f32[2,3] 10 10
	// tensor: New: 3 elements do not fill shape [2,2] (4 elements)
	// tensor: dtype mismatch: Values[int64] of a tensor of dtype float32
}

// Make allocates a zero tensor of any dtype, with an error (not a nil
// tensor, as Zeros gives) for an invalid dtype or shape. Scalar makes a
// rank-0 tensor.
func ExampleMake() {
	t, err := tensor.Make(tensor.Int64, 2, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	t.SetFloat64(3, 7.9) // converted as Cast converts: truncated to 7
	fmt.Println(t)
	fmt.Println(tensor.Scalar(true))

	_, err = tensor.Make(tensor.Float32, 2, -1)
	fmt.Println(err)
	// Output:
	// i64[2,2]
	// [[0 0]
	//  [0 7]]
	// b8[] true
	// tensor: dimension 1 of shape [2,-1] is negative
}

// WriteNpz writes tensors as numpy.savez_compressed would (np.load opens
// the archive), and ReadNpz reads .npz archives written by NumPy. A
// bfloat16 tensor cannot be written: NumPy has no bfloat16.
func ExampleWriteNpz() {
	weights, _ := tensor.New([]float32{0.5, -1, 2, 4}, 2, 2)
	tensors := map[string]*tensor.Tensor{
		"weights": weights,
		"step":    tensor.Scalar(int64(1000)),
	}
	var buf bytes.Buffer
	if err := tensor.WriteNpz(&buf, tensors, true); err != nil {
		fmt.Println(err)
		return
	}
	got, err := tensor.ReadNpz(bytes.NewReader(buf.Bytes()), int64(buf.Len()), tensor.NpyLimits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got["weights"])
	fmt.Println(got["step"])

	err = tensor.WriteNpy(&buf, tensor.Zeros(tensor.BFloat16, 2))
	fmt.Println(err)
	// Output:
	// f32[2,2]
	// [[0.5  -1]
	//  [  2   4]]
	// i64[] 1000
	// tensor: npy: dtype bfloat16 has no NumPy equivalent (NumPy has no bfloat16): cast the tensor to float32 first
}

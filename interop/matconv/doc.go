// Package matconv converts between loom's tensors and gonum's matrices
// (gonum.org/v1/gonum/mat), sharing memory wherever the two layouts agree.
//
// A loom tensor is dense and row-major; so are gonum's Dense, VecDense,
// SymDense and CDense when their stride equals their width. Then a
// conversion wraps the same backing array: no element is copied, and a
// write through either side is visible through the other. Every other case
// copies, and each function's documentation says which case is which:
//
//	loom tensor              gonum                  shared when
//	f64[r,c]            <->  *mat.Dense             the Dense's stride is c
//	f64[n]              <->  *mat.VecDense          the VecDense's increment is 1
//	f64[n,n] symmetric  <->  *mat.SymDense          ToSymDense(Upper) only: FromSymDense copies
//	c128[r,c]           <->  *mat.CDense            the CDense's stride is c
//	any mat.Matrix       ->  f64[r,c]               never: FromMatrix copies
//
// To a gonum type, the other real dtypes (float32, float16, bfloat16, the
// integers and bool as 0 and 1) are converted into a new float64 matrix;
// ToCDense takes complex64 and the real dtypes the same way. A complex
// tensor is never silently made real: ToDense rejects it (take ops.Real or
// ops.Imag in the graph first).
//
// gonum has no matrix or vector with a zero dimension (its constructors
// panic), so converting a tensor with a zero dimension is an error. The
// other way, an empty gonum value (the zero Dense, or one after Reset)
// becomes a tensor of shape [0,0] ([0] for a VecDense).
//
// No function panics: bad input (a nil argument, a tensor of the wrong
// rank or dtype, a tensor that is not symmetric) is an error naming the
// function, the tensor's type ("f32[2,3]") and what was needed, and a
// panic raised by a caller's own mat.Matrix inside FromMatrix comes back
// as an error.
//
// A shared conversion is the fast path between a loom Program and gonum's
// linear algebra: Program.RunInto can write its output straight into the
// tensor that ToDense wrapped, so gonum sees each Run's result without a
// copy, and a Dense that gonum filled can be fed to a Run through
// FromDense.
package matconv

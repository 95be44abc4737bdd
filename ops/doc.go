// Package ops defines every primitive loom knows, once: one row of a table
// (Def) per op with its name, arity, dtype rule, shape rule, gradient rule
// and cost estimate; and the builders users call (ops.Add, ops.MatMul,
// ops.Softmax, ...), which check their operands against the row and add a
// node to the operands' graph.
//
// Broadcasting follows NumPy exactly, at any rank. Type promotion follows
// the Array API: within a kind the wider type wins (int32 with int64 gives
// int64, float32 with float64 gives float64), kinds never mix implicitly
// (float32 with int32 is a build error that says to use ops.Cast), and
// ops.Scalar(like, v) makes a constant of like's dtype, as a Python scalar
// would. Float16 and BFloat16 are storage types: only Cast and the data
// movement ops accept them.
//
// Composites (Mean, Var, Std, SumTo, Square, LogSumExp, ExpandDims, Squeeze, Full,
// ...) are plain functions of the primitives.
package ops

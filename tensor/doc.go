// Package tensor holds loom's host n-d arrays: element types (DType),
// shapes, and dense row-major tensors.
//
// It depends on the standard library only. Tensors are plain memory: the
// graph, the optimiser and the backends in other packages give them meaning.
//
// Shapes print as dtype-and-dims, "f32[2,3]", everywhere in loom.
package tensor

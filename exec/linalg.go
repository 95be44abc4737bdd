package exec

import "github.com/loomgraph/loom/internal/opdef"

// ErrSingular: Solve, Inv or TriangularSolve met an exactly singular
// matrix (a zero pivot or a zero diagonal element) at run time (or
// constant folding did, at compile time). The error names the op, the
// matrix of the batch and the node's call site. NumPy raises
// LinAlgError("Singular matrix") there.
var ErrSingular = opdef.ErrSingular

// ErrNotPositiveDefinite: Cholesky met a matrix that is not positive
// definite (a pivot <= 0 or NaN), as NumPy's LinAlgError.
var ErrNotPositiveDefinite = opdef.ErrNotPositiveDefinite

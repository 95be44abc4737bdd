package exec

import "github.com/loomgraph/loom/internal/opdef"

// ErrIndexOutOfRange: an indexing op (ops.Gather, ops.TakeAlongAxis,
// ops.Scatter, ops.ScatterAdd, ops.IndexAdd, ops.SegmentSum) met an index
// outside its axis while the program ran. Run returns it wrapped with the
// step's op, types and call site, and the Variables keep their values.
// (Indices held in a Const are checked when the graph is built, and
// those computed from constants when the program is compiled.)
var ErrIndexOutOfRange = opdef.ErrIndexOutOfRange

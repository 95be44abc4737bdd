package opdef

import (
	"errors"
	"fmt"
)

// ErrIndexOutOfRange is wrapped by the errors of the indexing ops for an
// index outside its axis (after a negative one wraps once): the build
// error of indices held in a Const, the reference evaluator's (constant
// folding's) and the backends' run errors. exec re-exports it.
var ErrIndexOutOfRange = errors.New("index out of range")

// IndexError is the error of index v, element pos of the indices of op,
// outside axis axis of length d: the same words on every backend.
func IndexError(op string, v int64, pos, axis, d int) error {
	return fmt.Errorf("%s: %w: index %d (element %d of the indices) is outside axis %d of length %d (valid: %d..%d)", op, ErrIndexOutOfRange, v, pos, axis, d, -d, d-1)
}

// WrapIndex maps index v along an axis of length d to 0..d-1 (a negative
// one wraps once, as in NumPy), or returns -1 when it is out of range.
func WrapIndex(v int64, d int) int {
	if v < 0 {
		v += int64(d)
	}
	if v < 0 || v >= int64(d) {
		return -1
	}
	return int(v)
}

package tensor

import (
	"errors"
	"testing"
)

// TestValuesWording: the dtype mismatch error of Values names both types
// without an article before the dtype ("a int32 tensor" read wrongly).
func TestValuesWording(t *testing.T) {
	_, err := Values[float32](Zeros(Int32, 2))
	const want = "tensor: dtype mismatch: Values[float32] of a tensor of dtype int32"
	if err == nil || err.Error() != want || !errors.Is(err, ErrDType) {
		t.Errorf("Values[float32] of int32: %v, want %q", err, want)
	}
}

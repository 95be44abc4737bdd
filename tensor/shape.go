package tensor

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Shape lists the dimensions of a tensor, outermost first. A nil or empty
// Shape is a scalar (rank 0), with one element.
type Shape []int

// String formats the shape as "[2,3]" (a scalar is "[]").
func (s Shape) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(']')
	return b.String()
}

// Rank is the number of dimensions.
func (s Shape) Rank() int { return len(s) }

// Size is the number of elements: the product of the dimensions, 1 for a
// scalar. It is -1 if a dimension is negative or the product of the
// non-zero dimensions overflows an int (see Validate), whatever the order
// of the dimensions.
func (s Shape) Size() int {
	n, zero := 1, false
	for _, d := range s {
		switch {
		case d < 0:
			return -1
		case d == 0:
			zero = true
		case n > math.MaxInt/d:
			return -1
		default:
			n *= d
		}
	}
	if zero {
		return 0
	}
	return n
}

// Equal reports whether two shapes have the same dimensions.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// Clone returns a copy that does not share memory with s.
func (s Shape) Clone() Shape {
	if s == nil {
		return nil
	}
	return append(Shape{}, s...)
}

// Strides returns the row-major element strides of s.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// Validate checks that every dimension is non-negative and that the
// product of the non-zero dimensions fits in an int. The rule does not
// depend on the order of the dimensions, and it is NumPy's: a shape such as
// [0, 1<<62, 1<<62] is refused although it has no elements, because its
// strides would overflow. Every shape loom accepts (tensors, graph nodes,
// op attributes) satisfies it.
func (s Shape) Validate() error {
	for i, d := range s {
		if d < 0 {
			return fmt.Errorf("dimension %d of shape %v is negative", i, s)
		}
	}
	if s.Size() < 0 {
		return fmt.Errorf("shape %v: %w: the product of its non-zero dimensions overflows an int", s, ErrTooLarge)
	}
	return nil
}

// TypeString formats a dtype and shape the way loom prints types
// everywhere: "f32[2,3]", "i64[]".
func TypeString(d DType, s Shape) string { return d.Short() + s.String() }

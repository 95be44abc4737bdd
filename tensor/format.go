package tensor

import (
	"math"
	"strconv"
	"strings"
)

// Printing limits, as NumPy's defaults: a tensor with more than
// summariseAbove elements prints the first and last edgeItems of each axis.
const (
	summariseAbove = 1000
	edgeItems      = 3
)

// String formats the tensor NumPy style after its type, truncating large
// tensors with "...":
//
//	f32[2,3]
//	[[1 2 3]
//	 [4 5 6]]
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	summarise := t.Size() > summariseAbove
	// Format the visible elements first to find the column width.
	var cells []string
	var walk func(axis, off int)
	strides := t.shape.Strides()
	walk = func(axis, off int) {
		if axis == len(t.shape) {
			cells = append(cells, t.formatElem(off))
			return
		}
		for _, i := range visible(t.shape[axis], summarise) {
			walk(axis+1, off+i*strides[axis])
		}
	}
	walk(0, 0)
	width := 0
	for _, c := range cells {
		width = max(width, len(c))
	}
	var b strings.Builder
	b.WriteString(t.Type())
	if len(t.shape) >= 2 {
		b.WriteByte('\n')
	} else {
		b.WriteByte(' ')
	}
	next := 0
	var emit func(axis int)
	emit = func(axis int) {
		if axis == len(t.shape) {
			c := cells[next]
			next++
			b.WriteString(strings.Repeat(" ", width-len(c)))
			b.WriteString(c)
			return
		}
		b.WriteByte('[')
		idx := visible(t.shape[axis], summarise)
		for k, i := range idx {
			if k > 0 {
				if axis == len(t.shape)-1 {
					b.WriteByte(' ')
				} else {
					b.WriteString(strings.Repeat("\n", len(t.shape)-1-axis))
					b.WriteString(strings.Repeat(" ", axis+1))
				}
			}
			if summarise && k == edgeItems && i != edgeItems {
				b.WriteString("...")
				if axis == len(t.shape)-1 {
					b.WriteByte(' ')
				} else {
					b.WriteString(strings.Repeat("\n", len(t.shape)-1-axis))
					b.WriteString(strings.Repeat(" ", axis+1))
				}
			}
			emit(axis + 1)
		}
		b.WriteByte(']')
	}
	emit(0)
	return b.String()
}

// visible lists the indices of an axis of length n that are printed.
func visible(n int, summarise bool) []int {
	if !summarise || n <= 2*edgeItems {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	idx := make([]int, 0, 2*edgeItems)
	for i := 0; i < edgeItems; i++ {
		idx = append(idx, i)
	}
	for i := n - edgeItems; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

func (t *Tensor) formatElem(i int) string {
	switch t.dtype {
	case Bool:
		if t.data[i] != 0 {
			return "true"
		}
		return "false"
	case Int8, Int16, Uint8:
		return strconv.FormatInt(int64(t.Float64(i)), 10)
	case Int32:
		return strconv.FormatInt(int64(View[int32](t.data)[i]), 10)
	case Int64:
		return strconv.FormatInt(View[int64](t.data)[i], 10)
	case Float64:
		return strconv.FormatFloat(View[float64](t.data)[i], 'g', -1, 64)
	case Complex64:
		return FormatComplex(complex128(View[complex64](t.data)[i]), 32)
	case Complex128:
		return FormatComplex(View[complex128](t.data)[i], 64)
	default:
		return strconv.FormatFloat(t.Float64(i), 'g', -1, 32)
	}
}

// FormatComplex formats v as NumPy prints a complex number: the real part,
// the imaginary part with its sign, and "j" ("1+2j", "-0.5-1j", "0+1j",
// "nan+infj"), each part in the shortest form that reads back as a float
// of the given bit size (32 or 64).
func FormatComplex(v complex128, bits int) string {
	re, im := complexPart(real(v), bits), complexPart(imag(v), bits)
	if im[0] != '-' {
		im = "+" + im
	}
	return re + im + "j"
}

// complexPart formats one part of a complex number (NaN and the
// infinities as NumPy writes them: nan, inf, -inf).
func complexPart(x float64, bits int) string {
	switch {
	case x != x:
		return "nan"
	case x > math.MaxFloat64:
		return "inf"
	case x < -math.MaxFloat64:
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', -1, bits)
}

package opdef

import (
	"fmt"
	"slices"

	"github.com/loomgraph/loom/graph"
)

// ConvAttr is the attribute of the convolution ops (ops/conv.go), whose
// operands are channels-first: x is [N, C, S...] and the filter w is
// [O, C/Groups, K...] with 1 to 3 spatial dims. Every slice has one entry
// per spatial dim. For Conv, Size is nil; for ConvTranspose (the input
// gradient of a convolution) Size is the spatial size of its result (the
// convolution's input size, which fixes the output padding); for
// ConvFilterGrad (the filter gradient) Size is the filter's spatial size K.
// Stride and Dilation are >= 1, PadLo and PadHi >= 0 (zeros added before
// and after each spatial dim of the convolution's input), Groups >= 1 and
// divides C and O.
type ConvAttr struct {
	Stride, Dilation, PadLo, PadHi []int
	Groups                         int
	Size                           []int
}

func (a ConvAttr) String() string {
	s := fmt.Sprintf("stride=%s dilation=%s pad=%s/%s groups=%d",
		IntList(a.Stride), IntList(a.Dilation), IntList(a.PadLo), IntList(a.PadHi), a.Groups)
	if a.Size != nil {
		s += " size=" + IntList(a.Size)
	}
	return s
}

// EqualAttr compares by value.
func (a ConvAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(ConvAttr)
	return ok && a.Groups == c.Groups && slices.Equal(a.Stride, c.Stride) &&
		slices.Equal(a.Dilation, c.Dilation) && slices.Equal(a.PadLo, c.PadLo) &&
		slices.Equal(a.PadHi, c.PadHi) && slices.Equal(a.Size, c.Size) &&
		(a.Size == nil) == (c.Size == nil)
}

// Spatial is the number of spatial dims the attribute describes.
func (a ConvAttr) Spatial() int { return len(a.Stride) }

// PoolAttr is the attribute of the pooling ops (ops/pool.go) over the
// spatial dims of a channels-first x [N, C, S...] (1 to 3 spatial dims):
// the window (Kernel), Stride, Dilation (MaxPool only; 1 elsewhere), the
// zero or -Inf padding before and after each spatial dim, Ceil (PyTorch's
// ceil_mode: the output size rounds up, but no window starts in the
// trailing padding) and CountIncludePad (AvgPool: the divisor counts the
// padded positions, PyTorch's count_include_pad). Size is the spatial size
// of the pooling's input for the gradient ops whose result has it, and nil
// otherwise.
type PoolAttr struct {
	Kernel, Stride, Dilation, PadLo, PadHi []int
	Ceil, CountIncludePad                  bool
	Size                                   []int
}

func (a PoolAttr) String() string {
	s := fmt.Sprintf("kernel=%s stride=%s dilation=%s pad=%s/%s",
		IntList(a.Kernel), IntList(a.Stride), IntList(a.Dilation), IntList(a.PadLo), IntList(a.PadHi))
	if a.Ceil {
		s += " ceil"
	}
	if a.CountIncludePad {
		s += " count_include_pad"
	}
	if a.Size != nil {
		s += " size=" + IntList(a.Size)
	}
	return s
}

// EqualAttr compares by value.
func (a PoolAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(PoolAttr)
	return ok && a.Ceil == c.Ceil && a.CountIncludePad == c.CountIncludePad &&
		slices.Equal(a.Kernel, c.Kernel) && slices.Equal(a.Stride, c.Stride) &&
		slices.Equal(a.Dilation, c.Dilation) && slices.Equal(a.PadLo, c.PadLo) &&
		slices.Equal(a.PadHi, c.PadHi) && slices.Equal(a.Size, c.Size) &&
		(a.Size == nil) == (c.Size == nil)
}

// Spatial is the number of spatial dims the attribute describes.
func (a PoolAttr) Spatial() int { return len(a.Kernel) }

// ConvOutSize is the length of a convolution's (or floor-mode pooling's)
// result along one spatial dim: the input length in, padded with lo and
// hi, a window of k taps dilation apart, stepping by stride (PyTorch's
// Conv/MaxPool formula). It is 0 when the window does not fit.
func ConvOutSize(in, k, stride, dilation, lo, hi int) int {
	num := in + lo + hi - (dilation*(k-1) + 1)
	if num < 0 {
		return 0 // the window is longer than the padded input
	}
	return num/stride + 1
}

// PoolOutSize is ConvOutSize with PyTorch's ceil_mode when ceil is set:
// the division rounds up, then the last window is dropped when it would
// start in the trailing padding (at or past in+lo).
func PoolOutSize(in, k, stride, dilation, lo, hi int, ceil bool) int {
	if !ceil {
		return ConvOutSize(in, k, stride, dilation, lo, hi)
	}
	span := dilation*(k-1) + 1
	num := in + lo + hi - span
	if num < 0 {
		return 0 // does not fit, as in floor mode
	}
	out := (num+stride-1)/stride + 1
	if (out-1)*stride >= in+lo {
		out--
	}
	return out
}

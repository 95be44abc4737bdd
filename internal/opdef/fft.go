package opdef

import (
	"fmt"
	"math"
	"slices"

	"github.com/loomgraph/loom/graph"
)

// FFTAttr is the attribute of the discrete Fourier transform ops (FFT,
// RFFT, IRFFT; ops/fft.go): the transformed axes, the direction, the
// normalisation, and IRFFT's output length.
//
//   - Axes: non-negative and distinct. For RFFT and IRFFT the last entry
//     is the real axis (the one of length n on the real side and n/2+1 on
//     the complex side), as in numpy.fft.rfftn; the others are complex
//     transforms. Their order does not change the value.
//   - Inverse: FFT only: exp(+2πi·jk/n) instead of exp(-2πi·jk/n).
//   - Norm: "backward" (the default: forward unscaled, inverse by 1/N),
//     "ortho" (both by 1/√N) or "forward" (forward by 1/N, inverse
//     unscaled), where N is the product of the transformed lengths (the
//     real side's for RFFT and IRFFT), as numpy.fft's norm.
//   - N: IRFFT only: the length of the real axis in the result (its
//     operand has N/2+1 elements there).
type FFTAttr struct {
	Axes    []int
	Inverse bool
	Norm    string
	N       int
}

// FFT normalisation modes (FFTAttr.Norm).
const (
	NormBackward = "backward"
	NormOrtho    = "ortho"
	NormForward  = "forward"
)

func (a FFTAttr) String() string {
	s := "axes=" + IntList(a.Axes)
	if a.Inverse {
		s += " inverse"
	}
	s += " norm=" + a.Norm
	if a.N != 0 {
		s += fmt.Sprintf(" n=%d", a.N)
	}
	return s
}

// EqualAttr compares by value.
func (a FFTAttr) EqualAttr(b graph.Attr) bool {
	c, ok := b.(FFTAttr)
	return ok && a.Inverse == c.Inverse && a.Norm == c.Norm && a.N == c.N && slices.Equal(a.Axes, c.Axes)
}

// Check validates the attribute against an operand of the given rank;
// real says whether the op has a real axis (RFFT, IRFFT), and n whether
// it needs N (IRFFT).
func (a FFTAttr) Check(rank int, real, needN bool) error {
	if len(a.Axes) == 0 {
		return ArgErr("no axes to transform")
	}
	for i, ax := range a.Axes {
		if ax < 0 || ax >= rank {
			return ShapeErr("axis %d is out of range for rank %d", ax, rank)
		}
		if slices.Contains(a.Axes[:i], ax) {
			return ArgErr("axis %d is given twice in %s", ax, IntList(a.Axes))
		}
	}
	switch a.Norm {
	case NormBackward, NormOrtho, NormForward:
	default:
		return ArgErr("norm %q is not one of \"backward\", \"ortho\", \"forward\"", a.Norm)
	}
	if real && a.Inverse {
		return ArgErr("the real transforms have no inverse flag (IRFFT is the inverse of RFFT)")
	}
	if needN && a.N < 1 {
		return ArgErr("the output length n = %d must be >= 1", a.N)
	}
	if !needN && a.N != 0 {
		return ArgErr("an output length n = %d is only IRFFT's", a.N)
	}
	return nil
}

// FFTScale is the factor a transform of total length n (the product of
// the transformed lengths) multiplies its unnormalised sum by, for a norm
// mode and direction: 1, 1/√n or 1/n.
func FFTScale(norm string, inverse bool, n int) float64 {
	switch {
	case norm == NormOrtho:
		return 1 / math.Sqrt(float64(n))
	case (norm == NormForward) != inverse:
		return 1 / float64(n)
	}
	return 1
}

// DualNorm is the norm mode of the adjoint transform: the adjoint of a
// transform scaled by 1/n is the opposite direction scaled by 1/n, so
// "backward" and "forward" swap and "ortho" stays.
func DualNorm(norm string) string {
	switch norm {
	case NormBackward:
		return NormForward
	case NormForward:
		return NormBackward
	}
	return norm
}

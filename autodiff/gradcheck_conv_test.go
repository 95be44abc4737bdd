package autodiff_test

import (
	"github.com/loomgraph/loom/autodiff"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// The finite-difference checks of the convolutions (ops/conv.go). Each op
// is bilinear, so the checks are exact up to rounding; they cover both
// operands of all three ops in 1 to 3 spatial dims with strides,
// dilations, asymmetric padding, groups and the depthwise case, and a
// second-order case (the gradient of Conv's input gradient, which runs
// ConvTranspose's rule).
func init() {
	s := func(dims ...int) tensor.Shape { return tensor.Shape(dims) }
	u := uniform(-1, 1)
	two := func(a, b tensor.Shape) []operand { return []operand{{a, u}, {b, u}} }
	attr := func(size ...int) opdef.ConvAttr {
		sp := len(size)
		one := func(v int) []int {
			out := make([]int, sp)
			for i := range out {
				out[i] = v
			}
			return out
		}
		return opdef.ConvAttr{Stride: one(2), Dilation: one(1), PadLo: one(1), PadHi: one(0), Groups: 2, Size: size}
	}
	add := func(name string, cs ...gradCase) { gradCases[name] = append(gradCases[name], cs...) }
	add("Conv",
		gradCase{"1d-strided-dilated", two(s(2, 2, 9), s(3, 2, 3)), func(x []*graph.Node) *graph.Node {
			return ops.Conv(x[0], x[1], ops.Stride(2), ops.Dilation(2), ops.PaddingLoHi([]int{1}, []int{2}))
		}},
		gradCase{"2d-groups", two(s(1, 4, 5, 4), s(4, 2, 3, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Conv(x[0], x[1], ops.Padding(1, 0), ops.Groups(2))
		}},
		gradCase{"2d-depthwise", two(s(2, 3, 4, 4), s(3, 1, 3, 3)), func(x []*graph.Node) *graph.Node {
			return ops.Conv(x[0], x[1], ops.Same, ops.Groups(3))
		}},
		gradCase{"3d", two(s(1, 2, 3, 4, 3), s(2, 2, 2, 2, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Conv(x[0], x[1], ops.Padding(1, 0, 0), ops.Stride(1, 2, 1))
		}},
		// Second order: d/dx and d/dw of <Conv's input gradient, r>.
		gradCase{"second-order", []operand{{s(1, 2, 6), u}, {s(2, 2, 3), u}, {s(1, 2, 3), u}}, func(x []*graph.Node) *graph.Node {
			y := ops.Conv(x[0], x[1], ops.Stride(2), ops.Padding(1))
			dx := autodiff.VJP([]*graph.Node{y}, []*graph.Node{x[0]}, []*graph.Node{x[2]})[0]
			return ops.Mul(dx, ops.Tanh(x[0]))
		}},
	)
	add("ConvTranspose",
		gradCase{"2d-outpad", two(s(1, 2, 3, 2), s(2, 3, 3, 2)), func(x []*graph.Node) *graph.Node {
			return ops.ConvTranspose(x[0], x[1], ops.Stride(2), ops.Padding(1, 0), ops.OutputPadding(1, 1))
		}},
		gradCase{"1d-groups", two(s(2, 4, 4), s(4, 1, 3)), func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpConvTranspose, attr(8), x[0], x[1])
		}},
	)
	add("ConvFilterGrad",
		gradCase{"1d-groups", two(s(2, 4, 8), s(2, 4, 4)), func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpConvFilterGrad, attr(3), x[0], x[1])
		}},
		gradCase{"2d", two(s(1, 2, 5, 4), s(1, 6, 3, 2)), func(x []*graph.Node) *graph.Node {
			return ops.Apply(ops.OpConvFilterGrad, attr(2, 3), x[0], x[1])
		}},
	)
}

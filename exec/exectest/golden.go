package exectest

import (
	"math"

	"github.com/loomgraph/loom/exec"
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/ops"
	"github.com/loomgraph/loom/tensor"
)

// goldenCases have expected values worked out by hand; each Source says
// how.
func goldenCases() []Case {
	f32, f64, i32, i64, b8 := tensor.Float32, tensor.Float64, tensor.Int32, tensor.Int64, tensor.Bool
	i8, i16, u8 := tensor.Int8, tensor.Int16, tensor.Uint8
	nan := math.NaN()
	// float specials for the casts to the small integers
	specials := []float64{1.9, -1.9, nan, math.Inf(1), math.Inf(-1), 300, -300, 127.9, -128.5}
	one := func(name, source string, want *tensor.Tensor, build func(g *graph.Graph) ([]*graph.Node, exec.Feeds)) Case {
		return Case{Name: "golden/" + name, Source: source, Want: []*tensor.Tensor{want}, Build: build}
	}
	unaryIn := func(t *tensor.Tensor, f func(*graph.Node) *graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, t)
			return []*graph.Node{f(ns[0])}, feeds
		}
	}
	binaryIn := func(a, b *tensor.Tensor, f func(a, b *graph.Node) *graph.Node) func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
		return func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
			ns, feeds := Inputs(g, a, b)
			return []*graph.Node{f(ns[0], ns[1])}, feeds
		}
	}
	m23 := func(dt tensor.DType) *tensor.Tensor { return Tensor(dt, []float64{1, 2, 3, 4, 5, 6}, 2, 3) }
	return []Case{
		one("add-row-broadcast", "hand: [[1,2,3],[4,5,6]] + [10,20,30] adds the row to each row",
			Tensor(f32, []float64{11, 22, 33, 14, 25, 36}, 2, 3),
			binaryIn(m23(f32), Tensor(f32, []float64{10, 20, 30}), ops.Add)),
		one("mul-outer", "hand: [[1],[2]] * [[3,4,5]] is the outer product",
			Tensor(f64, []float64{3, 4, 5, 6, 8, 10}, 2, 3),
			binaryIn(Tensor(f64, []float64{1, 2}, 2, 1), Tensor(f64, []float64{3, 4, 5}, 1, 3), ops.Mul)),
		one("matmul-2x2", "hand: [[1,2],[3,4]]x[[5,6],[7,8]] = [[1*5+2*7, 1*6+2*8], [3*5+4*7, 3*6+4*8]]",
			Tensor(f32, []float64{19, 22, 43, 50}, 2, 2),
			binaryIn(Tensor(f32, []float64{1, 2, 3, 4}, 2, 2), Tensor(f32, []float64{5, 6, 7, 8}, 2, 2), ops.MatMul)),
		one("matmul-vec-vec", "hand: [1,2,3].[4,5,6] = 4+10+18 = 32, a scalar",
			Tensor(f64, []float64{32}, []int{}...),
			binaryIn(Tensor(f64, []float64{1, 2, 3}), Tensor(f64, []float64{4, 5, 6}), ops.MatMul)),
		one("matmul-batch-broadcast", "hand: [2,1,2] x [2,1]: batch 0 [1,2].[1,1]=3, batch 1 [3,4].[1,1]=7",
			Tensor(f32, []float64{3, 7}, 2, 1, 1),
			binaryIn(Tensor(f32, []float64{1, 2, 3, 4}, 2, 1, 2), Tensor(f32, []float64{1, 1}, 2, 1), ops.MatMul)),
		one("sum-axis1", "hand: row sums of [[1,2,3],[4,5,6]] are 6 and 15",
			Tensor(f32, []float64{6, 15}, 2),
			unaryIn(m23(f32), func(x *graph.Node) *graph.Node { return ops.Sum(x, 1) })),
		one("max-axis0-keepdims", "hand: column maxima of [[1,2,3],[4,5,6]] are the second row, kept as [1,3]",
			Tensor(f64, []float64{4, 5, 6}, 1, 3),
			unaryIn(m23(f64), func(x *graph.Node) *graph.Node { return ops.MaxKeepDims(x, 0) })),
		one("mean-all", "hand: (1+2+3+4+5+6)/6 = 3.5",
			Tensor(f64, []float64{3.5}, []int{}...),
			unaryIn(m23(f64), func(x *graph.Node) *graph.Node { return ops.Mean(x) })),
		one("argmax-ties-nan", "hand: ties go to the first index (row 0: 3 at 1 and 2 -> 1); a NaN is the largest (row 1 -> 2)",
			Tensor(i64, []float64{1, 2}, 2),
			unaryIn(Tensor(f32, []float64{1, 3, 3, 5, 9, nan}, 2, 3), func(x *graph.Node) *graph.Node { return ops.ArgMax(x, 1) })),
		one("argmax-flat", "hand: the largest of [[1,7],[9,2]] is at row-major index 2",
			Tensor(i64, []float64{2}, []int{}...),
			unaryIn(Tensor(i32, []float64{1, 7, 9, 2}, 2, 2), func(x *graph.Node) *graph.Node { return ops.ArgMax(x) })),
		one("max-nan", "hand: NaN propagates through Max",
			Tensor(f64, []float64{nan, 5}, 2),
			unaryIn(Tensor(f64, []float64{1, nan, 2, 5, 4, 3}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Max(x, 1) })),
		one("softmax-1e4", "math: softmax([1e4, 1e4-1, 1e4-2]) = e^[0,-1,-2]/(1+e^-1+e^-2), computed in Python float64",
			Tensor(f32, []float64{0.6652409557748218, 0.24472847105479764, 0.09003057317038046}, 3),
			unaryIn(Tensor(f32, []float64{1e4, 1e4 - 1, 1e4 - 2}), func(x *graph.Node) *graph.Node { return ops.Softmax(x, 0) })),
		one("logsoftmax-1e4", "math: [0,-1,-2] - log(1+e^-1+e^-2), computed in Python float64",
			Tensor(f64, []float64{-0.4076059644443804, -1.4076059644443804, -2.4076059644443806}, 3),
			unaryIn(Tensor(f64, []float64{-1e4, -1e4 - 1, -1e4 - 2}), func(x *graph.Node) *graph.Node { return ops.LogSoftmax(x, 0) })),
		one("sigmoid-tails", "math: sigmoid(-100) = e^-100/(1+e^-100) = 3.7200759760208356e-44 (Python); sigmoid(100) = 1; sigmoid(0) = 0.5",
			Tensor(f64, []float64{3.7200759760208356e-44, 1, 0.5}, 3),
			unaryIn(Tensor(f64, []float64{-100, 100, 0}), ops.Sigmoid)),
		one("int-floor-div", "hand: Python floor division 7//2=3, -7//2=-4, 7//-2=-4; loom defines x//0 = 0",
			Tensor(i32, []float64{3, -4, -4, 0}, 4),
			binaryIn(Tensor(i32, []float64{7, -7, 7, 5}), Tensor(i32, []float64{2, 2, -2, 0}), ops.Div)),
		one("int-pow", "hand: 2^3=8, 3^0=1, (-2)^3=-8, 2^-1 truncates to 0, (-1)^-3=-1",
			Tensor(i64, []float64{8, 1, -8, 0, -1}, 5),
			binaryIn(Tensor(i64, []float64{2, 3, -2, 2, -1}), Tensor(i64, []float64{3, 0, 3, -1, -3}), ops.Pow)),
		one("cast-saturate", "hand: float to int32 truncates toward zero (1.9->1, -1.9->-1), NaN->0, 3e9 saturates at 2147483647",
			Tensor(i32, []float64{1, -1, 0, 2147483647, -2147483648}, 5),
			unaryIn(Tensor(f32, []float64{1.9, -1.9, nan, 3e9, -3e9}), func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Int32) })),
		one("cast-saturate-small", "hand: float to int8 truncates (1.9->1, -1.9->-1, 127.9->127, -128.5->-128), NaN->0, +-Inf and +-300 saturate at 127 and -128",
			Tensor(i8, []float64{1, -1, 0, 127, -128, 127, -128, 127, -128}, 9),
			unaryIn(Tensor(f32, specials), func(x *graph.Node) *graph.Node { return ops.Cast(x, i8) })),
		one("cast-saturate-uint8", "hand: float to uint8 truncates then saturates at 0 and 255 (-1.9 truncates to -1, saturates to 0; 127.9->127), NaN->0",
			Tensor(u8, []float64{1, 0, 0, 255, 0, 255, 0, 127, 0}, 9),
			unaryIn(Tensor(f64, specials), func(x *graph.Node) *graph.Node { return ops.Cast(x, u8) })),
		one("cast-saturate-int16", "hand: float to int16: 300 and -300 fit; +-Inf saturate at 32767 and -32768; NaN->0",
			Tensor(i16, []float64{1, -1, 0, 32767, -32768, 300, -300, 127, -128}, 9),
			unaryIn(Tensor(f32, specials), func(x *graph.Node) *graph.Node { return ops.Cast(x, i16) })),
		one("cast-wrap-int8", "hand: integers to int8 keep the low 8 bits: 300-256=44, -129+256=127, 65535 -> -1, 128 -> -128",
			Tensor(i8, []float64{44, 127, -1, -128}, 4),
			unaryIn(Tensor(i32, []float64{300, -129, 65535, 128}), func(x *graph.Node) *graph.Node { return ops.Cast(x, i8) })),
		one("cast-wrap-uint8", "hand: integers to uint8 are modulo 256: 300->44, -129->127, 65535->255, -1->255",
			Tensor(u8, []float64{44, 127, 255, 255}, 4),
			unaryIn(Tensor(i64, []float64{300, -129, 65535, -1}), func(x *graph.Node) *graph.Node { return ops.Cast(x, u8) })),
		one("cast-wrap-int16", "hand: int32 to int16 keeps the low 16 bits: 65535 -> -1, 32768 -> -32768, -32769 -> 32767",
			Tensor(i16, []float64{-1, -32768, 32767, 300}, 4),
			unaryIn(Tensor(i32, []float64{65535, 32768, -32769, 300}), func(x *graph.Node) *graph.Node { return ops.Cast(x, i16) })),
		one("add-wraps-int8", "hand: int8 addition wraps: 100+100=200-256=-56, -100-100=-200+256=56, 127+1=-128",
			Tensor(i8, []float64{-56, 56, -128}, 3),
			binaryIn(Tensor(i8, []float64{100, -100, 127}), Tensor(i8, []float64{100, -100, 1}), ops.Add)),
		one("mul-wraps-uint8", "hand: uint8 products modulo 256: 16*16=256->0, 255*255=65025=254*256+1->1, 3*5=15",
			Tensor(u8, []float64{0, 1, 15}, 3),
			binaryIn(Tensor(u8, []float64{16, 255, 3}), Tensor(u8, []float64{16, 255, 5}), ops.Mul)),
		one("neg-abs-wrap-int8", "hand: -(-128) wraps to -128 in int8, as |-128| does (NumPy's too); -(5) = -5",
			Tensor(i8, []float64{-128, -5, -128}, 3),
			unaryIn(Tensor(i8, []float64{-128, 5, -128}), func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.Neg(ops.Slice(x, ops.R(0, 2))), ops.Abs(ops.Slice(x, ops.R(2, 3))))
			})),
		one("neg-uint8", "hand: -x of uint8 is 256-x: -1 -> 255, -0 -> 0, -200 -> 56",
			Tensor(u8, []float64{255, 0, 56}, 3),
			unaryIn(Tensor(u8, []float64{1, 0, 200}), ops.Neg)),
		one("floor-div-int8", "hand: -128 // -1 wraps to -128 (NumPy), 7//2=3, -7//2=-4, 5//0=0 (loom's x//0)",
			Tensor(i8, []float64{-128, 3, -4, 0}, 4),
			binaryIn(Tensor(i8, []float64{-128, 7, -7, 5}), Tensor(i8, []float64{-1, 2, 2, 0}), ops.Div)),
		one("promote-int8-uint8", "hand: int8 with uint8 promotes to int16 (Array API): 127+255 = 382, -128+0 = -128",
			Tensor(i16, []float64{382, -128}, 2),
			binaryIn(Tensor(i8, []float64{127, -128}), Tensor(u8, []float64{255, 0}), ops.Add)),
		one("sum-int8-is-int64", "hand: ops.Sum of int8 is int64 (NumPy, PyTorch): 100+100+100 = 300, -128-128 = -256",
			Tensor(i64, []float64{300, -256}, 2),
			unaryIn(Tensor(i8, []float64{100, 100, 100, -128, -128, 0}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Sum(x, 1) })),
		one("sum-uint8-is-int64", "hand: ops.SumKeepDims of uint8 is int64: 200+200+255 = 655",
			Tensor(i64, []float64{655}, 1),
			unaryIn(Tensor(u8, []float64{200, 200, 255}), func(x *graph.Node) *graph.Node { return ops.SumKeepDims(x, 0) })),
		one("opsum-int8-wraps", "hand: the op OpSum keeps int8 and wraps: 100+100+100 = 300 = 256+44 -> 44",
			Tensor(i8, []float64{44}, []int{}...),
			unaryIn(Tensor(i8, []float64{100, 100, 100}), func(x *graph.Node) *graph.Node {
				return ops.Apply(ops.OpSum, opdef.AxesAttr{Axes: []int{0}}, x)
			})),
		one("max-min-argmax-uint8", "hand: uint8 orders unsigned: max of [3,200,7] is 200 (not -56), at index 1; min is 3",
			Tensor(u8, []float64{200, 3}, 2),
			unaryIn(Tensor(u8, []float64{3, 200, 7}), func(x *graph.Node) *graph.Node {
				return ops.Concat(0, ops.MaxKeepDims(x, 0), ops.MinKeepDims(x, 0))
			})),
		one("argmax-uint8", "hand: the largest of uint8 [3,200,7] is 200, at index 1",
			Tensor(i64, []float64{1}, []int{}...),
			unaryIn(Tensor(u8, []float64{3, 200, 7}), func(x *graph.Node) *graph.Node { return ops.ArgMax(x) })),
		one("and-int8", "hand: 12&10 = 0b1100&0b1010 = 0b1000 = 8; -1&85 = 85; -128&-1 = -128; 5&-6 = 0b0101&...11111010 = 0",
			Tensor(i8, []float64{8, 85, -128, 0}, 4),
			binaryIn(Tensor(i8, []float64{12, -1, -128, 5}), Tensor(i8, []float64{10, 85, -1, -6}), ops.And)),
		one("or-uint8", "hand: 12|10 = 0b1110 = 14; 200|55 = 0b11001000|0b00110111 = 255; 0|0 = 0; 255|1 = 255",
			Tensor(u8, []float64{14, 255, 0, 255}, 4),
			binaryIn(Tensor(u8, []float64{12, 200, 0, 255}), Tensor(u8, []float64{10, 55, 0, 1}), ops.Or)),
		one("xor-int16", "hand: 12^10 = 0b0110 = 6; -1^1 = -2; 32767^-1 = ^32767 = -32768; 0^-32768 = -32768",
			Tensor(i16, []float64{6, -2, -32768, -32768}, 4),
			binaryIn(Tensor(i16, []float64{12, -1, 32767, 0}), Tensor(i16, []float64{10, 1, -1, -32768}), ops.Xor)),
		one("xor-bool", "hand: logical xor: t^t = f, t^f = t, f^t = t, f^f = f",
			Tensor(b8, []float64{0, 1, 1, 0}, 4),
			binaryIn(Tensor(b8, []float64{1, 1, 0, 0}), Tensor(b8, []float64{1, 0, 1, 0}), ops.Xor)),
		one("not-int8", "hand: ~x = -x-1: ~0 = -1, ~5 = -6, ~-128 = 127, ~127 = -128",
			Tensor(i8, []float64{-1, -6, 127, -128}, 4),
			unaryIn(Tensor(i8, []float64{0, 5, -128, 127}), ops.Not)),
		one("not-uint8", "hand: ~x = 255-x for uint8: 255, 250, 55, 0",
			Tensor(u8, []float64{255, 250, 55, 0}, 4),
			unaryIn(Tensor(u8, []float64{0, 5, 200, 255}), ops.Not)),
		one("not-bool", "hand: logical not: t -> f, f -> t",
			Tensor(b8, []float64{0, 1}, 2),
			unaryIn(Tensor(b8, []float64{1, 0}), ops.Not)),
		one("left-shift-int8", "hand: 1<<3 = 8; 1<<7 = 128 wraps to -128; -1<<4 = -16; 3<<8: count = width -> 0; 1<<-1: negative count -> 0; 64<<1 = 128 -> -128 (NumPy's left_shift)",
			Tensor(i8, []float64{8, -128, -16, 0, 0, -128}, 6),
			binaryIn(Tensor(i8, []float64{1, 1, -1, 3, 1, 64}), Tensor(i8, []float64{3, 7, 4, 8, -1, 1}), ops.LeftShift)),
		one("right-shift-int8", "hand: arithmetic: -128>>1 = -64; -128>>7 = -1; 100>>2 = 25; 100>>8: count = width, x >= 0 -> 0; -5>>-1: negative count, x < 0 -> -1; 7>>9 -> 0 (NumPy's right_shift)",
			Tensor(i8, []float64{-64, -1, 25, 0, -1, 0}, 6),
			binaryIn(Tensor(i8, []float64{-128, -128, 100, 100, -5, 7}), Tensor(i8, []float64{1, 7, 2, 8, -1, 9}), ops.RightShift)),
		one("right-shift-uint8", "hand: logical for unsigned: 200>>1 = 100 (arithmetic on int8 -56 would give -28 = 228); 255>>7 = 1; 128>>8: count = width -> 0; 1>>0 = 1",
			Tensor(u8, []float64{100, 1, 0, 1}, 4),
			binaryIn(Tensor(u8, []float64{200, 255, 128, 1}), Tensor(u8, []float64{1, 7, 8, 0}), ops.RightShift)),
		one("left-shift-int64", "hand: 1<<62 = 4611686018427387904; 1<<63 = -2^63 (wraps into the sign bit); -1<<63 = -2^63; 5<<64: count = width -> 0",
			Tensor(i64, []float64{4611686018427387904, -9223372036854775808, -9223372036854775808, 0}, 4),
			binaryIn(Tensor(i64, []float64{1, 1, -1, 5}), Tensor(i64, []float64{62, 63, 63, 64}), ops.LeftShift)),
		one("right-shift-int32", "hand: -2^31>>31 = -1; (2^31-1)>>32: count = width, x >= 0 -> 0; -1>>100 -> -1",
			Tensor(i32, []float64{-1, 0, -1}, 3),
			binaryIn(Tensor(i32, []float64{-2147483648, 2147483647, -1}), Tensor(i32, []float64{31, 32, 100}), ops.RightShift)),
		one("and-promote-int8-uint8", "hand: int8 & uint8 promotes to int16: -1 & 255 = 0x00ff = 255; -128 & 200 = 0xff80 & 0x00c8 = 0x0080 = 128",
			Tensor(i16, []float64{255, 128}, 2),
			binaryIn(Tensor(i8, []float64{-1, -128}), Tensor(u8, []float64{255, 200}), ops.And)),
		one("cast-to-bool", "hand: nonzero (and NaN) is true",
			Tensor(b8, []float64{0, 1, 1, 1}, 4),
			unaryIn(Tensor(f64, []float64{0, -0.5, 2, nan}), func(x *graph.Node) *graph.Node { return ops.Cast(x, tensor.Bool) })),
		one("transpose", "hand: the transpose of [[1,2,3],[4,5,6]]",
			Tensor(i64, []float64{1, 4, 2, 5, 3, 6}, 3, 2),
			unaryIn(m23(i64), func(x *graph.Node) *graph.Node { return ops.Transpose(x) })),
		one("slice-step", "hand: [0..9][1:8:3] = [1,4,7]",
			Tensor(f32, []float64{1, 4, 7}, 3),
			unaryIn(Tensor(f32, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), func(x *graph.Node) *graph.Node { return ops.Slice(x, ops.RS(1, 8, 3)) })),
		one("concat", "hand: [[1,2,3],[4,5,6]] joined with [[7],[8]] along axis 1",
			Tensor(f32, []float64{1, 2, 3, 7, 4, 5, 6, 8}, 2, 4),
			binaryIn(m23(f32), Tensor(f32, []float64{7, 8}, 2, 1), func(a, b *graph.Node) *graph.Node { return ops.Concat(1, a, b) })),
		one("where", "hand: picks a=[1,2,3] where [true,false,true], else the scalar 0",
			Tensor(f32, []float64{1, 0, 3}, 3),
			func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(b8, []float64{1, 0, 1}), Tensor(f32, []float64{1, 2, 3}))
				return []*graph.Node{ops.Where(ns[0], ns[1], ops.Scalar(ns[1], 0))}, feeds
			}),
		one("maximum-nan-relu", "hand: maximum propagates NaN; relu(-0.5)=0, relu(2)=2",
			Tensor(f64, []float64{nan, 2, 0}, 3),
			unaryIn(Tensor(f64, []float64{nan, 2, -0.5}), ops.Relu)),
		one("reshape-rank0-output", "hand: sum of [2,3] ones reshaped to a [1,1,1,1] tensor",
			Tensor(f32, []float64{6}, 1, 1, 1, 1),
			unaryIn(Tensor(f32, []float64{1, 1, 1, 1, 1, 1}, 2, 3), func(x *graph.Node) *graph.Node { return ops.Reshape(ops.Sum(x), 1, 1, 1, 1) })),
		{
			Name:   "golden/const-and-variable",
			Source: "hand: x*w + c with x=[1,2], w=[3,4] (a Variable), c=10 (a Const): [13, 18]",
			Want:   []*tensor.Tensor{Tensor(f32, []float64{13, 18}, 2)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(f32, []float64{1, 2}))
				w := g.Variable("w", Tensor(f32, []float64{3, 4}))
				c := g.Const(Tensor(f32, []float64{10}, []int{}...))
				return []*graph.Node{ops.Add(ops.Mul(ns[0], w), c)}, feeds
			},
		},
		{
			Name:   "golden/output-is-input",
			Source: "hand: an output that is an Input (and one listed twice) is copied through",
			Want:   []*tensor.Tensor{Tensor(f32, []float64{1, 2}, 2), Tensor(f32, []float64{1, 2}, 2), Tensor(f32, []float64{2, 4}, 2), Tensor(f32, []float64{2, 4}, 2)},
			Build: func(g *graph.Graph) ([]*graph.Node, exec.Feeds) {
				ns, feeds := Inputs(g, Tensor(f32, []float64{1, 2}))
				y := ops.Add(ns[0], ns[0])
				return []*graph.Node{ns[0], ns[0], y, y}, feeds
			},
		},
	}
}

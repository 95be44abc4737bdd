package ops

import (
	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The bitwise ops, as NumPy's: And, Or, Xor and Not are one family over
// bools and integers (NumPy's &, |, ^ and ~: logical on bools, bitwise on
// integers, as numpy.bitwise_and and the Array API's bitwise_and accept
// both); LeftShift and RightShift take integers only. None is
// differentiable.
//
// Shifts follow NumPy's (numpy/_core/src/npymath/npy_math_internal.h.src,
// npy_lshift and npy_rshift, which compare (size_t)c with the width): a
// count c with 0 <= c < the dtype's width in bits shifts; any other count
// (negative, or the width or more) gives 0 for a left shift, and for a
// right shift -1 when the value is negative and 0 otherwise. A right shift of a
// signed dtype is arithmetic (copies of the sign bit come in), of an
// unsigned one logical. A left shift wraps as the other integer
// arithmetic does (the bits shifted out are lost).

// Op codes of the bitwise ops beside And, Or and Not (elementwise.go).
var OpXor, OpLeftShift, OpRightShift graph.Op

// boolsOrInts admits bool and the integer dtypes.
var boolsOrInts = opdef.DTypeSet{OK: func(d tensor.DType) bool { return d.IsBool() || d.IsInt() }, What: "a bool or integer dtype"}

// declareBitwise declares And, Or, Not, Xor, LeftShift and RightShift
// (called from elementwise.go's init, where And, Or and Not always were,
// so that the op codes keep their order).
func declareBitwise() {
	logic := func(name, doc string, arity int, f func(x []float64) float64, i func(x []int64) int64) graph.Op {
		sh := shBroadcast
		if arity == 1 {
			sh = shSame
		}
		return define(&opdef.Def{Name: name, Doc: doc, Arity: arity, Kind: opdef.Elementwise, DType: sameDType(boolsOrInts), Shape: sh,
			Commutative: arity == 2, F64: f, I64: i, IntDomain: []opdef.Interval{{Lo: -100, Hi: 100}}})
	}
	// F64 computes on bools (0 and 1), I64 on integers (exact; the
	// evaluator wraps the result to the dtype).
	OpAnd = logic("And", "logical and of bools, bitwise and of integers (NumPy's &)", 2,
		func(x []float64) float64 { return opdef.Bool(x[0] != 0 && x[1] != 0) }, func(x []int64) int64 { return x[0] & x[1] })
	OpOr = logic("Or", "logical or of bools, bitwise or of integers (NumPy's |)", 2,
		func(x []float64) float64 { return opdef.Bool(x[0] != 0 || x[1] != 0) }, func(x []int64) int64 { return x[0] | x[1] })
	OpNot = logic("Not", "logical not of a bool, bitwise not of an integer (NumPy's ~: -x-1 signed, 255-x for uint8)", 1,
		func(x []float64) float64 { return opdef.Bool(x[0] == 0) }, func(x []int64) int64 { return ^x[0] })
	OpXor = logic("Xor", "logical xor of bools (a != b), bitwise xor of integers (NumPy's ^)", 2,
		func(x []float64) float64 { return opdef.Bool((x[0] != 0) != (x[1] != 0)) }, func(x []int64) int64 { return x[0] ^ x[1] })

	shift := func(name, doc string, i func(a, c int64) int64) graph.Op {
		return define(&opdef.Def{Name: name, Doc: doc, Arity: 2, Kind: opdef.Elementwise, DType: sameDType(opdef.Ints), Shape: shBroadcast,
			I64: func(x []int64) int64 { return i(x[0], x[1]) },
			// counts from -3 to 69: negative, within every width, and past
			// every width (8 to 64)
			IntDomain: []opdef.Interval{{Lo: -100, Hi: 100}, {Lo: -3, Hi: 70}}})
	}
	OpLeftShift = shift("LeftShift", "a << c, wrapping; a count < 0 or >= the width in bits gives 0 (NumPy's left_shift)", ShiftLeft64)
	OpRightShift = shift("RightShift", "a >> c, arithmetic for signed, logical for unsigned; a count < 0 or >= the width gives -1 for a < 0, else 0 (NumPy's right_shift)", ShiftRight64)
}

// ShiftLeft64 is LeftShift computed in int64, the reference of every
// integer dtype: the result wraps to the dtype afterwards, which for a
// narrower dtype gives 0 from a count of its width or more (every bit
// kept was shifted in as 0), as NumPy does. A negative count, seen as an
// unsigned count of 2^64 - |c|, gives 0 too (Go defines shifts by any
// unsigned count).
func ShiftLeft64(a, c int64) int64 { return a << uint64(c) }

// ShiftRight64 is RightShift computed in int64: arithmetic on the value,
// which the dtype holds sign-extended (signed) or zero-extended
// (unsigned), so a count of the dtype's width or more already gives -1
// or 0 by sign; a negative count (a huge unsigned one) gives the same.
func ShiftRight64(a, c int64) int64 { return a >> uint64(c) }

// And returns the logical and of two Bool operands, or the bitwise and
// of two integer operands (NumPy's &); integers of different dtypes are
// promoted first.
func And(a, b *graph.Node) *graph.Node { return bitwise(OpAnd, a, b) }

// Or returns the logical or of two Bool operands, or the bitwise or of
// two integer operands (NumPy's |).
func Or(a, b *graph.Node) *graph.Node { return bitwise(OpOr, a, b) }

// Xor returns the logical exclusive or of two Bool operands (a != b), or
// the bitwise exclusive or of two integer operands (NumPy's ^).
func Xor(a, b *graph.Node) *graph.Node { return bitwise(OpXor, a, b) }

// Not returns the logical negation of a Bool operand, or the bitwise
// complement of an integer operand (NumPy's ~ and invert: ^x, which is
// -x-1 for signed integers and 255-x for Uint8).
func Not(x *graph.Node) *graph.Node { return Apply(OpNot, nil, x) }

// LeftShift returns a shifted left by c bits, elementwise with NumPy
// broadcasting, for integer operands (promoted to one dtype). Bits shifted
// past the width are lost (the result wraps); a count that is negative or
// at least the dtype's width in bits gives 0, as NumPy's left_shift.
func LeftShift(a, c *graph.Node) *graph.Node { return bitwise(OpLeftShift, a, c) }

// RightShift returns a shifted right by c bits, for integer operands:
// arithmetic (sign-extending) for signed dtypes, logical for Uint8. A
// count that is negative or at least the dtype's width in bits gives -1
// where a is negative and 0 elsewhere, as NumPy's right_shift.
func RightShift(a, c *graph.Node) *graph.Node { return bitwise(OpRightShift, a, c) }

// bitwise builds a two-operand bitwise op, promoting integer operands of
// different dtypes (int8 with uint8 gives int16) as binary does.
func bitwise(op graph.Op, a, b *graph.Node) *graph.Node { return binary(op, a, b) }

package simd

// The generic accessors: the kernels of an operation for any element type,
// so that code generic in the element type (exec/cpu's op table) names an
// operation once. float32 and float64 get the exported kernels (assembly,
// or the pure-Go loops at level go; the level is read at every call, not
// when the accessor runs); the other types get the pure-Go loops of
// purego.go. Each returns nil kernels for an operation it has none of for
// T (Div for integers, Exp for integers, And for floats).

// Number is the element types of the generic accessors: the fixed-size
// integer and float types (bool is uint8 0 or 1).
type Number interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// Bits is the element types of the selects (any element, by its bits).
type Bits interface {
	uint8 | uint16 | uint32 | uint64
}

// ArithOp names a binary operation of Binary. The zero value names none.
type ArithOp uint8

const (
	Add ArithOp = iota + 1 // a + b (integers wrap)
	Sub                    // a - b (integers wrap)
	Mul                    // a * b (integers wrap)
	Div                    // a / b, float types only
	Max                    // max(a, b) as Go's builtin: NaN propagates, -0 < +0
	Min                    // min(a, b) as Go's builtin
	And                    // a & b, integer types only
	Or                     // a | b, integer types only
)

// UnaryOp names a unary operation of Unary. The zero value names none.
type UnaryOp uint8

const (
	Neg     UnaryOp = iota + 1 // -x (floats flip the sign bit, integers wrap)
	Abs                        // |x| (floats clear the sign bit; the most negative integer stays)
	Sign                       // 1 or -1 by the sign of x, x itself for 0, -0 and NaN
	Relu                       // max(x, 0) as Go's builtin (NaN propagates, max(-0, 0) = +0)
	Sqrt                       // float types only, as SqrtF32
	Exp                        // float types only, as ExpF32
	Log                        // float types only, as LogF32
	Tanh                       // float types only, as TanhF32
	Sigmoid                    // float types only, as SigmoidF32
)

// Swapped is the comparison with its operands exchanged: s op b[i] is
// b[i] op.Swapped() s.
func (op CmpOp) Swapped() CmpOp {
	switch op {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return op
}

// floatSet is the exported kernels of one float type, so that the
// accessors are written once for both.
type floatSet[T Number] struct {
	add, sub, mul, div, max, min                     func(d, a, b []T)
	addS, subS, rsubS, mulS, divS, rdivS, maxS, minS func(d, a []T, s T)
	neg, abs, sqrt, exp, log, tanh, sigmoid          func(d, a []T)
	cmp                                              func(op CmpOp, d []uint8, a, b []T)
	cmpS                                             func(op CmpOp, d []uint8, a []T, s T)
}

var (
	set32 = &floatSet[float32]{
		AddF32, SubF32, MulF32, DivF32, MaxF32, MinF32,
		AddSF32, SubSF32, RSubSF32, MulSF32, DivSF32, RDivSF32, MaxSF32, MinSF32,
		NegF32, AbsF32, SqrtF32, ExpF32, LogF32, TanhF32, SigmoidF32,
		CmpF32, CmpSF32,
	}
	set64 = &floatSet[float64]{
		AddF64, SubF64, MulF64, DivF64, MaxF64, MinF64,
		AddSF64, SubSF64, RSubSF64, MulSF64, DivSF64, RDivSF64, MaxSF64, MinSF64,
		NegF64, AbsF64, SqrtF64, ExpF64, LogF64, TanhF64, SigmoidF64,
		CmpF64, CmpSF64,
	}
)

// floatSetOf returns T's kernels when T is a float type, else nil.
func floatSetOf[T Number]() *floatSet[T] {
	switch any(*new(T)).(type) {
	case float32:
		return any(set32).(*floatSet[T])
	case float64:
		return any(set64).(*floatSet[T])
	}
	return nil
}

// swap turns a kernel with the scalar on the right into one with the
// scalar on the left, for a commutative operation or a reversed kernel.
func swap[T any](f func(d, a []T, s T)) func(d []T, s T, b []T) {
	return func(d []T, s T, b []T) { f(d, b, s) }
}

// Binary returns op's kernels for T: vv sets d[i] = a[i] op b[i], vs sets
// d[i] = a[i] op s, and sv sets d[i] = s op b[i]. They are nil when op has
// no kernel for T.
func Binary[T Number](op ArithOp) (vv func(d, a, b []T), vs func(d, a []T, s T), sv func(d []T, s T, b []T)) {
	if f := floatSetOf[T](); f != nil {
		switch op {
		case Add:
			return f.add, f.addS, swap(f.addS)
		case Sub:
			return f.sub, f.subS, swap(f.rsubS)
		case Mul:
			return f.mul, f.mulS, swap(f.mulS)
		case Div:
			return f.div, f.divS, swap(f.rdivS)
		case Max:
			return f.max, f.maxS, swap(f.maxS)
		case Min:
			return f.min, f.minS, swap(f.minS)
		}
		return nil, nil, nil
	}
	switch op {
	case Add:
		return addGo[T], addSGo[T], swap(addSGo[T])
	case Sub:
		return subGo[T], subSGo[T], swap(rsubSGo[T])
	case Mul:
		return mulGo[T], mulSGo[T], swap(mulSGo[T])
	case Max:
		return maxGo[T], maxSGo[T], swap(maxSGo[T])
	case Min:
		return minGo[T], minSGo[T], swap(minSGo[T])
	case And:
		return andGo[T], andSGo[T], swap(andSGo[T])
	case Or:
		return orGo[T], orSGo[T], swap(orSGo[T])
	}
	return nil, nil, nil
}

// Unary returns op's kernel for T (d[i] = op a[i]), or nil when op has
// none for T.
func Unary[T Number](op UnaryOp) func(d, a []T) {
	if f := floatSetOf[T](); f != nil {
		switch op {
		case Neg:
			return f.neg
		case Abs:
			return f.abs
		case Sign:
			return signGo[T]
		case Relu:
			return func(d, a []T) { f.maxS(d, a, 0) }
		case Sqrt:
			return f.sqrt
		case Exp:
			return f.exp
		case Log:
			return f.log
		case Tanh:
			return f.tanh
		case Sigmoid:
			return f.sigmoid
		}
		return nil
	}
	switch op {
	case Neg:
		return negGo[T]
	case Abs:
		return absIntGo[T]
	case Sign:
		return signGo[T]
	case Relu:
		return func(d, a []T) { maxSGo(d, a, 0) }
	}
	return nil
}

// Compare returns op's comparisons for T, writing 1 where the comparison
// holds and 0 elsewhere: vv compares a[i] with b[i], vs a[i] with s, and
// sv s with b[i]. NaN compares false except with Ne.
func Compare[T Number](op CmpOp) (vv func(d []uint8, a, b []T), vs func(d []uint8, a []T, s T), sv func(d []uint8, s T, b []T)) {
	cmp, cmpS := cmpGo[T], cmpSGo[T]
	if f := floatSetOf[T](); f != nil {
		cmp, cmpS = f.cmp, f.cmpS
	}
	sw := op.Swapped()
	return func(d []uint8, a, b []T) { cmp(op, d, a, b) },
		func(d []uint8, a []T, s T) { cmpS(op, d, a, s) },
		func(d []uint8, s T, b []T) { cmpS(sw, d, b, s) }
}

// Select returns the selects for elements of T's size: vv sets d[i] =
// x[i] if c[i] != 0, else y[i]; vs the same with the scalar s for y.
func Select[T Bits]() (vv func(d []T, c []uint8, x, y []T), vs func(d []T, c []uint8, x []T, s T)) {
	switch any(*new(T)).(type) {
	case uint32:
		return any(SelectU32).(func(d []T, c []uint8, x, y []T)), any(SelectSU32).(func(d []T, c []uint8, x []T, s T))
	case uint64:
		return any(SelectU64).(func(d []T, c []uint8, x, y []T)), any(SelectSU64).(func(d []T, c []uint8, x []T, s T))
	}
	return selGo[T], selSGo[T]
}

package simd

import (
	"math"
	"math/rand"
	"testing"
)

// TestGenericAccessors checks Binary, Unary, Compare and Select for every
// element type at every level, on every length of 0..40 (the unrolled
// loops' main part and tails), with the result written over an operand
// too. The oracles compute each element on its own: integers in uint64 or
// int64 arithmetic truncated to the type (two's complement), floats with
// the exported kernels (whose oracles are in oracle_test.go) or, for
// Sign and Relu, by their definition.
func TestGenericAccessors(t *testing.T) {
	forLevels(t, func(t *testing.T) {
		t.Run("int8", testGeneric[int8])
		t.Run("int16", testGeneric[int16])
		t.Run("int32", testGeneric[int32])
		t.Run("int64", testGeneric[int64])
		t.Run("uint8", testGeneric[uint8])
		t.Run("uint16", testGeneric[uint16])
		t.Run("uint32", testGeneric[uint32])
		t.Run("uint64", testGeneric[uint64])
		t.Run("float32", testGeneric[float32])
		t.Run("float64", testGeneric[float64])
		t.Run("select8", testSelect[uint8])
		t.Run("select16", testSelect[uint16])
		t.Run("select32", testSelect[uint32])
		t.Run("select64", testSelect[uint64])
	})
}

func isFloat[T Number]() bool { return floatSetOf[T]() != nil }

func isSigned[T Number]() bool {
	var z T
	return z-1 < 0
}

// randNum draws a value of T: any bits for integers; for floats a value
// from -8 to 8 in steps of 1/4, an infinity or -0.
func randNum[T Number](rng *rand.Rand) T {
	if isFloat[T]() {
		switch rng.Intn(8) {
		case 0:
			return T(math.Inf(1 - 2*rng.Intn(2)))
		case 1:
			var z T
			return -z // -0
		}
		return T(float64(rng.Intn(65)-32) / 4)
	}
	if rng.Intn(4) == 0 {
		return T(rng.Intn(7) - 3) // small values, signs and zeros
	}
	return T(rng.Uint64())
}

// wrap converts an exact integer result (as uint64 bits) to T.
func wrap[T Number](bits uint64) T { return T(bits) }

// binOracle is one element of op, and whether op has a kernel for T.
func binOracle[T Number](op ArithOp, x, y T) (T, bool) {
	if isFloat[T]() {
		a, b := float64(x), float64(y)
		switch op {
		case Add:
			return T(a + b), true
		case Sub:
			return T(a - b), true
		case Mul:
			return T(a * b), true
		case Div:
			return T(a / b), true
		case Max:
			return T(math.Max(a, b)), true // no NaNs drawn; Max(-0, 0) = 0 as Go's max
		case Min:
			return T(math.Min(a, b)), true
		}
		return 0, false
	}
	ux, uy := uint64(x), uint64(y) // sign-extended for signed types
	switch op {
	case Add:
		return wrap[T](ux + uy), true
	case Sub:
		return wrap[T](ux - uy), true
	case Mul:
		return wrap[T](ux * uy), true
	case And:
		return wrap[T](ux & uy), true
	case Or:
		return wrap[T](ux | uy), true
	case Max, Min:
		less := ux < uy
		if isSigned[T]() {
			less = int64(ux) < int64(uy)
		}
		if less == (op == Min) {
			return x, true
		}
		return y, true
	}
	return 0, false
}

func unOracle[T Number](op UnaryOp, x T) (T, bool) {
	if isFloat[T]() {
		a := float64(x)
		switch op {
		case Neg:
			return T(-a), true
		case Abs:
			return T(math.Abs(a)), true
		case Sign:
			switch {
			case a > 0:
				return 1, true
			case a < 0:
				one := T(1)
				return -one, true
			}
			return x, true
		case Relu:
			if a > 0 {
				return x, true
			}
			return 0, true // +0 for -0 as well
		}
		// the approximations: from the exported kernel itself
		return 0, op == Sqrt || op == Exp || op == Log || op == Tanh || op == Sigmoid
	}
	ux := uint64(x)
	neg := isSigned[T]() && int64(ux) < 0
	switch op {
	case Neg:
		return wrap[T](-ux), true
	case Abs:
		if neg {
			return wrap[T](-ux), true
		}
		return x, true
	case Sign:
		switch {
		case neg:
			return wrap[T](math.MaxUint64), true // -1
		case ux != 0:
			return 1, true
		}
		return 0, true
	case Relu:
		if neg {
			return 0, true
		}
		return x, true
	}
	return 0, false
}

func genCmp[T Number](op CmpOp, x, y T) uint8 {
	var lt, eq bool
	switch {
	case isFloat[T]():
		lt, eq = float64(x) < float64(y), float64(x) == float64(y)
	case isSigned[T]():
		lt, eq = int64(uint64(x)) < int64(uint64(y)), x == y
	default:
		lt, eq = uint64(x) < uint64(y), x == y
	}
	var r bool
	switch op {
	case Eq:
		r = eq
	case Ne:
		r = !eq
	case Lt:
		r = lt
	case Le:
		r = lt || eq
	case Gt:
		r = !lt && !eq
	case Ge:
		r = !lt
	}
	return u8(r)
}

// sameNum: equal values (NaN equals NaN), and for floats equal signs of
// zeros.
func sameNum[T Number](x, y T) bool {
	if x != x && y != y {
		return true
	}
	if x != y {
		return false
	}
	if isFloat[T]() && x == 0 {
		return math.Signbit(float64(x)) == math.Signbit(float64(y))
	}
	return true
}

func testGeneric[T Number](t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for n := 0; n <= 40; n++ {
		a, b, d := make([]T, n), make([]T, n), make([]T, n)
		for i := range a {
			a[i], b[i] = randNum[T](rng), randNum[T](rng)
		}
		s := randNum[T](rng)
		for op := Add; op <= Or; op++ {
			vv, vs, sv := Binary[T](op)
			_, has := binOracle(op, s, s)
			if !has {
				if vv != nil || vs != nil || sv != nil {
					t.Fatalf("Binary(%d) has kernels for a type it must not", op)
				}
				continue
			}
			check := func(form string, f func(d []T), x func(i int) T, y func(i int) T) {
				f(d)
				for i := range d {
					want, _ := binOracle(op, x(i), y(i))
					if !sameNum(d[i], want) {
						t.Fatalf("Binary(%d) %s n=%d [%d]: %v op %v = %v, want %v", op, form, n, i, x(i), y(i), d[i], want)
					}
				}
			}
			at := func(v []T) func(int) T { return func(i int) T { return v[i] } }
			scalar := func(int) T { return s }
			check("vv", func(d []T) { vv(d, a, b) }, at(a), at(b))
			check("vs", func(d []T) { vs(d, a, s) }, at(a), scalar)
			check("sv", func(d []T) { sv(d, s, b) }, scalar, at(b))
			// d aliasing the first operand
			c := append([]T(nil), a...)
			vv(c, c, b)
			for i := range c {
				if want, _ := binOracle(op, a[i], b[i]); !sameNum(c[i], want) {
					t.Fatalf("Binary(%d) in place n=%d [%d]: %v, want %v", op, n, i, c[i], want)
				}
			}
		}
		for op := Neg; op <= Sigmoid; op++ {
			f := Unary[T](op)
			_, has := unOracle(op, s)
			if !has {
				if f != nil {
					t.Fatalf("Unary(%d) has a kernel for a type it must not", op)
				}
				continue
			}
			f(d, a)
			var ref []T // the approximations' exported kernel
			if fs := floatSetOf[T](); fs != nil && op >= Sqrt {
				ref = make([]T, n)
				map[UnaryOp]func(d, a []T){Sqrt: fs.sqrt, Exp: fs.exp, Log: fs.log, Tanh: fs.tanh, Sigmoid: fs.sigmoid}[op](ref, a)
			}
			for i := range d {
				want, _ := unOracle(op, a[i])
				if ref != nil {
					want = ref[i]
				}
				if !sameNum(d[i], want) {
					t.Fatalf("Unary(%d) n=%d [%d]: f(%v) = %v, want %v", op, n, i, a[i], d[i], want)
				}
			}
		}
		got := make([]uint8, n)
		for op := Eq; op <= Ge; op++ {
			vv, vs, sv := Compare[T](op)
			vv(got, a, b)
			for i := range got {
				if want := genCmp(op, a[i], b[i]); got[i] != want {
					t.Fatalf("Compare(%d) vv n=%d [%d]: %v, %v gives %d", op, n, i, a[i], b[i], got[i])
				}
			}
			vs(got, a, s)
			for i := range got {
				if want := genCmp(op, a[i], s); got[i] != want {
					t.Fatalf("Compare(%d) vs n=%d [%d]: %v, %v gives %d", op, n, i, a[i], s, got[i])
				}
			}
			sv(got, s, b)
			for i := range got {
				if want := genCmp(op, s, b[i]); got[i] != want {
					t.Fatalf("Compare(%d) sv n=%d [%d]: %v, %v gives %d", op, n, i, s, b[i], got[i])
				}
			}
		}
	}
}

func testSelect[T Bits](t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	vv, vs := Select[T]()
	for n := 0; n <= 40; n++ {
		c, x, y, d := make([]uint8, n), make([]T, n), make([]T, n), make([]T, n)
		for i := range c {
			c[i], x[i], y[i] = uint8(rng.Intn(2)), T(rng.Uint64()), T(rng.Uint64())
		}
		s := T(rng.Uint64())
		vv(d, c, x, y)
		for i := range d {
			if want := map[bool]T{true: x[i], false: y[i]}[c[i] != 0]; d[i] != want {
				t.Fatalf("select vv n=%d [%d]: %v, want %v", n, i, d[i], want)
			}
		}
		vs(d, c, x, s)
		for i := range d {
			if want := map[bool]T{true: x[i], false: s}[c[i] != 0]; d[i] != want {
				t.Fatalf("select vs n=%d [%d]: %v, want %v", n, i, d[i], want)
			}
		}
	}
}

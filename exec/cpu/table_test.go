package cpu

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/loomgraph/loom/graph"
	"github.com/loomgraph/loom/internal/opdef"
	"github.com/loomgraph/loom/tensor"
)

// The dtypes an elementwise op's rule is tried with.
var allDTypes = tensor.DTypes()

// admitted is one way of calling an elementwise op that its declaration
// accepts: the operand dtypes, the attribute and the result dtype.
type admitted struct {
	in   []tensor.DType
	attr graph.Attr
	out  tensor.DType
}

func (c admitted) String() string {
	if c.attr != nil {
		return fmt.Sprintf("%v [%v]", c.in, c.attr)
	}
	return fmt.Sprint(c.in)
}

// admittedCalls lists every call of d that its rules accept: each dtype
// as every operand (bool, T, T for three operands) of shape [3, 4], with
// no attribute or a CastAttr to each dtype.
func admittedCalls(d *opdef.Def) []admitted {
	attrs := []graph.Attr{nil}
	for _, to := range allDTypes {
		attrs = append(attrs, opdef.CastAttr{To: to})
	}
	var out []admitted
	for _, dt := range allDTypes {
		in := make([]tensor.DType, d.Arity)
		for i := range in {
			in[i] = dt
		}
		if d.Arity == 3 {
			in[0] = tensor.Bool
		}
		shapes := make([]tensor.Shape, d.Arity)
		for i := range shapes {
			shapes[i] = tensor.Shape{3, 4}
		}
		for _, attr := range attrs {
			r, err := d.DType(in, attr)
			if _, serr := d.Shape(shapes, attr); err == nil && serr == nil {
				out = append(out, admitted{in, attr, r})
			}
		}
	}
	return out
}

// patterns lists the operand stride patterns a micro-op meets: every
// operand a vector, and each mix of vectors and scalars (all scalars
// included, which microFor handles).
func patterns(arity int) [][]int {
	var out [][]int
	for mask := 0; mask < 1<<arity; mask++ {
		st := make([]int, arity)
		for k := range st {
			if mask&(1<<k) == 0 {
				st[k] = 1
			}
		}
		out = append(out, st)
	}
	return out
}

// TestTableCoversDeclarations: for every elementwise op of the
// declarations and every dtype its rule admits, the table has an entry
// that prepares a standalone kernel and builds a fused micro-op for every
// pattern of vector and scalar operands. It names each missing (op,
// dtypes).
func TestTableCoversDeclarations(t *testing.T) {
	for _, d := range opdef.Defs() {
		if d.Kind != opdef.Elementwise {
			continue
		}
		calls := admittedCalls(d)
		if len(calls) == 0 {
			t.Errorf("%s: its rule admits none of %v (the test's dtypes need updating?)", d.Name, allDTypes)
		}
		e, ok := table[d.Op]
		if !ok {
			t.Errorf("%s: no entry in the CPU table", d.Name)
			continue
		}
		if e.micro == nil {
			t.Errorf("%s: its entry has no micro-op (an elementwise op needs an elementwise entry)", d.Name)
			continue
		}
		for _, c := range calls {
			g := graph.New()
			var ins []*graph.Node
			for i, dt := range c.in {
				ins = append(ins, g.Input(fmt.Sprintf("x%d", i), dt, 3, 4))
			}
			n := opdef.Apply(d.Op, c.attr, ins...)
			if err := g.Err(); err != nil {
				t.Fatalf("%s %v: %v", d.Name, c, err)
			}
			if _, err := e.prepare(n); err != nil {
				t.Errorf("%s %v: no standalone kernel: %v", d.Name, c, err)
			}
			for _, st := range patterns(d.Arity) {
				if _, err := e.microFor(c.out, c.in, st); err != nil {
					t.Errorf("%s %v: no fused micro-op for strides %v: %v", d.Name, c, st, err)
				}
			}
		}
	}
}

// sample returns n values of dtype dt for operand k, specials included
// (values differ between operands).
func sample(dt tensor.DType, n, k int) []byte {
	var vals []float64
	switch {
	case dt == tensor.Bool:
		vals = []float64{0, 1, 1, 0, 1}
	case dt.IsInt():
		vals = []float64{0, 1, -1, 7, -7, 3, 2, -3, 100, -64, 5, 1 << 30, -(1 << 30), 2147483647, -2147483648}
	default:
		vals = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 2.5, -3, 10, math.NaN(), math.Inf(1), math.Inf(-1), 1e-3, 100, -0.75, 3.25}
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = vals[(i*(k+2)+k)%len(vals)]
	}
	t, err := tensor.FromFloat64s(dt, out)
	if err != nil {
		panic(err)
	}
	return t.Bytes()
}

// sameElems compares two runs of dtype dt element by element: floats as
// equal when both are NaN, otherwise by bits (so -0 differs from +0) or,
// with ulps > 0, within ulps units in the last place; other dtypes by
// their bytes.
func sameElems(dt tensor.DType, got, want []byte, ulps float64) (int, bool) {
	if !dt.IsFloat() {
		es := dt.Size()
		for i := 0; i < len(got); i += es {
			if string(got[i:i+es]) != string(want[i:i+es]) {
				return i / es, false
			}
		}
		return 0, true
	}
	x, _ := tensor.FromBytes(dt, append([]byte(nil), got...), len(got)/dt.Size())
	y, _ := tensor.FromBytes(dt, append([]byte(nil), want...), len(want)/dt.Size())
	for i := 0; i < x.Size(); i++ {
		a, b := x.Float64(i), y.Float64(i)
		switch {
		case a != a || b != b:
			if a == a || b == b {
				return i, false
			}
		case ulps > 0 && a != b:
			ulp := math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b)
			if dt == tensor.Float32 {
				ulp = float64(math.Nextafter32(float32(math.Abs(b)), float32(math.Inf(1))) - float32(math.Abs(b)))
			}
			if math.IsInf(a, 0) || math.IsInf(b, 0) || math.Abs(a-b) > ulps*ulp {
				return i, false
			}
		case math.Float64bits(a) != math.Float64bits(b):
			return i, false
		}
	}
	return 0, true
}

// runMicro runs f over m elements of the operands (a scalar operand is its
// first element) and returns the result bytes.
func runMicro(f microFn, out tensor.DType, ops [][]byte, in []tensor.DType, st []int, m int) []byte {
	d := make([]byte, m*out.Size())
	var p [3]unsafe.Pointer
	for k := range ops {
		n := m * in[k].Size()
		if st[k] == 0 {
			n = in[k].Size()
		}
		p[k] = addr(ops[k], 0, n)
	}
	f(m, addr(d, 0, len(d)), p[0], p[1], p[2])
	return d
}

// TestMicroOpPatterns: for every elementwise op and admitted dtype, the
// micro-op with scalar operands (the vs, sv and all-scalar kernels, and
// Where's selects) gives what the all-vector micro-op gives on the scalar
// repeated.
func TestMicroOpPatterns(t *testing.T) {
	const m = 37 // a main loop and a tail
	runs := 0
	defer func() { t.Logf("%d micro-ops with scalar operands checked", runs) }()
	for _, d := range opdef.Defs() {
		e, ok := table[d.Op]
		if d.Kind != opdef.Elementwise || !ok || e.micro == nil {
			continue // TestTableCoversDeclarations reports these
		}
		for _, c := range admittedCalls(d) {
			ones := patterns(d.Arity)[0]
			vec, err := e.microFor(c.out, c.in, ones)
			if err != nil {
				continue
			}
			for _, st := range patterns(d.Arity)[1:] {
				f, err := e.microFor(c.out, c.in, st)
				if err != nil {
					continue
				}
				ops := make([][]byte, d.Arity)
				spread := make([][]byte, d.Arity) // scalars repeated
				for k := range ops {
					ops[k] = sample(c.in[k], m, k)
					spread[k] = ops[k]
					if st[k] == 0 {
						es := c.in[k].Size()
						spread[k] = make([]byte, m*es)
						fill(spread[k], ops[k][:es])
					}
				}
				got := runMicro(f, c.out, ops, c.in, st, m)
				want := runMicro(vec, c.out, spread, c.in, ones, m)
				runs++
				if i, ok := sameElems(c.out, got, want, 0); !ok {
					t.Errorf("%s %v strides %v: element %d differs from the all-vector micro-op's", d.Name, c, st, i)
				}
			}
		}
	}
}

// TestFastKernelsMatchScalarFunctions: where an entry names simd's
// kernels or fast kernels of this package (mathfast.go), they agree with
// its scalar functions (exactly, but within 4 ulps for the
// approximations: exp, log, tanh, sigmoid; 2.4 ulps at most by
// internal/simd's doc comments, math's own functions up to 2). Silu,
// GeluTanh and Softplus compose those with a few roundings more: 4 ulps
// too (TestFastKernelsAcross measures them across the range).
func TestFastKernelsMatchScalarFunctions(t *testing.T) {
	const m = 37
	approx := map[string]float64{"Exp": 4, "Log": 4, "Tanh": 4, "Sigmoid": 4, "Silu": 4, "GeluTanh": 4, "Softplus": 4}
	runs := 0
	defer func() { t.Logf("%d fast micro-ops checked", runs) }()
	for _, d := range opdef.Defs() {
		e, ok := table[d.Op]
		if !ok || e.math == nil || (e.math.un == 0 && e.math.bin == 0 && e.math.fast == nil) {
			continue
		}
		slow := *e.math
		slow.un, slow.bin, slow.fast = 0, 0, nil
		for _, c := range admittedCalls(d) {
			if c.in[len(c.in)-1].IsComplex() { // complex kernels have no fast form (complex.go)
				continue
			}
			for _, st := range patterns(d.Arity)[:len(patterns(d.Arity))-1] { // not all scalars
				f, err1 := e.microFor(c.out, c.in, st)
				g, err2 := slow.build(c.out, c.in, st)
				if err1 != nil || err2 != nil {
					t.Errorf("%s %v: fast kernel: %v; scalar functions: %v", d.Name, c, err1, err2)
					continue
				}
				ops := make([][]byte, d.Arity)
				for k := range ops {
					ops[k] = sample(c.in[k], m, k)
				}
				ulps := approx[d.Name]
				got, want := runMicro(f, c.out, ops, c.in, st, m), runMicro(g, c.out, ops, c.in, st, m)
				runs++
				if i, ok := sameElems(c.out, got, want, ulps); !ok {
					t.Errorf("%s %v strides %v: element %d: simd's kernel and the scalar function differ", d.Name, c, st, i)
				}
			}
		}
	}
}

// TestCastSpecials: every pair of dtypes converts specials as Cast
// promises (ops' doc): to bool x != 0; floats to integers truncation
// toward zero, saturation at the type's range and NaN to 0; integers to
// narrower integers wrapping; to floats rounding to nearest. The expected
// values are written from those rules.
func TestCastSpecials(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 2.75, -2.75, 1e10, -1e10, 3e38, -3e38, math.Inf(1), math.Inf(-1), math.NaN(), 65504, 2147483520}
	ints := func(x *tensor.Tensor) []int64 { // an integer tensor's values, exactly
		if x.DType() == tensor.Int64 {
			v, _ := tensor.Values[int64](x)
			return v
		}
		out := make([]int64, x.Size())
		for i := range out {
			out[i] = int64(x.Float64(i)) // exact below 64 bits
		}
		return out
	}
	for _, from := range allDTypes {
		src, _ := tensor.FromFloat64s(from, vals)
		for _, to := range allDTypes {
			f := castFunc(from, to)
			if f == nil {
				t.Errorf("no Cast from %v to %v", from, to)
				continue
			}
			dst := tensor.Zeros(to, len(vals))
			f(dst.Bytes(), src.Bytes())
			for i := range vals {
				v := src.Float64(i) // the value as the source dtype holds it
				switch {
				case to.IsInt():
					var want int64
					lo, hi := to.IntRange()
					switch {
					case from.IsInt() || from == tensor.Bool:
						want = to.Wrap(ints(src)[i]) // wraps
					case v != v:
						want = 0
					case v <= float64(lo):
						want = lo
					case v >= float64(hi):
						want = hi
					default:
						want = int64(v)
					}
					if got := ints(dst)[i]; got != want {
						t.Errorf("Cast %v %v to %v = %d, want %d", from, v, to, got, want)
					}
				default:
					want := 0.0
					if to == tensor.Bool {
						if v != 0 {
							want = 1
						}
					} else {
						w := tensor.Zeros(to, 1)
						w.SetFloat64(0, v) // rounds to nearest
						want = w.Float64(0)
					}
					got := dst.Float64(i)
					if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
						t.Errorf("Cast %v %v to %v = %v, want %v", from, v, to, got, want)
					}
				}
			}
		}
	}
}

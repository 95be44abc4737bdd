package cudagen

import (
	"fmt"
	"strings"

	"github.com/loomgraph/loom/tensor"
)

// class groups the dtypes whose generated code is alike: an elementwise
// op's template has one variant per class (see expr in table.go).
type class uint8

const (
	noClass      class = iota
	boolClass          // bool, one byte holding 0 or 1
	intClass           // int8, int16, int32, int64, uint8: two's complement, wrapping
	floatClass         // float32, float64: C arithmetic and the C math library
	storageClass       // float16, bfloat16: bit patterns, converted through float32
	complexClass       // complex64, complex128: the prelude's loom_c64 and loom_c128 (complex.go)
)

// cInfo is how generated code holds and names one dtype: every dtype
// variant of an elementwise template, of a reduction and of a softmax
// comes from here.
type cInfo struct {
	c     string // the C type of one element in device memory and in registers
	sfx   string // the suffix of the prelude's helpers: loom_max_f32, loom_add_i64
	math  string // the suffix of the C math library's functions: "f" for float32 (expf), "" for float64 (exp)
	class class
}

// cInfos is the C type mapping. Bool is one byte (0 or 1), as Uint8 is
// (the class tells them apart); float16 and bfloat16 are their bit
// patterns, converted with the prelude's functions.
var cInfos = map[tensor.DType]cInfo{
	tensor.Bool:     {"unsigned char", "b8", "", boolClass},
	tensor.Int8:     {"signed char", "i8", "", intClass},
	tensor.Int16:    {"short", "i16", "", intClass},
	tensor.Uint8:    {"unsigned char", "u8", "", intClass},
	tensor.Int32:    {"int", "i32", "", intClass},
	tensor.Int64:    {"long long", "i64", "", intClass},
	tensor.Float32:  {"float", "f32", "f", floatClass},
	tensor.Float64:  {"double", "f64", "", floatClass},
	tensor.Float16:  {"unsigned short", "f16", "", storageClass},
	tensor.BFloat16: {"unsigned short", "bf16", "", storageClass},
	// Complex: (real, imaginary) structs of the prelude (complex.go),
	// with their own operators and helpers (loom_exp_c64 ...).
	tensor.Complex64:  {"loom_c64", "c64", "", complexClass},
	tensor.Complex128: {"loom_c128", "c128", "", complexClass},
}

// cType is the C type that holds one element of dt ("" when there is none).
func cType(dt tensor.DType) string { return cInfos[dt].c }

// castExpr converts x from dtype from to dtype to as the CPU's Cast does:
// float to integer truncates and saturates (NaN gives 0, the prelude's
// loom_d2i32 ...), anything to Bool is x != 0, and the storage types go
// through float32 (loom_f16_to_f32, loom_f32_to_bf16 ...).
func castExpr(from, to tensor.DType, x string) string {
	if from == to {
		return x
	}
	fi, ti := cInfos[from], cInfos[to]
	if fi.class == complexClass || ti.class == complexClass {
		return complexCast(from, to, x)
	}
	if fi.class == storageClass || ti.class == storageClass {
		f := "(float)" + x
		switch {
		case fi.class == storageClass:
			f = "loom_" + fi.sfx + "_to_f32(" + x + ")"
		case from == tensor.Float32:
			f = x
		}
		switch {
		case ti.class == storageClass:
			return "loom_f32_to_" + ti.sfx + "(" + f + ")"
		case ti.class == boolClass:
			return "(unsigned char)(" + f + " != 0.0f)"
		case ti.class == intClass:
			return "loom_d2" + ti.sfx + "((double)" + f + ")"
		case to == tensor.Float32:
			return f
		}
		return "(" + ti.c + ")" + f
	}
	switch {
	case ti.class == boolClass:
		return "(unsigned char)(" + x + " != 0)"
	case fi.class == floatClass && ti.class == intClass:
		return "loom_d2" + ti.sfx + "((double)" + x + ")"
	}
	return "(" + ti.c + ")" + x
}

// bitsType is the unsigned type of dt's element size: movement kernels
// copy element bits with it, whatever the dtype.
func bitsType(dt tensor.DType) string {
	switch dt.Size() {
	case 1:
		return "unsigned char"
	case 2:
		return "unsigned short"
	case 4:
		return "unsigned int"
	case 8:
		return "unsigned long long"
	case 16:
		return "loom_b128" // complex128: two unsigned long longs (the prelude's)
	}
	return ""
}

// zeroOf is the literal 0 of C type ct.
func zeroOf(ct string) string {
	switch ct {
	case "float":
		return "0.0f"
	case "double":
		return "0.0"
	case "int":
		return "0"
	case "long long":
		return "0LL"
	case "unsigned int":
		return "0u"
	case "unsigned long long":
		return "0ull"
	case "loom_b128":
		return "loom_b128_zero()"
	case "loom_c64":
		return "loom_complex_f32(0.0f, 0.0f)"
	case "loom_c128":
		return "loom_complex_f64(0.0, 0.0)"
	}
	return "(" + ct + ")0"
}

// ll formats an int64 as a long long literal.
func ll(v int64) string {
	if v == -1<<63 {
		return "(-9223372036854775807LL - 1LL)"
	}
	return fmt.Sprintf("%dLL", v)
}

// code is a builder of indented C source.
type code struct {
	b      strings.Builder
	indent int
}

// line writes one line at the current indentation; a line ending in "{"
// indents the following lines, one starting with "}" outdents itself.
func (c *code) line(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	if strings.HasPrefix(s, "}") {
		c.indent--
	}
	for i := 0; i < c.indent+1; i++ {
		c.b.WriteString("    ")
	}
	c.b.WriteString(s)
	c.b.WriteByte('\n')
	if strings.HasSuffix(s, "{") {
		c.indent++
	}
}

func (c *code) String() string { return c.b.String() }

// gridStride opens a grid-stride loop over [0, n) with variable v.
func (c *code) gridStride(v string, n int64) {
	c.line("for (long long %s = (long long)blockIdx.x * blockDim.x + threadIdx.x; %s < %s; %s += (long long)gridDim.x * blockDim.x) {", v, v, ll(n), v)
}

// dim is one dimension of an iteration space after coalescing: its size
// and the element stride of each operand along it (0 when the operand is
// broadcast along it).
type dim struct {
	size    int64
	strides []int64
	reduced bool
}

// coalesce builds the dimensions of iterating over shape (row-major) with
// the given per-operand strides (strides[k][d] for operand k along dim d),
// dropping size-1 dimensions and merging neighbours that every operand
// steps through contiguously and that are both reduced or both kept
// (reduced may be nil: nothing reduced).
func coalesce(shape tensor.Shape, strides [][]int64, reduced []bool) []dim {
	var ds []dim
	for d, n := range shape {
		if n == 1 {
			continue
		}
		x := dim{size: int64(n), reduced: reduced != nil && reduced[d]}
		for k := range strides {
			x.strides = append(x.strides, strides[k][d])
		}
		if len(ds) > 0 {
			p := &ds[len(ds)-1]
			ok := p.reduced == x.reduced
			for k := range strides {
				ok = ok && p.strides[k] == x.strides[k]*x.size
			}
			if ok {
				p.size *= x.size
				copy(p.strides, x.strides)
				continue
			}
		}
		ds = append(ds, x)
	}
	return ds
}

// broadcastStrides returns the element strides of an operand of shape s
// read with NumPy broadcasting over domain (aligned right; 0 along the
// dimensions where s has 1 or does not reach).
func broadcastStrides(s, domain tensor.Shape) []int64 {
	st := make([]int64, len(domain))
	own := s.Strides()
	off := len(domain) - len(s)
	for i := range s {
		if s[i] == domain[off+i] {
			st[off+i] = int64(own[i])
		}
	}
	return st
}

// decompose emits the index of each of dims from the linear index v
// (row-major over dims) into variables prefix1, prefix2, ... and
// prefixq (the outermost); it returns their names. Only the coordinates
// some operand reads (a non-zero stride, see dot) are computed: the
// others get no variable and an empty name. The outermost index needs no
// modulo, and nothing is divided beyond the outermost coordinate read.
func (c *code) decompose(v, prefix string, dims []dim) []string {
	names := make([]string, len(dims))
	outer := -1
	for d := range dims {
		if dims[d].read() {
			outer = d
			break
		}
	}
	if outer < 0 {
		return names
	}
	if len(dims) == 1 {
		names[0] = v
		return names
	}
	q := prefix + "q"
	c.line("long long %s = %s;", q, v)
	for d := len(dims) - 1; d >= max(outer, 1); d-- {
		if dims[d].read() {
			names[d] = fmt.Sprintf("%s%d", prefix, d)
			c.line("const long long %s = %s %% %s;", names[d], q, ll(dims[d].size))
		}
		if d > outer {
			c.line("%s /= %s;", q, ll(dims[d].size))
		}
	}
	if outer == 0 {
		names[0] = q
	}
	return names
}

// read reports whether some operand's offset depends on the dimension.
func (d dim) read() bool {
	for _, s := range d.strides {
		if s != 0 {
			return true
		}
	}
	return false
}

// dot returns the expression sum(idx[d]*dims[d].strides[k]) for operand
// k, "0LL" when it is empty.
func dot(idx []string, dims []dim, k int) string {
	var terms []string
	for d := range dims {
		s := dims[d].strides[k]
		switch s {
		case 0:
		case 1:
			terms = append(terms, idx[d])
		default:
			terms = append(terms, idx[d]+" * "+ll(s))
		}
	}
	if len(terms) == 0 {
		return "0LL"
	}
	return strings.Join(terms, " + ")
}

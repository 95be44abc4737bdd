package tensor

import (
	"fmt"
	"math"
	"strings"
)

// DType is the element type of a tensor.
//
// Bool, the integers (Int8, Int16, Int32, Int64 and the unsigned Uint8),
// Float32 and Float64 are compute types: every op that admits the kind has
// a kernel for them. Float16 and BFloat16 are storage types: tensors of
// them can be created, fed, cast and returned, but arithmetic requires an
// ops.Cast to Float32 first. Complex64 and Complex128 are the complex
// types (pairs of float32 and of float64, real part first, as Go's
// complex64 and complex128 and NumPy's); only the ops that say so admit
// them.
type DType uint8

// The element types. The zero DType is Invalid.
const (
	Invalid DType = iota
	Bool
	Int32
	Int64
	Float32
	Float64
	Float16
	BFloat16
	Int8
	Int16
	Uint8
	Complex64
	Complex128
	numDTypes
)

var dtypeNames = [numDTypes]struct{ long, short string }{
	Invalid:    {"invalid", "invalid"},
	Bool:       {"bool", "b8"},
	Int32:      {"int32", "i32"},
	Int64:      {"int64", "i64"},
	Float32:    {"float32", "f32"},
	Float64:    {"float64", "f64"},
	Float16:    {"float16", "f16"},
	BFloat16:   {"bfloat16", "bf16"},
	Int8:       {"int8", "i8"},
	Int16:      {"int16", "i16"},
	Uint8:      {"uint8", "u8"},
	Complex64:  {"complex64", "c64"},
	Complex128: {"complex128", "c128"},
}

var dtypeSizes = [numDTypes]int{Bool: 1, Int8: 1, Int16: 2, Int32: 4, Int64: 8, Uint8: 1, Float32: 4, Float64: 8, Float16: 2, BFloat16: 2, Complex64: 8, Complex128: 16}

// DTypes lists every valid DType in a fixed order: bool, the integers by
// width (signed, then unsigned), the compute floats, the complex types,
// then the storage floats.
func DTypes() []DType {
	return []DType{Bool, Int8, Int16, Int32, Int64, Uint8, Float32, Float64, Complex64, Complex128, Float16, BFloat16}
}

// String returns the long name: "float32", "int64", "bool", ...
func (d DType) String() string {
	if d >= numDTypes {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeNames[d].long
}

// Short returns the short name used in shapes: "f32", "i64", "b8", ...
// (so a float32 matrix prints as f32[2,3]).
func (d DType) Short() string {
	if d >= numDTypes {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeNames[d].short
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// Size is the number of bytes of one element (0 for Invalid).
func (d DType) Size() int {
	if d >= numDTypes {
		return 0
	}
	return dtypeSizes[d]
}

// IsFloat reports whether d is a floating-point type (storage types included).
func (d DType) IsFloat() bool {
	return d == Float32 || d == Float64 || d == Float16 || d == BFloat16
}

// IsInt reports whether d is an integer type, signed (Int8, Int16,
// Int32, Int64) or unsigned (Uint8).
func (d DType) IsInt() bool {
	return d == Int8 || d == Int16 || d == Int32 || d == Int64 || d == Uint8
}

// IsUnsigned reports whether d is an unsigned integer type (Uint8).
func (d DType) IsUnsigned() bool { return d == Uint8 }

// IntRange returns the smallest and largest values of an integer dtype
// (0, 0 for other dtypes).
func (d DType) IntRange() (lo, hi int64) {
	switch d {
	case Int8:
		return math.MinInt8, math.MaxInt8
	case Int16:
		return math.MinInt16, math.MaxInt16
	case Int32:
		return math.MinInt32, math.MaxInt32
	case Int64:
		return math.MinInt64, math.MaxInt64
	case Uint8:
		return 0, math.MaxUint8
	}
	return 0, 0
}

// Wrap reduces v to an integer dtype's range as two's complement does
// (modulo 2^bits, into the signed or unsigned range); other dtypes return
// v.
func (d DType) Wrap(v int64) int64 {
	switch d {
	case Int8:
		return int64(int8(v))
	case Int16:
		return int64(int16(v))
	case Int32:
		return int64(int32(v))
	case Uint8:
		return int64(uint8(v))
	}
	return v
}

// IsComplex reports whether d is a complex type (Complex64, Complex128).
func (d DType) IsComplex() bool { return d == Complex64 || d == Complex128 }

// RealDType is the type of a complex type's parts (Complex64: Float32,
// Complex128: Float64); other dtypes return themselves.
func (d DType) RealDType() DType {
	switch d {
	case Complex64:
		return Float32
	case Complex128:
		return Float64
	}
	return d
}

// ComplexDType is the complex type whose parts hold d: Float32 (and the
// 16-bit storage floats) give Complex64, Float64 gives Complex128, a
// complex type returns itself, and the others (bool, integers) Invalid.
func (d DType) ComplexDType() DType {
	switch d {
	case Float32, Float16, BFloat16, Complex64:
		return Complex64
	case Float64, Complex128:
		return Complex128
	}
	return Invalid
}

// IsBool reports whether d is Bool.
func (d DType) IsBool() bool { return d == Bool }

// IsStorage reports whether d is a storage-only type (Float16, BFloat16):
// arithmetic on it needs a Cast to a compute type first.
func (d DType) IsStorage() bool { return d == Float16 || d == BFloat16 }

// Kind names the kind of d for messages: "bool", "integer", "float" or
// "complex".
func (d DType) Kind() string {
	switch {
	case d.IsComplex():
		return "complex"
	case d.IsBool():
		return "bool"
	case d.IsInt():
		return "integer"
	case d.IsFloat():
		return "float"
	}
	return "invalid"
}

// numpyNames are the other names of NumPy's that ParseDType accepts for
// the small integers: the array-interface type strings by byte count
// ("i1", "i2", "u1") and the C names of numpy.short and numpy.ubyte.
// NumPy's "byte" (int8 to NumPy, uint8 to Go) and "i8" (int64 to NumPy,
// loom's short name of int8) are not among them: "byte" is an error and
// "i8" is Int8.
var numpyNames = map[string]DType{"i1": Int8, "i2": Int16, "u1": Uint8, "short": Int16, "ubyte": Uint8}

// ParseDType parses a long ("float32", "int8", "uint8") or short ("f32",
// "i8", "u8") dtype name, case-insensitively. "bool" and "b8" both name
// Bool. NumPy's "i1", "i2", "u1", "short" and "ubyte" name Int8, Int16,
// Uint8, Int16 and Uint8; note that "i8" is loom's Int8, not NumPy's
// int64. Any other string is an error that lists the valid names.
func ParseDType(s string) (DType, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, d := range DTypes() {
		if t == dtypeNames[d].long || t == dtypeNames[d].short {
			return d, nil
		}
	}
	if d, ok := numpyNames[t]; ok {
		return d, nil
	}
	var names []string
	for _, d := range DTypes() {
		names = append(names, dtypeNames[d].long+"/"+dtypeNames[d].short)
	}
	return Invalid, fmt.Errorf("tensor: unknown dtype %q: valid names are %s", s, strings.Join(names, ", "))
}

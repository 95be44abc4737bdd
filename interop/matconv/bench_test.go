package matconv_test

import (
	"testing"

	"github.com/loomgraph/loom/interop/matconv"
	"github.com/loomgraph/loom/tensor"
	"gonum.org/v1/gonum/mat"
)

// The benchmarks measure what sharing saves on a 1024×1024 float64 matrix
// (8 MiB): a shared conversion allocates only the header (tens of bytes)
// whatever the size; a copy allocates and moves all 8 MiB. B/op is the
// bytes moved.

const benchN = 1024

func BenchmarkFromDense(b *testing.B) {
	m := filled(benchN, benchN, 1)
	b.Run("shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := matconv.FromDense(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("FromMatrix copy", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(benchN * benchN * 8)
		for b.Loop() {
			if _, err := matconv.FromMatrix(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("narrow slice copy", func(b *testing.B) {
		wide := filled(benchN, benchN+1, 1)
		s := wide.Slice(0, benchN, 0, benchN).(*mat.Dense)
		b.ReportAllocs()
		b.SetBytes(benchN * benchN * 8)
		for b.Loop() {
			if _, err := matconv.FromDense(s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("At loop copy", func(b *testing.B) { // FromMatrix's path for other types
		tr := m.T().(mat.Transpose)
		own := mat.Transpose{Matrix: matrixOf{tr}}
		b.ReportAllocs()
		b.SetBytes(benchN * benchN * 8)
		for b.Loop() {
			if _, err := matconv.FromMatrix(own); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// matrixOf hides a matrix's concrete type, so FromMatrix takes its At path.
type matrixOf struct{ mat.Matrix }

func BenchmarkToDense(b *testing.B) {
	f64, _ := matconv.FromDense(filled(benchN, benchN, 1))
	f32, _ := tensor.FromFloat64s(tensor.Float32, f64.Float64s(), benchN, benchN)
	b.Run("float64 shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := matconv.ToDense(f64); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("float32 converted", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(benchN * benchN * 8)
		for b.Loop() {
			if _, err := matconv.ToDense(f32); err != nil {
				b.Fatal(err)
			}
		}
	})
}

//go:build !amd64 || noasm

package gemm

func extraKernels32() []*kernel[float32] { return nil }
func extraKernels64() []*kernel[float64] { return nil }

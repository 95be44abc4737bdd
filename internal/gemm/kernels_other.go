//go:build !amd64 || noasm

package gemm

func init() {
	kern32, kern64 = goKern32, goKern64
}

//go:build !amd64 || noasm

package simd

func detect() int { return levelGo }

func setAVX2(k *kernels)   {}
func setAVX512(k *kernels) {}

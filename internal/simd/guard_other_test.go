//go:build !linux

package simd

func guarded(size int) []byte { return make([]byte, size) }

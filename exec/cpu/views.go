package cpu

import "unsafe"

// as views raw element bytes as a typed slice (no copy). Bool is viewed
// as uint8 (0 or 1); the unsigned types view elements by size only.
func as[T any](b []byte) []T {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(b) < sz {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/sz)
}

func sizeOf[T any](z T) uintptr { return unsafe.Sizeof(z) }

// asBytes views a typed slice's elements as raw bytes (no copy).
func asBytes[T any](v []T) []byte {
	if len(v) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// bits128 is a 16-byte element moved by its bits (complex128): the data
// movement kernels, typed by element size, have a case for it.
type bits128 [2]uint64

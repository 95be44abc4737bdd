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

//go:build linux

package simd

import "syscall"

// guarded returns a region of size bytes (a multiple of the page size)
// followed by an inaccessible page: a kernel that reads or writes past the
// end of a slice that ends there faults.
func guarded(size int) []byte {
	page := syscall.Getpagesize()
	size = (size + page - 1) / page * page
	m, err := syscall.Mmap(-1, 0, size+page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		panic(err)
	}
	if err := syscall.Mprotect(m[size:], syscall.PROT_NONE); err != nil {
		panic(err)
	}
	return m[:size:size]
}

//go:build linux

package cuda

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"

	"github.com/loomgraph/loom/exec/cuda/internal/cu"
)

// allocator is a caching device-memory allocator: freed blocks are kept in
// free lists by size class and handed out again without a driver call;
// when the driver runs out of memory, the cached blocks are released and
// the allocation is tried once more. Size classes: powers of two from 512
// bytes to 1 MiB, then multiples of 2 MiB (waste below 2 MiB per large
// block, at most half of a small one). Only the device goroutine uses it.
type allocator struct {
	d      deviceMemory
	free   map[int64][]cu.DevicePtr // size class -> cached blocks
	size   map[cu.DevicePtr]int64   // live block -> its class
	inUse  int64                    // bytes of live blocks (by class)
	cached int64                    // bytes of cached free blocks
	peak   int64
}

// deviceMemory is the part of the driver the allocator uses (a fake in
// tests).
type deviceMemory interface {
	MemAlloc(bytes int64) (cu.DevicePtr, error)
	MemFree(p cu.DevicePtr) error
}

func newAllocator(d deviceMemory) *allocator {
	return &allocator{d: d, free: map[int64][]cu.DevicePtr{}, size: map[cu.DevicePtr]int64{}}
}

const (
	minClass   = 512
	smallLimit = 1 << 20
	largeStep  = 2 << 20
)

// sizeClass rounds a request up to its class.
func sizeClass(n int64) int64 {
	switch {
	case n <= minClass:
		return minClass
	case n <= smallLimit:
		return 1 << bits.Len64(uint64(n-1))
	default:
		return (n + largeStep - 1) / largeStep * largeStep
	}
}

// alloc returns a block of at least n bytes (n may be 0: a valid pointer
// is still returned).
func (a *allocator) alloc(n int64) (cu.DevicePtr, error) {
	c := sizeClass(n)
	if l := a.free[c]; len(l) > 0 {
		p := l[len(l)-1]
		a.free[c] = l[:len(l)-1]
		a.cached -= c
		a.take(p, c)
		return p, nil
	}
	p, err := a.d.MemAlloc(c)
	if err != nil && a.cached > 0 && errors.Is(err, cu.Result(2)) {
		// CUDA_ERROR_OUT_OF_MEMORY: give the cache back and retry.
		if rerr := a.release(); rerr != nil {
			return 0, rerr
		}
		p, err = a.d.MemAlloc(c)
	}
	if err != nil {
		return 0, fmt.Errorf("allocating %d bytes of device memory (%d in use, %d cached): %w", n, a.inUse, a.cached, err)
	}
	a.take(p, c)
	return p, nil
}

func (a *allocator) take(p cu.DevicePtr, c int64) {
	a.size[p] = c
	a.inUse += c
	a.peak = max(a.peak, a.inUse)
}

// put returns a block to its free list.
func (a *allocator) put(p cu.DevicePtr) error {
	c, ok := a.size[p]
	if !ok {
		return fmt.Errorf("freeing device memory %#x that this allocator did not allocate", uint64(p))
	}
	delete(a.size, p)
	a.inUse -= c
	a.free[c] = append(a.free[c], p)
	a.cached += c
	return nil
}

// release frees every cached block.
func (a *allocator) release() error {
	classes := make([]int64, 0, len(a.free))
	for c := range a.free {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool { return classes[i] < classes[j] })
	var errs firstErr
	for _, c := range classes {
		for _, p := range a.free[c] {
			errs.keep(a.d.MemFree(p))
			a.cached -= c
		}
		delete(a.free, c)
	}
	return errs.err
}

// releaseAll frees every block, live or cached (at Close).
func (a *allocator) releaseAll() error {
	errs := firstErr{a.release()}
	for p := range a.size {
		errs.keep(a.d.MemFree(p))
	}
	clear(a.size)
	a.inUse = 0
	return errs.err
}

// firstErr keeps the first non-nil error of a sequence of clean-up calls.
type firstErr struct{ err error }

func (f *firstErr) keep(err error) {
	if err != nil && f.err == nil {
		f.err = err
	}
}

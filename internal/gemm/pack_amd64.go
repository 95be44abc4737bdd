//go:build amd64 && !noasm

package gemm

import "unsafe"

//go:noescape
func copyRows32(dst, src unsafe.Pointer, ld, rows int)

//go:noescape
func copyRows64(dst, src unsafe.Pointer, ld, rows int)

//go:noescape
func copyRows128(dst, src unsafe.Pointer, ld, rows int)

//go:noescape
func copyPanels64(dst, src unsafe.Pointer, ld, rows, panels int)

//go:noescape
func copyPanels128(dst, src unsafe.Pointer, ld, rows, panels int)

//go:noescape
func gather32(dst, src unsafe.Pointer, ld, kblocks, w int)

//go:noescape
func gather64(dst, src unsafe.Pointer, ld, kblocks, w int)

// haveAVX2 enables the assembly packing routines.
var haveAVX2, _ = cpuFeatures()

// copyRowsFast sets d[l*w + r] = src[l*ld + r] for l < rows, r < w, where
// w elements make 32, 64 or 128 bytes; it reports false (doing nothing)
// when it has no routine for the case.
func copyRowsFast[T float](d, src []T, ld, rows, w int) bool {
	if !haveAVX2 || rows == 0 {
		return rows == 0
	}
	_ = d[rows*w-1]
	_ = src[(rows-1)*ld+w-1]
	es := int(unsafe.Sizeof(T(0)))
	dp, sp := unsafe.Pointer(&d[0]), unsafe.Pointer(&src[0])
	switch w * es {
	case 32:
		copyRows32(dp, sp, ld*es, rows)
	case 64:
		copyRows64(dp, sp, ld*es, rows)
	case 128:
		copyRows128(dp, sp, ld*es, rows)
	default:
		return false
	}
	return true
}

// gatherFast sets d[l*w + r] = src[r*ld + l] for r < w, l < kb rounded
// down to the block size, and returns how many l it did (0 when it has no
// routine for the case).
func gatherFast[T float](d, src []T, ld, kb, w int) int {
	if !haveAVX2 {
		return 0
	}
	es := int(unsafe.Sizeof(T(0)))
	blk := 32 / es // 8 float32 or 4 float64
	nb := kb / blk
	if nb == 0 || w%blk != 0 {
		return 0
	}
	done := nb * blk
	_ = d[done*w-1]
	_ = src[(w-1)*ld+done-1]
	dp, sp := unsafe.Pointer(&d[0]), unsafe.Pointer(&src[0])
	if es == 4 {
		gather32(dp, sp, ld, nb, w)
	} else {
		gather64(dp, sp, ld, nb, w)
	}
	return done
}

// copyPanelsFast packs `panels` full slivers of w columns: for s < panels,
// d[s*rows*w + l*w + r] = src[l*ld + s*w + r] (l < rows, r < w), reading
// src row by row; it reports false (doing nothing) when it has no routine
// for the case.
func copyPanelsFast[T float](d, src []T, ld, rows, w, panels int) bool {
	if !haveAVX2 || rows == 0 || panels == 0 {
		return rows == 0 || panels == 0
	}
	_ = d[panels*rows*w-1]
	_ = src[(rows-1)*ld+panels*w-1]
	es := int(unsafe.Sizeof(T(0)))
	dp, sp := unsafe.Pointer(&d[0]), unsafe.Pointer(&src[0])
	switch w * es {
	case 64:
		copyPanels64(dp, sp, ld*es, rows, panels)
	case 128:
		copyPanels128(dp, sp, ld*es, rows, panels)
	default:
		return false
	}
	return true
}

package gemm

// packA packs op(A)[i0:i0+mb, p0:p0+kb] as slivers of mr rows: sliver s
// holds, for each l < kb, the mr values op(A)[i0+s·mr+r, p0+l], r < mr,
// rows past mb zero.
func packA[T float](dst, a []T, lda int, trans bool, i0, mb, p0, kb, mr int) {
	for s := 0; s*mr < mb; s++ {
		d := dst[s*mr*kb : (s+1)*mr*kb]
		rows := min(mr, mb-s*mr)
		i := i0 + s*mr
		if trans {
			// op(A)[i+r, p0+l] = a[(p0+l)*lda + i+r]: contiguous in r
			packCopy(d, a[p0*lda+i:], lda, kb, rows, mr)
		} else {
			// op(A)[i+r, p0+l] = a[(i+r)*lda + p0+l]: contiguous in l
			packGather(d, a[i*lda+p0:], lda, kb, rows, mr)
		}
	}
}

// packB packs op(B)[p0:p0+kb, j0:j0+nb] as slivers of nr columns: sliver
// s holds, for each l < kb, the nr values op(B)[p0+l, j0+s·nr+c], c < nr,
// columns past nb zero. A last sliver of at most nr2 columns (nr2 > 0) is
// packed nr2 wide.
func packB[T float](dst, b []T, ldb int, trans bool, p0, kb, j0, nb, nr, nr2 int) {
	s0 := 0
	if !trans && copyPanelsFast(dst, b[p0*ldb+j0:], ldb, kb, nr, nb/nr) {
		s0 = nb / nr // the full slivers are done
	}
	for s := s0; s*nr < nb; s++ {
		cols := min(nr, nb-s*nr)
		w := nr
		if cols <= nr2 {
			w = nr2
		}
		d := dst[s*nr*kb : s*nr*kb+w*kb]
		j := j0 + s*nr
		if trans {
			packGather(d, b[j*ldb+p0:], ldb, kb, cols, w)
		} else {
			packCopy(d, b[p0*ldb+j:], ldb, kb, cols, w)
		}
	}
}

// packCopy sets d[l*w + r] = src[l*ld + r] for l < kb, r < n, and zero for
// n <= r < w.
func packCopy[T float](d, src []T, ld, kb, n, w int) {
	if n == w && copyRowsFast(d, src, ld, kb, w) {
		return
	}
	d = d[:kb*w]
	if n < w {
		clear(d)
	}
	if n > 8 {
		for l := 0; l < kb; l++ {
			copy(d[l*w:l*w+n], src[l*ld:l*ld+n])
		}
		return
	}
	for l := 0; l < kb; l++ {
		row, s := d[l*w:l*w+n], src[l*ld:l*ld+n]
		//lint:ignore S1001 a few elements: cheaper than a call to memmove
		for r, v := range s {
			row[r] = v
		}
	}
}

// packGather sets d[l*w + r] = src[r*ld + l] for l < kb, r < n, and zero
// for n <= r < w.
func packGather[T float](d, src []T, ld, kb, n, w int) {
	d = d[:kb*w]
	l0 := 0
	if n == w {
		l0 = gatherFast(d, src, ld, kb, w)
	} else {
		clear(d)
	}
	for r := 0; r < n && l0 < kb; r++ {
		s := src[r*ld+l0 : r*ld+kb]
		dr := d[l0*w+r:]
		for l, v := range s {
			dr[l*w] = v
		}
	}
}

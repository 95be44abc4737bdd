//go:build amd64 && !noasm

#include "textflag.h"

// Packing helpers (AVX2). Rows of rowBytes are copied from src (stride
// ld bytes) to dst (stride rowBytes).

// func copyRows32(dst, src unsafe.Pointer, ld, rows int)
TEXT ·copyRows32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ rows+24(FP), CX
	TESTQ CX, CX
	JZ done
loop:
	VMOVUPS (SI), Y0
	VMOVUPS Y0, (DI)
	ADDQ R8, SI
	ADDQ $32, DI
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func copyRows64(dst, src unsafe.Pointer, ld, rows int)
TEXT ·copyRows64(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ rows+24(FP), CX
	TESTQ CX, CX
	JZ done
loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func copyRows128(dst, src unsafe.Pointer, ld, rows int)
TEXT ·copyRows128(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ rows+24(FP), CX
	TESTQ CX, CX
	JZ done
loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ R8, SI
	ADDQ $128, DI
	DECQ CX
	JNZ loop
done:
	VZEROUPPER
	RET

// func gather32(dst, src unsafe.Pointer, ld, kblocks, w int)
//
// Transposes float32: dst[l*w + r] = src[r*ld + l] for r < w (a multiple
// of 8) and l < 8·kblocks, in 8×8 blocks; ld in elements.
TEXT ·gather32(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $2, R8               // ld bytes
	LEAQ (R8)(R8*2), R10      // 3·ld
	MOVQ kblocks+24(FP), CX
	MOVQ w+32(FP), R9
	SHLQ $2, R9               // w bytes (dst row stride)
	LEAQ (R9)(R9*2), R13      // 3·w bytes
	TESTQ CX, CX
	JZ done
kloop:
	MOVQ SI, BX               // rows r..r+3 of this group
	MOVQ DI, DX               // dst of this group
	MOVQ R9, R12
	SHRQ $5, R12              // groups = w/8
gloop:
	LEAQ (BX)(R8*4), R11      // rows r+4..r+7
	VMOVUPS (BX), Y0
	VMOVUPS (BX)(R8*1), Y1
	VMOVUPS (BX)(R8*2), Y2
	VMOVUPS (BX)(R10*1), Y3
	VMOVUPS (R11), Y4
	VMOVUPS (R11)(R8*1), Y5
	VMOVUPS (R11)(R8*2), Y6
	VMOVUPS (R11)(R10*1), Y7
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	LEAQ (DX)(R9*4), R14      // dst rows l+4..l+7
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, (DX)(R9*1)
	VMOVUPS Y10, (DX)(R9*2)
	VMOVUPS Y11, (DX)(R13*1)
	VMOVUPS Y12, (R14)
	VMOVUPS Y13, (R14)(R9*1)
	VMOVUPS Y14, (R14)(R9*2)
	VMOVUPS Y15, (R14)(R13*1)
	LEAQ (R11)(R8*4), BX      // next group of 8 rows
	ADDQ $32, DX
	DECQ R12
	JNZ gloop
	ADDQ $32, SI              // next 8 columns of src
	LEAQ (DI)(R9*8), DI       // next 8 rows of dst
	DECQ CX
	JNZ kloop
done:
	VZEROUPPER
	RET

// func gather64(dst, src unsafe.Pointer, ld, kblocks, w int)
//
// Transposes float64: dst[l*w + r] = src[r*ld + l] for r < w (a multiple
// of 4) and l < 4·kblocks, in 4×4 blocks; ld in elements.
TEXT ·gather64(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	SHLQ $3, R8               // ld bytes
	LEAQ (R8)(R8*2), R10      // 3·ld
	MOVQ kblocks+24(FP), CX
	MOVQ w+32(FP), R9
	SHLQ $3, R9               // w bytes
	LEAQ (R9)(R9*2), R13      // 3·w bytes
	TESTQ CX, CX
	JZ done
kloop:
	MOVQ SI, BX
	MOVQ DI, DX
	MOVQ R9, R12
	SHRQ $5, R12              // groups = w/4
gloop:
	VMOVUPD (BX), Y0
	VMOVUPD (BX)(R8*1), Y1
	VMOVUPD (BX)(R8*2), Y2
	VMOVUPD (BX)(R10*1), Y3
	VUNPCKLPD Y1, Y0, Y4
	VUNPCKHPD Y1, Y0, Y5
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0
	VPERM2F128 $0x20, Y7, Y5, Y1
	VPERM2F128 $0x31, Y6, Y4, Y2
	VPERM2F128 $0x31, Y7, Y5, Y3
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, (DX)(R9*1)
	VMOVUPD Y2, (DX)(R9*2)
	VMOVUPD Y3, (DX)(R13*1)
	LEAQ (BX)(R8*4), BX
	ADDQ $32, DX
	DECQ R12
	JNZ gloop
	ADDQ $32, SI
	LEAQ (DI)(R9*4), DI
	DECQ CX
	JNZ kloop
done:
	VZEROUPPER
	RET

// func copyPanels64(dst, src unsafe.Pointer, ld, rows, panels int)
//
// For each of rows rows of src (stride ld bytes), copies 64-byte chunk s
// (s < panels) to panel s of dst (panel stride rows·64 bytes): the packing
// of full B slivers, reading B row by row.
TEXT ·copyPanels64(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ rows+24(FP), CX
	MOVQ panels+32(FP), R9
	MOVQ CX, R10
	SHLQ $6, R10              // panel stride
	TESTQ CX, CX
	JZ done
	TESTQ R9, R9
	JZ done
rloop:
	MOVQ SI, BX
	MOVQ DI, DX
	MOVQ R9, R11
ploop:
	VMOVUPS (BX), Y0
	VMOVUPS 32(BX), Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ $64, BX
	ADDQ R10, DX
	DECQ R11
	JNZ ploop
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ rloop
done:
	VZEROUPPER
	RET

// func copyPanels128(dst, src unsafe.Pointer, ld, rows, panels int)
//
// copyPanels64 with 128-byte chunks.
TEXT ·copyPanels128(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), R8
	MOVQ rows+24(FP), CX
	MOVQ panels+32(FP), R9
	MOVQ CX, R10
	SHLQ $7, R10              // panel stride
	TESTQ CX, CX
	JZ done
	TESTQ R9, R9
	JZ done
rloop:
	MOVQ SI, BX
	MOVQ DI, DX
	MOVQ R9, R11
ploop:
	VMOVUPS (BX), Y0
	VMOVUPS 32(BX), Y1
	VMOVUPS 64(BX), Y2
	VMOVUPS 96(BX), Y3
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ $128, BX
	ADDQ R10, DX
	DECQ R11
	JNZ ploop
	ADDQ R8, SI
	ADDQ $128, DI
	DECQ CX
	JNZ rloop
done:
	VZEROUPPER
	RET

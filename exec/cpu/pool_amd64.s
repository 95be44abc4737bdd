//go:build !noasm

#include "textflag.h"

// 2x2 max pooling (stride 2) of float32 rows with AVX-512, for pooling.go
// (maxRows2x2, maxGradRows2x2). A row pair is two input rows r0 = x,
// r1 = x + w; its ow windows are (r0[2i], r0[2i+1], r1[2i], r1[2i+1]),
// handled 16 at a time with masked loads and stores. The first tap equal
// to the window's maximum is its arg-max (as max4). A row pair with a NaN
// in a window stops the loop: the function returns its index and the
// caller handles it in Go.

DATA evenIdx<>+0(SB)/4, $0
DATA evenIdx<>+4(SB)/4, $2
DATA evenIdx<>+8(SB)/4, $4
DATA evenIdx<>+12(SB)/4, $6
DATA evenIdx<>+16(SB)/4, $8
DATA evenIdx<>+20(SB)/4, $10
DATA evenIdx<>+24(SB)/4, $12
DATA evenIdx<>+28(SB)/4, $14
DATA evenIdx<>+32(SB)/4, $16
DATA evenIdx<>+36(SB)/4, $18
DATA evenIdx<>+40(SB)/4, $20
DATA evenIdx<>+44(SB)/4, $22
DATA evenIdx<>+48(SB)/4, $24
DATA evenIdx<>+52(SB)/4, $26
DATA evenIdx<>+56(SB)/4, $28
DATA evenIdx<>+60(SB)/4, $30
GLOBL evenIdx<>(SB), RODATA|NOPTR, $64

DATA oddIdx<>+0(SB)/4, $1
DATA oddIdx<>+4(SB)/4, $3
DATA oddIdx<>+8(SB)/4, $5
DATA oddIdx<>+12(SB)/4, $7
DATA oddIdx<>+16(SB)/4, $9
DATA oddIdx<>+20(SB)/4, $11
DATA oddIdx<>+24(SB)/4, $13
DATA oddIdx<>+28(SB)/4, $15
DATA oddIdx<>+32(SB)/4, $17
DATA oddIdx<>+36(SB)/4, $19
DATA oddIdx<>+40(SB)/4, $21
DATA oddIdx<>+44(SB)/4, $23
DATA oddIdx<>+48(SB)/4, $25
DATA oddIdx<>+52(SB)/4, $27
DATA oddIdx<>+56(SB)/4, $29
DATA oddIdx<>+60(SB)/4, $31
GLOBL oddIdx<>(SB), RODATA|NOPTR, $64

// interleave the first (lo) and second (hi) halves of two vectors
DATA loIdx<>+0(SB)/4, $0
DATA loIdx<>+4(SB)/4, $16
DATA loIdx<>+8(SB)/4, $1
DATA loIdx<>+12(SB)/4, $17
DATA loIdx<>+16(SB)/4, $2
DATA loIdx<>+20(SB)/4, $18
DATA loIdx<>+24(SB)/4, $3
DATA loIdx<>+28(SB)/4, $19
DATA loIdx<>+32(SB)/4, $4
DATA loIdx<>+36(SB)/4, $20
DATA loIdx<>+40(SB)/4, $5
DATA loIdx<>+44(SB)/4, $21
DATA loIdx<>+48(SB)/4, $6
DATA loIdx<>+52(SB)/4, $22
DATA loIdx<>+56(SB)/4, $7
DATA loIdx<>+60(SB)/4, $23
GLOBL loIdx<>(SB), RODATA|NOPTR, $64

DATA hiIdx<>+0(SB)/4, $8
DATA hiIdx<>+4(SB)/4, $24
DATA hiIdx<>+8(SB)/4, $9
DATA hiIdx<>+12(SB)/4, $25
DATA hiIdx<>+16(SB)/4, $10
DATA hiIdx<>+20(SB)/4, $26
DATA hiIdx<>+24(SB)/4, $11
DATA hiIdx<>+28(SB)/4, $27
DATA hiIdx<>+32(SB)/4, $12
DATA hiIdx<>+36(SB)/4, $28
DATA hiIdx<>+40(SB)/4, $13
DATA hiIdx<>+44(SB)/4, $29
DATA hiIdx<>+48(SB)/4, $14
DATA hiIdx<>+52(SB)/4, $30
DATA hiIdx<>+56(SB)/4, $15
DATA hiIdx<>+60(SB)/4, $31
GLOBL hiIdx<>(SB), RODATA|NOPTR, $64

// MASKS sets K1 to the low n bits (the windows), K2 and K3 to the low
// 2n bits split in two halves (the taps of each row), n = min(ow-i, 16)
// with ow in R8 and i in R11. Clobbers AX, CX.
#define MASKS \
	MOVQ R8, CX \
	SUBQ R11, CX \
	CMPQ CX, $16 \
	JLE  2(PC) \
	MOVQ $16, CX \
	MOVL $1, AX \
	SHLL CX, AX \
	DECL AX \
	KMOVW AX, K1 \
	SHLL $1, CX \
	MOVL CX, AX \
	CMPL AX, $16 \
	JLE  2(PC) \
	MOVL $16, AX \
	SUBL AX, CX \
	XCHGL AX, CX \
	MOVL $1, DX \
	SHLL CX, DX \
	DECL DX \
	KMOVW DX, K2 \
	MOVL AX, CX \
	MOVL $1, DX \
	SHLL CX, DX \
	DECL DX \
	KMOVW DX, K3

// LOADS loads the windows at i (R11) of the row pair r0 = SI, r1 = R10
// into Z4 (a), Z5 (b), Z6 (c), Z7 (d), their maximum into Z8, and jumps
// to nan when a window in K1 has a NaN.
#define LOADS \
	VMOVUPS.Z (SI)(R11*8), K2, Z0 \
	VMOVUPS.Z 64(SI)(R11*8), K3, Z1 \
	VMOVUPS.Z (R10)(R11*8), K2, Z2 \
	VMOVUPS.Z 64(R10)(R11*8), K3, Z3 \
	VMOVAPS Z30, Z4 \
	VPERMI2PS Z1, Z0, Z4 \
	VMOVAPS Z31, Z5 \
	VPERMI2PS Z1, Z0, Z5 \
	VMOVAPS Z30, Z6 \
	VPERMI2PS Z3, Z2, Z6 \
	VMOVAPS Z31, Z7 \
	VPERMI2PS Z3, Z2, Z7 \
	VCMPPS $3, Z5, Z4, K1, K4 \
	VCMPPS $3, Z7, Z6, K1, K5 \
	KORW K4, K5, K4 \
	KORTESTW K4, K4 \
	JNZ nan \
	VMAXPS Z5, Z4, Z8 \
	VMAXPS Z7, Z6, Z9 \
	VMAXPS Z9, Z8, Z8

// func maxRows2x2(y, x *float32, rows, w, ow int) int
TEXT ·maxRows2x2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ rows+16(FP), R13
	MOVQ w+24(FP), BX
	MOVQ ow+32(FP), R8
	VMOVUPS evenIdx<>(SB), Z30
	VMOVUPS oddIdx<>(SB), Z31
	XORQ R9, R9

rowLoop:
	CMPQ R9, R13
	JGE  done
	LEAQ (SI)(BX*4), R10
	XORQ R11, R11

colLoop:
	CMPQ R11, R8
	JGE  nextRow
	MASKS
	LOADS
	// the first of a, b, c, d equal to the maximum
	VMOVAPS Z7, Z10
	VCMPPS  $0, Z8, Z6, K4
	VMOVAPS Z6, K4, Z10
	VCMPPS  $0, Z8, Z5, K4
	VMOVAPS Z5, K4, Z10
	VCMPPS  $0, Z8, Z4, K4
	VMOVAPS Z4, K4, Z10
	VMOVUPS Z10, K1, (DI)(R11*4)
	ADDQ    $16, R11
	JMP     colLoop

nextRow:
	LEAQ (SI)(BX*8), SI
	LEAQ (DI)(R8*4), DI
	INCQ R9
	JMP  rowLoop

nan:
	MOVQ R9, ret+40(FP)
	VZEROUPPER
	RET

done:
	MOVQ R13, ret+40(FP)
	VZEROUPPER
	RET

// func maxGradRows2x2(dx, x, gy *float32, rows, w, ow int) int
TEXT ·maxGradRows2x2(SB), NOSPLIT, $0-56
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ gy+16(FP), R12
	MOVQ rows+24(FP), R13
	MOVQ w+32(FP), BX
	MOVQ ow+40(FP), R8
	VMOVUPS evenIdx<>(SB), Z30
	VMOVUPS oddIdx<>(SB), Z31
	VMOVUPS loIdx<>(SB), Z28
	VMOVUPS hiIdx<>(SB), Z29
	XORQ R9, R9

growLoop:
	CMPQ R9, R13
	JGE  gdone
	LEAQ (SI)(BX*4), R10
	XORQ R11, R11

gcolLoop:
	CMPQ R11, R8
	JGE  gnextRow
	MASKS
	LOADS
	// K4..K7: a, b, c or d is the first equal to the maximum
	VCMPPS  $0, Z8, Z4, K1, K4
	VCMPPS  $0, Z8, Z5, K1, K5
	KANDNW  K5, K4, K5
	KORW    K4, K5, K6
	VCMPPS  $0, Z8, Z6, K1, K7
	KANDNW  K7, K6, K7
	KORW    K6, K7, K6
	KANDNW  K1, K6, K6
	VMOVUPS.Z (R12)(R11*4), K1, Z9
	VMOVAPS.Z Z9, K4, Z11
	VMOVAPS.Z Z9, K5, Z12
	VMOVAPS.Z Z9, K7, Z13
	VMOVAPS.Z Z9, K6, Z14
	VMOVAPS   Z28, Z15
	VPERMI2PS Z12, Z11, Z15
	VMOVAPS   Z29, Z16
	VPERMI2PS Z12, Z11, Z16
	VMOVAPS   Z28, Z17
	VPERMI2PS Z14, Z13, Z17
	VMOVAPS   Z29, Z18
	VPERMI2PS Z14, Z13, Z18
	LEAQ    (DI)(BX*4), AX
	VMOVUPS Z15, K2, (DI)(R11*8)
	VMOVUPS Z16, K3, 64(DI)(R11*8)
	VMOVUPS Z17, K2, (AX)(R11*8)
	VMOVUPS Z18, K3, 64(AX)(R11*8)
	ADDQ    $16, R11
	JMP     gcolLoop

gnextRow:
	LEAQ (SI)(BX*8), SI
	LEAQ (DI)(BX*8), DI
	LEAQ (R12)(R8*4), R12
	INCQ R9
	JMP  growLoop

nan:
	MOVQ R9, ret+48(FP)
	VZEROUPPER
	RET

gdone:
	MOVQ R13, ret+48(FP)
	VZEROUPPER
	RET

//go:build amd64 && !purego

#include "textflag.h"

// gemmMask<>+32−8·t is the mask of the first t lanes of a vector (t < 4).
DATA gemmMask<>+0(SB)/8, $0xffffffffffffffff
DATA gemmMask<>+8(SB)/8, $0xffffffffffffffff
DATA gemmMask<>+16(SB)/8, $0xffffffffffffffff
DATA gemmMask<>+24(SB)/8, $0xffffffffffffffff
DATA gemmMask<>+32(SB)/8, $0
DATA gemmMask<>+40(SB)/8, $0
DATA gemmMask<>+48(SB)/8, $0
DATA gemmMask<>+56(SB)/8, $0
GLOBL gemmMask<>(SB), RODATA|NOPTR, $64

// func stepRows4AVX2(w, gm, out *float64, n, k int, step float64)
//
// For each group of four rows of w (n rows of k, n a multiple of 4) and
// each block of 12 columns (then of 4, then the last k mod 4 under a
// mask): the accumulators start at zero, and for t = 0, …, k−1 in order
// acc += w[r][t]·gm[t][block] (gm is G; one rounding per fused multiply-add, so
// each entry is the same chain of k operations whichever block it falls
// in); then out[r][block] = w[r][block] − step·acc, fused.
//
// Registers: SI, DI the group's rows of w and out; R8 a row's bytes, R10
// three rows', R11 four rows'; BX the rows left; R12 the block's byte
// offset, R13 the columns left; R9 the tail's mask; AX, CX, R14 the inner
// loop's pointers into g and w and its count. In a block of 12 columns
// the accumulator of row r and vector j is Y(3r+j), g's row in Y12–Y14;
// in a block of 4, row r's accumulator is Y(3r); Y15 holds w[r][t] and
// then step.
TEXT ·stepRows4AVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), SI
	MOVQ out+16(FP), DI
	MOVQ n+24(FP), BX
	MOVQ k+32(FP), DX
	MOVQ DX, R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R10
	LEAQ (R8)(R8*1), R11
	SHLQ $1, R11
	MOVQ DX, AX
	ANDQ $3, AX
	SHLQ $3, AX
	LEAQ gemmMask<>+32(SB), R9
	SUBQ AX, R9

rows:
	CMPQ BX, $0
	JLE  done
	XORQ R12, R12
	MOVQ DX, R13

cols12:
	CMPQ R13, $12
	JLT  cols4
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	MOVQ gm+8(FP), AX
	ADDQ R12, AX
	MOVQ SI, CX
	MOVQ DX, R14

t12:
	VMOVUPD 0(AX), Y12
	VMOVUPD 32(AX), Y13
	VMOVUPD 64(AX), Y14
	VBROADCASTSD (CX), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VBROADCASTSD (CX)(R8*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VBROADCASTSD (CX)(R8*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VBROADCASTSD (CX)(R10*1), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ $8, CX
	ADDQ R8, AX
	DECQ R14
	JNZ  t12

	VBROADCASTSD step+40(FP), Y15
	LEAQ (SI)(R12*1), AX
	LEAQ (DI)(R12*1), CX
	VMOVUPD 0(AX), Y12
	VMOVUPD 32(AX), Y13
	VMOVUPD 64(AX), Y14
	VFNMADD231PD Y15, Y0, Y12
	VFNMADD231PD Y15, Y1, Y13
	VFNMADD231PD Y15, Y2, Y14
	VMOVUPD Y12, 0(CX)
	VMOVUPD Y13, 32(CX)
	VMOVUPD Y14, 64(CX)
	VMOVUPD 0(AX)(R8*1), Y12
	VMOVUPD 32(AX)(R8*1), Y13
	VMOVUPD 64(AX)(R8*1), Y14
	VFNMADD231PD Y15, Y3, Y12
	VFNMADD231PD Y15, Y4, Y13
	VFNMADD231PD Y15, Y5, Y14
	VMOVUPD Y12, 0(CX)(R8*1)
	VMOVUPD Y13, 32(CX)(R8*1)
	VMOVUPD Y14, 64(CX)(R8*1)
	VMOVUPD 0(AX)(R8*2), Y12
	VMOVUPD 32(AX)(R8*2), Y13
	VMOVUPD 64(AX)(R8*2), Y14
	VFNMADD231PD Y15, Y6, Y12
	VFNMADD231PD Y15, Y7, Y13
	VFNMADD231PD Y15, Y8, Y14
	VMOVUPD Y12, 0(CX)(R8*2)
	VMOVUPD Y13, 32(CX)(R8*2)
	VMOVUPD Y14, 64(CX)(R8*2)
	VMOVUPD 0(AX)(R10*1), Y12
	VMOVUPD 32(AX)(R10*1), Y13
	VMOVUPD 64(AX)(R10*1), Y14
	VFNMADD231PD Y15, Y9, Y12
	VFNMADD231PD Y15, Y10, Y13
	VFNMADD231PD Y15, Y11, Y14
	VMOVUPD Y12, 0(CX)(R10*1)
	VMOVUPD Y13, 32(CX)(R10*1)
	VMOVUPD Y14, 64(CX)(R10*1)
	ADDQ $96, R12
	SUBQ $12, R13
	JMP  cols12

cols4:
	CMPQ R13, $4
	JLT  colsTail
	VXORPD Y0, Y0, Y0
	VXORPD Y3, Y3, Y3
	VXORPD Y6, Y6, Y6
	VXORPD Y9, Y9, Y9
	MOVQ gm+8(FP), AX
	ADDQ R12, AX
	MOVQ SI, CX
	MOVQ DX, R14

t4:
	VMOVUPD (AX), Y12
	VBROADCASTSD (CX), Y15
	VFMADD231PD Y12, Y15, Y0
	VBROADCASTSD (CX)(R8*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VBROADCASTSD (CX)(R8*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VBROADCASTSD (CX)(R10*1), Y15
	VFMADD231PD Y12, Y15, Y9
	ADDQ $8, CX
	ADDQ R8, AX
	DECQ R14
	JNZ  t4

	VBROADCASTSD step+40(FP), Y15
	LEAQ (SI)(R12*1), AX
	LEAQ (DI)(R12*1), CX
	VMOVUPD (AX), Y12
	VFNMADD231PD Y15, Y0, Y12
	VMOVUPD Y12, (CX)
	VMOVUPD (AX)(R8*1), Y12
	VFNMADD231PD Y15, Y3, Y12
	VMOVUPD Y12, (CX)(R8*1)
	VMOVUPD (AX)(R8*2), Y12
	VFNMADD231PD Y15, Y6, Y12
	VMOVUPD Y12, (CX)(R8*2)
	VMOVUPD (AX)(R10*1), Y12
	VFNMADD231PD Y15, Y9, Y12
	VMOVUPD Y12, (CX)(R10*1)
	ADDQ $32, R12
	SUBQ $4, R13
	JMP  cols4

colsTail:
	CMPQ R13, $0
	JEQ  next
	VMOVUPD (R9), Y14
	VXORPD Y0, Y0, Y0
	VXORPD Y3, Y3, Y3
	VXORPD Y6, Y6, Y6
	VXORPD Y9, Y9, Y9
	MOVQ gm+8(FP), AX
	ADDQ R12, AX
	MOVQ SI, CX
	MOVQ DX, R14

tTail:
	VMASKMOVPD (AX), Y14, Y12
	VBROADCASTSD (CX), Y15
	VFMADD231PD Y12, Y15, Y0
	VBROADCASTSD (CX)(R8*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VBROADCASTSD (CX)(R8*2), Y15
	VFMADD231PD Y12, Y15, Y6
	VBROADCASTSD (CX)(R10*1), Y15
	VFMADD231PD Y12, Y15, Y9
	ADDQ $8, CX
	ADDQ R8, AX
	DECQ R14
	JNZ  tTail

	VBROADCASTSD step+40(FP), Y15
	LEAQ (SI)(R12*1), AX
	LEAQ (DI)(R12*1), CX
	VMASKMOVPD (AX), Y14, Y12
	VFNMADD231PD Y15, Y0, Y12
	VMASKMOVPD Y12, Y14, (CX)
	VMASKMOVPD (AX)(R8*1), Y14, Y12
	VFNMADD231PD Y15, Y3, Y12
	VMASKMOVPD Y12, Y14, (CX)(R8*1)
	VMASKMOVPD (AX)(R8*2), Y14, Y12
	VFNMADD231PD Y15, Y6, Y12
	VMASKMOVPD Y12, Y14, (CX)(R8*2)
	VMASKMOVPD (AX)(R10*1), Y14, Y12
	VFNMADD231PD Y15, Y9, Y12
	VMASKMOVPD Y12, Y14, (CX)(R10*1)

next:
	ADDQ R11, SI
	ADDQ R11, DI
	SUBQ $4, BX
	JMP  rows

done:
	VZEROUPPER
	RET

// func projectAVX2(w, u *float64, n, k int, neg *int32) int
//
// For n rows of k: w[i] = u[i] where u[i] is not below zero (−0 and NaN
// are kept, as in the plain-Go loop) and 0 where it is; neg[r] is how
// many of row r's entries were below zero, and the result their total.
// vmaxpd returns its second source unless the first is greater, so
// max(0, u) with u second is u but where 0 > u. A row goes four entries
// at a time, then one at a time.
TEXT ·projectAVX2(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DI
	MOVQ u+8(FP), SI
	MOVQ n+16(FP), R8
	MOVQ k+24(FP), R9
	MOVQ neg+32(FP), R10
	XORQ AX, AX                 // total
	VXORPD Y15, Y15, Y15

prow:
	CMPQ R8, $0
	JLE  pdone
	XORQ R11, R11               // the row's count
	MOVQ R9, CX

pvec:
	CMPQ CX, $4
	JLT  pone
	VMOVUPD (SI), Y0
	VMAXPD Y0, Y15, Y1
	VCMPPD $0x11, Y15, Y0, Y2   // u < 0, quiet
	VMOVUPD Y1, (DI)
	VMOVMSKPD Y2, DX
	POPCNTL DX, DX
	ADDQ DX, R11
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JMP  pvec

pone:
	CMPQ CX, $0
	JEQ  pnext
	VMOVSD (SI), X0
	VMAXSD X0, X15, X1
	VCMPSD $0x11, X15, X0, X2
	VMOVSD X1, (DI)
	VMOVMSKPD X2, DX
	ANDQ $1, DX
	ADDQ DX, R11
	ADDQ $8, SI
	ADDQ $8, DI
	DECQ CX
	JMP  pone

pnext:
	MOVL R11, (R10)
	ADDQ $4, R10
	ADDQ R11, AX
	DECQ R8
	JMP  prow

pdone:
	MOVQ AX, ret+40(FP)
	VZEROUPPER
	RET

// func rank2AVX2(c, u, m *float64, k int)
//
// For t = 0, …, k−1: c[t][t:k] += u[t]·u[t:k], then −= m[t]·m[t:k], each
// fused; four entries at a time, then one at a time.
TEXT ·rank2AVX2(SB), NOSPLIT, $0-32
	MOVQ c+0(FP), DI            // c[t][t]
	MOVQ u+8(FP), SI            // u[t]
	MOVQ m+16(FP), BX           // m[t]
	MOVQ k+24(FP), CX           // k − t
	MOVQ CX, R10
	SHLQ $3, R10
	ADDQ $8, R10                // from c[t][t] to c[t+1][t+1]

rrow:
	CMPQ CX, $0
	JLE  rdone
	VBROADCASTSD (SI), Y14
	VBROADCASTSD (BX), Y13
	XORQ R8, R8
	MOVQ CX, R9

rvec:
	CMPQ R9, $4
	JLT  rone
	VMOVUPD (DI)(R8*1), Y0
	VFMADD231PD (SI)(R8*1), Y14, Y0
	VFNMADD231PD (BX)(R8*1), Y13, Y0
	VMOVUPD Y0, (DI)(R8*1)
	ADDQ $32, R8
	SUBQ $4, R9
	JMP  rvec

rone:
	CMPQ R9, $0
	JEQ  rnext
	VMOVSD (DI)(R8*1), X0
	VFMADD231SD (SI)(R8*1), X14, X0
	VFNMADD231SD (BX)(R8*1), X13, X0
	VMOVSD X0, (DI)(R8*1)
	ADDQ $8, R8
	DECQ R9
	JMP  rone

rnext:
	ADDQ R10, DI
	ADDQ $8, SI
	ADDQ $8, BX
	DECQ CX
	JMP  rrow

rdone:
	VZEROUPPER
	RET

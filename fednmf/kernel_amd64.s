//go:build amd64 && !purego

#include "textflag.h"

// func pairsGradZ2AVX2(np, m int, h2, gt, w3, gw3, gb2 *float64)
//
// Pair by pair, 16 outputs at a time: gw3 += gt_q·h2_q (fused), dz2 =
// gt_q·w3 masked where h2_q ≤ 0, gb2 += dz2, h2_q = dz2.
TEXT ·pairsGradZ2AVX2(SB), NOSPLIT, $0-56
	MOVQ m+8(FP), DX
	SHLQ $3, DX
	MOVQ h2+16(FP), R11         // h2_q
	MOVQ w3+32(FP), R10
	MOVQ gw3+40(FP), R9
	MOVQ gb2+48(FP), R12
	VXORPD Y13, Y13, Y13        // 0
	XORQ R14, R14               // q

zzpair:
	CMPQ R14, np+0(FP)
	JGE  zzdone
	MOVQ gt+24(FP), AX
	VBROADCASTSD (AX)(R14*8), Y12
	XORQ BX, BX

zzout:
	VMOVUPD 0(R11)(BX*1), Y0
	VMOVUPD 32(R11)(BX*1), Y1
	VMOVUPD 64(R11)(BX*1), Y2
	VMOVUPD 96(R11)(BX*1), Y3
	VMOVUPD 0(R9)(BX*1), Y4
	VMOVUPD 32(R9)(BX*1), Y5
	VMOVUPD 64(R9)(BX*1), Y6
	VMOVUPD 96(R9)(BX*1), Y7
	VFMADD231PD Y0, Y12, Y4
	VFMADD231PD Y1, Y12, Y5
	VFMADD231PD Y2, Y12, Y6
	VFMADD231PD Y3, Y12, Y7
	VMOVUPD Y4, 0(R9)(BX*1)
	VMOVUPD Y5, 32(R9)(BX*1)
	VMOVUPD Y6, 64(R9)(BX*1)
	VMOVUPD Y7, 96(R9)(BX*1)
	VCMPPD $0x0e, Y13, Y0, Y0   // h2 > 0
	VCMPPD $0x0e, Y13, Y1, Y1
	VCMPPD $0x0e, Y13, Y2, Y2
	VCMPPD $0x0e, Y13, Y3, Y3
	VMULPD 0(R10)(BX*1), Y12, Y4
	VMULPD 32(R10)(BX*1), Y12, Y5
	VMULPD 64(R10)(BX*1), Y12, Y6
	VMULPD 96(R10)(BX*1), Y12, Y7
	VANDPD Y0, Y4, Y0
	VANDPD Y1, Y5, Y1
	VANDPD Y2, Y6, Y2
	VANDPD Y3, Y7, Y3
	VMOVUPD Y0, 0(R11)(BX*1)
	VMOVUPD Y1, 32(R11)(BX*1)
	VMOVUPD Y2, 64(R11)(BX*1)
	VMOVUPD Y3, 96(R11)(BX*1)
	VADDPD 0(R12)(BX*1), Y0, Y0
	VADDPD 32(R12)(BX*1), Y1, Y1
	VADDPD 64(R12)(BX*1), Y2, Y2
	VADDPD 96(R12)(BX*1), Y3, Y3
	VMOVUPD Y0, 0(R12)(BX*1)
	VMOVUPD Y1, 32(R12)(BX*1)
	VMOVUPD Y2, 64(R12)(BX*1)
	VMOVUPD Y3, 96(R12)(BX*1)
	ADDQ $128, BX
	CMPQ BX, DX
	JLT  zzout
	ADDQ DX, R11
	INCQ R14
	JMP  zzpair

zzdone:
	VZEROUPPER
	RET

// func pairsForwardDenseAVX2(w2t, h1 *float64, np, units, m int, b2, w3, h2, tv *float64)
//
// For each block of 8 outputs, for each four pairs q..q+3 (np a multiple
// of 4): the accumulators Y0–Y7 (pair r's in Y(2r), Y(2r+1)) start at b2's
// block; for u = 0, …, units−1 in order, acc_r += h1_{q+r}[u]·w2t[u][block]
// (fused; a unit relu left at zero adds exactly nothing); relu; store to
// h2; tv_{q+r} (four lanes) += h2's block·w3's block, the second half fused.
//
// Registers: DX a row of w2t and h2 in bytes, R10 three; R8 a row of h1,
// R9 three; BX the block's byte offset; SI, DI, R11 the four pairs' rows of
// h1, h2 and tv; CX w2t's row u at the block, AX h1's column u; R13, R14
// counts. Y8, Y9 w2t's row, Y10 a broadcast, Y11 zero, Y12–Y13 b2's block,
// Y14–Y15 w3's.
TEXT ·pairsForwardDenseAVX2(SB), NOSPLIT, $0-72
	MOVQ m+32(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R10
	MOVQ units+24(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R9
	VXORPD Y11, Y11, Y11
	XORQ BX, BX

dfblock:
	CMPQ BX, DX
	JGE  dfdone
	MOVQ h1+8(FP), SI
	MOVQ h2+56(FP), DI
	MOVQ tv+64(FP), R11
	MOVQ b2+40(FP), AX
	VMOVUPD 0(AX)(BX*1), Y12
	VMOVUPD 32(AX)(BX*1), Y13
	MOVQ w3+48(FP), AX
	VMOVUPD 0(AX)(BX*1), Y14
	VMOVUPD 32(AX)(BX*1), Y15
	MOVQ np+16(FP), R14

dfquad:
	VMOVAPD Y12, Y0
	VMOVAPD Y13, Y1
	VMOVAPD Y12, Y2
	VMOVAPD Y13, Y3
	VMOVAPD Y12, Y4
	VMOVAPD Y13, Y5
	VMOVAPD Y12, Y6
	VMOVAPD Y13, Y7
	MOVQ w2t+0(FP), CX
	ADDQ BX, CX
	MOVQ SI, AX
	MOVQ units+24(FP), R13

dfunit:
	VMOVUPD 0(CX), Y8
	VMOVUPD 32(CX), Y9
	VBROADCASTSD (AX), Y10
	VFMADD231PD Y8, Y10, Y0
	VFMADD231PD Y9, Y10, Y1
	VBROADCASTSD (AX)(R8*1), Y10
	VFMADD231PD Y8, Y10, Y2
	VFMADD231PD Y9, Y10, Y3
	VBROADCASTSD (AX)(R8*2), Y10
	VFMADD231PD Y8, Y10, Y4
	VFMADD231PD Y9, Y10, Y5
	VBROADCASTSD (AX)(R9*1), Y10
	VFMADD231PD Y8, Y10, Y6
	VFMADD231PD Y9, Y10, Y7
	ADDQ $8, AX
	ADDQ DX, CX
	DECQ R13
	JNZ  dfunit

	VMAXPD Y11, Y0, Y0
	VMAXPD Y11, Y1, Y1
	VMAXPD Y11, Y2, Y2
	VMAXPD Y11, Y3, Y3
	VMAXPD Y11, Y4, Y4
	VMAXPD Y11, Y5, Y5
	VMAXPD Y11, Y6, Y6
	VMAXPD Y11, Y7, Y7
	LEAQ (DI)(BX*1), AX
	VMOVUPD Y0, 0(AX)
	VMOVUPD Y1, 32(AX)
	VMOVUPD Y2, 0(AX)(DX*1)
	VMOVUPD Y3, 32(AX)(DX*1)
	VMOVUPD Y4, 0(AX)(DX*2)
	VMOVUPD Y5, 32(AX)(DX*2)
	VMOVUPD Y6, 0(AX)(R10*1)
	VMOVUPD Y7, 32(AX)(R10*1)
	VMULPD Y14, Y0, Y0
	VFMADD231PD Y15, Y1, Y0
	VADDPD 0(R11), Y0, Y0
	VMOVUPD Y0, 0(R11)
	VMULPD Y14, Y2, Y2
	VFMADD231PD Y15, Y3, Y2
	VADDPD 32(R11), Y2, Y2
	VMOVUPD Y2, 32(R11)
	VMULPD Y14, Y4, Y4
	VFMADD231PD Y15, Y5, Y4
	VADDPD 64(R11), Y4, Y4
	VMOVUPD Y4, 64(R11)
	VMULPD Y14, Y6, Y6
	VFMADD231PD Y15, Y7, Y6
	VADDPD 96(R11), Y6, Y6
	VMOVUPD Y6, 96(R11)
	LEAQ (SI)(R8*4), SI
	LEAQ (DI)(DX*4), DI
	ADDQ $128, R11
	SUBQ $4, R14
	JNZ  dfquad
	ADDQ $64, BX
	JMP  dfblock

dfdone:
	VZEROUPPER
	RET

// func pairsGradZ1DenseAVX2(w2, dz2, h1 *float64, np, units, m int, dz1 *float64)
//
// For each four pairs q..q+3 (np a multiple of 4), for each block of 8
// units (units a multiple of 8): the accumulators Y0–Y7 (pair r's in
// Y(2r), Y(2r+1)) start at zero; for o = 0, …, m−1 in order, acc_r +=
// dz2_{q+r}[o]·w2[o][block] (fused; w2 is W2, m rows of units); then
// dz1_{q+r}'s block = acc_r where h1_{q+r} > 0 and 0 elsewhere.
//
// Registers: DX a row of dz2 in bytes, R10 three; R8 a row of w2, h1 and
// dz1, R9 three; BX the block's byte offset; SI the four pairs' rows of
// dz2, DI of h1, R11 of dz1; CX w2's row o at the block, AX dz2's column
// o; R13 the count. Y8, Y9 w2's row, Y10 a broadcast, Y11 zero.
TEXT ·pairsGradZ1DenseAVX2(SB), NOSPLIT, $0-56
	MOVQ m+40(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R10
	MOVQ units+32(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R9
	VXORPD Y11, Y11, Y11
	MOVQ dz2+8(FP), SI
	MOVQ h1+16(FP), DI
	MOVQ dz1+48(FP), R11
	MOVQ np+24(FP), R14

zquad:
	XORQ BX, BX

zblock:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ w2+0(FP), CX
	ADDQ BX, CX
	MOVQ SI, AX
	MOVQ m+40(FP), R13

zout:
	VMOVUPD 0(CX), Y8
	VMOVUPD 32(CX), Y9
	VBROADCASTSD (AX), Y10
	VFMADD231PD Y8, Y10, Y0
	VFMADD231PD Y9, Y10, Y1
	VBROADCASTSD (AX)(DX*1), Y10
	VFMADD231PD Y8, Y10, Y2
	VFMADD231PD Y9, Y10, Y3
	VBROADCASTSD (AX)(DX*2), Y10
	VFMADD231PD Y8, Y10, Y4
	VFMADD231PD Y9, Y10, Y5
	VBROADCASTSD (AX)(R10*1), Y10
	VFMADD231PD Y8, Y10, Y6
	VFMADD231PD Y9, Y10, Y7
	ADDQ $8, AX
	ADDQ R8, CX
	DECQ R13
	JNZ  zout

	LEAQ (DI)(BX*1), AX
	LEAQ (R11)(BX*1), CX
	VMOVUPD 0(AX), Y8
	VMOVUPD 32(AX), Y9
	VCMPPD $0x0e, Y11, Y8, Y8   // h1 > 0
	VCMPPD $0x0e, Y11, Y9, Y9
	VANDPD Y8, Y0, Y0
	VANDPD Y9, Y1, Y1
	VMOVUPD Y0, 0(CX)
	VMOVUPD Y1, 32(CX)
	VMOVUPD 0(AX)(R8*1), Y8
	VMOVUPD 32(AX)(R8*1), Y9
	VCMPPD $0x0e, Y11, Y8, Y8
	VCMPPD $0x0e, Y11, Y9, Y9
	VANDPD Y8, Y2, Y2
	VANDPD Y9, Y3, Y3
	VMOVUPD Y2, 0(CX)(R8*1)
	VMOVUPD Y3, 32(CX)(R8*1)
	VMOVUPD 0(AX)(R8*2), Y8
	VMOVUPD 32(AX)(R8*2), Y9
	VCMPPD $0x0e, Y11, Y8, Y8
	VCMPPD $0x0e, Y11, Y9, Y9
	VANDPD Y8, Y4, Y4
	VANDPD Y9, Y5, Y5
	VMOVUPD Y4, 0(CX)(R8*2)
	VMOVUPD Y5, 32(CX)(R8*2)
	VMOVUPD 0(AX)(R9*1), Y8
	VMOVUPD 32(AX)(R9*1), Y9
	VCMPPD $0x0e, Y11, Y8, Y8
	VCMPPD $0x0e, Y11, Y9, Y9
	VANDPD Y8, Y6, Y6
	VANDPD Y9, Y7, Y7
	VMOVUPD Y6, 0(CX)(R9*1)
	VMOVUPD Y7, 32(CX)(R9*1)
	ADDQ $64, BX
	CMPQ BX, R8
	JLT  zblock
	LEAQ (SI)(DX*4), SI
	LEAQ (DI)(R8*4), DI
	LEAQ (R11)(R8*4), R11
	SUBQ $4, R14
	JNZ  zquad
	VZEROUPPER
	RET

// func pairsGradW2DenseAVX2(gw2t, h1, dz2 *float64, np, units, m int)
//
// For each block of 8 outputs, for each four units u..u+3 (units a
// multiple of 4): the accumulators Y0–Y7 (unit u+r's in Y(2r), Y(2r+1))
// start at gw2t's rows u..u+3 at the block; for q = 0, …, np−1 in order,
// acc_r += h1_q[u+r]·dz2_q's block (fused; a unit relu left at zero adds
// exactly nothing); store back.
//
// Registers: DX a row of gw2t and dz2 in bytes, R10 three; R8 a row of h1;
// BX the block's byte offset; R12 gw2t's row u at the block, DI h1's
// column u; CX dz2_q's block, AX h1_q's column u; R13 the count, R14 the
// next unit. Y8, Y9 dz2_q's block, Y10 a broadcast.
TEXT ·pairsGradW2DenseAVX2(SB), NOSPLIT, $0-48
	MOVQ m+40(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R10
	MOVQ units+32(FP), R8
	SHLQ $3, R8
	XORQ BX, BX

gdblock:
	CMPQ BX, DX
	JGE  gddone
	MOVQ gw2t+0(FP), R12
	ADDQ BX, R12
	MOVQ h1+8(FP), DI
	XORQ R14, R14

gdquad:
	VMOVUPD 0(R12), Y0
	VMOVUPD 32(R12), Y1
	VMOVUPD 0(R12)(DX*1), Y2
	VMOVUPD 32(R12)(DX*1), Y3
	VMOVUPD 0(R12)(DX*2), Y4
	VMOVUPD 32(R12)(DX*2), Y5
	VMOVUPD 0(R12)(R10*1), Y6
	VMOVUPD 32(R12)(R10*1), Y7
	MOVQ dz2+16(FP), CX
	ADDQ BX, CX
	MOVQ DI, AX
	MOVQ np+24(FP), R13

gdpair:
	VMOVUPD 0(CX), Y8
	VMOVUPD 32(CX), Y9
	VBROADCASTSD 0(AX), Y10
	VFMADD231PD Y8, Y10, Y0
	VFMADD231PD Y9, Y10, Y1
	VBROADCASTSD 8(AX), Y10
	VFMADD231PD Y8, Y10, Y2
	VFMADD231PD Y9, Y10, Y3
	VBROADCASTSD 16(AX), Y10
	VFMADD231PD Y8, Y10, Y4
	VFMADD231PD Y9, Y10, Y5
	VBROADCASTSD 24(AX), Y10
	VFMADD231PD Y8, Y10, Y6
	VFMADD231PD Y9, Y10, Y7
	ADDQ R8, AX
	ADDQ DX, CX
	DECQ R13
	JNZ  gdpair

	VMOVUPD Y0, 0(R12)
	VMOVUPD Y1, 32(R12)
	VMOVUPD Y2, 0(R12)(DX*1)
	VMOVUPD Y3, 32(R12)(DX*1)
	VMOVUPD Y4, 0(R12)(DX*2)
	VMOVUPD Y5, 32(R12)(DX*2)
	VMOVUPD Y6, 0(R12)(R10*1)
	VMOVUPD Y7, 32(R12)(R10*1)
	LEAQ (R12)(DX*4), R12
	ADDQ $32, DI
	ADDQ $4, R14
	CMPQ R14, units+32(FP)
	JLT  gdquad
	ADDQ $64, BX
	JMP  gdblock

gddone:
	VZEROUPPER
	RET

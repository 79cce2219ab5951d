//go:build amd64 && !purego

#include "textflag.h"

// func pairsGradZ2AVX2(np, m int, h2, gt, w3, gw3, gb2 *float64, mask *uint16)
//
// Pair by pair, 16 outputs at a time: gw3 += gt_q·h2_q (fused), dz2 =
// gt_q·w3 masked where h2_q ≤ 0, gb2 += dz2, h2_q = dz2, and the next
// word of mask has bit i set where h2_q > 0 at the i-th of the 16.
TEXT ·pairsGradZ2AVX2(SB), NOSPLIT, $0-64
	MOVQ m+8(FP), DX
	SHLQ $3, DX
	MOVQ h2+16(FP), R11         // h2_q
	MOVQ w3+32(FP), R10
	MOVQ gw3+40(FP), R9
	MOVQ gb2+48(FP), R12
	VXORPD Y13, Y13, Y13        // 0
	XORQ R14, R14               // q
	MOVQ mask+56(FP), R13

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
	VMOVMSKPD Y0, SI
	VMOVMSKPD Y1, CX
	SHLL $4, CX
	ORL  CX, SI
	VMOVMSKPD Y2, CX
	SHLL $8, CX
	ORL  CX, SI
	VMOVMSKPD Y3, CX
	SHLL $12, CX
	ORL  CX, SI
	MOVW SI, (R13)
	ADDQ $2, R13
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
// w2t is W2ᵀ in panels of 8 columns (units rows of 8 each). For each
// block of 8 outputs, for each four pairs q..q+3 (np a multiple of 4): the
// accumulators Y0–Y7 (pair r's in Y(2r), Y(2r+1)) start at b2's block;
// for u = 0, …, units−1 in order, acc_r += h1_{q+r}[u]·w2t[u][block]
// (fused; a unit relu left at zero adds exactly nothing); relu; store to
// h2; tv_{q+r} (four lanes) += h2's block·w3's block, the second half fused.
//
// Registers: DX a row of h2 in bytes, R10 three; R8 a row of h1, R9
// three; BX the block's byte offset; SI, DI, R11 the four pairs' rows of
// h1, h2 and tv; R12 the block's panel, CX its row u, AX h1's column u;
// R13, R14 counts. Y8, Y9 the panel's row, Y10 a broadcast, Y11 zero, Y12–Y13 b2's block,
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
	MOVQ w2t+0(FP), R12

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
	MOVQ R12, CX
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
	ADDQ $64, CX
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
	LEAQ (R12)(R8*8), R12
	JMP  dfblock

dfdone:
	VZEROUPPER
	RET

// func pairsGradZ1DenseAVX2(w2, dz2, h1 *float64, np, units, m int, dz1 *float64)
//
// For each four pairs q..q+3 (np a multiple of 4), for each block of 8
// units (units a multiple of 8): the accumulators Y0–Y7 (pair r's in
// Y(2r), Y(2r+1)) start at zero; for o = 0, …, m−1 in order, acc_r +=
// dz2_{q+r}[o]·w2[o][block] (fused; w2 is W2, m rows of units, in panels
// of 8 columns); then
// dz1_{q+r}'s block = acc_r where h1_{q+r} > 0 and 0 elsewhere.
//
// Registers: DX a row of dz2 in bytes, R10 three; R8 a row of w2, h1 and
// dz1, R9 three; BX the block's byte offset; SI the four pairs' rows of
// dz2, DI of h1, R11 of dz1; R12 the block's panel, CX its row o, AX
// dz2's column o; R13 the count. Y8, Y9 w2's row, Y10 a broadcast, Y11 zero.
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
	MOVQ w2+0(FP), R12

zblock:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ R12, CX
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
	ADDQ $64, CX
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
	LEAQ (R12)(DX*8), R12
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

// The same three products with four pairs (or units) by sixteen outputs
// in registers, for CPUs with AVX-512VL: the sixteen accumulators are
// Y0–Y15 and the loaded row and broadcasts Y16 and up, which only the
// EVEX encoding reaches; the vectors stay 256 bits wide.

// func pairsForwardDenseAVX512(w2t, h1 *float64, np, units, m int, b2, w3, h2, tv *float64)
//
// pairsForwardDenseAVX2 on blocks of 16 outputs (w2t in panels of 16
// columns, R12 the block's), but over the units listed for the four pairs
// (those active in any of them; the others would add exactly nothing):
// the list of the i-th four pairs is at list[i·(units+1)], its count
// first and then the units in order. Pair r's accumulators
// are Y(4r)–Y(4r+3); w2t's row in Y16–Y19, a broadcast in Y20, zero in
// Y21, b2's block in Y22–Y25 and w3's in Y26–Y29.
TEXT ·pairsForwardDenseAVX512(SB), NOSPLIT, $24-80
	MOVQ m+32(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R10
	MOVQ units+24(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R9
	VXORPD Y21, Y21, Y21
	XORQ BX, BX
	MOVQ w2t+0(FP), R12
	MOVQ R8, AX
	SHRQ $1, AX
	ADDQ $4, AX
	MOVQ AX, ls-24(SP)          // a quad's list in bytes

efblock:
	CMPQ BX, DX
	JGE  efdone
	MOVQ h1+8(FP), SI
	MOVQ h2+56(FP), DI
	MOVQ tv+64(FP), R11
	MOVQ b2+40(FP), AX
	VMOVUPD 0(AX)(BX*1), Y22
	VMOVUPD 32(AX)(BX*1), Y23
	VMOVUPD 64(AX)(BX*1), Y24
	VMOVUPD 96(AX)(BX*1), Y25
	MOVQ w3+48(FP), AX
	VMOVUPD 0(AX)(BX*1), Y26
	VMOVUPD 32(AX)(BX*1), Y27
	VMOVUPD 64(AX)(BX*1), Y28
	VMOVUPD 96(AX)(BX*1), Y29
	MOVQ np+16(FP), AX
	MOVQ AX, nq-8(SP)
	MOVQ list+72(FP), R14

efquad:
	VMOVAPD Y22, Y0
	VMOVAPD Y23, Y1
	VMOVAPD Y24, Y2
	VMOVAPD Y25, Y3
	VMOVAPD Y22, Y4
	VMOVAPD Y23, Y5
	VMOVAPD Y24, Y6
	VMOVAPD Y25, Y7
	VMOVAPD Y22, Y8
	VMOVAPD Y23, Y9
	VMOVAPD Y24, Y10
	VMOVAPD Y25, Y11
	VMOVAPD Y22, Y12
	VMOVAPD Y23, Y13
	VMOVAPD Y24, Y14
	VMOVAPD Y25, Y15
	MOVQ R14, lb-16(SP)
	MOVLQSX (R14), R13
	TESTQ R13, R13
	JZ   efepi

efunit:
	ADDQ $4, R14
	MOVLQSX (R14), CX
	LEAQ (SI)(CX*8), AX
	SHLQ $7, CX
	ADDQ R12, CX
	VMOVUPD 0(CX), Y16
	VMOVUPD 32(CX), Y17
	VMOVUPD 64(CX), Y18
	VMOVUPD 96(CX), Y19
	VBROADCASTSD (AX), Y20
	VFMADD231PD Y16, Y20, Y0
	VFMADD231PD Y17, Y20, Y1
	VFMADD231PD Y18, Y20, Y2
	VFMADD231PD Y19, Y20, Y3
	VBROADCASTSD (AX)(R8*1), Y20
	VFMADD231PD Y16, Y20, Y4
	VFMADD231PD Y17, Y20, Y5
	VFMADD231PD Y18, Y20, Y6
	VFMADD231PD Y19, Y20, Y7
	VBROADCASTSD (AX)(R8*2), Y20
	VFMADD231PD Y16, Y20, Y8
	VFMADD231PD Y17, Y20, Y9
	VFMADD231PD Y18, Y20, Y10
	VFMADD231PD Y19, Y20, Y11
	VBROADCASTSD (AX)(R9*1), Y20
	VFMADD231PD Y16, Y20, Y12
	VFMADD231PD Y17, Y20, Y13
	VFMADD231PD Y18, Y20, Y14
	VFMADD231PD Y19, Y20, Y15
	DECQ R13
	JNZ  efunit

efepi:

	VMAXPD Y21, Y0, Y0
	VMAXPD Y21, Y1, Y1
	VMAXPD Y21, Y2, Y2
	VMAXPD Y21, Y3, Y3
	VMAXPD Y21, Y4, Y4
	VMAXPD Y21, Y5, Y5
	VMAXPD Y21, Y6, Y6
	VMAXPD Y21, Y7, Y7
	VMAXPD Y21, Y8, Y8
	VMAXPD Y21, Y9, Y9
	VMAXPD Y21, Y10, Y10
	VMAXPD Y21, Y11, Y11
	VMAXPD Y21, Y12, Y12
	VMAXPD Y21, Y13, Y13
	VMAXPD Y21, Y14, Y14
	VMAXPD Y21, Y15, Y15
	LEAQ (DI)(BX*1), AX
	VMOVUPD Y0, 0(AX)
	VMOVUPD Y1, 32(AX)
	VMOVUPD Y2, 64(AX)
	VMOVUPD Y3, 96(AX)
	VMOVUPD Y4, 0(AX)(DX*1)
	VMOVUPD Y5, 32(AX)(DX*1)
	VMOVUPD Y6, 64(AX)(DX*1)
	VMOVUPD Y7, 96(AX)(DX*1)
	VMOVUPD Y8, 0(AX)(DX*2)
	VMOVUPD Y9, 32(AX)(DX*2)
	VMOVUPD Y10, 64(AX)(DX*2)
	VMOVUPD Y11, 96(AX)(DX*2)
	VMOVUPD Y12, 0(AX)(R10*1)
	VMOVUPD Y13, 32(AX)(R10*1)
	VMOVUPD Y14, 64(AX)(R10*1)
	VMOVUPD Y15, 96(AX)(R10*1)
	VMULPD Y26, Y0, Y0
	VFMADD231PD Y27, Y1, Y0
	VFMADD231PD Y28, Y2, Y0
	VFMADD231PD Y29, Y3, Y0
	VADDPD 0(R11), Y0, Y0
	VMOVUPD Y0, 0(R11)
	VMULPD Y26, Y4, Y4
	VFMADD231PD Y27, Y5, Y4
	VFMADD231PD Y28, Y6, Y4
	VFMADD231PD Y29, Y7, Y4
	VADDPD 32(R11), Y4, Y4
	VMOVUPD Y4, 32(R11)
	VMULPD Y26, Y8, Y8
	VFMADD231PD Y27, Y9, Y8
	VFMADD231PD Y28, Y10, Y8
	VFMADD231PD Y29, Y11, Y8
	VADDPD 64(R11), Y8, Y8
	VMOVUPD Y8, 64(R11)
	VMULPD Y26, Y12, Y12
	VFMADD231PD Y27, Y13, Y12
	VFMADD231PD Y28, Y14, Y12
	VFMADD231PD Y29, Y15, Y12
	VADDPD 96(R11), Y12, Y12
	VMOVUPD Y12, 96(R11)
	LEAQ (SI)(R8*4), SI
	LEAQ (DI)(DX*4), DI
	ADDQ $128, R11
	MOVQ lb-16(SP), R14
	ADDQ ls-24(SP), R14
	SUBQ $4, nq-8(SP)
	JNZ  efquad
	ADDQ $128, BX
	MOVQ R8, AX
	SHLQ $4, AX
	ADDQ AX, R12
	JMP  efblock

efdone:
	VZEROUPPER
	RET

// func pairsGradZ1DenseAVX512(w2, dz2, h1 *float64, np, units, m int, dz1 *float64)
//
// pairsGradZ1DenseAVX2 on blocks of 16 units (units a multiple of 16),
// over the outputs o listed for the four pairs (those where any of their
// dz2 may be non-zero; the others would add exactly nothing), in chunks
// of 128 outputs: the list of the i-th four pairs in chunk c is at
// list[(c·np/4 + i)·129], its count first and then the outputs in order.
// The chunks go so that the chunk of W2's panel (16 KB) stays in
// the first-level cache over the pairs: pair r's accumulators are
// Y(4r)–Y(4r+3), starting at zero for the first chunk and at the sum so
// far (stored in dz1) for the others; w2's row Y16–Y19, a broadcast Y20.
// After the last chunk the sums in dz1 are masked where h1 ≤ 0, with Y0
// and Y1 (the compare needs registers below 16). Each entry is the same
// chain of fused multiply-adds over o in order as without chunks.
//
// Registers: DX a row of dz2 in bytes, R10 three; R8 a row of h1 and dz1,
// R9 three; BX the block's byte offset; R12 the block's panel; SI the four
// pairs' rows of dz2, DI of h1, R11 of dz1; R14 the list; CX, AX the inner
// loop's pointers; R13 the count. On the stack: kc the chunk's byte offset
// in a row of dz2, cl its lists, nq the pairs left, lb the four pairs'
// list.
TEXT ·pairsGradZ1DenseAVX512(SB), NOSPLIT, $32-64
	MOVQ m+40(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R10
	MOVQ units+32(FP), R8
	SHLQ $3, R8
	LEAQ (R8)(R8*2), R9
	MOVQ $0, kc-8(SP)
	MOVQ list+56(FP), AX
	MOVQ AX, cl-16(SP)

ezchunk:
	MOVQ kc-8(SP), AX
	CMPQ AX, DX
	JGE  ezdone
	XORQ BX, BX
	MOVQ w2+0(FP), R12

ezblock:
	MOVQ dz2+8(FP), SI
	MOVQ h1+16(FP), DI
	MOVQ dz1+48(FP), R11
	MOVQ np+24(FP), AX
	MOVQ AX, nq-24(SP)
	MOVQ cl-16(SP), R14

ezquad:
	LEAQ (R11)(BX*1), CX
	CMPQ kc-8(SP), $0
	JNE  ezload
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
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	VXORPD Y15, Y15, Y15
	JMP  ezstart

ezload:
	VMOVUPD 0(CX), Y0
	VMOVUPD 32(CX), Y1
	VMOVUPD 64(CX), Y2
	VMOVUPD 96(CX), Y3
	VMOVUPD 0(CX)(R8*1), Y4
	VMOVUPD 32(CX)(R8*1), Y5
	VMOVUPD 64(CX)(R8*1), Y6
	VMOVUPD 96(CX)(R8*1), Y7
	VMOVUPD 0(CX)(R8*2), Y8
	VMOVUPD 32(CX)(R8*2), Y9
	VMOVUPD 64(CX)(R8*2), Y10
	VMOVUPD 96(CX)(R8*2), Y11
	VMOVUPD 0(CX)(R9*1), Y12
	VMOVUPD 32(CX)(R9*1), Y13
	VMOVUPD 64(CX)(R9*1), Y14
	VMOVUPD 96(CX)(R9*1), Y15

ezstart:
	MOVQ R14, lb-32(SP)
	MOVLQSX (R14), R13
	TESTQ R13, R13
	JZ   ezstore

ezout:
	ADDQ $4, R14
	MOVLQSX (R14), CX
	LEAQ (SI)(CX*8), AX
	SHLQ $7, CX
	ADDQ R12, CX
	VMOVUPD 0(CX), Y16
	VMOVUPD 32(CX), Y17
	VMOVUPD 64(CX), Y18
	VMOVUPD 96(CX), Y19
	VBROADCASTSD (AX), Y20
	VFMADD231PD Y16, Y20, Y0
	VFMADD231PD Y17, Y20, Y1
	VFMADD231PD Y18, Y20, Y2
	VFMADD231PD Y19, Y20, Y3
	VBROADCASTSD (AX)(DX*1), Y20
	VFMADD231PD Y16, Y20, Y4
	VFMADD231PD Y17, Y20, Y5
	VFMADD231PD Y18, Y20, Y6
	VFMADD231PD Y19, Y20, Y7
	VBROADCASTSD (AX)(DX*2), Y20
	VFMADD231PD Y16, Y20, Y8
	VFMADD231PD Y17, Y20, Y9
	VFMADD231PD Y18, Y20, Y10
	VFMADD231PD Y19, Y20, Y11
	VBROADCASTSD (AX)(R10*1), Y20
	VFMADD231PD Y16, Y20, Y12
	VFMADD231PD Y17, Y20, Y13
	VFMADD231PD Y18, Y20, Y14
	VFMADD231PD Y19, Y20, Y15
	DECQ R13
	JNZ  ezout

ezstore:
	LEAQ (R11)(BX*1), CX
	VMOVUPD Y0, 0(CX)
	VMOVUPD Y1, 32(CX)
	VMOVUPD Y2, 64(CX)
	VMOVUPD Y3, 96(CX)
	VMOVUPD Y4, 0(CX)(R8*1)
	VMOVUPD Y5, 32(CX)(R8*1)
	VMOVUPD Y6, 64(CX)(R8*1)
	VMOVUPD Y7, 96(CX)(R8*1)
	VMOVUPD Y8, 0(CX)(R8*2)
	VMOVUPD Y9, 32(CX)(R8*2)
	VMOVUPD Y10, 64(CX)(R8*2)
	VMOVUPD Y11, 96(CX)(R8*2)
	VMOVUPD Y12, 0(CX)(R9*1)
	VMOVUPD Y13, 32(CX)(R9*1)
	VMOVUPD Y14, 64(CX)(R9*1)
	VMOVUPD Y15, 96(CX)(R9*1)
	MOVQ kc-8(SP), AX
	ADDQ $1024, AX
	CMPQ AX, DX
	JLT  eznext
	LEAQ (DI)(BX*1), AX
	VXORPD Y0, Y0, Y0
	VMOVUPD 0(AX), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 0(CX), Y1, Y1
	VMOVUPD Y1, 0(CX)
	VMOVUPD 32(AX), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 32(CX), Y1, Y1
	VMOVUPD Y1, 32(CX)
	VMOVUPD 64(AX), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 64(CX), Y1, Y1
	VMOVUPD Y1, 64(CX)
	VMOVUPD 96(AX), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 96(CX), Y1, Y1
	VMOVUPD Y1, 96(CX)
	VMOVUPD 0(AX)(R8*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 0(CX)(R8*1), Y1, Y1
	VMOVUPD Y1, 0(CX)(R8*1)
	VMOVUPD 32(AX)(R8*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 32(CX)(R8*1), Y1, Y1
	VMOVUPD Y1, 32(CX)(R8*1)
	VMOVUPD 64(AX)(R8*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 64(CX)(R8*1), Y1, Y1
	VMOVUPD Y1, 64(CX)(R8*1)
	VMOVUPD 96(AX)(R8*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 96(CX)(R8*1), Y1, Y1
	VMOVUPD Y1, 96(CX)(R8*1)
	VMOVUPD 0(AX)(R8*2), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 0(CX)(R8*2), Y1, Y1
	VMOVUPD Y1, 0(CX)(R8*2)
	VMOVUPD 32(AX)(R8*2), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 32(CX)(R8*2), Y1, Y1
	VMOVUPD Y1, 32(CX)(R8*2)
	VMOVUPD 64(AX)(R8*2), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 64(CX)(R8*2), Y1, Y1
	VMOVUPD Y1, 64(CX)(R8*2)
	VMOVUPD 96(AX)(R8*2), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 96(CX)(R8*2), Y1, Y1
	VMOVUPD Y1, 96(CX)(R8*2)
	VMOVUPD 0(AX)(R9*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 0(CX)(R9*1), Y1, Y1
	VMOVUPD Y1, 0(CX)(R9*1)
	VMOVUPD 32(AX)(R9*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 32(CX)(R9*1), Y1, Y1
	VMOVUPD Y1, 32(CX)(R9*1)
	VMOVUPD 64(AX)(R9*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 64(CX)(R9*1), Y1, Y1
	VMOVUPD Y1, 64(CX)(R9*1)
	VMOVUPD 96(AX)(R9*1), Y1
	VCMPPD $0x0e, Y0, Y1, Y1
	VANDPD 96(CX)(R9*1), Y1, Y1
	VMOVUPD Y1, 96(CX)(R9*1)

eznext:
	LEAQ (SI)(DX*4), SI
	LEAQ (DI)(R8*4), DI
	LEAQ (R11)(R8*4), R11
	MOVQ lb-32(SP), R14
	ADDQ $516, R14
	SUBQ $4, nq-24(SP)
	JNZ  ezquad
	ADDQ $128, BX
	MOVQ DX, AX
	SHLQ $4, AX
	ADDQ AX, R12
	CMPQ BX, R8
	JLT  ezblock
	ADDQ $1024, kc-8(SP)
	MOVQ R14, cl-16(SP)
	JMP  ezchunk

ezdone:
	VZEROUPPER
	RET

// func pairsGradW2DenseAVX512(gw2t, h1, dz2 *float64, np, units, m int)
//
// pairsGradW2DenseAVX2 on blocks of 16 outputs: unit u+r's accumulators
// are Y(4r)–Y(4r+3), dz2_q's block Y16–Y19, a broadcast Y20.
TEXT ·pairsGradW2DenseAVX512(SB), NOSPLIT, $0-48
	MOVQ m+40(FP), DX
	SHLQ $3, DX
	LEAQ (DX)(DX*2), R10
	MOVQ units+32(FP), R8
	SHLQ $3, R8
	XORQ BX, BX

egblock:
	CMPQ BX, DX
	JGE  egdone
	MOVQ gw2t+0(FP), R12
	ADDQ BX, R12
	MOVQ h1+8(FP), DI
	XORQ R14, R14

egquad:
	VMOVUPD 0(R12), Y0
	VMOVUPD 32(R12), Y1
	VMOVUPD 64(R12), Y2
	VMOVUPD 96(R12), Y3
	VMOVUPD 0(R12)(DX*1), Y4
	VMOVUPD 32(R12)(DX*1), Y5
	VMOVUPD 64(R12)(DX*1), Y6
	VMOVUPD 96(R12)(DX*1), Y7
	VMOVUPD 0(R12)(DX*2), Y8
	VMOVUPD 32(R12)(DX*2), Y9
	VMOVUPD 64(R12)(DX*2), Y10
	VMOVUPD 96(R12)(DX*2), Y11
	VMOVUPD 0(R12)(R10*1), Y12
	VMOVUPD 32(R12)(R10*1), Y13
	VMOVUPD 64(R12)(R10*1), Y14
	VMOVUPD 96(R12)(R10*1), Y15
	MOVQ dz2+16(FP), CX
	ADDQ BX, CX
	MOVQ DI, AX
	MOVQ np+24(FP), R13

egpair:
	VMOVUPD 0(CX), Y16
	VMOVUPD 32(CX), Y17
	VMOVUPD 64(CX), Y18
	VMOVUPD 96(CX), Y19
	VBROADCASTSD 0(AX), Y20
	VFMADD231PD Y16, Y20, Y0
	VFMADD231PD Y17, Y20, Y1
	VFMADD231PD Y18, Y20, Y2
	VFMADD231PD Y19, Y20, Y3
	VBROADCASTSD 8(AX), Y20
	VFMADD231PD Y16, Y20, Y4
	VFMADD231PD Y17, Y20, Y5
	VFMADD231PD Y18, Y20, Y6
	VFMADD231PD Y19, Y20, Y7
	VBROADCASTSD 16(AX), Y20
	VFMADD231PD Y16, Y20, Y8
	VFMADD231PD Y17, Y20, Y9
	VFMADD231PD Y18, Y20, Y10
	VFMADD231PD Y19, Y20, Y11
	VBROADCASTSD 24(AX), Y20
	VFMADD231PD Y16, Y20, Y12
	VFMADD231PD Y17, Y20, Y13
	VFMADD231PD Y18, Y20, Y14
	VFMADD231PD Y19, Y20, Y15
	ADDQ R8, AX
	ADDQ DX, CX
	DECQ R13
	JNZ  egpair

	VMOVUPD Y0, 0(R12)
	VMOVUPD Y1, 32(R12)
	VMOVUPD Y2, 64(R12)
	VMOVUPD Y3, 96(R12)
	VMOVUPD Y4, 0(R12)(DX*1)
	VMOVUPD Y5, 32(R12)(DX*1)
	VMOVUPD Y6, 64(R12)(DX*1)
	VMOVUPD Y7, 96(R12)(DX*1)
	VMOVUPD Y8, 0(R12)(DX*2)
	VMOVUPD Y9, 32(R12)(DX*2)
	VMOVUPD Y10, 64(R12)(DX*2)
	VMOVUPD Y11, 96(R12)(DX*2)
	VMOVUPD Y12, 0(R12)(R10*1)
	VMOVUPD Y13, 32(R12)(R10*1)
	VMOVUPD Y14, 64(R12)(R10*1)
	VMOVUPD Y15, 96(R12)(R10*1)
	LEAQ (R12)(DX*4), R12
	ADDQ $32, DI
	ADDQ $4, R14
	CMPQ R14, units+32(FP)
	JLT  egquad
	ADDQ $128, BX
	JMP  egblock

egdone:
	VZEROUPPER
	RET

//go:build amd64 && !purego

#include "textflag.h"

// func pairsForwardAVX2(w2t, h1 *float64, act, nAct *int32, np, units, m int, b2, w3, h2, t *float64)
//
// For each chunk of 32 outputs, for each pair q: Y0–Y7 start at b2's
// chunk; for each active unit u in order, Y0–Y7 += h1_q[u]·w2t[u·m + chunk]
// (one rounding per fused multiply-add); relu; store to h2_q; t[q] += the
// chunk's products with w3, added pairwise over the eight registers and
// then over the four lanes.
TEXT ·pairsForwardAVX2(SB), NOSPLIT, $0-88
	MOVQ m+48(FP), DX
	SHLQ $3, DX                 // bytes in a row of w2t and of h2
	MOVQ b2+56(FP), R9
	MOVQ w3+64(FP), R10
	VXORPD Y9, Y9, Y9           // 0
	XORQ BX, BX                 // byte offset of the chunk

fchunk:
	CMPQ BX, DX
	JGE  fdone
	MOVQ w2t+0(FP), R12
	ADDQ BX, R12                // w2t + chunk
	MOVQ h1+8(FP), R8           // h1_q
	MOVQ act+16(FP), DI         // act_q
	MOVQ h2+72(FP), R11         // h2_q
	XORQ R14, R14               // q

fpair:
	CMPQ R14, np+32(FP)
	JGE  fnext
	VMOVUPD 0(R9)(BX*1), Y0
	VMOVUPD 32(R9)(BX*1), Y1
	VMOVUPD 64(R9)(BX*1), Y2
	VMOVUPD 96(R9)(BX*1), Y3
	VMOVUPD 128(R9)(BX*1), Y4
	VMOVUPD 160(R9)(BX*1), Y5
	VMOVUPD 192(R9)(BX*1), Y6
	VMOVUPD 224(R9)(BX*1), Y7
	MOVQ nAct+24(FP), AX
	MOVLQSX (AX)(R14*4), CX
	XORQ R13, R13               // k
	CMPQ R13, CX
	JGE  frelu

funit:
	MOVLQSX (DI)(R13*4), AX
	VBROADCASTSD (R8)(AX*8), Y8
	IMULQ DX, AX
	ADDQ R12, AX
	VFMADD231PD 0(AX), Y8, Y0
	VFMADD231PD 32(AX), Y8, Y1
	VFMADD231PD 64(AX), Y8, Y2
	VFMADD231PD 96(AX), Y8, Y3
	VFMADD231PD 128(AX), Y8, Y4
	VFMADD231PD 160(AX), Y8, Y5
	VFMADD231PD 192(AX), Y8, Y6
	VFMADD231PD 224(AX), Y8, Y7
	INCQ R13
	CMPQ R13, CX
	JLT  funit

frelu:
	VMAXPD Y9, Y0, Y0
	VMAXPD Y9, Y1, Y1
	VMAXPD Y9, Y2, Y2
	VMAXPD Y9, Y3, Y3
	VMAXPD Y9, Y4, Y4
	VMAXPD Y9, Y5, Y5
	VMAXPD Y9, Y6, Y6
	VMAXPD Y9, Y7, Y7
	VMOVUPD Y0, 0(R11)(BX*1)
	VMOVUPD Y1, 32(R11)(BX*1)
	VMOVUPD Y2, 64(R11)(BX*1)
	VMOVUPD Y3, 96(R11)(BX*1)
	VMOVUPD Y4, 128(R11)(BX*1)
	VMOVUPD Y5, 160(R11)(BX*1)
	VMOVUPD Y6, 192(R11)(BX*1)
	VMOVUPD Y7, 224(R11)(BX*1)
	VMULPD 0(R10)(BX*1), Y0, Y0
	VMULPD 32(R10)(BX*1), Y1, Y1
	VMULPD 64(R10)(BX*1), Y2, Y2
	VMULPD 96(R10)(BX*1), Y3, Y3
	VMULPD 128(R10)(BX*1), Y4, Y4
	VMULPD 160(R10)(BX*1), Y5, Y5
	VMULPD 192(R10)(BX*1), Y6, Y6
	VMULPD 224(R10)(BX*1), Y7, Y7
	VADDPD Y1, Y0, Y0
	VADDPD Y3, Y2, Y2
	VADDPD Y5, Y4, Y4
	VADDPD Y7, Y6, Y6
	VADDPD Y2, Y0, Y0
	VADDPD Y6, Y4, Y4
	VADDPD Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD X1, X0, X0
	VUNPCKHPD X0, X0, X1
	VADDSD X1, X0, X0
	MOVQ t+80(FP), AX
	VADDSD (AX)(R14*8), X0, X0
	VMOVSD X0, (AX)(R14*8)
	MOVQ units+40(FP), AX
	LEAQ (R8)(AX*8), R8
	LEAQ (DI)(AX*4), DI
	ADDQ DX, R11
	INCQ R14
	JMP  fpair

fnext:
	ADDQ $256, BX
	JMP  fchunk

fdone:
	VZEROUPPER
	RET

// func pairsBackwardAVX2(w2t, h1 *float64, act, nAct *int32, np, units, m int, h2, gt, w3, gw3, gb2, dz1 *float64)
//
// First, pair by pair, 16 outputs at a time: gw3 += gt_q·h2_q (fused),
// dz2 = gt_q·w3 masked where h2_q ≤ 0, gb2 += dz2, h2_q = dz2. Then for
// each chunk of 32 outputs, for each pair q (its dz2 chunk in Y0–Y7), for
// each active unit u: dz1_q[u] += dz2·w2t[u·m + chunk], in two
// accumulators added together and then over the four lanes. gw2t is
// pairsGradW2AVX2's.
TEXT ·pairsBackwardAVX2(SB), NOSPLIT, $0-104
	MOVQ m+48(FP), DX
	SHLQ $3, DX
	MOVQ h2+56(FP), R11         // h2_q
	MOVQ w3+72(FP), R10
	MOVQ gw3+80(FP), R9
	MOVQ gb2+88(FP), R12
	VXORPD Y13, Y13, Y13        // 0
	XORQ R14, R14               // q

bpass1:
	CMPQ R14, np+32(FP)
	JGE  bpass2
	MOVQ gt+64(FP), AX
	VBROADCASTSD (AX)(R14*8), Y12
	XORQ BX, BX

bout:
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
	JLT  bout
	ADDQ DX, R11
	INCQ R14
	JMP  bpass1

bpass2:
	XORQ BX, BX                 // byte offset of the chunk

bchunk:
	CMPQ BX, DX
	JGE  bdone
	MOVQ w2t+0(FP), SI
	ADDQ BX, SI                 // w2t + chunk
	MOVQ h1+8(FP), R8          // h1_q
	MOVQ act+16(FP), DI         // act_q
	MOVQ h2+56(FP), R11         // dz2_q
	MOVQ dz1+96(FP), R10       // dz1_q
	XORQ R14, R14               // q

bpair:
	CMPQ R14, np+32(FP)
	JGE  bnext
	VMOVUPD 0(R11)(BX*1), Y0
	VMOVUPD 32(R11)(BX*1), Y1
	VMOVUPD 64(R11)(BX*1), Y2
	VMOVUPD 96(R11)(BX*1), Y3
	VMOVUPD 128(R11)(BX*1), Y4
	VMOVUPD 160(R11)(BX*1), Y5
	VMOVUPD 192(R11)(BX*1), Y6
	VMOVUPD 224(R11)(BX*1), Y7
	MOVQ nAct+24(FP), AX
	MOVLQSX (AX)(R14*4), CX
	XORQ R13, R13               // k

bunit:
	CMPQ R13, CX
	JGE  bpairnext
	MOVLQSX (DI)(R13*4), AX     // u
	VBROADCASTSD (R8)(AX*8), Y8
	MOVQ AX, R9
	IMULQ DX, R9                // u·m bytes
	VMULPD 0(SI)(R9*1), Y0, Y12
	VMULPD 32(SI)(R9*1), Y1, Y13
	VFMADD231PD 64(SI)(R9*1), Y2, Y12
	VFMADD231PD 96(SI)(R9*1), Y3, Y13
	VFMADD231PD 128(SI)(R9*1), Y4, Y12
	VFMADD231PD 160(SI)(R9*1), Y5, Y13
	VFMADD231PD 192(SI)(R9*1), Y6, Y12
	VFMADD231PD 224(SI)(R9*1), Y7, Y13
	VADDPD Y13, Y12, Y12
	VEXTRACTF128 $1, Y12, X13
	VADDPD X13, X12, X12
	VUNPCKHPD X12, X12, X13
	VADDSD X13, X12, X12
	VADDSD (R10)(AX*8), X12, X12
	VMOVSD X12, (R10)(AX*8)
	INCQ R13
	JMP  bunit

bpairnext:
	MOVQ units+40(FP), AX
	LEAQ (R8)(AX*8), R8
	LEAQ (DI)(AX*4), DI
	LEAQ (R10)(AX*8), R10
	ADDQ DX, R11
	INCQ R14
	JMP  bpair

bnext:
	ADDQ $256, BX
	JMP  bchunk

bdone:
	VZEROUPPER
	RET

// func pairsGradW2AVX2(gw2t, h1, dz2 *float64, pairs, nPairs *int32, np, units, m int)
//
// For each unit u, for each chunk of 32 outputs: Y0–Y7 start at gw2t's
// row u chunk; for each pair q in pairs[u·np : u·np+nPairs[u]] in order,
// Y0–Y7 += h1_q[u]·dz2_q's chunk (fused); store back.
TEXT ·pairsGradW2AVX2(SB), NOSPLIT, $0-64
	MOVQ gw2t+0(FP), R11        // row u of gw2t
	MOVQ h1+8(FP), R8
	MOVQ dz2+16(FP), SI
	MOVQ pairs+24(FP), DI       // pairs_u
	MOVQ m+56(FP), DX
	SHLQ $3, DX
	XORQ R14, R14               // u

gunit:
	CMPQ R14, units+48(FP)
	JGE  gdone
	MOVQ nPairs+32(FP), AX
	MOVLQSX (AX)(R14*4), CX
	MOVQ units+48(FP), R10
	SHLQ $3, R10                // bytes in a row of h1
	XORQ BX, BX                 // byte offset of the chunk

gchunk:
	VMOVUPD 0(R11)(BX*1), Y0
	VMOVUPD 32(R11)(BX*1), Y1
	VMOVUPD 64(R11)(BX*1), Y2
	VMOVUPD 96(R11)(BX*1), Y3
	VMOVUPD 128(R11)(BX*1), Y4
	VMOVUPD 160(R11)(BX*1), Y5
	VMOVUPD 192(R11)(BX*1), Y6
	VMOVUPD 224(R11)(BX*1), Y7
	LEAQ (SI)(BX*1), R12        // dz2 + chunk
	XORQ R13, R13               // k
	CMPQ R13, CX
	JGE  gstore

gpair:
	MOVLQSX (DI)(R13*4), AX     // q
	MOVQ AX, R9
	IMULQ R10, R9
	ADDQ R8, R9
	VBROADCASTSD (R9)(R14*8), Y8
	IMULQ DX, AX
	ADDQ R12, AX
	VFMADD231PD 0(AX), Y8, Y0
	VFMADD231PD 32(AX), Y8, Y1
	VFMADD231PD 64(AX), Y8, Y2
	VFMADD231PD 96(AX), Y8, Y3
	VFMADD231PD 128(AX), Y8, Y4
	VFMADD231PD 160(AX), Y8, Y5
	VFMADD231PD 192(AX), Y8, Y6
	VFMADD231PD 224(AX), Y8, Y7
	INCQ R13
	CMPQ R13, CX
	JLT  gpair

gstore:
	VMOVUPD Y0, 0(R11)(BX*1)
	VMOVUPD Y1, 32(R11)(BX*1)
	VMOVUPD Y2, 64(R11)(BX*1)
	VMOVUPD Y3, 96(R11)(BX*1)
	VMOVUPD Y4, 128(R11)(BX*1)
	VMOVUPD Y5, 160(R11)(BX*1)
	VMOVUPD Y6, 192(R11)(BX*1)
	VMOVUPD Y7, 224(R11)(BX*1)
	ADDQ $256, BX
	CMPQ BX, DX
	JLT  gchunk
	ADDQ DX, R11
	MOVQ np+40(FP), AX
	LEAQ (DI)(AX*4), DI
	INCQ R14
	JMP  gunit

gdone:
	VZEROUPPER
	RET

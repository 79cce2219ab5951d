#include "textflag.h"

// func zeroLanesAVX512(words *uint64, counts unsafe.Pointer, countBytes int, pc *float32, acc *float64, n int, bUnit float64, pow int, slow *uint64)
//
// Per group of eight entries, with r the words, n the counts (int32, or
// float64 when countBytes is 8) and x the power, as gammaSmall.lane and
// zeroLanesGo compute them:
//   q = float64(r>>11)·bUnit, x = q^pow by square-and-multiply (powInt's
//   order of products), fast = (q ≤ 1) ∧ ((c+1)·2⁻¹¹ ≤ 1 − x) ∧ (n = 0)
//   with c = r & 0x7ff; pc = float32(x·2⁶⁴, or 0 below 2⁻¹²⁶) and acc += x
//   where fast; the slow byte is ¬fast.
TEXT ·zeroLanesAVX512(SB), NOSPLIT, $0-72
	MOVQ words+0(FP), SI
	MOVQ counts+8(FP), DX
	MOVQ countBytes+16(FP), R11
	MOVQ pc+24(FP), DI
	MOVQ acc+32(FP), R8
	MOVQ n+40(FP), CX
	VBROADCASTSD bUnit+48(FP), Z31
	MOVQ pow+56(FP), R9
	MOVQ slow+64(FP), R10
	VPXORQ Z25, Z25, Z25 // 0
	MOVQ $0x3ff0000000000000, AX // 1
	VPBROADCASTQ AX, Z30
	MOVQ $0x3f40000000000000, AX // 2⁻¹¹
	VPBROADCASTQ AX, Z29
	MOVQ $0x43f0000000000000, AX // 2⁶⁴
	VPBROADCASTQ AX, Z28
	MOVQ $0x3810000000000000, AX // 2⁻¹²⁶
	VPBROADCASTQ AX, Z27
	MOVQ $0x7ff, AX
	VPBROADCASTQ AX, Z26
	SHRQ $3, CX
	JZ   done

loop:
	VMOVDQU64 (SI), Z0
	VPSRLQ    $11, Z0, Z1
	VCVTUQQ2PD Z1, Z1
	VMULPD    Z31, Z1, Z1       // q
	VCMPPD    $2, Z30, Z1, K1   // q ≤ 1
	VMOVAPD   Z30, Z2           // y = 1
	MOVQ      R9, AX

pow:
	TESTQ  $1, AX
	JZ     square
	VMULPD Z1, Z2, Z2

square:
	VMULPD Z1, Z1, Z1
	SHRQ   $1, AX
	JNZ    pow

	// Z2 = x
	VPANDQ     Z26, Z0, Z3
	VCVTUQQ2PD Z3, Z3
	VADDPD     Z30, Z3, Z3
	VMULPD     Z29, Z3, Z3         // (c+1)·2⁻¹¹
	VSUBPD     Z2, Z30, Z4         // 1 − x
	VCMPPD     $2, Z4, Z3, K1, K2  // q ≤ 1 ∧ (c+1)·2⁻¹¹ ≤ 1 − x
	CMPQ       R11, $8
	JEQ        float64counts
	VMOVDQU32  (DX), Y5
	VPTESTNMD  Y5, Y5, K3          // n = 0
	ADDQ       $32, DX
	JMP        counted

float64counts:
	VCMPPD     $0, (DX), Z25, K3   // n = 0 (−0 too; not NaN)
	ADDQ       $64, DX

counted:
	KANDB      K3, K2, K2          // fast
	KNOTB      K2, K4
	KMOVB      K4, (R10)
	VMULPD     Z28, Z2, Z5         // x·2⁶⁴
	VCMPPD     $13, Z27, Z5, K2, K5
	VMOVAPD.Z  Z5, K5, Z6          // flushed below 2⁻¹²⁶
	VCVTPD2PS  Z6, Y6
	VMOVUPS    Y6, K2, (DI)
	VMOVUPD    (R8), Z7
	VADDPD     Z2, Z7, K2, Z7
	VMOVUPD    Z7, (R8)

	ADDQ $64, SI
	ADDQ $32, DI
	ADDQ $64, R8
	INCQ R10
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET

DATA ·iota8<>+0(SB)/4, $0
DATA ·iota8<>+4(SB)/4, $1
DATA ·iota8<>+8(SB)/4, $2
DATA ·iota8<>+12(SB)/4, $3
DATA ·iota8<>+16(SB)/4, $4
DATA ·iota8<>+20(SB)/4, $5
DATA ·iota8<>+24(SB)/4, $6
DATA ·iota8<>+28(SB)/4, $7
GLOBL ·iota8<>(SB), RODATA|NOPTR, $32

// func colMaxAVX512(col *float32, fac *float64, n int, out *[8]float64)
TEXT ·colMaxAVX512(SB), NOSPLIT, $0-32
	MOVQ   col+0(FP), SI
	MOVQ   fac+8(FP), DX
	MOVQ   n+16(FP), CX
	MOVQ   out+24(FP), DI
	VPXORQ Z0, Z0, Z0
	SHRQ   $3, CX
	JZ     maxdone

maxloop:
	VCVTPS2PD (SI), Z1
	VMULPD    (DX), Z1, Z1
	VMAXPD    Z1, Z0, Z0
	ADDQ      $32, SI
	ADDQ      $64, DX
	DECQ      CX
	JNZ       maxloop

maxdone:
	VMOVUPD Z0, (DI)
	VZEROUPPER
	RET

// func colScaleAVX512(col *float32, fac *float64, n int, in float32, topics *uint16, parts *[8]float64) int
TEXT ·colScaleAVX512(SB), NOSPLIT, $0-56
	MOVQ         col+0(FP), SI
	MOVQ         fac+8(FP), DX
	MOVQ         n+16(FP), CX
	VBROADCASTSS in+24(FP), Y31
	MOVQ         topics+32(FP), DI
	MOVQ         parts+40(FP), R8
	MOVQ         $0x3810000000000000, AX // 2⁻¹²⁶
	VPBROADCASTQ AX, Z30
	VMOVDQU32    ·iota8<>(SB), Y29       // topics of the group
	MOVL         $8, AX
	VPBROADCASTD AX, Y28
	VPXORQ       Z0, Z0, Z0              // parts
	XORQ         R9, R9                  // topics written
	SHRQ         $3, CX
	JZ           scaledone

scaleloop:
	VCVTPS2PD  (SI), Z1
	VMULPD     (DX), Z1, Z1
	VCMPPD     $13, Z30, Z1, K1   // ≥ 2⁻¹²⁶
	VMOVAPD.Z  Z1, K1, Z1
	VCVTPD2PS  Z1, Y2
	VMOVUPS    Y2, (SI)
	VCMPPS     $13, Y31, Y2, K2   // y ≥ in: in the table
	VPCOMPRESSD Y29, K2, Y3
	VPMOVDW    Y3, X3
	VMOVDQU    X3, (DI)(R9*2)
	KMOVB      K2, AX
	POPCNTL    AX, AX
	ADDQ       AX, R9
	KNOTB      K2, K3
	VCVTPS2PD  Y2, Z4
	VADDPD     Z4, Z0, K3, Z0
	VPADDD     Y28, Y29, Y29
	ADDQ       $32, SI
	ADDQ       $64, DX
	DECQ       CX
	JNZ        scaleloop

scaledone:
	VMOVUPD Z0, (R8)
	MOVQ    R9, ret+48(FP)
	VZEROUPPER
	RET

// DENSE_TOPIC ends both dense draws: given the count p in AX of positions
// at most u, it returns order[p], or n if p = n.
#define DENSE_TOPIC(order, ret) \
	CMPQ    AX, n+16(FP); \
	JGE     denseall; \
	MOVQ    order, SI; \
	MOVWQZX (SI)(AX*2), AX; \
	MOVQ    AX, ret; \
	VZEROUPPER; \
	RET; \
denseall: \
	MOVQ n+16(FP), AX; \
	MOVQ AX, ret; \
	VZEROUPPER; \
	RET

// func denseDrawAVX512(col *int32, q *float64, n int, cg int, cbit int, wcur, beta, unit float64, sums *float64, order *uint16) int
//
// Per group of eight entries: w = (float64(col)+β)·q, with lane cbit of
// group cg set to wcur; V += w; store V. The last group loads only its
// n mod 8 entries of col (q is zero past n). Then L, the lanes' exclusive
// running totals: V shifted up by 1 lane, plus itself shifted up by 1, 2,
// then 4 lanes (zeros shifted in); u = unit·(L + V)[7]; the count p of the
// stored sums of the n entries with sum + L ≤ u (the last group's compare
// masked); and order[p], or n if p = n.
TEXT ·denseDrawAVX512(SB), NOSPLIT, $0-88
	MOVQ         col+0(FP), SI
	MOVQ         q+8(FP), DX
	MOVQ         n+16(FP), CX
	MOVQ         cg+24(FP), R12
	MOVQ         cbit+32(FP), R13
	VBROADCASTSD wcur+40(FP), Z26
	VBROADCASTSD beta+48(FP), Z30
	MOVQ         sums+64(FP), DI
	XORQ         R14, R14      // groups done
	VPXORQ       Z29, Z29, Z29 // 0
	VPXORQ       Z28, Z28, Z28 // V
	MOVQ         $0xff, AX
	KMOVB        AX, K1        // all lanes

sumloop:
	CMPQ  CX, $8
	JGE   sumgroup
	TESTQ CX, CX
	JZ    sumdone
	MOVQ  $1, AX
	SHLQ  CX, AX
	DECQ  AX
	KMOVB AX, K1               // the last group's lanes
	MOVQ  $8, CX

sumgroup:
	VMOVDQU32.Z (SI), K1, Y0
	VCVTDQ2PD   Y0, Z0
	VADDPD      Z30, Z0, Z0
	VMULPD      (DX), Z0, Z0
	XORQ        BX, BX
	CMPQ        R14, R12
	CMOVQEQ     R13, BX
	KMOVB       BX, K2         // the lane of cur, in its group
	VMOVAPD     Z26, K2, Z0
	VADDPD      Z0, Z28, Z28
	VMOVUPD     Z28, (DI)
	ADDQ        $32, SI
	ADDQ        $64, DX
	ADDQ        $64, DI
	INCQ        R14
	SUBQ        $8, CX
	JNZ         sumloop

sumdone:
	VALIGNQ      $7, Z29, Z28, Z1
	VALIGNQ      $7, Z29, Z1, Z2
	VADDPD       Z2, Z1, Z1
	VALIGNQ      $6, Z29, Z1, Z2
	VADDPD       Z2, Z1, Z1
	VALIGNQ      $4, Z29, Z1, Z2
	VADDPD       Z2, Z1, Z1    // L
	VADDPD       Z28, Z1, Z2   // L + V
	MOVQ         $7, AX
	VPBROADCASTQ AX, Z3
	VPERMPD      Z2, Z3, Z3    // the total, in every lane
	VBROADCASTSD unit+56(FP), Z4
	VMULPD       Z4, Z3, Z3    // u
	MOVQ         sums+64(FP), DI
	XORQ         AX, AX
	DECQ         R14           // whole groups before the last
	JZ           countlast

countloop:
	VADDPD  (DI), Z1, Z5
	VCMPPD  $2, Z3, Z5, K2     // sum + L ≤ u
	KMOVB   K2, BX
	POPCNTL BX, BX
	ADDQ    BX, AX
	ADDQ    $64, DI
	DECQ    R14
	JNZ     countloop

countlast:
	VADDPD  (DI), Z1, Z5
	VCMPPD  $2, Z3, Z5, K1, K2 // only the lanes of entries
	KMOVB   K2, BX
	POPCNTL BX, BX
	ADDQ    BX, AX
	DENSE_TOPIC(order+72(FP), ret+80(FP))

// func denseDrawAVX2(col *int32, q *float64, n int, cg int, curMask *int64, tailMask *int32, wcur, beta, unit float64, sums *float64, order *uint16) int
//
// denseDrawAVX512 with four lanes to a register: each group of eight is a
// low half (lanes 0–3) and a high half (lanes 4–7), with the same
// operations on each lane, so the same bits. curMask points to eight
// int64, all ones at the token's lane; tailMask to eight int32, all ones
// at the last group's lanes of entries. The shifts of the lanes' totals
// cross the halves by permutes and blends.
TEXT ·denseDrawAVX2(SB), NOSPLIT, $0-96
	MOVQ         col+0(FP), SI
	MOVQ         q+8(FP), DX
	MOVQ         n+16(FP), CX
	MOVQ         cg+24(FP), R12
	MOVQ         curMask+32(FP), AX
	VMOVUPD      (AX), Y11
	VMOVUPD      32(AX), Y10
	VBROADCASTSD wcur+48(FP), Y14
	VBROADCASTSD beta+56(FP), Y15
	MOVQ         sums+72(FP), DI
	XORQ         R14, R14         // groups done
	VXORPD       Y9, Y9, Y9       // 0
	VXORPD       Y13, Y13, Y13    // V, lanes 0–3
	VXORPD       Y12, Y12, Y12    // V, lanes 4–7

x2loop:
	CMPQ CX, $8
	JL   x2tail
	VCVTDQ2PD (SI), Y0
	VCVTDQ2PD 16(SI), Y1
	JMP  x2group

x2tail:
	TESTQ      CX, CX
	JZ         x2done
	MOVQ       tailMask+40(FP), AX
	VMOVDQU    (AX), X2
	VPMASKMOVD (SI), X2, X0
	VMOVDQU    16(AX), X2
	VPMASKMOVD 16(SI), X2, X1
	VCVTDQ2PD  X0, Y0
	VCVTDQ2PD  X1, Y1
	MOVQ       $8, CX

x2group:
	VADDPD    Y15, Y0, Y0
	VMULPD    (DX), Y0, Y0
	VADDPD    Y15, Y1, Y1
	VMULPD    32(DX), Y1, Y1
	CMPQ      R14, R12
	JNE       x2add
	VBLENDVPD Y11, Y14, Y0, Y0    // the token's lane takes wcur
	VBLENDVPD Y10, Y14, Y1, Y1

x2add:
	VADDPD  Y0, Y13, Y13
	VADDPD  Y1, Y12, Y12
	VMOVUPD Y13, (DI)
	VMOVUPD Y12, 32(DI)
	ADDQ    $32, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	INCQ    R14
	SUBQ    $8, CX
	JNZ     x2loop

x2done:
	// E = the totals shifted up by one lane: (Y1, Y2).
	VPERMPD   $0x90, Y13, Y1     // A0 A0 A1 A2
	VBLENDPD  $1, Y9, Y1, Y1     // 0 A0 A1 A2
	VPERMPD   $0x90, Y12, Y2     // B0 B0 B1 B2
	VPERMPD   $0xff, Y13, Y3     // A3 A3 A3 A3
	VBLENDPD  $1, Y3, Y2, Y2     // A3 B0 B1 B2
	// E += E shifted up by 1.
	VPERMPD   $0x90, Y1, Y3
	VBLENDPD  $1, Y9, Y3, Y3
	VPERMPD   $0x90, Y2, Y4
	VPERMPD   $0xff, Y1, Y5
	VBLENDPD  $1, Y5, Y4, Y4
	VADDPD    Y3, Y1, Y1
	VADDPD    Y4, Y2, Y2
	// E += E shifted up by 2.
	VPERMPD   $0x40, Y1, Y3      // E0 E0 E0 E1
	VBLENDPD  $3, Y9, Y3, Y3     // 0 0 E0 E1
	VPERM2F128 $0x21, Y2, Y1, Y4 // E2 E3 E4 E5
	VADDPD    Y3, Y1, Y1
	VADDPD    Y4, Y2, Y2
	// E += E shifted up by 4: the low half adds zeros.
	VADDPD    Y1, Y2, Y2         // L: (Y1, Y2)
	VADDPD    Y12, Y2, Y3        // (L + V), lanes 4–7
	VPERMPD   $0xff, Y3, Y3      // the total, in every lane
	VBROADCASTSD unit+64(FP), Y4
	VMULPD    Y4, Y3, Y3         // u
	MOVQ      sums+72(FP), DI
	XORQ      AX, AX
	DECQ      R14                // whole groups before the last
	JZ        x2last

x2count:
	VADDPD    (DI), Y1, Y5
	VADDPD    32(DI), Y2, Y6
	VCMPPD    $2, Y3, Y5, Y5     // sum + L ≤ u
	VCMPPD    $2, Y3, Y6, Y6
	VMOVMSKPD Y5, BX
	POPCNTL   BX, BX
	ADDQ      BX, AX
	VMOVMSKPD Y6, BX
	POPCNTL   BX, BX
	ADDQ      BX, AX
	ADDQ      $64, DI
	DECQ      R14
	JNZ       x2count

x2last:
	VADDPD    (DI), Y1, Y5
	VADDPD    32(DI), Y2, Y6
	VCMPPD    $2, Y3, Y5, Y5
	VCMPPD    $2, Y3, Y6, Y6
	VMOVMSKPD Y5, BX
	VMOVMSKPD Y6, R8
	SHLQ      $4, R8
	ORQ       R8, BX
	MOVQ      n+16(FP), CX
	ANDQ      $7, CX
	JZ        x2full
	MOVQ      $1, R8
	SHLQ      CX, R8
	DECQ      R8
	ANDQ      R8, BX             // only the lanes of entries

x2full:
	POPCNTL BX, BX
	ADDQ    BX, AX
	DENSE_TOPIC(order+80(FP), ret+88(FP))

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

// func denseDrawAVX512(col *int32, inv *float64, cnt *int32, n int, alpha, beta, unit float64, sums *float64) int
//
// Per group of eight entries: w = (float64(col)+β)·inv·(float64(cnt)+α);
// w += w shifted up by 1, 2, then 4 lanes (zeros shifted in); w += carry,
// the broadcast last sum of the group before; store. The last group loads
// and stores only its n mod 8 entries. Then u = unit·total, the total
// being the last sum stored (in a partial group the last lane adds its
// entries in another order), and the result is the number of sums ≤ u.
TEXT ·denseDrawAVX512(SB), NOSPLIT, $0-72
	MOVQ         col+0(FP), SI
	MOVQ         inv+8(FP), DX
	MOVQ         cnt+16(FP), R8
	MOVQ         n+24(FP), CX
	VBROADCASTSD alpha+32(FP), Z31
	VBROADCASTSD beta+40(FP), Z30
	MOVQ         sums+56(FP), DI
	MOVQ         CX, R9
	SHRQ         $3, R9        // whole groups
	MOVQ         CX, R10
	ANDQ         $7, R10       // entries of the last, partial group
	VPXORQ       Z29, Z29, Z29 // 0
	VPXORQ       Z28, Z28, Z28 // carry
	MOVQ         $7, AX
	VPBROADCASTQ AX, Z27       // the index of the last lane
	MOVQ         $0xff, AX
	KMOVB        AX, K1        // all lanes

cumloop:
	CMPQ  CX, $8
	JGE   cumgroup
	TESTQ CX, CX
	JZ    cumdone
	MOVQ  $1, AX
	SHLQ  CX, AX
	DECQ  AX
	KMOVB AX, K1               // the last group's lanes
	MOVQ  $8, CX

cumgroup:
	VMOVDQU32.Z (SI), K1, Y0
	VCVTDQ2PD   Y0, Z0
	VADDPD      Z30, Z0, Z0
	VMOVUPD.Z   (DX), K1, Z1
	VMULPD      Z1, Z0, Z0
	VMOVDQU32.Z (R8), K1, Y2
	VCVTDQ2PD   Y2, Z2
	VADDPD      Z31, Z2, Z2
	VMULPD      Z2, Z0, Z0
	VALIGNQ     $7, Z29, Z0, Z3
	VADDPD      Z3, Z0, Z0
	VALIGNQ     $6, Z29, Z0, Z3
	VADDPD      Z3, Z0, Z0
	VALIGNQ     $4, Z29, Z0, Z3
	VADDPD      Z3, Z0, Z0
	VADDPD      Z28, Z0, Z0
	VPERMPD     Z0, Z27, Z28
	VMOVUPD     Z0, K1, (DI)
	ADDQ        $32, SI
	ADDQ        $64, DX
	ADDQ        $32, R8
	ADDQ        $64, DI
	SUBQ        $8, CX
	JNZ         cumloop

cumdone:
	MOVQ         n+24(FP), CX
	MOVQ         sums+56(FP), DI
	VMOVSD       -8(DI)(CX*8), X4    // total, the last sum stored
	VMULSD       unit+48(FP), X4, X4 // u = unit·total
	VBROADCASTSD X4, Z5
	XORQ         AX, AX
	TESTQ        R9, R9
	JZ           cmptail

cmploop:
	VMOVUPD (DI), Z6
	VCMPPD  $2, Z5, Z6, K2   // sum ≤ u
	KMOVB   K2, BX
	POPCNTL BX, BX
	ADDQ    BX, AX
	ADDQ    $64, DI
	DECQ    R9
	JNZ     cmploop

cmptail:
	TESTQ     R10, R10
	JZ        drawdone
	VMOVUPD.Z (DI), K1, Z6
	VCMPPD    $2, Z5, Z6, K1, K2
	KMOVB     K2, BX
	POPCNTL   BX, BX
	ADDQ      BX, AX

drawdone:
	MOVQ AX, ret+64(FP)
	VZEROUPPER
	RET

#include "textflag.h"

// func Lines(a, b, c, d unsafe.Pointer)
TEXT ·Lines(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ a+0(FP), AX
	PREFETCHT0 (AX)
	MOVQ b+8(FP), AX
	PREFETCHT0 (AX)
	MOVQ c+16(FP), AX
	PREFETCHT0 (AX)
	MOVQ d+24(FP), AX
	PREFETCHT0 (AX)
	RET

// func Token(a unsafe.Pointer, an uintptr, b unsafe.Pointer, bn uintptr, l1, l2, l3, l4, l5, l6 unsafe.Pointer)
TEXT ·Token(SB), NOSPLIT|NOFRAME, $0-80
	MOVQ a+0(FP), AX
	MOVQ an+8(FP), CX
	MOVQ b+16(FP), BX
	MOVQ bn+24(FP), R8
	MOVQ $2, SI
span: // the CX bytes at AX, then the R8 bytes at BX
	LEAQ -1(AX)(CX*1), DX
	ANDQ $~63, AX
line:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, DX
	JLS  line
	MOVQ BX, AX
	MOVQ R8, CX
	DECQ SI
	JNZ  span
	MOVQ l1+32(FP), AX
	PREFETCHT0 (AX)
	MOVQ l2+40(FP), AX
	PREFETCHT0 (AX)
	MOVQ l3+48(FP), AX
	PREFETCHT0 (AX)
	MOVQ l4+56(FP), AX
	PREFETCHT0 (AX)
	MOVQ l5+64(FP), AX
	PREFETCHT0 (AX)
	MOVQ l6+72(FP), AX
	PREFETCHT0 (AX)
	RET

// func Entries32(base unsafe.Pointer, idx []uint16)
TEXT ·Entries32(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ  base+0(FP), AX
	MOVQ  idx_base+8(FP), SI
	MOVQ  idx_len+16(FP), CX
	TESTQ CX, CX
	JZ    done
entry:
	MOVWQZX    (SI), DX
	PREFETCHT0 (AX)(DX*4)
	ADDQ       $2, SI
	DECQ       CX
	JNZ        entry
done:
	RET

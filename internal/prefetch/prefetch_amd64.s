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

// func Token(a, b unsafe.Pointer, n uintptr, l1, l2, l3, l4, l5, l6 unsafe.Pointer)
TEXT ·Token(SB), NOSPLIT|NOFRAME, $0-72
	MOVQ a+0(FP), AX
	MOVQ b+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ $2, SI
span: // the n bytes at AX, then at BX
	LEAQ -1(AX)(CX*1), DX
	ANDQ $~63, AX
line:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, DX
	JLS  line
	MOVQ BX, AX
	DECQ SI
	JNZ  span
	MOVQ l1+24(FP), AX
	PREFETCHT0 (AX)
	MOVQ l2+32(FP), AX
	PREFETCHT0 (AX)
	MOVQ l3+40(FP), AX
	PREFETCHT0 (AX)
	MOVQ l4+48(FP), AX
	PREFETCHT0 (AX)
	MOVQ l5+56(FP), AX
	PREFETCHT0 (AX)
	MOVQ l6+64(FP), AX
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

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
	MOVQ n+16(FP), CX
	LEAQ -1(AX)(CX*1), DX
	ANDQ $~63, AX
spana:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, DX
	JLS  spana
	MOVQ b+8(FP), AX
	LEAQ -1(AX)(CX*1), DX
	ANDQ $~63, AX
spanb:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, DX
	JLS  spanb
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

#include "textflag.h"

// func Range(p unsafe.Pointer, n uintptr)
TEXT ·Range(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ -1(AX)(CX*1), DX
	ANDQ $~63, AX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, DX
	JLS  loop
	RET

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

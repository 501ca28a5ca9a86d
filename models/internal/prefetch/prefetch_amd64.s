#include "textflag.h"

// func Uint64(p *uint64)
TEXT ·Uint64(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

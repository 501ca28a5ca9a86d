#include "textflag.h"

// func Uint64(p *uint64)
TEXT ·Uint64(SB), NOSPLIT|NOFRAME, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PLDL1KEEP
	RET

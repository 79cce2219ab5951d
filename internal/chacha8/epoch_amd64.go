package chacha8

import "golang.org/x/sys/cpu"

// useAVX512 reports whether epochAVX512 may run: AVX-512 F (which the
// 512-bit instructions need) with the operating system saving its state.
var useAVX512 = cpu.X86.HasAVX512F

// epochAVX512 computes the 16 ChaCha8 blocks of the key seed (counters 0 to
// 15) into out in ChaCha8Rand's order.
//
//go:noescape
func epochAVX512(seed *[4]uint64, out *[128]uint64)

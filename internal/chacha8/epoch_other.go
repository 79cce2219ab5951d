//go:build !amd64

package chacha8

var useAVX512 = false

func epochAVX512(seed *[4]uint64, out *[128]uint64) { panic("chacha8: no AVX-512") }

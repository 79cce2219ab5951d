package prefetch

import "unsafe"

// Lines prefetches the cache line of each of a, b, c and d.
//
//go:noescape
func Lines(a, b, c, d unsafe.Pointer)

// Token prefetches every cache line of the an bytes at a and of the bn
// bytes at b (at least the line of each), and the line of each of l1 to l6:
// what a sampler reads for one token, in one call instead of several (each
// call costs 3–4 ns).
//
//go:noescape
func Token(a unsafe.Pointer, an uintptr, b unsafe.Pointer, bn uintptr, l1, l2, l3, l4, l5, l6 unsafe.Pointer)

// Entries32 prefetches the line of each 4-byte entry base[idx[j]] of the
// array at base: a word's column at the topics of a document's tokens.
//
//go:noescape
func Entries32(base unsafe.Pointer, idx []uint16)

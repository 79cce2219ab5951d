package prefetch

import "unsafe"

// Range prefetches every cache line of the n bytes at p (at least the line
// of p, even when n is 0).
//
//go:noescape
func Range(p unsafe.Pointer, n uintptr)

// Lines prefetches the cache line of each of a, b, c and d.
//
//go:noescape
func Lines(a, b, c, d unsafe.Pointer)

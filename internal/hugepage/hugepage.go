package hugepage

import "unsafe"

// Size is the size of a huge page on the systems Make advises: 2 MiB.
const Size = 2 << 20

// minAdvise is the smallest slice Make advises, in bytes: below two huge
// pages the aligned part of a slice may be empty or a single page.
const minAdvise = 2 * Size

// Make returns make([]T, n), with the whole huge pages it spans advised for
// transparent huge pages when it spans at least two.
func Make[T any](n int) []T {
	s := make([]T, n)
	var zero T
	bytes := uintptr(n) * unsafe.Sizeof(zero)
	if bytes < minAdvise {
		return s
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	beg := (start + Size - 1) &^ (Size - 1)
	end := (start + bytes) &^ (Size - 1)
	if end > beg {
		advise(beg, end-beg)
	}
	return s
}

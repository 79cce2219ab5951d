package parallel

import "unsafe"

// CacheGap is the room, in bytes, to leave after state one worker writes
// often (its scratch counts, the headers of its slices), so that no two
// workers write the same cache line — or the same pair of lines, which
// processors prefetch together. Scratch allocated for all workers in one
// loop lies back to back in memory; without the gap the workers' writes to
// the lines at the boundaries bounce those lines between cores, which can
// cost more than the sampling itself.
//
// A struct of per-worker state ends with a field _ [CacheGap]byte; a slice
// comes from Padded.
const CacheGap = 128

// Padded returns a slice of n zero values followed by at least CacheGap
// bytes of unused capacity (see CacheGap).
func Padded[T any](n int) []T {
	var x T
	size := max(int(unsafe.Sizeof(x)), 1)
	return make([]T, n, n+(CacheGap+size-1)/size)
}

// Aligned returns a slice of n zero values that starts on a 64-byte
// boundary, the size of a cache line and of an AVX-512 vector, followed by
// at least CacheGap bytes of unused capacity. Vector loads from it never
// split a line, and a vector load of a line that a vector store of the
// same line has just written takes the stored value from the store buffer.
func Aligned[T ~uint8 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64](n int) []T {
	var x T
	size := int(unsafe.Sizeof(x))
	s := make([]T, n+(64+CacheGap)/size)
	off := 0
	for uintptr(unsafe.Pointer(unsafe.SliceData(s[off:])))%64 != 0 {
		off++
	}
	return s[off : off+n : len(s)]
}

package hugepage

import (
	"testing"
	"unsafe"
)

func TestMakeIsMake(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 3 << 20} {
		s := Make[int32](n)
		if len(s) != n || cap(s) != n {
			t.Fatalf("Make(%d): len %d cap %d", n, len(s), cap(s))
		}
		for i, x := range s {
			if x != 0 {
				t.Fatalf("Make(%d)[%d] = %d, want 0", n, i, x)
			}
		}
		for i := range s {
			s[i] = int32(i)
		}
		for i, x := range s {
			if x != int32(i) {
				t.Fatalf("Make(%d)[%d] = %d after writing %d", n, i, x, i)
			}
		}
	}
}

// alignedPart returns the whole huge pages of s, as Make computes them.
func alignedPart[T any](s []T) (beg, end uintptr) {
	var zero T
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return (start + Size - 1) &^ (Size - 1), (start + uintptr(len(s))*unsafe.Sizeof(zero)) &^ (Size - 1)
}

package parallel

import (
	"testing"
	"unsafe"
)

func TestPadded(t *testing.T) {
	check := func(name string, n, length, capacity, size int) {
		t.Helper()
		if length != n || (capacity-n)*size < CacheGap {
			t.Errorf("Padded[%s](%d): len %d, cap %d; want len %d and ≥ %d bytes of spare capacity", name, n, length, capacity, n, CacheGap)
		}
	}
	for _, n := range []int{0, 1, 50, 1000} {
		a := Padded[int32](n)
		check("int32", n, len(a), cap(a), 4)
		b := Padded[float64](n)
		check("float64", n, len(b), cap(b), 8)
		c := Padded[[3]byte](n)
		check("[3]byte", n, len(c), cap(c), int(unsafe.Sizeof([3]byte{})))
		d := Padded[struct{}](n)
		check("struct{}", n, len(d), cap(d), 1)
	}
}

func TestAligned(t *testing.T) {
	for _, n := range []int{0, 1, 7, 56, 1000} {
		for range 20 { // allocations land at different offsets
			a := Aligned[float64](n)
			b := Aligned[uint16](n)
			c := Aligned[uint8](n)
			for _, s := range []struct {
				name          string
				addr          uintptr
				length, spare int
				zero          bool
			}{
				{"float64", uintptr(unsafe.Pointer(unsafe.SliceData(a))), len(a), (cap(a) - len(a)) * 8, allZero(a)},
				{"uint16", uintptr(unsafe.Pointer(unsafe.SliceData(b))), len(b), (cap(b) - len(b)) * 2, allZero(b)},
				{"uint8", uintptr(unsafe.Pointer(unsafe.SliceData(c))), len(c), cap(c) - len(c), allZero(c)},
			} {
				if s.addr%64 != 0 || s.length != n || s.spare < CacheGap || !s.zero {
					t.Fatalf("Aligned[%s](%d): address %#x (mod 64: %d), len %d, %d spare bytes, zeros %v", s.name, n, s.addr, s.addr%64, s.length, s.spare, s.zero)
				}
			}
		}
	}
}

func allZero[T comparable](s []T) bool {
	var z T
	for _, x := range s {
		if x != z {
			return false
		}
	}
	return true
}

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

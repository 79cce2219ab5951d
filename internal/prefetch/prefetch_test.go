package prefetch

import (
	"testing"
	"unsafe"
)

// TestPrefetchLeavesMemory checks that prefetching any range, empty ones
// and ones that start or end mid-line included, neither faults nor changes
// memory.
func TestPrefetchLeavesMemory(t *testing.T) {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i * 7)
	}
	for off := 0; off < 130; off += 13 {
		for n := 0; off+n <= len(b); n += 97 {
			Range(unsafe.Pointer(&b[off]), uintptr(n))
		}
	}
	Lines(unsafe.Pointer(&b[0]), unsafe.Pointer(&b[1000]), unsafe.Pointer(&b[4095]), unsafe.Pointer(&b[64]))
	for _, n := range []uintptr{1, 63, 64, 200, 640, 4000} {
		p := func(i int) unsafe.Pointer { return unsafe.Pointer(&b[i]) }
		Token(p(0), p(4096-int(n)), n, p(1), p(100), p(1000), p(2000), p(3000), p(4095))
	}
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("byte %d changed", i)
		}
	}
}

func BenchmarkRange(b *testing.B) {
	buf := make([]int32, 1<<20)
	i := 0
	for b.Loop() {
		Range(unsafe.Pointer(&buf[i]), 200)
		i = (i + 4099) & (len(buf) - 64)
	}
}

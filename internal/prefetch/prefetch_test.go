package prefetch

import (
	"testing"
	"unsafe"
)

// TestPrefetchLeavesMemory checks that prefetching any spans, empty ones
// and ones that start or end mid-line included, and any lines neither
// faults nor changes memory; Entries32 too, for indices up to the last
// 4-byte entry and for none.
func TestPrefetchLeavesMemory(t *testing.T) {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i * 7)
	}
	p := func(i int) unsafe.Pointer { return unsafe.Pointer(&b[i]) }
	for off := 0; off < 130; off += 13 {
		for n := 0; off+n <= len(b); n += 97 {
			// The second span ends before the buffer's last byte,
			// and is shorter than the first by up to 96 bytes.
			bn := max(0, n-off%97)
			Token(p(off), uintptr(n), p(len(b)-bn-1-off%7), uintptr(bn), p(1), p(100), p(1000), p(2000), p(3000), p(4095))
		}
	}
	Lines(p(0), p(1000), p(4095), p(64))
	Entries32(p(0), []uint16{0, 1, 1023, 500, 0})
	Entries32(p(0), nil)
	for i := range b {
		if b[i] != byte(i*7) {
			t.Fatalf("byte %d changed", i)
		}
	}
}

// BenchmarkToken measures one call for a token's reads at K = 50: two
// columns of 200 bytes and six lines.
func BenchmarkToken(b *testing.B) {
	buf := make([]int32, 1<<20)
	at := func(i int) unsafe.Pointer { return unsafe.Pointer(&buf[i]) }
	i := 0
	for b.Loop() {
		j := (i * 7919) & (len(buf) - 64)
		Token(at(i), 200, at(j), 200, at(i+100), at(j+100), at(i+200), at(j+200), at(i+300), at(j+300))
		i = (i + 4099) & (len(buf) - 512)
	}
}

package chacha8

import (
	"math/rand/v2"
	"testing"
)

// paths runs f once per way a Stream can compute its epochs on this
// machine: with AVX-512 where it has it, and from the standard library.
func paths(t *testing.T, f func(t *testing.T)) {
	saved := useAVX512
	defer func() { useAVX512 = saved }()
	if saved {
		t.Run("avx512", f)
	} else {
		t.Log("no AVX-512 here: only the standard library's path is tested")
	}
	useAVX512 = false
	t.Run("std", f)
}

// TestSameStream checks that a Stream outputs the standard library's
// ChaCha8 stream word for word: for 64 random keys, 10,000 words each (80
// epochs, every reseed), and again after Seed restarts a used Stream.
func TestSameStream(t *testing.T) {
	paths(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		s := New([32]byte{})
		for k := range 64 {
			var key [32]byte
			for i := range key {
				key[i] = byte(r.Uint32())
			}
			if k%2 == 0 {
				s = New(key)
			} else {
				s.Seed(key) // restarts a Stream part-way through an epoch
			}
			want := rand.NewChaCha8(key)
			for i := range 10000 + k {
				if x, y := s.Uint64(), want.Uint64(); x != y {
					t.Fatalf("key %d, word %d: %#x; want %#x", k, i, x, y)
				}
			}
		}
	})
}

// TestFill checks that Fill outputs the words of Uint64, for lengths that
// end inside an epoch, at its end and several epochs on, mixed with single
// words.
func TestFill(t *testing.T) {
	paths(t, func(t *testing.T) {
		key := [32]byte{3, 1, 4}
		s, want := New(key), rand.NewChaCha8(key)
		i := 0
		for _, n := range []int{0, 1, 5, 118, 124, 3, 1000, 7, 125, 0, 2, 128, 248, 252, 3, 127, 500} {
			if n == 3 {
				if x, y := s.Uint64(), want.Uint64(); x != y {
					t.Fatalf("word %d: %#x; want %#x", i, x, y)
				}
				i++
			}
			buf := make([]uint64, n)
			s.Fill(buf)
			for _, x := range buf {
				if y := want.Uint64(); x != y {
					t.Fatalf("word %d (Fill of %d): %#x; want %#x", i, n, x, y)
				}
				i++
			}
		}
	})
}

// TestRand checks that a *rand.Rand on a Stream draws what one on the
// standard library's ChaCha8 draws.
func TestRand(t *testing.T) {
	paths(t, func(t *testing.T) {
		key := [32]byte{7, 1, 2}
		a, b := rand.New(New(key)), rand.New(rand.NewChaCha8(key))
		for i := range 1000 {
			if x, y := a.IntN(1000+i), b.IntN(1000+i); x != y {
				t.Fatalf("draw %d: %d; want %d", i, x, y)
			}
		}
	})
}

var sink uint64

// BenchmarkEpoch times the AVX-512 computation of one epoch alone and
// reports its cost per output word.
func BenchmarkEpoch(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512 on this machine")
	}
	var seed [4]uint64
	var out [128]uint64
	for b.Loop() {
		epochAVX512(&seed, &out)
		seed[0] += out[3]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/epochWords, "ns/word")
}

// BenchmarkUint64 compares a Stream with the standard library's ChaCha8,
// per 64-bit word.
func BenchmarkUint64(b *testing.B) {
	b.Run("stream", func(b *testing.B) {
		s := New([32]byte{1})
		for b.Loop() {
			sink += s.Uint64()
		}
	})
	b.Run("std", func(b *testing.B) {
		s := rand.NewChaCha8([32]byte{1})
		for b.Loop() {
			sink += s.Uint64()
		}
	})
}

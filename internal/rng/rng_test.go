package rng

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestDeriveReproducible(t *testing.T) {
	a := Derive(7, "party", 1, "round", 2)
	b := Derive(7, "party", 1, "round", 2)
	for i := 0; i < 100; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("Derive(7, party 1, round 2) draw %d: %d != %d", i, x, y)
		}
	}
}

func TestDeriveDistinct(t *testing.T) {
	tests := []struct {
		name string
		a, b []any
	}{
		{name: "different label", a: []any{"party", 1}, b: []any{"party", 2}},
		{name: "type matters", a: []any{"a", 1}, b: []any{"a", "1"}},
		{name: "concatenation", a: []any{"ab", "c"}, b: []any{"a", "bc"}},
		{name: "prefix", a: []any{"x"}, b: []any{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if Key(1, tt.a...) == Key(1, tt.b...) {
				t.Errorf("Key(1, %v) == Key(1, %v); want distinct keys", tt.a, tt.b)
			}
		})
	}
	if Key(1, "x") == Key(2, "x") {
		t.Error("Key(1, x) == Key(2, x); want seeds to give distinct keys")
	}
}

func TestNewSeedDiffers(t *testing.T) {
	// Two 64-bit draws from crypto/rand collide with probability 2^-64.
	if NewSeed() == NewSeed() {
		t.Error("NewSeed returned the same value twice")
	}
}

// refKey is Key written plainly: every label through fmt.
func refKey(seed uint64, labels ...any) [32]byte {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write([]byte("fedtopic/rng/v1\x00"))
	h.Write(b[:])
	for _, l := range labels {
		s := fmt.Sprintf("%T:%v", l, l)
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return key
}

type (
	partyName string
	round     int
)

// TestKeyFormat checks that Key's fast paths hash the bytes of the plain
// definition: a change here would change every seeded result.
func TestKeyFormat(t *testing.T) {
	tests := [][]any{
		nil,
		{"lda", "adlda", 299, 1023},
		{"", "string with spaces", strings.Repeat("long ", 60)},
		{int(-1), int8(-128), int16(math.MaxInt16), int32(math.MinInt32), int64(math.MinInt64)},
		{uint(0), uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64)},
		{partyName("hospital"), round(3), 2.5, true, []int{1, 2}, nil},
	}
	for _, labels := range tests {
		for _, seed := range []uint64{0, 1, math.MaxUint64} {
			if got, want := Key(seed, labels...), refKey(seed, labels...); got != want {
				t.Errorf("Key(%d, %#v) = %x, want %x", seed, labels, got, want)
			}
		}
	}
	// The key of a sampler's block, pinned so that a change to the
	// definition itself fails too.
	const want = "0d849da9f1f0c90c4358ade73ebd4d56f423fde6e86f0ccdc8078d91919d896b"
	if got := Key(1, "lda", "adlda", 3, 7); hex.EncodeToString(got[:]) != want {
		t.Errorf("Key(1, lda, adlda, 3, 7) = %x, want %s", got, want)
	}
}

func BenchmarkKey(b *testing.B) {
	for i := range b.N {
		Key(1, "lda", "adlda", i, 17)
	}
}

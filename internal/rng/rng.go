package rng

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/internal/chacha8"
)

// Derive returns a ChaCha8-backed generator whose stream is determined by
// seed and the label sequence. Labels may be strings, integers or anything
// with a stable fmt %v form; the sequence is hashed with SHA-256 together with
// each label's type so that ("a", 1) and ("a1") never collide.
func Derive(seed uint64, labels ...any) *rand.Rand {
	return rand.New(chacha8.New(Key(seed, labels...)))
}

// Key returns the 32-byte ChaCha8 key Derive uses for seed and labels.
func Key(seed uint64, labels ...any) [32]byte {
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

// New returns a ChaCha8 generator for seed with no labels.
func New(seed uint64) *rand.Rand { return Derive(seed) }

// NewSeed returns a fresh seed from the operating system's cryptographic
// random source. Callers must record it (run record, model provenance) so
// that the run can be repeated.
func NewSeed() uint64 {
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		// crypto/rand.Read never returns an error on supported platforms
		// (Go 1.24+ crashes the program instead); keep the check for clarity.
		panic(fmt.Sprintf("rng: crypto/rand: %v", err))
	}
	return binary.LittleEndian.Uint64(b[:])
}

// Secure returns a ChaCha8 generator keyed from crypto/rand. Use it for
// production noise when no seed was requested.
func Secure() *rand.Rand {
	var key [32]byte
	if _, err := crand.Read(key[:]); err != nil {
		panic(fmt.Sprintf("rng: crypto/rand: %v", err))
	}
	return rand.New(chacha8.New(key))
}

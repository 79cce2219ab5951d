package rng

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"

	"github.com/fedtopic/fedtopic/internal/chacha8"
)

// Derive returns a ChaCha8-backed generator whose stream is determined by
// seed and the label sequence. Labels may be strings, integers or anything
// with a stable fmt %v form; the sequence is hashed with SHA-256 together with
// each label's type so that ("a", 1) and ("a1") never collide.
func Derive(seed uint64, labels ...any) *rand.Rand {
	return rand.New(chacha8.New(Key(seed, labels...)))
}

// Key returns the 32-byte ChaCha8 key Derive uses for seed and labels: the
// SHA-256 of a domain string, the seed, and each label as its length and
// fmt.Sprintf("%T:%v", label, label). Strings and the built-in integer
// types, the labels of every hot path (a sampler keys each block of every
// sweep), are formatted without fmt and hash from a buffer on the stack,
// to the same bytes.
func Key(seed uint64, labels ...any) [32]byte {
	var buf [128]byte
	b := append(buf[:0], "fedtopic/rng/v1\x00"...)
	b = binary.LittleEndian.AppendUint64(b, seed)
	for _, l := range labels {
		b = appendLabel(b, l)
	}
	return sha256.Sum256(b)
}

// appendLabel appends to b the length of s = fmt.Sprintf("%T:%v", l, l),
// as 8 bytes little-endian, and s.
func appendLabel(b []byte, l any) []byte {
	n := len(b)
	b = append(b, make([]byte, 8)...)
	switch v := l.(type) {
	case string:
		b = append(append(b, "string:"...), v...)
	case int, int8, int16, int32, int64:
		// A built-in type's reflect name is its %T.
		b = append(append(b, reflect.TypeOf(v).String()...), ':')
		b = strconv.AppendInt(b, reflect.ValueOf(v).Int(), 10)
	case uint, uint8, uint16, uint32, uint64:
		b = append(append(b, reflect.TypeOf(v).String()...), ':')
		b = strconv.AppendUint(b, reflect.ValueOf(v).Uint(), 10)
	default:
		b = fmt.Appendf(b, "%T:%v", l, l)
	}
	binary.LittleEndian.PutUint64(b[n:], uint64(len(b)-n-8))
	return b
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

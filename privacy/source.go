package privacy

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// Source hands out the random streams a party's mechanisms draw their noise
// from. Production code uses NewSecureSource, whose streams are keyed by
// 256 bits from crypto/rand and can be neither predicted nor repeated: two
// processes with the same configuration draw different noise. A seeded
// Source exists for tests and reproducible simulations only; Seeded reports
// which kind a Source is so that run records can say so. Safe for
// concurrent use.
type Source struct {
	seeded bool
	seed   uint64
	key    [32]byte
}

// NewSecureSource returns a Source keyed from crypto/rand (through
// rng.Secure).
func NewSecureSource() *Source {
	s := &Source{}
	r := rng.Secure()
	for i := 0; i < 4; i++ {
		binary.LittleEndian.PutUint64(s.key[8*i:], r.Uint64())
	}
	return s
}

// NewSeededSource returns a reproducible Source whose streams are
// rng.Derive(seed, labels...). It is for tests and simulations: noise that
// can be regenerated from a known seed protects nothing.
func NewSeededSource(seed uint64) *Source { return &Source{seeded: true, seed: seed} }

// Seeded reports whether s is reproducible (not for production releases).
func (s *Source) Seeded() bool { return s.seeded }

// sourceMagic starts a Source's binary form.
const sourceMagic = "fedtopic-source/1\x00"

// MarshalBinary implements encoding.BinaryMarshaler: the kind of s and its
// seed or key, so that a party restarted from its state directory draws the
// same noise again instead of making a new release. The key of a secure
// Source is secret: with it and the released values anyone can subtract the
// noise. Keep it where the raw data are kept, never with the releases.
func (s *Source) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, len(sourceMagic)+1+8+32)
	b = append(b, sourceMagic...)
	if s.seeded {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.LittleEndian.AppendUint64(b, s.seed)
	return append(b, s.key[:]...), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler, restoring what
// MarshalBinary wrote.
func (s *Source) UnmarshalBinary(b []byte) error {
	if len(b) != len(sourceMagic)+1+8+32 || string(b[:len(sourceMagic)]) != sourceMagic {
		return errors.New("privacy: source state: not a noise source's state (wrong length or header)")
	}
	b = b[len(sourceMagic):]
	if b[0] > 1 {
		return fmt.Errorf("privacy: source state: kind %d; want 0 (secure) or 1 (seeded)", b[0])
	}
	s.seeded = b[0] == 1
	s.seed = binary.LittleEndian.Uint64(b[1:9])
	copy(s.key[:], b[9:])
	return nil
}

// Stream returns the ChaCha8 stream for the label sequence, e.g.
// ("party", 2, "round", 5, "noise"). Streams for different labels are
// independent.
func (s *Source) Stream(labels ...any) *rand.Rand {
	return rand.New(chacha8.New(s.streamKey(labels)))
}

func (s *Source) streamKey(labels []any) [32]byte {
	if s.seeded {
		return rng.Key(s.seed, labels...)
	}
	k := rng.Key(0, labels...)
	h := sha256.New()
	h.Write([]byte("fedtopic/privacy/secure/v1\x00"))
	h.Write(s.key[:])
	h.Write(k[:])
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// Indexed returns cheap per-index streams under the label sequence: for
// regenerating one noise vector per token (FTM) from its index instead of
// storing it.
func (s *Source) Indexed(labels ...any) Indexed { return Indexed{base: s.streamKey(labels)} }

// Indexed derives the stream of index i as ChaCha8 keyed by
// SHA-256(base ‖ i): one hash per stream, no formatting, no allocation when
// an existing generator is reseeded with Seed.
type Indexed struct {
	base [32]byte
}

// Key returns the ChaCha8 key of index i.
func (x Indexed) Key(i uint64) [32]byte {
	var b [40]byte
	copy(b[:], x.base[:])
	binary.LittleEndian.PutUint64(b[32:], i)
	return sha256.Sum256(b[:])
}

// Seed reseeds c with index i's key, so that a *rand.Rand built once on c
// yields index i's stream from its start.
func (x Indexed) Seed(c *chacha8.Stream, i uint64) { c.Seed(x.Key(i)) }

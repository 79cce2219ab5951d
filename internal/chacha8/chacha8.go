package chacha8

import (
	"encoding/binary"
	"math/rand/v2"
)

// epochWords is how many words of an epoch's 128 a Stream outputs; the
// last 4 key the next epoch.
const epochWords = 124

// Stream is a ChaCha8Rand generator. Its zero value is not ready for use:
// make one with New or call Seed first. A Stream is not safe for concurrent
// use.
type Stream struct {
	buf  [128]uint64  // the current epoch
	i    uint32       // next word of buf to output
	seed [4]uint64    // the current epoch's key
	std  rand.ChaCha8 // the generator read without AVX-512
}

// New returns a Stream seeded with key.
func New(key [32]byte) *Stream {
	s := new(Stream)
	s.Seed(key)
	return s
}

// Seed restarts s at the beginning of the stream for key, as
// rand.ChaCha8.Seed does.
func (s *Stream) Seed(key [32]byte) {
	if !useAVX512 {
		s.std.Seed(key)
		s.i = epochWords // empty: the next word comes from refill
		return
	}
	for j := range s.seed {
		s.seed[j] = binary.LittleEndian.Uint64(key[8*j:])
	}
	epochAVX512(&s.seed, &s.buf)
	s.i = 0
}

// Uint64 returns the next word of the stream.
func (s *Stream) Uint64() uint64 {
	if i := s.i; i < epochWords {
		s.i = i + 1
		return s.buf[i&127]
	}
	return s.refill()
}

// Fill sets dst to the next len(dst) words of the stream, the words that
// as many calls of Uint64 would return. With AVX-512 the whole epochs
// inside dst are computed in place, not copied from the buffer.
func (s *Stream) Fill(dst []uint64) {
	for len(dst) > 0 {
		switch {
		case s.i < epochWords:
			n := copy(dst, s.buf[s.i:epochWords])
			s.i += uint32(n)
			dst = dst[n:]
		case useAVX512 && len(dst) >= len(s.buf):
			// The epoch's last four words, the next key, land in dst
			// past its output and move to the (spent) buffer, where
			// refill and this case read them.
			copy(s.seed[:], s.buf[epochWords:])
			epochAVX512(&s.seed, (*[128]uint64)(dst))
			copy(s.buf[epochWords:], dst[epochWords:len(s.buf)])
			dst = dst[epochWords:]
		default:
			dst[0] = s.refill()
			dst = dst[1:]
		}
	}
}

// refill computes the next epoch and returns its first word.
func (s *Stream) refill() uint64 {
	if useAVX512 {
		copy(s.seed[:], s.buf[epochWords:])
		epochAVX512(&s.seed, &s.buf)
	} else {
		for j := range s.buf[:epochWords] {
			s.buf[j] = s.std.Uint64()
		}
	}
	s.i = 1
	return s.buf[0]
}

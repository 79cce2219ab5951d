package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
)

// Vectors in Z_(2^k) are held in machine words: uint32 for k ≤ 32 (sums
// wrap mod 2^32, a multiple of 2^k, and are reduced mod 2^k when packed),
// uint64 for k = 64.
type word interface{ uint32 | uint64 }

// wordSize returns the bytes of key stream one value of a ring of k bits
// takes: 4 up to k = 32, 8 for k = 64.
func wordSize(bits int) int {
	if bits <= 32 {
		return 4
	}
	return 8
}

// packedLen is the length in bytes of n values of k bits packed.
func packedLen(n, bits int) int { return (n*bits + 7) / 8 }

// maskStream is one mask to apply: the AES-256-CTR key stream of key,
// added (sign +1) or subtracted (sign −1).
type maskStream struct {
	key  [32]byte
	sign int
}

// Tuning of mask expansion.
const (
	// maskChunk is how many values each mask covers at a time: the slice
	// of the vector stays in the first-level cache while every mask passes
	// over it.
	maskChunk = 2048
	// minSpan is the fewest values worth a goroutine of their own.
	minSpan = 1 << 15
)

// applyMasks adds to acc (mod 2^32 or 2^64, its word) every mask of
// masks with its sign. Mask j is AES-256 in counter mode from a zero IV
// (each key serves one mask only), its key stream read as consecutive
// little-endian words of acc's size: value i gets the word at bytes
// [i·s, (i+1)·s), s = 4 or 8. Every word of an AES-CTR stream is uniform,
// so each mask is uniform on Z_(2^32)^len or Z_(2^64)^len, and so on
// Z_(2^k)^len after reduction.
//
// The vector is cut into spans at AES block boundaries, one per
// available processor (the counter of a span's first block is computed,
// not run through), and each span passes every mask over one chunk at a
// time. The result does not depend on the number of spans.
func applyMasks[T word](acc []T, masks []maskStream) {
	if len(masks) == 0 || len(acc) == 0 {
		return
	}
	maskSpans(acc, masks, min(runtime.GOMAXPROCS(0), len(acc)*len(masks)/minSpan))
}

// maskSpans is applyMasks over the given number of spans, each in a
// goroutine of its own.
func maskSpans[T word](acc []T, masks []maskStream, spans int) {
	var zero T
	perBlock := aes.BlockSize / wordSizeOf(zero)
	if spans <= 1 {
		maskSpan(acc, 0, masks)
		return
	}
	step := ((len(acc)+spans-1)/spans + perBlock - 1) / perBlock * perBlock // ≥ perBlock
	var wg sync.WaitGroup
	for first := 0; first < len(acc); first += step {
		span := acc[first:min(first+step, len(acc))]
		wg.Go(func() { maskSpan(span, first, masks) })
	}
	wg.Wait()
}

func wordSizeOf[T word](T) int {
	var x T
	x--
	if uint64(x) == 1<<32-1 {
		return 4
	}
	return 8
}

// maskSpan applies masks to acc, the values first, first+1, … of the
// whole vector; first·size is a multiple of the AES block size.
func maskSpan[T word](acc []T, first int, masks []maskStream) {
	var zero T
	size := wordSizeOf(zero)
	var iv [aes.BlockSize]byte
	binary.BigEndian.PutUint64(iv[8:], uint64(first*size/aes.BlockSize))
	streams := make([]cipher.Stream, len(masks))
	for j, m := range masks {
		block, err := aes.NewCipher(m.key[:])
		if err != nil {
			panic(err) // a 32-byte key is always valid
		}
		streams[j] = cipher.NewCTR(block, iv[:])
	}
	zeros := make([]byte, maskChunk*size)
	ks := make([]byte, maskChunk*size)
	for i := 0; i < len(acc); i += maskChunk {
		a := acc[i:min(i+maskChunk, len(acc))]
		b := ks[:len(a)*size]
		for j, s := range streams {
			s.XORKeyStream(b, zeros[:len(b)])
			if masks[j].sign > 0 {
				addWords(a, b)
			} else {
				subWords(a, b)
			}
		}
	}
}

// addWords adds the little-endian words of b to a; b holds at least
// len(a) words. The loops are unrolled and slice as they go, so that the
// compiler drops the bounds checks.
func addWords[T word](a []T, b []byte) {
	switch a := any(a).(type) {
	case []uint32:
		le := binary.LittleEndian
		for len(a) >= 8 && len(b) >= 32 {
			a[0] += le.Uint32(b[0:4])
			a[1] += le.Uint32(b[4:8])
			a[2] += le.Uint32(b[8:12])
			a[3] += le.Uint32(b[12:16])
			a[4] += le.Uint32(b[16:20])
			a[5] += le.Uint32(b[20:24])
			a[6] += le.Uint32(b[24:28])
			a[7] += le.Uint32(b[28:32])
			a, b = a[8:], b[32:]
		}
		for len(a) > 0 && len(b) >= 4 {
			a[0] += le.Uint32(b[0:4])
			a, b = a[1:], b[4:]
		}
	case []uint64:
		le := binary.LittleEndian
		for len(a) >= 4 && len(b) >= 32 {
			a[0] += le.Uint64(b[0:8])
			a[1] += le.Uint64(b[8:16])
			a[2] += le.Uint64(b[16:24])
			a[3] += le.Uint64(b[24:32])
			a, b = a[4:], b[32:]
		}
		for len(a) > 0 && len(b) >= 8 {
			a[0] += le.Uint64(b[0:8])
			a, b = a[1:], b[8:]
		}
	}
}

// subWords subtracts the little-endian words of b from a, as addWords.
func subWords[T word](a []T, b []byte) {
	switch a := any(a).(type) {
	case []uint32:
		le := binary.LittleEndian
		for len(a) >= 8 && len(b) >= 32 {
			a[0] -= le.Uint32(b[0:4])
			a[1] -= le.Uint32(b[4:8])
			a[2] -= le.Uint32(b[8:12])
			a[3] -= le.Uint32(b[12:16])
			a[4] -= le.Uint32(b[16:20])
			a[5] -= le.Uint32(b[20:24])
			a[6] -= le.Uint32(b[24:28])
			a[7] -= le.Uint32(b[28:32])
			a, b = a[8:], b[32:]
		}
		for len(a) > 0 && len(b) >= 4 {
			a[0] -= le.Uint32(b[0:4])
			a, b = a[1:], b[4:]
		}
	case []uint64:
		le := binary.LittleEndian
		for len(a) >= 4 && len(b) >= 32 {
			a[0] -= le.Uint64(b[0:8])
			a[1] -= le.Uint64(b[8:16])
			a[2] -= le.Uint64(b[16:24])
			a[3] -= le.Uint64(b[24:32])
			a, b = a[4:], b[32:]
		}
		for len(a) > 0 && len(b) >= 8 {
			a[0] -= le.Uint64(b[0:8])
			a, b = a[1:], b[8:]
		}
	}
}

// packWords appends the values of a, reduced mod 2^k, to dst as a
// little-endian bit string of k bits each (value i at bits [i·k,
// (i+1)·k)), the last byte padded with zero bits. k = 32 and 64 are
// plain little-endian words.
func packWords[T word](dst []byte, a []T, bits int) []byte {
	switch a := any(a).(type) {
	case []uint64:
		for _, v := range a {
			dst = binary.LittleEndian.AppendUint64(dst, v)
		}
		return dst
	case []uint32:
		if bits == 32 {
			for _, v := range a {
				dst = binary.LittleEndian.AppendUint32(dst, v)
			}
			return dst
		}
		mask := uint64(1)<<bits - 1
		var buf uint64 // pending bits, low first
		n := 0         // how many
		for _, v := range a {
			buf |= (uint64(v) & mask) << n
			n += bits
			if n >= 32 {
				dst = binary.LittleEndian.AppendUint32(dst, uint32(buf))
				buf >>= 32
				n -= 32
			}
		}
		for ; n > 0; n -= 8 {
			dst = append(dst, byte(buf))
			buf >>= 8
		}
		return dst
	}
	return dst
}

// addPacked adds to a the values packed in b by packWords with k bits
// each; b must hold exactly packedLen(len(a), k) bytes.
func addPacked[T word](a []T, b []byte, bits int) {
	switch a := any(a).(type) {
	case []uint64:
		addWords(a, b)
	case []uint32:
		if bits == 32 {
			addWords(a, b)
			return
		}
		mask := uint64(1)<<bits - 1
		var buf uint64
		n, p := 0, 0
		for j := range a {
			for n < bits {
				if p+4 <= len(b) {
					buf |= uint64(binary.LittleEndian.Uint32(b[p:])) << n
					p += 4
					n += 32
				} else {
					buf |= uint64(b[p]) << n
					p++
					n += 8
				}
			}
			a[j] += uint32(buf & mask)
			buf >>= bits
			n -= bits
		}
	}
}

// checkPacked reports whether b is the canonical packing of n values of k
// bits: its exact length, and zero padding bits in the last byte.
func checkPacked(b []byte, n, bits int) error {
	if len(b) != packedLen(n, bits) {
		return fmt.Errorf("%d values of %d bits in %d bytes", n, bits, len(b))
	}
	if pad := len(b)*8 - n*bits; pad > 0 && b[len(b)-1]>>(8-pad) != 0 {
		return fmt.Errorf("padding bits of the last byte are not zero")
	}
	return nil
}

// ringVec is a vector in Z_(2^k) held in the words of its ring.
type ringVec struct {
	bits int
	w32  []uint32 // k ≤ 32
	w64  []uint64 // k = 64
}

func newRingVec(bits, n int) ringVec {
	if bits <= 32 {
		return ringVec{bits: bits, w32: make([]uint32, n)}
	}
	return ringVec{bits: bits, w64: make([]uint64, n)}
}

// ringVecOf returns the grid values x in Z_(2^k), two's complement.
func ringVecOf(bits int, x []int64) ringVec {
	v := newRingVec(bits, len(x))
	if v.w64 != nil {
		for i, e := range x {
			v.w64[i] = uint64(e)
		}
	} else {
		for i, e := range x {
			v.w32[i] = uint32(e)
		}
	}
	return v
}

func (v ringVec) len() int { return max(len(v.w32), len(v.w64)) }

// at returns value i reduced mod 2^k.
func (v ringVec) at(i int) uint64 {
	if v.w64 != nil {
		return v.w64[i]
	}
	return uint64(v.w32[i]) & (1<<v.bits - 1)
}

// set sets value i to x (mod the word).
func (v ringVec) set(i int, x uint64) {
	if v.w64 != nil {
		v.w64[i] = x
	} else {
		v.w32[i] = uint32(x)
	}
}

func (v ringVec) addPacked(b []byte) {
	if v.w64 != nil {
		addPacked(v.w64, b, v.bits)
	} else {
		addPacked(v.w32, b, v.bits)
	}
}

func (v ringVec) applyMasks(masks []maskStream) {
	if v.w64 != nil {
		applyMasks(v.w64, masks)
	} else {
		applyMasks(v.w32, masks)
	}
}

// pack returns the packed k-bit encoding of v.
func (v ringVec) pack() []byte {
	dst := make([]byte, 0, packedLen(v.len(), v.bits))
	if v.w64 != nil {
		return packWords(dst, v.w64, v.bits)
	}
	return packWords(dst, v.w32, v.bits)
}

package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// referenceMask adds (sign +1) or subtracts one mask the plain way: one
// AES-256-CTR key stream from a zero IV, read as consecutive little-endian
// words of size bytes, one value at a time.
func referenceMask(acc []uint64, key [32]byte, size, sign int) {
	block, _ := aes.NewCipher(key[:])
	ks := make([]byte, size*len(acc))
	cipher.NewCTR(block, make([]byte, aes.BlockSize)).XORKeyStream(ks, ks)
	for i := range acc {
		w := binary.LittleEndian.Uint64(append(ks[size*i:size*i+size:size*i+size], make([]byte, 8-size)...))
		if sign > 0 {
			acc[i] += w
		} else {
			acc[i] -= w
		}
	}
}

// TestApplyMasksMatchesReference checks the fast mask expansion — masks
// interleaved chunk by chunk, the vector cut into spans whose counters
// start mid-stream — against one key stream read value by value, for
// lengths that end inside an AES block, inside a chunk and on a span's
// edge, and for one to five spans: the masks must be the same words.
func TestApplyMasksMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var masks []maskStream
	for i := range 4 {
		var k [32]byte
		for j := range k {
			k[j] = byte(r.Uint32())
		}
		masks = append(masks, maskStream{key: k, sign: []int{1, -1}[i%2]})
	}
	for _, l := range []int{1, 3, 5, maskChunk - 1, maskChunk + 3, 3*maskChunk + 7, 40001} {
		start := make([]uint64, l)
		for i := range start {
			start[i] = r.Uint64()
		}
		for _, size := range []int{4, 8} {
			want := slices.Clone(start)
			for _, m := range masks {
				referenceMask(want, m.key, size, m.sign)
			}
			for spans := 1; spans <= 5; spans++ {
				t.Run(fmt.Sprintf("len %d/%d-byte words/%d spans", l, size, spans), func(t *testing.T) {
					got := make([]uint64, l)
					if size == 4 {
						acc := make([]uint32, l)
						for i, v := range start {
							acc[i] = uint32(v)
						}
						maskSpans(acc, masks, spans)
						for i, v := range acc {
							got[i], want[i] = uint64(v), want[i]&(1<<32-1)
						}
					} else {
						acc := slices.Clone(start)
						maskSpans(acc, masks, spans)
						got = acc
					}
					if i := firstDiff(got, want); i >= 0 {
						t.Errorf("value %d = %#x, want %#x", i, got[i], want[i])
					}
				})
			}
		}
	}
}

func firstDiff(a, b []uint64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestPackRoundTrip checks the packed encoding of every ring: values
// reduced mod 2^k come back from the packed bytes exactly, the packing
// has the canonical length with zero padding, and a set padding bit or a
// wrong length is refused.
func TestPackRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	bitsList := []int{64}
	for k := MinBits; k <= 32; k++ {
		bitsList = append(bitsList, k)
	}
	for _, bits := range bitsList {
		for _, n := range []int{1, 2, 7, 8, 9, 1001} {
			t.Run(fmt.Sprintf("%d bits/%d values", bits, n), func(t *testing.T) {
				v := newRingVec(bits, n)
				want := make([]uint64, n)
				for i := range want {
					x := r.Uint64()
					v.set(i, x)
					want[i] = x
					if bits < 64 {
						want[i] &= 1<<bits - 1
					}
				}
				b := v.pack()
				if err := checkPacked(b, n, bits); err != nil {
					t.Fatalf("checkPacked(pack) = %v", err)
				}
				back := newRingVec(bits, n)
				back.addPacked(b)
				got := make([]uint64, n)
				for i := range got {
					got[i] = back.at(i)
				}
				if i := firstDiff(got, want); i >= 0 {
					t.Errorf("value %d = %#x, want %#x", i, got[i], want[i])
				}
				if checkPacked(append(slices.Clone(b), 0), n, bits) == nil {
					t.Errorf("checkPacked accepts a trailing byte")
				}
				if pad := len(b)*8 - n*bits; pad > 0 {
					c := slices.Clone(b)
					c[len(c)-1] |= 0x80
					if checkPacked(c, n, bits) == nil {
						t.Errorf("checkPacked accepts a set padding bit")
					}
				}
			})
		}
	}
}

// TestRingBits checks the smallest ring: it is the first k whose signed
// range holds the sum of n values at the bound, so one bit less fails
// Validate, and it never goes below MinBits.
func TestRingBits(t *testing.T) {
	tests := []struct {
		n         int
		clip      float64
		frac      int
		want      int
		wantValid bool
	}{
		{n: 3, clip: 1000, frac: 8, want: 21, wantValid: true},     // 768,000 < 2^20
		{n: 5, clip: 1000, frac: 8, want: 22, wantValid: true},     // 1,280,000 < 2^21
		{n: 10, clip: 1 << 21, frac: 0, want: 26, wantValid: true}, // AD-LDA's clip
		{n: 50, clip: 1 << 21, frac: 0, want: 28, wantValid: true},
		{n: 2, clip: 1, frac: 0, want: MinBits, wantValid: true},
		{n: 10, clip: float64((1<<31-1)/11) / 256, frac: 8, want: 32, wantValid: true}, // PC-TD's clip, t = 6
		{n: 10, clip: 1e9, frac: 8, want: 64, wantValid: true},
		{n: 10, clip: 1e18, frac: 8, want: 64, wantValid: false},
	}
	for _, tt := range tests {
		got := RingBits(tt.n, tt.clip, tt.frac)
		if got != tt.want {
			t.Errorf("RingBits(%d, %v, %d) = %d, want %d", tt.n, tt.clip, tt.frac, got, tt.want)
		}
		p := Params{Session: []byte("s"), Parties: tt.n, Threshold: tt.n/2 + 1, Bits: got, FracBits: tt.frac, Clip: tt.clip, Len: 1}
		if err := p.Validate(); (err == nil) != tt.wantValid {
			t.Errorf("RingBits(%d, %v, %d): Validate = %v, want valid %v", tt.n, tt.clip, tt.frac, err, tt.wantValid)
		}
		if got > MinBits && got <= 32 {
			p.Bits = got - 1
			if p.Validate() == nil {
				t.Errorf("RingBits(%d, %v, %d) = %d, but %d bits pass Validate", tt.n, tt.clip, tt.frac, got, got-1)
			}
		}
	}
}

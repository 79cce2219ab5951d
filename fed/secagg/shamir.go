package secagg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// Shamir secret sharing of 32-byte secrets over the prime field GF(p),
// p = 2^61 − 1. A secret is cut into five chunks of at most 56 bits (7, 7,
// 7, 7 and 4 bytes), each below p, and each chunk is shared with its own
// random polynomial of degree t−1; a share is the evaluations of the five
// polynomials at one nonzero point x. Any t shares determine the secret
// and any t−1 are uniformly distributed whatever the secret (Shamir 1979).

// fieldP is the Mersenne prime 2^61 − 1.
const fieldP = 1<<61 - 1

// chunks is how many field elements carry a 32-byte secret.
const chunks = 5

// chunkBytes are the byte widths of the chunks.
var chunkBytes = [chunks]int{7, 7, 7, 7, 4}

// share is one party's share of one secret: the point x and the values of
// the chunk polynomials there.
type share struct {
	x uint16
	y [chunks]uint64
}

// shareSize is a share's encoded size.
const shareSize = 2 + 8*chunks

func (s share) appendTo(w *writer) {
	w.u16(int(s.x))
	for _, v := range s.y {
		w.u64(v)
	}
}

func readShare(r *reader) share {
	var s share
	s.x = uint16(r.u16())
	for i := range s.y {
		s.y[i] = r.u64()
		if s.y[i] >= fieldP {
			r.fail(fmt.Errorf("share value %d not below the field prime", s.y[i]))
		}
	}
	if s.x == 0 {
		r.fail(errors.New("share at x = 0"))
	}
	return s
}

func fadd(a, b uint64) uint64 {
	s := a + b // < 2^62
	if s >= fieldP {
		s -= fieldP
	}
	return s
}

func fsub(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return a + fieldP - b
}

func fmul(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b) // < 2^122
	// x = hi·2^64 + lo = (hi·2^3 + lo>>61)·2^61 + (lo mod 2^61), and 2^61 ≡ 1.
	s := (lo & fieldP) + (hi<<3 | lo>>61)
	if s >= fieldP {
		s -= fieldP
	}
	return s
}

// finv returns a^(p−2) = a^(−1) for a ≠ 0.
func finv(a uint64) uint64 {
	r, e := uint64(1), uint64(fieldP-2)
	for e > 0 {
		if e&1 == 1 {
			r = fmul(r, a)
		}
		a = fmul(a, a)
		e >>= 1
	}
	return r
}

// randField draws a uniform element of GF(p) from src by rejection.
func randField(src io.Reader) (uint64, error) {
	var b [8]byte
	for {
		if _, err := io.ReadFull(src, b[:]); err != nil {
			return 0, err
		}
		v := binary.LittleEndian.Uint64(b[:]) & fieldP
		if v < fieldP {
			return v, nil
		}
	}
}

// splitChunks cuts a secret into its field elements.
func splitChunks(secret [32]byte) [chunks]uint64 {
	var c [chunks]uint64
	off := 0
	for i, n := range chunkBytes {
		var b [8]byte
		copy(b[:], secret[off:off+n])
		c[i] = binary.LittleEndian.Uint64(b[:])
		off += n
	}
	return c
}

// joinChunks is the inverse of splitChunks; it fails if a chunk does not
// fit its width (which only inconsistent shares produce).
func joinChunks(c [chunks]uint64) ([32]byte, error) {
	var s [32]byte
	off := 0
	for i, n := range chunkBytes {
		if c[i]>>(8*n) != 0 {
			return s, errors.New("reconstructed chunk out of range")
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], c[i])
		copy(s[off:off+n], b[:n])
		off += n
	}
	return s, nil
}

// shamirSplit returns n shares of secret, at x = 1 … n, any t of which
// rebuild it; the polynomials' coefficients are drawn from src.
func shamirSplit(secret [32]byte, t, n int, src io.Reader) ([]share, error) {
	if t < 1 || t > n || n > 1<<16-1 {
		return nil, fmt.Errorf("shamir: %d of %d shares", t, n)
	}
	c := splitChunks(secret)
	coef := make([]uint64, t)
	out := make([]share, n)
	for i := range out {
		out[i].x = uint16(i + 1)
	}
	for j := range c {
		coef[0] = c[j]
		for d := 1; d < t; d++ {
			v, err := randField(src)
			if err != nil {
				return nil, fmt.Errorf("shamir: random source: %w", err)
			}
			coef[d] = v
		}
		for i := range out {
			x := uint64(out[i].x)
			acc := uint64(0)
			for d := t - 1; d >= 0; d-- { // Horner
				acc = fadd(fmul(acc, x), coef[d])
			}
			out[i].y[j] = acc
		}
	}
	return out, nil
}

// lagrangeAt returns the Lagrange weights at point z for the points xs.
func lagrangeAt(xs []uint64, z uint64) []uint64 {
	w := make([]uint64, len(xs))
	for i, xi := range xs {
		num, den := uint64(1), uint64(1)
		for j, xj := range xs {
			if i == j {
				continue
			}
			num = fmul(num, fsub(z, xj))
			den = fmul(den, fsub(xi, xj))
		}
		w[i] = fmul(num, finv(den))
	}
	return w
}

// shamirCombine rebuilds a secret from at least t shares with distinct
// points. It interpolates through the first t and checks that every
// further share lies on the same polynomials, so inconsistent shares are
// reported rather than silently combined.
func shamirCombine(shares []share, t int) ([32]byte, error) {
	if t < 1 || len(shares) < t {
		return [32]byte{}, fmt.Errorf("shamir: %d shares, need %d: %w", len(shares), t, ErrBelowThreshold)
	}
	seen := make(map[uint16]bool, len(shares))
	for _, s := range shares {
		if s.x == 0 || seen[s.x] {
			return [32]byte{}, fmt.Errorf("shamir: share point %d repeated or zero", s.x)
		}
		seen[s.x] = true
	}
	xs := make([]uint64, t)
	for i := range xs {
		xs[i] = uint64(shares[i].x)
	}
	at0 := lagrangeAt(xs, 0)
	var c [chunks]uint64
	for j := range c {
		acc := uint64(0)
		for i := range xs {
			acc = fadd(acc, fmul(at0[i], shares[i].y[j]))
		}
		c[j] = acc
	}
	for _, s := range shares[t:] {
		w := lagrangeAt(xs, uint64(s.x))
		for j := range c {
			acc := uint64(0)
			for i := range xs {
				acc = fadd(acc, fmul(w[i], shares[i].y[j]))
			}
			if acc != s.y[j] {
				return [32]byte{}, fmt.Errorf("shamir: share at point %d is inconsistent with the others", s.x)
			}
		}
	}
	secret, err := joinChunks(c)
	if err != nil {
		return secret, fmt.Errorf("shamir: %w", err)
	}
	return secret, nil
}

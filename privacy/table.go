package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sync/atomic"
)

// bitReader hands out the random bits of one draw: 16-bit chunks peeled off
// 64-bit words of r, and whole words for the rare refinements. Leftover bits
// are dropped when the draw ends, so what a draw consumes from r depends only
// on r's state, never on earlier draws.
type bitReader struct {
	r   *rand.Rand
	buf uint64
	n   uint // bits left in buf
}

// refill replaces the buffer with a fresh word; leftover bits are dropped.
func (b *bitReader) refill() { b.buf, b.n = b.r.Uint64(), 64 }

// take returns the next n ≤ 64 bits in the low bits of its result. It is
// too large for the compiler to inline, so the samplers' hot loops read
// their fixed-width pieces from the buffer themselves.
func (b *bitReader) take(n uint) uint64 {
	if b.n < n {
		b.refill()
	}
	v := b.buf & (1<<n - 1)
	b.buf >>= n
	b.n -= n
	return v
}

// cdfFunc encloses F_j = P(X ≤ j), the j-th boundary of a distribution on
// the non-negative integers, to about prec bits.
type cdfFunc func(j int, prec uint) bounds

// table samples a distribution on {0, …, n} by inversion of a uniform
// U ∈ [0, 1) drawn lazily bit by bit: X = j iff F_{j−1} ≤ U < F_j, with
// F_n = 1 implicitly (outcome n is the last one, or "overflow" for an
// unbounded distribution whose caller handles the tail).
//
// Exactness: the boundaries F_j are irrational in general. The table keeps
// a 64-bit enclosure of each (cutLo ≤ 2⁶⁴F_j ≤ cutHi) computed with
// directed rounding, and a 16-bit lookup table for the cells that lie
// entirely inside one outcome. A draw reads 16 bits; with probability about
// n/65536 it needs 48 more; only when those 64 bits are within one unit of a
// boundary's enclosure (probability ≈ 2⁻⁶³ per boundary) does it compute the
// boundary with arbitrary precision and read further bits until the
// comparison is decided. The sampled distribution is therefore exactly the
// one F describes; no floating-point rounding reaches it.
type table struct {
	n     int              // number of boundaries; outcomes are 0..n
	lut   *[1 << 16]uint16 // 16-bit prefix → outcome, or straddle|first candidate
	cutLo []uint64         // ⌊2⁶⁴·lower bound of F_j⌋
	cutHi []uint64         // ⌈2⁶⁴·upper bound of F_j⌉; math.MaxUint64 = undecidable from 64 bits
	cdf   cdfFunc
	slow  atomic.Int64 // arbitrary-precision resolutions so far (tests look at it)
}

const straddle = 0x8000

// maxTable is the largest number of boundaries a table may have (the
// lookup table stores outcomes in 15 bits).
const maxTable = 1 << 14

// newTable builds the sampler for the n boundaries enclosed by cdf.
func newTable(n int, cdf cdfFunc) (*table, error) {
	if n < 0 || n > maxTable {
		return nil, fmt.Errorf("privacy: internal table of %d outcomes is out of range", n+1)
	}
	t := &table{n: n, cdf: cdf, cutLo: make([]uint64, n), cutHi: make([]uint64, n)}
	for j := 0; j < n; j++ {
		b := cdf(j, 160)
		if b.width() > 0x1p-100 {
			b = cdf(j, 320)
		}
		t.cutLo[j] = cutLow(b.lo)
		t.cutHi[j], _ = cutHigh(b.hi)
		if j > 0 && (t.cutLo[j] < t.cutLo[j-1] || t.cutHi[j] < t.cutHi[j-1]) {
			return nil, fmt.Errorf("privacy: internal table boundaries are not increasing at %d", j)
		}
	}
	t.lut = new([1 << 16]uint16)
	j := 0 // boundaries 0..j−1 are surely ≤ the cell start
	for p := 0; p < 1<<16; p++ {
		start := uint64(p) << 48
		for j < n && t.cutHi[j] != math.MaxUint64 && t.cutHi[j] <= start {
			j++
		}
		// The cell [start, start+2⁴⁸) lies inside outcome j iff it ends
		// below F_j surely (or j is the last outcome).
		endIn := j == n || (p < 1<<16-1 && uint64(p+1)<<48 <= t.cutLo[j])
		if endIn {
			t.lut[p] = uint16(j)
		} else {
			t.lut[p] = straddle | uint16(j)
		}
	}
	return t, nil
}

// sample draws one outcome in [0, n]. The common case — the 16-bit cell
// lies inside one outcome — is small enough to inline.
func (t *table) sample(br *bitReader) int {
	p := uint16(br.take(16))
	if e := t.lut[p]; e&straddle == 0 {
		return int(e)
	}
	return t.resolve(p, br)
}

// resolve finishes a draw whose 16-bit cell p straddles a boundary.
func (t *table) resolve(p uint16, br *bitReader) int {
	j := int(t.lut[p] &^ straddle)
	u := uint64(p)<<48 | br.r.Uint64()>>16
	for ; j < t.n; j++ {
		if u < t.cutLo[j] { // U < (u+1)/2⁶⁴ ≤ F_j
			return j
		}
		if t.cutHi[j] != math.MaxUint64 && u >= t.cutHi[j] { // U ≥ u/2⁶⁴ ≥ F_j
			continue
		}
		if t.below(j, u, br) {
			return j
		}
	}
	return t.n
}

// below decides exactly whether U < F_j, given U's first 64 bits u, by
// reading further bits of U and enclosing F_j ever more tightly.
func (t *table) below(j int, u uint64, br *bitReader) bool {
	t.slow.Add(1)
	return refineBelow(u, br, func(prec uint) bounds { return t.cdf(j, prec) })
}

// refineBelow decides whether U < p, where U's leading 64 bits are u and p
// is enclosed by enclose at any requested precision. It reads 64 further bits
// of U per step; each step leaves the comparison undecided with probability
// about 2⁻⁶².
func refineBelow(u uint64, br *bitReader, enclose func(prec uint) bounds) bool {
	prefix := new(big.Int).SetUint64(u)
	nbits := 64
	for {
		prefix.Lsh(prefix, 64)
		prefix.Or(prefix, new(big.Int).SetUint64(br.r.Uint64()))
		nbits += 64
		b := enclose(uint(nbits) + 64)
		prec := uint(nbits) + 8
		lo := new(big.Float).SetPrec(prec).SetInt(prefix)
		lo.SetMantExp(lo, -nbits) // U ∈ [lo, lo + 2^-nbits)
		hi := new(big.Float).SetPrec(prec).Add(lo, new(big.Float).SetMantExp(big.NewFloat(1), -nbits))
		if hi.Cmp(b.lo) <= 0 {
			return true
		}
		if lo.Cmp(b.hi) >= 0 {
			return false
		}
	}
}

// bernoulli returns true with probability p, exactly, where p ∈ [0, 1] is
// enclosed by the float64 interval [pLo, pHi] (a cheap first guess, which
// must be a valid enclosure) and by enclose at any precision. It reads 32
// bits, then 32 more, and refines only when U falls within the interval.
func bernoulli(br *bitReader, pLo, pHi float64, enclose func(prec uint) bounds) bool {
	return bernoulliFrom(br, br.take(32), pLo, pHi, enclose)
}

// bernoulliFrom is bernoulli for a caller that has read U's first 32 bits u.
func bernoulliFrom(br *bitReader, u uint64, pLo, pHi float64, enclose func(prec uint) bounds) bool {
	if float64(u+1) <= pLo*0x1p32 { // U < (u+1)/2³² ≤ pLo ≤ p (the scaling is exact)
		return true
	}
	if float64(u) >= pHi*0x1p32 { // U ≥ u/2³² ≥ pHi ≥ p
		return false
	}
	u = u<<32 | br.take(32)
	if u < floorScaled(pLo) {
		return true
	}
	if hi, sat := ceilScaled(pHi); !sat && u >= hi {
		return false
	}
	return refineBelow(u, br, enclose)
}

// floorScaled returns ⌊2⁶⁴·x⌋ for x ∈ [0, 1], saturating at 2⁶⁴−1.
func floorScaled(x float64) uint64 {
	if !(x > 0) {
		return 0
	}
	s := math.Ldexp(x, 64)
	if s >= 0x1p64 {
		return math.MaxUint64
	}
	return uint64(s) // truncation toward zero is the floor here
}

// ceilScaled returns ⌈2⁶⁴·x⌉ for x ∈ [0, 1], or sat = true when it is 2⁶⁴ or
// more.
func ceilScaled(x float64) (c uint64, sat bool) {
	if !(x > 0) {
		return 0, false
	}
	s := math.Ceil(math.Ldexp(x, 64))
	if s >= 0x1p64 {
		return math.MaxUint64, true
	}
	return uint64(s), false
}

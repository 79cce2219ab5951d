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
	return t.resolveFrom(int(t.lut[p]&^straddle), uint64(p)<<48|br.r.Uint64()>>16, br)
}

// resolveFrom returns the outcome of U, whose first 64 bits are u, knowing
// that U ≥ F_{j−1}.
func (t *table) resolveFrom(j int, u uint64, br *bitReader) int {
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

// Two-chunk lookup entries (see buildLUT2): an entry holds the outcome j of
// the cell's first candidate in its high bits, then a flag sending the draw
// to the slow path, then the width d ∈ {0, 1} of the undecided sub-cell
// range and its start a ∈ [0, 2¹⁶].
const (
	lut2A    = 1<<17 - 1
	lut2D    = 17
	lut2Slow = 18
	lut2J    = 19
	// lut2MaxN bounds the number of boundaries a table may have for the
	// outcome to fit above the flags.
	lut2MaxN = 1<<(32-lut2J) - 1
)

// lut2Decide returns the outcome that the two-chunk entry e gives for the
// next 16 bits q, and slow = true when the entry leaves the draw to the slow
// path instead (then the outcome means nothing). It does not branch on e.
func lut2Decide(e, q uint32) (o uint64, slow bool) {
	a, d := e&lut2A, e>>lut2D&1
	// q ≥ a+d exactly when a+d−1−q wraps below zero (all terms < 2¹⁸).
	return uint64(e>>lut2J) + uint64((a+d-1-q)>>31), e>>lut2Slow&1 != 0 || q-a < d
}

// cellOf returns the 16-bit cell of U that the entry i of a two-chunk table
// (or of a permuted lookup table) stands for. The entries are stored in the
// order of an odd multiplier, a bijection of the 16-bit chunks, so that every
// memory page and cache line holds cells from the whole range of outcomes:
// were the cells in order, a page would hold a range of outcomes, and a
// page that is slower to reach (its placement in the caches differs from
// run to run) would make those outcomes slower to draw. The chunk read from
// the stream is uniform, so the cell it selects is uniform too.
func cellOf(i uint16) uint16 { return i * 0x9e37 }

// buildLUT2 returns the two-chunk lookup table of t, which decides a draw
// from the first 32 bits of U in a fixed number of steps for all but a
// fraction slowMass of the draws: for the 16-bit cell p = cellOf(i) and the
// next 16 bits q, entry e = lut2[i] gives the outcome j + [q ≥ a + d] unless the
// slow flag is set or a ≤ q < a + d. A cell inside one outcome has
// a = 2¹⁶, d = 0; a cell crossing one boundary F_j keeps the sub-cells q
// below a, which lie below F_j surely, and those from a + d on, which lie
// at or above it and (checked) below F_{j+1}; a cell crossing several
// boundaries, or holding the last outcome n, or whose boundary's enclosure
// spans more than one sub-cell, is slow. Every cell is used equally often
// whatever the draw's outcome, and every draw reads the same bits and takes
// the same steps unless it is slow, so the time of a draw says nothing
// about its outcome beyond the slow draws.
func (t *table) buildLUT2() (lut2 *[1 << 16]uint32, slowMass float64, err error) {
	if t.n > lut2MaxN {
		return nil, 0, fmt.Errorf("privacy: internal two-chunk table of %d outcomes is out of range", t.n+1)
	}
	lut2 = new([1 << 16]uint32)
	slowCells := 0.0
	for i := range 1 << 16 {
		p := int(cellOf(uint16(i)))
		e := t.lut[p]
		j := uint32(e &^ straddle)
		start := uint64(p) << 48
		slow := func() {
			lut2[i] = j<<lut2J | 1<<lut2Slow
			slowCells++
		}
		switch {
		case int(j) == t.n:
			slow() // the last outcome (overflow, for the geometric law)
		case e&straddle == 0:
			lut2[i] = j<<lut2J | 1<<16 // a = 2¹⁶, d = 0
		case t.cutHi[j] == math.MaxUint64 || int(j)+1 == t.n:
			slow()
		case p < 1<<16-1 && uint64(p+1)<<48 > t.cutLo[j+1]:
			slow() // F_{j+1} may lie in the cell too
		default:
			var a, b uint64
			if t.cutLo[j] > start {
				a = (t.cutLo[j] - start) >> 32
			}
			diff := t.cutHi[j] - start // > 0: the cell straddles F_j
			b = diff >> 32
			if diff&(1<<32-1) != 0 {
				b++
			}
			if p == 1<<16-1 || b < a || b-a > 1 || b > 1<<16 {
				slow()
				continue
			}
			lut2[i] = j<<lut2J | uint32(b-a)<<lut2D | uint32(a)
		}
	}
	return lut2, slowCells / (1 << 16), nil
}

// permutedLUT returns t's lookup table in the order of cellOf: entry i is
// the entry of cell cellOf(i).
func (t *table) permutedLUT() *[1 << 16]uint16 {
	l := new([1 << 16]uint16)
	for i := range l {
		l[i] = t.lut[cellOf(uint16(i))]
	}
	return l
}

// resolve2 finishes a draw that the two-chunk table sent to the slow path,
// given its cell p and next 16 bits q: it reads 32 more bits of U and
// compares with the boundaries' enclosures, exactly as resolve does.
func (t *table) resolve2(p uint16, q uint32, br *bitReader) int {
	e := t.lut[p]
	j := int(e &^ straddle)
	if e&straddle == 0 {
		return j
	}
	return t.resolveFrom(j, uint64(p)<<48|uint64(q)<<32|br.r.Uint64()>>32, br)
}

package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// continuation describes the ratio c ∈ (0, 1) of a geometric law
// P(G ≥ k) = c^k on {0, 1, 2, …}, through rigorous enclosures.
type continuation interface {
	pow(k uint64, prec uint) bounds         // c^k
	oneMinusPow(k uint64, prec uint) bounds // 1 − c^k, with relative precision
}

// expRatio is c = e^(−λ) for an exactly known float64 λ > 0.
type expRatio float64

func (l expRatio) pow(k uint64, prec uint) bounds {
	return expNeg(mulExact(float64(l), k), prec)
}

func (l expRatio) oneMinusPow(k uint64, prec uint) bounds {
	return oneMinusExpNeg(mulExact(float64(l), k), prec)
}

// complementRatio is c = 1 − q for a q ∈ (0, 1) known through enclosures.
type complementRatio struct {
	q func(prec uint) bounds
}

func (c complementRatio) pow(k uint64, prec uint) bounds {
	wp := prec + 16 + uint(bits.Len64(k))
	return powPos(oneMinus(c.q(wp), wp), k, wp)
}

func (c complementRatio) oneMinusPow(k uint64, prec uint) bounds {
	// 1 − (1−q)^k ≈ kq loses about log2(1/(kq)) bits to cancellation; q is
	// never below 2⁻¹²⁰ here (checked by the mechanisms), so 200 spare bits
	// keep prec bits of relative precision.
	wp := prec + 200 + uint(bits.Len64(k))
	return oneMinus(c.pow(k, wp), wp)
}

// geometric samples G with P(G ≥ k) = c^k exactly. G is split into
// independent parts — for a geometric law the binary digits of G are
// independent — so that every table stays small: the high part H = G>>shift
// is geometric with ratio c^(2^shift), drawn from a table with an overflow
// outcome (memorylessness: on overflow add the table length and draw again),
// and the low shift bits come in chunks of at most 8 bits, each a truncated
// geometric law on [0, 2^w) with ratio c^(2^lo).
type geometric struct {
	top    *table
	topN   int
	shift  uint
	levels []geoLevel
	// lut2 is the top table's two-chunk lookup table and lev2 a one-level
	// law's level lookup table, both in cellOf order, for the discrete
	// Laplace sampler (addTwoChunk); nil for the other users of a geometric.
	lut2 *[1 << 16]uint32
	lev2 *[1 << 16]uint16
}

type geoLevel struct {
	t  *table
	lo uint
}

// newGeometric builds the sampler for ratio c; lambda ≈ −ln c is used only
// to size the tables.
func newGeometric(c continuation, lambda float64) (*geometric, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("privacy: internal geometric rate %v is not positive and finite", lambda)
	}
	g := &geometric{}
	if lambda < 1.0/32 {
		g.shift = uint(math.Ceil(math.Log2(1 / (32 * lambda))))
		if g.shift > 62 {
			return nil, fmt.Errorf("privacy: noise scale %v grid steps is too large: %w", 1/lambda, ErrInvalidParameter)
		}
	}
	topRate := lambda * math.Ldexp(1, int(g.shift))
	g.topN = int(math.Ceil(16*math.Ln2/topRate)) + 1
	if g.topN > maxTable {
		g.topN = maxTable
	}
	step := uint64(1) << g.shift
	var err error
	g.top, err = newTable(g.topN, func(j int, prec uint) bounds {
		return c.oneMinusPow(step*uint64(j+1), prec)
	})
	if err != nil {
		return nil, err
	}
	for hi := g.shift; hi > 0; {
		w := min(hi, 8)
		lo := hi - w
		unit := uint64(1) << lo // ratio of this level is c^unit
		size := uint64(1) << w
		t, err := newTable(int(size)-1, func(j int, prec uint) bounds {
			wp := prec + 8
			num := c.oneMinusPow(unit*uint64(j+1), wp)
			den := c.oneMinusPow(unit*size, wp)
			return quoPos(num, den, wp)
		})
		if err != nil {
			return nil, err
		}
		g.levels = append(g.levels, geoLevel{t: t, lo: lo})
		hi = lo
	}
	return g, nil
}

// sample draws G.
func (g *geometric) sample(br *bitReader) uint64 {
	return g.finish(br, g.top.sample(br))
}

// fastLimit returns the bound below which a lookup-table entry of the top
// table is the whole draw (a single-table law with the entry neither a
// straddle nor the overflow), for callers that inline the first lookup.
func (g *geometric) fastLimit() uint16 {
	if g.shift != 0 {
		return 0
	}
	return uint16(g.topN)
}

// sampleFrom finishes a draw whose first 16-bit chunk p was already read.
func (g *geometric) sampleFrom(br *bitReader, p uint16) uint64 {
	o := int(g.top.lut[p])
	if o&straddle != 0 {
		o = g.top.resolve(p, br)
	}
	return g.finish(br, o)
}

// finish completes a draw whose first table outcome was o.
func (g *geometric) finish(br *bitReader, o int) uint64 {
	x := g.high(br, o)
	for _, l := range g.levels {
		x |= uint64(l.t.sample(br)) << l.lo
	}
	return x
}

// high returns the high part H<<shift of a draw whose first top-table
// outcome was o, drawing again from the top table after each overflow.
func (g *geometric) high(br *bitReader, o int) uint64 {
	var h uint64
	for o >= g.topN { // overflow: memoryless, start over from topN
		h += uint64(g.topN)
		o = g.top.sample(br)
	}
	h += uint64(o)
	if h > (1<<62)>>g.shift { // beyond any representable noise; probability < 2^-(2^40)
		h = (1 << 62) >> g.shift
	}
	return h << g.shift
}

// addTwoChunk builds lut2 for a single-table or one-level law, and lev2
// for a one-level law; other laws keep neither.
func (g *geometric) addTwoChunk() error {
	if (g.shift != 0 && !g.oneLevel()) || g.topN > lut2MaxN {
		return nil
	}
	var err error
	if g.lut2, _, err = g.top.buildLUT2(); err != nil {
		return err
	}
	if g.oneLevel() {
		g.lev2 = g.levels[0].t.permutedLUT()
	}
	return nil
}

// sampleFrom2Chunk finishes a draw of a single-table law that the
// two-chunk table sent to the slow path, given the index i of its entry
// (the first 16-bit chunk) and the next 16 bits q.
func (g *geometric) sampleFrom2Chunk(br *bitReader, i uint16, q uint32) uint64 {
	return g.high(br, g.top.resolve2(cellOf(i), q, br))
}

// sampleFrom2Chunks finishes a draw of a one-level law that the two-chunk
// table of the top or the lookup table of the level sent to the slow path,
// given the top's chunks i and q and the level's chunk i2 (indices into
// lut2 and lev2).
func (g *geometric) sampleFrom2Chunks(br *bitReader, i uint16, q uint32, i2 uint16) uint64 {
	x := g.sampleFrom2Chunk(br, i, q)
	l := g.levels[0].t
	p2 := cellOf(i2)
	e := int(l.lut[p2])
	if e&straddle != 0 {
		e = l.resolve(p2, br)
	}
	return x | uint64(e)
}

// oneLevel reports whether g is a top table and a single low level of at
// most 8 bits (decay between 2⁻¹³ and 1/32 per step), the case
// sampleFrom2 serves.
func (g *geometric) oneLevel() bool { return len(g.levels) == 1 && g.levels[0].lo == 0 }

// fast2 returns the draw of a one-level law from its top chunk p and its
// level chunk p2 when both lookups decide (no straddle, no overflow), for
// callers that inline the common case; ok is false otherwise, and the
// caller finishes with sampleFrom2.
func (g *geometric) fast2(p, p2 uint16) (x uint64, ok bool) {
	e, e2 := g.top.lut[p], g.levels[0].t.lut[p2]
	return uint64(e)<<g.shift | uint64(e2), int(e) < g.topN && e2&straddle == 0
}

// sampleFrom2 finishes a draw of a one-level law whose top chunk p and
// level chunk p2 (16 bits each, for the two independent parts) were
// already read.
func (g *geometric) sampleFrom2(br *bitReader, p, p2 uint16) uint64 {
	o := int(g.top.lut[p])
	if o&straddle != 0 {
		o = g.top.resolve(p, br)
	}
	x := g.high(br, o)
	l := g.levels[0].t
	e := int(l.lut[p2])
	if e&straddle != 0 {
		e = l.resolve(p2, br)
	}
	return x | uint64(e)
}

// floatOf returns x as an exact big.Float.
func floatOf(x float64) *big.Float { return new(big.Float).SetPrec(64).SetFloat64(x) }

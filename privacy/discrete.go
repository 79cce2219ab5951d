package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// DiscreteLaplace is the discrete Laplace (two-sided geometric)
// distribution on the integers, P(Z = z) ∝ e^(−|z|/s) for scale s. Draws are
// exact: the sampler inverts a lazily read uniform against rigorous
// enclosures of the probabilities (see the package documentation), so no
// floating-point rounding shapes the distribution. It is safe for concurrent
// use; each draw reads only the *rand.Rand it is given.
type DiscreteLaplace struct {
	lambda   float64 // decay per unit, 1/s
	geo      *geometric
	oneLevel bool // geo is a one-level law with its two-chunk tables (sample2)
	twoChunk bool // geo is a single table with a two-chunk lookup table (sample0)
}

// NewDiscreteLaplace returns the sampler with scale s (in integer units).
// The decay 1/s is rounded down to a float64, so the realised scale —
// Scale() — is never below s and the privacy it gives never worse.
func NewDiscreteLaplace(scale float64) (*DiscreteLaplace, error) {
	if math.IsNaN(scale) || math.IsInf(scale, 0) || scale <= 0 {
		return nil, fmt.Errorf("privacy: discrete Laplace scale %v: must be finite and positive: %w", scale, ErrInvalidParameter)
	}
	lambda := quoDown(1, scale)
	return newDiscreteLaplace(lambda)
}

// newDiscreteLaplace returns the sampler with P(Z = z) ∝ e^(−λ|z|) for the
// exact float64 λ.
func newDiscreteLaplace(lambda float64) (*DiscreteLaplace, error) {
	return newLaplaceLaw(lambda, true)
}

// newLaplaceLaw is newDiscreteLaplace; without twoChunk it builds no
// two-chunk tables, for a caller that reads only the law's geometric (the
// discrete Gaussian's proposal), and its draws take sample1.
func newLaplaceLaw(lambda float64, twoChunk bool) (*DiscreteLaplace, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) || lambda < 0x1p-60 {
		return nil, fmt.Errorf("privacy: discrete Laplace decay %v per step: must be in [2^-60, ∞): %w", lambda, ErrInvalidParameter)
	}
	g, err := newGeometric(expRatio(lambda), lambda)
	if err != nil {
		return nil, err
	}
	if twoChunk {
		if err := g.addTwoChunk(); err != nil {
			return nil, err
		}
	}
	return &DiscreteLaplace{lambda: lambda, geo: g, oneLevel: g.lev2 != nil, twoChunk: g.shift == 0 && g.lut2 != nil}, nil
}

// Scale returns the realised scale 1/λ.
func (d *DiscreteLaplace) Scale() float64 { return 1 / d.lambda }

// Variance returns the exact variance 2e^(−λ)/(1−e^(−λ))² of the
// distribution, for tests and error bars.
func (d *DiscreteLaplace) Variance() float64 {
	a := math.Exp(-d.lambda)
	return 2 * a / ((1 - a) * (1 - a))
}

// Sample draws one value.
func (d *DiscreteLaplace) Sample(r *rand.Rand) int64 {
	br := bitReader{r: r}
	return d.sample(&br)
}

// Fill overwrites dst with independent draws; it reads r more economically
// than repeated calls to Sample.
func (d *DiscreteLaplace) Fill(r *rand.Rand, dst []int64) {
	br := bitReader{r: r}
	switch {
	case d.twoChunk:
		for i := range dst {
			dst[i] = d.sample0(&br)
		}
	case d.oneLevel:
		for i := range dst {
			dst[i] = d.sample2(&br)
		}
	default:
		for i := range dst {
			dst[i] = d.sample1(&br)
		}
	}
}

func (d *DiscreteLaplace) sample(br *bitReader) int64 {
	switch {
	case d.twoChunk:
		return d.sample0(br)
	case d.oneLevel:
		return d.sample2(br)
	}
	return d.sample1(br)
}

// sample0 is sample for a single-table law (scale below 32 steps). A trial
// reads 33 bits — two 16-bit chunks of the magnitude's uniform and the sign
// — and decides the magnitude from the two-chunk table without a branch on
// the entry, so that every trial takes the same steps whatever its outcome
// but for the slow draws (a fraction below 2⁻¹² at scale 16: the far tail,
// the overflow, and a sub-cell on a boundary), which resolve further bits.
func (d *DiscreteLaplace) sample0(br *bitReader) int64 {
	lut2 := d.geo.lut2
	for {
		if br.n < 33 {
			br.refill()
		}
		w := br.buf
		br.buf >>= 33
		br.n -= 33
		p, q, sign := uint16(w), uint32(uint16(w>>16)), w>>32&1
		y, slow := lut2Decide(lut2[p], q)
		if slow {
			y = d.geo.sampleFrom2Chunk(br, p, q)
		}
		if z, ok := withSign(y, sign); ok {
			return z
		}
	}
}

// withSign returns y with the sign bit applied, and false for −0, which
// would give zero twice its due mass: the caller draws again.
func withSign(y, sign uint64) (int64, bool) {
	if sign == 1 {
		return -int64(y), y != 0
	}
	return int64(y), true
}

// sample1 is sample for a law of more than two tables.
func (d *DiscreteLaplace) sample1(br *bitReader) int64 {
	lut, lim := d.geo.top.lut, d.geo.fastLimit()
	for {
		// One 16-bit chunk for the magnitude and one bit for the sign,
		// read together; the lookup-table hit is handled inline.
		if br.n < 17 {
			br.refill()
		}
		p := uint16(br.buf)
		sign := br.buf >> 16 & 1
		br.buf >>= 17
		br.n -= 17
		var y uint64
		if e := lut[p]; e < lim {
			y = uint64(e)
		} else {
			y = d.geo.sampleFrom(br, p)
		}
		if z, ok := withSign(y, sign); ok {
			return z
		}
	}
}

// sample2 is sample for a one-level law (scale between 32 and 8192 steps):
// the magnitude's high part comes from two 16-bit chunks through the top
// table's two-chunk table, as in sample0, and its low part from one 16-bit
// chunk; a trial reads them with the sign bit as one 49-bit piece. The low
// part's lookup branches only on its rare straddling chunks, which all low
// values meet about equally often (their probabilities differ by less than
// e^(−1/16)), so again the time of a trial says nothing about its outcome
// but for the slow draws.
func (d *DiscreteLaplace) sample2(br *bitReader) int64 {
	geo := d.geo
	lut2, lev, shift := geo.lut2, geo.lev2, geo.shift
	for {
		if br.n < 49 {
			br.refill()
		}
		w := br.buf
		br.buf >>= 49
		br.n -= 49
		p, q, p2, sign := uint16(w), uint32(uint16(w>>16)), uint16(w>>32), w>>48&1
		h, slow := lut2Decide(lut2[p], q)
		e2 := lev[p2]
		y := h<<shift | uint64(e2)
		if slow || e2&straddle != 0 {
			y = geo.sampleFrom2Chunks(br, p, q, p2)
		}
		if z, ok := withSign(y, sign); ok {
			return z
		}
	}
}

// DiscreteGaussian is the discrete Gaussian distribution on the integers,
// P(Z = z) ∝ e^(−z²/(2σ²)), sampled exactly by Canonne, Kamath and Steinke
// (2020, "The Discrete Gaussian for Differential Privacy", Algorithm 3):
// propose Y from a discrete Laplace with decay λ = 1/(⌊σ⌋+1) and accept it
// with probability e^(−(|Y|−σ²λ)²/(2σ²)). The acceptance coin is decided
// against rigorous enclosures of that probability, so the result is exact:
// for proposals below 4σ to 8σ a table built from float64 enclosures
// settles it from 15 random bits (all but about 2⁻¹⁵ of the time), and
// otherwise float64 enclosures, then arbitrary precision, decide it from
// further bits. A trial reads 32 bits of the stream (48 when the proposal's
// law needs a second table, σ between 31 and 8191), so at σ = 16 two
// trials share a 64-bit word.
//
// Timing: the acceptance step reads its entry from a cache line that all
// magnitudes use about equally often (accIndex) and branches on the
// magnitude only for the rare proposals past the table. What remains is
// the slower resolution of the rare 16-bit chunks that straddle a boundary
// of the proposal's table, which are more frequent far in the tail; the
// package documentation gives the measured correlation of draw time and
// |Z|. Safe for concurrent use.
type DiscreteGaussian struct {
	sigma  float64
	lambda float64
	s2l    float64 // σ²λ, rounded
	prop   *DiscreteLaplace
	expTab []float64 // expTab[m] = e^(−m/64), m ≤ 2048, for the cheap first bounds
	// acc[m] = lo | hi<<16 decides the acceptance coin of a proposal of
	// magnitude m from 15 random bits r: accept if r < lo, reject if
	// r > hi (see newAcceptTable).
	acc      []uint32
	accShift uint // log₂ of the table's number of cache lines
}

// NewDiscreteGaussian returns the sampler with parameter σ (in integer
// units), 2⁻²⁰ ≤ σ ≤ 2⁴⁰.
func NewDiscreteGaussian(sigma float64) (*DiscreteGaussian, error) {
	if err := CheckSigma(sigma); err != nil {
		return nil, err
	}
	if sigma < 0x1p-20 || sigma > 0x1p40 {
		return nil, fmt.Errorf("privacy: discrete Gaussian sigma %v: must be between 2^-20 and 2^40 grid steps: %w", sigma, ErrInvalidParameter)
	}
	lambda := 1 / (math.Floor(sigma) + 1)
	prop, err := newLaplaceLaw(lambda, false)
	if err != nil {
		return nil, err
	}
	g := &DiscreteGaussian{sigma: sigma, lambda: lambda, s2l: sigma * sigma * lambda, prop: prop, expTab: make([]float64, expTabLen+1)}
	for m := range g.expTab {
		g.expTab[m] = math.Exp(-float64(m) * expTabStep) // m/64 is exact
	}
	g.acc = g.newAcceptTable()
	return g, nil
}

// maxAcceptTable caps the acceptance table at 256 KiB (σ ≥ 8192 steps).
const maxAcceptTable = 1 << 16

// newAcceptTable returns the acceptance thresholds of the magnitudes below
// 16·L, for L the largest power of two ≤ σ/2 (at least 1; at most
// maxAcceptTable/16): a table of L cache lines that covers at least 4σ for
// σ ≤ 16384 steps — a proposal beyond it is accepted with probability
// below e^(−8) and, at σ ≥ 2, made with probability below e^(−2). Larger
// magnitudes are decided by acceptFrom.
//
// With [pLo, pHi] a rigorous enclosure of the acceptance probability p of
// m (acceptBounds), lo = ⌊2¹⁵·pLo⌋ and hi = ⌈2¹⁵·pHi⌉ − 1; for the first 15
// bits r of the coin's uniform U, r < lo means U < (r+1)/2¹⁵ ≤ pLo ≤ p, so
// the coin is heads whatever the later bits, and r > hi means
// U ≥ r/2¹⁵ ≥ pHi ≥ p, tails. Only for r in [lo, hi] — probability about
// 2⁻¹⁵ — do later bits matter.
func (d *DiscreteGaussian) newAcceptTable() []uint32 {
	lines := 1
	for float64(2*lines) <= min(d.sigma/2, maxAcceptTable/16) {
		lines *= 2
	}
	d.accShift = uint(bits.TrailingZeros(uint(lines)))
	t := make([]uint32, 16*lines)
	for m := range t {
		pLo, pHi := d.acceptBounds(float64(m))
		lo := uint32(math.Floor(pLo * 0x1p15))  // pLo < 1: at most 2¹⁵ − 1
		hi := uint32(math.Ceil(pHi*0x1p15)) - 1 // pHi ∈ (0, 1]: at most 2¹⁵ − 1
		t[d.accIndex(uint64(m))] = lo | hi<<16
	}
	return t
}

// accIndex returns where the thresholds of magnitude m < len(acc) are
// kept: m mod L selects one of the table's L 64-byte cache lines and m/L
// the slot in it, so that every line holds magnitudes from the whole range
// and is used about equally often — which line a draw touches, and so
// whether it is cached, then says almost nothing about the noise's size.
func (d *DiscreteGaussian) accIndex(m uint64) uint64 {
	return (m&(1<<d.accShift-1))<<4 | m>>d.accShift
}

// Sigma returns σ.
func (d *DiscreteGaussian) Sigma() float64 { return d.sigma }

// Sample draws one value.
func (d *DiscreteGaussian) Sample(r *rand.Rand) int64 {
	br := bitReader{r: r}
	return d.sample(&br)
}

// Fill overwrites dst with independent draws.
func (d *DiscreteGaussian) Fill(r *rand.Rand, dst []int64) {
	br := bitReader{r: r}
	for i := range dst {
		dst[i] = d.sample(&br)
	}
}

// sample draws one value. A trial reads the proposal's magnitude (one
// 16-bit chunk per table of the geometric law), its sign bit, and the first
// 15 bits of the acceptance coin's uniform, all from the buffered stream;
// the acceptance table decides the coin from those 15 bits but with
// probability about 2⁻¹⁵, when acceptFrom reads further bits. A proposal
// of −0 is rejected, as the discrete Laplace sampler does.
func (d *DiscreteGaussian) sample(br *bitReader) int64 {
	geo := d.prop.geo
	switch {
	case geo.shift == 0:
		lut, lim := geo.top.lut, geo.fastLimit()
		for {
			if br.n < 32 {
				br.refill()
			}
			w := br.buf
			br.buf >>= 32
			br.n -= 32
			var m uint64
			if e := lut[uint16(w)]; e < lim {
				m = uint64(e)
			} else {
				m = geo.sampleFrom(br, uint16(w))
			}
			if y, ok := d.decide(br, m, w>>16); ok {
				return y
			}
		}
	case geo.oneLevel():
		for {
			if br.n < 48 {
				br.refill()
			}
			w := br.buf
			br.buf >>= 48
			br.n -= 48
			m, ok := geo.fast2(uint16(w), uint16(w>>16))
			if !ok {
				m = geo.sampleFrom2(br, uint16(w), uint16(w>>16))
			}
			if y, ok := d.decide(br, m, w>>32); ok {
				return y
			}
		}
	default:
		for {
			m := geo.sample(br)
			if y, ok := d.decide(br, m, br.take(16)); ok {
				return y
			}
		}
	}
}

// decide finishes a trial whose proposal has magnitude m, given 16 more
// random bits b: the sign (bit 0) and the first 15 bits of the acceptance
// coin's uniform. It returns the value and true if the proposal is
// accepted.
func (d *DiscreteGaussian) decide(br *bitReader, m, b uint64) (int64, bool) {
	neg := b&1 == 1
	if neg && m == 0 {
		return 0, false // −0 would give zero twice its due mass
	}
	r := uint32(b>>1) & 0x7fff
	if m < uint64(len(d.acc)) {
		a := d.acc[d.accIndex(m)]
		if r < a&0xffff {
			return signed(m, neg), true
		}
		if r > a>>16 {
			return 0, false
		}
	}
	if d.acceptFrom(br, m, uint64(r)<<17|br.take(17)) {
		return signed(m, neg), true
	}
	return 0, false
}

// signed returns −m if neg, else m.
func signed(m uint64, neg bool) int64 {
	if neg {
		return -int64(m)
	}
	return int64(m)
}

// The cheap bounds on e^(−γ) come from a table of e^(−m/64): with
// γ = m/64 + r, r ≥ 0, e^(−γ) lies in [e^(−m/64)(1 − r), e^(−m/64)(1 − r + r²/2)].
const (
	expTabStep = 1.0 / 64
	expTabLen  = 2048 // γ up to 32
)

// acceptFrom flips the coin with probability e^(−γ), γ = (m−σ²λ)²/(2σ²),
// for a proposal of magnitude m, given the first 32 bits u of the coin's
// uniform. It decides against cheap table bounds when it can, then against
// math.Exp bounds, then exactly.
func (d *DiscreteGaussian) acceptFrom(br *bitReader, m, u uint64) bool {
	gLo, gHi := d.exponentBounds(float64(m))
	r := float64(u)
	// Cheap bounds. math.Exp in the table is accurate to < 1 ulp; the
	// factors 1 ± 2⁻⁴⁵ cover it and the few roundings here.
	var cLo, cHi float64
	if k := int(gLo * 64); k < expTabLen {
		e := d.expTab[k]
		rLo, rHi := gLo-float64(k)*expTabStep, gHi-float64(k)*expTabStep
		cLo = e * (1 - rHi) * (1 - 0x1p-45)
		cHi = e * (1 - rLo + rLo*rLo/2) * (1 + 0x1p-45)
	} else {
		cHi = d.expTab[expTabLen] * (1 + 0x1p-45)
	}
	if r+1 <= cLo*0x1p32 { // U < (r+1)/2³² ≤ cLo ≤ p
		return true
	}
	if r >= cHi*0x1p32 { // U ≥ r/2³² ≥ cHi ≥ p
		return false
	}
	pLo, pHi := expBounds(gLo, gHi)
	return bernoulliFrom(br, u, pLo, pHi, func(prec uint) bounds { return d.acceptProb(int64(m), prec) })
}

// exponentBounds encloses γ = (a−σ²λ)²/(2σ²) for a magnitude a ≥ 0 (an
// integer below 2⁵³).
func (d *DiscreteGaussian) exponentBounds(a float64) (gLo, gHi float64) {
	const u = 0x1p-53
	df := a - d.s2l
	if df < 0 {
		df = -df
	}
	// |d_f − d| ≤ ed covers the three roundings behind d_f (σ², σ²λ, the
	// subtraction), so γ lies in [gLo, gHi]; the factor 2⁻⁴⁰ covers the
	// roundings of the square and the quotient with room to spare.
	ed := 3 * u * (d.s2l + df)
	s2 := 2 * d.sigma * d.sigma
	lo := df - ed
	if lo < 0 {
		lo = 0
	}
	gLo = lo * lo / s2 * (1 - 0x1p-40)
	gHi = (df + ed) * (df + ed) / s2 * (1 + 0x1p-40)
	return gLo, gHi
}

// expBounds encloses e^(−γ) for γ ∈ [gLo, gHi] with math.Exp, widened to
// cover its error.
func expBounds(gLo, gHi float64) (pLo, pHi float64) {
	if w := gHi - gLo; w < 0x1p-20 {
		// One exponential: e^(−gHi) ≥ p(1 − w) and e^(−gLo) ≤ p(1 + 2w) for
		// p = e^(−gLo)·(1 ± 2⁻⁵²) (math.Exp is accurate to < 1 ulp).
		p := math.Exp(-gLo)
		pLo = p * (1 - w) * (1 - 0x1p-40)
		pHi = p * (1 + 0x1p-40)
	} else {
		pLo = math.Exp(-gHi) * (1 - 0x1p-40)
		pHi = math.Exp(-gLo) * (1 + 0x1p-40)
	}
	pHi += 0x1p-1000 // math.Exp's subnormal results are only accurate in absolute terms
	if pHi > 1 {
		pHi = 1
	}
	return pLo, pHi
}

// acceptBounds encloses the acceptance probability of magnitude a.
func (d *DiscreteGaussian) acceptBounds(a float64) (pLo, pHi float64) {
	return expBounds(d.exponentBounds(a))
}

// acceptProb encloses e^(−(|y|−σ²λ)²/(2σ²)) at about prec bits.
func (d *DiscreteGaussian) acceptProb(y int64, prec uint) bounds {
	const ep = 2048 // exact for every product below (≤ 53·3 + 64 significant bits, spread over ≤ 1200 binary orders)
	sig := floatOf(d.sigma)
	s2 := new(big.Float).SetPrec(ep).Mul(sig, sig)
	s2l := new(big.Float).SetPrec(ep).Mul(s2, floatOf(d.lambda))
	a := new(big.Float).SetPrec(ep).SetInt64(y)
	a.Abs(a)
	diff := new(big.Float).SetPrec(ep).Sub(a, s2l)
	num := new(big.Float).SetPrec(ep).Mul(diff, diff)
	den := new(big.Float).SetPrec(ep).Mul(s2, big.NewFloat(2))
	wp := prec + 32
	gLo := fdown(wp).Quo(num, den)
	gHi := fup(wp).Quo(num, den)
	return bounds{lo: expNeg(gHi, wp).lo, hi: expNeg(gLo, wp).hi}
}

// quoDown returns a float64 q ≤ a/b as close as possible.
func quoDown(a, b float64) float64 {
	q := a / b
	exact := new(big.Float).SetPrec(256).Quo(floatOf(a), floatOf(b))
	if floatOf(q).Cmp(exact) > 0 {
		q = math.Nextafter(q, 0)
	}
	return q
}

package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// DiscreteLaplace is the discrete Laplace (two-sided geometric)
// distribution on the integers, P(Z = z) ∝ e^(−|z|/s) for scale s. Draws are
// exact: the sampler inverts a lazily read uniform against rigorous
// enclosures of the probabilities (see the package documentation), so no
// floating-point rounding shapes the distribution. It is safe for concurrent
// use; each draw reads only the *rand.Rand it is given.
type DiscreteLaplace struct {
	lambda float64 // decay per unit, 1/s
	geo    *geometric
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
	if !(lambda > 0) || math.IsInf(lambda, 0) || lambda < 0x1p-60 {
		return nil, fmt.Errorf("privacy: discrete Laplace decay %v per step: must be in [2^-60, ∞): %w", lambda, ErrInvalidParameter)
	}
	g, err := newGeometric(expRatio(lambda), lambda)
	if err != nil {
		return nil, err
	}
	return &DiscreteLaplace{lambda: lambda, geo: g}, nil
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
	for i := range dst {
		dst[i] = d.sample(&br)
	}
}

func (d *DiscreteLaplace) sample(br *bitReader) int64 {
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
		if sign == 1 {
			if y == 0 {
				continue // −0 would give zero twice its due mass
			}
			return -int64(y)
		}
		return int64(y)
	}
}

// DiscreteGaussian is the discrete Gaussian distribution on the integers,
// P(Z = z) ∝ e^(−z²/(2σ²)), sampled exactly by Canonne, Kamath and Steinke
// (2020, "The Discrete Gaussian for Differential Privacy", Algorithm 3):
// propose Y from a discrete Laplace with decay λ = 1/(⌊σ⌋+1) and accept it
// with probability e^(−(|Y|−σ²λ)²/(2σ²)). The acceptance coin is decided
// against rigorous enclosures of that probability (a float64 enclosure first,
// arbitrary precision when the float one cannot decide), so the result is
// exact. Safe for concurrent use.
type DiscreteGaussian struct {
	sigma  float64
	lambda float64
	s2l    float64 // σ²λ, rounded
	prop   *DiscreteLaplace
	expTab []float64 // expTab[m] = e^(−m/64), m ≤ 2048, for the cheap first bounds
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
	prop, err := newDiscreteLaplace(lambda)
	if err != nil {
		return nil, err
	}
	g := &DiscreteGaussian{sigma: sigma, lambda: lambda, s2l: sigma * sigma * lambda, prop: prop, expTab: make([]float64, expTabLen+1)}
	for m := range g.expTab {
		g.expTab[m] = math.Exp(-float64(m) * expTabStep) // m/64 is exact
	}
	return g, nil
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

func (d *DiscreteGaussian) sample(br *bitReader) int64 {
	for {
		y := d.prop.sample(br)
		if d.accept(br, y) {
			return y
		}
	}
}

// The cheap bounds on e^(−γ) come from a table of e^(−m/64): with
// γ = m/64 + r, r ≥ 0, e^(−γ) lies in [e^(−m/64)(1 − r), e^(−m/64)(1 − r + r²/2)].
const (
	expTabStep = 1.0 / 64
	expTabLen  = 2048 // γ up to 32
)

// accept flips the coin with probability e^(−γ), γ = (|y|−σ²λ)²/(2σ²). It
// decides from 32 random bits against cheap table bounds when it can
// (nearly always), then against math.Exp bounds, then exactly.
func (d *DiscreteGaussian) accept(br *bitReader, y int64) bool {
	const u = 0x1p-53
	a := float64(y)
	if a < 0 {
		a = -a
	}
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
	gLo := lo * lo / s2 * (1 - 0x1p-40)
	gHi := (df + ed) * (df + ed) / s2 * (1 + 0x1p-40)

	r := float64(br.take32())
	// Cheap bounds. math.Exp in the table is accurate to < 1 ulp; the
	// factors 1 ± 2⁻⁴⁵ cover it and the few roundings here.
	var cLo, cHi float64
	if m := int(gLo * 64); m < expTabLen {
		e := d.expTab[m]
		rLo, rHi := gLo-float64(m)*expTabStep, gHi-float64(m)*expTabStep
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
	var pLo, pHi float64
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
	return bernoulliFrom(br, uint64(r), pLo, pHi, func(prec uint) bounds { return d.acceptProb(y, prec) })
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

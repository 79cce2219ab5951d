package privacy

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
)

// DefaultQuantileUnit is the privacy unit a Quantile reports when none is
// configured: one of the integers it is given.
const DefaultQuantileUnit = "value"

// MaxQuantileCandidates is the largest candidate range a Quantile accepts:
// a draw takes up to this many proposals in expectation.
const MaxQuantileCandidates = 1 << 24

// QuantileConfig describes a private quantile of integers: the exponential
// mechanism over the candidates 1, …, Max. The zero value of Unit means
// DefaultQuantileUnit.
type QuantileConfig struct {
	// Epsilon is the ε of the release; required.
	Epsilon float64 `json:"epsilon"`
	// Quantile is q ∈ (0, 1): the release c aims at #{x < c} ≈ q·n.
	Quantile float64 `json:"quantile"`
	// Max is the largest candidate, a public bound (≥ 1).
	Max int `json:"max"`
	// Unit names the privacy unit, one integer of the data; zero means
	// DefaultQuantileUnit.
	Unit string `json:"unit,omitempty"`
}

// Validate reports every problem with c.
func (c QuantileConfig) Validate() error {
	errs := []error{CheckEpsilon(c.Epsilon)}
	if !(c.Quantile > 0 && c.Quantile < 1) {
		errs = append(errs, fmt.Errorf("privacy: quantile %v: must be in (0, 1): %w", c.Quantile, ErrInvalidParameter))
	}
	if c.Max < 1 || c.Max > MaxQuantileCandidates {
		errs = append(errs, fmt.Errorf("privacy: quantile candidates 1..%d: the largest must be in [1, %d]: %w", c.Max, MaxQuantileCandidates, ErrInvalidParameter))
	}
	return errors.Join(errs...)
}

// Quantile is the private quantile of bounded integers of Smith ("Privacy-
// preserving statistical estimation with optimal convergence rates", STOC
// 2011): the exponential mechanism (McSherry and Talwar, FOCS 2007) over the
// integer candidates c = 1, …, Max with utility
//
//	u(c) = −|#{x < c} − q·n|,
//
// releasing c with probability proportional to e^(ε·u(c)/2). Adding or
// removing one value changes #{x < c} by 0 or 1 and q·n by q, so u(c)
// moves by at most max(q, 1 − q) ≤ 1, and replacing one value moves it by
// at most 1: the release is ε-DP for one value, under either neighbouring
// relation. Values below 1 or above Max are allowed (they count as shorter
// or longer than every candidate), so nothing about the data is checked or
// revealed by an error.
//
// Accuracy: with probability at least 1 − β the release has
// |#{x < c} − q·n| ≤ min_c' |#{x < c'} − q·n| + (2/ε)·(ln Max + ln(1/β))
// (the exponential mechanism's utility bound).
//
// Exact sampling. A draw proposes a candidate uniformly (rand.IntN, exact)
// and accepts it with probability e^(−ε·(d(c) − d*)/2), where d(c) =
// |#{x < c} − q·n| and d* its minimum over the candidates: rejection
// sampling whose accepted candidate has exactly the mechanism's law. The
// exponent is formed exactly in math/big (q·n is the exact product of the
// float64 q and the integer n), and the acceptance coin compares lazily
// read uniform bits with enclosures of e^(−x) (the package's exact
// Bernoulli), so no floating-point rounding reaches the law, and nothing is
// ever exponentiated upwards: no overflow for any n. A draw takes
// Max/Σ_c e^(−ε·(d(c) − d*)/2) ≤ Max proposals in expectation, each a few
// tens of nanoseconds. Safe for concurrent use.
type Quantile struct {
	cfg QuantileConfig
}

// NewQuantile returns the mechanism c describes.
func NewQuantile(c QuantileConfig) (*Quantile, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("privacy: quantile: %w", err)
	}
	if c.Unit == "" {
		c.Unit = DefaultQuantileUnit
	}
	return &Quantile{cfg: c}, nil
}

// Config returns the configuration with defaults filled in.
func (m *Quantile) Config() QuantileConfig { return m.cfg }

// Event returns the Event of one release: the exponential mechanism at ε
// with a utility of sensitivity 1 per unit.
func (m *Quantile) Event() Event {
	return Event{Mechanism: MechanismExponential, Epsilon: m.cfg.Epsilon, Sensitivity: 1, Unit: m.cfg.Unit, Count: 1}
}

// Release returns the private quantile of xs, a candidate in [1, Max], and
// the Event of this release. It reads only r.
func (m *Quantile) Release(r *rand.Rand, xs []int) (int, Event, error) {
	s := newQuantileSampler(xs, m.cfg.Quantile, m.cfg.Max, m.cfg.Epsilon/2)
	return s.sample(r), m.Event(), nil
}

// quantileSampler draws c ∈ [1, len(below)] with probability ∝
// e^(−h·(|below[c−1] − t| − d*)).
type quantileSampler struct {
	below []int      // below[c−1] = #{x < c}, non-decreasing
	t     *big.Float // q·n, exact
	tf    float64    // q·n rounded
	dmin  *big.Float // d* = min_c |below[c−1] − t|, exact
	dminf float64    // d* computed in float64 from the same count
	h     float64    // ε/2 (halving a float64 is exact)
	err   float64    // bound on the float64 error of d(c) − d*
}

// quantilePrec is the precision at which the exponent is formed exactly:
// q·n has at most 53 + 64 significant bits, the differences with the
// integer counts at most about 53 + 2·64 + 1, and the product with the
// 53-bit h at most about 300.
const quantilePrec = 512

func newQuantileSampler(xs []int, q float64, max int, h float64) *quantileSampler {
	hist := make([]int, max+1)
	for _, x := range xs {
		switch {
		case x < 1:
			hist[0]++ // shorter than every candidate
		case x < max:
			hist[x]++ // below the candidates c > x
		}
		// x ≥ max is below no candidate.
	}
	s := &quantileSampler{below: make([]int, max), h: h}
	k := hist[0]
	for c := 1; c <= max; c++ {
		s.below[c-1] = k
		k += hist[c]
	}
	n := len(xs)
	s.t = mulExact(q, uint64(n))
	s.tf = q * float64(n)
	// The counts are non-decreasing: the smallest distance to t is at the
	// first count ≥ t or the one before it.
	i := sort.Search(max, func(i int) bool { return new(big.Float).SetInt64(int64(s.below[i])).Cmp(s.t) >= 0 })
	best := -1
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= max {
			continue
		}
		if best < 0 || s.dist(s.below[j]).Cmp(s.dist(s.below[best])) < 0 {
			best = j
		}
	}
	s.dmin = s.dist(s.below[best])
	s.dminf = math.Abs(float64(s.below[best]) - s.tf)
	// |tf − t| ≤ 2⁻⁵³·t, each |count − tf| rounds by ≤ 2⁻⁵³·n, and the
	// difference of two distances (each ≤ n) rounds by ≤ 2⁻⁵³·n: the float64
	// d(c) − d* is within 5·2⁻⁵³·n of the exact one; 2⁻⁵⁰·n covers it.
	s.err = 0x1p-50 * float64(n)
	return s
}

// dist returns |k − t| exactly.
func (s *quantileSampler) dist(k int) *big.Float {
	d := new(big.Float).SetPrec(quantilePrec).SetInt64(int64(k))
	d.Sub(d, s.t)
	return d.Abs(d)
}

// exponent returns x(c) = h·(|below[c−1] − t| − d*) ≥ 0 exactly.
func (s *quantileSampler) exponent(c int) *big.Float {
	x := s.dist(s.below[c-1])
	x.Sub(x, s.dmin)
	return x.Mul(x, new(big.Float).SetPrec(quantilePrec).SetFloat64(s.h))
}

// acceptBounds encloses e^(−x(c)) with float64 arithmetic.
func (s *quantileSampler) acceptBounds(c int) (pLo, pHi float64) {
	df := math.Abs(float64(s.below[c-1])-s.tf) - s.dminf
	gLo := s.h * math.Max(0, df-s.err) * (1 - 0x1p-50)
	gHi := s.h * (df + s.err) * (1 + 0x1p-50)
	return expBounds(gLo, gHi)
}

// sample draws one candidate by rejection from the uniform proposal.
func (s *quantileSampler) sample(r *rand.Rand) int {
	br := bitReader{r: r}
	for {
		c := 1 + r.IntN(len(s.below))
		pLo, pHi := s.acceptBounds(c)
		if bernoulli(&br, pLo, pHi, func(prec uint) bounds { return expNeg(s.exponent(c), prec) }) {
			return c
		}
	}
}

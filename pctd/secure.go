package pctd

import (
	"context"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// Secure aggregation (package fed/secagg) of the SSP variant's M_t.
//
// The update is a vector of sums: V·K values, word-major, on the
// fixed-point grid of step 2^−SecureFracBits in the ring Z_(2^32) of
// fed.SecAggBits. Both halves state it (SumSpec) from the configuration
// alone, so the coordinator and every party agree without seeing data.
//
// Range. M_t(w, k) = Σ_u N_uw·r_uk with r_u a distribution over topics,
// so 0 ≤ M_t(w, k) ≤ Σ_u N_uw = n_w, the party's count of w after its
// documents are clipped (each document contributes a_w ≤ ⌊√L⌋ of it, as
// Σ_w a_w² ≤ L). A party's count is its own; the bound every party shares
// comes from the ring: with threshold t the federation has at most 2t − 1
// parties (t > n/2), so each party's value may take B = ⌊(2^31 − 1)/(2t −
// 1)⌋ grid steps and the sum of all of them cannot wrap (secagg checks
// n·B < 2^31 again at every round). B less a headroom of 12 standard
// deviations of the party's noise is the data bound: the party clamps each
// entry of its exact M_t to it before the noise is added. Clamping is
// post-processing of nothing private and moves no two neighbouring M_t
// apart (a per-entry projection is 1-Lipschitz), so the sensitivity √L
// and the charge stay as they are. With 3 parties (t = 2 or 3) the bound
// is about 2.8 million occurrences of one word per party, with 10 (t = 6)
// about 760,000: the clamp acts only for a party holding more than that
// many occurrences of a word. The noise passes the headroom with
// probability below 2·e^−72 per value.
//
// Noise. With Config.SecureThreshold = t and noise, the noise is
// distributed: the party sends its exact (clamped) M_t and the engine adds
// a discrete Gaussian of parameter σ_g/√t before masking, σ_g =
// NoiseStd·2^f in grid steps, so that the sum of at least t survivors
// carries variance at least σ_g² — the variance one party's central noise
// has — instead of the n·σ² of n parties each adding its full noise. Each
// party is charged for the worst case it accepted, exactly t survivors:
// the discrete Gaussian release of total σ_g and sensitivity √L·2^f per
// document, accounted by RDP (Config.Events), and Config.Epsilon
// calibrates σ for that accounting. In the clear (Learn) such a party
// would release its M_t with a t-th of the noise, so Learn refuses.
//
// Without SecureThreshold, a party under secure aggregation adds its own
// full continuous Gaussian noise as in the plain run and is charged the
// same; values are clamped to ±B (post-processing), and the bound assumes
// up to fed.MaxSecAggParties parties.
//
// Bitwise equality. Every SSP M_t, in the clear or not, is rounded onto
// the grid (onGrid) before it leaves a party: its float32 first, then the
// nearest multiple of 2^−f, which float32 holds exactly. Sums of such
// values are exact in float64 and in the ring alike, so without noise a
// run under secure aggregation gives the plain run's model bit for bit.

// SecureFracBits is f, the fraction bits of the fixed-point grid of M_t
// (step 2^−8 ≈ 0.004 of a word occurrence).
const SecureFracBits = 8

// secureHeadroom is the headroom for a party's noise, in its standard
// deviations.
const secureHeadroom = 12

// gridScale is 2^f.
const gridScale = 1 << SecureFracBits

// distributed reports whether the noise is distributed: the SSP variant
// with noise and a secure aggregation threshold.
func (c Config) distributed() bool {
	return c.Variant == VariantSSP && c.SecureThreshold > 0 && !c.NoNoise
}

// secureMaxParties is the most parties the grid bound allows for: 2t − 1
// with a threshold t, the engine's limit without.
func (c Config) secureMaxParties() int {
	if c.SecureThreshold > 0 {
		return 2*c.SecureThreshold - 1
	}
	return fed.MaxSecAggParties
}

// secureBound is B, the largest magnitude of a party's grid value.
func (c Config) secureBound() int64 {
	return (1<<(fed.SecAggBits-1) - 1) / int64(c.secureMaxParties())
}

// maxPartyNoiseStd is the largest partyNoiseStd of any round.
func (c Config) maxPartyNoiseStd() float64 {
	var s float64
	for t := 1; t <= c.Rounds; t++ {
		s = max(s, c.at(t).partyNoiseStd())
	}
	return s
}

// partyNoiseStd is the standard deviation of the noise one party adds,
// in real units: NoiseStd/√t when distributed, NoiseStd otherwise. With a
// schedule call it on c.at(round).
func (c Config) partyNoiseStd() float64 {
	if c.NoNoise {
		return 0
	}
	if c.distributed() {
		return c.noiseStd() / math.Sqrt(float64(c.SecureThreshold))
	}
	return c.noiseStd()
}

// secureDataBound is the largest grid value of an exact M_t entry a party
// contributes when the noise is distributed: B less the noise headroom of
// the round with the most noise, so the bound is the same every round.
func (c Config) secureDataBound() int64 {
	if !c.distributed() {
		return c.secureBound()
	}
	return c.secureBound() - int64(math.Ceil(secureHeadroom*c.maxPartyNoiseStd()*gridScale))
}

// sumSpec is round t's SSP update as a vector of sums over v words (the
// distributed noise follows the schedule); c must have its defaults.
func (c Config) sumSpec(v, t int) fed.SumSpec {
	s := fed.SumSpec{Len: v * c.Topics, FracBits: SecureFracBits, Clip: float64(c.secureBound()) / gridScale, Unit: UnitDocument}
	if c.distributed() {
		s.Sigma = c.at(t).noiseStd() * gridScale
		s.Sensitivity = c.sensitivity() * gridScale
	}
	return s
}

// validateSecure reports problems with c's secure aggregation setting:
// only the SSP variant opts in, the threshold must fit the engine, and
// with noise each party's share must be at least one grid step and leave
// room for data under the bound.
func (c Config) validateSecure() []error {
	if c.SecureThreshold == 0 {
		return nil
	}
	if c.SecureThreshold < 0 || c.SecureThreshold > fed.MaxSecAggParties {
		return []error{fmt.Errorf("pctd: secure_threshold = %d, want 1..%d", c.SecureThreshold, fed.MaxSecAggParties)}
	}
	if c.Variant == VariantUnit {
		return []error{fmt.Errorf("pctd: secure_threshold: the unit variant cannot run under secure aggregation (its noise is inside the E-step, not a sum); use variant %q", VariantSSP)}
	}
	r := c.withDefaults()
	if !r.distributed() {
		return nil
	}
	if !(r.Sigma > 0) || math.IsInf(r.Sigma, 0) {
		return nil // reported by roundEvent
	}
	for t := 1; t <= r.Rounds; t++ {
		if _, err := secagg.PartySigma(r.at(t).noiseStd()*gridScale, r.SecureThreshold); err != nil {
			return []error{fmt.Errorf("pctd: secure_threshold: round %d: %w", t, err)}
		}
	}
	if r.secureDataBound() < gridScale {
		return []error{fmt.Errorf("pctd: secure_threshold = %d: the noise (standard deviation %.4g per party) leaves no room for M_t under the bound %.6g of a 32-bit sum: use less noise or a higher threshold",
			r.SecureThreshold, r.maxPartyNoiseStd(), float64(r.secureBound())/gridScale)}
	}
	return nil
}

// distributedEvent is one round's charge with distributed noise: the
// discrete Gaussian release of the sum of exactly t survivors, total
// standard deviation NoiseStd, on the grid — the event the engine charges
// (fed.SumSpec.Sigma and Sensitivity). With a schedule call it on
// c.at(round).
func (c Config) distributedEvent() privacy.Event {
	return privacy.Event{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: c.noiseStd() * gridScale,
		Sensitivity: c.sensitivity() * gridScale, Unit: UnitDocument, Count: 1}
}

// calibrateDistributed returns the SSP noise multiplier for which Rounds
// discrete Gaussian releases (accounted by RDP, as the ledger accounts
// them) cost Epsilon at Delta: the smallest found by bisection, on the
// side that fits.
func (c Config) calibrateDistributed() float64 {
	cost := func(z float64) float64 {
		s := c.sensitivity() * gridScale
		evs := []privacy.Event{{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: z * s, Sensitivity: s, Unit: UnitDocument, Count: c.Rounds}}
		if c.scheduled() {
			d := c
			d.Sigma = z
			var err error
			if evs, err = d.scheduledEvents(); err != nil {
				return math.Inf(1)
			}
		}
		r, err := accountant.Compose(evs, c.Delta)
		if err != nil {
			return math.Inf(1)
		}
		return r.Epsilon
	}
	mu, err := accountant.GaussianMu(c.Epsilon, c.Delta)
	if err != nil || !(mu > 0) {
		return math.NaN()
	}
	lo := math.Sqrt(float64(c.Rounds)) / mu // the continuous calibration: RDP never beats it
	hi := lo
	for cost(hi) > c.Epsilon {
		lo, hi = hi, 2*hi
		if hi > 1e9 {
			return math.NaN()
		}
	}
	for range 60 {
		mid := (lo + hi) / 2
		if cost(mid) > c.Epsilon {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// onGrid rounds every value of m, in place, to the nearest multiple of
// 2^−f of its float32: a value float32 holds exactly, and whose sums are
// exact in float64.
func onGrid(m []float64) {
	for i, x := range m {
		m[i] = math.Round(float64(float32(x))*gridScale) / gridScale
	}
}

// toGrid returns M_t on the grid: clamped to [0, data bound] when the
// noise is distributed (m is then exact and non-negative), to ±B
// otherwise (m carries the party's own noise).
func (c Config) toGrid(m []float64) []int64 {
	hi := c.secureDataBound()
	lo := -hi
	if c.distributed() {
		lo = 0
	}
	out := make([]int64, len(m))
	for i, x := range m {
		g := math.Round(float64(float32(x)) * gridScale)
		out[i] = int64(min(max(g, float64(lo)), float64(hi)))
	}
	return out
}

// checkClear refuses a release in the clear of an M_t whose noise is
// meant to be distributed.
func (c Config) checkClear(round int) error {
	if c.distributed() {
		r := c.at(round)
		return fmt.Errorf("pctd: round %d: secure_threshold = %d: this party adds only its share of distributed noise (standard deviation %.4g of %.4g), which must not leave it without secure aggregation; run with secure aggregation of threshold %d, or without secure_threshold",
			round, c.SecureThreshold, r.partyNoiseStd(), r.noiseStd(), c.SecureThreshold)
	}
	return nil
}

// SumSpec implements fed.SumLearner: the spec of the party's next round,
// the one after the last it learned.
func (l *Learner) SumSpec() fed.SumSpec { return l.cfg.sumSpec(len(l.vocab), l.round+1) }

// SumSpecFor implements fed.RoundSumLearner: the spec of round, whose
// distributed noise (under a schedule, round's own) the engine adds to
// the vector LearnSum returns for it, whichever rounds the party missed.
func (l *Learner) SumSpecFor(round int) fed.SumSpec { return l.cfg.sumSpec(len(l.vocab), round) }

// LearnSum implements fed.SumLearner: the round's M_t on the grid. With
// distributed noise it is the exact M_t (the engine adds the party's
// share and charges it), so the events returned are none; otherwise it
// carries the party's own noise, charged as in Learn.
func (l *Learner) LearnSum(round int, broadcast []byte) ([]int64, []privacy.Event, error) {
	if l.cfg.Variant != VariantSSP {
		return nil, nil, fmt.Errorf("pctd: round %d: the %s variant cannot run under secure aggregation: its noise is inside the E-step", round, l.cfg.Variant)
	}
	phi, err := decodeModel(broadcast, l.cfg.Topics, len(l.vocab))
	if err != nil {
		return nil, nil, fmt.Errorf("pctd: round %d: broadcast: %w", round, err)
	}
	spent, err := l.Plan(round)
	if err != nil {
		return nil, nil, err
	}
	nz := l.noiseFor(round)
	if l.cfg.distributed() {
		nz = noise{variant: l.cfg.Variant}
	}
	m, err := l.em.iterate(context.Background(), phi, nz, l.cfg.Workers)
	if err != nil {
		return nil, nil, fmt.Errorf("pctd: round %d: %w", round, err)
	}
	l.last, l.round = phi, round
	l.spent = append(l.spent, spent...)
	if l.cfg.distributed() {
		return l.cfg.toGrid(m), nil, nil
	}
	return l.cfg.toGrid(m), spent, nil
}

// SumSpec implements fed.SumAggregator: the spec of the next round (of the
// last once the run is done); the engine reads the grid and the bound from
// it, which every round shares.
func (a *Aggregator) SumSpec() fed.SumSpec {
	return a.cfg.sumSpec(a.v, min(a.rounds+1, a.cfg.Rounds))
}

// AggregateSum implements fed.SumAggregator: the M-step of Aggregate on
// the sum of the included parties' M_t, each of which is recorded as
// having spent one round's events.
func (a *Aggregator) AggregateSum(round int, sum []int64, included []int) (fed.Step, error) {
	if len(sum) != a.v*a.k {
		return fed.Step{}, fmt.Errorf("pctd: round %d: sum of %d values, want V × K = %d", round, len(sum), a.v*a.k)
	}
	ev, err := a.cfg.roundEvent(round)
	if err != nil {
		return fed.Step{}, err
	}
	for _, p := range included {
		if p < 0 || p >= len(a.parties) {
			return fed.Step{}, fmt.Errorf("pctd: round %d: sum includes unknown party %d", round, p)
		}
		a.spent[p] = append(a.spent[p], ev...)
	}
	m := make([]float64, len(sum))
	for i, x := range sum {
		m[i] = float64(x) / gridScale
	}
	if len(included) > 0 {
		a.update(round, m, len(included))
	}
	a.rounds = round
	return fed.Step{Payload: encodeModel(a.phi, a.k, a.v), Done: round >= a.cfg.Rounds}, nil
}

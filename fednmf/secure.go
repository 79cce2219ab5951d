package fednmf

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/privacy"
)

// Secure aggregation (package fed/secagg) of the clients' deltas.
//
// FedNMF's aggregate is a sum: the FedAvg pseudo-gradient is
// Σ_i N_i·Δ_i / Σ_i N_i, DP-FedAvg's (Σ_i clip(Δ_i) + noise) / (C·n). Under
// secure aggregation every party sends a vector of integers on a
// fixed-point grid in the ring Z_(2^32) of fed.SecAggBits, the coordinator
// learns only the sum over the surviving parties, and the server optimizer
// (FedAvg, FedAdagrad, FedYogi, FedAdam) runs on the mean it gives exactly
// as in the clear. Both halves state the vector (SumSpec) from the
// configuration and the number of parties n, so they agree without data.
//
// Sampling. The coordinator samples the clients as in the clear and sends
// the others a skip message; the engine runs secure aggregation over all
// n parties, so a party not sampled takes part with a zero vector (and,
// with DP, its share of the noise). The sum is then the sum over the
// sampled survivors. The coordinator chose the sample, so it knows whose
// updates the sum holds: without noise, secure aggregation hides a sampled
// party's update only among the other sampled parties that survive, and a
// run that samples one party a round would show it whole, so such a run
// is refused (use client_fraction with ⌊C·n⌋ ≥ 2, ideally 1). Under DP the
// distributed noise protects every party whatever the sample. Every party
// uploads a full vector every round, sampled or not.
//
// Without DP (FedAvg weights). A party sends X = N_i·round(Δ·2^32) for
// every entry of Δ (W's change, then θ's) and X = N_i as one more entry:
// the sum gives the FedAvg numerator on the grid of step 2^−32
// (SecureFracBits) and its denominator Σ N_i over the sampled survivors.
// With n parties each value may take B = ⌊(2^31 − 1)/n⌋ in magnitude, so
// that no sum can wrap (secagg checks n·B < 2^31 again every round), which
// would leave too few bits for both N_i and Δ; so each X travels as two
// values, X = hi·2^s + lo with s = ⌊log₂(B + 1)⌋, lo = X mod 2^s in
// [0, 2^s) and hi = ⌊X / 2^s⌋, both within ±B (SumSpec: integers,
// FracBits 0, Clip B). The coordinator recovers Σ X = (Σ hi)·2^s + Σ lo
// exactly in int64. The range of X is |X| ≤ B·2^s: N_i·|Δ| may reach
// 2^26.4 (8.9e7) with 3 parties, 2^22.7 (6.7e6) with 10, 2^18.4 (3.4e5)
// with 50 and 2^10 (1,048) with 1,000; a party whose N_i·Δ passes it refuses to mask
// (an error naming the entry), so nothing wraps. The vector has 2(V·K + P
// + 1) values of 4 bytes, the bytes of the plain update's float64s.
//
// Bitwise equality. The plain aggregator rounds every Δ to the same grid
// and sums N_i·round(Δ·2^32) in int64 too (aggregator.go), and both turn
// the sums into the mean by one function (gridMean), so without noise a
// run under secure aggregation gives the plain run's model bit for bit.
// The rounding moves each Δ by at most 2^−33 ≈ 1.2e-10 per round.
//
// With DP-FedAvg (distributed noise). With secure_threshold = t the
// coordinator adds no noise: each party sends its clipped Δ and the engine
// adds a discrete Gaussian of parameter σ/√t before masking, σ = z·S in
// grid units, so that the sum of at least t survivors carries noise of
// standard deviation at least z·S — what the coordinator's noise was.
// Values are single: the bound assumes the most parties a threshold t
// allows, 2t − 1, B = ⌊(2^31 − 1)/(2t − 1)⌋, and the grid's fraction bits
// f are the most (up to 52) for which S·2^f plus 12 standard deviations
// of the party's noise, 12·z·S·2^f/√t, fit under B (SumSpec: Clip =
// B·2^−f). A party clips Δ to S·(1 − 10^−9) and rounds each entry towards
// zero, so the grid vector's L2 norm stays within S·2^f, the sensitivity
// of the sum to one client. The noise passes the headroom with probability
// below 10^−32 per value; then secagg refuses the vector (ErrOverflow)
// rather than wrap. With S = 1 and z = 1, f = 26 for t = 2 and 24 for
// t = 6.
//
// Accounting. Each party is charged for the worst case it accepted,
// exactly t survivors: per round a discrete Gaussian release of σ = z·S·2^f
// and sensitivity S·2^f (fed.SumSpec.Sigma and Sensitivity; Config.Events
// and Plan state the same event), composed by RDP, at the document level
// (a client's guarantee holds for each of its documents). There is no
// amplification by sampling: the coordinator, against whom the noise
// protects, chose the sample. In the clear such a party would release its
// Δ without noise, so Learn refuses.

// SecureFracBits is the fraction bits of the grid of Δ without DP: round
// Δ·2^32.
const SecureFracBits = 32

// secureHeadroom is the room left under the bound for a party's share of
// distributed noise, in its standard deviations.
const secureHeadroom = 12

// dpClipShrink shrinks the clip before a DP vector is rounded towards zero,
// so that floating-point rounding in the clip cannot lift its norm past S.
const dpClipShrink = 1 - 1e-9

// errSumRange marks a party's value that does not fit the grid's bound.
var errSumRange = errors.New("value outside the secure aggregation range")

// ringBound returns B = ⌊(2^31 − 1)/m⌋, the largest magnitude of one
// party's value when the sum of m parties must not wrap the ring.
func ringBound(m int) int64 { return (1<<(fed.SecAggBits-1) - 1) / int64(max(m, 1)) }

// distributed reports whether the noise is distributed: DP-FedAvg under
// secure aggregation of threshold SecureThreshold.
func (c Config) distributed() bool { return c.DP() && c.SecureThreshold > 0 }

// dpGrid returns the fraction bits f and the bound B of DP-FedAvg's grid
// under secure aggregation of threshold t = SecureThreshold > 0.
func (c Config) dpGrid() (frac int, bound int64, err error) {
	c = c.WithDefaults()
	t := c.SecureThreshold
	bound = ringBound(2*t - 1)
	share := c.NoiseMultiplier / math.Sqrt(float64(t))
	for f := 52; f >= 0; f-- {
		s := math.Ldexp(c.Clip, f)
		if s+math.Ceil(secureHeadroom*share*s) <= float64(bound) {
			return f, bound, nil
		}
	}
	return 0, bound, fmt.Errorf("fednmf: secure_threshold = %d: clip S = %v with noise multiplier %v does not fit a 32-bit sum of %d parties (at most %d grid steps each, 12 standard deviations of noise included): lower the clip",
		t, c.Clip, c.NoiseMultiplier, 2*t-1, bound)
}

// distributedEvent is one round's charge with distributed noise: the
// discrete Gaussian release of the sum of exactly t survivors, σ = z·S and
// sensitivity S in grid steps (fed.SumSpec.Sigma and Sensitivity).
func (c Config) distributedEvent(unit string) privacy.Event {
	c = c.WithDefaults()
	f, _, _ := c.dpGrid()
	s := math.Ldexp(c.Clip, f)
	return privacy.Event{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: c.NoiseMultiplier * s, Sensitivity: s, Unit: unit, Count: 1}
}

// validateSecure reports problems with the secure aggregation setting: the
// threshold must fit the engine and, with DP, the grid must hold the clip
// and the noise, with each party's share at least one grid step.
func (c Config) validateSecure() []error {
	if c.SecureThreshold == 0 {
		return nil
	}
	if c.SecureThreshold < 0 || c.SecureThreshold > fed.MaxSecAggParties {
		return []error{fmt.Errorf("fednmf: secure_threshold = %d, want 1 to %d", c.SecureThreshold, fed.MaxSecAggParties)}
	}
	if !c.DP() {
		return nil
	}
	f, _, err := c.dpGrid()
	if err != nil {
		return []error{err}
	}
	ev := c.distributedEvent(UnitDocument)
	if _, err := secagg.PartySigma(ev.Sigma, c.SecureThreshold); err != nil {
		return []error{fmt.Errorf("fednmf: secure_threshold = %d with %d fraction bits: %w", c.SecureThreshold, f, err)}
	}
	return nil
}

// errClearDistributed is why a party with distributed noise refuses to
// send its update in the clear.
func errClearDistributed(c Config) error {
	return fmt.Errorf("secure_threshold = %d: this party adds only its share of distributed noise, which must not leave it without secure aggregation; run with secure aggregation of threshold %d, or without secure_threshold", c.SecureThreshold, c.SecureThreshold)
}

// checkSecureSample refuses secure aggregation without noise when a round
// samples a single client of n: the sum would be that client's update.
func (c Config) checkSecureSample(n int) error {
	if c.DP() || c.SampleSize(n) >= 2 {
		return nil
	}
	return fmt.Errorf("client_fraction = %v samples one of the %d parties a round: under secure aggregation the coordinator, which chose it, would learn its update whole; sample at least 2 (client_fraction ≥ %.3g), or add DP-FedAvg's noise (clip and noise_multiplier)",
		c.WithDefaults().ClientFraction, n, 2/float64(n))
}

// sumGrid is a party's vector under secure aggregation, for a shape and n
// parties.
type sumGrid struct {
	dp    bool
	vals  int     // entries of W and θ
	bound int64   // B
	frac  int     // DP: f
	clip  float64 // DP: S
	data  int64   // DP: largest |grid value| of a party's clipped Δ
	limb  uint    // without DP: s
}

// newSumGrid returns the grid of c (with its defaults) for shape sh and n
// parties.
func newSumGrid(c Config, sh shape, n int) (sumGrid, error) {
	g := sumGrid{vals: sh.n()}
	if !c.DP() {
		g.bound = ringBound(n)
		g.limb = uint(bits.Len64(uint64(g.bound)+1) - 1)
		return g, nil
	}
	if c.SecureThreshold == 0 {
		return g, errors.New("DP-FedAvg under secure aggregation needs secure_threshold = t in the params, the threshold of secure_aggregation: its noise becomes distributed")
	}
	f, b, err := c.dpGrid()
	if err != nil {
		return g, err
	}
	ev := c.distributedEvent(UnitDocument)
	g.dp, g.frac, g.bound, g.clip = true, f, b, c.WithDefaults().Clip
	g.data = b - int64(math.Ceil(secureHeadroom*ev.Sigma/math.Sqrt(float64(c.SecureThreshold))))
	return g, nil
}

// len is the vector's length: the entries, or their two parts and the two
// parts of N_i.
func (g sumGrid) len() int {
	if g.dp {
		return g.vals
	}
	return 2 * (g.vals + 1)
}

// spec is the vector as the engine knows it; c has its defaults.
func (g sumGrid) spec(c Config) fed.SumSpec {
	if !g.dp {
		return fed.SumSpec{Len: g.len(), Clip: float64(g.bound)}
	}
	s := fed.SumSpec{Len: g.len(), FracBits: g.frac, Clip: math.Ldexp(float64(g.bound), -g.frac), Unit: UnitDocument}
	if c.distributed() {
		ev := c.distributedEvent(UnitDocument)
		s.Sigma, s.Sensitivity = ev.Sigma, ev.Sensitivity
	}
	return s
}

// encode writes into v (zeros, of length g.len()) a sampled party's
// update: N_i·Δ in two parts each and N_i without DP; the clipped Δ
// rounded towards zero with it. A value past the bound is refused.
func (g sumGrid) encode(v []int64, docs int, delta []float64) error {
	if g.dp {
		if docs != 0 {
			return errors.New("DP-FedAvg update with a document count")
		}
		d := append([]float64(nil), delta...)
		clipTo(d, dpClipShrink*g.clip)
		for j, x := range d {
			q := math.Trunc(math.Ldexp(x, g.frac))
			if !(math.Abs(q) <= float64(g.data)) {
				return fmt.Errorf("entry %d of the update: %w (±%d steps of 2^-%d)", j, errSumRange, g.data, g.frac)
			}
			v[j] = int64(q)
		}
		return nil
	}
	lim := g.bound << g.limb
	put := func(j int, x int64) {
		v[j] = x >> g.limb
		v[g.vals+1+j] = x & (1<<g.limb - 1)
	}
	for j, d := range delta {
		x, ok := weighted(docs, d, lim)
		if !ok {
			return fmt.Errorf("entry %d of the update times the party's %d documents: %w (|N·Δ| up to %.4g)", j, docs, errSumRange, math.Ldexp(float64(lim), -SecureFracBits))
		}
		put(j, x)
	}
	if int64(docs) > lim {
		return fmt.Errorf("%d documents: %w (at most %d)", docs, errSumRange, lim)
	}
	put(g.vals, int64(docs))
	return nil
}

// join recovers, from the sum of the parties' vectors without DP, Σ N_i·Δ
// on the grid of step 2^−32 and Σ N_i.
func (g sumGrid) join(sum []int64) (acc []int64, weight int64) {
	acc = make([]int64, g.vals)
	for j := range acc {
		acc[j] = sum[j]<<g.limb + sum[g.vals+1+j]
	}
	return acc, sum[g.vals]<<g.limb + sum[2*g.vals+1]
}

// weighted returns N·round(d·2^32) when its magnitude is at most lim.
func weighted(docs int, d float64, lim int64) (int64, bool) {
	q := math.Round(math.Ldexp(d, SecureFracBits))
	if !(math.Abs(q) <= float64(lim)) {
		return 0, false
	}
	x := int64(q)
	if docs > 0 && (x > lim/int64(docs) || x < -(lim/int64(docs))) {
		return 0, false
	}
	return x * int64(docs), true
}

// accumulate adds N·round(Δ·2^32) to acc entry by entry; it returns the
// first entry past lim (ok false).
func accumulate(acc []int64, docs int, delta []float64, lim int64) (int, bool) {
	for j, d := range delta {
		x, ok := weighted(docs, d, lim)
		if !ok {
			return j, false
		}
		acc[j] += x
	}
	return 0, true
}

// plainLimit is the largest |N·Δ·2^32| the plain aggregator sums, so that
// the int64 sum of n parties cannot overflow.
func plainLimit(n int) int64 { return (1 << 62) / int64(max(n, 1)) }

// gridMean is the FedAvg pseudo-gradient from the grid sums: acc·2^−32 /
// weight, entry by entry.
func gridMean(acc []int64, weight int64) []float64 {
	out := make([]float64, len(acc))
	w := float64(weight)
	for j, x := range acc {
		out[j] = math.Ldexp(float64(x), -SecureFracBits) / w
	}
	return out
}

// secureGrid returns the grid of c for shape sh and n parties; without a
// usable one (DP without secure_threshold) the plain shape, so that the
// engine's setup passes and the first round reports why.
func secureGrid(c Config, sh shape, n int) sumGrid {
	g, err := newSumGrid(c, sh, n)
	if err != nil {
		c.Clip, c.NoiseMultiplier = 0, 0
		g, _ = newSumGrid(c, sh, n)
	}
	return g
}

// SumSpec implements fed.SumLearner.
func (l *Learner) SumSpec() fed.SumSpec { return secureGrid(l.cfg, l.sh, l.n).spec(l.cfg) }

// LearnSum implements fed.SumLearner: the round's update on the grid, or
// zeros in a round the party is not sampled in. With distributed noise the
// events are none (the engine adds the party's share and charges it, as
// Plan states); without DP there are none either.
func (l *Learner) LearnSum(round int, broadcast []byte) ([]int64, []privacy.Event, error) {
	fail := func(err error) ([]int64, []privacy.Event, error) {
		return nil, nil, fmt.Errorf("fednmf: party %s: round %d: %w", l.id, round, err)
	}
	g, err := newSumGrid(l.cfg, l.sh, l.n)
	if err != nil {
		return fail(err)
	}
	if err := l.cfg.checkSecureSample(l.n); err != nil {
		return fail(err)
	}
	st, err := l.learn(round, broadcast)
	if err != nil {
		return nil, nil, err
	}
	up, err := decodeUpdate(st.Payload, l.sh)
	if err != nil {
		return fail(err)
	}
	v := make([]int64, g.len())
	if up.delta != nil {
		if err := g.encode(v, up.docs, up.delta); err != nil {
			return fail(err)
		}
	}
	if g.dp {
		return v, nil, nil
	}
	return v, st.Spent, nil
}

// SumSpec implements fed.SumAggregator.
func (a *Aggregator) SumSpec() fed.SumSpec {
	return secureGrid(a.cfg, a.sh, len(a.parties)).spec(a.cfg)
}

// AggregateSum implements fed.SumAggregator: the pseudo-gradient from the
// sum of the included parties' vectors — Σ N_i·Δ_i / Σ N_i without DP
// (nothing when no sampled party is included), (Σ clip(Δ_i) + noise) /
// (C·n) with distributed noise — applied by the server optimizer as in
// Aggregate. The coordinator adds no noise and spends nothing.
func (a *Aggregator) AggregateSum(round int, sum []int64, included []int) (fed.Step, error) {
	if round != a.round {
		return fed.Step{}, fmt.Errorf("fednmf: aggregate round %d, but round %d is open", round, a.round)
	}
	g, err := newSumGrid(a.cfg, a.sh, len(a.parties))
	if err != nil {
		return fed.Step{}, fmt.Errorf("fednmf: round %d: %w", round, err)
	}
	if err := a.cfg.checkSecureSample(len(a.parties)); err != nil {
		return fed.Step{}, fmt.Errorf("fednmf: round %d: %w", round, err)
	}
	if len(sum) != g.len() {
		return fed.Step{}, fmt.Errorf("fednmf: round %d: sum of %d values, want %d", round, len(sum), g.len())
	}
	for _, p := range included {
		if p < 0 || p >= len(a.parties) {
			return fed.Step{}, fmt.Errorf("fednmf: round %d: sum includes unknown party %d", round, p)
		}
	}
	if g.dp {
		den := a.cfg.ClientFraction * float64(len(a.parties))
		delta := make([]float64, g.vals)
		for j := range delta {
			delta[j] = math.Ldexp(float64(sum[j]), -g.frac) / den
		}
		return a.advance(round, delta, nil)
	}
	acc, weight := g.join(sum)
	switch {
	case weight < 0:
		return fed.Step{}, fmt.Errorf("fednmf: round %d: the sum's document count is negative", round)
	case weight == 0:
		return a.advance(round, nil, nil)
	}
	return a.advance(round, gridMean(acc, weight), nil)
}

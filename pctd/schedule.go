package pctd

import (
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// The noise schedule (Config.ScheduleGrowth) and the precision of each
// round's release, for averaging and thresholding at the coordinator.
//
// Each round is a Gaussian mechanism; T of them compose as GDP with μ² =
// Σ_t μ_t², μ_t = Δ/std_t, and as RDP with ε(α) = Σ_t α·Δ²/(2·std_t²):
// both depend on the rounds' noise only through Σ_t 1/std_t². Round t's
// noise multiplier Sigma/√(T·w_t), with Σ_t w_t = 1, keeps that sum at
// T/Sigma², the equal split's, for every g: the schedule moves precision
// between rounds without changing the cost.

// scheduled reports whether the rounds' noise differs: a growth other than
// 0 and 1, with noise.
func (c Config) scheduled() bool {
	return !c.NoNoise && c.ScheduleGrowth != 0 && c.ScheduleGrowth != 1
}

// share returns w_t, round t's share of μ² (1/T without a schedule):
// g^(t−1)/Σ_s g^(s−1), computed relative to the largest term so that no
// power overflows. c must have its defaults; t outside 1..Rounds is
// clamped into it.
func (c Config) share(t int) float64 {
	n := c.Rounds
	t = min(max(t, 1), n)
	if !c.scheduled() {
		return 1 / float64(n)
	}
	g := c.ScheduleGrowth
	top := n // the largest term's round
	if g < 1 {
		top = 1
	}
	var sum float64
	for s := 1; s <= n; s++ {
		sum += math.Pow(g, float64(s-top))
	}
	return math.Pow(g, float64(t-top)) / sum
}

// at returns c as round t uses it: Sigma is round t's noise multiplier
// (per count for VariantUnit), Sigma/√(T·w_t). Without a schedule it is c.
// c must have its defaults.
func (c Config) at(t int) Config {
	if !c.scheduled() {
		return c
	}
	c.Sigma /= math.Sqrt(float64(c.Rounds) * c.share(t))
	return c
}

// NoiseStdAt returns the standard deviation of the noise a party adds in
// round t (1..Rounds): per count for VariantUnit, per entry of M_t for
// VariantSSP (distributed noise: the sum's, NoiseStd's meaning); 0 with
// NoNoise. Without a schedule it is NoiseStd for every round.
func (c Config) NoiseStdAt(t int) float64 {
	c = c.withDefaults()
	if c.NoNoise {
		return 0
	}
	return c.at(t).noiseStd()
}

// sumNoiseStd returns the standard deviation of the noise on each entry of
// round t's sum of the M_t of parties parties (VariantSSP): with
// distributed noise each adds a share of variance std_t²/SecureThreshold,
// otherwise each its full std_t². 0 with NoNoise and for VariantUnit,
// whose noise is inside the E-step (its rounds average with equal
// weights). c must have its defaults.
func (c Config) sumNoiseStd(t, parties int) float64 {
	if c.NoNoise || parties < 1 || c.Variant != VariantSSP {
		return 0
	}
	std := c.at(t).noiseStd()
	if c.distributed() {
		return std * math.Sqrt(float64(parties)/float64(c.SecureThreshold))
	}
	return std * math.Sqrt(float64(parties))
}

// averaged reports whether the final topics average several rounds.
func (c Config) averaged() bool { return c.AverageLast > 1 }

// firstAveraged is the first round whose sum enters the final average.
func (c Config) firstAveraged() int {
	if !c.averaged() {
		return c.Rounds
	}
	return c.Rounds - c.AverageLast + 1
}

// weight returns the weight of a round's sum in the final average: its
// precision 1/std² for a sum whose noise has standard deviation std, 1
// without noise.
func weight(std float64) float64 {
	if std == 0 {
		return 1
	}
	return 1 / (std * std)
}

// ReleaseNoiseStd returns the standard deviation of the noise on each
// entry of the summed M the final topics are made from, when parties
// parties take part in every round: the last round's sum, or with
// AverageLast the precision-weighted average of the last rounds' sums
// (1/√Σ_t 1/std_t²). 0 with NoNoise or for VariantUnit, whose noise is
// inside the E-step.
func (c Config) ReleaseNoiseStd(parties int) float64 {
	c = c.withDefaults()
	if c.NoNoise || c.Variant != VariantSSP {
		return 0
	}
	var prec float64
	for t := c.firstAveraged(); t <= c.Rounds; t++ {
		prec += weight(c.sumNoiseStd(t, parties))
	}
	return 1 / math.Sqrt(prec)
}

// scheduledEvents returns the run's releases with a schedule, one event
// per round (the accountant merges equal ones). c must have its defaults
// and a schedule.
func (c Config) scheduledEvents() ([]privacy.Event, error) {
	var evs []privacy.Event
	for t := 1; t <= c.Rounds; t++ {
		ev, err := c.roundEvent(t)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev...)
	}
	return evs, nil
}

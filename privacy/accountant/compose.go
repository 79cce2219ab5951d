package accountant

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fedtopic/fedtopic/privacy"
)

// Cost is the (ε, δ) a set of releases costs one privacy unit, with how it
// was computed.
type Cost struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Unit    string  `json:"unit,omitempty"`
	// Accountant names the method: "pure" (ε adds up), "basic" (ε and δ add
	// up), "gdp" (Gaussian releases as μ-GDP, converted exactly), "rdp"
	// (Rényi DP with the improved conversion), joined with "+" when parts
	// were composed by different methods and then added.
	Accountant string `json:"accountant"`
	// Mu is the GDP parameter of the Gaussian releases when Accountant
	// includes "gdp".
	Mu float64 `json:"mu,omitempty"`
	// Order is the Rényi order that gave the bound when Accountant
	// includes "rdp".
	Order float64 `json:"order,omitempty"`
	// Releases is the number of releases composed (the sum of counts).
	Releases int `json:"releases"`
	// Assumptions lists conditions the guarantee rests on (RRP's Zipf
	// assumption); empty means unconditional.
	Assumptions []string `json:"assumptions,omitempty"`
}

// kind groups mechanisms by how they compose.
type kind int

const (
	kindPure     kind = iota // ε-DP, no δ
	kindFixed                // (ε, δ)-DP with an intrinsic δ
	kindGaussian             // continuous Gaussian: exact GDP
	kindRDP                  // needs RDP: discrete or subsampled Gaussian
)

func kindOf(m string) kind {
	switch m {
	case privacy.MechanismRRP, privacy.MechanismPartitionSelection, privacy.MechanismApproxDP:
		return kindFixed
	case privacy.MechanismGaussian:
		return kindGaussian
	case privacy.MechanismDiscreteGaussian, privacy.MechanismSubsampledGaussian:
		return kindRDP
	default:
		return kindPure
	}
}

// Compose returns what events cost together, for a target δ used to convert
// Gaussian releases into (ε, δ):
//
//   - ε-DP releases add their ε (pure composition); releases with their
//     own δ (RRP, partition selection, MechanismApproxDP) add ε and δ
//     (basic composition);
//   - continuous Gaussian releases compose exactly as μ-GDP,
//     μ = √(Σ count·(Δ/σ)²), and convert with the analytic formula at
//     δ' = delta − (the δ of the releases above); with a discrete or
//     subsampled Gaussian among them, all Gaussian releases go through the
//     RDP accountant instead;
//   - with Gaussian releases present, Compose also tries folding the ε-DP
//     releases into the RDP account and keeps whichever total ε is smaller
//     (both are valid bounds at the same δ).
//
// The total δ is delta when there are Gaussian releases, otherwise the sum
// of the intrinsic δs. All events must have the same privacy unit (convert
// with Group first).
func Compose(events []privacy.Event, delta float64) (Cost, error) {
	if len(events) == 0 {
		return Cost{Accountant: "pure"}, nil
	}
	unit := events[0].Unit
	var errs []error
	for i, e := range events {
		if err := e.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("event %d: %w", i, err))
		}
		if e.Unit != unit {
			errs = append(errs, fmt.Errorf("event %d has privacy unit %q, event 0 has %q: convert to one unit with Group first: %w", i, e.Unit, unit, privacy.ErrInvalidParameter))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Cost{}, fmt.Errorf("accountant: compose: %w", err)
	}
	events = merge(events)
	c := Cost{Unit: unit}
	var pureEps, fixedEps, fixedDelta, mu2 float64
	var pure, gauss, rdpOnly []privacy.Event
	for _, e := range events {
		n := float64(e.Count)
		c.Releases += e.Count
		if e.Assumption != "" && !slices.Contains(c.Assumptions, e.Assumption) {
			c.Assumptions = append(c.Assumptions, e.Assumption)
		}
		switch kindOf(e.Mechanism) {
		case kindPure:
			pureEps += n * e.Epsilon
			pure = append(pure, e)
		case kindFixed:
			fixedEps += n * e.Epsilon
			fixedDelta += n * e.Delta
		case kindGaussian:
			mu2 += n * (e.Sensitivity / e.Sigma) * (e.Sensitivity / e.Sigma)
			gauss = append(gauss, e)
		case kindRDP:
			rdpOnly = append(rdpOnly, e)
		}
	}
	methods := func(ms ...string) string {
		var out []string
		for _, m := range ms {
			if m != "" && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
		return strings.Join(out, "+")
	}
	other := ""
	switch {
	case fixedDelta > 0:
		other = "basic"
	case pureEps > 0 || fixedEps > 0:
		other = "pure"
	}
	if len(gauss) == 0 && len(rdpOnly) == 0 {
		c.Epsilon, c.Delta = pureEps+fixedEps, fixedDelta
		c.Accountant = methods(other)
		if c.Accountant == "" {
			c.Accountant = "pure"
		}
		return c, nil
	}
	conv := delta - fixedDelta
	if !(conv > 0 && delta < 1) {
		return Cost{}, fmt.Errorf("accountant: compose: target delta %v leaves nothing to convert the Gaussian releases (the other releases take δ = %v): %w", delta, fixedDelta, privacy.ErrInvalidParameter)
	}
	c.Delta = delta
	if len(rdpOnly) == 0 {
		c.Mu = math.Sqrt(mu2)
		eg, err := GaussianEpsilon(conv, c.Mu)
		if err != nil {
			return Cost{}, fmt.Errorf("accountant: compose: %w", err)
		}
		c.Epsilon = pureEps + fixedEps + eg
		c.Accountant = methods(other, "gdp")
	} else {
		a, err := NewRDP(nil)
		if err != nil {
			return Cost{}, err
		}
		addRDP(a, gauss)
		addRDP(a, rdpOnly)
		er, order, err := a.Epsilon(conv)
		if err != nil {
			return Cost{}, fmt.Errorf("accountant: compose: %w", err)
		}
		c.Epsilon, c.Order = pureEps+fixedEps+er, order
		c.Accountant = methods(other, "rdp")
	}
	if len(pure) > 0 {
		a, err := NewRDP(nil)
		if err != nil {
			return Cost{}, err
		}
		addRDP(a, gauss)
		addRDP(a, rdpOnly)
		addRDP(a, pure)
		er, order, err := a.Epsilon(conv)
		if err == nil && fixedEps+er < c.Epsilon {
			c.Epsilon, c.Order, c.Mu = fixedEps+er, order, 0
			c.Accountant = "rdp"
			if fixedDelta > 0 {
				c.Accountant = "basic+rdp"
			} else if fixedEps > 0 {
				c.Accountant = "pure+rdp"
			}
		}
	}
	return c, nil
}

// addRDP adds events to a.
func addRDP(a *RDP, events []privacy.Event) {
	for _, e := range events {
		switch e.Mechanism {
		case privacy.MechanismGaussian, privacy.MechanismDiscreteGaussian:
			a.AddGaussian(e.Sigma, e.Sensitivity, e.Count)
		case privacy.MechanismSubsampledGaussian:
			a.AddSubsampledGaussian(e.Sigma, e.Sensitivity, e.SamplingRate, e.Count)
		case privacy.MechanismKRR, privacy.MechanismTruncatedKRR:
			a.AddRandomizedResponse(e.Epsilon, e.Categories, e.Count)
		default:
			a.AddPure(e.Epsilon, e.Count)
		}
	}
}

// merge sums the counts of events that are identical but for Count, keeping
// first-seen order, so that long histories compose quickly.
func merge(events []privacy.Event) []privacy.Event {
	out := make([]privacy.Event, 0, len(events))
	for _, e := range events {
		found := false
		for i := range out {
			o := out[i]
			o.Count = e.Count
			if o == e {
				out[i].Count += e.Count
				found = true
				break
			}
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

// Group converts an event for one privacy unit into the event for a group
// of k units — e.g. from one word occurrence to a document of at most k
// words — by group privacy: ε-DP becomes kε-DP; (ε, δ)-DP becomes
// (kε, k·e^((k−1)ε)·δ)-DP; a Gaussian release's L2 sensitivity becomes kΔ
// (so μ-GDP becomes kμ-GDP). Non-Gaussian releases come back as
// MechanismApproxDP events.
func Group(e privacy.Event, k int, unit string) (privacy.Event, error) {
	if err := e.Validate(); err != nil {
		return privacy.Event{}, fmt.Errorf("accountant: group: %w", err)
	}
	if k < 1 {
		return privacy.Event{}, fmt.Errorf("accountant: group of %d units: need at least 1: %w", k, privacy.ErrInvalidParameter)
	}
	g := e
	g.Unit = unit
	kf := float64(k)
	switch kindOf(e.Mechanism) {
	case kindGaussian, kindRDP:
		g.Sensitivity = kf * e.Sensitivity
		return g, nil
	}
	g.Mechanism = privacy.MechanismApproxDP
	g.Categories = 0
	g.Epsilon = kf * e.Epsilon
	if e.Delta > 0 {
		g.Delta = kf * math.Exp((kf-1)*e.Epsilon) * e.Delta
		if !(g.Delta < 1) {
			return privacy.Event{}, fmt.Errorf("accountant: group of %d: δ = %v·%d·e^(%d·%v) ≥ 1, no guarantee is left at the level of %s: %w", k, e.Delta, k, k-1, e.Epsilon, unit, privacy.ErrInvalidParameter)
		}
	}
	return g, nil
}

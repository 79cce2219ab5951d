package fednmf

import (
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// Privacy units. DP-FedAvg protects a whole client (all its documents may
// change); every party's ledger counts documents, and a guarantee for a
// client implies the same guarantee for any one of its documents, so
// clients are charged at UnitDocument with the client-level parameters.
const (
	UnitClient   = "client"
	UnitDocument = "document"
)

// RoundEvent returns the release one DP-FedAvg round makes, for a privacy
// unit: the sum of the sampled clients' updates, each clipped to L2 norm S,
// plus N(0, (z·S)²) on every entry — a Gaussian mechanism of sensitivity S
// and σ = z·S (adding or removing one client moves the sum by at most S),
// applied to a Poisson sample of rate C of the clients
// (MechanismSubsampledGaussian; MechanismGaussian when C = 1). With
// distributed noise under secure aggregation it is the discrete Gaussian
// the engine charges instead (secure.go). ok is false without DP.
func (c Config) RoundEvent(unit string) (ev privacy.Event, ok bool) {
	if !c.DP() {
		return privacy.Event{}, false
	}
	c = c.WithDefaults()
	if c.distributed() {
		return c.distributedEvent(unit), true
	}
	ev = privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: c.NoiseMultiplier * c.Clip, Sensitivity: c.Clip, Unit: unit, Count: 1}
	if c.ClientFraction < 1 {
		ev.Mechanism, ev.SamplingRate = privacy.MechanismSubsampledGaussian, c.ClientFraction
	}
	return ev, true
}

// Events returns what a whole run releases per document of every client:
// Rounds releases of RoundEvent, charged every round to every client,
// sampled or not (the amplification by sampling is a guarantee about the
// rounds a client is in only with probability C). Nil without DP.
func (c Config) Events() []privacy.Event {
	ev, ok := c.RoundEvent(UnitDocument)
	if !ok {
		return nil
	}
	ev.Count = c.WithDefaults().Rounds
	return []privacy.Event{ev}
}

// clipTo scales x in place to L2 norm at most s and returns its norm
// before clipping.
func clipTo(x []float64, s float64) float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	n := math.Sqrt(ss)
	if n > s {
		f := s / n
		for i := range x {
			x[i] *= f
		}
	}
	return n
}

package privacy

import (
	"errors"
	"fmt"
	"math"
)

// Event records one privacy-relevant release made by a mechanism: enough for
// an accountant to compute its cost without seeing the data. Mechanisms
// return an Event with every release; only the accountant turns Events into
// (ε, δ).
type Event struct {
	Mechanism   string  `json:"mechanism"`             // e.g. "discrete-laplace", "gaussian", "krr", "rrp", "partition-selection"
	Epsilon     float64 `json:"epsilon,omitempty"`     // ε of one release for ε-DP / ε-LDP mechanisms
	Delta       float64 `json:"delta,omitempty"`       // δ of one release, where the mechanism has one
	Sigma       float64 `json:"sigma,omitempty"`       // noise standard deviation (Gaussian mechanisms)
	Sensitivity float64 `json:"sensitivity,omitempty"` // L1 (Laplace) or L2 (Gaussian) sensitivity per unit
	Unit        string  `json:"unit"`                  // privacy unit: "word occurrence", "document", "user", ...
	Count       int     `json:"count"`                 // number of identical releases this event stands for (≥ 1)

	// SamplingRate is the Poisson sampling probability of the privacy unit
	// for a subsampled mechanism (MechanismSubsampledGaussian); zero means
	// no subsampling.
	SamplingRate float64 `json:"sampling_rate,omitempty"`
	// Categories is the number of outcomes of a randomized-response
	// mechanism (kRR: the vocabulary or truncated vocabulary size).
	Categories int `json:"categories,omitempty"`
	// Assumption names a condition the guarantee rests on beyond the
	// mechanism itself, such as RRP's Zipf-like topics; empty means the
	// guarantee is unconditional.
	Assumption string `json:"assumption,omitempty"`
}

// Mechanism names used in Events. The accountant knows how each composes.
const (
	// MechanismLaplace is the Laplace mechanism on a grid (discrete Laplace
	// noise): pure ε-DP with the given L1 sensitivity.
	MechanismLaplace = "laplace"
	// MechanismThresholdedLaplace is FTM's Laplace vector with entries ≤ τ
	// zeroed: post-processing of MechanismLaplace, pure ε-DP.
	MechanismThresholdedLaplace = "thresholded-laplace"
	// MechanismGaussian is the continuous Gaussian mechanism: Sigma and L2
	// Sensitivity; it composes exactly as μ-GDP.
	MechanismGaussian = "gaussian"
	// MechanismDiscreteGaussian is the discrete Gaussian on a grid
	// (Canonne, Kamath and Steinke 2020): ½(Δ/σ)²-zCDP, accounted by RDP.
	MechanismDiscreteGaussian = "discrete-gaussian"
	// MechanismSubsampledGaussian is a Gaussian mechanism applied to a
	// Poisson sample (rate SamplingRate) of the units, as in DP-FedAvg;
	// accounted by RDP with amplification by sampling.
	MechanismSubsampledGaussian = "subsampled-gaussian"
	// MechanismKRR is k-ary randomized response: pure ε-LDP.
	MechanismKRR = "krr"
	// MechanismTruncatedKRR is kRR over a truncated vocabulary: pure ε-LDP.
	MechanismTruncatedKRR = "truncated-krr"
	// MechanismRRP is FedLDA's randomized response with priori: (ε, δ)-LDP
	// under the Zipf assumption of its Theorem 1.
	MechanismRRP = "rrp"
	// MechanismPartitionSelection is the private vocabulary round: (ε, δ)-DP.
	MechanismPartitionSelection = "partition-selection"
	// MechanismExponential is the exponential mechanism (McSherry and
	// Talwar 2007) with a utility of the given Sensitivity per unit, as in
	// the private quantile (Quantile): pure ε-DP.
	MechanismExponential = "exponential"
	// MechanismApproxDP is a release whose cost is given directly as
	// (ε, δ), composed by basic composition.
	MechanismApproxDP = "epsilon-delta"
)

// Validate reports what is wrong with e: an unknown mechanism, a count
// below one, or parameters the mechanism needs that are missing or out of
// range.
func (e Event) Validate() error {
	var errs []error
	if e.Count < 1 {
		errs = append(errs, fmt.Errorf("count %d: must be at least 1", e.Count))
	}
	needEps := func() {
		if err := CheckEpsilon(e.Epsilon); err != nil {
			errs = append(errs, err)
		}
	}
	needDelta := func() {
		if err := CheckDelta(e.Delta); err != nil {
			errs = append(errs, err)
		}
	}
	needSigma := func() {
		if !(e.Sigma > 0) || math.IsInf(e.Sigma, 0) {
			errs = append(errs, fmt.Errorf("sigma %v: must be finite and positive", e.Sigma))
		}
		if err := CheckSensitivity(e.Sensitivity); err != nil {
			errs = append(errs, err)
		}
	}
	switch e.Mechanism {
	case MechanismLaplace, MechanismThresholdedLaplace, MechanismKRR, MechanismTruncatedKRR, MechanismExponential:
		needEps()
	case MechanismRRP, MechanismPartitionSelection, MechanismApproxDP:
		needEps()
		needDelta()
	case MechanismGaussian, MechanismDiscreteGaussian:
		needSigma()
	case MechanismSubsampledGaussian:
		needSigma()
		if !(e.SamplingRate > 0 && e.SamplingRate <= 1) {
			errs = append(errs, fmt.Errorf("sampling rate %v: must be in (0, 1]", e.SamplingRate))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown mechanism %q", e.Mechanism))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("privacy: event %q: %w", e.Mechanism, err)
	}
	return nil
}

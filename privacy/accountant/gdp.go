package accountant

import (
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// Gaussian differential privacy (Dong, Roth and Su 2022): a mechanism is
// μ-GDP when distinguishing neighbours is no easier than telling N(0, 1)
// from N(μ, 1). The Gaussian mechanism with L2 sensitivity Δ and noise σ is
// exactly (Δ/σ)-GDP, T of them compose to √T·Δ/σ, and μ-GDP is exactly
// (ε, δ(ε))-DP for every ε with the analytic Gaussian formula (Balle and
// Wang 2018, Theorem 8; Dong et al., Corollary 2.13)
//
//	δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2).

// GaussianDelta returns δ(ε) of μ-GDP for ε ≥ 0 and μ > 0.
func GaussianDelta(eps, mu float64) float64 {
	a := math.Exp(logPhi(-eps/mu + mu/2))
	b := math.Exp(eps + logPhi(-eps/mu-mu/2))
	return math.Max(a-b, 0)
}

// GaussianEpsilon returns the smallest ε ≥ 0 with δ(ε) ≤ delta for μ-GDP.
func GaussianEpsilon(delta, mu float64) (float64, error) {
	if err := checkMu(mu); err != nil {
		return 0, err
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("accountant: delta %v: converting a Gaussian mechanism needs delta in (0, 1): %w", delta, privacy.ErrInvalidParameter)
	}
	if GaussianDelta(0, mu) <= delta {
		return 0, nil
	}
	lo, hi := 0.0, 1.0
	for GaussianDelta(hi, mu) > delta {
		lo, hi = hi, 2*hi
		if hi > 1e7 {
			return 0, fmt.Errorf("accountant: μ = %v: ε for δ = %v exceeds 10^7: %w", mu, delta, privacy.ErrInvalidParameter)
		}
	}
	_, eps := bisect(lo, hi, func(e float64) bool { return GaussianDelta(e, mu) > delta })
	return eps, nil // the side where δ(ε) ≤ delta
}

// GaussianMu returns the largest μ whose δ(ε) is at most delta: the GDP
// parameter a mechanism may have to be (ε, δ)-DP.
func GaussianMu(eps, delta float64) (float64, error) {
	if err := privacy.CheckEpsilon(eps); err != nil {
		return 0, fmt.Errorf("accountant: %w", err)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("accountant: delta %v: calibrating a Gaussian mechanism needs delta in (0, 1): %w", delta, privacy.ErrInvalidParameter)
	}
	lo, hi := 0.0, 1.0
	for GaussianDelta(eps, hi) <= delta {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return 0, fmt.Errorf("accountant: μ for ε = %v, δ = %v exceeds 10^6: %w", eps, delta, privacy.ErrInvalidParameter)
		}
	}
	mu, _ := bisect(lo, hi, func(m float64) bool { return GaussianDelta(eps, m) <= delta })
	return mu, nil // the side where δ(ε) ≤ delta
}

// GaussianSigma returns the smallest noise σ for which one Gaussian release
// with L2 sensitivity Δ is (ε, δ)-DP — the analytic calibration of Balle and
// Wang (2018), tighter than the classic √(2 ln(1.25/δ))·Δ/ε.
func GaussianSigma(eps, delta, sensitivity float64) (float64, error) {
	if err := privacy.CheckSensitivity(sensitivity); err != nil {
		return 0, fmt.Errorf("accountant: %w", err)
	}
	mu, err := GaussianMu(eps, delta)
	if err != nil {
		return 0, err
	}
	return sensitivity / mu, nil
}

func checkMu(mu float64) error {
	if math.IsNaN(mu) || math.IsInf(mu, 0) || mu <= 0 {
		return fmt.Errorf("accountant: μ %v: must be finite and positive: %w", mu, privacy.ErrInvalidParameter)
	}
	return nil
}

// bisect narrows [lo, hi] to adjacent float64s around the point where below
// changes from true (at lo) to false (at hi) and returns both ends.
func bisect(lo, hi float64, below func(float64) bool) (float64, float64) {
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, hi
}

// logPhi returns log Φ(x) for the standard normal CDF, accurate in the far
// lower tail where Φ underflows.
func logPhi(x float64) float64 {
	if x > -37 {
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	// Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − …), an
	// asymptotic series whose truncation error here is below 1e-14.
	x2 := x * x
	s := 1 - 1/x2 + 3/(x2*x2) - 15/(x2*x2*x2) + 105/(x2*x2*x2*x2)
	return -x2/2 - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log(s)
}

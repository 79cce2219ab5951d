package privacy

import (
	"errors"
	"fmt"
	"math"
)

// ErrInvalidParameter is wrapped by every error about a mechanism parameter
// (ε, δ, σ, sensitivity, granularity, sizes) that is out of range.
var ErrInvalidParameter = errors.New("invalid privacy parameter")

// MinEpsilon is the smallest ε a mechanism accepts (2⁻⁵⁰, as in Google's DP
// library): below it the noise scale overflows any useful range.
const MinEpsilon = 0x1p-50

// CheckEpsilon reports an error unless eps is finite and at least
// MinEpsilon.
func CheckEpsilon(eps float64) error {
	if math.IsNaN(eps) || math.IsInf(eps, 0) || eps < MinEpsilon {
		return fmt.Errorf("privacy: epsilon %v: must be finite and at least 2^-50: %w", eps, ErrInvalidParameter)
	}
	return nil
}

// CheckDelta reports an error unless delta is in [0, 1).
func CheckDelta(delta float64) error {
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return fmt.Errorf("privacy: delta %v: must be in [0, 1): %w", delta, ErrInvalidParameter)
	}
	return nil
}

// CheckSensitivity reports an error unless s is finite and positive.
func CheckSensitivity(s float64) error {
	if math.IsNaN(s) || math.IsInf(s, 0) || s <= 0 {
		return fmt.Errorf("privacy: sensitivity %v: must be finite and positive: %w", s, ErrInvalidParameter)
	}
	return nil
}

// CheckSigma reports an error unless sigma is finite and positive.
func CheckSigma(sigma float64) error {
	if math.IsNaN(sigma) || math.IsInf(sigma, 0) || sigma <= 0 {
		return fmt.Errorf("privacy: sigma %v: must be finite and positive: %w", sigma, ErrInvalidParameter)
	}
	return nil
}

// CheckGranularity reports an error unless g is an exact power of two
// between 2⁻⁶⁰ and 2⁶⁰: the grid noise is drawn on.
func CheckGranularity(g float64) error {
	if math.IsNaN(g) || math.IsInf(g, 0) || g <= 0 {
		return fmt.Errorf("privacy: granularity %v: must be a positive power of two: %w", g, ErrInvalidParameter)
	}
	frac, exp := math.Frexp(g)
	if frac != 0.5 || exp-1 < -60 || exp-1 > 60 {
		return fmt.Errorf("privacy: granularity %v: must be a power of two between 2^-60 and 2^60: %w", g, ErrInvalidParameter)
	}
	return nil
}

// onGrid reports whether x is a finite multiple of the power of two g, small
// enough (|x/g| < 2⁵²) that adding grid noise to it stays exact.
func onGrid(x, g float64) bool {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return false
	}
	q := x / g // exact: g is a power of two (barring underflow, excluded by the range check)
	return q == math.Trunc(q) && math.Abs(q) < 1<<52
}

// checkOnGrid reports the first value of x that is not a finite multiple of
// g, before any noise is drawn.
func checkOnGrid(x []float64, g float64) error {
	for i, v := range x {
		if !onGrid(v, g) {
			return fmt.Errorf("privacy: input %d = %v: not a finite multiple of the granularity %v (round it first with RoundToGrid): %w", i, v, g, ErrInvalidParameter)
		}
	}
	return nil
}

// RoundToGrid returns x rounded to the nearest multiple of the power of two
// g, ties away from zero. Rounding moves each value by at most g/2, so it
// can raise a sensitivity: see SensitivityAfterRounding.
func RoundToGrid(x, g float64) float64 {
	return math.Round(x/g) * g
}

// SensitivityAfterRounding returns a bound on the sensitivity of d values
// after each is rounded to the grid g, given their sensitivity before: each
// of the two neighbouring inputs moves by at most g/2 per coordinate, so
// the L1 sensitivity grows by at most d·g and the L2 sensitivity by at most
// √d·g. l2 selects the norm.
func SensitivityAfterRounding(sensitivity, g float64, d int, l2 bool) float64 {
	if l2 {
		return sensitivity + math.Sqrt(float64(d))*g
	}
	return sensitivity + float64(d)*g
}

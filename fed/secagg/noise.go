package secagg

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/privacy"
)

// PartySigma returns σ/√t, the discrete Gaussian parameter (in grid steps)
// of each party's share of the noise, so that the sum of at least t
// survivors carries noise of variance at least σ² (the sum of s ≥ t
// independent shares has variance s·σ²/t). It refuses a share below one
// grid step: there the sum of discrete Gaussians is no longer close to a
// discrete Gaussian of the summed variance (Kairouz, Liu and Steinke 2021,
// Theorem 1: the gap is bounded by τ = 10·Σ_{k=1}^{t−1} e^(−2π²(σ²/t)·k/(k+1)),
// below 10⁻³·t at one step and negligible above two).
func PartySigma(sigma float64, threshold int) (float64, error) {
	if threshold < 1 {
		return 0, fmt.Errorf("secagg: noise: threshold %d", threshold)
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("secagg: noise: sigma %v: must be positive and finite", sigma)
	}
	s := sigma / math.Sqrt(float64(threshold))
	if s < 1 {
		return 0, fmt.Errorf("secagg: noise: sigma %v over %d parties gives %v grid steps each: need at least 1 (use more fraction bits)", sigma, threshold, s)
	}
	return s, nil
}

// AddNoise adds to every value of x (on the fixed-point grid) an
// independent discrete Gaussian draw of parameter PartySigma(σ, t), read
// from r. A party adds it before masking, so that only the noisy sum is
// ever unmasked. The accountant must charge the party for the worst case
// it accepted — exactly t survivors, total noise σ — whatever the number
// that survive. The noise counts against the clip: choose Clip with room
// for it (several σ/√t above the data's own bound), or the party refuses
// the noisy vector with ErrOverflow.
func AddNoise(x []int64, sigma float64, threshold int, r *rand.Rand) error {
	n, err := NewNoise(sigma, threshold)
	if err != nil {
		return err
	}
	n.Add(x, r)
	return nil
}

// Noise draws one party's share of distributed noise, as AddNoise does.
// Building its sampler takes milliseconds, drawing from it microseconds: a
// party that adds noise every round builds one Noise and keeps it.
type Noise struct {
	sigma     float64
	threshold int
	g         *privacy.DiscreteGaussian
}

// NewNoise returns the sampler of a party's share for total noise σ (in
// grid steps) carried by the sum of at least threshold parties.
func NewNoise(sigma float64, threshold int) (*Noise, error) {
	s, err := PartySigma(sigma, threshold)
	if err != nil {
		return nil, err
	}
	g, err := privacy.NewDiscreteGaussian(s)
	if err != nil {
		return nil, fmt.Errorf("secagg: noise: %w", err)
	}
	return &Noise{sigma: sigma, threshold: threshold, g: g}, nil
}

// For reports whether n is the share for σ and threshold.
func (n *Noise) For(sigma float64, threshold int) bool {
	return n != nil && n.sigma == sigma && n.threshold == threshold
}

// Add adds to every value of x an independent draw of the share, read
// from r.
func (n *Noise) Add(x []int64, r *rand.Rand) {
	noise := make([]int64, len(x))
	n.g.Fill(r, noise)
	for i, z := range noise {
		x[i] += z
	}
}

package privacy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// GaussianConfig describes a Gaussian mechanism. Calibrate Sigma for a
// target (ε, δ) with accountant.GaussianSigma. The zero value of every field
// but Sigma means its documented default.
type GaussianConfig struct {
	// Sigma is the noise standard deviation in value units; required.
	Sigma float64 `json:"sigma"`
	// Sensitivity is the L2 sensitivity per privacy unit; zero means 1.
	Sensitivity float64 `json:"sensitivity,omitempty"`
	// Granularity is the grid step of the discrete mechanism, a power of
	// two; zero picks the largest power of two ≤ min(1, σ/16). The
	// continuous mechanism has no grid and requires zero.
	Granularity float64 `json:"granularity,omitempty"`
	// Unit names the privacy unit; zero means DefaultUnit.
	Unit string `json:"unit,omitempty"`
}

// Validate reports every problem with c.
func (c GaussianConfig) Validate() error {
	var errs []error
	errs = append(errs, CheckSigma(c.Sigma))
	if c.Sensitivity != 0 {
		errs = append(errs, CheckSensitivity(c.Sensitivity))
	}
	if c.Granularity != 0 {
		errs = append(errs, CheckGranularity(c.Granularity))
	}
	return errors.Join(errs...)
}

func (c GaussianConfig) withDefaults(grid bool) GaussianConfig {
	if c.Sensitivity == 0 {
		c.Sensitivity = 1
	}
	if grid && c.Granularity == 0 {
		c.Granularity = defaultGranularity(c.Sigma)
	}
	if c.Unit == "" {
		c.Unit = DefaultUnit
	}
	return c
}

// Gaussian is the discrete Gaussian mechanism on a grid (Canonne, Kamath
// and Steinke 2020): it releases x + g·Z with Z ~ N_ℤ(0, (σ/g)²), drawn
// exactly (DiscreteGaussian), for inputs x on the grid g. For neighbouring
// inputs at L2 distance ≤ Δ it satisfies ½(Δ/σ)²-zCDP — the same curve as
// the continuous Gaussian (their Theorem 4) — and the accountant composes it
// by RDP. Outputs are grid multiples, so no floating-point caveat applies.
// Safe for concurrent use.
type Gaussian struct {
	cfg   GaussianConfig
	noise *DiscreteGaussian
}

// NewGaussian returns the discrete mechanism c describes.
func NewGaussian(c GaussianConfig) (*Gaussian, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("privacy: gaussian: %w", err)
	}
	c = c.withDefaults(true)
	d, err := NewDiscreteGaussian(c.Sigma / c.Granularity) // exact: power-of-two quotient
	if err != nil {
		return nil, fmt.Errorf("privacy: gaussian: %w", err)
	}
	return &Gaussian{cfg: c, noise: d}, nil
}

// Config returns the configuration with defaults filled in.
func (m *Gaussian) Config() GaussianConfig { return m.cfg }

// Granularity returns the grid step.
func (m *Gaussian) Granularity() float64 { return m.cfg.Granularity }

// Event returns the Event for count releases of this mechanism.
func (m *Gaussian) Event(count int) Event {
	return Event{Mechanism: MechanismDiscreteGaussian, Sigma: m.cfg.Sigma, Sensitivity: m.cfg.Sensitivity, Unit: m.cfg.Unit, Count: count}
}

// Release adds noise to every value of x in place and returns the Event of
// this one release. It checks first that every value is a finite multiple
// of the granularity and draws nothing if one is not.
func (m *Gaussian) Release(r *rand.Rand, x []float64) (Event, error) {
	if err := checkOnGrid(x, m.cfg.Granularity); err != nil {
		return Event{}, fmt.Errorf("privacy: gaussian: %w", err)
	}
	br := bitReader{r: r}
	g := m.cfg.Granularity
	for i := range x {
		x[i] += float64(m.noise.sample(&br)) * g
	}
	return m.Event(1), nil
}

// ContinuousGaussian is the textbook Gaussian mechanism x + σ·N(0, I) over
// float64, for the places where the noise must pass through exact linear
// algebra before anything is released (PC-TD's fast path draws L·Ω as
// chol(σ²LLᵀ)·ξ, which no grid survives). Its Event composes exactly as
// μ-GDP with μ = Δ/σ per release.
//
// Floating-point caveat: the (ε, δ) the accountant reports hold for the
// idealised mechanism with real-valued noise. The samples are float64s from
// math/rand/v2's NormFloat64 (a ziggurat driven by 32-bit draws), so their
// law is a close but not exact approximation of N(0, 1), and x + noise
// rounded to float64 leaves low-order bits that depend on x — the weakness
// Mironov (2012) exploited for the Laplace mechanism. Neither effect is
// bounded here. Use it only where the noise is transformed before release
// or where a continuous output is unavoidable; release counts with the
// discrete Gaussian instead. Safe for concurrent use.
type ContinuousGaussian struct {
	cfg GaussianConfig
}

// NewContinuousGaussian returns the continuous mechanism c describes; c's
// Granularity must be zero.
func NewContinuousGaussian(c GaussianConfig) (*ContinuousGaussian, error) {
	err := c.Validate()
	if c.Granularity != 0 {
		err = errors.Join(err, fmt.Errorf("privacy: granularity %v: the continuous Gaussian has no grid: %w", c.Granularity, ErrInvalidParameter))
	}
	if err != nil {
		return nil, fmt.Errorf("privacy: continuous gaussian: %w", err)
	}
	return &ContinuousGaussian{cfg: c.withDefaults(false)}, nil
}

// Config returns the configuration with defaults filled in.
func (m *ContinuousGaussian) Config() GaussianConfig { return m.cfg }

// Event returns the Event for count releases of this mechanism.
func (m *ContinuousGaussian) Event(count int) Event {
	return Event{Mechanism: MechanismGaussian, Sigma: m.cfg.Sigma, Sensitivity: m.cfg.Sensitivity, Unit: m.cfg.Unit, Count: count}
}

// Fill overwrites dst with independent N(0, σ²) draws.
func (m *ContinuousGaussian) Fill(r *rand.Rand, dst []float64) {
	for i := range dst {
		dst[i] = r.NormFloat64() * m.cfg.Sigma
	}
}

// Release adds N(0, σ²) noise to every value of x in place and returns the
// Event of this one release. It draws nothing if a value is NaN or ±Inf.
func (m *ContinuousGaussian) Release(r *rand.Rand, x []float64) (Event, error) {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Event{}, fmt.Errorf("privacy: continuous gaussian: input %d = %v: not finite: %w", i, v, ErrInvalidParameter)
		}
	}
	for i := range x {
		x[i] += r.NormFloat64() * m.cfg.Sigma
	}
	return m.Event(1), nil
}

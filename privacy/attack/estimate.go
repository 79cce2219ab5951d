package attack

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/fedtopic/fedtopic/privacy"
)

// Game is one distinguishing experiment on two neighbouring datasets D and
// D' that differ in one privacy unit. Play makes one release on D (in is
// true) or on D' (in is false) through the method's real release path, with
// the randomness of trial number trial (distinct trials must use
// independent noise), and returns the attacker's statistic: larger values
// are evidence for D.
type Game interface {
	Play(ctx context.Context, trial int, in bool) (float64, error)
}

// GameFunc adapts a function to Game.
type GameFunc func(ctx context.Context, trial int, in bool) (float64, error)

// Play calls f.
func (f GameFunc) Play(ctx context.Context, trial int, in bool) (float64, error) {
	return f(ctx, trial, in)
}

// Config says how Estimate runs a game.
type Config struct {
	// Trials is the number of releases per world (D and D') that the
	// fixed test is judged on; at least 1.
	Trials int
	// Calibration is the number of releases per world, made before and
	// apart from the judged ones, on which the test's threshold is chosen;
	// default Trials.
	Calibration int
	// Delta is the δ of the claimed guarantee, subtracted in the bound.
	Delta float64
	// Alpha is the probability that the bound is wrong: the result holds
	// with confidence 1 − Alpha; default 0.05.
	Alpha float64
}

// Result is what Estimate measured.
type Result struct {
	Bound
	Threshold  float64 // the test says D when the statistic is > Threshold
	Confidence float64 // 1 − Alpha
	TPR, FPR   float64 // the judged rates (point estimates)
}

// Estimate runs g and returns the empirical lower bound on ε of the release
// it plays. It first plays c.Calibration trials per world and chooses the
// threshold whose test gives the largest bound on them; then, with that
// test fixed, it plays c.Trials fresh trials per world (trial numbers after
// the calibration ones) and bounds ε from their error counts with
// EpsilonLowerBound. Choosing the test on separate trials keeps the
// confidence statement exact: the judged trials are independent of the
// choice.
func Estimate(ctx context.Context, g Game, c Config) (Result, error) {
	if c.Trials < 1 {
		return Result{}, fmt.Errorf("attack: estimate: %d trials, want at least 1: %w", c.Trials, privacy.ErrInvalidParameter)
	}
	if c.Calibration == 0 {
		c.Calibration = c.Trials
	}
	if c.Alpha == 0 {
		c.Alpha = 0.05
	}
	in, out, err := play(ctx, g, 0, c.Calibration)
	if err != nil {
		return Result{}, err
	}
	t, err := bestThreshold(in, out, c.Delta)
	if err != nil {
		return Result{}, err
	}
	in, out, err = play(ctx, g, c.Calibration, c.Trials)
	if err != nil {
		return Result{}, err
	}
	fp, fn := errorsAt(in, out, t)
	b, err := EpsilonLowerBound(fp, fn, c.Trials, c.Delta, c.Alpha)
	if err != nil {
		return Result{}, err
	}
	n := float64(c.Trials)
	return Result{Bound: b, Threshold: t, Confidence: 1 - c.Alpha, TPR: 1 - float64(fn)/n, FPR: float64(fp) / n}, nil
}

// play plays trials first … first+n−1 in both worlds.
func play(ctx context.Context, g Game, first, n int) (in, out []float64, err error) {
	in, out = make([]float64, n), make([]float64, n)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("attack: trial %d: %w", first+i, err)
		}
		if in[i], err = g.Play(ctx, first+i, true); err != nil {
			return nil, nil, fmt.Errorf("attack: trial %d on D: %w", first+i, err)
		}
		if out[i], err = g.Play(ctx, first+i, false); err != nil {
			return nil, nil, fmt.Errorf("attack: trial %d on D': %w", first+i, err)
		}
	}
	return in, out, nil
}

// errorsAt counts the errors of the test "statistic > t means D".
func errorsAt(in, out []float64, t float64) (fp, fn int) {
	for _, s := range out {
		if s > t {
			fp++
		}
	}
	for _, s := range in {
		if !(s > t) {
			fn++
		}
	}
	return fp, fn
}

// bestThreshold returns the threshold among the observed statistics whose
// test separates in from out best: the largest ε bound with the error rates
// replaced by their Wilson upper bounds at z = 1.96, a cheap stand-in for
// the Clopper–Pearson bounds that ranks tests nearly the same way (a
// threshold in the far tail, where few errors happen to fall, is not
// preferred for luck alone).
func bestThreshold(in, out []float64, delta float64) (float64, error) {
	if len(in) == 0 || len(out) == 0 {
		return 0, errors.New("attack: no statistics to choose a threshold from")
	}
	in, out = slices.Sorted(slices.Values(in)), slices.Sorted(slices.Values(out))
	cands := slices.Compact(slices.Sorted(slices.Values(slices.Concat(in, out))))
	n := float64(len(in))
	best, bestEps := cands[0], math.Inf(-1)
	for _, t := range cands {
		// fn: statistics of D at most t; fp: statistics of D' above t.
		fn, _ := slices.BinarySearch(in, math.Nextafter(t, math.Inf(1)))
		le, _ := slices.BinarySearch(out, math.Nextafter(t, math.Inf(1)))
		fp := len(out) - le
		fpr, fnr := wilsonUpper(float64(fp), n), wilsonUpper(float64(fn), n)
		eps := max(math.Log((1-delta-fnr)/fpr), math.Log((1-delta-fpr)/fnr))
		if eps > bestEps {
			best, bestEps = t, eps
		}
	}
	return best, nil
}

// wilsonUpper is the upper end of the Wilson score interval at z = 1.96
// for k successes in n trials.
func wilsonUpper(k, n float64) float64 {
	const z = 1.96
	p := k / n
	c := p + z*z/(2*n)
	r := z * math.Sqrt(p*(1-p)/n+z*z/(4*n*n))
	return min(1, (c+r)/(1+z*z/n))
}

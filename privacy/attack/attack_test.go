package attack_test

import (
	"context"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/attack"
)

func TestClopperPearsonUpper(t *testing.T) {
	tests := []struct {
		name     string
		k, n     int
		alpha    float64
		want     float64 // the p at which the exact binomial distribution function (summed with Python math.comb) is alpha
		tolerate float64
	}{
		{name: "no successes", k: 0, n: 100, alpha: 0.025, want: 0.036217, tolerate: 1e-6},
		{name: "five in a hundred", k: 5, n: 100, alpha: 0.025, want: 0.112835, tolerate: 1e-6},
		{name: "half", k: 50, n: 100, alpha: 0.025, want: 0.601679, tolerate: 1e-6},
		{name: "all", k: 10, n: 10, alpha: 0.05, want: 1, tolerate: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := attack.ClopperPearsonUpper(tt.k, tt.n, tt.alpha); math.Abs(got-tt.want) > tt.tolerate {
				t.Errorf("ClopperPearsonUpper(%d, %d, %v) = %.6f; want %.6f", tt.k, tt.n, tt.alpha, got, tt.want)
			}
		})
	}
}

func TestClopperPearsonLower(t *testing.T) {
	tests := []struct {
		k, n  int
		alpha float64
		want  float64 // 1 − the upper bound on the n − k failures
	}{
		{k: 95, n: 100, alpha: 0.025, want: 1 - 0.112835},
		{k: 0, n: 10, alpha: 0.05, want: 0},
		{k: 100, n: 100, alpha: 0.025, want: 1 - 0.036217},
	}
	for _, tt := range tests {
		if got := attack.ClopperPearsonLower(tt.k, tt.n, tt.alpha); math.Abs(got-tt.want) > 1e-6 {
			t.Errorf("ClopperPearsonLower(%d, %d, %v) = %.6f; want %.6f", tt.k, tt.n, tt.alpha, got, tt.want)
		}
	}
}

func TestEpsilonLowerBound(t *testing.T) {
	// No errors in 1,000 trials: FPR_ub = FNR_ub = 1 − 0.025^(1/1000),
	// ε_lb = ln((1 − ub)/ub).
	b, err := attack.EpsilonLowerBound(0, 0, 1000, 0, 0.05)
	ub := -math.Expm1(math.Log(0.025) / 1000)
	if want := math.Log((1 - ub) / ub); err != nil || math.Abs(b.EpsilonLB-want) > 1e-6 {
		t.Errorf("EpsilonLowerBound(0, 0, 1000, 0, 0.05) = %v, %v; want ε_lb %v, nil", b.EpsilonLB, err, want)
	}
	// A coin flip test (half its answers wrong) proves nothing.
	if b, err := attack.EpsilonLowerBound(500, 500, 1000, 0, 0.05); err != nil || b.EpsilonLB != 0 {
		t.Errorf("EpsilonLowerBound(500, 500, 1000, 0, 0.05) = %v, %v; want 0, nil", b.EpsilonLB, err)
	}
	if _, err := attack.EpsilonLowerBound(5, 0, 4, 0, 0.05); err == nil {
		t.Errorf("EpsilonLowerBound(5, 0, 4, ...) = nil error; want one (more errors than trials)")
	}
}

// laplaceGame plays the Laplace mechanism at eps on a count that is 1 (D)
// or 0 (D'); without noise it releases the count.
func laplaceGame(t *testing.T, eps float64, noiseOff bool) attack.Game {
	t.Helper()
	m, err := privacy.NewLaplace(privacy.LaplaceConfig{Epsilon: eps})
	if err != nil {
		t.Fatal(err)
	}
	src := privacy.NewSeededSource(7)
	return attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		x := []float64{0}
		if in {
			x[0] = 1
		}
		if noiseOff {
			return x[0], nil
		}
		_, err := m.Release(src.Stream("trial", trial, in), x)
		return x[0], err
	})
}

// TestEstimateLaplace plays the word-presence game on the Laplace mechanism. The bound is
// computed at alpha = 1e-5, so that for a mechanism that is ε-DP the
// assertion ε_lb ≤ ε fails with probability at most 1e-5 whatever the
// seed (the Clopper–Pearson bounds are exact and the threshold is chosen
// on separate trials). The noiseless game separates perfectly, so its
// bound is deterministic: ln((1 − u)/u) with u = 1 − (α/2)^(1/n), 5.1 at
// n = 2,000.
func TestEstimateLaplace(t *testing.T) {
	ctx := context.Background()
	const eps, alpha, n = 1.0, 1e-5, 2000
	on, err := attack.Estimate(ctx, laplaceGame(t, eps, false), attack.Config{Trials: n, Alpha: alpha})
	if err != nil || on.EpsilonLB > eps {
		t.Errorf("Estimate(Laplace ε = %v) = ε_lb %v, %v; want ≤ %v", eps, on.EpsilonLB, err, eps)
	}
	// The attack is not vacuous: at ε = 1 a threshold test reaches about
	// 0.6 of ε with 2,000 trials (measured 0.63 at this seed).
	if on.EpsilonLB < 0.3 {
		t.Errorf("Estimate(Laplace ε = %v) = ε_lb %v; want ≥ 0.3 (the attack lost its power)", eps, on.EpsilonLB)
	}
	off, err := attack.Estimate(ctx, laplaceGame(t, eps, true), attack.Config{Trials: n, Alpha: alpha})
	if err != nil || off.EpsilonLB < 5 || off.TPR != 1 {
		t.Errorf("Estimate(no noise) = ε_lb %v, TPR %v, %v; want ≥ 5, 1", off.EpsilonLB, off.TPR, err)
	}
}

func TestMembershipBounds(t *testing.T) {
	if got := attack.AUC([]float64{3, 4}, []float64{1, 2}); got != 1 {
		t.Errorf("AUC(separated) = %v; want 1", got)
	}
	if got := attack.AUC([]float64{1, 2}, []float64{1, 2}); got != 0.5 {
		t.Errorf("AUC(same) = %v; want 0.5", got)
	}
	if got := attack.TPRAtFPR([]float64{3, 4, 0.5, 0.7}, []float64{1, 2, 0, 0.1}, 0.25); got != 0.5 {
		t.Errorf("TPRAtFPR(…, 0.25) = %v; want 0.5", got)
	}
	// ε = 0: no test beats chance.
	if got := attack.MaxAUC(0, 0); math.Abs(got-0.5) > 1e-5 {
		t.Errorf("MaxAUC(0, 0) = %v; want 0.5", got)
	}
	if got := attack.MaxTPR(1, 0, 0.01); math.Abs(got-math.E*0.01) > 1e-12 {
		t.Errorf("MaxTPR(1, 0, 0.01) = %v; want e·0.01", got)
	}
}

func TestExposure(t *testing.T) {
	ref := []float64{1, 2, 3, 4, 5, 6, 7}
	if got := attack.Exposure(10, ref); got != 3 {
		t.Errorf("Exposure(top of 8) = %v; want 3", got)
	}
	if got := attack.Exposure(0, ref); got != 0 {
		t.Errorf("Exposure(last of 8) = %v; want 0", got)
	}
	got, err := attack.MaxExposure(1, 0, 5, 1e-5)
	if want := 5*math.Log2E + math.Log2(1e5); err != nil || math.Abs(got-want) > 1e-9 {
		t.Errorf("MaxExposure(1, 0, 5, 1e-5) = %v, %v; want %v, nil", got, err, want)
	}
	// A pure guarantee stays finite however large the group.
	got, err = attack.MaxExposure(140, 0, 20, 1e-5)
	if want := 20*140*math.Log2E + math.Log2(1e5); err != nil || math.Abs(got-want) > 1e-9 {
		t.Errorf("MaxExposure(140, 0, 20, 1e-5) = %v, %v; want %v, nil", got, err, want)
	}
	// An approximate one is lost when the group's δ passes β.
	if got, err := attack.MaxExposure(1, 1e-6, 20, 1e-5); err != nil || !math.IsInf(got, 1) {
		t.Errorf("MaxExposure(1, 1e-6, 20, 1e-5) = %v, %v; want +Inf, nil", got, err)
	}
}

package attack

import (
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// ClopperPearsonUpper returns the one-sided Clopper–Pearson upper
// confidence bound at level 1 − alpha on a binomial proportion from k
// successes in n trials: the p with P(Bin(n, p) ≤ k) = alpha (1 when
// k = n). It is exact, found by bisection on the binomial distribution
// function, and rounded up.
func ClopperPearsonUpper(k, n int, alpha float64) float64 {
	if n <= 0 || k < 0 || k > n || !(alpha > 0 && alpha < 1) {
		panic(fmt.Sprintf("attack: ClopperPearsonUpper(%d, %d, %v): need 0 ≤ k ≤ n, n > 0, alpha in (0, 1)", k, n, alpha))
	}
	if k == n {
		return 1
	}
	if k == 0 {
		// P(Bin(n, p) = 0) = (1 − p)^n = alpha.
		return math.Min(1, -math.Expm1(math.Log(alpha)/float64(n))*(1+1e-12))
	}
	lo, hi := float64(k)/float64(n), 1.0
	for range 100 {
		mid := (lo + hi) / 2
		if binomCDF(k, n, mid) > alpha {
			lo = mid // the bound lies above mid
		} else {
			hi = mid
		}
	}
	return hi
}

// ClopperPearsonLower returns the one-sided Clopper–Pearson lower
// confidence bound at level 1 − alpha on a binomial proportion from k
// successes in n trials: 1 − ClopperPearsonUpper(n − k, n, alpha).
func ClopperPearsonLower(k, n int, alpha float64) float64 {
	if n <= 0 || k < 0 || k > n {
		panic(fmt.Sprintf("attack: ClopperPearsonLower(%d, %d, %v): need 0 ≤ k ≤ n, n > 0", k, n, alpha))
	}
	return max(0, 1-ClopperPearsonUpper(n-k, n, alpha))
}

// binomCDF returns P(Bin(n, p) ≤ k), summed in log space.
func binomCDF(k, n int, p float64) float64 {
	lp, lq := math.Log(p), math.Log1p(-p)
	ln, _ := math.Lgamma(float64(n + 1))
	var s float64
	for i := 0; i <= k; i++ {
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		s += math.Exp(ln - li - lni + float64(i)*lp + float64(n-i)*lq)
	}
	return math.Min(s, 1)
}

// Bound is an empirical lower bound on ε from one distinguishing test.
type Bound struct {
	FP, FN    int     // false positives (said D on D') and false negatives (said D' on D)
	Trials    int     // trials per world
	FPRUpper  float64 // Clopper–Pearson upper bound on the false-positive rate
	FNRUpper  float64 // Clopper–Pearson upper bound on the false-negative rate
	EpsilonLB float64 // the lower bound on ε, ≥ 0
}

// EpsilonLowerBound turns the error counts of a fixed test, run trials
// times on each of two neighbouring datasets, into a lower bound on the ε
// of any (ε, δ)-DP mechanism that could have produced them (Kairouz, Oh and
// Viswanath 2015; Jagielski, Ullman and Oprea 2020; Nasr et al. 2021):
//
//	ε_lb = max(ln((1 − δ − FNR_ub)/FPR_ub), ln((1 − δ − FPR_ub)/FNR_ub)),
//
// with FPR_ub and FNR_ub the one-sided Clopper–Pearson upper bounds at
// level 1 − alpha/2 each, so that the bound holds with probability at least
// 1 − alpha (union bound). A term whose numerator is not positive
// contributes 0.
func EpsilonLowerBound(fp, fn, trials int, delta, alpha float64) (Bound, error) {
	if trials <= 0 || fp < 0 || fn < 0 || fp > trials || fn > trials {
		return Bound{}, fmt.Errorf("attack: epsilon lower bound: %d false positives and %d false negatives in %d trials: %w", fp, fn, trials, privacy.ErrInvalidParameter)
	}
	if !(delta >= 0 && delta < 1) {
		return Bound{}, fmt.Errorf("attack: epsilon lower bound: δ = %v outside [0, 1): %w", delta, privacy.ErrInvalidParameter)
	}
	if !(alpha > 0 && alpha < 1) {
		return Bound{}, fmt.Errorf("attack: epsilon lower bound: α = %v outside (0, 1): %w", alpha, privacy.ErrInvalidParameter)
	}
	b := Bound{FP: fp, FN: fn, Trials: trials,
		FPRUpper: ClopperPearsonUpper(fp, trials, alpha/2),
		FNRUpper: ClopperPearsonUpper(fn, trials, alpha/2)}
	b.EpsilonLB = max(0, logRatio(1-delta-b.FNRUpper, b.FPRUpper), logRatio(1-delta-b.FPRUpper, b.FNRUpper))
	return b, nil
}

// logRatio returns ln(num/den), or 0 when num ≤ 0.
func logRatio(num, den float64) float64 {
	if num <= 0 {
		return 0
	}
	return math.Log(num / den)
}
